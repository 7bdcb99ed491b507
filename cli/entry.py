"""The ``rummyguard`` command's entry point: runs the app with Ctrl-C as one line.

The app is imported here, inside the guard: its imports (DuckDB, Polars, Arrow, the models)
take a noticeable moment, and a Ctrl-C then must not end in a traceback either.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
import threading
from types import FrameType

INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a Ctrl-C
_MESSAGE = ("error: interrupted; work committed before it is kept, run the command again "
            "to complete it\n")


def main() -> None:
    """Run the CLI; a Ctrl-C is one line and exit 130, wherever it lands.

    Typer turns a KeyboardInterrupt into a silent exit 130; a Ctrl-C inside a DuckDB
    query surfaces as ``RuntimeError("Query interrupted")`` (or duckdb.InterruptException)
    and would otherwise be a traceback. Stores commit per batch, so what was committed
    before the interrupt stays and a re-run completes it. (A Ctrl-C in the interpreter's
    first tenth of a second, before this function runs, is Python's own.)"""
    interrupted = False
    _note_sigint()
    try:
        try:
            from ..events.interrupts import watch_sigint

            # the open stores' running queries are cancelled on Ctrl-C, from a thread (for
            # the life of the process); Python's own handler still raises KeyboardInterrupt
            watch_sigint(_cancel_store_queries)
            from .app import app

            app()
        except SystemExit as exc:
            if exc.code != INTERRUPTED:
                raise
            interrupted = True
        except KeyboardInterrupt:
            interrupted = True
        except Exception as exc:
            if not (_SIGINT_SEEN.is_set() or _is_interrupt(exc)):
                failure = _storage_failure(exc)
                if failure is None:
                    raise
                _fail_at_storage(failure)
            interrupted = True
    except KeyboardInterrupt:
        # the same Ctrl-C, twice: DuckDB ended the query as interrupted and Python's own
        # handler, still pending, raised while that was being handled
        interrupted = True
    if interrupted:
        _interrupted()


_SIGINT_SEEN = threading.Event()


def _note_sigint() -> None:
    """Mark every Ctrl-C, synchronously in the main thread, before it raises as usual.

    Why: a KeyboardInterrupt can land inside a C extension that wraps it in its own
    error. A CI run saw one inside pydantic-core building a validator at import time
    ("SchemaError: ... KeyboardInterrupt"), which then surfaced as a traceback. Python
    runs this handler in the main thread before anything else goes on there, so any
    exception that reaches :func:`main` after a Ctrl-C is known to be its consequence."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:
        return  # a caller's own handler (an embedding program, a test): leave it alone

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        _SIGINT_SEEN.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)


def _cancel_store_queries() -> None:
    store = sys.modules.get("rummyguard.events.store")
    # no store module loaded, or one still being imported (the Ctrl-C landed during the
    # imports: the module is in sys.modules before its functions are): no store is open
    cancel = getattr(store, "interrupt_open_stores", None)
    if cancel is not None:
        cancel()


def _is_interrupt(exc: Exception) -> bool:
    """DuckDB's ways of saying a query was interrupted (checked by name: duckdb may not
    be imported yet when the interrupt lands)."""
    duckdb = sys.modules.get("duckdb")
    if duckdb is not None and isinstance(exc, duckdb.InterruptException):
        return True
    return isinstance(exc, RuntimeError) and str(exc) == "Query interrupted"


#: errno values of a disk that cannot take more (full, a quota, a file size limit)
_NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def _storage_failure(exc: Exception) -> str | None:
    """The one line for a failure of the storage under a command rather than of the
    command (audit 50): DuckDB refusing a damaged store file, or a disk that is full.
    Every command checks its inputs up front; these can only show midway, and each
    store commits per batch, so what was committed before stays. None: anything else
    (a bug: its traceback is wanted)."""
    duckdb = sys.modules.get("duckdb")
    if duckdb is not None and isinstance(exc, duckdb.Error):
        text = " ".join(str(exc).split()) or type(exc).__name__
        return (f"the store could not be read or written: {text} (a damaged file or a full "
                "disk; what was committed before is kept: `rummyguard verify-log` checks it)")
    if isinstance(exc, OSError) and exc.errno in _NO_SPACE:
        return (f"no space left to write: {' '.join(str(exc).split())} (free some space and "
                "run the command again)")
    return None


def _fail_at_storage(message: str) -> None:
    sys.stderr.write(f"error: {message}\n")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    raise SystemExit(2)


def _interrupted() -> None:
    """The one line, then exit 130 at once. Why ``os._exit`` after flushing: the command's
    own clean-up already ran as the interrupt unwound its ``with`` blocks, and what it
    committed is on disk; what is left is the interpreter's teardown, where a SIGINT
    still in flight (DuckDB hands one back when its query ends) meets the default
    handler again and turns exit 130 into death by signal (1 run in 15 on a busy
    machine, tests/test_audit16_cli.py)."""
    # further Ctrl-Cs (or one still pending) must not cut the one line or the exit code
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _ignore_sigint)
    sys.stderr.write(_MESSAGE)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(INTERRUPTED)


def _ignore_sigint(signum: int, frame: FrameType | None) -> None:
    """A no-op handler (not SIG_IGN: a signal already pending then warns of a race)."""
