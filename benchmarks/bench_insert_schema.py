"""What DuckDB alone costs to insert issue 2's rows, by schema, beside the parse floor.

Issue 2 asks ingest to run within 4x of merely parsing the file with orjson. This harness
asks what the store's insert costs *by itself*, with no validation or hashing at all, so
the target can be judged: the same ~1M events as ``bench_ingest`` (its generator) are
ingested once (untimed), read back as Arrow tables, one per ingest batch, and inserted
batch by batch, each in its own transaction, into three fresh tables:

- ``full``: the store's own ``store.events`` (``insert_floor`` of bench_ingest);
- ``minimal``: only what issue 2 names: the original JSON, the envelope columns, and
  ``UNIQUE(event_id)``, ``UNIQUE(game_id, seq)``;
- ``minimal_no_unique``: the same columns without the two constraints (not allowed by the
  issue: it shows what the constraints cost).

Each insert is timed beside a parse floor measured just before it (wall seconds; the
insert uses DuckDB's threads). Prints one JSON document.
Usage: ``python -m benchmarks.bench_insert_schema [--events 1000000] [--repeat 2]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb
import orjson

from benchmarks.bench_ingest import insert_floor, machine, parse_floor, write_log
from rummyguard.events.store import EventStore

_COLUMNS = "event_id, game_id, seq, type, v, ts, actor, prev_hash, hash, raw"
_MINIMAL = """CREATE TABLE ev (event_id VARCHAR NOT NULL UNIQUE, game_id VARCHAR NOT NULL,
    seq INTEGER NOT NULL, type VARCHAR NOT NULL, v INTEGER NOT NULL, ts TIMESTAMP NOT NULL,
    actor VARCHAR NOT NULL, prev_hash VARCHAR NOT NULL, hash VARCHAR NOT NULL,
    raw VARCHAR NOT NULL, UNIQUE (game_id, seq))"""
_NO_UNIQUE = """CREATE TABLE ev (event_id VARCHAR NOT NULL, game_id VARCHAR NOT NULL,
    seq INTEGER NOT NULL, type VARCHAR NOT NULL, v INTEGER NOT NULL, ts TIMESTAMP NOT NULL,
    actor VARCHAR NOT NULL, prev_hash VARCHAR NOT NULL, hash VARCHAR NOT NULL,
    raw VARCHAR NOT NULL)"""


def _insert(path: Path, ddl: str, batches: list[Any]) -> float:
    """Wall seconds to insert ``batches`` into a fresh table made by ``ddl``."""
    con = duckdb.connect(str(path))
    con.execute(ddl)
    t0 = time.perf_counter()
    for rows in batches:
        con.execute("BEGIN")
        con.register("_rows", rows)
        con.execute("INSERT INTO ev SELECT * FROM _rows")
        con.unregister("_rows")
        con.execute("COMMIT")
    con.close()
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)
    runs: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="rg-bench-") as tmp:
        work = Path(tmp)
        log = work / "events.jsonl"
        n = write_log(log, args.events, chained=False)
        store_path = work / "events.duckdb"
        with EventStore.open(store_path) as store:
            store.ingest_files([log])
        with EventStore.open(store_path, read_only=True) as store:
            ids = [r[0] for r in store.con.execute(
                "SELECT DISTINCT batch_id FROM store.events ORDER BY batch_id").fetchall()]
            batches = [store.con.sql(
                f"SELECT {_COLUMNS} FROM store.events WHERE batch_id = $b ORDER BY rowid",
                params={"b": b}).to_arrow_table() for b in ids]
        if sum(len(b) for b in batches) != n:
            raise SystemExit("error: the ingest did not store every event")
        for k in range(max(1, args.repeat)):
            run: dict[str, float] = {}
            for name, insert in (
                ("full", lambda p: insert_floor(store_path, p)[0]),
                ("minimal", lambda p: _insert(p, _MINIMAL, batches)),
                ("minimal_no_unique", lambda p: _insert(p, _NO_UNIQUE, batches)),
            ):
                floor = parse_floor(log)[0]
                seconds = insert(work / f"{name}-{k}.duckdb")
                run[f"{name}_s"] = round(seconds, 3)
                run[f"{name}_ratio_to_parse"] = round(seconds / floor, 2)
                run[f"{name}_parse_floor_s"] = round(floor, 3)
            runs.append(run)
    result = {"events": n, "runs": runs, "machine": machine(),
              "command": "python -m benchmarks.bench_insert_schema " + " ".join(
                  argv if argv is not None else sys.argv[1:])}
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
