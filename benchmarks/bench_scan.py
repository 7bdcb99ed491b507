"""Scan speed: replay + facts + features + scoring + flags over a store of N games.

    python -m benchmarks.bench_scan [BASE.jsonl] --games 10000 100000 [--workers 2]

BASE is a simulated world (``rummyguard simulate`` / sim.world; without one, a world of
2,500 classic, Rummy 500 and Michigan games, seed 1101, simulated once and kept under
benchmarks/_work/, so ``make bench`` runs this harness too). It is ingested once
into a fresh store; to reach N games its games are replicated inside the store by SQL
(``game_id`` and ``event_id`` suffixed ``~rK``, raw JSON rewritten to match), so the
per-game work is that of real simulated games while the world grows. Replicas keep the
base world's players, so features run over as many players as the base world has but
over N games of facts (the group-by cost grows with the facts, which is what grows
with N). Prints one JSON line per size with the stage timings of
:func:`rummyguard.fraud.scan.scan_store` (the same code path as ``rummyguard scan``),
the load average before and after, and the CPU seconds the kernel charged to this
process and to the worker processes (on a shared machine wall time alone misleads).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import tempfile
import time
from pathlib import Path

from rummyguard.events.store import EventStore
from rummyguard.fraud.scan import scan_store


def build_store(base: Path, games: int, path: Path) -> int:
    """A store holding ``games`` games made of the base world's games (replicated)."""
    store = EventStore.open(path)
    try:
        store.ingest_files([base])
        n_base = store.con.execute("SELECT count(*) FROM store.games_chain").fetchall()[0][0]
        copies = -(-games // n_base)
        store.con.execute("CREATE TEMP TABLE base_ids AS SELECT game_id, row_number() OVER "
                          "(ORDER BY game_id) AS rn FROM store.games_chain")
        for k in range(1, copies):
            take = min(n_base, games - k * n_base)
            if take <= 0:
                break
            suffix = f"~r{k}"
            store.con.execute(
                f"""INSERT INTO store.events
                SELECT e.event_id || '{suffix}', e.game_id || '{suffix}', e.seq, e.type, e.v, e.ts,
                       e.ts_text, e.actor, e.payload, e.up_payload, e.up_v, e.prev_hash, e.hash,
                       replace(e.raw, '"game_id":"' || e.game_id || '"',
                               '"game_id":"' || e.game_id || '{suffix}"'),
                       e.batch_id
                FROM store.events e JOIN base_ids b ON b.game_id = e.game_id WHERE b.rn <= {take}""")
            store.con.execute(
                f"""INSERT INTO store.games_chain
                SELECT c.game_id || '{suffix}', c.chained_by, c.next_seq, c.last_hash, c.batch_id
                FROM store.games_chain c JOIN base_ids b ON b.game_id = c.game_id
                WHERE b.rn <= {take}""")
        return store.con.execute("SELECT count(*) FROM store.games_chain").fetchall()[0][0]
    finally:
        store.close()


def default_base() -> Path:
    """The base world when none is given: simulated once (seeded), then reused."""
    work = Path(__file__).parent / "_work"
    work.mkdir(exist_ok=True)
    path = work / "scan-base-2500.jsonl"
    if path.exists():
        return path
    from rummyguard.sim.world import WorldConfig, build_world, run_world

    tmp = path.with_suffix(".tmp")
    config = WorldConfig(games=2500, seed=1101, variants=("classic", "r500", "michigan"),
                         workers=os.cpu_count() or 1)
    with tmp.open("wb") as out:
        run_world(build_world(config), out.write)
    tmp.rename(path)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", type=Path, nargs="?", default=None,
                    help="a simulated world, JSONL (default: 2,500 games, seed 1101, simulated "
                         "once under benchmarks/_work/)")
    ap.add_argument("--games", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    if args.base is None:
        args.base = default_base()
    for n in args.games:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bench.duckdb"
            t0 = time.perf_counter()
            games = build_store(args.base, n, path)
            setup = time.perf_counter() - t0
            with EventStore.open(path) as store:
                events = store.con.execute("SELECT count(*) FROM store.events").fetchall()[0][0]
                load_before = os.getloadavg()[0]
                me0 = resource.getrusage(resource.RUSAGE_SELF)
                kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                res = scan_store(store, workers=args.workers)
                me1 = resource.getrusage(resource.RUSAGE_SELF)
                kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            out = {"games": games, "events": events, "setup_s": round(setup, 1),
                   "workers": args.workers, "python": platform.python_version(),
                   "cpus": os.cpu_count(), "load_before": round(load_before, 2),
                   "load_after": round(os.getloadavg()[0], 2),
                   # CPU seconds: this process (store reads, features, scoring) and the
                   # worker processes (replay + facts), as the kernel accounted them
                   "cpu_parent_s": round(me1.ru_utime + me1.ru_stime - me0.ru_utime - me0.ru_stime, 1),
                   "cpu_workers_s": round(kids1.ru_utime + kids1.ru_stime - kids0.ru_utime
                                          - kids0.ru_stime, 1),
                   **res.summary()}
            out.pop("fact_rows", None)
            print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
