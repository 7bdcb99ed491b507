"""Replay a world's JSONL into fact tables (Parquet), reading no labels and scoring nothing.

Used to fix a held-out world's facts *before* any detector change, so that the single
held-out evaluation later starts from them (``rummyguard eval --test DIR``).
Usage: ``python benchmarks/detection/facts_only.py WORLD.jsonl OUT_DIR [--workers 2]``.
"""

from __future__ import annotations

import argparse

from rummyguard.fraud.pipeline import jsonl_game_batches, run_facts, write_parquet


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("world")
    ap.add_argument("out")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    total, batches = jsonl_game_batches([args.world])
    write_parquet(run_facts(batches, workers=args.workers if total > 400 else 0), args.out)
    print(f"{total} games -> {args.out}")


if __name__ == "__main__":  # the facts pool spawns processes that re-import this file
    main()
