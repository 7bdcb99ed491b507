"""rummyguard: event-sourced game replay and anti-fraud analytics for online rummy.

Subpackages (dependencies point one way: cli -> fraud -> replay -> events; sim -> replay):

- :mod:`rummyguard.events`  the log: cards, event models, upcasting, hashing, store
- :mod:`rummyguard.replay`  the rules engine and replayer
- :mod:`rummyguard.sim`     a synthetic platform with planted fraud
- :mod:`rummyguard.fraud`   facts, features, models, flags
- :mod:`rummyguard.cli`     the ``rummyguard`` command
"""

__version__ = "0.2.0"
