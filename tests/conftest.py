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


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Tests marked ``pure_source`` change or inspect the engine's Python source (they
    monkeypatch its classes, read ``vars()`` of its objects or run its doctests), which a
    compiled build (setup.py) does not allow: with the compiled engine in use they are
    skipped here and run in ``make test``'s second pass, under ``RUMMYGUARD_PURE=1``."""
    import pytest

    from rummyguard import _compiled

    if _compiled.STATUS != "compiled":
        return
    skip = pytest.mark.skip(reason="runs on the engine's sources: make test's RUMMYGUARD_PURE=1 pass")
    for item in items:
        if "pure_source" in item.keywords:
            item.add_marker(skip)
