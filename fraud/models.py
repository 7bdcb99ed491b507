"""Models: a supervised detector per mechanism, an unsupervised one for the unseen.

- Supervised (trained on a simulated world with ground truth): one calibrated
  classifier per mechanism, at the mechanism's natural level — pairs for collusion
  (``card_feeding``, ``soft_play``, ``chip_dumping``, ``multi_account``), players for
  the rest (``bot``, ``hidden_card``, ``timeout_abuse``) — plus an ``any`` model per
  level (all mechanisms together), which the leave-one-mechanism-out evaluation uses.
  Three candidate learners per mechanism — a histogram gradient-boosting classifier, an
  L2 logistic regression on quantile-normalised features, and the *signature* learner:
  the same logistic regression on the mechanism's few signals that follow from how it
  is played (:data:`SIGNATURES`) — all class-balanced (fraud is rare); the one with the
  best average precision in a stratified 3-fold cross-validation *on the training world*
  is kept (a handful of positives often favours the signature or the linear model; tens
  of positives the trees). The ``any`` models choose between the first two. The winner is refitted on
  all training rows inside :class:`~sklearn.calibration.CalibratedClassifierCV`
  (sigmoid: isotonic overfits a few dozen positives), so a score reads as a
  probability. ``trained_on[name]`` records the choice and both CV scores.
- A pair's mechanism score is the larger of its classifier's probability and its *ring
  link* through a common partner (:func:`~rummyguard.fraud.rings.close_pair_scores`,
  session 20): two feeders of one receiver feed the receiver, not each other; the pair
  scores carry ``ring_via`` (that partner) and ``ring_link`` when the link gave the score.
- Pooled evidence stands alone when positives are thin (:data:`POOLED`): a mechanism
  with a pooled z over every context it can be seen in (hidden-card knowledge:
  ``hc_z``, a Stouffer combination of the stock, tie, all-decisions and Michigan-start
  scores) is scored by that z alone (a logistic regression on it, so still calibrated)
  when the training world has fewer than :data:`POOLED_BELOW` positives. Why: a dozen
  training cheaters play a few contexts; a learner over the separate signals learns
  *those* contexts, and a cheater seen in one other context (a Michigan-only player has
  one signal, the rest imputed) ranks below honest players with mild evidence
  everywhere. The z already weighs each context by its own evidence. Decided on a
  development world (seed 7707: the pooled z alone 0.80 average precision against the
  chosen learner's 0.62; DETECTION.md round 4), not on the held-out worlds. Session 4:
  the hidden-card score is ``hc_lr`` instead, the likelihood ratio of the same contexts'
  z's given their evidence counts (a z of 2.5 on 300 decisions is less than a cheater
  shows; on 30 it is what a mild one shows): 0.81 -> 0.88 (4405), 0.79 -> 0.87 (4406)
  average precision on the two development worlds. Timeout
  abuse likewise by ``auto_disc_z`` (his timeouts on his own dropped connection against
  the population's rate per clocked turn): on four development worlds (seeds 21-24) it
  alone ranked every abuser first, while the learner chosen by cross-validation (a tie
  at 1.0, broken by order) scored 0.84 on a held-out one of them. Chip dumping (a pair
  mechanism) by ``dump_z`` (the dumper's levers in his direction; four since session 12): a dozen training
  pairs, most of which never dumped, chose a learner that scored 0.06-0.28 PR-AUC on two
  development worlds (4405, 4406), the pooled z ~0.50 on both (session 4). With
  :data:`POOLED_BELOW` or more positives the pooled z joins the cross-validation as one
  more candidate (session 12), so a larger training world keeps it where it is best.
- Unsupervised, for behaviour no training world contained; its score (``anomaly``) is a
  population percentile (1.0 = the most unusual). Players: :class:`EvidenceTail`, the
  largest robust z of the player's *evidence signals* (:data:`EVIDENCE_SIGNALS`: the
  pooled z's, ``hc_lr`` and ``think_sd_all``, each already weighed by its own evidence
  count) against the population. Pairs: an :class:`~sklearn.ensemble.IsolationForest` on
  imputed, robust-scaled features. Why two (session 5, development worlds 4405/4406):
  the player forest's splits went to heavy-tailed and zero-inflated columns
  (``auto_disc_z`` reaches 200 robust units) and to rates on a game or two, so it ranked
  bots at 0.07-0.11 and hidden-card cheaters at 0.09-0.46 average precision against
  honest players; the evidence tail ranks them at 0.46-0.69 and 0.86-0.88 with no label
  (against every other subject, the report's view: 0.03-0.07 -> 0.22-0.26 and
  0.06-0.21 -> 0.59-0.62). The pair evidence z's rest on
  few shared games (0.01-0.03 for every pair mechanism), while the pair forest finds
  multi-accounts, feeding and dumping (0.1-0.4): it stays.
- ``unseen`` (both levels): the product's score for a mechanism the model never saw, the
  larger of two population percentiles, the supervised ``any`` probability's and the
  unsupervised ``anomaly``. A bot is invisible to an ``any`` model trained without bots
  (leave-one-mechanism-out PR-AUC 0.005 = chance) but not to the evidence tail; a
  colluder of a known kind ranks high on ``any`` whatever the forest says. No label
  enters the unsupervised half.

A saved model is a pickle (joblib) of :class:`FraudModel` with ``MODEL_VERSION``, the
feature lists and the scikit-learn version; :func:`load_model` refuses a file whose
format version, feature lists or scikit-learn version differ, with a clear message.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import polars as pl
import sklearn
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, IsolationForest
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import average_precision_score
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import QuantileTransformer, RobustScaler
from threadpoolctl import threadpool_limits

from . import fast_binning
from .features import FEATURES_VERSION, PAIR_FEATURES, PLAYER_FEATURES
from .rings import close_pair_scores

# the class-weighted boosting's bin edges in one pass, bit-identical (fraud/fast_binning.py):
# a fit of the built-in model spent most of its time there
fast_binning.install()

MODEL_VERSION = 4  # 4: hidden-card shifts fitted (hc_shifts); 3: pooled evidence (z) features,
# signature learner; 2: free-choice, learner choice
PAIR_MECHANISMS = ("card_feeding", "soft_play", "chip_dumping", "multi_account")
PLAYER_MECHANISMS = ("bot", "hidden_card", "timeout_abuse")
MECHANISMS = PAIR_MECHANISMS + PLAYER_MECHANISMS
#: member features added to each pair row (min and max of the two players)
MEMBER_FEATURES = ("win_resid", "left_rate", "n_games", "device_sharers", "hc_excess",
                   "hc_tie_t", "auto_rate", "fresh_rate", "n_devices")


class ModelError(Exception):
    """A model file that cannot be used (missing, corrupt, other version)."""


def level_of(mechanism: str) -> str:
    return "pair" if mechanism in PAIR_MECHANISMS else "player"


def pair_columns() -> tuple[str, ...]:
    return PAIR_FEATURES + tuple(f"{m}_{f}" for f in MEMBER_FEATURES for m in ("min", "max"))


def pair_frame(pairs: pl.DataFrame, players: pl.DataFrame) -> pl.DataFrame:
    """Pair rows with their members' features (min/max over the two) joined on."""
    member = players.select(["player", *MEMBER_FEATURES])
    a = member.rename({f: f"a_{f}" for f in MEMBER_FEATURES} | {"player": "p1"})
    b = member.rename({f: f"b_{f}" for f in MEMBER_FEATURES} | {"player": "p2"})
    out = pairs.join(a, on="p1", how="left").join(b, on="p2", how="left")
    exprs = []
    for f in MEMBER_FEATURES:
        exprs.append(pl.min_horizontal(f"a_{f}", f"b_{f}").alias(f"min_{f}"))
        exprs.append(pl.max_horizontal(f"a_{f}", f"b_{f}").alias(f"max_{f}"))
    return out.with_columns(exprs).drop([f"{s}_{f}" for s in "ab" for f in MEMBER_FEATURES])


