"""``rummyguard simulate``: generate a synthetic platform's event log and its labels."""

from __future__ import annotations

import atexit
import gzip
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..sim.world import WorldConfig, available_variants, build_world, dumps_labels, run_world
from .common import (
    check_output_file,
    console,
    db_path,
    err_console,
    fail,
    one_line,
    write_output,
)

INGEST_BATCH_BYTES = 32 * 1024 * 1024


def simulate(
    games: int = typer.Option(..., "--games", min=1, help="How many games to play."),
    seed: int = typer.Option(..., "--seed", min=-(2**63), max=2**63 - 1,
                              help="World seed: same seed and options, same bytes."),
    variants: str = typer.Option("classic,r500,liverpool,michigan", "--variants",
                                 help="Comma-separated variants to play (default: all four)."),
    fraud_rate: float = typer.Option(0.02, "--fraud-rate", min=0.0, max=1.0,
                                     help="Share of accounts in a fraud mechanism."),
    out: Path | None = typer.Option(None, "--out", help="Write the events as JSON Lines here."),
    db: Path | None = typer.Option(None, "--db", help="Ingest the events into this store instead."),
    labels: Path | None = typer.Option(None, "--labels", help="Write the labels JSON here."),
    faults: int = typer.Option(0, "--faults", min=0, help="Platform faults to plant on purpose (at most one per game)."),
    players: int | None = typer.Option(None, "--players", min=2,
                                       help="Accounts in the world (default: ~50 games each)."),
    chain: bool = typer.Option(True, "--chain/--no-chain",
                               help="Hash-chain every game as the producer (EVENTS.md)."),
    workers: int = typer.Option(0, "--workers", min=0,
                                help="Processes (0 = one per core). Output does not depend on it."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr."),
) -> None:
    """Play a synthetic platform with planted fraud, ground-truth labels and optional faults.

    Players with skill, style and timing are seated by a lobby; planted fraud (card feeding,
    soft play, chip dumping, bots, hidden-card knowledge, multi-accounting, timeout/Fresh
    abuse) and hard negatives play among them.

    Every game replays clean except the planted faults, each listed in the labels with
    the finding it must produce. Exactly one of --out and --db.
    """
    if (out is None) == (db is None):
        fail("give exactly one of --out FILE.jsonl and --db PATH")
    for path, option in ((out, "--out"), (labels, "--labels")):
        if path is not None:
            check_output_file(path, option)
    chosen = tuple(v.strip() for v in variants.split(",") if v.strip())
    if not chosen:
        fail("--variants is empty")
    known = {"classic", "r500", "liverpool", "michigan"}
    unknown = [v for v in chosen if v not in known]
    if unknown:
        fail(f"unknown variant(s): {', '.join(unknown)} (variants: {', '.join(sorted(known))})")
    missing = [v for v in chosen if v not in available_variants()]
    if missing:
        fail(f"the simulator cannot play {', '.join(missing)} yet "
             f"(available: {', '.join(available_variants())})")
    if not chain and faults:
        console.print("note: --no-chain: tampered-event faults are not planted", highlight=False)
    config = WorldConfig(games=games, seed=seed, variants=tuple(dict.fromkeys(chosen)),
                         fraud_rate=fraud_rate, faults=faults, chain=chain,
                         workers=workers or (os.cpu_count() or 1), players=players)
    try:
        world = build_world(config)
    except ValueError as exc:  # too few players for the variants or the games
        fail(str(exc))
    store = None
    if db is not None:
        from ..events.store import EventStore, StoreError

        db = db_path(db)  # another program's DuckDB file is refused, never written to
        try:
            store = EventStore.open(db)
        except StoreError as exc:
            fail(str(exc))
        held = store.counts()
        if held["events"] or held["quarantine"]:
            store.close()
            # every world numbers its tables and games alike (t000000-00, ...): a second
            # world in one store is quarantined as conflicts, or mixes two worlds' players
            fail(f"--db {db} is not empty ({held['events']:,} events, {held['quarantine']:,} "
                 f"quarantined lines): simulate into a new store")
    try:
        sink, finish = _sink(out, store, f"simulate --seed {seed}")
        if progress and err_console.is_terminal:
            with Progress(TextColumn("simulate"), BarColumn(), MofNCompleteColumn(),
                          TextColumn("{task.fields[events]:,} events"), TimeElapsedColumn(),
                          console=err_console, transient=True) as bar:
                task = bar.add_task("simulate", total=world.games, events=0)
                totals = {"events": 0}

                def report(done: int, events: int) -> None:
                    totals["events"] += events
                    bar.update(task, completed=done, events=totals["events"])

                doc = run_world(world, sink, report)
        else:
            doc = run_world(world, sink)
        summary = finish()
    finally:
        if store is not None:
            store.close()
    if labels is not None:
        write_output(labels, dumps_labels(doc), "--labels")
    fraud_players = len({m["player_id"] for m in doc["mechanisms"]})
    console.print(
        f"simulated {world.games:,} games ({', '.join(config.variants)}) for "
        f"{len(doc['players']):,} players, {fraud_players} in fraud mechanisms, "
        f"{len(doc['planted']):,} planted events, {len(doc['faults'])} faults"
        + (f"; {summary}" if summary else ""),
        highlight=False,
    )


def _sink(out: Path | None, store: Any | None,
          source: str = "simulate") -> tuple[Callable[[bytes], None], Callable[[], str]]:
    """Where the JSONL bytes go: a file, or the store in batches (ingest API).

    A file named ``*.gz`` is written gzip-compressed (``ingest`` reads either; a plain
    file under a ``.gz`` name would fool ``gunzip`` and everyone else), with no time or
    name in the gzip header, so the same seed still gives the same bytes. Into a store,
    ``source`` names the batches (``ingest_batches.source``): it carries the seed, the
    one record of it in the store (ARCHITECTURE: the simulator's seed is recorded)."""
    if out is not None and out.exists() and not out.is_file():
        # a pipe or a device (/dev/stdout, a FIFO): written in place; a rename would put a
        # regular file where the pipe was
        try:
            stream = out.open("wb")
        except OSError as exc:
            fail(f"cannot write --out {out}: {one_line(exc)}")
        piped: IO[bytes] = (gzip.GzipFile(filename="", mode="wb", fileobj=stream, mtime=0)
                            if out.suffix == ".gz" else stream)

        def write_pipe(data: bytes) -> None:
            try:
                piped.write(data)
            except OSError as exc:
                fail(f"cannot write --out {out}: {one_line(exc)}")

        def close_pipe() -> str:
            piped.close()
            stream.close()
            return f"wrote {out}"

        return write_pipe, close_pipe
    if out is not None:
        part = out.with_name(out.name + ".part")  # renamed onto --out only when complete
        try:
            raw = part.open("wb")
        except OSError as exc:
            fail(f"cannot write --out {out}: {one_line(exc)}")
        atexit.register(part.unlink, missing_ok=True)  # interrupted or failed: no partial file
        handle: IO[bytes] = (gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0)
                             if out.suffix == ".gz" else raw)

        def write(data: bytes) -> None:
            try:
                handle.write(data)
            except OSError as exc:  # a full disk: one line; atexit removes the .part
                fail(f"cannot write --out {out}: {one_line(exc)}")

        def close() -> str:
            try:
                handle.close()
                raw.close()
                part.replace(out)
            except OSError as exc:
                fail(f"cannot write --out {out}: {one_line(exc)}")
            return f"wrote {out}"

        return write, close
    pending: list[bytes] = []
    size = [0]
    totals = {"stored": 0, "quarantined": 0}

    def flush() -> None:
        if not pending:
            return
        lines = [line for blob in pending for line in blob.splitlines() if line]
        summary = store.ingest_lines(lines, source=source)
        totals["stored"] += summary.stored
        totals["quarantined"] += summary.quarantined
        pending.clear()
        size[0] = 0

    def add(data: bytes) -> None:
        pending.append(data)
        size[0] += len(data)
        if size[0] >= INGEST_BATCH_BYTES:
            flush()

    def done() -> str:
        flush()
        return (f"stored {totals['stored']:,} events, quarantined {totals['quarantined']:,} "
                f"(tampered events are refused by the store's chain check)")

    return add, done
