"""Chip dumping measured by its behaviour (issue 8, session 4): ``dump_z``.

Since the lobby seats colluders with their partner most of their games and honest
friends likewise, co-seating no longer tells them apart; what a dumper does at the table
does. ``dump_z`` pools his three levers in his direction (dumper a -> receiver b): a walks
out with b seated (against the population's leaving rate), a's discards help b's hidden
hand beyond his options (against the population's null), and b takes a's discards beyond
b's own take rate on *other* players' discards at the same pile-top gain. The tests build
fact stores by hand (tests/factkit.py) so every number is known:

- each lever alone gives exactly its own directed z over sqrt(4) (four levers: the fourth,
  Rummies held back, in tests/test_fraud_hold_signals.py) (the formula, and that
  the receiver's take is counted in the dumper's direction);
- a dumping pair outranks an honest pair that sits together just as often;
- the chip-dumping model, with few training pairs, is the pooled z alone.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from factkit import facts_db
from modelkit import coarse

from rummyguard.fraud.features import PAIR_FEATURES, PLAYER_FEATURES, pair_features
from rummyguard.fraud.models import POOLED, POOLED_BELOW, SIGNATURES, FraudModel

STRANGERS = ("s1", "s2", "s3", "s4")


def _seat(game: str, players: tuple[str, ...], left: str | None = None,
          winner: str | None = None) -> list[dict[str, Any]]:
    """A classic table's ``player_games`` rows (equal deals; ``left`` walked out)."""
    win = winner or players[0]
    return [{"game_id": game, "player": p, "seat": i, "n_seats": len(players),
             "variant": "classic", "table_id": "t", "stake": 10, "start_ms": 0,
             "end_ms": 60_000, "won": p == win, "net": 10 if p == win else -5,
             "deal_dist": 6.0, "left_game": p == left, "removed": False, "autoplays": 0,
             "fresh": 0, "moves": 20, "halted": False, "findings": 0}
            for i, p in enumerate(players)]


def _discard(game: str, seq: int, a: str, b: str, gain: int, alt: float) -> dict[str, Any]:
    """a's discard as seen by b, seated next (a free choice of 3 equal options)."""
    return {"game_id": game, "seq": seq, "player": a, "target": b, "offset": 1, "card": 5,
            "gain": gain, "alt_gain": alt, "keep_gain": 0, "tie_alt": alt, "tie_n": 3,
            "pub_gain": 0, "pub_tie_alt": 0.0, "pub_flat": True, "taken": False}


def _draw(game: str, seq: int, player: str, took: bool, src: str) -> dict[str, Any]:
    """player's draw over a pile top of meld gain 2 that ``src`` discarded."""
    return {"game_id": game, "seq": seq, "player": player,
            "source": "discard" if took else "stock", "ncards": 1, "gain": 2 if took else 0,
            "pile_gain": 2, "stock_gain": 0, "from_player": src}


def _row(pairs: pl.DataFrame, p1: str, p2: str) -> dict[str, Any]:
    rows = pairs.filter((pl.col("p1") == p1) & (pl.col("p2") == p2)).to_dicts()
    assert len(rows) == 1
    return rows[0]


def _stranger_games(n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                     list[dict[str, Any]]]:
    """The population: strangers' games, discards of no excess on average, pile tops
    of gain 2 taken half the time."""
    seated: list[dict[str, Any]] = []
    discards: list[dict[str, Any]] = []
    draws: list[dict[str, Any]] = []
    for i in range(n):
        g = f"s{i}"
        a, b, c = (STRANGERS[(i + k) % 4] for k in range(3))
        seated += _seat(g, (a, b, c))
        discards += [_discard(g, 1, a, b, 1 + i % 2, 1.5), _discard(g, 3, b, c, 1 + (i + 1) % 2, 1.5)]
        draws += [_draw(g, 2, b, i % 2 == 0, a), _draw(g, 4, c, i % 2 == 1, b)]
    return seated, discards, draws


