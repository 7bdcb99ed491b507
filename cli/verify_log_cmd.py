"""``rummyguard verify-log``: re-hash the stored events and walk every game's chain."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..events.store import EventStore, StoreError, VerifyReport
from .common import DbOption, console, db_path, err_console, fail, print_json


def verify_log(
    game: str | None = typer.Option(None, "--game", help="Check only this game."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    db: Path | None = DbOption,
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr."),
) -> None:
    """Report every broken chain, bad hash, gap and reorder, with game and seq.

    Kinds: bad_hash, chain_break, gap (at the first missing seq), reorder,
    envelope_mismatch (a column such as ts, actor or payload differs from the stored raw
    line) and head_mismatch (the chain head disagrees with the events). Exit code 0
    when the log is intact, 1 when any problem was found, 2 on an unusable store or an
    unknown --game. A game cut short at its end is caught when the store's own chain
    head records more events than it holds; a log truncated before it reached the store
    is not a chain problem (see `rummyguard checkpoint`, and games without GameEnded:
    `rummyguard sql "FROM games WHERE ended_at IS NULL"`).
    """
    path = db_path(db)
    try:
        store = EventStore.open(path, read_only=True)
    except StoreError as exc:
        fail(str(exc))
    with store:
        if game is not None and not store.con.execute(
            "SELECT 1 FROM store.games_chain WHERE game_id = ? UNION ALL "
            "SELECT 1 FROM store.events WHERE game_id = ? LIMIT 1", [game, game]
        ).fetchall():
            fail(f"no game {game!r} in {path}")
        report = _verify(store, game, progress and err_console.is_terminal)
    if as_json:
        print_json(report.as_dict())
    else:
        for p in report.problems:
            where = f"seq {p.seq}" if p.seq is not None else "(game)"
            console.print(f"{p.game_id} {where}: {p.kind}: {p.detail}", markup=False,
                          highlight=False, soft_wrap=True)
        verdict = "intact" if report.ok else f"{len(report.problems)} problem(s)"
        console.print(f"checked {report.games:,} game(s), {report.events:,} event(s): "
                      f"{verdict}", highlight=False)
    if not report.ok:
        raise typer.Exit(1)


def _verify(store: EventStore, game: str | None, show_bar: bool) -> VerifyReport:
    """The check, with a bar on a terminal: re-hashing a big log takes minutes (2.6M
    events: half a minute), and a silent terminal looks hung."""
    if not show_bar or game is not None:
        return store.verify(game)
    with Progress(TextColumn("verify-log"), BarColumn(), MofNCompleteColumn(), TextColumn("events"),
                  TimeElapsedColumn(), console=err_console, transient=True) as bar:
        task = bar.add_task("verify-log", total=None)
        return store.verify(progress=lambda done, total: bar.update(task, completed=done,
                                                                    total=total))
