"""Unseen mechanisms (issue 8, leave-one-mechanism-out): the ``unseen`` score.

A supervised ``any`` model trained without bots cannot know that a metronome think time
is fraud; the product's answer is its unsupervised detector. Pinned here:

- :class:`EvidenceTail` (the player-level detector): a robust z per evidence signal with
  a scale per side (a long right tail does not set the left side's unit; a zero-inflated
  signal gets a scale from its deviations), missing signals count 0, the score is the
  largest |z|, and it is fitted without labels;
- ``unseen`` = the larger of the ``any`` probability's and the anomaly's population
  percentiles, on both levels, from ``predict`` and from a model-less scan;
- on hand-made facts, a metronome player that no training label calls a bot ranks above
  every honest player on the anomaly and to the top of ``unseen``, where ``any`` alone
  ranks him below most honest players; ``leave_one_out`` ranks the held-out bots and
  hidden-card cheaters by ``unseen`` (far above chance on these worlds, where ``any``
  alone is near it) and reports ``any`` alone beside it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from factkit import facts_db

from rummyguard.fraud.evaluate import World, leave_one_out, render_markdown
from rummyguard.fraud.features import PLAYER_FEATURES
from rummyguard.fraud.labels import parse_labels
from rummyguard.fraud.models import (
    EVIDENCE_SIGNALS,
    EvidenceTail,
    FraudModel,
    anomaly_detector,
    percentile,
    unseen_score,
    unsupervised_scores,
)

# -- the evidence tail on a hand-made matrix ------------------------------------------------------


def test_evidence_tail_scales_each_side_by_its_own_deviations() -> None:
    # column 0: symmetric (deviations 1, 2 each side); column 1: a long right tail
    # (deviations below: 1, 1; above: 4, 8); column 2: zero-inflated (no timeout = 0)
    x = np.array([
        [-2.0, -1.0, 0.0],
        [-1.0, -1.0, 0.0],
        [0.0, 0.0, 0.0],
        [1.0, 4.0, 0.0],
        [2.0, 8.0, 3.0],
    ])
    tail = EvidenceTail([0, 1, 2]).fit(x)
    assert tail.center_.tolist() == [0.0, 0.0, 0.0]
    assert tail.lower_[0] == pytest.approx(1.4826 * 1.5)
    assert tail.upper_[0] == pytest.approx(1.4826 * 1.5)
    assert tail.lower_[1] == pytest.approx(1.4826 * 1.0)
    assert tail.upper_[1] == pytest.approx(1.4826 * 6.0)
    # no value below the median: the lower side borrows the upper one's scale
    assert tail.upper_[2] == pytest.approx(1.4826 * 3.0) == tail.lower_[2]
    # -3 on the short side is further out than +12 on the long one
    z = tail.z(np.array([[0.0, -3.0, 0.0], [0.0, 12.0, 0.0]]))
    assert z[0, 1] == pytest.approx(-3.0 / 1.4826)
    assert z[1, 1] == pytest.approx(12.0 / (1.4826 * 6.0))
    assert tail.score(np.array([[0.0, -3.0, 0.0]]))[0] > tail.score(np.array([[0.0, 12.0, 0.0]]))[0]
    # the score is the largest |z|; score_samples is its negative (lower = more abnormal)
    row = np.array([[3.0, -2.0, 1.5]])
    assert tail.score(row)[0] == pytest.approx(max(3.0 / (1.4826 * 1.5), 2.0 / 1.4826,
                                                   1.5 / (1.4826 * 3.0)))
    assert tail.score_samples(row)[0] == -tail.score(row)[0]


def test_evidence_tail_missing_and_constant_signals_score_zero() -> None:
    x = np.array([[1.0, np.nan, 5.0], [2.0, np.nan, 5.0], [3.0, np.nan, 5.0]])
    tail = EvidenceTail([0, 1, 2]).fit(x)
    out = tail.z(np.array([[2.0, 7.0, 9.0], [np.nan, np.nan, np.nan]]))
    assert out.tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    assert tail.score(np.zeros((0, 3))).shape == (0,)


def test_player_detector_reads_the_evidence_signals() -> None:
    det = anomaly_detector("player")
    assert isinstance(det, EvidenceTail)
    assert [PLAYER_FEATURES[c] for c in det.columns] == list(EVIDENCE_SIGNALS)
    assert "think_sd_all" in EVIDENCE_SIGNALS and "hc_lr" in EVIDENCE_SIGNALS
    assert not isinstance(anomaly_detector("pair"), EvidenceTail)


def test_unseen_is_the_larger_percentile() -> None:
    anomaly = np.array([0.25, 0.5, 0.75, 1.0])
    got = unseen_score(np.array([0.9, 0.1, 0.1, 0.2]), anomaly)
    # any percentiles: 1.0, (1+2)/2/4 = 0.375 (tied), 0.375, 0.75
    assert got.tolist() == [1.0, 0.5, 0.75, 1.0]
    assert unseen_score(None, anomaly) is anomaly
    assert percentile(np.array([3.0, np.nan, 1.0])).tolist() == pytest.approx([1.0, 1 / 3, 2 / 3])


# -- hand-made facts: think times and hidden-card discards ----------------------------------------
CLASSIC = {"Drew": 1500.0, "Discarded": 3000.0}


def _moves(player: str, game: str, n: int, sigma: float, seed: int) -> list[dict[str, Any]]:
    """``n`` moves per kind, log-normal think times around each kind's median."""
    rng = np.random.default_rng(seed)
    out = []
    for k, (kind, median) in enumerate(CLASSIC.items()):
        for i, lt in enumerate(rng.normal(math.log(median), sigma, n)):
            out.append({"game_id": game, "seq": 1000 * k + i, "player": player, "seat": 0,
                        "variant": "classic", "type": kind, "ts_ms": 0,
                        "think_ms": int(math.exp(lt)), "turn": i, "hand_size": 10, "dist": 3,
                        "difficulty": 1, "auto": False})
    return out


