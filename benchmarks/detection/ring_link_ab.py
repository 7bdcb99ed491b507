"""Round 16 A/B (DETECTION.md): the one-class collusion figure with and without the ring link.

    python benchmarks/detection/ring_link_ab.py FACTS_DIR LABELS.json
"""
import sys
from pathlib import Path

import numpy as np
import polars as pl
from threadpoolctl import threadpool_limits

from rummyguard.fraud.builtin import builtin_model
from rummyguard.fraud.evaluate import pr_auc, precision_at
from rummyguard.fraud.facts import read_facts_folder
from rummyguard.fraud.features import pair_features, player_features
from rummyguard.fraud.labels import read_labels
from rummyguard.fraud.models import PAIR_MECHANISMS, pair_frame, to_matrix
from rummyguard.fraud.pipeline import memory_db
from rummyguard.fraud.rings import close_pair_scores

folder, labels = Path(sys.argv[1]), sys.argv[2]
truth = read_labels(labels)
con = memory_db(read_facts_folder(folder))
players, pairs = player_features(con), pair_features(con)
model = builtin_model()
pf = pair_frame(pairs, players)
xq = to_matrix(pf, model.pair_features)
with threadpool_limits(limits=1):
    raw = pl.DataFrame({"p1": pf["p1"], "p2": pf["p2"], **{m: model.supervised[m].predict_proba(xq)[:, 1] for m in PAIR_MECHANISMS}})
closed = close_pair_scores(raw, PAIR_MECHANISMS)
pos = set().union(*(truth.pair_pos.get(m, set()) for m in PAIR_MECHANISMS))
inten = {}
for (m, k), v in truth.pair_intensity.items():
    if m in PAIR_MECHANISMS:
        inten[k] = max(inten.get(k, 0), v)
keys = list(zip(raw["p1"], raw["p2"], strict=False))
y = np.array([k in pos for k in keys])
mod = np.array([0.34 <= inten.get(k, 0) <= 0.67 for k in keys])
for name, df in (("without ring link", raw), ("with ring link", closed)):
    s = df.select(pl.max_horizontal(list(PAIR_MECHANISMS))).to_series().to_numpy()
    m = ~y | mod
    per = {mm: pr_auc(np.array([k in truth.pair_pos.get(mm, set()) for k in keys]), df[mm].to_numpy()) for mm in PAIR_MECHANISMS}
    print(f"{name:18s} one-class PR-AUC {pr_auc(y, s):.3f} P@50 {precision_at(y, s, 50):.2f} moderate {pr_auc(y[m], s[m]):.3f} P@50 {precision_at(y[m], s[m], 50):.2f} | " + " ".join(f"{k} {v:.3f}" for k, v in per.items()))
print("pairs whose score is a ring link:", closed.filter(pl.col("ring_via").is_not_null()).height,
      "of them labelled:", sum(1 for a, b in closed.filter(pl.col("ring_via").is_not_null()).select("p1", "p2").iter_rows() if (a, b) in pos),
      "; at >= 0.5:", closed.filter(pl.col("ring_link") >= 0.5).height)