def to_matrix(df: pl.DataFrame, columns: tuple[str, ...]) -> np.ndarray:
    if df.height == 0:
        return np.zeros((0, len(columns)))
    m = df.select([pl.col(c).cast(pl.Float64) for c in columns]).to_numpy()
    return np.where(np.isfinite(m), m, np.nan)


def _boosting() -> Any:
    base = HistGradientBoostingClassifier(
        max_iter=150, learning_rate=0.06, max_leaf_nodes=15, min_samples_leaf=4,
        l2_regularization=1.0, class_weight="balanced", random_state=0,
    )
    # missing values are imputed (with an indicator, so "no evidence" stays visible):
    # this scikit-learn's gradient boosting fails on a column that is all-missing in a fold
    return make_pipeline(SimpleImputer(strategy="median", keep_empty_features=True,
                                       add_indicator=True), base)


def _quantiles() -> QuantileTransformer:
    """The logistic learners' map of each column to a normal score. Its seed is fixed
    (session 26): past 10,000 rows scikit-learn estimates the quantiles from a random
    subsample, drawn from the global generator unless ``random_state`` is set, so the same
    training world gave another model on each fit (a 32,000-game world's one-class
    PR-AUC moved 0.507-0.511 between two identical runs). Below 10,000 rows (every fit of
    the built-in bundle: its folds hold two thirds of 10,275 pairs) all rows are used and
    the seed changes nothing."""
    return QuantileTransformer(n_quantiles=200, output_distribution="normal", random_state=0)


def _logistic() -> Any:
    return make_pipeline(
        SimpleImputer(strategy="median", keep_empty_features=True, add_indicator=True),
        _quantiles(),
        LogisticRegression(C=0.05, class_weight="balanced", max_iter=2000),
    )


#: per mechanism, the few signals that follow from how it is played (docs/fraud.md): the
#: "signature" learner sees only these. A mechanism with a dozen training positives cannot
#: pick its signals out of ~50 columns by itself; its known behaviour can.
SIGNATURES: dict[str, tuple[str, ...]] = {
    "card_feeding": ("tie_z", "take_z", "collude_z", "gain_z", "tie_z_dir", "take_z_dir",
                     "co_games", "co_lift"),
    "soft_play": ("tie_z", "tie_z_dir", "tie_any_t", "gain_z", "co_games", "co_lift", "out_t",
                  "hold_near_z"),
    "chip_dumping": ("dump_z", "throw_z", "left_z", "gain_z", "take_z_dir", "collude_z",
                     "lose_z", "hu_games", "flow_z", "co_share", "hold_z"),
    "multi_account": ("shared_devices", "shared_ips", "co_share", "tie_z", "take_z"),
    "bot": ("think_sd", "think_sd_draw", "think_diff_corr", "slow_share", "think_median_log",
            "n_games", "think_sd_all"),
    "hidden_card": ("stock_z", "hc_tie_z", "hc_all_z", "hc_z", "mi_tie_z", "mi_reach_z",
                    "mi_hb_z", "stock_informed", "stock_edge", "hc_lr"),
    "timeout_abuse": ("auto_disc_z", "auto_hand_z", "auto_disc_share", "auto_disc_rate",
                      "auto_rate", "disconnect_rate", "fresh_rate", "auto_co_max", "fresh_co_max",
                      "fresh_dist_rel"),
}


