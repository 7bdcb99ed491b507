"""Ingest benchmark: JSONL -> validated, hash-checked rows in DuckDB, against the floor
of merely parsing the same file with orjson, in the same run.

    .venv/bin/python -m benchmarks.bench_ingest [--events 1000000] [--chained] [--repeat 3]

The input is synthetic but spec-valid: many classic-like three-player games (created,
players connect, a round with a full shuffled deck, alternating draws and discards,
an end). It does not need to be a replay-valid game: ingest checks the contract and the
chain, not the rules. Prints one JSON document with the figures.

Each repetition measures the parse floor and then a full ingest into a fresh store,
back to back, so that both see the same machine load; the report gives every run and
the median. Besides wall time it reports CPU time (all threads of this process): on a
shared machine wall time depends on what else runs, CPU time much less so.

Each run also measures the *insert floor*: DuckDB alone writing the very rows the ingest
stored (read back from its store as Arrow batches of the ingest's batch size, untimed) into
a fresh store with the same schema, one transaction per batch. It is the part of ingest no
Python work can remove (the byte-exact line, the envelope columns and the two UNIQUE
indexes issue 2 requires), so ``ratio_insert_floor_to_parse`` bounds from below any
ingest's ratio to the parse floor on this machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb
import msgspec
import orjson
import pyarrow

from benchmarks._machine import cpu_model
from rummyguard.events.cards import RANKS, SUITS
from rummyguard.events.hashing import chain
from rummyguard.events.store import EventStore

DECK = [r + s for r in RANKS for s in SUITS]


def _ts(ms: int) -> str:
    s, milli = divmod(ms, 1000)
    t = time.gmtime(1_795_000_000 + s)
    return time.strftime("%Y-%m-%dT%H:%M:%S", t) + f".{milli:03d}Z"


def game_events(g: int, rng: random.Random, moves: int) -> list[dict[str, Any]]:
    """One synthetic game of ``moves`` draw/discard pairs (about 2*moves+7 events)."""
    game_id = f"bench-{g:07d}"
    seats = [f"p{rng.randrange(5000):04d}" for _ in range(3)]
    ms = g * 60_000
    out: list[dict[str, Any]] = []

    def add(type_name: str, actor: str, payload: dict[str, Any], v: int = 1) -> None:
        nonlocal ms
        ms += rng.randrange(200, 9000)
        out.append({"event_id": f"{game_id}-{len(out):04d}", "game_id": game_id,
                    "seq": len(out), "type": type_name, "v": v, "ts": _ts(ms),
                    "actor": actor, "payload": payload})

    add("GameCreated", "system", {"variant": "classic", "table_id": f"t{g % 97}",
                                  "seats": seats, "dealer": 0, "stake": 100, "rules": {}})
    for p in seats:
        add("PlayerConnected", p, {"ip_hash": f"ip{rng.getrandbits(40):010x}",
                                   "device_hash": f"dv{rng.getrandbits(40):010x}",
                                   "client": "web"})
    deck = DECK[:]
    rng.shuffle(deck)
    add("RoundStarted", "system", {"round": 1, "dealer": 0, "deck": deck, "redeal": 0})
    for m in range(moves):
        p = seats[m % 3]
        card = deck[m % 52]
        add("Drew", p, {"source": "stock", "cards": [card]}, v=2)
        add("Discarded", p, {"card": card}, v=2)
    add("RoundEnded", "system", {"round": 1, "winners": [seats[0]],
                                 "scores": {seats[0]: 0, seats[1]: 10, seats[2]: 20}})
    add("GameEnded", "system", {"winners": [seats[0]],
                                "net": {seats[0]: 200, seats[1]: -100, seats[2]: -100}})
    return out


def write_log(path: Path, n_events: int, *, chained: bool, seed: int = 7) -> int:
    """Write about ``n_events`` events (whole games), games interleaved in pairs so the
    file is not one game after another; returns the exact count."""
    rng = random.Random(seed)
    count = 0
    g = 0
    with path.open("wb") as fh:
        while count < n_events:
            pair = [game_events(g, rng, 20), game_events(g + 1, rng, 20)]
            g += 2
            if chained:
                pair = [chain(events) for events in pair]
            a, b = pair
            for i in range(max(len(a), len(b))):
                for events in (a, b):
                    if i < len(events):
                        fh.write(orjson.dumps(events[i]))
                        fh.write(b"\n")
                        count += 1
    return count


def parse_floor(path: Path) -> tuple[float, float]:
    """(wall, CPU) seconds to read the file and orjson-parse every line (nothing else)."""
    t0 = time.perf_counter()
    c0 = time.process_time()
    loads = orjson.loads
    with path.open("rb") as fh:
        for line in fh:
            loads(line)
    return time.perf_counter() - t0, time.process_time() - c0


_INSERT = (
    "INSERT INTO store.events (event_id, game_id, seq, type, v, ts, ts_text, actor, payload, "
    "up_payload, up_v, prev_hash, hash, raw, batch_id) SELECT event_id, game_id, seq, type, v, "
    "ts, ts_text, actor, payload, up_payload, up_v, prev_hash, hash, raw, batch_id FROM _rows"
)


def insert_floor(source: Path, target: Path) -> tuple[float, float]:
    """(wall, CPU) seconds for DuckDB alone to insert the rows of the store at ``source``
    into a fresh store at ``target`` (same DDL), batch by batch as ingest commits them.
    The rows are read back first (untimed) as one Arrow table per ingest batch."""
    with EventStore.open(source, read_only=True) as store:
        ids = [r[0] for r in store.con.execute(
            "SELECT DISTINCT batch_id FROM store.events ORDER BY batch_id").fetchall()]
        batches = [store.con.sql(
            "SELECT * EXCLUDE (batch_id), $b AS batch_id FROM store.events WHERE batch_id = $b "
            "ORDER BY rowid", params={"b": b}).to_arrow_table() for b in ids]
    with EventStore.open(target) as store:
        con = store.con
        t0 = time.perf_counter()
        c0 = time.process_time()
        for rows in batches:
            con.execute("BEGIN")
            con.register("_rows", rows)
            con.execute(_INSERT)
            con.unregister("_rows")
            con.execute("COMMIT")
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        stored = con.execute("SELECT count(*) FROM store.events").fetchall()[0][0]
    if stored != sum(len(b) for b in batches):
        raise SystemExit(f"error: insert floor stored {stored} rows")
    return wall, cpu


def ingest_once(log: Path, db: Path, n: int, workers: int | None) -> dict[str, float]:
    """One parse floor, one full ingest into a fresh store at ``db``, then the insert
    floor of the same rows (:func:`insert_floor`)."""
    floor, floor_cpu = parse_floor(log)
    t0 = time.perf_counter()
    c0 = time.process_time()
    with EventStore.open(db) as store:
        summary = store.ingest_files([log], workers=workers)
    ingest = time.perf_counter() - t0
    ingest_cpu = time.process_time() - c0
    if summary.stored != n:
        raise SystemExit(f"error: stored {summary.stored} of {n}: {summary.as_dict()}")
    copy = db.with_name("floor-" + db.name)
    insert, insert_cpu = insert_floor(db, copy)
    for leftover in (db, db.with_name(db.name + ".wal"), copy, copy.with_name(copy.name + ".wal")):
        leftover.unlink(missing_ok=True)
    return {
        "parse_floor_s": round(floor, 3),
        "parse_floor_events_per_s": round(n / floor),
        "ingest_s": round(ingest, 3),
        "ingest_events_per_s": round(n / ingest),
        "ratio_ingest_to_floor": round(ingest / floor, 2),
        "ingest_cpu_us_per_event": round(ingest_cpu / n * 1e6, 2),
        "floor_cpu_us_per_event": round(floor_cpu / n * 1e6, 2),
        "insert_floor_s": round(insert, 3),
        "insert_floor_events_per_s": round(n / insert),
        "ratio_insert_floor_to_parse": round(insert / floor, 2),
        "insert_floor_cpu_us_per_event": round(insert_cpu / n * 1e6, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
    }


def machine() -> dict[str, Any]:
    return {"nproc": os.cpu_count(), "cpu": cpu_model(), "python": platform.python_version(),
            "duckdb": duckdb.__version__, "msgspec": msgspec.__version__,
            "orjson": orjson.__version__, "pyarrow": pyarrow.__version__}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--chained", action="store_true", help="producer-chained input")
    ap.add_argument("--workers", type=int, default=None, help="decode processes (default: auto)")
    ap.add_argument("--repeat", type=int, default=3, help="runs (median reported)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rg-bench-") as tmp:
        log = Path(tmp) / "events.jsonl"
        n = write_log(log, args.events, chained=args.chained)
        runs = [ingest_once(log, Path(tmp) / "bench.duckdb", n, args.workers)
                for _ in range(max(1, args.repeat))]
        result: dict[str, Any] = {
            "events": n,
            "file_mb": round(log.stat().st_size / 1e6, 1),
            "chained_by": "producer" if args.chained else "ingest",
        }
    for key in runs[0]:
        result[key] = statistics.median(r[key] for r in runs)
    result["runs"] = runs
    result["machine"] = machine()
    result["command"] = "python -m benchmarks.bench_ingest " + " ".join(
        argv if argv is not None else sys.argv[1:])
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
