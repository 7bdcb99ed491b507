"""The built-in model's collusion groups on a world whose facts are fixed: the groups found at
the scan's threshold and the group PR-AUC (``fraud.evaluate.ring_metrics``), as JSON.

Session 22 added the group PR-AUC to ``rummyguard eval``; this prints it for a world scored
earlier without re-running the whole evaluation (same model, same scores).
Usage: ``python benchmarks/detection/group_pr_auc.py FACTS_DIR LABELS.json``
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import duckdb

from rummyguard.fraud.builtin import fit_builtin
from rummyguard.fraud.evaluate import World, ring_metrics
from rummyguard.fraud.facts import read_facts_folder
from rummyguard.fraud.features import pair_features, player_features
from rummyguard.fraud.labels import read_labels
from rummyguard.fraud.pipeline import memory_db


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("facts", type=Path, help="a facts folder (Parquet) of the world")
    ap.add_argument("labels", type=Path, help="the world's labels JSON")
    args = ap.parse_args()
    con = memory_db(read_facts_folder(args.facts))
    players, pairs = player_features(con), pair_features(con)
    con.close()
    _pscore, qscore = fit_builtin().predict(players, pairs)
    world = World(duckdb.connect(), players, pairs, read_labels(args.labels))
    print(json.dumps(ring_metrics(world, qscore), indent=2))


if __name__ == "__main__":
    main()