def _discards(player: str, game: str, xs: list[float]) -> list[dict[str, Any]]:
    """Next-seat discards that were free choices (two cards worth the same to him, the
    public record flat) whose other option would have helped the next player by ``x``
    more than the card chosen: the hidden-card evidence ``hc_lr`` reads."""
    return [{"game_id": game, "seq": 5000 + i, "player": player, "target": "zz", "offset": 1,
             "card": 0, "gain": 0.0, "alt_gain": x, "keep_gain": 0.0, "tie_alt": x,
             "tie_n": 2, "pub_gain": 0.0, "pub_tie_alt": 0.0, "pub_flat": True,
             "taken": False} for i, x in enumerate(xs)]


def _world(seed: int, bots: list[str], cheaters: list[str], n_honest: int = 40,
           labelled: tuple[str, ...] = ("bot", "hidden_card")) -> World:
    """Honest players (spread think times, discards of excess +-0.5), metronome ``bots``
    (think-time spread 0.05) and hidden-card ``cheaters`` (a steady excess of 0.3 over
    300 discards); two players to a game, so pairs exist. ``labelled``: the mechanisms
    the labels name (each with one planted act per player, in his game)."""
    honest = [f"h{i:02d}" for i in range(n_honest)]
    everyone = [*honest, *bots, *cheaters]
    games = {p: f"w{seed}-g{i // 2}" for i, p in enumerate(everyone)}
    moves: list[dict[str, Any]] = []
    discards: list[dict[str, Any]] = []
    rng = np.random.default_rng(seed)
    for i, p in enumerate(everyone):
        moves += _moves(p, games[p], 40, 0.05 if p in bots else 0.55, seed * 1000 + i)
        xs = [0.3] * 300 if p in cheaters else rng.choice([-0.5, 0.5], 40).tolist()
        discards += _discards(p, games[p], xs)
    seats = [{"game_id": games[p], "player": p, "seat": i % 2, "n_seats": 2,
              "variant": "classic", "stake": 10, "won": i % 2 == 0, "net": 10 if i % 2 == 0 else -10,
              "deal_dist": 8.0, "left_game": False, "removed": False, "autoplays": 0, "fresh": 0,
              "moves": 80, "halted": False, "findings": 0} for i, p in enumerate(everyone)]
    con = facts_db(moves=moves, discards=discards, player_games=seats)
    mechs, planted = [], []
    for mech, members in (("bot", bots), ("hidden_card", cheaters)):
        if mech not in labelled:
            continue
        for p in members:
            mechs.append({"player_id": p, "mechanism": mech, "group_id": p, "intensity": 0.5,
                          "role": "member"})
            planted.append({"game_id": games[p], "seq": 1000, "player_id": p,
                            "mechanism": mech, "group_id": p})
    truth = parse_labels({"seed": seed, "args": {}, "version": 1, "players": [],
                          "hard_negatives": [], "faults": [], "mechanisms": mechs,
                          "planted": planted})
    return World.from_con(con, truth)


