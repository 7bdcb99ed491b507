"""Helpers shared by the commands: one-line errors, the database path, JSON output."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import orjson
import typer
from rich.console import Console

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
    """The store to use: --db, else $RUMMYGUARD_DB, else ./rummyguard.duckdb."""
    if db is not None:
        return db
    return Path(os.environ.get(DB_ENV, DEFAULT_DB))


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear error line to stderr and exit with ``code``."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def print_json(value: Any) -> None:
    """Write ``value`` as one JSON document to stdout (sorted keys: byte-stable)."""
    sys.stdout.buffer.write(orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2))
    sys.stdout.buffer.write(b"\n")
    sys.stdout.flush()
