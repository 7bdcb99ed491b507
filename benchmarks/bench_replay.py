"""Replay + verify throughput beside the parse floor, on one core, per variant.

For each variant: a world of N games is simulated once (seeded; cached under
benchmarks/_work/), producer-chained, written as JSONL. Then, in one process:

- ``parse``: read the file and ``orjson.loads`` every line (the floor);
- ``replay_verify``: read, parse and replay every game in one streaming pass
  (:func:`replay_interleaved`: each event to its game's engine as it is read) with hash
  checks on: every event re-hashed (JCS + SHA-256), the chain walked, every rule and
  claim checked (the replay + verify work of ``rummyguard verify FILES``, less the
  validation of each line against the event models); as there, the parsed events are
  given up to the replay (``consume``: each one is hashed without a copy);
- ``rules_only``: the same pass with ``verify_hashes=False`` (the store's case: chains
  were checked at ingest and are re-checked by ``verify-log``); parsing included;
- ``verify_files``: ``rummyguard verify FILES`` end to end minus printing
  (:func:`verify_files`): the above plus validating every line against the event models
  and the CL-NEXT cross-game check.

Every pass reports wall and CPU seconds of this process: on a shared machine other
jobs inflate the wall figure, not the CPU one; ratios are taken within the same run.

The engine runs as installed: compiled by mypyc (setup.py) when the build worked, else
plain Python; ``engine`` in the JSON says which. ``RUMMYGUARD_PURE=1`` measures the
plain-Python sources of the same checkout (``--record`` notes it in the row).

Prints one JSON document; ``--record`` appends a row to benchmarks/RESULTS.md.
Usage: ``python -m benchmarks.bench_replay [--games 10000] [--variants classic,r500] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import orjson

from benchmarks._machine import cpu_model
from rummyguard import _compiled
from rummyguard.events.gcpause import paused_gc
from rummyguard.replay.engine import replay_interleaved
from rummyguard.replay.variant import variant_class
from rummyguard.replay.verify import verify_files

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


class _Clock:
    """Wall and CPU seconds of a block (CPU: this process only, so a busy machine's other
    jobs inflate the wall figure but not the CPU one)."""

    def __enter__(self) -> _Clock:
        self.wall0, self.cpu0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall0
        self.cpu = time.process_time() - self.cpu0


def _stream(path: Path, verify_hashes: bool) -> dict[str, Any]:
    with path.open("rb") as f:
        return replay_interleaved(map(orjson.loads, f), verify_hashes=verify_hashes,
                                  consume=True)


def measure(path: Path, repeat: int = 1) -> dict[str, Any]:
    """The passes, each under the GC setting ``rummyguard verify`` uses (the cyclic
    collector paused for bulk work: events/gcpause.py); each pass alone in memory.

    With ``repeat`` > 1 the parse, replay + verify and rules-only passes run that many
    rounds, alternating, and each pass's fastest round counts (the machine's noise only
    ever adds time; alternating gives the passes the same conditions); every round's
    CPU seconds are in ``rounds``."""
    parses: list[_Clock] = []
    fulls: list[_Clock] = []
    ruless: list[_Clock] = []
    for _ in range(repeat):
        gc.collect()
        with paused_gc(), _Clock() as clock, path.open("rb") as f:
            n = sum(1 for line in f if orjson.loads(line))
        parses.append(clock)

        gc.collect()
        with paused_gc(), _Clock() as clock:
            records = _stream(path, verify_hashes=True)
        fulls.append(clock)
        n_games = len(records)
        dirty = sum(1 for r in records.values() if not r.clean)
        del records

        gc.collect()
        with paused_gc(), _Clock() as clock:  # the store's case: chains verified at ingest
            records = _stream(path, verify_hashes=False)
        ruless.append(clock)
        del records
    parse, full, rules = (min(clocks, key=lambda c: c.cpu) for clocks in (parses, fulls, ruless))

    gc.collect()
    with _Clock() as files:
        run = verify_files([path])
    assert len(run.records) == n_games
    del run

    def rate(seconds: float) -> int:
        return round(n / seconds)

    return {
        "events": n,
        "games": n_games,
        "replay_games_per_s": round(n_games / full.wall),
        "replay_games_per_cpu_s": round(n_games / full.cpu),
        "games_with_findings": dirty,
        "parse_s": round(parse.wall, 3), "parse_cpu_s": round(parse.cpu, 3),
        "replay_verify_s": round(full.wall, 3), "replay_verify_cpu_s": round(full.cpu, 3),
        "parse_events_per_s": rate(parse.wall), "parse_events_per_cpu_s": rate(parse.cpu),
        "replay_events_per_s": rate(full.wall), "replay_events_per_cpu_s": rate(full.cpu),
        "ratio_to_parse": round(full.wall / parse.wall, 2),
        "ratio_to_parse_cpu": round(full.cpu / parse.cpu, 2),
        "rules_only_events_per_s": rate(rules.wall),
        "rules_only_events_per_cpu_s": rate(rules.cpu),
        "rules_only_ratio_cpu": round(rules.cpu / parse.cpu, 2),
        "verify_files_events_per_cpu_s": rate(files.cpu),
        "verify_files_ratio_cpu": round(files.cpu / parse.cpu, 2),
        "rounds": {name: [round(c.cpu, 3) for c in clocks]
                   for name, clocks in (("parse", parses), ("replay_verify", fulls),
                                        ("rules_only", ruless))},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10_000)
    ap.add_argument("--variants", default="classic,r500,liverpool,michigan")
    ap.add_argument("--repeat", type=int, default=3,
                    help="rounds of the alternating passes; the fastest of each counts")
    ap.add_argument("--record", action="store_true", help="append the figures to RESULTS.md")
    args = ap.parse_args()
    out: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "processor": cpu_model()},
        "command": f"python -m benchmarks.bench_replay --games {args.games} --variants {args.variants}"
                   f" --repeat {args.repeat}",
        "engine": _compiled.STATUS,
        "variants": {},
    }
    for variant in args.variants.split(","):
        if variant_class(variant) is None:
            out["variants"][variant] = {"skipped": "variant not implemented"}
            continue
        out["variants"][variant] = measure(corpus(variant, args.games), args.repeat)
    print(json.dumps(out, indent=2))
    if args.record:
        _record(out)


def _record(out: dict[str, Any]) -> None:
    lines = [
        "",
        f"### Replay + verify, {time.strftime('%Y-%m-%d')}",
        "",
        f"Machine: {out['machine']['cpus']} cores, {out['machine']['processor']}, "
        f"Python {out['machine']['python']}; one process (one core). Command: `{out['command']}`. "
        f"Engine: {out['engine']}.",
        "",
        "Rates per CPU second of the process (wall-clock rates in the JSON), each pass's "
        "fastest of the alternating rounds; ratios to the parse floor in CPU time, same run.",
        "",
        "| variant | games | events | parse floor ev/s | replay + verify (re-hash) ev/s | games/s | "
        "ratio | rules only (parse incl.) ev/s | ratio | `verify FILES` ev/s | ratio |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for variant, r in out["variants"].items():
        if "skipped" in r:
            lines.append(f"| {variant} | {r['skipped']} |")
            continue
        lines.append(
            f"| {variant} | {r['games']:,} | {r['events']:,} | {r['parse_events_per_cpu_s']:,} | "
            f"{r['replay_events_per_cpu_s']:,} | {r['replay_games_per_cpu_s']:,} | "
            f"{r['ratio_to_parse_cpu']}x | {r['rules_only_events_per_cpu_s']:,} | "
            f"{r['rules_only_ratio_cpu']}x | {r['verify_files_events_per_cpu_s']:,} | "
            f"{r['verify_files_ratio_cpu']}x |"
        )
    path = Path(__file__).parent / "RESULTS.md"
    with path.open("a") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
