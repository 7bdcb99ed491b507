"""Bulk work without the cyclic garbage collector's scans.

Loading a million events makes millions of small dicts and lists. CPython's cyclic GC
walks its tracked containers whenever allocations pass its thresholds, and on a bulk
load that walking costs more than the parsing itself (measured on 300k classic events
held in memory: 6.0 µs per event with the collector on, 1.6 µs with it paused; see
benchmarks/RESULTS.md "Replay + verify"). Event dicts from orjson hold no reference
cycles and neither do replay records (replaying 1,794 games leaves 5 cyclic objects),
so reference counting frees them; the cyclic collector is paused for the bulk work and
resumed after it.

>>> import gc
>>> with paused_gc():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic collector inside the block; the caller's setting is restored
    on exit, even on an exception (nesting-safe: only the outermost pause resumes it).
    Reference counting keeps working, so memory outside cycles is still freed at once."""
    was_enabled = gc.isenabled()  # False inside an outer pause: that one resumes
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
