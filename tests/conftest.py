"""Session-wide settings for the test suite.

The built-in model (fraud/builtin.py) is fitted once on first use and cached. The tests
keep that cache inside the checkout (``.pytest_cache/``, ignored by git) instead of the
user's ``~/.cache``: a run never reads or writes the user's files, every xdist worker and
every subprocess a test starts shares the one fitted model (the cache's lock makes the
first of them fit it and the others wait), and a fresh clone fits it exactly once. A
developer's own ``RUMMYGUARD_MODEL`` is cleared: the tests expect the documented default.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault(
    "RUMMYGUARD_CACHE", str(Path(__file__).resolve().parent.parent / ".pytest_cache" / "rummyguard")
)
os.environ.pop("RUMMYGUARD_MODEL", None)
