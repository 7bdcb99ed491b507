"""A development probe (DETECTION.md, session 26): fit the model on one or more training
worlds, score a *development* world, print the figures issue 8 targets as one JSON line.

    python benchmarks/detection/dev_probe.py --train FACTS_DIR:LABELS.json [--train ...] \
        --dev FACTS_DIR:LABELS.json [--cache DIR] [--force MECH=LEARNER ...] \
        [--pair-only MECH,...] [--misses MECH]

Never point ``--dev`` at a world whose figures are still to be reported as held out: a
world scored here is a development world from then on (a held-out round takes a fresh
seed). Several ``--train`` worlds are pooled, their account ids prefixed by the world's
index so that two worlds' accounts never merge. ``--force`` fixes a mechanism's learner
(``boosting``, ``logistic``, ``signature``, ``pooled``) instead of the cross-validated
choice; ``--pair-only`` restricts the named identity-blind pair learners to the pair
columns (no member features). ``--misses`` adds, per labelled subject of that mechanism,
its score, its intensity, and how many subjects labelled for no mechanism score above it.
Feature tables are cached under ``--cache`` (keyed by the facts folder's path).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import rummyguard.fraud.models as models
from rummyguard.fraud.evaluate import pr_auc, precision_at, seating, training_cases
from rummyguard.fraud.facts import read_facts_folder
from rummyguard.fraud.features import PAIR_FEATURES, pair_features, player_features
from rummyguard.fraud.labels import Truth, read_labels
from rummyguard.fraud.pipeline import memory_db

PAIR = models.PAIR_MECHANISMS
MODERATE = (0.34, 0.67)  # fraud.evaluate's bins: low <= 0.34 < moderate <= 0.67 < high


def load(spec: str, cache: Path | None) -> tuple[pl.DataFrame, pl.DataFrame, Truth, dict[str, set[str]]]:
    facts, labels = spec.rsplit(":", 1)
    truth = read_labels(labels)
    key = hashlib.sha256(str(Path(facts).resolve()).encode()).hexdigest()[:16]
    files = [cache / f"{key}.{n}.parquet" for n in ("players", "pairs", "seats")] if cache else []
    if files and all(f.exists() for f in files):
        players, pairs, seats_df = (pl.read_parquet(f) for f in files)
    else:
        con = memory_db(read_facts_folder(Path(facts)))
        players, pairs = player_features(con), pair_features(con)
        seats_df = pl.DataFrame(
            [(g, p) for g, ps in sorted(seating(con).items()) for p in sorted(ps)],
            schema=["game_id", "player"], orient="row")
        if cache:
            cache.mkdir(parents=True, exist_ok=True)
            for df, f in zip((players, pairs, seats_df), files, strict=True):
                df.write_parquet(f)
    seats: dict[str, set[str]] = {}
    for g, p in seats_df.iter_rows():
        seats.setdefault(g, set()).add(p)
    return players, pairs, truth, seats


def pooled_training(specs: list[str], cache: Path | None) -> dict[str, Any]:
    """The training worlds' tables and acted cases (fraud.evaluate.fit_on_world's rule)."""
    frames_p, frames_q = [], []
    ppos: dict[str, set[str]] = {}
    qpos: dict[str, set[tuple[str, str]]] = {}
    ign_p: set[str] = set()
    ign_q: set[tuple[str, str]] = set()
    for i, spec in enumerate(specs):
        players, pairs, truth, seats = load(spec, cache)
        cases = training_cases(truth, seats)
        tag = f"w{i}:" if len(specs) > 1 else ""
        frames_p.append(players.with_columns(pl.concat_str(pl.lit(tag), "player").alias("player")))
        frames_q.append(pairs.with_columns(pl.concat_str(pl.lit(tag), c).alias(c) for c in ("p1", "p2")))
        for m, v in cases["player_pos"].items():
            ppos.setdefault(m, set()).update(tag + p for p in v)
        for m, v in cases["pair_pos"].items():
            qpos.setdefault(m, set()).update((tag + a, tag + b) for a, b in v)
        ign_p |= {tag + p for p in cases["ignore_players"]}
        ign_q |= {(tag + a, tag + b) for a, b in cases["ignore_pairs"]}
    return {"players": pl.concat(frames_p, how="diagonal_relaxed"),
            "pairs": pl.concat(frames_q, how="diagonal_relaxed"),
            "player_pos": ppos, "pair_pos": qpos, "ignore_players": ign_p, "ignore_pairs": ign_q}


def patch_learners(force: dict[str, str], pair_only: set[str]) -> None:
    """``--force`` / ``--pair-only``: wrap FraudModel._fit_one for this process only."""
    original = models.FraudModel._fit_one

    def fit_one(self: models.FraudModel, name: str, x: np.ndarray, y: np.ndarray,
                signature: list[int] | None = None, pooled: list[int] | None = None,
                pooled_fixed: bool = True, reads: list[int] | None = None) -> None:
        if name in pair_only and reads is not None:
            reads = [i for i in reads if self.pair_features[i] in PAIR_FEATURES]
        if name in force:
            learner = force[name]
            columns = {"signature": signature, "pooled": pooled, "boosting": reads, "logistic": reads}
            n_pos = int(y.sum())
            self.trained_on[name] = {"positives": n_pos, "rows": len(y), "learner": f"{learner} (forced)"}
            self.supervised[name] = models._classifier(n_pos, learner, columns.get(learner)).fit(x, y)
            return
        original(self, name, x, y, signature, pooled, pooled_fixed, reads)

    models.FraudModel._fit_one = fit_one  # type: ignore[method-assign]


def _column(df: pl.DataFrame, name: str) -> np.ndarray:
    """A score column; a mechanism the fit gave no model (under 2 positives) scores 0."""
    if name not in df.columns:
        return np.zeros(df.height)
    return df.get_column(name).fill_null(0).to_numpy()


def _ap(y: np.ndarray, s: np.ndarray) -> float | None:
    return round(float(pr_auc(y, s)), 3) if y.any() else None


def figures(ps: pl.DataFrame, qs: pl.DataFrame, truth: Truth) -> dict[str, float | None]:
    """Issue 8's figures on the development world (None: no positive to rank)."""
    out: dict[str, float | None] = {}
    keys = list(zip(qs["p1"].to_list(), qs["p2"].to_list(), strict=True))
    pos = set().union(*(truth.pair_pos.get(m, set()) for m in PAIR))
    inten: dict[tuple[str, str], float] = {}
    for (m, k), v in truth.pair_intensity.items():
        if m in PAIR:
            inten[k] = max(inten.get(k, 0.0), v)
    y = np.array([k in pos for k in keys], dtype=bool)
    mod = ~y | np.array([MODERATE[0] < inten.get(k, 0.0) <= MODERATE[1] for k in keys], dtype=bool)
    top = np.max(np.vstack([_column(qs, m) for m in PAIR]), axis=0) if len(keys) else np.zeros(0)
    out["one_class"], out["one_class_moderate"] = _ap(y, top), _ap(y[mod], top[mod])
    out["p_at_50"] = round(precision_at(y, top, 50), 3) if y.any() else None
    out["p_at_50_moderate"] = round(precision_at(y[mod], top[mod], 50), 3) if y[mod].any() else None
    for m in PAIR:
        out[m] = _ap(np.array([k in truth.pair_pos.get(m, set()) for k in keys], dtype=bool),
                     _column(qs, m))
    players = ps["player"].to_list()
    for m in ("bot", "hidden_card", "timeout_abuse"):
        ym = np.array([p in truth.player_pos.get(m, set()) for p in players], dtype=bool)
        s = _column(ps, m)
        im = np.array([truth.player_intensity.get((m, p), 0.0) for p in players])
        keep = ~ym | ((im > MODERATE[0]) & (im <= MODERATE[1]))
        out[m], out[f"{m}_moderate"] = _ap(ym, s), _ap(ym[keep], s[keep])
    return out


