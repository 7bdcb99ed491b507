"""Play mechanisms' learners do not read who an account is (session 21).

One person's accounts feed each other, so a training world's multi-account pairs are
card-feeding pairs too. A feeding learner that reads shared devices learns "same device"
and ranks a feeding ring of strangers low; :data:`IDENTITY_BLIND` mechanisms read every
column but :data:`IDENTIFIER_COLUMNS`, which multi-account's model keeps."""

from __future__ import annotations

import numpy as np
import polars as pl
from modelkit import coarse

from rummyguard.fraud.features import PAIR_FEATURES, PLAYER_FEATURES
from rummyguard.fraud.models import (
    IDENTIFIER_COLUMNS,
    IDENTITY_BLIND,
    SIGNATURES,
    FraudModel,
    pair_frame,
)


def _world(seed: int = 3) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, set[tuple[str, str]]]]:
    """400 pairs of 800 players. Pairs 0-15 feed (feed_lift, take_lift, keep_lift up:
    columns outside card feeding's signature, so a general learner, which could read
    identifiers, wins the cross-validation); 0-7 of them are also one person's accounts
    (shared devices and IPs, as the simulator plants them); pairs 16-23 share a device
    and do not feed (a household)."""
    rng = np.random.default_rng(seed)
    n = 400
    ids = [(f"a{i:03d}", f"b{i:03d}") for i in range(n)]
    feed = np.arange(n) < 16
    same_person = np.arange(n) < 8
    household = (np.arange(n) >= 16) & (np.arange(n) < 24)
    data = {c: rng.normal(size=n) for c in PAIR_FEATURES}
    for c in ("feed_lift", "take_lift", "keep_lift"):
        data[c] = np.where(feed, 2.2, 0.0) + rng.normal(size=n)
    data["shared_devices"] = np.where(same_person | household, 2.0, 0.0)
    data["shared_ips"] = np.where(same_person | household, 1.0, 0.0)
    pairs = pl.DataFrame({"p1": [a for a, _ in ids], "p2": [b for _, b in ids], **coarse(data)})
    members = [p for k in ids for p in k]
    pdata = {c: rng.normal(size=2 * n) for c in PLAYER_FEATURES}
    players = pl.DataFrame({"player": members, **coarse(pdata)})
    pos = {"card_feeding": {ids[i] for i in range(16)},
           "multi_account": {ids[i] for i in range(8)}}
    return players, pairs, pos


def test_identifier_columns_are_pair_features_and_out_of_play_signatures() -> None:
    model = FraudModel()
    assert set(model.pair_features) >= IDENTIFIER_COLUMNS
    assert {"shared_devices", "shared_ips"} <= IDENTIFIER_COLUMNS
    for mech in IDENTITY_BLIND:
        assert not set(SIGNATURES[mech]) & IDENTIFIER_COLUMNS, mech
    assert "multi_account" not in IDENTITY_BLIND
    assert {"shared_devices", "shared_ips"} <= set(SIGNATURES["multi_account"])


def test_feeding_scores_do_not_move_with_shared_identifiers() -> None:
    """Whatever learner the cross-validation picks for card feeding, its probability is
    the same with the identifier columns wiped; multi-account's is not."""
    players, pairs, pos = _world()
    model = FraudModel().fit(players, pairs, {}, pos)
    assert model.trained_on["card_feeding"]["learner"] in {"boosting", "logistic"}
    assert model.trained_on["card_feeding"]["blind_to"] == sorted(IDENTIFIER_COLUMNS)
    assert "blind_to" not in model.trained_on["multi_account"]
    _, scored = model.predict(players, pairs)
    wiped = pairs.with_columns([pl.lit(0.0).alias(c) for c in IDENTIFIER_COLUMNS
                                if c in pairs.columns])
    _, blind = model.predict(players, wiped)
    # (the ring link reads pair scores only; no pair here shares a partner)
    np.testing.assert_array_equal(scored["card_feeding"].to_numpy(), blind["card_feeding"].to_numpy())
    assert not np.array_equal(scored["multi_account"].to_numpy(), blind["multi_account"].to_numpy())


def test_each_general_learner_reads_all_but_the_identifiers() -> None:
    """The three candidate learners, fitted as _fit_one fits them: a feeding learner's
    predictions ignore any change to an identifier column, and a multi-account one's
    do not (the columns are really there to read)."""
    from rummyguard.fraud import models

    players, pairs, pos = _world()
    pf = pair_frame(pairs, players)
    names = FraudModel().pair_features
    x = models.to_matrix(pf, names)
    y = np.array([k in pos["card_feeding"] for k in zip(pf["p1"], pf["p2"], strict=True)])
    reads = [i for i, c in enumerate(names) if c not in IDENTIFIER_COLUMNS]
    ident = [names.index(c) for c in IDENTIFIER_COLUMNS]
    shaken = x.copy()
    shaken[:, ident] = np.random.default_rng(9).normal(size=(len(x), len(ident))) * 5
    for learner in ("boosting", "logistic"):
        blind = models._factory(learner, reads)().fit(x, y)
        np.testing.assert_array_equal(blind.predict_proba(x), blind.predict_proba(shaken))
        seeing = models._factory(learner, None)().fit(x, y)
        assert not np.array_equal(seeing.predict_proba(x), seeing.predict_proba(shaken)), learner


def test_a_feeding_ring_of_strangers_ranks_with_one_persons_accounts() -> None:
    """The feeders who share no device score like those who do (same play, same
    evidence), and above the household that shares a device and does not feed."""
    players, pairs, pos = _world()
    model = FraudModel().fit(players, pairs, {}, pos)
    _, scored = model.predict(players, pairs)
    s = scored["card_feeding"].to_numpy()
    strangers, same_person, household = s[8:16], s[:8], s[16:24]
    assert np.median(strangers) > np.percentile(s[24:], 95)
    assert np.median(strangers) > np.max(household)
    assert abs(np.median(strangers) - np.median(same_person)) < 0.5
