"""Replay + verify throughput beside the parse floor, on one core, per variant.

For each variant: N games are generated once with the platform driver (seeded; cached
under benchmarks/_work/), producer-chained, written as JSONL. Then, in one process:

- ``parse``: read the file and ``orjson.loads`` every line (the floor);
- ``replay_verify``: read, parse, group by game and :func:`replay` every game with hash
  checks on (what ``rummyguard verify FILES`` does per game, minus printing).

Prints one JSON document; ``--record`` appends a row to benchmarks/RESULTS.md.
Usage: ``python -m benchmarks.bench_replay [--games 10000] [--variants classic,r500]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import orjson

from rummyguard.events.hashing import chain
from rummyguard.replay.engine import replay
from rummyguard.replay.variant import variant_class
from rummyguard.sim.driver import play

WORK = Path(__file__).parent / "_work"
#: (fewest, most) players seated in the corpus per variant, within each variant's limits
SEATS = {"classic": (2, 4), "r500": (2, 4), "liverpool": (2, 5), "michigan": (3, 5)}
RULES: dict[str, dict[str, Any]] = {"r500": {"mode": "rounds", "rounds": 2}}


def corpus(variant: str, games: int) -> Path:
    """The benchmark's input file for a variant (generated once, then reused)."""
    WORK.mkdir(exist_ok=True)
    path = WORK / f"replay-{variant}-{games}.jsonl"
    if path.exists():
        return path
    tmp = path.with_suffix(".tmp")
    with tmp.open("wb") as out:
        for g in range(games):
            low, high = SEATS[variant]
            n = low + g % (high - low + 1)
            seats = [f"{variant[:2]}{g % 997}-{i}" for i in range(n)]
            events = play(variant, seats, seed=g, game_id=f"{variant}-{g:06d}", max_events=400,
                          rules=RULES.get(variant, {}))
            out.write(b"".join(orjson.dumps(e) + b"\n" for e in chain(events)))
    tmp.rename(path)
    return path


def measure(path: Path) -> dict[str, Any]:
    start = time.perf_counter()
    with path.open("rb") as f:
        n = sum(1 for line in f if orjson.loads(line))
    parse_s = time.perf_counter() - start

    start = time.perf_counter()
    games: dict[str, list[dict[str, Any]]] = {}
    with path.open("rb") as f:
        for line in f:
            event = orjson.loads(line)
            games.setdefault(event["game_id"], []).append(event)
    dirty = sum(1 for events in games.values() if not replay(events).clean)
    replay_s = time.perf_counter() - start
    return {
        "events": n,
        "games": len(games),
        "games_with_findings": dirty,
        "parse_s": round(parse_s, 3),
        "replay_verify_s": round(replay_s, 3),
        "parse_events_per_s": round(n / parse_s),
        "replay_events_per_s": round(n / replay_s),
        "replay_games_per_s": round(len(games) / replay_s),
        "ratio_to_parse": round(replay_s / parse_s, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10_000)
    ap.add_argument("--variants", default="classic,r500,liverpool,michigan")
    ap.add_argument("--record", action="store_true", help="append the figures to RESULTS.md")
    args = ap.parse_args()
    out: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "processor": _cpu_model()},
        "command": f"python -m benchmarks.bench_replay --games {args.games} --variants {args.variants}",
        "variants": {},
    }
    for variant in args.variants.split(","):
        if variant_class(variant) is None:
            out["variants"][variant] = {"skipped": "variant not implemented"}
            continue
        out["variants"][variant] = measure(corpus(variant, args.games))
    print(json.dumps(out, indent=2))
    if args.record:
        _record(out)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _record(out: dict[str, Any]) -> None:
    lines = [
        "",
        f"### Replay + verify, {time.strftime('%Y-%m-%d')}",
        "",
        f"Machine: {out['machine']['cpus']} cores, {out['machine']['processor']}, "
        f"Python {out['machine']['python']}; one process (one core). Command: `{out['command']}`.",
        "",
        "| variant | games | events | parse floor ev/s | replay+verify ev/s | games/s | ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for variant, r in out["variants"].items():
        if "skipped" in r:
            lines.append(f"| {variant} | - | - | - | - | - | {r['skipped']} |")
            continue
        lines.append(
            f"| {variant} | {r['games']} | {r['events']} | {r['parse_events_per_s']:,} | "
            f"{r['replay_events_per_s']:,} | {r['replay_games_per_s']:,} | {r['ratio_to_parse']}x |"
        )
    path = Path(__file__).parent / "RESULTS.md"
    with path.open("a") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
