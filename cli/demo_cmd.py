"""``rummyguard demo``: the main job end to end on the embedded DuckDB default.

Simulate a small world (all variants that exist, planted fraud and platform faults),
ingest it, verify every game, scan for fraud, and print what a risk analyst and a
support agent would look at first. Steps whose packages are not available are skipped
with a note, so the demo always runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from .common import DbOption, console, db_path, err_console, fail, one_line

#: the ``store.meta`` key the demo writes into a store it made: --fresh deletes no other
DEMO_MARK = "made_by_demo"


@contextmanager
def _bar(label: str, total: int | None) -> Iterator[Callable[..., None]]:
    """A progress bar on stderr (a terminal only); yields ``update(completed=, advance=,
    total=)``. Every step has one: the demo's minute is mostly ingest, verify and scan."""
    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err_console, transient=True, disable=not err_console.is_terminal) as bar:
        task = bar.add_task(label, total=total)
        yield lambda **change: bar.update(task, **change)


def demo(
    db: Path | None = DbOption,
    out: Path = typer.Option(Path("demo-out"), "--out", help="Folder for the simulated log, labels and HTML."),
    games: int = typer.Option(800, "--games", min=10, help="Games in the simulated world."),
    seed: int = typer.Option(3, "--seed", min=-(2**63), max=2**63 - 1,
                              help="The world's seed (same seed, same world)."),
    model: str | None = typer.Option(
        None, "--model", help="As for `rummyguard scan`: 'builtin' (the default; fitted once "
        "on first use, about 15 seconds, then cached), a saved model file, or 'none'.",
        show_default=False),
    fresh: bool = typer.Option(True, "--fresh/--keep", help="Start from an empty store (replacing "
                               "a store an earlier demo made; any other store is refused)."),
) -> None:
    """Run the whole pipeline on a small simulated world and print the highlights."""
    from ..fraud.builtin import resolve_model
    from ..fraud.models import ModelError

    started = time.perf_counter()
    path = db_path(db)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"cannot create --out {out}: {one_line(exc)}")
    try:  # first, so that a bad --model fails before any work
        chosen = resolve_model(model, note=lambda text: err_console.print(text))
    except ModelError as exc:
        fail(str(exc))
    if fresh and path.exists():
        if not _made_by_demo(path):
            fail(f"{path} holds a store the demo did not make, and the demo starts from an empty "
                 "store: give it another --db (e.g. --db demo.duckdb), or --keep to add the "
                 "demo's world to this store")
        path.unlink()
        Path(str(path) + ".wal").unlink(missing_ok=True)
    new_store = not path.exists()
    from ..events.store import StoreError

    if path.is_dir():  # before minutes of simulation, not after them
        fail(f"cannot open store {path}: it is a folder; --db names the store file, "
             "e.g. --db demo.duckdb")
    try:
        logs, labels = _simulate(out, games, seed)
        ingest_summary = _ingest(path, logs)
        if new_store:
            _mark_demo_store(path)
        run = _verify(path)
        flags = _scan(path, chosen.model)
        _report(path, run, flags, ingest_summary, out, labels, chosen.label,
                time.perf_counter() - started)
    except StoreError as exc:  # the store cannot be opened or written (locked, read-only)
        fail(str(exc))


def _made_by_demo(path: Path) -> bool:
    """Whether ``path`` is a store an earlier demo made. It is the default store of every
    command, so it may hold a platform's real log and its Merkle checkpoints: never
    deleted unless the demo's mark says the demo made it."""
    import duckdb

    try:
        with duckdb.connect(str(path), read_only=True) as con:
            return bool(con.execute("SELECT 1 FROM store.meta WHERE key = ?", [DEMO_MARK]).fetchall())
    except duckdb.Error:
        return False


def _mark_demo_store(path: Path) -> None:
    """Mark a store the demo created, so that the next ``demo`` may replace it."""
    from ..events.store import EventStore

    with EventStore.open(path) as store:
        store.con.execute("INSERT INTO store.meta VALUES (?, '1') ON CONFLICT DO NOTHING",
                          [DEMO_MARK])


