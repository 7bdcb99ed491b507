"""``rummyguard export --parquet DIR``: the log as Hive-partitioned Parquet."""

from __future__ import annotations

from pathlib import Path

import duckdb
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..events.export import ExportError, export_parquet
from ..events.store import EventStore, StoreError
from .common import DbOption, console, db_path, err_console, fail, print_json


def export(
    parquet: Path = typer.Option(..., "--parquet", help="Directory to write into.",
                                 show_default=False),
    overwrite: bool = typer.Option(False, "--overwrite",
                                   help="Replace an earlier export in DIR."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    db: Path | None = DbOption,
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr."),
) -> None:
    """Write every stored event, upcast, to DIR/variant=V/date=D/part-0.parquet.

    Partitioned by the game's variant and the date of its GameCreated; a game is never
    split; rows are sorted by game_id, seq. DuckDB, Polars, Ray or Spark read it with
    Hive partitioning.
    """
    try:
        store = EventStore.open(db_path(db), read_only=True)
    except StoreError as exc:
        fail(str(exc))
    with store:
        try:
            if progress and err_console.is_terminal:  # minutes on a big store: show it moving
                with Progress(TextColumn("export"), BarColumn(), MofNCompleteColumn(),
                              TextColumn("games"), TimeElapsedColumn(), console=err_console,
                              transient=True) as bar:
                    task = bar.add_task("export", total=None)
                    summary = export_parquet(
                        store.con, parquet, overwrite=overwrite,
                        progress=lambda done, total: bar.update(task, completed=done, total=total))
            else:
                summary = export_parquet(store.con, parquet, overwrite=overwrite)
        except ExportError as exc:
            fail(str(exc))
        except (duckdb.Error, OSError) as exc:
            fail(f"export failed: {' '.join(str(exc).split())}")
    if as_json:
        print_json(summary.as_dict())
    else:
        console.print(f"wrote {summary.rows:,} events of {summary.games:,} games in "
                      f"{summary.files} partition file(s) under {summary.directory}",
                      markup=False, highlight=False)
