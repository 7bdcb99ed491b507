"""Build the built-in model's training data (fraud/builtin/) from a simulated world.

The bundle is the player and pair feature tables of one training world plus its acted
positives (fraud/builtin.py explains why data ships and not a pickled model). Default: the
training world of DETECTION.md rounds 6-11 (seed 1101, 16,000 games, 3,200 accounts, 6 %
fraud, classic + Rummy 500 + Michigan), simulated and replayed to facts unless given.

    python benchmarks/detection/build_builtin.py [--facts DIR --labels FILE] [--out fraud/builtin]

With ``--facts``/``--labels`` (e.g. benchmarks/_work/eval/facts_v3dev/train and
train_v3.labels.json, written by round6.sh) nothing is simulated. The output is
deterministic for a given world and code: the tables are sorted by their keys.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import orjson

from rummyguard.fraud.builtin import BUNDLE
from rummyguard.fraud.evaluate import World, seating, training_cases
from rummyguard.fraud.facts import FactsFolderError, read_facts_folder
from rummyguard.fraud.features import FEATURES_VERSION
from rummyguard.fraud.labels import read_labels
from rummyguard.fraud.pipeline import jsonl_game_batches, memory_db, run_facts

#: the training world of DETECTION.md rounds 6-11 (round6.sh's train_v3 parameters)
WORLD = {"games": 16_000, "seed": 1101, "fraud_rate": 0.06, "players": 3200,
         "variants": ["classic", "r500", "michigan"]}


def simulate(work: Path, workers: int) -> tuple[dict, Path]:
    """Simulate the default training world into ``work``; returns (facts tables, labels)."""
    from rummyguard.sim.world import WorldConfig, build_world, dumps_labels, run_world

    config = WorldConfig(games=WORLD["games"], seed=WORLD["seed"], fraud_rate=WORLD["fraud_rate"],
                         variants=tuple(WORLD["variants"]), workers=workers,
                         players=WORLD["players"])
    log, labels = work / "train.jsonl", work / "train.labels.json"
    with log.open("wb") as out:
        doc = run_world(build_world(config), out.write)
    labels.write_bytes(dumps_labels(doc))
    _total, batches = jsonl_game_batches([log])
    return run_facts(batches, workers=workers), labels


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--facts", type=Path, help="a facts folder (Parquet) of the training world")
    ap.add_argument("--labels", type=Path, help="the training world's labels JSON")
    ap.add_argument("--out", type=Path, default=BUNDLE)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="rg-builtin-") as tmp:
        if args.facts is not None:
            if args.labels is None:
                ap.error("--facts needs --labels")
            try:
                tables = read_facts_folder(args.facts)
            except FactsFolderError as exc:
                ap.error(str(exc))
            labels = args.labels
        else:
            tables, labels = simulate(Path(tmp), args.workers)
        truth = read_labels(labels)
        simulated = orjson.loads(labels.read_bytes()).get("args", {})  # the world's parameters
        world = World.from_con(memory_db(tables), truth)
        cases = training_cases(truth, seating(world.con))
    args.out.mkdir(parents=True, exist_ok=True)
    players = world.players.sort("player")
    pairs = world.pairs.sort(["p1", "p2"])
    players.write_parquet(args.out / "players.parquet", compression="zstd", compression_level=19)
    pairs.write_parquet(args.out / "pairs.parquet", compression="zstd", compression_level=19)
    meta = {
        "features_version": FEATURES_VERSION,
        "world": {"simulated": simulated, "players": players.height, "pairs": pairs.height,
                  "labelled_accounts": len(truth.fraud_players())},
        "player_pos": {m: sorted(v) for m, v in sorted(cases["player_pos"].items())},
        "pair_pos": {m: sorted(v) for m, v in sorted(cases["pair_pos"].items())},
        "ignore_players": sorted(cases["ignore_players"]),
        "ignore_pairs": sorted(cases["ignore_pairs"]),
    }
    (args.out / "training.json").write_bytes(
        orjson.dumps(meta, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    print(f"{players.height} players, {pairs.height} pairs -> {args.out}")


if __name__ == "__main__":  # the facts pool spawns processes that re-import this file
    main()