#: the pair columns that say who an account *is* (shared devices and IPs, and the members'
#: device counts), not how the pair *plays*
IDENTIFIER_COLUMNS: frozenset[str] = frozenset({
    "shared_devices", "shared_ips", "min_device_sharers", "max_device_sharers",
    "min_n_devices", "max_n_devices"})
#: the play mechanisms, whose learners never read :data:`IDENTIFIER_COLUMNS`. Why (session
#: 21): one person's accounts feed each other, so every multi-account pair of a simulated
#: world is a card-feeding pair too, about half of the feeding positives. A feeding learner
#: that reads identifiers learns "same device" and ranks a feeding ring of strangers (no
#: shared device: the case the feeding model exists for) low; multi-account has its own
#: model. On the development world 7401, blind feeding learners lifted the one-class
#: collusion average precision 0.550 -> 0.579 and the feeding pairs without a shared
#: identifier 0.180 -> 0.214 (DETECTION.md round 17).
IDENTITY_BLIND: frozenset[str] = frozenset({"card_feeding", "soft_play", "chip_dumping"})

#: mechanism -> its pooled evidence column, the score when training positives are thin
POOLED: dict[str, str] = {"hidden_card": "hc_lr", "timeout_abuse": "auto_disc_z",
                          "chip_dumping": "dump_z"}
#: below this many training positives a mechanism in POOLED is scored by its pooled z
POOLED_BELOW = 30


#: hidden-card likelihood ratio (features.py, ``hcev``): component -> (its z column, its
#: evidence count column, the prior shift per decision at intensity 1 that the feature SQL
#: uses: training world 1101's cheaters, session 4; discards: session 28; other discards:
#: session 29). The next-seat discards come as two components that part them: the free
#: choices (``hc_tie_z`` over ``hc_tie_n``: two or more cards worth the same to him, the
#: public record flat) and the rest (``hc_oth_z`` over ``hc_oth_n``), each with its own
#: shift (world 1101's cheaters: 0.39 and 0.31 per decision). Read as one z over every
#: discard (``hc_all_z``, before session 28) the two were scaled by one shift; read as the
#: free choices only (session 28) the rest's evidence was lost, and round 19's held-out
#: world scored 0.740 against the one z's 0.779. On four development worlds (session 29,
#: DETECTION.md) the split scored at or above the free choices alone on each at moderate
#: intensity and on average over all labelled cheaters.
HC_COMPONENTS: dict[str, tuple[str, str, float]] = {
    "stock": ("stock_z", "n_stock_dec", 0.27),
    "discards": ("hc_tie_z", "hc_tie_n", 0.39),
    "other_discards": ("hc_oth_z", "hc_oth_n", 0.31),
    "starts": ("mi_hb_z", "n_hb_starts", 0.49),
}
HC_PRIOR_SHIFTS: dict[str, float] = {k: v[2] for k, v in HC_COMPONENTS.items()}
#: a component's shift is estimated from the training cheaters who played it when there are
#: at least this many of them; below, the prior stands
HC_SHIFT_MIN_CASES = 3
#: the lowest shift an estimate may take: a context the training world's cheaters did not
#: use weighs little, but an estimate at or below 0 (noise on a few cases) must not turn
#: evidence into its opposite
HC_SHIFT_FLOOR = 0.02
#: the intensity grid the ratio averages over (features.py, ``hcll``)
HC_GRID = np.array([0.05 + i * 2.95 / 19 for i in range(20)])


def hc_shifts(players: pl.DataFrame, cheaters: set[str] | frozenset[str]) -> dict[str, Any]:
    """The hidden-card shifts per decision, estimated from a training world's cheaters.

    Under "cheater of intensity t" a component's z is N(t d sqrt(n), 1), so z / sqrt(n)
    estimates t d; its mean over the training cheaters who played that context is the
    shift ``d`` at their mean intensity (the ratio averages over t anyway). Why fitted and
    not fixed (session 15; DETECTION.md "Not done" since round 7): the constants in the
    feature SQL are one simulated world's effect sizes, and a platform's confirmed cheaters
    may use one context more than another; the fit weighs each context by what its own
    cases show. Returns ``{"shifts": {component: d}, "cases": {component: n}}``; a
    component with fewer than :data:`HC_SHIFT_MIN_CASES` cases keeps its prior."""
    shifts, cases = dict(HC_PRIOR_SHIFTS), {}
    rows = players.filter(pl.col("player").is_in(sorted(cheaters)))
    for name, (z_col, n_col, _prior) in HC_COMPONENTS.items():
        if z_col not in rows.columns or n_col not in rows.columns:
            cases[name] = 0
            continue
        got = rows.filter(pl.col(z_col).is_not_null() & (pl.col(n_col) > 0))
        cases[name] = got.height
        if got.height >= HC_SHIFT_MIN_CASES:
            per = got.get_column(z_col).to_numpy() / np.sqrt(got.get_column(n_col).to_numpy())
            shifts[name] = round(max(float(per.mean()), HC_SHIFT_FLOOR), 4)
    return {"shifts": shifts, "cases": cases}


