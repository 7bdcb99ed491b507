"""``python -m rummyguard.cli``: the same as the ``rummyguard`` command."""

from .entry import main

main()