def misses(mech: str, ps: pl.DataFrame, qs: pl.DataFrame, players: pl.DataFrame,
           pairs: pl.DataFrame, truth: Truth) -> list[dict[str, Any]]:
    """Each labelled subject of ``mech``: score, intensity, the unlabelled subjects above
    it (accounts labelled for no mechanism; pairs of two such accounts), and its evidence
    columns (the mechanism's signature)."""
    labelled = truth.fraud_players() | {p for v in truth.pair_pos.values() for k in v for p in k}
    if mech not in (qs.columns if mech in PAIR else ps.columns):
        return []  # no model for it (fewer than 2 training positives)
    if mech in PAIR:
        key, scored, feats = ["p1", "p2"], qs.select("p1", "p2", mech), pairs
        honest = scored.filter(~pl.col("p1").is_in(sorted(labelled)) & ~pl.col("p2").is_in(sorted(labelled)))
        mine = scored.filter(pl.struct("p1", "p2").is_in(
            [{"p1": a, "p2": b} for a, b in sorted(truth.pair_pos.get(mech, set()))]))
    else:
        key, scored, feats = ["player"], ps.select("player", mech), players
        honest = scored.filter(~pl.col("player").is_in(sorted(labelled)))
        mine = scored.filter(pl.col("player").is_in(sorted(truth.player_pos.get(mech, set()))))
    neg = np.sort(honest[mech].fill_null(0).to_numpy())
    cols = [c for c in models.SIGNATURES[mech] if c in feats.columns]
    rows = []
    for r in mine.join(feats.select(*key, *cols), on=key, how="left").iter_rows(named=True):
        s = r[mech] or 0.0
        if mech in PAIR:
            intensity = truth.pair_intensity.get((mech, (r["p1"], r["p2"])), 0.0)
        else:
            intensity = truth.player_intensity.get((mech, r["player"]), 0.0)
        rows.append({"score": round(s, 4), "intensity": round(intensity, 2),
                     "unlabelled_above": int(len(neg) - np.searchsorted(neg, s, side="right")),
                     **{c: (round(r[c], 2) if isinstance(r[c], float) else r[c]) for c in cols}})
    return sorted(rows, key=lambda d: d["unlabelled_above"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", action="append", required=True, help="FACTS_DIR:LABELS.json")
    ap.add_argument("--dev", required=True, help="FACTS_DIR:LABELS.json of a development world")
    ap.add_argument("--cache", type=Path)
    ap.add_argument("--force", action="append", default=[], help="MECH=LEARNER")
    ap.add_argument("--pair-only", default="", help="MECH,... (identity-blind pair learners)")
    ap.add_argument("--misses", help="a mechanism: list its labelled subjects' ranks")
    args = ap.parse_args()
    patch_learners(dict(f.split("=", 1) for f in args.force),
                   {m for m in args.pair_only.split(",") if m})
    train = pooled_training(args.train, args.cache)
    started = time.perf_counter()
    model = models.FraudModel().fit(train["players"], train["pairs"], train["player_pos"],
                                    train["pair_pos"], ignore_players=train["ignore_players"],
                                    ignore_pairs=train["ignore_pairs"])
    fit_s = time.perf_counter() - started
    players, pairs, truth, _seats = load(args.dev, args.cache)
    ps, qs = model.predict(players, pairs)
    out: dict[str, Any] = {
        "train": args.train, "dev": args.dev, "force": args.force, "pair_only": args.pair_only,
        "fit_s": round(fit_s, 1), **figures(ps, qs, truth),
        "learners": {k: v.get("learner") for k, v in model.trained_on.items()
                     if isinstance(v, dict) and "learner" in v},
        "positives": {k: v.get("positives") for k, v in model.trained_on.items()
                      if isinstance(v, dict) and "positives" in v},
    }
    if args.misses:
        out["misses"] = misses(args.misses, ps, qs, players, pairs, truth)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
