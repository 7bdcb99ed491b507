"""Simulator speed: games/s per variant (one process) and a whole world on every core.

    python -m benchmarks.bench_sim                      # per-variant table + a 20k world
    python -m benchmarks.bench_sim --world 100000       # the 100k-game target
    python -m benchmarks.bench_sim --variants classic --games 3000 --world 0

Each run is a real world (population, lobby, planted fraud at 2 %, hash-chained JSONL
serialised in memory and dropped), so the figures include everything but disk writes.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

from rummyguard.sim.world import WorldConfig, available_variants, build_world, run_world

DEFAULT_GAMES = {"classic": 2000, "r500": 1000, "liverpool": 60, "michigan": 1500}


def run(games: int, variants: tuple[str, ...], workers: int, seed: int) -> tuple[float, int, int]:
    """(seconds, games, events) for one world."""
    world = build_world(WorldConfig(games=games, seed=seed, variants=variants, workers=workers))
    events = [0]
    size = [0]

    def sink(data: bytes) -> None:
        size[0] += len(data)

    def progress(_done: int, n: int) -> None:
        events[0] += n

    t0 = time.perf_counter()
    run_world(world, sink, progress)
    return time.perf_counter() - t0, world.games, events[0]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--variants", default=",".join(available_variants()))
    ap.add_argument("--games", type=int, default=0, help="games per variant (default: per variant)")
    ap.add_argument("--world", type=int, default=20000, help="mixed-world size on all cores (0: skip)")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args(argv)
    variants = tuple(v for v in args.variants.split(",") if v)
    print(f"python {sys.version.split()[0]}, {platform.machine()}, {os.cpu_count()} cores")
    print("| variant | games | seconds | games/s (1 process) | events/game | events/s |")
    print("|---|---|---|---|---|---|")
    for v in variants:
        n = args.games or DEFAULT_GAMES.get(v, 500)
        secs, games, events = run(n, (v,), 1, args.seed)
        print(f"| {v} | {games:,} | {secs:.1f} | {games / secs:,.1f} | {events / games:,.0f} | "
              f"{events / secs:,.0f} |", flush=True)
    if args.world:
        workers = os.cpu_count() or 1
        mixed = tuple(v for v in variants if v != "liverpool") or variants
        secs, games, events = run(args.world, mixed, workers, args.seed)
        print(f"\nworld of {games:,} games ({', '.join(mixed)}) on {workers} processes: "
              f"{secs:.1f} s = {games / secs:,.1f} games/s, {events:,} events "
              f"({events / secs:,.0f} events/s); 100k games would take ~{1e5 / (games / secs) / 60:.1f} min")


if __name__ == "__main__":
    main()
