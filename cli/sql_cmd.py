"""``rummyguard sql "QUERY"``: read-only SQL over the store's views."""

from __future__ import annotations

import csv
import re
import sys
from collections.abc import Iterator
from datetime import date, datetime
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import Any

import orjson
import typer
from rich.table import Table
from rich.text import Text

from ..events.views import QueryError, connect_readonly, open_query, query_errors, run_query
from .common import DbOption, console, db_path, fail


class Format(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


def sql(
    query: str = typer.Argument(..., help="One SQL query.", show_default=False),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="Output format."),
    db: Path | None = DbOption,
) -> None:
    """Run a query against the store, opened read-only with no file or network access.

    Views: events (current-version payloads), games, quarantine, ingest_batches, and
    those other commands add (docs/sql.md). Writes, ATTACH, COPY TO and reading files
    are refused with one line.
    """
    try:
        con = connect_readonly(db_path(db))
    except QueryError as exc:
        fail(str(exc))
    if fmt is not Format.table:  # streamed: a million-row answer is never held whole
        try:
            with query_errors(con):
                columns, cursor = open_query(con, query)
                (_stream_json if fmt is Format.json else _stream_csv)(columns, cursor)
        except QueryError as exc:
            fail(_hint(str(exc)))
        finally:
            con.close()
        return
    try:
        columns, rows = run_query(con, query)
    except QueryError as exc:
        fail(_hint(str(exc)))
    finally:
        con.close()
    table = Table(show_edge=False)  # a table is laid out from all its rows: held whole
    for col in columns:
        table.add_column(Text(col), overflow="fold")
    for row in rows:
        table.add_row(*[Text(_cell(v)) for v in row])  # data, never markup
    console.print(table)
    console.print(f"{len(rows)} row(s)", highlight=False)


#: the views other commands add to the store (docs/sql.md), and the command that does
COMMAND_VIEWS = {
    "findings": "rummyguard verify",
    "player_games": "rummyguard verify (or rummyguard scan)",
    "moves": "rummyguard scan",
    "chip_flows": "rummyguard scan",
    "sessions": "rummyguard scan",
    "flags": "rummyguard scan",
}

_MISSING = re.compile(r"Catalog Error: Table with name (\w+) does not exist!")


def _hint(message: str) -> str:
    """A documented view that a command has not created yet in this store: say which
    command creates it, instead of DuckDB's guess at a similar catalog name
    ("Did you mean \"pg_indexes\"?")."""
    match = _MISSING.match(message)
    command = COMMAND_VIEWS.get(match.group(1).lower()) if match else None
    if command is None:
        return message
    return (f"no view {match.group(1)} in this store yet: {command} creates it "
            "(docs/sql.md)")


#: rows fetched at a time when streaming CSV or JSON
FETCH_ROWS = 10_000


def _batches(cursor: Any, columns: list[str]) -> Iterator[list[tuple]]:
    while columns:
        rows = cursor.fetchmany(FETCH_ROWS)
        if not rows:
            return
        yield rows


def _stream_csv(columns: list[str], cursor: Any) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(columns)
    for rows in _batches(cursor, columns):
        writer.writerows([[_cell(v) for v in row] for row in rows])


def _stream_json(columns: list[str], cursor: Any) -> None:
    """The rows as one JSON array, byte for byte what ``_json`` gives for the whole list
    (2-space indent), written a batch at a time."""
    out = sys.stdout.buffer
    keys = unique_names(columns)
    first = True
    for rows in _batches(cursor, columns):
        # the batch as an array, "[\n  {...},\n  {...}\n]": its items are the whole
        # array's, so the brackets are cut and the batches joined with ",\n"
        chunk = _json([dict(zip(keys, row, strict=True)) for row in rows])
        out.write(b"[\n" if first else b",\n")
        out.write(chunk[2:-2])
        first = False
    out.write(b"[]\n" if first else b"\n]\n")


def unique_names(columns: list[str]) -> list[str]:
    """Column names as JSON object keys, each once: a repeated name (``SELECT g.*, p.*``
    repeats ``game_id``) gets a suffix, exactly as DuckDB's own ``.df()``/``.pl()`` name
    them (``QueryResult::DeduplicateColumns``): names compare case-insensitively, the
    n-th repeat of a name gets ``_n`` (``game_id``, ``game_id_1``, ``game_id_2``), and
    a suffixed name already taken moves on to the next n. Without this the object would
    keep only the last of the equal keys and the others' values would be lost."""
    count: dict[str, int] = {}  # lower-case name -> the next suffix to try
    out = []
    for name in columns:
        low = name.lower()
        if low not in count:
            count[low] = 1
            out.append(name)
            continue
        new = f"{name}_{count[low]}"
        while new.lower() in count:
            count[low] += 1
            new = f"{name}_{count[low]}"
        count[low] += 1
        count[new.lower()] = 1
        out.append(new)
    return out


_JSON_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_NAIVE_UTC
_INT64_MIN, _UINT64_MAX = -(2**63), 2**64 - 1


def _json(body: list[dict[str, Any]]) -> bytes:
    """The rows as a JSON array. Integers past 64 bits (HUGEINT, UHUGEINT, wide
    DECIMALs), which orjson refuses, are written as exact JSON numbers."""
    try:
        return orjson.dumps(body, default=_jsonable, option=_JSON_OPTIONS)
    except TypeError:
        return orjson.dumps(_exact_ints(body), default=_jsonable, option=_JSON_OPTIONS)


def _exact_ints(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value if _INT64_MIN <= value <= _UINT64_MAX else orjson.Fragment(str(value))
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return _exact_ints(int(value))
    if isinstance(value, dict):  # a MAP's keys may be of any type (histogram(seq): INTEGER)
        return {k if isinstance(k, str) else _cell(k): _exact_ints(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_exact_ints(v) for v in value]
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, Decimal):
        if value == value.to_integral_value():
            return int(value)
        # exact, as DuckDB prints it: a double keeps ~16 of the 38 digits a DECIMAL may have
        return orjson.Fragment(str(value))
    if isinstance(value, bytes):
        return _blob(value)
    return str(value)


def _blob(value: bytes) -> str:
    """A BLOB as DuckDB prints it: printable ASCII as is, other bytes as ``\\xNN``."""
    return "".join(chr(b) if 32 <= b < 127 and b != 92 else f"\\x{b:02X}" for b in value)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, list | dict):
        return orjson.dumps(_exact_ints(value), default=_jsonable).decode()
    if isinstance(value, bytes):
        return _blob(value)
    return str(value)
