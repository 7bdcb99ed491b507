"""Timeout abuse, measured by the behaviour and not by the log's timing artefacts.

The simulator once pinned an abuser's disconnect to 1 ms before his auto-play, and only
abusers ever dropped; ``auto_disc_*`` counted drops "within 2 s" of the auto-play and lived
on that. Now honest players drop too (long pauses, network trouble) and an abuser's drop
comes after a think time like anyone's. The signals (fraud/features.py) are:

- a timeout on a dropped connection: the player's own disconnect in the *same turn* before
  the auto-play (``auto_disc_rate``, ``auto_disc_share``, ``auto_disc_z``);
- the hand he let the clock run out on, against the population's hands at the same point
  of a game (``auto_hand_z``).

Two worlds:

- hand-built fact rows, to pin down which disconnects count (his own, in that turn) and
  that no time gap matters;
- classic games played by the simulator's own agents: one timeout abuser (intensity 1),
  one honest player with a flaky connection (many long pauses: he drops and times out
  too) and six ordinary honest players. The abuser tops every timeout signal; the flaky
  player's timeouts come at any hand, so his ``auto_hand_z`` stays low although he times
  out on a dropped connection far more often than the ordinary players.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import polars as pl
import pytest
from factkit import facts_db

from rummyguard.fraud.facts import batch_facts
from rummyguard.fraud.features import PLAYER_FEATURES, player_features
from rummyguard.fraud.models import SIGNATURES
from rummyguard.fraud.pipeline import memory_db
from rummyguard.sim.agents import Act, Agent
from rummyguard.sim.brain_classic import ClassicBrain
from rummyguard.sim.driver import Platform
from rummyguard.sim.timing import human_timing

SIGNALS = ("auto_disc_rate", "auto_disc_share", "auto_disc_z", "auto_hand_z")


# -- hand-built facts --------------------------------------------------------------------------


def _move(game: str, seq: int, player: str, kind: str, turn: int, dist: int,
          variant: str = "classic") -> dict[str, Any]:
    auto = kind == "AutoPlayed"
    return {"game_id": game, "seq": seq, "player": player, "seat": "ab".index(player),
            "variant": variant, "type": kind, "ts_ms": 1000 * seq, "think_ms": 1000,
            "turn": turn, "hand_size": 14 if kind in ("Drew", "AutoPlayed") else 15,
            "dist": dist, "difficulty": 1, "auto": auto}


def _drop(game: str, seq: int, player: str, ts_ms: int | None = None) -> dict[str, Any]:
    return {"game_id": game, "seq": seq, "player": player, "event": "disconnect",
            "ts_ms": 1000 * seq if ts_ms is None else ts_ms, "client": "web"}


def _seated(game: str, variant: str = "classic") -> list[dict[str, Any]]:
    return [{"game_id": game, "player": p, "seat": i, "n_seats": 2, "variant": variant,
             "stake": 10, "won": i == 0, "net": 10 if i == 0 else -10, "deal_dist": 8.0,
             "left_game": False, "removed": False, "autoplays": 0, "fresh": 0, "moves": 10,
             "halted": False, "findings": 0} for i, p in enumerate("ab")]


def test_only_his_own_drop_in_the_same_turn_counts() -> None:
    # heads-up a / b. Turn ends: seq 2 (a's discard), 4 (b's auto), 7 (a's discard),
    # 9 (b's auto), 12 (a's auto), 15 (b's auto)
    moves = [
        _move("g", 1, "a", "Drew", 1, 8), _move("g", 2, "a", "Discarded", 2, 8),
        _move("g", 4, "b", "AutoPlayed", 1, 9),   # b dropped at 3, in this turn: counts
        _move("g", 5, "a", "Drew", 3, 7), _move("g", 7, "a", "Discarded", 4, 7),
        _move("g", 9, "b", "AutoPlayed", 2, 9),   # only a dropped in this turn (8): no
        _move("g", 12, "a", "AutoPlayed", 5, 6),  # a dropped at 10, after b's auto: counts
        _move("g", 15, "b", "AutoPlayed", 3, 9),  # b's drop at 14 counts, a's at 13 not
        _move("h", 2, "a", "AutoPlayed", 1, 9, variant="r500"),  # no clock: not counted
    ]
    sessions = [
        _drop("g", 3, "b"),
        _drop("g", 6, "b"),  # during a's turn, before b's turn at 7..9: not b's turn
        _drop("g", 8, "a"),
        _drop("g", 10, "a"),  # after b's auto at 9: a's own turn, counts for a at 12
        _drop("g", 13, "a"), _drop("g", 14, "b", ts_ms=5_000),  # any ts: no gap is measured
        _drop("h", 1, "a"),
    ]
    con = facts_db(moves=moves, sessions=sessions,
                 player_games=_seated("g") + _seated("h", "r500"))
    f = player_features(con)
    row = {r["player"]: r for r in f.to_dicts()}
    assert (row["a"]["n_auto_disc"], row["a"]["n_clock_turns"]) == (1, 3)
    assert (row["b"]["n_auto_disc"], row["b"]["n_clock_turns"]) == (2, 3)
    assert row["a"]["auto_disc_rate"] == pytest.approx(1 / 3)
    assert row["b"]["auto_disc_rate"] == pytest.approx(2 / 3)
    # the population: 3 of 4 classic auto-plays on a dropped connection (q), 3 of 6 turns (p)
    q = 3 / 4
    assert row["a"]["auto_disc_share"] == pytest.approx((1 + 2 * q) / (1 + 2))
    assert row["b"]["auto_disc_share"] == pytest.approx((2 + 2 * q) / (3 + 2))
    assert row["b"]["auto_disc_z"] == pytest.approx((2 - 3 * 0.5) / (3 * 0.25) ** 0.5)


def test_the_hand_at_the_timeout_is_measured_against_hands_at_the_same_point() -> None:
    # the population's hands before a draw at turns 0..1 (cell 0) average 5, variance 1
    # after the floor; b times out there on a hand of 9, a on a hand of 5
    moves = [_move("g", i, "ab"[i % 2], "Drew", 1, 4 + (i % 3)) for i in range(1, 13)]
    moves += [_move("g", 20, "a", "AutoPlayed", 1, 5), _move("g", 21, "b", "AutoPlayed", 1, 9)]
    f = player_features(facts_db(moves=moves, player_games=_seated("g")))
    z = dict(zip(f.get_column("player"), f.get_column("auto_hand_z"), strict=True))
    mean = sum(4 + (i % 3) for i in range(1, 13)) / 12
    assert z["b"] > 2.5 and z["b"] > z["a"]
    assert z["a"] == pytest.approx(5 - mean, abs=1e-9)


def test_registration() -> None:
    for name in SIGNALS:
        assert name in PLAYER_FEATURES
        assert name in SIGNATURES["timeout_abuse"]


# -- the simulator's own agents ----------------------------------------------------------------
PLAYERS = [f"p{i}" for i in range(8)]
ABUSER, FLAKY = "p0", "p1"
SEED = 700


def _agent(pid: str, stream: int) -> Agent:
    rng = random.Random(SEED * 7 + stream)
    timing = human_timing(rng, 0.6)
    if pid == FLAKY:  # calls, other apps: a long pause on 8 % of his moves
        timing = dataclasses.replace(timing, pause_prob=0.08, pause_median_ms=100_000.0)
    acts = {"timeout_abuse": Act("timeout_abuse", "ti1", 1.0, "member")} if pid == ABUSER else {}
    return Agent(pid, 0.6, "casual", timing, rng, ClassicBrain(), acts=acts)


@pytest.fixture(scope="module")
def simulated() -> tuple[pl.DataFrame, pl.DataFrame, set[tuple[str, int]]]:
    """20 rounds of two classic tables of four, the seats rotating (the abuser meets
    everyone); the players' features, the moves, and the planted timeout events."""
    games, planted = [], set()
    for g in range(20):
        rot = PLAYERS[g % 8:] + PLAYERS[:g % 8]
        for k, seats in enumerate((rot[:4], rot[4:])):
            game_id = f"g{g:02d}-{k}"
            platform = Platform(game_id, "classic", seats, seed=SEED + 2 * g + k, dealer=g % 4,
                                start_ms=1_795_000_000_000 + g * 900_000)
            games.append(platform.run({p: _agent(p, 1000 * (2 * g + k) + i)
                                       for i, p in enumerate(seats)}))
            planted |= {(game_id, seq) for seq, _pid, mech in platform.planted
                        if mech == "timeout_abuse"}
    facts = batch_facts(games)
    moves = pl.from_arrow(facts["moves"])
    assert isinstance(moves, pl.DataFrame)
    return player_features(memory_db(facts)), moves, planted


