"""``rummyguard sql "QUERY"``: read-only SQL over the store's views."""

from __future__ import annotations

import csv
import sys
from datetime import date, datetime
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import Any

import orjson
import typer
from rich.table import Table

from ..events.views import QueryError, connect_readonly, run_query
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
    try:
        columns, rows = run_query(con, query)
    except QueryError as exc:
        fail(str(exc))
    finally:
        con.close()
    if fmt is Format.json:
        body = [dict(zip(columns, row, strict=True)) for row in rows]
        sys.stdout.buffer.write(orjson.dumps(body, default=_jsonable,
                                             option=orjson.OPT_INDENT_2 | orjson.OPT_NAIVE_UTC))
        sys.stdout.buffer.write(b"\n")
    elif fmt is Format.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[_cell(v) for v in row] for row in rows])
    else:
        table = Table(show_edge=False)
        for col in columns:
            table.add_column(col, overflow="fold")
        for row in rows:
            table.add_row(*[_cell(v) for v in row])
        console.print(table)
        console.print(f"{len(rows)} row(s)", highlight=False)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, list | dict):
        return orjson.dumps(value, default=_jsonable).decode()
    return str(value)