def hc_lr_of(players: pl.DataFrame, shifts: dict[str, float]) -> np.ndarray:
    """``hc_lr`` recomputed with ``shifts`` (the feature SQL's formula, in numpy): log of
    the mean over :data:`HC_GRID` of prod exp(mu z - mu^2 / 2), mu = t d sqrt(n), over the
    components the player has a z for; 0 with none. With :data:`HC_PRIOR_SHIFTS` it is
    the feature column itself."""
    ll = np.zeros((players.height, len(HC_GRID)))
    for name, (z_col, n_col, _prior) in HC_COMPONENTS.items():
        missing = [c for c in (z_col, n_col) if c not in players.columns]
        if missing:
            raise ModelError(f"the player features lack {', '.join(missing)} (features older "
                             "than version 10): recompute them with this rummyguard")
        z = players.get_column(z_col).cast(pl.Float64).to_numpy()
        n = players.get_column(n_col).cast(pl.Float64).fill_null(0).to_numpy()
        has = ~np.isnan(z)
        mu = np.outer(shifts[name] * np.sqrt(n), HC_GRID)
        ll += np.where(has[:, None], mu * np.nan_to_num(z)[:, None] - mu ** 2 / 2, 0.0)
    mx = ll.max(axis=1)
    return mx + np.log(np.exp(ll - mx[:, None]).mean(axis=1))


def _pooled(columns: list[int]) -> Any:
    """Logistic regression on one pooled z column: a calibrated, increasing map of the
    z. A missing z (no context of the mechanism played) is 0, the population's mean."""
    return make_pipeline(
        ColumnTransformer([("pooled", "passthrough", columns)], remainder="drop"),
        SimpleImputer(strategy="constant", fill_value=0.0, keep_empty_features=True),
        LogisticRegression(C=1.0, class_weight="balanced", max_iter=2000),
    )


def _signature(columns: list[int]) -> Any:
    """Logistic regression on the mechanism's signature columns only (indices into the
    level's feature matrix), mildly regularised: few inputs, few positives."""
    return make_pipeline(
        ColumnTransformer([("signature", "passthrough", columns)], remainder="drop"),
        SimpleImputer(strategy="median", keep_empty_features=True, add_indicator=True),
        _quantiles(),
        LogisticRegression(C=0.3, class_weight="balanced", max_iter=2000),
    )


#: the candidate learners (name -> factory), tried in this order (ties keep the first)
LEARNERS: dict[str, Any] = {"boosting": _boosting, "logistic": _logistic, "signature": _signature}
#: learners bound to a few columns (chosen by rule, not by cross-validation)
_COLUMN_LEARNERS: dict[str, Any] = {"signature": _signature, "pooled": _pooled}


def _reading(columns: list[int], learner: Any) -> Any:
    """``learner()`` on the given columns only (the rest dropped before it sees them)."""
    return make_pipeline(ColumnTransformer([("reads", "passthrough", columns)], remainder="drop"),
                         learner())


def _factory(learner: str, columns: list[int] | None) -> Any:
    """A zero-argument factory of the learner (the signature one bound to its columns; a
    general learner given ``columns`` reads only those)."""
    if learner in _COLUMN_LEARNERS:
        return partial(_COLUMN_LEARNERS[learner], columns or [])
    if columns is not None:
        return partial(_reading, columns, LEARNERS[learner])
    return LEARNERS[learner]


def _cv_ap(factory: Any, x: np.ndarray, y: np.ndarray, folds: int) -> float:
    """Average precision of out-of-fold scores (stratified, fixed seed)."""
    scores = np.zeros(len(y))
    for tr, te in StratifiedKFold(folds, shuffle=True, random_state=0).split(x, y):
        scores[te] = factory().fit(x[tr], y[tr]).predict_proba(x[te])[:, 1]
    return float(average_precision_score(y, scores))


def _classifier(n_pos: int, learner: str = "boosting", columns: list[int] | None = None) -> Any:
    folds = min(3, n_pos)
    return CalibratedClassifierCV(_factory(learner, columns)(), method="sigmoid",
                                  cv=StratifiedKFold(folds, shuffle=True, random_state=0))


#: the player evidence signals :class:`EvidenceTail` reads: scores that are already
#: relative to the population and weighed by their own evidence count (a pooled z, the
#: hidden-card likelihood ratio, the think-time spread shrunk toward the population), so
#: one extreme value is evidence and not a rate on a game or two. (The pair z's —
#: ``tie_z`` ... ``dump_z`` — read the same way found 0.01-0.03 of every pair mechanism
#: on the development worlds: they rest on few shared games; pairs keep the forest.)
EVIDENCE_SIGNALS: tuple[str, ...] = (
    "auto_disc_z", "auto_hand_z", "stock_z", "hc_tie_z", "hc_all_z", "hc_z",
    "mi_tie_z", "mi_reach_z", "mi_hb_z", "hc_lr", "think_sd_all",
)
#: evidence signals whose low side is evidence of *honesty*, so only their high side may
#: make a player unusual: ``hc_lr`` (a log likelihood ratio, cheater against honest)
#: keeps falling as an honest player's decisions pile up (a perfectly average player with
#: 30,000 stock and discard decisions sits 7 robust units below the median, beyond the
#: flag cut), so a platform's heaviest regulars would read as anomalies
ONE_SIDED_SIGNALS = frozenset({"hc_lr"})
#: 1 / Phi^-1(0.75): a median absolute deviation of a normal population, in its sd
_MAD_SD = 1.4826


