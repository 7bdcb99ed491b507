"""Ctrl-C for DuckDB queries: a thread woken by each SIGINT runs a callback.

Why a thread: while DuckDB runs a query the main thread is in C++, and DuckDB's polling
of Python signals sometimes lets a query run on through every Ctrl-C (about one try in
six on a 10^12-row scan). A thread blocked on the signal wakeup fd wakes at once and can
call ``interrupt()`` on the connections; the main thread's own handling then goes on as
usual. Standard library only: the CLI sets it up before its heavier imports.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable


def watch_sigint(on_sigint: Callable[[], None]) -> Callable[[], None] | None:
    """Call ``on_sigint`` (from a thread) on every SIGINT until the returned ``stop()``
    is called, which also restores the previous wakeup fd. None outside the main thread
    (Python delivers signals there only): DuckDB's own handling is all there is."""
    if threading.current_thread() is not threading.main_thread():
        return None
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    old_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    done = threading.Event()

    def watch() -> None:
        while True:
            data = os.read(read_fd, 64)
            if done.is_set() or not data:
                return
            if signal.SIGINT in data:
                # best effort: the main thread's own KeyboardInterrupt is what ends the
                # command; a failing callback must not print a thread's traceback
                with contextlib.suppress(Exception):
                    on_sigint()

    watcher = threading.Thread(target=watch, name="rummyguard-ctrl-c", daemon=True)
    watcher.start()

    def stop() -> None:
        done.set()
        signal.set_wakeup_fd(old_fd)
        os.write(write_fd, b"\0")
        watcher.join()
        os.close(read_fd)
        os.close(write_fd)

    return stop
