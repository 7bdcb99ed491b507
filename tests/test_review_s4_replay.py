"""Review of the replay hot paths (session 4): the classic Drew/Discarded shortcuts must
judge a move exactly as ``_enter_move`` does, including a malformed one a direct caller
of ``replay()`` passes unvalidated. ``_enter_move`` reports a move after the game ended,
or before the deal, without reading its ``actor``; the shortcut must not read it first
and turn that C-TURN violation into a LOG-EVENT halt."""

from __future__ import annotations

import copy

import pytest

from rummyguard.replay.engine import replay
from rummyguard.sim.driver import play

GAME = next(g for g in (play("classic", ["ann", "bob"], seed=seed, game_id="rv", max_events=2000)
                        for seed in (0, 5, 6, 7)) if any(e["type"] == "DeclaredRummy" for e in g))


def _move(kind: str) -> dict:
    move = copy.deepcopy(next(e for e in GAME if e["type"] == kind))
    move["event_id"] = f"rv-{kind}-again"  # a new event, not a reused id (LOG-EVENT)
    return move


def _broken_actor(event: dict, how: str) -> None:
    if how == "missing":
        del event["actor"]
    else:
        event["actor"] = ["ann"]  # unhashable


@pytest.mark.parametrize("how", ["missing", "list"])
@pytest.mark.parametrize("kind", ["Drew", "Discarded"])
def test_move_after_the_game_ended_is_c_turn_whatever_its_actor(kind, how):
    end = next(e["seq"] for e in GAME if e["type"] == "DeclaredRummy")
    events = copy.deepcopy(GAME[: end + 1])
    move = _move(kind)
    move["seq"] = end + 1
    _broken_actor(move, how)
    record = replay([*events, move], verify_hashes=False)
    assert [(f.seq, f.rule, f.message) for f in record.findings] == [
        (end + 1, "C-TURN", f"{kind} after the game ended")
    ]
    assert not record.halted


@pytest.mark.parametrize("how", ["missing", "list"])
@pytest.mark.parametrize("kind", ["Drew", "Discarded"])
def test_move_before_the_deal_is_c_turn_whatever_its_actor(kind, how):
    deal = next(e["seq"] for e in GAME if e["type"] == "RoundStarted")
    events = copy.deepcopy(GAME[:deal])
    move = _move(kind)
    move["seq"] = deal
    _broken_actor(move, how)
    record = replay([*events, move], verify_hashes=False)
    assert [(f.seq, f.rule, f.message) for f in record.findings] == [
        (deal, "C-TURN", f"{kind} before the cards were dealt")
    ]
    assert not record.halted