class EvidenceTail:
    """Unsupervised tail score: a subject's largest robust z over the evidence signals.

    ``fit`` stores, per signal, the population median and a scale *per side*: 1.4826 x
    the median deviation of the values above the median (the upper scale) and of those
    below it (the lower). Why per side: ``hc_lr`` (a log likelihood ratio) has a long
    right tail and a short left one, and a zero-inflated z (``auto_disc_z``: no timeout,
    0) has no spread at its median at all; one symmetric MAD made the honest right tail
    of ``hc_lr`` outrank every bot. Medians of deviations break down only when half of a
    side is fraud, so the training world's cheaters do not set the scale (a tail quantile
    did: at 0.5 % the bots of the training world were the quantile). A side without
    deviations takes the other side's scale; a signal with neither scores 0. ``score``:
    max over signals of |z| (a missing signal: 0, no evidence either way): both
    directions, since for behaviour nobody has seen the suspicious side is not known,
    except for the ``upper_only`` signals (positions in ``columns``;
    :data:`ONE_SIDED_SIGNALS`), whose low side is evidence of honesty and counts 0.
    ``score_samples`` is its negative, the convention of scikit-learn's outlier
    detectors (lower = more abnormal), so :func:`anomaly_percentile` reads both."""

    def __init__(self, columns: list[int], upper_only: list[int] | None = None) -> None:
        self.columns = list(columns)
        self.upper_only = list(upper_only or [])
        self.center_ = np.zeros(0)
        self.lower_ = np.zeros(0)
        self.upper_ = np.zeros(0)

    def fit(self, x: np.ndarray) -> EvidenceTail:
        k = len(self.columns)
        self.center_, self.lower_, self.upper_ = np.zeros(k), np.ones(k), np.ones(k)
        for j, c in enumerate(self.columns):
            v = x[:, c] if len(x) else np.zeros(0)
            v = v[np.isfinite(v)]
            if len(v) == 0:
                self.lower_[j] = self.upper_[j] = np.inf  # never seen: scores 0
                continue
            med = float(np.median(v))
            up, down = v[v > med] - med, med - v[v < med]
            hi = _MAD_SD * float(np.median(up)) if len(up) else np.nan
            lo = _MAD_SD * float(np.median(down)) if len(down) else np.nan
            hi, lo = (lo if np.isnan(hi) else hi), (hi if np.isnan(lo) else lo)
            self.center_[j] = med
            self.upper_[j] = hi if np.isfinite(hi) and hi > 0 else np.inf
            self.lower_[j] = lo if np.isfinite(lo) and lo > 0 else np.inf
        return self

    def z(self, x: np.ndarray) -> np.ndarray:
        """Per subject and signal, the robust z (missing: 0)."""
        if len(x) == 0:
            return np.zeros((0, len(self.columns)))
        d = x[:, self.columns] - self.center_
        with np.errstate(invalid="ignore"):
            out = np.where(d > 0, d / self.upper_, d / self.lower_)
        out = np.nan_to_num(out, nan=0.0, posinf=0.0, neginf=0.0)
        one_sided = getattr(self, "upper_only", [])  # a detector pickled before it: none
        if one_sided:
            out[:, one_sided] = np.maximum(out[:, one_sided], 0.0)
        return out

    def score(self, x: np.ndarray) -> np.ndarray:
        if not self.columns:
            return np.zeros(len(x))
        return np.abs(self.z(x)).max(axis=1)

    def score_samples(self, x: np.ndarray) -> np.ndarray:
        return -self.score(x)


def anomaly_detector(level: str = "pair") -> Any:
    """The unsupervised detector of a level (module docstring): the evidence tail for
    players, an isolation forest for pairs."""
    if level == "player":
        return EvidenceTail([PLAYER_FEATURES.index(c) for c in EVIDENCE_SIGNALS],
                            upper_only=[j for j, c in enumerate(EVIDENCE_SIGNALS)
                                        if c in ONE_SIDED_SIGNALS])
    return make_pipeline(
        SimpleImputer(strategy="median", keep_empty_features=True), RobustScaler(),
        IsolationForest(n_estimators=200, random_state=0, contamination="auto"),
    )


def anomaly_percentile(detector: Any, x: np.ndarray) -> np.ndarray:
    """Anomaly as a percentile of the scored population (1.0 = most unusual)."""
    if len(x) == 0:
        return np.zeros(0)
    raw = -detector.score_samples(x)
    order = raw.argsort(kind="stable")
    ranks = np.empty(len(raw))
    ranks[order] = np.arange(1, len(raw) + 1)
    return ranks / len(raw)


#: the share of the training world's honest players that a player must be more extreme
#: than, on the evidence tail, to be flagged as unusual by a scan with a model when no
#: mechanism's probability flags him (fraud/flags.py). Fitted on ~2,200 honest players the
#: 99.9th percentile is a noisy estimate: on other simulated worlds 0.15-0.3 % of the
#: honest players were beyond it (docs/fraud.md); on real data the share is unknown
UNSEEN_QUANTILE = 0.999
#: honest training players needed to place that cut (fewer: no such flags)
UNSEEN_MIN_HONEST = 500


