"""rummyguard: event-sourced game replay and anti-fraud analytics for online rummy.

Subpackages (dependencies point one way: cli -> fraud -> replay -> events; sim -> replay):

- :mod:`rummyguard.events`  the log: cards, event models, upcasting, hashing, store
- :mod:`rummyguard.replay`  the rules engine and replayer
- :mod:`rummyguard.sim`     a synthetic platform with planted fraud
- :mod:`rummyguard.fraud`   facts, features, models, flags
- :mod:`rummyguard.cli`     the ``rummyguard`` command
"""

__version__ = "0.2.0"

from pathlib import Path as _Path

from . import _compiled

# the engine's compiled modules (setup.py), or their sources when the build is absent,
# partial, stale or turned off (RUMMYGUARD_PURE=1): decided before any of them is imported
_compiled.install(__name__, _Path(__file__).resolve().parent)
