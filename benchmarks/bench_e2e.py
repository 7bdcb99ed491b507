"""End to end at 1k, 10k (and, on request, 100k) games: simulate -> ingest -> verify
(replay every game) -> scan -> analyst SQL, with wall time, throughput and peak memory
per stage, and how each stage's cost grows with the number of games.

    python -m benchmarks.bench_e2e                       # 1,000 and 10,000 games
    python -m benchmarks.bench_e2e --games 1000 10000 100000
    python -m benchmarks.bench_e2e --games 1000 --ray    # + Parquet export and the Ray scan

Each stage runs in its own Python process (``python -m benchmarks.bench_e2e _stage ...``)
so its peak memory is its own: ``peak_rss_mb`` is the stage process's high-water mark
(``getrusage``), ``peak_tree_mb`` the largest sum of RSS over the process and all its
descendants (pool workers, Ray's raylet and workers), sampled every 100 ms with psutil
(shared pages — DuckDB's buffer, Ray's object store — count once per process that maps
them, so it is an upper bound). The stages are the library calls behind the CLI:

``simulate``  ``sim.world`` (``rummyguard simulate``): a world on ``--workers`` processes,
              written as producer-chained JSONL with its labels
``ingest``    ``EventStore.ingest_files`` (``rummyguard ingest``) into a fresh DuckDB file
``verify``    ``verify_games`` + ``save_run`` (``rummyguard verify``): replay every game
``scan``      ``scan_store`` (``rummyguard scan``): replay + facts on ``--workers``
              processes, features, unsupervised scoring, rings, flags
``export``    ``export_parquet`` (``rummyguard export --parquet``), with ``--ray``
``scan_ray``  ``scan_parquet_ray`` on a local Ray with ``--workers`` CPUs, with ``--ray``
``query``     two analyst queries on the read-only connection analysts get
              (``rummyguard sql``): the top chip flows between pairs, and median think
              time per player and variant (``moves`` joined with ``games``); cold run
              and best of 3

Prints one JSON line per stage as it finishes, then one JSON document: the machine, the
command, every figure, and per stage the cost ratio between consecutive sizes and its
exponent (1.0 = linear). ``--markdown`` adds the tables used in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks._machine import cpu_model

QUERIES = {
    "top_pair_flows": """
        SELECT least(src, dst) AS a, greatest(src, dst) AS b,
               count(DISTINCT game_id) AS games,
               round(sum(CASE WHEN src < dst THEN amount ELSE -amount END), 1) AS net_a_to_b,
               round(sum(amount), 1) AS gross
        FROM chip_flows WHERE src <> dst
        GROUP BY 1, 2 ORDER BY gross DESC, a, b LIMIT 20""",
    "think_time_by_player": """
        SELECT m.player, g.variant, count(*) AS moves,
               median(m.think_ms) AS median_think_ms, avg(m.think_ms) AS mean_think_ms
        FROM moves m JOIN games g USING (game_id)
        WHERE NOT m.auto AND m.think_ms > 0
        GROUP BY ALL ORDER BY moves DESC, m.player, g.variant LIMIT 20""",
}

STAGES = ("simulate", "ingest", "verify", "scan", "export", "scan_ray", "query")


# --- memory ----------------------------------------------------------------------------------

class TreeSampler:
    """Largest RSS sum of this process and its descendants, sampled in a thread."""

    def __init__(self, every: float = 0.1) -> None:
        self.every = every
        self.peak = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        try:
            import psutil
        except ImportError:
            self._proc = None
        else:
            self._proc = psutil.Process()

    def _sample(self) -> None:
        assert self._proc is not None
        total = 0
        for p in [self._proc, *self._proc.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except Exception:  # a worker exited between listing and reading: skip it
                continue
        self.peak = max(self.peak, total)

    def __enter__(self) -> TreeSampler:
        if self._proc is not None:
            def loop() -> None:
                while not self._stop.is_set():
                    self._sample()
                    self._stop.wait(self.every)
            self._thread = threading.Thread(target=loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def mb(self) -> float | None:
        return round(self.peak / 2**20, 1) if self._proc is not None else None


# --- the stages (each in its own process) ------------------------------------------------------

def _paths(work: Path) -> dict[str, Path]:
    return {"log": work / "world.jsonl", "labels": work / "world.labels.json",
            "db": work / "bench.duckdb", "parquet": work / "parquet"}


def stage_simulate(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from rummyguard.sim.world import WorldConfig, build_world, dumps_labels, run_world

    p = _paths(work)
    config = WorldConfig(games=args.games, seed=args.seed, variants=tuple(args.variants.split(",")),
                         workers=args.workers)
    counts = {"events": 0, "bytes": 0}
    with open(p["log"], "wb") as fh:
        def sink(data: bytes) -> None:
            fh.write(data)
            counts["bytes"] += len(data)
            counts["events"] += data.count(b"\n")

        labels = run_world(build_world(config), sink)
    p["labels"].write_bytes(dumps_labels(labels))
    return {"games": args.games, "events": counts["events"], "mb": round(counts["bytes"] / 2**20, 1)}


def stage_ingest(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from rummyguard.events.store import EventStore

    p = _paths(work)
    with EventStore.open(p["db"]) as store:
        summary = store.ingest_files([p["log"]])
        counts = store.counts()
    return {"games": counts["games_chain"], "events": counts["events"],
            "quarantined": counts["quarantine"], "balanced": summary.balanced,
            "db_mb": round(p["db"].stat().st_size / 2**20, 1)}


def stage_verify(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from rummyguard.events.store import EventStore
    from rummyguard.replay.verify import save_run, verify_games

    with EventStore.open(_paths(work)["db"]) as store:
        events = store.counts()["events"]
        run = verify_games(store.iter_games())
        save_run(store.con, run)
    s = run.summary()
    return {"games": s["games"], "events": events, "clean": s["clean"],
            "findings": sum(s["findings_by_rule"].values())}


def stage_scan(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from rummyguard.events.store import EventStore
    from rummyguard.fraud.scan import scan_store

    with EventStore.open(_paths(work)["db"]) as store:
        events = store.counts()["events"]
        result = scan_store(store, workers=args.workers)
    s = result.summary()
    return {"games": s["games"], "events": events, "players": s["players"], "pairs": s["pairs"],
            "flags": s["flags"], "fact_rows": sum(s["fact_rows"].values()), "parts_s": s["seconds"]}


def stage_export(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from rummyguard.events.export import export_parquet
    from rummyguard.events.store import EventStore

    p = _paths(work)
    with EventStore.open(p["db"], read_only=True) as store:
        summary = export_parquet(store.con, p["parquet"], overwrite=True)
    size = sum(f.stat().st_size for f in p["parquet"].rglob("*.parquet"))
    return {"games": summary.games, "events": summary.rows, "files": summary.files,
            "mb": round(size / 2**20, 1)}


def stage_scan_ray(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    import duckdb

    from rummyguard.events.views import connect_readonly
    from rummyguard.fraud.ray_engine import scan_parquet_ray

    p = _paths(work)
    result = scan_parquet_ray(p["parquet"], con=duckdb.connect(), num_cpus=args.workers)
    s = result.summary()
    con = connect_readonly(p["db"])  # the local scan's flags, for comparison
    try:
        local = con.execute("SELECT count(*) FROM flags").fetchall()[0][0]
    finally:
        con.close()
    return {"games": s["games"], "flags": s["flags"],
            "flags_local_scan": local, "blocks": s["engine"]["blocks"],
            "boundary_games": s["engine"]["boundary_games"],
            "findings": sum(s["verify"]["findings_by_rule"].values()), "parts_s": s["seconds"]}


def stage_query(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from rummyguard.events.views import connect_readonly

    con = connect_readonly(_paths(work)["db"])
    out: dict[str, Any] = {}
    try:
        for name, sql in QUERIES.items():
            t0 = time.perf_counter()
            rows = con.execute(sql).fetchall()
            cold = time.perf_counter() - t0
            best = math.inf
            for _ in range(3):
                t0 = time.perf_counter()
                con.execute(sql).fetchall()
                best = min(best, time.perf_counter() - t0)
            out[name] = {"cold_s": round(cold, 4), "best_s": round(best, 4), "rows": len(rows)}
        out["chip_flow_rows"] = con.execute("SELECT count(*) FROM chip_flows").fetchall()[0][0]
        out["move_rows"] = con.execute("SELECT count(*) FROM moves").fetchall()[0][0]
    finally:
        con.close()
    return out


STAGE_FUNCS: dict[str, Callable[[argparse.Namespace, Path], dict[str, Any]]] = {
    "simulate": stage_simulate, "ingest": stage_ingest, "verify": stage_verify,
    "scan": stage_scan, "export": stage_export, "scan_ray": stage_scan_ray, "query": stage_query,
}


#: modules a stage imports, loaded before its clock starts (import time is reported apart)
PRELOAD = {
    "simulate": ["rummyguard.sim.world"],
    "ingest": ["rummyguard.events.store"],
    "verify": ["rummyguard.events.store", "rummyguard.replay.verify"],
    "scan": ["rummyguard.events.store", "rummyguard.fraud.scan", "sklearn.ensemble"],
    "export": ["rummyguard.events.store", "rummyguard.events.export"],
    "scan_ray": ["rummyguard.fraud.ray_engine", "sklearn.ensemble", "ray.data"],
    "query": ["rummyguard.events.views"],
}


def run_stage(args: argparse.Namespace) -> None:
    """Child process: run one stage, print its figures as one JSON line."""
    import importlib

    work = Path(args.dir)
    t0 = time.perf_counter()
    for mod in PRELOAD[args.stage]:
        importlib.import_module(mod)
    imports = time.perf_counter() - t0
    with TreeSampler() as tree:
        t0 = time.perf_counter()
        figures = STAGE_FUNCS[args.stage](args, work)
        wall = time.perf_counter() - t0
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out = {"stage": args.stage, "wall_s": round(wall, 3), "import_s": round(imports, 2), **figures,
           "peak_rss_mb": round(self_kb / 1024, 1), "peak_child_rss_mb": round(child_kb / 1024, 1),
           "peak_tree_mb": tree.mb()}
    for unit in ("games", "events"):
        if isinstance(out.get(unit), int) and out[unit] and wall > 0:
            out[f"{unit}_per_s"] = round(out[unit] / wall, 1)
    print(json.dumps(out), flush=True)


# --- the driver -------------------------------------------------------------------------------

def machine() -> dict[str, Any]:
    cpu = cpu_model()
    versions = {}
    for mod in ("duckdb", "polars", "pyarrow", "pydantic", "ray"):
        try:
            versions[mod] = __import__(mod).__version__
        except ImportError:
            versions[mod] = None
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"cpus": os.cpu_count(), "cpu": cpu, "memory_gb": round(mem, 1),
            "python": platform.python_version(), "platform": platform.platform(), **versions,
            "date": date.today().isoformat()}


def growth(results: dict[int, dict[str, dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Per stage, between consecutive sizes: time ratio and exponent (log t ratio / log n ratio)."""
    sizes = sorted(results)
    out: dict[str, list[dict[str, Any]]] = {}
    for stage in STAGES:
        rows = []
        for a, b in itertools.pairwise(sizes):
            ta = _stage_time(results[a].get(stage))
            tb = _stage_time(results[b].get(stage))
            if ta and tb:
                ratio = tb / ta
                rows.append({"from": a, "to": b, "time_ratio": round(ratio, 2),
                             "exponent": round(math.log(ratio) / math.log(b / a), 2)})
        if rows:
            out[stage] = rows
    return out


