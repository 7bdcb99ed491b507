"""``rummyguard verify``: replay every game and report every finding by rule."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ..replay.rule_text import rule_summary
from ..replay.verify import (
    VerifyRun,
    read_store_bad_lines,
    save_run,
    verify_files,
    verify_games,
)
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


def verify(
    files: list[Path] = typer.Argument(
        None, help="Event logs to replay directly (JSONL, gzip or Parquet). Without files: every game in the store.",
        show_default=False),
    db: Path | None = DbOption,
    as_json: bool = typer.Option(False, "--json", help="Print exactly one JSON object."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr."),
) -> None:
    """Replay every game through the rules engine and list each finding with its rule.

    A finding is a `violation` (a move the rules forbid was accepted), a `discrepancy`
    (a platform claim — score, payout, winners — differs from the recomputed value), or
    `integrity` (the log itself is broken). Exit 0 when all games are clean, 1 when any
    finding exists, 2 on unusable input (with FILES: also lines that name no game).
    Without FILES the games come from the store, each with the lines of it that ingest
    quarantined, folded in where ingest read them (unless a later ingest stored that
    very line): a game gets the findings a replay of the file gives (a gap is LOG-SEQ, a
    tampered line LOG-CHAIN, a line that is not a valid event LOG-EVENT); quarantined
    lines that name no game are listed (`unreadable_lines`). With --db (or
    without FILES) the findings and results are also stored, for the SQL views
    `findings` and `player_games`; a game of FILES that the store holds as another game
    under the same id (another variant, seats or length) is not saved over it.
    """
    run = VerifyRun()
    store = None
    show_bar = progress and err_console.is_terminal
    if files:
        check_input_files(files)
        # One streaming pass: each event goes to its game's replay as it is read.
        try:
            if show_bar:
                with Progress(TextColumn("verify"), BarColumn(), TextColumn("{task.completed:,} events"),
                              TimeElapsedColumn(), console=err_console, transient=True) as bar:
                    task = bar.add_task("verify", total=None)
                    verify_files(files, run, progress=lambda n: bar.advance(task, n))
            else:
                verify_files(files, run)
        except READ_ERRORS as exc:
            fail(f"cannot read the logs: {one_line(exc)}")
    else:
        from ..events.store import EventStore, StoreError

        if not db_path(db).is_file():
            fail(f"no store at {db_path(db)} (give JSONL files, or `rummyguard ingest` first)")
        try:
            store = EventStore.open(db_path(db))
        except StoreError as exc:
            fail(str(exc))
        total = len(store.game_ids())
        source = store.stream_games()  # one pass; the run sorts its records by game
        # what ingest quarantined: each line naming a game is folded into its replay where
        # ingest read it, as a replay of the file meets it; those naming none are listed
        read_store_bad_lines(store.con, run, load_games=False, unattributed=True)
    try:
        if store is not None and show_bar and total > 1:
            with Progress(TextColumn("verify"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=err_console, transient=True) as bar:
                task = bar.add_task("verify", total=total)
                verify_games(source, run, progress=lambda n: bar.advance(task, n))
        elif store is not None:
            verify_games(source, run)
        to_save = run
        if store is None and db is not None:
            from ..events.store import EventStore, StoreError

            try:
                store = EventStore.open(db_path(db))
            except StoreError as exc:
                fail(str(exc))
            to_save = _not_contradicting(store.con, run)
        if store is not None:
            save_run(store.con, to_save)
    finally:
        if store is not None:
            store.close()
    if as_json:
        print_json(run.to_json())
    else:
        _print_table(run)
    if run.unattributed and not files:
        # the store's: ingest reported them when it read them (exit 1) and keeps them in
        # the quarantine; they belong to no game, so they change no game's verdict here
        if not as_json:
            first = run.unattributed[0]
            err_console.print(
                f"note: {len(run.unattributed)} quarantined line(s) name no game (first: "
                f"{first.source}:{first.line_no}: {first.reason}); they are not part of any "
                "replay (SQL: SELECT * FROM quarantine WHERE game_id IS NULL)",
                highlight=False, markup=False, soft_wrap=True)
    elif run.unattributed:
        if not as_json:
            fail(f"{len(run.unattributed)} line(s) could not be read as events of any game "
                 f"(first: {run.unattributed[0].source}:{run.unattributed[0].line_no}: "
                 f"{run.unattributed[0].reason})")
        raise typer.Exit(2)
    if any(r.findings for r in run.records):
        raise typer.Exit(1)


def _not_contradicting(con: object, run: VerifyRun) -> VerifyRun:
    """FILES with --db: the run without the games the store holds as another game under
    the same id (another variant, other seats or another length), so the ``findings`` and
    ``player_games`` views never describe a file's game as the stored one; said on stderr.
    (Games the store does not hold are saved: verifying files into a store of results is
    how a log is checked for SQL without ingesting it.)"""
    ids = [r.game_id for r in run.records]
    stored = {g: (v, list(seats or []), last) for g, v, seats, last in con.execute(  # type: ignore[attr-defined]
        "SELECT game_id, variant, seats, last_seq FROM games WHERE game_id IN "
        "(SELECT unnest($ids))", {"ids": ids}).fetchall()}
    kept, clashing = [], []
    for r in run.records:
        mine = (r.variant or None, list(run.created.get(r.game_id, {}).get("seats", [])), r.last_seq)
        (clashing if r.game_id in stored and stored[r.game_id] != mine else kept).append(r)
    if clashing:
        err_console.print(
            f"{len(clashing)} game(s) of FILES differ from the stored game of the same id "
            f"(first: {clashing[0].game_id}): their results were not saved; the views describe "
            "the stored games", highlight=False, markup=False)
    return VerifyRun(records=kept, bad_lines=run.bad_lines, created=run.created)


def _print_table(run: VerifyRun) -> None:
    summary = run.summary()
    if not run.records:
        console.print("no games to verify")
        return
    examples: dict[str, tuple[str, str, int, int]] = {}
    for r in run.records:
        for f in r.findings:
            kind, game, seq, n = examples.get(f.rule, (f.kind, r.game_id, f.seq, 0))
            examples[f.rule] = (kind, game, seq, n + 1)
    if examples:
        table = Table(title="Findings by rule", show_lines=False)
        # the short columns never wrap, so the rule's text gets the rest of the width
        table.add_column("rule", no_wrap=True)
        table.add_column("kind", no_wrap=True)
        table.add_column("count", justify="right", no_wrap=True)
        table.add_column("first at", no_wrap=True)  # game:seq, for `replay GAME --at SEQ`
        table.add_column("rule text", overflow="fold", ratio=1)
        for rule, (kind, game, seq, n) in sorted(examples.items()):
            table.add_row(*(Text(cell) for cell in (rule, kind, str(n), f"{game}:{seq}",
                                                    rule_summary(rule))))
        console.print(table)
    console.print(
        f"{summary['games']} games replayed: {summary['clean']} clean, "
        f"{summary['games'] - summary['clean']} with findings"
    )
