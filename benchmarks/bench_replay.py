"""Replay + verify throughput beside the parse floor, on one core, per variant.

For each variant: a world of N games is simulated once (seeded; cached under
benchmarks/_work/), producer-chained, written as JSONL. Then, in one process:

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

from rummyguard.replay.engine import replay
from rummyguard.replay.variant import variant_class

WORK = Path(__file__).parent / "_work"


def corpus(variant: str, games: int) -> Path:
    """The benchmark's input for a variant: a simulated world of that variant (seeded,
    producer-chained, 2% planted fraud and no faults), generated once and then reused."""
    WORK.mkdir(exist_ok=True)
    path = WORK / f"replay-{variant}-{games}.jsonl"
    if path.exists():
        return path
    from rummyguard.sim.world import WorldConfig, build_world, run_world

    tmp = path.with_suffix(".tmp")
    config = WorldConfig(games=games, seed=11, variants=(variant,), workers=os.cpu_count() or 1)
    with tmp.open("wb") as out:
        run_world(build_world(config), out.write)
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

    start = time.perf_counter()  # the store's case: chains were verified at ingest
    for events in games.values():
        replay(events, verify_hashes=False)
    rules_only_s = time.perf_counter() - start
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
        "rules_only_events_per_s": round(n / rules_only_s),
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
        "| variant | games | events | parse floor ev/s | parse+replay+verify ev/s | games/s | ratio to floor | replay only, no re-hash ev/s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for variant, r in out["variants"].items():
        if "skipped" in r:
            lines.append(f"| {variant} | - | - | - | - | - | - | {r['skipped']} |")
            continue
        lines.append(
            f"| {variant} | {r['games']} | {r['events']} | {r['parse_events_per_s']:,} | "
            f"{r['replay_events_per_s']:,} | {r['replay_games_per_s']:,} | {r['ratio_to_parse']}x | "
            f"{r['rules_only_events_per_s']:,} |"
        )
    path = Path(__file__).parent / "RESULTS.md"
    with path.open("a") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