def test_each_lever_alone_is_its_directed_z_over_sqrt4() -> None:
    seated, _, _ = _stranger_games(20)
    # leaving only: d walks out of 3 of 6 games with r seated; strangers leave at times
    games = [_seat(f"g{i}", ("d", "r", STRANGERS[i % 4]), left="d" if i < 3 else None)
             for i in range(6)]
    extra = [_seat(f"x{i}", ("s1", "s2", "s3"), left="s1" if i == 0 else None) for i in range(10)]
    rows = seated + [r for g in games + extra for r in g]
    pairs = pair_features(facts_db(player_games=rows))
    dr = _row(pairs, "d", "r")
    assert dr["left_z"] > 3
    assert dr["dump_z"] == pytest.approx(dr["left_z"] / math.sqrt(4))

    # taking only: r takes every pile top d discards, none of the strangers' (same gain)
    seated, _, _ = _stranger_games(20)
    draws = []
    for i in range(8):
        g = f"g{i}"
        seated += _seat(g, ("d", "r", STRANGERS[i % 4]))
        draws += [_draw(g, 2, "r", True, "d"), _draw(g, 4, "r", False, STRANGERS[i % 4])]
    pairs = pair_features(facts_db(player_games=seated, pickups=draws))
    dr = _row(pairs, "d", "r")
    # r (the taker) -> d: the take is counted in d's direction, d -> r, as the dumper's
    p = (0 + 20 * 0.5) / (8 + 20)  # r's rate on others' discards, shrunk to the population's
    take = (8 - 8 * p) / math.sqrt(8 * p * (1 - p))
    assert dr["take_z_dir"] == pytest.approx(take)
    assert dr["dump_z"] == pytest.approx(take / math.sqrt(4))

    # both levers, one direction: d walks out of two of those games as well. Pooled in d's
    # direction, not the stronger of two directions (r's take is d's evidence)
    seated = [dict(r, left_game=r["player"] == "d" and r["game_id"] in ("g1", "g5"))
              for r in seated]
    pairs = pair_features(facts_db(player_games=seated, pickups=draws))
    dr = _row(pairs, "d", "r")
    assert dr["left_z"] > 1 and dr["take_z_dir"] == pytest.approx(take)
    assert dr["dump_z"] == pytest.approx((dr["left_z"] + take) / math.sqrt(4))


def test_a_dumping_pair_outranks_honest_friends_seated_as_often() -> None:
    seated, discards, draws = _stranger_games(40)
    for i in range(12):
        s = STRANGERS[i % 4]
        # the dumping pair: d feeds r at a cost (gain 2 where his options averaged 0.5),
        # r takes it and passes on strangers' cards of the same value; d walks out twice
        g = f"d{i}"
        seated += _seat(g, ("d", "r", s), left="d" if i in (3, 8) else None, winner="r")
        discards += [_discard(g, 1, "d", "r", 2, 0.5), _discard(g, 3, "r", s, 1, 1.5)]
        draws += [_draw(g, 2, "r", True, "d"), _draw(g, 4, s, i % 2 == 0, "r")]
        draws += [_draw(g, 6, "r", False, s)]
        # honest friends: same co-seating, play like the population
        g = f"f{i}"
        seated += _seat(g, ("f1", "f2", s), winner="f2" if i % 2 else "f1")
        discards += [_discard(g, 1, "f1", "f2", 1 + i % 2, 1.5), _discard(g, 3, "f2", s, 1, 1.5)]
        draws += [_draw(g, 2, "f2", i % 2 == 0, "f1"), _draw(g, 4, s, i % 2 == 1, "f2")]
        draws += [_draw(g, 6, "f2", i % 2 == 1, s)]
    pairs = pair_features(facts_db(player_games=seated, discards=discards, pickups=draws))
    dump, friends = _row(pairs, "d", "r"), _row(pairs, "f1", "f2")
    assert dump["co_games"] == friends["co_games"] == 12
    assert dump["dump_z"] > 4
    assert abs(friends["dump_z"]) < 1.5
    # the pooled z is stronger than any one of its levers
    assert dump["dump_z"] > max(dump["left_z"], dump["take_z_dir"], dump["gain_z"])
    strangers = pairs.filter(pl.col("p1").is_in(STRANGERS) & pl.col("p2").is_in(STRANGERS))
    assert strangers.get_column("dump_z").max() < dump["dump_z"] / 2


