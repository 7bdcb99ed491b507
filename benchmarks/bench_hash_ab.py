"""Where the hash check's time goes, in one process: the streaming replay + verify pass of
``bench_replay`` with the engine's per-event hash function swapped, alternating, best of N.

- ``copy``: :func:`event_hash` (hash a copy of the event without its ``hash`` member);
- ``in_place``: :func:`take_event_hash` (the member removed from the event itself: what
  ``verify FILES`` does, ``consume=True``);
- ``no_hash``: the claimed hash returned as is (the chain walk stays; no JCS, no SHA-256);
- ``rules_only``: ``verify_hashes=False``;
- ``parse``: the floor (read the file, ``orjson.loads`` every line).

Between processes the noise (±3 %) hides gains of this size; alternating passes in one
process does not. Prints one JSON document.
Usage: ``python -m benchmarks.bench_hash_ab [--games 10000] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from typing import Any

import orjson

from benchmarks.bench_replay import corpus
from rummyguard.events.gcpause import paused_gc
from rummyguard.events.hashing import event_hash, take_event_hash
from rummyguard.replay.engine import GameEngine

HashOf = Callable[[dict[str, Any]], str]


def _claimed(event: dict[str, Any]) -> str:
    return event["hash"]  # type: ignore[no-any-return]


def _pass(path: Any, hash_of: HashOf | None) -> float:
    """CPU seconds of one streaming pass (replay_interleaved's loop, with the engine's
    hash function set to ``hash_of``; None: no hash check)."""
    engines: dict[str, GameEngine] = {}
    gc.collect()
    with paused_gc(), path.open("rb") as f:
        t0 = time.process_time()
        for event in map(orjson.loads, f):
            engine = engines.get(event["game_id"])
            if engine is None:
                engine = engines[event["game_id"]] = GameEngine(verify_hashes=hash_of is not None)
                if hash_of is not None:
                    engine._hash_of = hash_of
            engine.apply(event)
        records = [e.record() for e in engines.values()]
        seconds = time.process_time() - t0
    assert all(r.clean for r in records)
    return seconds


def _parse(path: Any) -> float:
    gc.collect()
    with paused_gc(), path.open("rb") as f:
        t0 = time.process_time()
        for line in f:
            orjson.loads(line)
        return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    path = corpus("classic", args.games)
    passes: dict[str, Callable[[], float]] = {
        "parse": lambda: _parse(path),
        "copy": lambda: _pass(path, event_hash),
        "in_place": lambda: _pass(path, take_event_hash),
        "no_hash": lambda: _pass(path, _claimed),
        "rules_only": lambda: _pass(path, None),
    }
    runs: dict[str, list[float]] = {k: [] for k in passes}
    for _ in range(args.repeat):
        for name, run in passes.items():
            runs[name].append(round(run(), 3))
    best = {k: min(v) for k, v in runs.items()}
    print(json.dumps({
        "command": f"python -m benchmarks.bench_hash_ab --games {args.games} --repeat {args.repeat}",
        "cpu_seconds": runs, "best": best,
        "ratio_to_parse_best": {k: round(v / best["parse"], 2) for k, v in best.items()},
    }, indent=2))


if __name__ == "__main__":
    main()
