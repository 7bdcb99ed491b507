"""Hidden-card contexts compared (DETECTION.md, session 29 and round 20): which next-seat
discards ``hc_lr`` reads, and how, scored on development worlds.

    python benchmarks/detection/hc_contexts.py --train FACTS_DIR:LABELS.json \
        --dev FACTS_DIR:LABELS.json [--dev ...]

For each way of reading the discards the shifts are fitted on the training world's acted
hidden-card cheaters (``models.hc_shifts``, as the supervised model does) and the ratio
(``models.hc_lr_of``) is ranked on each development world. Prints one JSON line per world:
hidden-card PR-AUC over all labelled cheaters and at moderate intensity (honest players
kept in both), per reading:

- ``one_z``: every next-seat discard as one z (``hc_all_z`` over ``n_next_disc``; to round 18);
- ``free_choices``: the free choices with a flat public record only (``hc_tie_z`` over
  ``hc_tie_n``; round 19);
- ``split``: the free choices and the other next-seat discards (``hc_oth_z`` over
  ``hc_oth_n``) as two contexts, each at its own shift (features version 14; round 20).

Stock draws and Michigan starts are read the same way in all three. The ratio depends on the
player table only, so this needs no model fit. Never point ``--dev`` at a world whose
figures are still to be reported as held out.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import polars as pl

import rummyguard.fraud.models as models
from rummyguard.fraud.evaluate import pr_auc
from rummyguard.fraud.facts import read_facts_folder
from rummyguard.fraud.features import player_features
from rummyguard.fraud.labels import read_labels
from rummyguard.fraud.pipeline import memory_db

MODERATE = (0.34, 0.67)  # fraud.evaluate's bins: low <= 0.34 < moderate <= 0.67 < high
_NOW = models.HC_COMPONENTS  # the split: what the model reads
READINGS: dict[str, dict[str, tuple[str, str, float]]] = {
    "one_z": {"stock": _NOW["stock"], "discards": ("hc_all_z", "n_next_disc", 0.24),
              "starts": _NOW["starts"]},
    "free_choices": {"stock": _NOW["stock"], "discards": _NOW["discards"], "starts": _NOW["starts"]},
    "split": dict(_NOW),
}


def _players(facts: str) -> pl.DataFrame:
    return player_features(memory_db(read_facts_folder(Path(facts))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", required=True, help="FACTS_DIR:LABELS.json")
    ap.add_argument("--dev", required=True, action="append", help="FACTS_DIR:LABELS.json")
    args = ap.parse_args()
    facts, labels = args.train.rsplit(":", 1)
    train, train_truth = _players(facts), read_labels(labels)
    cheaters = train_truth.player_pos["hidden_card"]
    saved = dict(models.HC_COMPONENTS), dict(models.HC_PRIOR_SHIFTS)
    try:
        for dev in args.dev:
            facts, labels = dev.rsplit(":", 1)
            players, truth = _players(facts), read_labels(labels)
            pos = truth.player_pos["hidden_card"]
            y = np.array([p in pos for p in players.get_column("player")])
            t = np.array([truth.player_intensity.get(("hidden_card", p), 0.0)
                          for p in players.get_column("player")])
            keep = ~y | ((t > MODERATE[0]) & (t <= MODERATE[1]))
            out: dict[str, object] = {"dev": facts, "cheaters": int(y.sum()),
                                      "moderate": int((y & keep).sum())}
            for name, comps in READINGS.items():
                # the module's tables drive hc_shifts / hc_lr_of; restored below
                models.HC_COMPONENTS = comps
                models.HC_PRIOR_SHIFTS = {k: v[2] for k, v in comps.items()}
                shifts = models.hc_shifts(train, cheaters)["shifts"]
                score = models.hc_lr_of(players, shifts)
                out[name] = {"all": round(pr_auc(y, score), 3),
                             "moderate": round(pr_auc(y[keep], score[keep]), 3),
                             "shifts": shifts}
            print(json.dumps(out), flush=True)
    finally:
        models.HC_COMPONENTS, models.HC_PRIOR_SHIFTS = saved


if __name__ == "__main__":
    main()