def _simulate(out: Path, games: int, seed: int) -> tuple[list[Path], Path | None]:
    """A small world over every variant the simulator plays, with fraud and faults."""
    import os

    from ..sim.world import WorldConfig, available_variants, build_world, dumps_labels, run_world

    log = out / "world.jsonl"
    labels = out / "labels.json"
    config = WorldConfig(games=games, seed=seed, variants=tuple(available_variants()),
                         fraud_rate=0.03, faults=6, workers=os.cpu_count() or 1)
    world = build_world(config)
    with log.open("wb") as handle, _bar("simulate", world.games) as update:
        doc = run_world(world, handle.write, lambda done, _events: update(completed=done))
    labels.write_bytes(dumps_labels(doc))
    console.print(f"simulated {world.games:,} games ({', '.join(config.variants)}), "
                  f"{len({m['player_id'] for m in doc['mechanisms']})} accounts in planted fraud, "
                  f"{len(doc['faults'])} platform faults -> {log}", highlight=False)
    return [log], labels


def _ingest(path: Path, logs: list[Path]) -> Any:
    """Ingest the simulated log, the bar counting its megabytes."""
    from ..events.store import EventStore

    mb = 1_000_000
    sizes = [p.stat().st_size for p in logs]
    offsets = {str(p.resolve()): sum(sizes[:i]) for i, p in enumerate(logs)}
    with EventStore.open(path) as store, _bar("ingest (MB)", -(-sum(sizes) // mb)) as update:
        return store.ingest_files(logs, progress=lambda source, done, _size, _summary: update(
            completed=-(-(offsets.get(source, 0) + done) // mb)))  # rounded up, as the total


def _verify(path: Path) -> Any:
    from ..events.store import EventStore
    from ..replay.verify import VerifyRun, read_store_bad_lines, save_run, verify_games

    with EventStore.open(path) as store:
        run = VerifyRun()
        read_store_bad_lines(store.con, run)  # the tampered event ingest quarantined
        with _bar("verify", len(store.game_ids())) as update:
            run = verify_games(store.iter_games(), run, progress=lambda n: update(advance=n))
        save_run(store.con, run)
    return run


def _scan(path: Path, model: Any) -> list[dict[str, Any]]:
    """The nightly scan on the demo store; returns the flags, best first."""
    import orjson

    from ..events.store import EventStore
    from ..fraud.scan import scan_store

    with EventStore.open(path) as store, _bar("scan", None) as update:
        result = scan_store(store, model=model, progress=lambda n: update(advance=n),
                            on_total=lambda n: update(total=n))
    rows = result.flags.to_dicts()
    for row in rows:
        row["evidence"] = [(e["game_id"], e["seq"]) for e in orjson.loads(row["evidence"] or "[]")]
    return rows


def _report(path: Path, run: Any, flags: list[dict[str, Any]], ingest_summary: Any, out: Path,
            labels: Path | None, model_label: str, seconds: float) -> None:
    from ..events.store import EventStore

    with EventStore.open(path, read_only=True) as store:
        counts = store.counts()
    summary = run.summary()
    console.print(Panel.fit(
        f"store: {path}\n"
        f"events stored: {counts['events']:,} in {len(run.records):,} games "
        f"(quarantined lines: {counts['quarantine']:,})\n"
        f"games clean: {summary['clean']:,} of {summary['games']:,}",
        title="rummyguard demo"))
    if summary["findings_by_rule"]:
        table = Table(title="Findings by rule")
        table.add_column("rule")
        table.add_column("findings", justify="right")
        for rule, n in summary["findings_by_rule"].items():
            table.add_row(rule, str(n))
        console.print(table)
    if counts["quarantine"]:
        console.print(f"{counts['quarantine']:,} line(s) quarantined with their reason, nothing lost: "
                      "rummyguard sql \"SELECT reason, count(*) FROM quarantine GROUP BY 1\"")
    truth = _planted_groups(labels)
    if flags:
        console.print(_flags_table(flags, truth))
    console.print(_truth_line(flags, truth, model_label), highlight=False)
    dispute = _most_interesting(run)
    if dispute is not None:
        target = out / f"replay-{dispute.game_id}.html"
        try:
            from ..replay.html import render_html
        except ImportError:
            console.print(f"most interesting dispute: {dispute.game_id} "
                          f"(`rummyguard replay {dispute.game_id}`)")
        else:
            with EventStore.open(path, read_only=True) as store:
                events = store.load_game_for_replay(dispute.game_id)
            target.write_text(render_html(events), encoding="utf-8")
            console.print(f"HTML replay of the most interesting dispute ({dispute.game_id}): {target}")
    console.print(f"done in {seconds:.1f} s. Try: rummyguard sql \"SELECT rule, count(*) FROM findings GROUP BY 1\"")


def _flags_table(flags: list[dict[str, Any]], truth: dict[str, set[tuple[str, str]]]) -> Table:
    """The top flags beside the planted truth. Cells are plain text (no rich markup), so a
    value in brackets is shown, not read as a style."""
    table = Table(title="Top fraud flags (open the evidence with rummyguard replay GAME --at SEQ)")
    for col in ("subject", "score", "likely mechanism", "evidence (game@seq)", "planted (truth)"):
        table.add_column(col, overflow="fold")
    for f in flags[:10]:
        evidence = ", ".join(f"{g}@{s}" for g, s in f.get("evidence", [])[:3])
        planted = sorted(set.intersection(*(truth.get(p, set()) for p in f["players"])))
        # (model): a calibrated probability; (anomaly): an unusual-behaviour percentile
        cells = (str(f["subject"]), f"{f['score']:.2f}", f"{f['mechanism']} ({f['source']})",
                 evidence, ", ".join(m for m, _ in planted) or "-")
        table.add_row(*(Text(c) for c in cells))
    return table


def _truth_line(flags: list[dict[str, Any]], truth: dict[str, set[tuple[str, str]]],
                model_label: str = "built-in model") -> str:
    """How the flags compare with the world's planted fraud, said plainly (one small
    world proves little either way: DETECTION.md has the measured figures)."""
    flagged = {p for f in flags for p in f["players"]}
    found = sorted(flagged & truth.keys())
    mechanisms = sorted({m for groups in truth.values() for m, _ in groups})
    source = ("the unsupervised detector's flags alone" if model_label == "unsupervised only"
              else f"flags of the {model_label}")
    return (f"planted fraud in this world: {len(truth)} account(s) ({', '.join(mechanisms) or 'none'}); "
            f"flagged: {len(found)} of them, {len(flagged - truth.keys())} other account(s) "
            f"({source}; one small world proves little: DETECTION.md has the measured figures).")


def _planted_groups(labels: Path | None) -> dict[str, set[tuple[str, str]]]:
    """player -> {(mechanism, group)} from the simulator's labels (the demo's ground truth)."""
    if labels is None or not labels.exists():
        return {}
    import orjson

    out: dict[str, set[tuple[str, str]]] = {}
    for row in orjson.loads(labels.read_bytes())["mechanisms"]:
        out.setdefault(row["player_id"], set()).add((row["mechanism"], row["group_id"]))
    return out


def _most_interesting(run: Any) -> Any:
    """The game a support agent should open first: discrepancies (wrong claims) over
    violations over integrity breaks, then the most findings."""
    weight = {"discrepancy": 3, "violation": 2, "integrity": 1}
    scored = [(max(weight[f.kind] for f in r.findings), len(r.findings), r.game_id, r)
              for r in run.records if r.findings]
    if not scored:
        return None
    return max(scored, key=lambda t: (t[0], t[1], t[2]))[3]