def test_registration() -> None:
    assert "dump_z" in PAIR_FEATURES
    assert SIGNATURES["chip_dumping"][0] == "dump_z"
    assert POOLED["chip_dumping"] == "dump_z"


def test_thin_chip_dumping_positives_are_scored_by_dump_z() -> None:
    """With fewer than POOLED_BELOW labelled pairs the chip-dumping model is a calibrated
    increasing map of ``dump_z`` alone (a learner over ten signals cannot be fitted from
    a dozen pairs, most of which never dumped in the training world)."""
    rng = np.random.default_rng(3)
    n, n_pos = 800, 12
    data: dict[str, Any] = {c: rng.normal(size=n) for c in PAIR_FEATURES}
    y = np.zeros(n, dtype=bool)
    y[:n_pos] = True
    data["dump_z"] = np.where(y, 3.0, 0.0) + rng.normal(size=n)
    data["lose_z"] = np.where(y, 0.0, 1.0) + rng.normal(size=n)  # a misleading signal
    names, others = [f"q{i:03d}" for i in range(n)], [f"z{i:03d}" for i in range(n)]
    pairs = pl.DataFrame({"p1": names, "p2": others, **coarse(data)})
    players = pl.DataFrame({"player": names + others,
                            **{c: np.zeros(2 * n) for c in PLAYER_FEATURES}})
    keys = set(zip(names[:n_pos], others[:n_pos], strict=True))
    assert n_pos < POOLED_BELOW
    model = FraudModel().fit(players, pairs, {}, {"chip_dumping": keys})
    assert model.trained_on["chip_dumping"]["learner"] == "pooled"
    _, qs = model.predict(players, pairs)
    ranked = qs.join(pairs.select("p1", "p2", "dump_z"), on=["p1", "p2"]).sort("dump_z")
    assert (np.diff(ranked.get_column("chip_dumping").to_numpy()) >= -1e-12).all()


@pytest.mark.parametrize("pooled_wins", [True, False])
def test_plentiful_positives_race_the_pooled_z_against_the_learners(pooled_wins: bool) -> None:
    """With POOLED_BELOW or more labelled pairs the pooled z is no longer fixed: it is one
    candidate of the training world's cross-validation, kept where it scores best and
    replaced by a learner where the other signals carry what it misses."""
    rng = np.random.default_rng(11)
    n, n_pos = 1500, POOLED_BELOW + 10
    data: dict[str, Any] = {c: rng.normal(size=n) for c in PAIR_FEATURES}
    y = np.zeros(n, dtype=bool)
    y[:n_pos] = True
    if pooled_wins:  # dump_z alone separates; every other column is noise
        data["dump_z"] = np.where(y, 3.0, 0.0) + rng.normal(size=n)
    else:  # dump_z is noise; two signature columns together separate
        data["left_z"] = np.where(y, 2.5, 0.0) + rng.normal(size=n)
        data["throw_z"] = np.where(y, 2.5, 0.0) + rng.normal(size=n)
    names, others = [f"q{i:04d}" for i in range(n)], [f"z{i:04d}" for i in range(n)]
    pairs = pl.DataFrame({"p1": names, "p2": others, **coarse(data)})
    players = pl.DataFrame({"player": names + others,
                            **{c: np.zeros(2 * n) for c in PLAYER_FEATURES}})
    keys = set(zip(names[:n_pos], others[:n_pos], strict=True))
    model = FraudModel().fit(players, pairs, {}, {"chip_dumping": keys})
    trained = model.trained_on["chip_dumping"]
    assert "pooled" in trained["cv_ap"]  # raced, not fixed
    if pooled_wins:
        assert trained["learner"] == "pooled"
    else:
        assert trained["learner"] != "pooled"
        assert trained["cv_ap"][trained["learner"]] > trained["cv_ap"]["pooled"] + 0.2
