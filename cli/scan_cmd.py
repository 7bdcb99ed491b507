"""``rummyguard scan``: the nightly fraud scan over the store, writing the flags."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .common import DbOption, console, db_path, err_console, fail, print_json


def scan(
    db: Path | None = DbOption,
    model: str | None = typer.Option(
        None, "--model", help="'builtin' (the default): the supervised models trained on the "
        "simulated world that ships with rummyguard (fitted once on first use, then cached); "
        "a file saved by `rummyguard eval --save-model`; or 'none': the unsupervised detector "
        "alone. $RUMMYGUARD_MODEL changes the default.", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print exactly one JSON object."),
    parquet: Path | None = typer.Option(
        None, "--parquet", help="Also write the fact tables and the flags as Parquet files into "
        "this folder (a new or empty one, or one an earlier scan wrote).",
        show_default=False),
    workers: int = typer.Option(min(2, os.cpu_count() or 1), "--workers", min=0,
                                help="Processes for the replay + facts map (0 = in process)."),
    threshold: float = typer.Option(0.5, "--threshold", min=0.0, max=1.0,
                                    help="Model probability that makes a flag."),
    top: int = typer.Option(20, "--top", min=0, help="Flags to print (all are stored)."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr."),
    engine: str = typer.Option(
        "local", "--engine", help="local: a process pool here; ray: Ray Data over a Parquet "
        "export (pip install 'rummyguard\\[ray]'). Both give the same flags."),
    address: str | None = typer.Option(
        None, "--address", help="With --engine ray: the Ray cluster to join (host:port or "
        "'auto'); default: a local Ray with --workers CPUs.", show_default=False),
    from_parquet: Path | None = typer.Option(
        None, "--from-parquet", help="With --engine ray: scan this export (`rummyguard export "
        "--parquet`, on a path every node reads) instead of a temporary export of the store.",
        show_default=False),
) -> None:
    """Replay every stored game, derive facts and features, score them, and write flags.

    Writes the tables fraud.moves, fraud.discards, fraud.pickups, fraud.player_games,
    fraud.chip_flows, fraud.sessions, fraud.round_ends, fraud.starts and fraud.flags,
    and the views moves, chip_flows, player_games (unless another command owns it) and
    flags (docs/fraud.md). Each flag names its subject (player, pair or ring), score,
    likely mechanism, top signals and the evidence moves: open one with
    `rummyguard replay GAME --at SEQ`.
    """
    from ..events.store import EventStore, StoreError
    from ..fraud.builtin import resolve_model
    from ..fraud.models import ModelError
    from ..fraud.scan import scan_store

    if engine not in ("local", "ray"):
        fail(f"--engine must be local or ray, not {engine!r}")
    if engine == "local" and (address is not None or from_parquet is not None):
        fail("--address and --from-parquet go with --engine ray")
    if parquet is not None and not _utf8(parquet):
        # Arrow takes UTF-8 paths only: say so now, not after the scan (audit 50)
        fail(f"--parquet {os.fsencode(parquet)!r}: Arrow needs a folder path that is valid "
             "UTF-8; choose another folder name")
    if parquet is not None and parquet.exists() and not parquet.is_dir():
        fail(f"--parquet {parquet} exists and is not a folder (it names the folder to write into)")
    if parquet is not None and parquet.is_dir():
        # a folder an earlier scan wrote is rewritten (the nightly case); anything else in
        # it (an export's partitions, other files) would be mixed with the facts
        from ..fraud.facts import TABLES

        ours = {f"{t}.parquet" for t in (*TABLES, "flags")}
        other = sorted(p.name for p in parquet.iterdir() if p.name not in ours)
        if other:
            fail(f"--parquet {parquet} holds other files ({', '.join(other[:3])}"
                 f"{', ...' if len(other) > 3 else ''}): give an empty folder or one a scan wrote")
    if not db_path(db).is_file():
        fail(f"no store at {db_path(db)} (run `rummyguard ingest` first)")
    try:
        store = EventStore.open(db_path(db))
    except StoreError as exc:
        fail(str(exc))
    try:
        try:  # after the store opened: an unusable store fails before a minute of fitting
            chosen = resolve_model(model, note=lambda text: err_console.print(text))
        except ModelError as exc:
            fail(str(exc))
        if engine == "ray":
            from ..fraud.ray_engine import ExportMismatch, RayUnavailable, scan_store_ray

            try:
                # Ray's driver prints its raylet's warnings (e.g. "8 PYTHON worker processes
                # have been started") to stdout even without log_to_driver: stdout is the
                # --json document's, so they go to stderr (a CI run saw one break the JSON)
                with contextlib.redirect_stdout(sys.stderr):
                    result = scan_store_ray(store, parquet_in=from_parquet, address=address,
                                            num_cpus=workers or None, model=chosen.model,
                                            threshold=threshold, parquet_out=parquet)
            except (RayUnavailable, ExportMismatch, FileNotFoundError) as exc:
                fail(str(exc))
        elif progress and err_console.is_terminal:
            with Progress(TextColumn("scan"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          console=err_console, transient=True) as bar:
                task = bar.add_task("scan", total=None)
                result = scan_store(
                    store, model=chosen.model, workers=workers, parquet_dir=parquet, threshold=threshold,
                    progress=lambda n: bar.advance(task, n),
                    on_total=lambda n: bar.update(task, total=n))
        else:
            result = scan_store(store, model=chosen.model, workers=workers, parquet_dir=parquet,
                                threshold=threshold)
    finally:
        store.close()
    if as_json:
        out = result.summary()
        out["model"] = chosen.value  # "builtin", "none" or the model file
        out["model_label"] = chosen.label
        out["top_flags"] = _flag_rows(result.flags.head(top))
        print_json(out)
        return
    s = result.summary()
    console.print(f"scanned {s['games']} games, {s['players']} players, {s['pairs']} pairs in "
                  f"{s['seconds']['total']:.1f} s; {s['flags']} flags "
                  f"({chosen.label})", highlight=False)
    if result.flags.height:
        _print_flags(result.flags.head(top))


def _flag_rows(flags: object) -> list[dict]:
    import orjson
    import polars as pl

    assert isinstance(flags, pl.DataFrame)
    rows = []
    for r in flags.iter_rows(named=True):
        r = dict(r)
        r["signals"] = orjson.loads(r["signals"])
        r["evidence"] = orjson.loads(r["evidence"])
        rows.append(r)
    return rows


def _print_flags(flags: object) -> None:
    import orjson
    import polars as pl

    assert isinstance(flags, pl.DataFrame)
    table = Table("#", "subject", "score", "mechanism",
                  "top signals: value vs population median (direction, percentile)", "open")
    for column in table.columns:  # a narrow or piped output wraps a value, never cuts it
        column.overflow = "fold"
    for r in flags.iter_rows(named=True):
        every = orjson.loads(r["signals"])
        sig = [s for s in every if s["suspicious_when"] in ("high", "low")][:3]
        sig += [s for s in every if s["suspicious_when"] not in ("high", "low")]
        text = escape(", ".join(_signal_text(s) for s in sig))
        # escaped: "[model]" would otherwise be read as rich markup and vanish
        table.add_row(str(r["flag_id"]), escape(f"{r['subject_kind']} {r['subject']}"),
                      f"{r['score']:.3f}", escape(f"{r['mechanism']} [{r['source']}]"), text,
                      escape(r["replay"]))
    console.print(table)


def _signal_text(s: dict) -> str:
    """``tie_z=6.59 vs 0 (high, 1.00)``; an evidence count as ``co_games=55 vs 1``."""
    def num(x: object) -> str:
        return "?" if x is None else f"{x:.4g}" if isinstance(x, float) else str(x)

    text = f"{s['signal']}={num(s['value'])}"
    if s.get("population_median") is not None:
        text += f" vs {num(s['population_median'])}"
    if s.get("percentile") is not None and s["suspicious_when"] in ("high", "low"):
        text += f" ({s['suspicious_when']}, {s['percentile']:.2f})"
    if s.get("pair"):
        text += f" [{s['pair']}]"
    return text


def _utf8(path: Path) -> bool:
    try:
        str(path.resolve()).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