def test_every_auto_play_carries_the_hand_it_timed_out_on(simulated: Any) -> None:
    _f, moves, planted = simulated
    auto = moves.filter(pl.col("auto"))
    assert auto.height >= 30
    assert (auto.get_column("dist") >= 0).all()
    assert (moves.filter(pl.col("type") == "Drew").get_column("dist") >= 0).all()
    # the abuser's planted auto-plays are auto rows of his
    keys = set(zip(auto.get_column("game_id"), auto.get_column("seq"), strict=True))
    planted_autos = planted & keys
    assert len(planted_autos) >= 15


def test_the_abuser_tops_every_timeout_signal(simulated: Any) -> None:
    f, _moves, _planted = simulated
    row = {r["player"]: r for r in f.to_dicts()}
    honest = [p for p in PLAYERS if p != ABUSER]
    for name in SIGNALS:
        assert all(row[ABUSER][name] > row[p][name] for p in honest), (name, row)
    assert row[ABUSER]["auto_disc_z"] > 5.0
    assert row[ABUSER]["auto_hand_z"] > 2.0
    # thin evidence stays near 0: nobody honest reaches the abuser's hand evidence
    assert all(abs(row[p]["auto_hand_z"]) < 2.0 for p in honest)


def test_a_flaky_connection_is_not_a_bad_hand(simulated: Any) -> None:
    """The honest player with many long pauses drops and times out far more than the
    ordinary players — the count alone cannot tell him from an abuser — but his timeouts
    come at any hand."""
    f, _moves, _planted = simulated
    row = {r["player"]: r for r in f.to_dicts()}
    ordinary = [p for p in PLAYERS if p not in (ABUSER, FLAKY)]
    assert row[FLAKY]["n_auto_disc"] >= 4
    assert all(row[FLAKY]["n_auto_disc"] > row[p]["n_auto_disc"] for p in ordinary)
    assert row[FLAKY]["auto_hand_z"] < 1.0
    assert row[ABUSER]["auto_hand_z"] - row[FLAKY]["auto_hand_z"] > 2.0
