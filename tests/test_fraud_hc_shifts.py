"""Hidden-card shifts fitted on the training world (session 15, issue 8).

``hc_lr`` weighs each hidden-card context (stock draws, next-seat discards, Michigan
starts) by the shift per decision a cheater shows there. The feature SQL uses priors (one
simulated world's cheaters); the supervised model re-estimates the shifts from its own
training world's acted cheaters and recomputes the ratio. Pinned here:

- with the priors, the numpy ratio is the feature column itself (a real fact world);
- the estimate is the mean of z / sqrt(n) over the cheaters who played a context; a
  context with fewer than ``HC_SHIFT_MIN_CASES`` cases keeps its prior; an estimate at or
  below 0 is floored, so evidence never counts against a player;
- the fit follows the training world: where its cheaters show in discards and not in
  stock draws, a test player with discard evidence outranks one with the same z in stock
  draws, and the other way round;
- leave-one-mechanism-out without hidden card reads no hidden-card label (the priors
  stand); the unsupervised half never sees the fitted column; a frame without the
  evidence counts is refused at scoring with a clear message.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from factkit import facts_db
from modelkit import coarse

from rummyguard.fraud.features import PAIR_FEATURES, PLAYER_FEATURES, player_features
from rummyguard.fraud.models import (
    HC_COMPONENTS,
    HC_PRIOR_SHIFTS,
    HC_SHIFT_FLOOR,
    HC_SHIFT_MIN_CASES,
    FraudModel,
    ModelError,
    hc_lr_of,
    hc_shifts,
)
from tests.test_fraud_hc_bot_signals import _discards, _seat_rows

GRID = [0.05 + i * 2.95 / 19 for i in range(20)]


def _log_lr(terms: list[tuple[float, float]]) -> float:
    """Independent oracle (as in test_fraud_hc_bot_signals): log mean over the grid of
    prod exp(mu z - mu^2 / 2), mu = t * w."""
    lls = [sum(t * w * z - (t * w) ** 2 / 2 for z, w in terms) for t in GRID]
    mx = max(lls)
    return mx + math.log(sum(math.exp(v - mx) for v in lls) / len(lls))


def test_with_the_priors_the_ratio_is_the_feature_column() -> None:
    honest = [f"h{i:02d}" for i in range(40)]
    rows: list[dict[str, Any]] = []
    for p in honest:
        rows += _discards(p, [0.5 if i % 2 else -0.5 for i in range(30)])
    rows += _discards("c1", [0.3] * 25) + _discards("c2", [0.1] * 200)
    pickups = [{"game_id": f"g-{p}", "seq": 100 + i, "player": p,
                "source": "stock" if (i % 3 == 2 if p == "c1" else i % 2) else "discard",
                "ncards": 1, "gain": 0, "pile_gain": 0, "stock_gain": i % 3, "from_player": "zz"}
               for p in [*honest, "c1"] for i in range(18)]
    f = player_features(facts_db(discards=rows, pickups=pickups,
                                 player_games=_seat_rows([*honest, "c1", "c2"])))
    for name, (z_col, n_col, _d) in HC_COMPONENTS.items():
        assert z_col in f.columns and n_col in f.columns
        assert z_col.endswith("_z") and n_col.startswith(("n_", "hc_tie_n", "hc_oth_n"))
        # a model input, but for the other discards: the learners read them inside
        # hc_all_z (every next-seat discard), the ratio reads them apart (session 29)
        assert (z_col in PLAYER_FEATURES) == (name != "other_discards")
        assert f.get_column(n_col).dtype.is_integer()  # a count of decisions
    got = hc_lr_of(f, HC_PRIOR_SHIFTS)
    assert got == pytest.approx(f.get_column("hc_lr").to_numpy(), rel=1e-12, abs=1e-12)
    c1 = f.filter(pl.col("player") == "c1").row(0, named=True)
    assert c1["hc_tie_n"] == 25 and c1["n_stock_dec"] == 18 and c1["hc_oth_n"] == 0
    # other shifts: the oracle, from the same z's and counts
    shifts = {"stock": 0.6, "discards": 0.1, "other_discards": 0.5, "starts": 0.3}
    expected = _log_lr([(c1["hc_tie_z"], 0.1 * math.sqrt(25)), (c1["stock_z"], 0.6 * math.sqrt(18))])
    assert hc_lr_of(f.filter(pl.col("player") == "c1"), shifts)[0] == pytest.approx(expected, rel=1e-12)
    # no context at all: a neutral ratio, whatever the shifts
    lone = player_features(facts_db(player_games=_seat_rows(["m1", "m2"], "michigan")))
    assert hc_lr_of(lone, shifts).tolist() == [0.0, 0.0]


def _frame(rows: dict[str, tuple[float | None, int, float | None, int]]) -> pl.DataFrame:
    """player -> (stock_z, n_stock_dec, hc_tie_z, hc_tie_n); no other discards, no
    Michigan starts."""
    return pl.DataFrame({
        "player": list(rows),
        "stock_z": [r[0] for r in rows.values()], "n_stock_dec": [r[1] for r in rows.values()],
        "hc_tie_z": [r[2] for r in rows.values()], "hc_tie_n": [r[3] for r in rows.values()],
        "hc_oth_z": [None] * len(rows), "hc_oth_n": [0] * len(rows),
        "mi_hb_z": [None] * len(rows), "n_hb_starts": [0] * len(rows),
    }, schema_overrides={"stock_z": pl.Float64, "hc_tie_z": pl.Float64, "hc_oth_z": pl.Float64,
                         "mi_hb_z": pl.Float64})


def test_the_shift_is_the_mean_z_per_root_decision_of_the_cheaters() -> None:
    f = _frame({
        "a": (3.0, 100, 1.0, 25), "b": (1.0, 25, None, 0), "c": (2.0, 16, -2.0, 100),
        "h": (9.0, 100, 9.0, 100),  # not a cheater: ignored
    })
    fit = hc_shifts(f, {"a", "b", "c"})
    assert fit["cases"] == {"stock": 3, "discards": 2, "other_discards": 0, "starts": 0}
    assert fit["shifts"]["stock"] == pytest.approx((0.3 + 0.2 + 0.5) / 3, abs=1e-4)
    assert HC_SHIFT_MIN_CASES == 3
    assert fit["shifts"]["discards"] == HC_PRIOR_SHIFTS["discards"]  # 2 cases: the prior
    assert fit["shifts"]["starts"] == HC_PRIOR_SHIFTS["starts"]
    # a context the cheaters did not use (mean at or below 0) is floored, not negative
    g = _frame({p: (-1.0, 25, 2.0, 25) for p in ("a", "b", "c")})
    assert hc_shifts(g, {"a", "b", "c"})["shifts"]["stock"] == HC_SHIFT_FLOOR > 0
    assert hc_shifts(g, {"a", "b", "c"})["shifts"]["discards"] == pytest.approx(0.4)
    # no cheaters: every prior
    assert hc_shifts(g, set())["shifts"] == HC_PRIOR_SHIFTS


def _world(channel: str, seed: int = 3) -> tuple[pl.DataFrame, pl.DataFrame, set[str]]:
    """600 players with the real feature columns (noise) and hidden-card evidence; the 12
    cheaters show it in ``channel`` only (z ~ 0.4 sqrt(n)), honest players in neither,
    and two probe players: ``s`` with z = 4 in stock draws, ``d`` with z = 4 in
    discards, each on 100 decisions and nothing in the other context."""
    rng = np.random.default_rng(seed)
    n = 600
    data: dict[str, Any] = {c: rng.normal(size=n) for c in PLAYER_FEATURES}
    pos = np.zeros(n, dtype=bool)
    pos[:12] = True
    n_dec = rng.integers(30, 200, size=n).astype(float)
    zs = rng.normal(size=n) + np.where(pos & (channel == "stock"), 0.4 * np.sqrt(n_dec), 0.0)
    zd = rng.normal(size=n) + np.where(pos & (channel == "discards"), 0.4 * np.sqrt(n_dec), 0.0)
    zs[-2:], zd[-2:], n_dec[-2:] = [4.0, 0.0], [0.0, 4.0], 100.0
    data.update({"stock_z": zs, "hc_tie_z": zd, "mi_hb_z": np.full(n, np.nan),
                 "hc_oth_z": np.full(n, np.nan), "hc_oth_n": np.zeros(n),
                 "n_stock_dec": n_dec, "hc_tie_n": n_dec, "n_hb_starts": np.zeros(n)})
    names = [f"q{i:03d}" for i in range(n - 2)] + ["s", "d"]
    players = pl.DataFrame({"player": names, **coarse(data)}).with_columns(pl.col("mi_hb_z", "hc_oth_z").fill_nan(None))
    players = players.with_columns(pl.Series("hc_lr", hc_lr_of(players, HC_PRIOR_SHIFTS)))
    pairs = pl.DataFrame({"p1": ["q000"], "p2": ["q001"], **{c: [0.0] for c in PAIR_FEATURES}})
    return players, pairs, set(names[:12])


@pytest.mark.parametrize("channel", ["stock", "discards"])
def test_the_fit_weighs_the_context_the_training_cheaters_used(channel: str) -> None:
    players, pairs, pos = _world(channel)
    model = FraudModel().fit(players, pairs, {"hidden_card": pos}, {})
    shifts = model.trained_on["hc_shifts"]["shifts"]
    other = "discards" if channel == "stock" else "stock"
    assert shifts[channel] > 0.3 and shifts[other] < 0.1
    ps, _ = model.predict(players, pairs)
    score = dict(zip(ps.get_column("player"), ps.get_column("hidden_card"), strict=True))
    used, unused = ("s", "d") if channel == "stock" else ("d", "s")
    assert score[used] > score[unused]
    # the priors (0.27 stock, 0.39 free-choice discards) rank the discard probe first:
    # where the training cheaters used stock draws, the fit reverses that order
    prior = dict(zip(players.get_column("player"), players.get_column("hc_lr"), strict=True))
    assert prior["d"] > prior["s"]


def test_leave_one_out_reads_no_hidden_card_label_and_the_unsupervised_half_none() -> None:
    players, pairs, pos = _world("stock")
    without = FraudModel().fit(players, pairs, {"hidden_card": pos}, {},
                               exclude=("hidden_card",), only_any=True)
    assert without.trained_on["hc_shifts"]["shifts"] == HC_PRIOR_SHIFTS
    with_ = FraudModel().fit(players, pairs, {"hidden_card": pos}, {})
    assert with_.trained_on["hc_shifts"]["shifts"] != HC_PRIOR_SHIFTS
    # the anomaly score reads the feature column as computed, whatever the labels said
    a1 = with_.predict(players, pairs)[0].get_column("anomaly")
    a2 = without.predict(players, pairs)[0].get_column("anomaly")
    assert a1.equals(a2)


def test_a_frame_without_the_evidence_counts_is_refused_at_scoring() -> None:
    players, pairs, pos = _world("discards")
    model = FraudModel().fit(players, pairs, {"hidden_card": pos}, {})
    with pytest.raises(ModelError, match=r"n_stock_dec.*recompute"):
        model.predict(players.drop("n_stock_dec"), pairs)
    # a hand-made frame of model inputs only trains on its hc_lr column as given
    bare = players.select(["player", *PLAYER_FEATURES])
    plain = FraudModel().fit(bare, pairs, {"hidden_card": pos}, {})
    assert plain.hc_fit == {} and "hc_shifts" not in plain.trained_on
    assert plain.predict(bare, pairs)[0].height == bare.height
