"""Rummies held back (issue 8, session 12): the ``discards.out_held`` fact and the pair
signals ``hold_z`` / ``hold_near_z`` built on it, and ``dump_z``'s fourth lever.

Soft play's "delay going out" (a player with a Rummy in hand discards instead while his
partner is about to go out) and a dumper's thrown game both leave one trace: a decision
where the player could have declared and did not. The fact is checked against an
independent search (the simulator's fast declaration finder, sim/fastpaths.py, itself
tested against the engine's), replaying simulated classic games event by event; the
signals on hand-built fact stores (tests/factkit.py) where every number is known.
"""

from __future__ import annotations

import math
from typing import Any

import orjson
import polars as pl
import pytest
from factkit import facts_db

from rummyguard.fraud.facts import game_facts
from rummyguard.fraud.features import PAIR_FEATURES, pair_features
from rummyguard.fraud.flags import evidence_for
from rummyguard.fraud.models import SIGNATURES
from rummyguard.replay.engine import GameEngine
from rummyguard.sim.fastpaths import install


def _classic_games(games: int, seed: int) -> list[list[dict[str, Any]]]:
    from rummyguard.sim.world import WorldConfig, build_world, run_world

    chunks: list[bytes] = []
    run_world(build_world(WorldConfig(games=games, seed=seed, variants=("classic",), players=8)),
              chunks.append)
    out: dict[str, list[dict[str, Any]]] = {}
    for line in b"".join(chunks).splitlines():
        if line:
            e = orjson.loads(line)
            out.setdefault(e["game_id"], []).append(e)
    return list(out.values())


def _oracle(events: list[dict[str, Any]]) -> dict[int, int]:
    """seq -> expected ``out_held`` for each discard or declaration after which the
    player could have gone out: 1 (he discarded), 0 (he declared)."""
    expected: dict[int, int] = {}
    could: dict[str, str | None] = {"who": None}

    def observe(engine: GameEngine, event: dict[str, Any]) -> None:
        st = engine.variant
        if st is None or event["type"] == "GameCreated":
            return
        kind, actor = event["type"], event["actor"]
        if kind in ("Discarded", "DeclaredRummy") and could["who"] == actor:
            expected[event["seq"]] = int(kind == "Discarded")
        if kind == "DeclaredRummy":
            expected[event["seq"]] = 0
        if kind in ("Drew", "RoundStarted"):
            if not getattr(st, "_rg_fast", False):
                install(st)  # the simulator's search: another implementation of the rule
                st._rg_fast = True  # type: ignore[attr-defined]
            seat = st.current
            full = seat >= 0 and sum(st.hands[seat]) == 15
            could["who"] = st.player(seat) if full and st.find_declaration(seat) else None
        elif actor != "system" and kind not in ("PlayerConnected", "PlayerDisconnected"):
            could["who"] = None

    engine = GameEngine(verify_hashes=False, observer=observe)
    for e in events:
        engine.apply(e)
    return expected


def test_out_held_marks_every_rummy_held_back_and_every_declaration() -> None:
    held = declared = 0
    for events in _classic_games(150, seed=29):
        expected = _oracle(events)
        rows = game_facts(events)["discards"].to_pylist()
        got: dict[int, set[Any]] = {}
        for r in rows:
            got.setdefault(r["seq"], set()).add(r["out_held"])
            if r["out_held"] is None:
                assert r["target_dist"] is None
            else:
                assert 0 <= r["target_dist"] <= 14
        for seq, values in got.items():
            assert values == {expected.get(seq)}, (events[0]["game_id"], seq)
        held += sum(v == 1 for v in expected.values())
        declared += sum(v == 0 for v in expected.values())
    # weak players miss some Rummies: both kinds of decision occur
    assert held >= 3 and declared >= 50


# -- the signals, on hand-built facts -------------------------------------------------------------
def _seat(game: str, players: tuple[str, ...]) -> list[dict[str, Any]]:
    return [{"game_id": game, "player": p, "seat": i, "n_seats": len(players),
             "variant": "classic", "table_id": "t", "stake": 10, "start_ms": 0,
             "end_ms": 60_000, "won": i == 0, "net": 10 if i == 0 else -5, "deal_dist": 6.0,
             "left_game": False, "removed": False, "autoplays": 0, "fresh": 0, "moves": 20,
             "halted": False, "findings": 0} for i, p in enumerate(players)]