def unseen_cut(detector: Any, honest: np.ndarray) -> dict[str, Any]:
    """The evidence-tail score above which a player is "unusual" for a model's scan: the
    :data:`UNSEEN_QUANTILE` of the training world's honest players' scores. Why from the
    honest players, and absolute: a percentile of the *scored* population flags its top
    0.1 % whatever they did (on a 50-player world, always its most extreme player), and
    the training world's cheaters would set a quantile of everyone (they are its tail)."""
    out: dict[str, Any] = {"quantile": UNSEEN_QUANTILE, "honest": len(honest), "player": None}
    if hasattr(detector, "score") and len(honest) >= UNSEEN_MIN_HONEST:
        out["player"] = float(np.quantile(detector.score(honest), UNSEEN_QUANTILE))
    return out


def percentile(values: np.ndarray) -> np.ndarray:
    """Each value's share of the population at or below it (ties share their mean rank;
    1.0 = the highest): puts a probability and an anomaly on one scale."""
    if len(values) == 0:
        return np.zeros(0)
    v = np.nan_to_num(np.asarray(values, dtype=float), nan=-np.inf)
    return pl.Series(v).rank("average").to_numpy() / len(v)


def unseen_score(any_prob: np.ndarray | None, anomaly: np.ndarray) -> np.ndarray:
    """The score for behaviour the model never saw: the larger of the supervised ``any``
    probability's population percentile and the anomaly percentile. A rank fusion, not a
    probability: the two scores are on different scales, and neither may drown the
    other (the supervised half misses an unseen mechanism entirely; the unsupervised
    half is weak where a known mechanism's training cases teach most)."""
    if any_prob is None:
        return anomaly
    return np.maximum(percentile(any_prob), anomaly)