@pytest.fixture(scope="module")
def train_no_bots() -> World:
    """Training world: hidden-card cheaters labelled, a metronome nobody labels is absent."""
    return _world(1, bots=[], cheaters=["c0", "c1", "c2", "c3"], labelled=("hidden_card",))


def _by_player(frame: pl.DataFrame, col: str) -> dict[str, float]:
    return dict(zip(frame.get_column("player").to_list(), frame.get_column(col).to_list(),
                    strict=True))


def test_an_unseen_metronome_ranks_above_every_honest_player(train_no_bots: World) -> None:
    """No bot in training: the ``any`` model learned hidden-card evidence only, so the
    metronome's ``any`` probability is an honest player's; the anomaly puts him above
    every honest player and ``unseen`` at the top. (``unseen`` is a max of two ranks, so
    the honest player the ``any`` model likes best shares the metronome's rank when the
    metronome is second on the anomaly: at most one honest player may tie him.)"""
    model = FraudModel().fit(train_no_bots.players, train_no_bots.pairs,
                             {"hidden_card": {"c0", "c1", "c2", "c3"}}, {})
    assert "bot" not in model.supervised and "any_player" in model.supervised
    scored = _world(2, bots=["m0"], cheaters=["c9"], labelled=())
    ps, qs = model.predict(scored.players, scored.pairs)
    assert "unseen" in qs.columns and qs.height > 0
    unseen, anyp, anomaly = (_by_player(ps, c) for c in ("unseen", "any_player", "anomaly"))
    honest = [p for p in unseen if p.startswith("h")]
    assert anomaly["m0"] > max(anomaly[p] for p in honest)
    assert unseen["m0"] >= max(unseen[p] for p in honest)
    assert sum(unseen[p] >= unseen["m0"] for p in honest) <= 1
    assert unseen["m0"] >= (len(unseen) - 1) / len(unseen)  # first or second of all
    # the supervised half alone does not single him out: below half the honest players
    assert sum(anyp[p] > anyp["m0"] for p in honest) > len(honest) / 2


def test_a_scan_without_a_model_ranks_the_metronome_first() -> None:
    scored = _world(3, bots=["m0"], cheaters=[], labelled=())
    ps, qs = unsupervised_scores(scored.players, scored.pairs)
    assert ps.get_column("unseen").to_list() == ps.get_column("anomaly").to_list()
    assert ps.sort("unseen", descending=True).get_column("player")[0] == "m0"
    assert "unseen" in qs.columns


def test_leave_one_out_finds_held_out_bots_and_cheaters() -> None:
    """Each held-out mechanism is ranked by the refitted model's ``unseen`` score: the
    bots (trained on cheaters only) and the cheaters (trained on bots only) are found
    far above chance (2 / 42), where ``any`` alone, reported beside it, is near chance."""
    train = _world(4, bots=["b0", "b1", "b2"], cheaters=["c0", "c1", "c2"])
    test = _world(5, bots=["b7", "b8"], cheaters=["c7", "c8"])
    out = leave_one_out(train, test, boots=0)
    for m in ("bot", "hidden_card"):
        assert out[m]["scorer"] == "unseen"
        assert out[m]["positives"] == 2 and out[m]["n"] == 42
        assert out[m]["chance_pr_auc"] == pytest.approx(2 / 42)
        assert out[m]["pr_auc"] >= 0.5
        assert out[m]["any_only"]["pr_auc"] < 0.15
    md = render_markdown({"test_world": {"players": 44, "fraud_players": 4, "fraud_share": 0.1,
                                         "pairs": 22, "seed": 5},
                          "train_world": {"seed": 4}, "mechanisms": {},
                          "leave_one_out": out})
    assert "`any` alone PR-AUC" in md
    bot = out["bot"]
    assert (f"| bot | player | 2 / 42 | {bot['pr_auc']:.3f} | 0.0476 | {bot['p_at_10']:.2f} | "
            f"{bot['recall_at_1pct_fpr']:.3f} | {bot['any_only']['pr_auc']:.3f} |") in md
