"""``rummyguard ingest FILE...``: JSONL (or .jsonl.gz) or Parquet event logs into the store."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.table import Table
from rich.text import Text

from ..events.ingest import DEFAULT_BATCH_LINES, REASONS, IngestSummary
from ..events.store import EventStore, StoreError
from .common import (
    READ_ERRORS,
    DbOption,
    check_input_files,
    console,
    db_path,
    err_console,
    fail,
    one_line,
    print_json,
)


def ingest(
    files: list[Path] = typer.Argument(..., help="JSON Lines files, plain or gzip, or "
                                       "Parquet files (one event per row).",
                                       show_default=False),
    db: Path | None = DbOption,
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON; `seconds` is "
                                 "the run's wall time, the one value that differs between two "
                                 "runs of the same input."),
    batch_lines: int = typer.Option(DEFAULT_BATCH_LINES, "--batch-lines", min=1,
                                    help="Lines per transaction."),
    workers: int | None = typer.Option(None, "--workers", min=0,
                                       help="Decode processes (default: by input size)."),
    progress: bool = typer.Option(True, "--progress/--no-progress",
                                  help="Show a progress bar on stderr."),
) -> None:
    """Validate, hash-check and store events; quarantine every line that cannot be.

    Duplicates are no-ops. Conflicts, sequence gaps, chain breaks and unreadable lines
    go to the quarantine with a reason (see `rummyguard sql "FROM quarantine"`). The
    summary always shows read = stored + duplicates + quarantined; the exit code is 1
    when anything was quarantined.
    """
    check_input_files(files)
    total = sum(p.stat().st_size for p in files)
    try:
        store = EventStore.open(db_path(db))
    except StoreError as exc:
        fail(str(exc))
    try:
        with store:
            summary = _run(store, files, total, batch_lines=batch_lines, workers=workers,
                           progress=progress)
    except READ_ERRORS as exc:
        fail(f"ingest stopped: {one_line(exc)}; the batches committed before it stay and "
             "ingesting the same files again completes the store")
    if as_json:
        print_json(summary.as_dict())
    else:
        _print_summary(summary)
    if summary.quarantined:
        raise typer.Exit(1)


def _run(store: EventStore, files: list[Path], total: int, *, batch_lines: int,
         workers: int | None, progress: bool) -> IngestSummary:
    """Ingest ``files``, with a progress bar on stderr only when stderr is a terminal
    (so pipes and CI logs get no control codes)."""
    if not (progress and err_console.is_terminal):
        return store.ingest_files(files, batch_lines=batch_lines, workers=workers)
    bar = Progress(TextColumn("ingest"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                   TimeRemainingColumn(), TextColumn("{task.fields[counts]}"),
                   console=err_console, transient=True)
    task = bar.add_task("ingest", total=total, counts="")
    offsets = {str(p.resolve()): sum(q.stat().st_size for q in files[:i])
               for i, p in enumerate(files)}

    def report(source: str, done: int, _size: int, s: IngestSummary) -> None:
        bar.update(task, completed=offsets.get(source, 0) + done,
                   counts=f"stored {s.stored:,} dup {s.duplicates:,} "
                          f"quarantined {s.quarantined:,}")

    with bar:
        return store.ingest_files(files, batch_lines=batch_lines, workers=workers,
                                  progress=report)


def _print_summary(summary: IngestSummary) -> None:
    table = Table(title="ingest", show_edge=False)
    for col in ("file", "read", "stored", "duplicates", "quarantined"):
        if col == "file":  # a path is folded, never cut: the reader must see which file
            table.add_column(col, overflow="fold")
        else:
            table.add_column(col, justify="right", no_wrap=True)
    for source, c in summary.files.items():
        table.add_row(Text(source), f"{c['read']:,}", f"{c['stored']:,}", f"{c['duplicates']:,}",
                      f"{c['quarantined']:,}")
    if len(summary.files) > 1:
        table.add_row("total", f"{summary.read:,}", f"{summary.stored:,}",
                      f"{summary.duplicates:,}", f"{summary.quarantined:,}")
    console.print(table)
    console.print(
        f"read {summary.read:,} = stored {summary.stored:,} + duplicates "
        f"{summary.duplicates:,} + quarantined {summary.quarantined:,}"
        f" in {summary.seconds:.2f}s", highlight=False)
    for reason, n in sorted(summary.reasons.items()):
        console.print(f"  quarantined {n:,} x {reason}: {REASONS.get(reason, '')}",
                      highlight=False)
