"""A scan with a trained model also flags players the model does not score high: a player
whose evidence tail is beyond the training world's honest players' 99.9th percentile
(``models.unseen_cut``) and whom no mechanism's probability flags. Hand-made facts (the
worlds of tests/test_fraud_unseen.py): no bot is labelled in training; a metronome in the
scored world is flagged, after the model's flags, and the honest players are not."""

from __future__ import annotations

import numpy as np
import pytest
from test_fraud_unseen import _world

from rummyguard.fraud.flags import build_flags
from rummyguard.fraud.models import UNSEEN_QUANTILE, FraudModel


@pytest.fixture(scope="module")
def fitted() -> FraudModel:
    train = _world(11, bots=[], cheaters=["c0", "c1", "c2", "c3"], n_honest=600,
                   labelled=("hidden_card",))
    return FraudModel().fit(train.players, train.pairs, {"hidden_card": {"c0", "c1", "c2", "c3"}}, {})


def test_the_cut_is_the_honest_training_players_quantile(fitted: FraudModel) -> None:
    cut = fitted.trained_on["unseen_cut"]
    assert cut["quantile"] == UNSEEN_QUANTILE and cut["honest"] == 600  # the cheaters left out
    train = _world(11, bots=[], cheaters=["c0", "c1", "c2", "c3"], n_honest=600,
                   labelled=("hidden_card",))
    ps, _ = fitted.predict(train.players, train.pairs)
    honest = ps.filter(ps.get_column("player").str.starts_with("h"))
    # in the world it was fitted on, at most one of its 600 honest players is beyond it
    assert honest.get_column("beyond_tail").sum() <= 1
    scores = fitted.anomaly["player"].score(
        np.array(train.players.filter(train.players.get_column("player").str.starts_with("h"))
                 .select(list(fitted.player_features)).to_numpy(), dtype=float))
    assert cut["player"] == pytest.approx(float(np.quantile(scores, UNSEEN_QUANTILE)))


def test_an_unseen_metronome_is_flagged_after_the_model_flags(fitted: FraudModel) -> None:
    scored = _world(12, bots=["m0"], cheaters=["c9"], n_honest=200, labelled=())
    ps, qs = fitted.predict(scored.players, scored.pairs)
    beyond = set(ps.filter(ps.get_column("beyond_tail")).get_column("player").to_list())
    assert "m0" in beyond
    assert len({p for p in beyond if p.startswith("h")}) <= 2  # of 200 honest players
    flags = build_flags(scored.con, scored.players, scored.pairs, ps, qs, [], supervised=True)
    rows = flags.to_dicts()
    metronome = [r for r in rows if r["subject"] == "m0"]
    assert len(metronome) == 1 and metronome[0]["source"] == "anomaly"
    assert metronome[0]["mechanism"] in ("bot", "unusual")
    sources = [r["source"] for r in rows]
    assert sources == sorted(sources, key=lambda s: s == "anomaly")  # model flags first
    # the hidden-card cheater the model knows is a model flag, not an anomaly one
    assert any(r["subject"] == "c9" and r["source"] == "model" for r in rows)


def test_a_model_without_the_cut_flags_no_anomaly(fitted: FraudModel) -> None:
    """A model saved before the cut existed (or fitted on too few honest players)."""
    old = FraudModel(**{**fitted.__dict__, "trained_on": {k: v for k, v in fitted.trained_on.items()
                                                          if k != "unseen_cut"}})
    scored = _world(12, bots=["m0"], cheaters=["c9"], n_honest=200, labelled=())
    ps, qs = old.predict(scored.players, scored.pairs)
    assert not ps.get_column("beyond_tail").any()
    flags = build_flags(scored.con, scored.players, scored.pairs, ps, qs, [], supervised=True)
    assert "anomaly" not in flags.get_column("source").to_list()


def test_a_heavy_honest_player_is_not_unusual_by_his_low_likelihood_ratio() -> None:
    """``hc_lr`` falls as an honest player's decisions pile up: its low side is evidence
    of honesty, so the evidence tail counts only its high side (ONE_SIDED_SIGNALS)."""
    from rummyguard.fraud.features import PLAYER_FEATURES
    from rummyguard.fraud.models import EVIDENCE_SIGNALS, anomaly_detector

    rng = np.random.default_rng(0)
    x = np.full((400, len(PLAYER_FEATURES)), np.nan)
    lr = PLAYER_FEATURES.index("hc_lr")
    x[:, lr] = rng.normal(-2.5, 0.75, 400)
    det = anomaly_detector("player").fit(x)
    assert "hc_lr" in EVIDENCE_SIGNALS
    regular, cheater = x[:2].copy(), x[:2].copy()
    regular[:, lr] = -20.0  # thousands of games of perfectly average play
    cheater[:, lr] = 15.0
    assert det.score(regular).max() == 0.0
    assert det.score(cheater).min() > 10


def test_a_player_the_any_model_scores_high_is_flagged_with_his_likeliest_mechanism(
        fitted: FraudModel) -> None:
    """Session 15: a Michigan-only bot scored 0.97 on ``any_player`` and 0.26 on ``bot``
    and no flag showed him. A player whose ``any`` probability reaches the threshold while
    no mechanism's does is a model flag: the ``any`` probability as score, the likeliest
    mechanism named. Pairs keep their mechanism probabilities only (on a development
    world the same rule for pairs was wrong more often than right)."""
    import polars as pl

    scored = _world(12, bots=["m0"], cheaters=["c9"], n_honest=200, labelled=())
    ps, qs = fitted.predict(scored.players, scored.pairs)
    honest = sorted(p for p in ps.get_column("player").to_list() if p.startswith("h"))
    quiet, loud = honest[0], honest[1]
    mechs = [c for c in ("bot", "hidden_card", "timeout_abuse") if c in ps.columns]
    ps = ps.with_columns(
        *[pl.when(pl.col("player").is_in([quiet, loud])).then(0.05).otherwise(pl.col(m)).alias(m)
          for m in mechs],
        pl.when(pl.col("player") == quiet).then(0.3).when(pl.col("player") == loud).then(0.97)
        .otherwise(pl.col("any_player")).alias("any_player"),
        pl.when(pl.col("player").is_in([quiet, loud])).then(False).otherwise(pl.col("beyond_tail"))
        .alias("beyond_tail"))
    if "bot" in ps.columns:
        ps = ps.with_columns(pl.when(pl.col("player") == loud).then(0.26).otherwise(pl.col("bot"))
                             .alias("bot"))
    k1, k2 = qs.get_column("p1")[0], qs.get_column("p2")[0]
    qs = qs.with_columns(*[pl.lit(0.05).alias(m) for m in ("card_feeding", "soft_play",
                                                             "chip_dumping", "multi_account")
                           if m in qs.columns], pl.lit(0.99).alias("any_pair"))
    rows = build_flags(scored.con, scored.players, scored.pairs, ps, qs, [], supervised=True).to_dicts()
    got = [r for r in rows if r["subject"] == loud]
    assert len(got) == 1 and got[0]["source"] == "model"
    assert got[0]["score"] == pytest.approx(0.97)
    # the likeliest of the mechanisms the model scores (this one was trained on hidden
    # card only; with a bot model, 0.26 against 0.05 would name "bot")
    assert got[0]["mechanism"] == ("bot" if "bot" in mechs else "hidden_card")
    assert not [r for r in rows if r["subject"] == quiet]  # any 0.3: below the threshold
    assert not [r for r in rows if r["subject_kind"] == "pair" and r["subject"] == f"{k1}|{k2}"]