def _stage_time(fig: dict[str, Any] | None) -> float | None:
    if not fig:
        return None
    if fig["stage"] == "query":
        return sum(v["best_s"] for k, v in fig.items() if isinstance(v, dict) and "best_s" in v)
    return fig["wall_s"]


def markdown(results: dict[int, dict[str, dict[str, Any]]], grow: dict[str, list[dict[str, Any]]]) -> str:
    sizes = sorted(results)
    lines = ["| stage | " + " | ".join(f"{n:,} games" for n in sizes) + " |",
             "|---|" + "---|" * len(sizes)]
    for stage in STAGES:
        cells = []
        for n in sizes:
            f = results[n].get(stage)
            if not f:
                cells.append("—")
            elif stage == "query":
                cells.append(" / ".join(f"{f[q]['best_s'] * 1000:.0f} ms" for q in QUERIES))
            else:
                rate = f.get("games_per_s")
                cells.append(f"{f['wall_s']:.1f} s, {rate:,.0f} games/s, {f['peak_tree_mb'] or f['peak_rss_mb']:,.0f} MB"
                             if rate else f"{f['wall_s']:.1f} s")
        lines.append(f"| {stage} | " + " | ".join(cells) + " |")
    if grow:
        lines += ["", "| stage | " + " | ".join(f"{r['from']:,} -> {r['to']:,}" for r in next(iter(grow.values())))
                  + " |", "|---|" + "---|" * len(next(iter(grow.values())))]
        for stage, rows in grow.items():
            lines.append(f"| {stage} | " + " | ".join(f"x{r['time_ratio']} (exp {r['exponent']})" for r in rows)
                         + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_stage":
        sp = argparse.ArgumentParser()
        sp.add_argument("stage", choices=STAGES)
        sp.add_argument("--dir", required=True)
        sp.add_argument("--games", type=int, required=True)
        sp.add_argument("--seed", type=int, required=True)
        sp.add_argument("--variants", required=True)
        sp.add_argument("--workers", type=int, required=True)
        run_stage(sp.parse_args(argv[1:]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--variants", default="classic,r500,michigan",
                    help="simulated variants (liverpool is the simulator's slowest)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--ray", action="store_true", help="also export to Parquet and scan on Ray")
    ap.add_argument("--keep", type=Path, help="keep the work files under this directory")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    stages = [s for s in STAGES if args.ray or s not in ("export", "scan_ray")]
    base = args.keep or Path(tempfile.mkdtemp(prefix="rg-e2e-"))
    results: dict[int, dict[str, dict[str, Any]]] = {}
    try:
        for n in sorted(args.games):
            work = base / f"g{n}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            results[n] = {}
            for stage in stages:
                cmd = [sys.executable, "-m", "benchmarks.bench_e2e", "_stage", stage,
                       "--dir", str(work), "--games", str(n), "--seed", str(args.seed),
                       "--variants", args.variants, "--workers", str(args.workers)]
                load = os.getloadavg()[0]
                proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
                if proc.returncode != 0:
                    sys.stderr.write(proc.stderr)
                    raise SystemExit(f"stage {stage} at {n} games failed")
                fig = json.loads(proc.stdout.strip().splitlines()[-1])
                fig["load_before"] = round(load, 2)
                results[n][stage] = fig
                print(json.dumps({"games_target": n, **fig}), flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    grow = growth(results)
    doc = {"machine": machine(), "command": "python -m benchmarks.bench_e2e " + " ".join(argv),
           "results": {str(n): r for n, r in results.items()}, "growth": grow}
    print(json.dumps(doc))
    if args.markdown:
        print(markdown(results, grow))


if __name__ == "__main__":
    main()
