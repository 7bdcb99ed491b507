"""Helpers shared by the commands: one-line errors, the database path, JSON output."""

from __future__ import annotations

import gzip
import os
import sys
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import orjson
import typer
from rich.console import Console
from rich.text import Text

DEFAULT_DB = "rummyguard.duckdb"
DB_ENV = "RUMMYGUARD_DB"

console = Console()
err_console = Console(stderr=True)

DbOption = typer.Option(
    None,
    "--db",
    help=f"DuckDB store file (default: ${DB_ENV} or ./{DEFAULT_DB}).",
    show_default=False,
)


def db_path(db: Path | None) -> Path:
    """The store to use: --db, else $RUMMYGUARD_DB, else ./rummyguard.duckdb.

    An existing file that is not a DuckDB database is refused (one line, exit 2): DuckDB
    2.x opens a JSON, CSV or Parquet file given as a database as an *in-memory* database
    with a view over it, so ``ingest log.jsonl --db log.jsonl`` would report events
    stored and keep none of them.
    """
    # an empty $RUMMYGUARD_DB (``RUMMYGUARD_DB= rummyguard ...``) is unset, not the folder "."
    path = db if db is not None else Path(os.environ.get(DB_ENV) or DEFAULT_DB)
    if path.is_file():
        from ..events.store import is_duckdb_file

        try:
            is_store = is_duckdb_file(path)
        except OSError as exc:
            fail(f"cannot read store {path}: {one_line(exc)}")
        if not is_store:
            fail(f"cannot open store {path}: it is not a rummyguard store (not a DuckDB "
                 f"database file); --db or ${DB_ENV} names the store, e.g. ./{DEFAULT_DB}")
        if _foreign_duckdb(path):
            fail(f"cannot open store {path}: it is a DuckDB database but not a rummyguard "
                 f"store (it has tables and no store.meta); nothing was written to it")
    return path


def _foreign_duckdb(path: Path) -> bool:
    """Whether a DuckDB file holds someone else's tables and no rummyguard store schema.

    Without this check EventStore.open runs its CREATE ... IF NOT EXISTS on the file, so
    even a read command (verify, replay, export, checkpoint) would add the store schema to
    another application's database and report "no games". An empty DuckDB file is fine
    (a new store). A file locked by a writer is left to EventStore.open to report."""
    import duckdb

    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error:
        return False
    try:
        rows = con.execute("SELECT table_schema, table_name FROM information_schema.tables"
                           ).fetchall()
    finally:
        con.close()
    return bool(rows) and ("store", "meta") not in rows


#: What reading a truncated or corrupt gzip stream raises (EOFError on a cut-off stream,
#: gzip.BadGzipFile (an OSError) on a bad header, zlib.error on corrupt data).
READ_ERRORS = (OSError, EOFError, zlib.error)

_GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"  # as events.parquet_source says (not imported: pyarrow loads late)


def check_input_files(files: Sequence[Path]) -> None:
    """Refuse, with one line and exit 2, input that cannot be read to its end: a missing
    path, a directory, an unreadable file, or a gzip file that is truncated or corrupt.

    Why up front: a gzip stream only reveals truncation at its end, after earlier
    batches of it were already committed or replayed; checking first keeps a command
    all-or-nothing on unusable input (nothing half-ingested, no summary that leaves
    lines out). Decompressing once costs ~0.1 s per 60 MB of JSONL, a few percent of
    an ingest.
    """
    for path in files:
        if not path.exists():
            fail(f"no such file: {path}")
        if not path.is_file():
            fail(f"not a file: {path}")
        try:
            raw = path.open("rb")
        except OSError as exc:
            fail(f"cannot read {path}: {one_line(exc)}")
        with raw:
            magic = raw.read(4)
            if magic == PARQUET_MAGIC:
                _check_parquet(path)
                continue
            try:
                if magic[:2] != _GZIP_MAGIC:
                    continue
                raw.seek(0)
                with gzip.GzipFile(fileobj=raw, mode="rb") as stream:
                    while stream.read(1 << 20):
                        pass
            except READ_ERRORS as exc:
                fail(f"cannot read {path}: {one_line(exc)} (a truncated or corrupt gzip "
                     "file?); nothing was done")


def _check_parquet(path: Path) -> None:
    """A Parquet file is read once up front, as a gzip one is: a corrupt page shows only
    when it is decoded, after earlier batches were committed."""
    import pyarrow as pa

    from ..events.parquet_source import open_parquet

    try:
        with open_parquet(path) as rows:
            for _ in rows.iter_batches(batch_size=1 << 16):
                pass
    except (*READ_ERRORS, pa.ArrowException, ValueError) as exc:
        fail(f"cannot read {path}: {one_line(exc)} (a truncated or corrupt Parquet file?); "
             "nothing was done")


def check_output_file(path: Path, option: str) -> None:
    """Refuse, with one line and exit 2 and before any work, an output file that cannot
    be written: a directory, or a file in a folder that does not exist. (A simulation
    or an evaluation can run for minutes; finding out at the end is too late.)"""
    if path.is_dir():
        fail(f"{option} {path} is a directory; give a file name")
    parent = path.parent
    if not parent.is_dir():
        fail(f"{option} {path}: there is no directory {parent}")


def write_output(path: Path, data: bytes, option: str, what: str | None = None) -> None:
    """Write an output file whole, or fail with one line and leave what was there.

    The bytes go to a temporary file beside it, renamed onto ``path`` once complete: a
    disk that fills up midway leaves no half file and keeps an earlier one (audit 50). A
    pipe, a device (``/dev/stdout``, a FIFO) or a symbolic link is written in place: a
    rename would put a regular file where it was. ``what`` names the output in the error (default: the
    option and the path)."""
    label = what or f"{option} {path}"
    if path.is_symlink() or (path.exists() and not path.is_file()):  # a link: written through
        try:
            with path.open("wb") as stream:
                stream.write(data)
        except OSError as exc:
            fail(f"cannot write {label}: {one_line(exc)}")
        return
    part = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        part.write_bytes(data)
        part.replace(path)
    except OSError as exc:
        part.unlink(missing_ok=True)
        fail(f"cannot write {label}: {one_line(exc)}")


def one_line(exc: BaseException) -> str:
    """An exception as one line of text (its type when it has no message)."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear error line to stderr and exit with ``code``."""
    # The message carries user data (paths, game and player ids): never read as markup.
    err_console.print(Text.assemble(("error:", "bold red"), " ", message), highlight=False,
                      soft_wrap=True)
    raise typer.Exit(code)


def print_json(value: Any) -> None:
    """Write ``value`` as one JSON document to stdout (sorted keys: byte-stable)."""
    sys.stdout.buffer.write(orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2))
    sys.stdout.buffer.write(b"\n")
    sys.stdout.flush()
