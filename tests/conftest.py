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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault(
    "RUMMYGUARD_CACHE", str(Path(__file__).resolve().parent.parent / ".pytest_cache" / "rummyguard")
)
os.environ.pop("RUMMYGUARD_MODEL", None)


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Tests marked ``pure_source`` change or inspect the engine's Python source (they
    monkeypatch its classes, read ``vars()`` of its objects or run its doctests), which a
    compiled build (setup.py) does not allow: with the compiled engine in use they are
    skipped here and run in ``make test``'s second pass, under ``RUMMYGUARD_PURE=1``."""
    from rummyguard import _compiled

    if _compiled.STATUS != "compiled":
        return
    skip = pytest.mark.skip(reason="runs on the engine's sources: make test's RUMMYGUARD_PURE=1 pass")
    for item in items:
        if "pure_source" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium for the HTML page's tests (tests/test_html_browser.py installs
    Debian's package when it can, and says why it skips when it cannot)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (dev extra) is not installed")
    from test_html_browser import CHROMIUM, CHROMIUM_ARGS, _install_chromium

    reason = _install_chromium()
    if reason:
        pytest.skip(reason)
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()
