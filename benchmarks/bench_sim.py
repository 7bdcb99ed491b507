"""Simulator speed: games/s per variant (one process) and a whole world on every core.

    python -m benchmarks.bench_sim                      # per-variant table + a 20k world
    python -m benchmarks.bench_sim --world 100000       # the 100k-game target
    python -m benchmarks.bench_sim --variants classic --games 3000 --world 0
    python -m benchmarks.bench_sim --repeat 3           # medians of three runs

Each run is a real world (population, lobby, planted fraud at 2 %, hash-chained JSONL
serialised in memory and dropped), so the figures include everything but disk writes.
The mixed world plays every variant the simulator knows (all four).

The machine may be shared: each row gives wall-clock seconds *and* the process CPU
seconds (this process plus its workers), the median over ``--repeat`` runs, and the
load average at the start, so a loaded run can be told from a slow one. Games that did
not end by the rules are counted per variant: ``cap`` (the driver's event cap) and
``blocked`` (a Liverpool round nobody can go out of, RULES.md §3's gap; players leave).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import sys
import time
from typing import Any

from rummyguard.sim.world import WorldConfig, available_variants, build_world, run_world

DEFAULT_GAMES = {"classic": 2000, "r500": 1000, "liverpool": 300, "michigan": 1500}


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the pool's workers)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def run(games: int, variants: tuple[str, ...], workers: int, seed: int) -> dict[str, Any]:
    """One world: wall and CPU seconds, games, events, and per-variant stats."""
    world = build_world(WorldConfig(games=games, seed=seed, variants=variants, workers=workers))
    stats: dict[str, Any] = {}
    load = os.getloadavg()[0]
    cpu0, t0 = _cpu(), time.perf_counter()
    run_world(world, lambda _data: None, stats=stats)
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
    events = sum(row["events"] for row in stats.values())
    return {"wall": wall, "cpu": cpu, "games": world.games, "events": events, "stats": stats,
            "load": load}


def median_run(repeat: int, games: int, variants: tuple[str, ...], workers: int,
               seed: int) -> dict[str, Any]:
    """The run with the median wall time of ``repeat`` runs (same seed: same work)."""
    runs = sorted((run(games, variants, workers, seed) for _ in range(repeat)),
                  key=lambda r: r["wall"])
    out = dict(runs[len(runs) // 2])
    out["walls"] = [r["wall"] for r in runs]
    out["cpu"] = statistics.median(r["cpu"] for r in runs)
    return out


def _abandoned(stats: dict[str, Any]) -> str:
    parts = [f"{v}: {reason} {n}" for v, row in sorted(stats.items())
             for reason, n in sorted(row["abandoned"].items())]
    return ", ".join(parts) or "none"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--variants", default=",".join(available_variants()))
    ap.add_argument("--games", type=int, default=0, help="games per variant (default: per variant)")
    ap.add_argument("--world", type=int, default=20000, help="mixed-world size on all cores (0: skip)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--repeat", type=int, default=1, help="runs per row; the median is shown")
    ap.add_argument("--workers", type=int, default=0, help="processes for the world (0: all cores)")
    args = ap.parse_args(argv)
    variants = tuple(v for v in args.variants.split(",") if v)
    print(f"python {sys.version.split()[0]}, {platform.machine()}, {os.cpu_count()} cores, "
          f"load average at start {os.getloadavg()[0]:.1f}")
    print("| variant | games | wall s | CPU s | games/s (wall) | CPU ms/game | events/game "
          "| events/s | abandoned | load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for v in variants:
        n = args.games or DEFAULT_GAMES.get(v, 500)
        r = median_run(args.repeat, n, (v,), 1, args.seed)
        print(f"| {v} | {r['games']:,} | {r['wall']:.1f} | {r['cpu']:.1f} | "
              f"{r['games'] / r['wall']:,.1f} | {r['cpu'] / r['games'] * 1e3:.1f} | "
              f"{r['events'] / r['games']:,.0f} | {r['events'] / r['wall']:,.0f} | "
              f"{_abandoned(r['stats'])} | {r['load']:.1f} |", flush=True)
    if args.world:
        workers = args.workers or os.cpu_count() or 1
        r = median_run(args.repeat, args.world, variants, workers, args.seed)
        mix = ", ".join(f"{v} {row['games']:,}" for v, row in sorted(r["stats"].items()))
        rate = r["games"] / r["wall"]
        print(f"\nworld of {r['games']:,} games ({mix}) on {workers} processes: "
              f"{r['wall']:.1f} s wall (runs: {', '.join(f'{w:.1f}' for w in r['walls'])}), "
              f"{r['cpu']:.1f} CPU s = {rate:,.1f} games/s, {r['events']:,} events "
              f"({r['events'] / r['wall']:,.0f} events/s); abandoned: {_abandoned(r['stats'])}; "
              f"load at start {r['load']:.1f}; 100k games would take ~{1e5 / rate / 60:.1f} min "
              f"(CPU-bound on {workers} idle cores: ~{1e5 * r['cpu'] / r['games'] / workers / 60:.1f} min)")


if __name__ == "__main__":
    main()