def _decision(game: str, seq: int, a: str, targets: dict[str, int], held: bool) -> list[dict[str, Any]]:
    """a's could-go-out decision: one discards row per other seat (target -> its distance)."""
    return [{"game_id": game, "seq": seq, "player": a, "target": t, "offset": k + 1, "card": 5,
             "gain": 0, "alt_gain": 0.0, "keep_gain": 0, "tie_alt": 0.0, "tie_n": 1,
             "pub_gain": 0, "pub_tie_alt": 0.0, "pub_flat": True, "taken": False,
             "out_held": int(held), "target_dist": d} for k, (t, d) in enumerate(targets.items())]


def _row(pairs: pl.DataFrame, p1: str, p2: str) -> dict[str, Any]:
    rows = pairs.filter((pl.col("p1") == p1) & (pl.col("p2") == p2)).to_dicts()
    assert len(rows) == 1
    return rows[0]


def test_hold_signals_are_score_statistics_against_the_players_own_rate() -> None:
    seated: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    # the population: strangers go out at 19 of 20 chances (1 held)
    for i in range(20):
        g = f"s{i}"
        seated += _seat(g, ("x", "y"))
        rows += _decision(g, 1, "x", {"y": 5}, held=i == 0)
    # s (soft) holds 3 of 4 chances while p sits within two cards of going out, and goes
    # out at all 6 chances where only a stranger sits
    for i in range(4):
        g = f"n{i}"
        seated += _seat(g, ("s", "p", "x"))
        rows += _decision(g, 1, "s", {"p": 2, "x": 6}, held=i < 3)
    for i in range(6):
        g = f"o{i}"
        seated += _seat(g, ("s", "y"))
        rows += _decision(g, 1, "s", {"y": 6}, held=False)
    pairs = pair_features(facts_db(player_games=seated, discards=rows))
    sp = _row(pairs, "p", "s")
    p0 = 4 / 30  # the population's rate: 1 + 3 holds of 30 decisions
    p = (3 - 3 + 10 * p0) / (10 - 4 + 10)  # s's rate at his 6 other decisions, shrunk by 10
    z = (3 - 4 * p) / math.sqrt(4 * p * (1 - p))
    assert sp["hold_near_z"] == pytest.approx(z)
    assert sp["hold_z"] == pytest.approx(z)  # p was within two cards at each of them
    assert sp["hold_n"] == 4
    assert z > 3
    # the stranger at those tables: s held with x seated too, but x was never close
    sx = _row(pairs, "s", "x")
    assert sx["hold_near_z"] == 0  # never within two cards: no near decision at all
    assert sx["hold_z"] == pytest.approx(z)  # seated: hold_z cannot tell him from p
    # honest strangers among themselves: their one miss is no evidence
    assert abs(_row(pairs, "x", "y")["hold_z"]) < 1.5
    # the dumper's fourth lever: with no other lever, dump_z is hold_z over sqrt(4)
    assert sp["dump_z"] == pytest.approx(sp["hold_z"] / 2)


def test_registration() -> None:
    assert {"hold_z", "hold_near_z", "hold_n"} <= set(PAIR_FEATURES)
    assert "hold_near_z" in SIGNATURES["soft_play"]
    assert "hold_z" in SIGNATURES["chip_dumping"]


def test_a_held_rummy_is_soft_play_and_dumping_evidence() -> None:
    seated = _seat("g1", ("s", "p", "x")) + _seat("g2", ("s", "p", "x"))
    rows = (_decision("g1", 7, "s", {"p": 4, "x": 6}, held=True)
            + _decision("g2", 9, "s", {"p": 1, "x": 6}, held=True)
            + _decision("g2", 12, "x", {"s": 3, "p": 2}, held=True))  # not the pair's
    con = facts_db(player_games=seated, discards=rows)
    for mech in ("soft_play", "chip_dumping"):
        ev = evidence_for(con, mech, ["p", "s"])
        held = [e for e in ev if "could have declared Rummy" in e["what"]]
        # the partner closest to going out first; x's hold is not this pair's evidence
        assert [(e["game_id"], e["seq"]) for e in held] == [("g2", 9), ("g1", 7)], mech
        assert held[0]["what"] == ("s could have declared Rummy and discarded instead, "
                                   "with p at meld distance 1")
