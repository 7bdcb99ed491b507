"""Side by side with the ``eventsourcing`` library (pyeventsourcing): storing and reading
back the same events, in one run, as ratios.

    python -m benchmarks.bench_eventsourcing                 # a 2,000-game simulated world
    python -m benchmarks.bench_eventsourcing --games 10000
    python -m benchmarks.bench_eventsourcing --log world.jsonl

The input is one simulated world (``sim.world``; classic, r500, michigan), held as JSON
Lines bytes. Every contender starts from those bytes and writes to a fresh file on the
same disk, then reads every game back in full:

``rummyguard``       ``EventStore.ingest_files`` (parse, validate each event against its
                     pydantic model, verify the producer's hash chain, duplicate/conflict
                     checks, insert into DuckDB with UNIQUE(event_id), UNIQUE(game_id, seq));
                     read back with ``load_game`` per game (upcast dicts with hashes) and
                     with ``iter_games`` (batched)
``es-application``   eventsourcing's typical use: one ``Aggregate`` per game (created by
                     its GameCreated, one ``Logged`` aggregate event per further log
                     event, the event dict as its attribute), ``Application.save`` per
                     game, persistence module ``eventsourcing.sqlite`` with its default
                     JSON transcoder; read back with ``repository.get`` (replays the
                     aggregate's events)
``es-recorder``      the library's storage floor: ``SQLiteAggregateRecorder`` storing one
                     ``StoredEvent`` per log event (originator = the game's UUID,
                     version = seq, topic = type, state = the raw line), one
                     ``insert_events`` transaction per game; read back with
                     ``select_events`` per game (no decoding)

Only rummyguard validates and hash-checks what it stores; eventsourcing stores what it
is given. The ratios say what that costs. Read-back is checked: every contender returns
every event of every game, equal to the input.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

import orjson


def simulated_log(games: int, seed: int, variants: tuple[str, ...]) -> bytes:
    from rummyguard.sim.world import WorldConfig, build_world, run_world

    out: list[bytes] = []
    run_world(build_world(WorldConfig(games=games, seed=seed, variants=variants,
                                      workers=os.cpu_count() or 1)), out.append)
    return b"".join(out)


def game_uuid(game_id: str) -> UUID:
    return uuid5(NAMESPACE_URL, f"rummyguard:{game_id}")


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _group(lines: list[bytes]) -> dict[str, list[dict[str, Any]]]:
    games: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        ev = orjson.loads(line)
        games.setdefault(ev["game_id"], []).append(ev)
    return games


# --- rummyguard -------------------------------------------------------------------------------

def bench_rummyguard(log: Path, work: Path) -> dict[str, Any]:
    from rummyguard.events.store import EventStore

    store = EventStore.open(work / "rg.duckdb")
    try:
        write_s, summary = _timed(lambda: store.ingest_files([log]))
        assert summary.balanced, summary.as_dict()
        ids = store.game_ids()

        def read_each() -> int:
            return sum(len(store.load_game(g)) for g in ids)

        def read_batched() -> int:
            return sum(len(g) for g in store.iter_games())

        read_s, n_each = _timed(read_each)
        batch_s, n_batch = _timed(read_batched)
        sample = store.load_game(ids[0])
    finally:
        store.close()
    return {"write_s": write_s, "read_s": read_s, "read_batched_s": batch_s, "events_read": n_each,
            "events_read_batched": n_batch, "games": len(ids), "sample": sample,
            "file_mb": (work / "rg.duckdb").stat().st_size / 2**20}


# --- eventsourcing ----------------------------------------------------------------------------

def bench_es_application(log_bytes: bytes, work: Path) -> dict[str, Any]:
    from eventsourcing.application import Application
    from eventsourcing.domain import Aggregate, event

    class GameLog(Aggregate):
        """One game's log as an event-sourced aggregate."""

        @staticmethod
        def create_id(game_id: str, first: dict[str, Any]) -> UUID:
            return game_uuid(game_id)

        @event("Created")
        def __init__(self, game_id: str, first: dict[str, Any]) -> None:
            self.game_id = game_id
            self.log = [first]

        @event("Logged")
        def logged(self, ev: dict[str, Any]) -> None:
            self.log.append(ev)

    path = work / "es-app.sqlite"
    app = Application(env={"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(path)})

    def write() -> list[str]:
        games = _group(log_bytes.splitlines())
        for game_id, events in games.items():
            agg = GameLog(game_id=game_id, first=events[0])
            for ev in events[1:]:
                agg.logged(ev=ev)
            app.save(agg)
        return sorted(games)

    write_s, ids = _timed(write)

    def read() -> tuple[int, list[dict[str, Any]]]:
        n = 0
        first: list[dict[str, Any]] = []
        for k, game_id in enumerate(ids):
            agg = app.repository.get(game_uuid(game_id))
            n += len(agg.log)
            if k == 0:
                first = agg.log
        return n, first

    read_s, (n, sample) = _timed(read)
    app.close()
    return {"write_s": write_s, "read_s": read_s, "events_read": n, "games": len(ids),
            "sample": sample, "file_mb": path.stat().st_size / 2**20}


def bench_es_recorder(log_bytes: bytes, work: Path) -> dict[str, Any]:
    from eventsourcing.persistence import StoredEvent
    from eventsourcing.sqlite import SQLiteAggregateRecorder, SQLiteDatastore

    path = work / "es-rec.sqlite"
    datastore = SQLiteDatastore(str(path))
    recorder = SQLiteAggregateRecorder(datastore, events_table_name="stored_events")
    recorder.create_table()

    def write() -> list[str]:
        by_game: dict[str, list[StoredEvent]] = {}
        for line in log_bytes.splitlines():
            ev = orjson.loads(line)
            by_game.setdefault(ev["game_id"], []).append(
                StoredEvent(originator_id=game_uuid(ev["game_id"]), originator_version=ev["seq"],
                            topic=ev["type"], state=line))
        for stored in by_game.values():
            recorder.insert_events(stored)
        return sorted(by_game)

    write_s, ids = _timed(write)

    def read() -> tuple[int, list[dict[str, Any]]]:
        n = 0
        first: list[dict[str, Any]] = []
        for k, game_id in enumerate(ids):
            stored = recorder.select_events(game_uuid(game_id))
            n += len(stored)
            if k == 0:
                first = [orjson.loads(s.state) for s in stored]
        return n, first

    read_s, (n, sample) = _timed(read)
    datastore.close()
    return {"write_s": write_s, "read_s": read_s, "events_read": n, "games": len(ids),
            "sample": sample, "file_mb": path.stat().st_size / 2**20}


# --- the run ----------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--variants", default="classic,r500,michigan")
    ap.add_argument("--log", type=Path, help="use this JSONL log instead of simulating one")
    args = ap.parse_args(argv)
    import eventsourcing

    with tempfile.TemporaryDirectory(prefix="rg-es-") as tmp:
        work = Path(tmp)
        if args.log is not None:
            log = args.log
            data = log.read_bytes()
        else:
            data = simulated_log(args.games, args.seed, tuple(args.variants.split(",")))
            log = work / "world.jsonl"
            log.write_bytes(data)
        lines = data.splitlines()
        expected = _group(lines)
        first_id = sorted(expected)[0]
        events = len(lines)
        rg = bench_rummyguard(log, work)
        app = bench_es_application(data, work)
        rec = bench_es_recorder(data, work)
    # read-back checks: all events of all games, the first game equal to its input
    want = expected[first_id]
    for name, res in (("rummyguard", rg), ("es-application", app), ("es-recorder", rec)):
        assert res["events_read"] == events, (name, res["events_read"], events)
        assert res["games"] == len(expected), name
        got = [{k: v for k, v in e.items() if k not in ("prev_hash", "hash")} for e in res.pop("sample")]
        assert got == [{k: v for k, v in e.items() if k not in ("prev_hash", "hash")} for e in want], name
    assert rg["events_read_batched"] == events

    def rate(s: float) -> float:
        return round(events / s, 1)

    out = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "eventsourcing": eventsourcing.__version__ if hasattr(eventsourcing, "__version__")
                    else _dist_version("eventsourcing"), "duckdb": _dist_version("duckdb"),
                    "sqlite": __import__("sqlite3").sqlite_version, "load": round(os.getloadavg()[0], 2)},
        "command": "python -m benchmarks.bench_eventsourcing " + " ".join(sys.argv[1:] if argv is None else argv),
        "games": len(expected), "events": events, "mb": round(len(data) / 2**20, 1),
        "rummyguard": {"write_s": round(rg["write_s"], 2), "write_ev_s": rate(rg["write_s"]),
                       "read_each_s": round(rg["read_s"], 2), "read_each_ev_s": rate(rg["read_s"]),
                       "read_batched_s": round(rg["read_batched_s"], 2),
                       "read_batched_ev_s": rate(rg["read_batched_s"]), "file_mb": round(rg["file_mb"], 1)},
    }
    for name, res in (("es_application", app), ("es_recorder", rec)):
        out[name] = {"write_s": round(res["write_s"], 2), "write_ev_s": rate(res["write_s"]),
                     "read_s": round(res["read_s"], 2), "read_ev_s": rate(res["read_s"]),
                     "file_mb": round(res["file_mb"], 1),
                     # > 1: rummyguard is faster by that factor; < 1: slower
                     "write_ratio": round(res["write_s"] / rg["write_s"], 2),
                     "read_ratio_each": round(res["read_s"] / rg["read_s"], 2),
                     "read_ratio_batched": round(res["read_s"] / rg["read_batched_s"], 2)}
    print(json.dumps(out))


def _dist_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


if __name__ == "__main__":
    main()