@dataclass
class FraudModel:
    """Trained detectors with what is needed to check a file before use."""

    version: int = MODEL_VERSION
    sklearn_version: str = sklearn.__version__
    #: what the feature columns meant when it was fitted (features.FEATURES_VERSION): a
    #: feature redefined under the same name is read by load_model as another feature
    features_version: int = FEATURES_VERSION
    player_features: tuple[str, ...] = PLAYER_FEATURES
    pair_features: tuple[str, ...] = field(default_factory=pair_columns)
    supervised: dict[str, Any] = field(default_factory=dict)  # name -> calibrated classifier
    anomaly: dict[str, Any] = field(default_factory=dict)  # level -> detector
    trained_on: dict[str, Any] = field(default_factory=dict)  # positives per model, world
    #: hidden-card shifts per decision fitted on the training world (:func:`hc_shifts`);
    #: the supervised models read ``hc_lr`` recomputed with them. Empty: the feature column
    #: as computed (the frames lacked the evidence counts, e.g. hand-made test frames)
    hc_fit: dict[str, Any] = field(default_factory=dict)

    # -- training ---------------------------------------------------------------------------
    def fit(self, players: pl.DataFrame, pairs: pl.DataFrame,
            player_pos: dict[str, set[str]], pair_pos: dict[str, set[tuple[str, str]]],
            exclude: tuple[str, ...] = (), only_any: bool = False,
            ignore_players: frozenset[str] | set[str] = frozenset(),
            ignore_pairs: frozenset[tuple[str, str]] | set[tuple[str, str]] = frozenset(),
            ) -> FraudModel:
        """Train every mechanism's model (and ``any`` per level) from positives.

        ``player_pos[m]``: players of mechanism m; ``pair_pos[m]``: pairs ``(p1 < p2)`` in
        one group of m. Mechanisms in ``exclude`` are left out entirely (their positives
        are dropped from the training rows, so they are neither positives nor negatives).
        ``ignore_players`` / ``ignore_pairs``: subjects dropped from every model's rows the
        same way (a labelled colluder who never acted in the training world: neither a
        case to learn from nor a clean negative; see fraud.evaluate.fit_on_world).
        ``only_any``: train just the two ``any`` models (leave-one-mechanism-out runs).
        OpenMP is held to one thread: on a busy 2-core machine the boosting's thread
        pool spins and a 100-row fit takes seconds instead of milliseconds.
        """
        with threadpool_limits(limits=1), warnings.catch_warnings():
            # tiny worlds (tests): the quantile map shrinks to the sample, as intended
            warnings.filterwarnings("ignore", message="n_quantiles", category=UserWarning)
            return self._fit(players, pairs, player_pos, pair_pos, exclude, only_any,
                             ignore_players, ignore_pairs)

    def _fit(self, players: pl.DataFrame, pairs: pl.DataFrame,
            player_pos: dict[str, set[str]], pair_pos: dict[str, set[tuple[str, str]]],
            exclude: tuple[str, ...], only_any: bool,
            ignore_players: frozenset[str] | set[str],
            ignore_pairs: frozenset[tuple[str, str]] | set[tuple[str, str]]) -> FraudModel:
        pf = pair_frame(pairs, players)
        xq = to_matrix(pf, self.pair_features)
        pids = players.get_column("player").to_list()
        keys = list(zip(pf.get_column("p1").to_list(), pf.get_column("p2").to_list(), strict=True))
        drop_p = set().union(*(player_pos.get(m, set()) for m in exclude)) if exclude else set()
        drop_q = set().union(*(pair_pos.get(m, set()) for m in exclude)) if exclude else set()
        drop_p |= ignore_players
        drop_q |= ignore_pairs
        # the hidden-card shifts from this world's acted cheaters; a run that leaves hidden
        # card out (leave-one-mechanism-out) must not read its labels: the priors stand
        self.hc_fit = {}
        if all(c in players.columns for _z, c, _d in HC_COMPONENTS.values()):
            cheaters = set() if "hidden_card" in exclude else \
                set(player_pos.get("hidden_card", set())) - drop_p
            self.hc_fit = hc_shifts(players, cheaters)
            self.trained_on["hc_shifts"] = self.hc_fit
        xp_plain = to_matrix(players, self.player_features)
        xp = self._supervised_matrix(players, xp_plain)
        keep_p = np.array([p not in drop_p for p in pids], dtype=bool)
        keep_q = np.array([k not in drop_q for k in keys], dtype=bool)
        for m in MECHANISMS:
            if m in exclude or only_any:
                continue
            if level_of(m) == "pair":
                y = np.array([k in pair_pos.get(m, set()) for k in keys])
                x, keep, names = xq, keep_q, self.pair_features
            else:
                y = np.array([p in player_pos.get(m, set()) for p in pids])
                x, keep, names = xp, keep_p, self.player_features
            cols = [names.index(c) for c in SIGNATURES[m]]
            pooled = [names.index(POOLED[m])] if m in POOLED else None
            fixed = int(y[keep].sum()) < POOLED_BELOW
            reads = [i for i, c in enumerate(names) if c not in IDENTIFIER_COLUMNS] \
                if m in IDENTITY_BLIND else None
            self._fit_one(m, x[keep], y[keep], cols, pooled, pooled_fixed=fixed, reads=reads)
        any_p = set().union(*(v for m, v in player_pos.items() if m not in exclude))
        any_q = set().union(*(v for m, v in pair_pos.items() if m not in exclude))
        self._fit_one("any_player", xp[keep_p], np.array([p in any_p for p in pids])[keep_p])
        self._fit_one("any_pair", xq[keep_q], np.array([k in any_q for k in keys])[keep_q])
        # the unsupervised half reads the features as computed: no label enters it
        self.anomaly = {"player": anomaly_detector("player").fit(xp_plain),
                        "pair": anomaly_detector("pair").fit(xq)}
        labelled = set().union(*player_pos.values()) | {p for v in pair_pos.values() for k in v for p in k}
        honest = keep_p & np.array([p not in labelled for p in pids], dtype=bool)
        self.trained_on["unseen_cut"] = unseen_cut(self.anomaly["player"], xp_plain[honest])
        return self

    def _supervised_matrix(self, players: pl.DataFrame, plain: np.ndarray) -> np.ndarray:
        """The player feature matrix the supervised models read: ``plain`` (the features as
        computed, which the unsupervised half reads) with ``hc_lr`` recomputed from the
        fitted hidden-card shifts (:attr:`hc_fit`)."""
        fit = getattr(self, "hc_fit", None)  # absent from a pickle of an older build
        if not (fit and "hc_lr" in self.player_features and players.height):
            return plain
        x = plain.copy()
        x[:, self.player_features.index("hc_lr")] = hc_lr_of(players, fit["shifts"])
        return x

    def _fit_one(self, name: str, x: np.ndarray, y: np.ndarray,
                 signature: list[int] | None = None, pooled: list[int] | None = None,
                 pooled_fixed: bool = True, reads: list[int] | None = None) -> None:
        """Fit one model; ``signature`` (a mechanism's signal columns) adds the signature
        learner to the candidates (the ``any`` models have none); ``pooled`` (the pooled
        z column, :data:`POOLED`) fixes the learner to it, without cross-validation, when
        ``pooled_fixed`` (thin positives), else adds it to the candidates.

        Why a candidate and not dropped (session 12): with :data:`POOLED_BELOW` or more
        training positives the pooled z used to leave the race altogether, so a larger
        training world could only *replace* the rule that carries hidden card and chip
        dumping by a learner, never keep it where the cross-validation says it is best.
        ``reads``: the columns the general learners (boosting, logistic) may read; None,
        all (:data:`IDENTITY_BLIND` mechanisms read all but the identifiers)."""
        n_pos = int(y.sum())
        self.trained_on[name] = {"positives": n_pos, "rows": len(y)}
        if reads is not None:  # said in the record: a reviewer sees what the model never read
            self.trained_on[name]["blind_to"] = sorted(IDENTIFIER_COLUMNS)
        if n_pos < 2 or n_pos == len(y):
            self.supervised.pop(name, None)
            return
        if pooled is not None and pooled_fixed:
            self.trained_on[name]["learner"] = "pooled"
            self.supervised[name] = _classifier(n_pos, "pooled", pooled).fit(x, y)
            return
        learner = "boosting"
        columns = {"signature": signature, "pooled": pooled, "boosting": reads, "logistic": reads}
        if n_pos >= 3:  # model selection on the training world only
            names = [k for k in LEARNERS if k != "signature" or signature]
            names += ["pooled"] if pooled is not None else []
            cv = {k: round(_cv_ap(_factory(k, columns.get(k)), x, y, 3), 4) for k in names}
            learner = max(cv, key=lambda k: (cv[k], -names.index(k)))
            self.trained_on[name]["cv_ap"] = cv
        self.trained_on[name]["learner"] = learner
        self.supervised[name] = _classifier(n_pos, learner, columns.get(learner)).fit(x, y)

    # -- scoring ------------------------------------------------------------------------------
    def predict(self, players: pl.DataFrame, pairs: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        """Scores: players (``player`` + a column per player-level model, ``anomaly`` and
        ``unseen``) and pairs (``p1``, ``p2`` + a column per pair-level model, ``anomaly``
        and ``unseen``). A model file saved before session 5 keeps its own player
        detector (an isolation forest); ``unseen`` then fuses with that."""
        with threadpool_limits(limits=1):
            return self._predict(players, pairs)

    def _predict(self, players: pl.DataFrame, pairs: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        pf = pair_frame(pairs, players)
        xp_plain = to_matrix(players, self.player_features)
        xp = self._supervised_matrix(players, xp_plain)
        xq = to_matrix(pf, self.pair_features)
        ps: dict[str, Any] = {"player": players.get_column("player")}
        qs: dict[str, Any] = {"p1": pf.get_column("p1"), "p2": pf.get_column("p2")}
        for name, clf in sorted(self.supervised.items()):
            is_pair = name == "any_pair" or (name in MECHANISMS and level_of(name) == "pair")
            x = xq if is_pair else xp
            prob = clf.predict_proba(x)[:, 1] if len(x) else np.zeros(0)
            (qs if is_pair else ps)[name] = prob
        for level, x, out in (("player", xp_plain, ps), ("pair", xq, qs)):
            det = self.anomaly.get(level)
            if len(x) and det is None:
                det = anomaly_detector(level).fit(x)
            out["anomaly"] = anomaly_percentile(det, x) if len(x) else np.zeros(0)
            any_col = f"any_{level}"
            out["unseen"] = unseen_score(out.get(any_col), out["anomaly"])
            if level == "player":  # beyond the training world's honest tail (unseen_cut)
                cut = (self.trained_on.get("unseen_cut") or {}).get("player")
                out["beyond_tail"] = (det.score(x) > cut if cut is not None and len(x)
                                      and hasattr(det, "score") else np.zeros(len(x), dtype=bool))
        # a pair in one ring through a common partner scores the ring link when that is
        # higher (fraud/rings.py, close_pair_scores: a feeding ring's two feeders)
        return pl.DataFrame(ps), close_pair_scores(pl.DataFrame(qs), PAIR_MECHANISMS)

    # -- files ----------------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        """Write the model whole or not at all: into a temporary file beside ``path``,
        renamed onto it once complete, so a full disk keeps an earlier model at ``path``
        instead of a truncated one (audit 50)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        part = target.with_name(f".{target.name}.{os.getpid()}.part")
        try:
            joblib.dump(self, part, compress=3)
            part.replace(target)
        finally:
            part.unlink(missing_ok=True)


def load_model(path: str | Path) -> FraudModel:
    """Load a saved model, refusing one this code cannot use (with the reason)."""
    p = Path(path)
    if not p.exists():
        raise ModelError(f"no model file at {p}")
    try:
        model = joblib.load(p)
    except Exception as exc:  # a corrupt or foreign file: say so in one line
        raise ModelError(f"{p} is not a rummyguard model (a file `rummyguard eval --save-model` "
                         f"wrote): {type(exc).__name__}: {exc}") from None
    if not isinstance(model, FraudModel):
        raise ModelError(f"{p} is not a rummyguard model (it holds {type(model).__name__})")
    if model.version != MODEL_VERSION:
        raise ModelError(f"{p} is model format {model.version}; this rummyguard reads {MODEL_VERSION}")
    if model.sklearn_version != sklearn.__version__:
        raise ModelError(
            f"{p} was trained with scikit-learn {model.sklearn_version}; installed is "
            f"{sklearn.__version__} — retrain it (rummyguard eval --save-model)")
    if tuple(model.player_features) != PLAYER_FEATURES or tuple(model.pair_features) != pair_columns():
        raise ModelError(f"{p} was trained on other features than this rummyguard computes; retrain it")
    saved = model.__dict__.get("features_version")  # not the class default: older files lack it
    if saved != FEATURES_VERSION:
        was = (f"features version {saved}" if saved is not None
               else "features from before version 12 (not recorded)")
        raise ModelError(f"{p} was trained on {was}; this rummyguard computes features version "
                         f"{FEATURES_VERSION} — retrain it (rummyguard eval --save-model)")
    return model


def unsupervised_scores(players: pl.DataFrame, pairs: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Anomaly percentiles only (a scan without a trained model): each level's detector
    fitted on the scored population itself; ``unseen`` is the anomaly (no ``any`` model)."""
    pf = pair_frame(pairs, players)
    xp = to_matrix(players, PLAYER_FEATURES)
    xq = to_matrix(pf, pair_columns())
    pa = anomaly_percentile(anomaly_detector("player").fit(xp), xp) if len(xp) else np.zeros(0)
    qa = anomaly_percentile(anomaly_detector("pair").fit(xq), xq) if len(xq) else np.zeros(0)
    ps = pl.DataFrame({"player": players.get_column("player"), "anomaly": pa, "unseen": pa})
    qs = pl.DataFrame({"p1": pf.get_column("p1"), "p2": pf.get_column("p2"), "anomaly": qa,
                       "unseen": qa})
    return ps, qs


__all__ = [
    "EVIDENCE_SIGNALS",
    "IDENTIFIER_COLUMNS",
    "IDENTITY_BLIND",
    "MECHANISMS",
    "MODEL_VERSION",
    "ONE_SIDED_SIGNALS",
    "PAIR_MECHANISMS",
    "PLAYER_MECHANISMS",
    "POOLED",
    "POOLED_BELOW",
    "UNSEEN_QUANTILE",
    "EvidenceTail",
    "FraudModel",
    "ModelError",
    "level_of",
    "load_model",
    "pair_frame",
    "percentile",
    "unseen_cut",
    "unseen_score",
    "unsupervised_scores",
]
