"""Round 17 A/B (DETECTION.md): the built-in model with and without identity-blind play
learners, scored on one world, and the figures over "strangers" (the pairs not labelled
multi-account, removed from both classes: every multi-account pair of a simulated world
is a card-feeding pair too, and shared devices find those).

    python benchmarks/detection/identity_blind_ab.py FACTS_DIR LABELS.json

Prints one JSON object. Both models are fitted here from the shipped bundle
(fraud/builtin), as ``rummyguard scan --model builtin`` fits it.
"""
import sys
from pathlib import Path

import numpy as np
import orjson
import polars as pl

import rummyguard.fraud.models as models
from rummyguard.fraud.builtin import fit_builtin
from rummyguard.fraud.evaluate import _strangers, metrics
from rummyguard.fraud.facts import read_facts_folder
from rummyguard.fraud.features import pair_features, player_features
from rummyguard.fraud.labels import read_labels
from rummyguard.fraud.pipeline import memory_db

PAIR = models.PAIR_MECHANISMS


def figures(qs: pl.DataFrame, truth, boots: int = 200) -> dict:
    """The one class (all, and at moderate intensity) and each pair mechanism, over all
    pairs and over strangers (fraud.evaluate's view: multi-account pairs removed)."""
    keys = list(zip(qs["p1"].to_list(), qs["p2"].to_list(), strict=True))
    pos = set().union(*(truth.pair_pos.get(m, set()) for m in PAIR))
    inten: dict = {}
    for (m, k), v in truth.pair_intensity.items():
        if m in PAIR:
            inten[k] = max(inten.get(k, 0.0), v)
    y = np.array([k in pos for k in keys])
    moderate = ~y | np.array([0.34 <= inten.get(k, 0.0) <= 0.67 for k in keys])
    mod_keys = [k for k, keep in zip(keys, moderate, strict=True) if keep]
    top = qs.select(pl.max_horizontal(list(PAIR))).to_series().to_numpy()
    every = {"one_class": metrics(y, top, boots),
             "one_class_moderate": metrics(y[moderate], top[moderate], boots)}
    strangers = {"one_class": _strangers(keys, y, top, truth, boots),
                 "one_class_moderate": _strangers(mod_keys, y[moderate], top[moderate], truth, boots)}
    for m in PAIR:
        ym = np.array([k in truth.pair_pos.get(m, set()) for k in keys])
        every[m] = metrics(ym, qs[m].to_numpy(), boots)
        if m != "multi_account":
            strangers[m] = _strangers(keys, ym, qs[m].to_numpy(), truth, boots)
    return {name: {k: {x: v[x] for x in ("positives", "pr_auc", "pr_auc_ci", "p_at_50")}
                   for k, v in e.items()}
            for name, e in (("all pairs", every), ("strangers", strangers))}


def main() -> None:
    folder, labels = Path(sys.argv[1]), sys.argv[2]
    truth = read_labels(labels)
    con = memory_db(read_facts_folder(folder))
    players, pairs = player_features(con), pair_features(con)
    report = {}
    blind_model = fit_builtin()
    report["identity-blind (session 21)"] = figures(blind_model.predict(players, pairs)[1], truth)
    # the learners as before session 21: every learner reads every column, and card
    # feeding's signature includes shared_devices
    models.IDENTITY_BLIND = frozenset()
    models.SIGNATURES["card_feeding"] = (*models.SIGNATURES["card_feeding"], "shared_devices")
    seeing_model = fit_builtin()
    report["reading identifiers (before)"] = figures(seeing_model.predict(players, pairs)[1], truth)
    sys.stdout.write(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode() + "\n")


if __name__ == "__main__":
    main()
