"""``python -m rummyguard.cli``: the same as the ``rummyguard`` command."""

from .app import main

main()
