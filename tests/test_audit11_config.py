"""Audit 11: engine bugs on non-default ``GameCreated.rules``, each argued from RULES.md.

Each test failed on the engine before its fix (classic: LOG-RULES for `decks`, `jokers` and
`rake_bps` out of range, the default used instead; Michigan: a move in a deal past `deals`
is C-TURN). Logs are hand-built (tests/logkit.py) or a clean
simulated game with events appended, so each test isolates one config path.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from logkit import Log, findings

from rummyguard.events.cards import format_cards, standard_deck
from rummyguard.events.timestamps import format_ts, ts_millis
from rummyguard.replay.engine import replay
from rummyguard.sim.driver import play


def _leave_game(rules: dict[str, Any]) -> list[dict[str, Any]]:
    """Classic, two players staking 100 each, p2 leaves at once: p1 is the last player
    standing and takes the pot less the rake (CL-LEAVE, CL-STRIKES, CL-RESULT)."""
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1, rules=rules)
    log.round(format_cards(standard_deck(2, 4)), dealer=1)
    log.add("PlayerLeft", "p2", {})
    return log.events


# RULES.md §1 CL-RUMMY: "rake = ⌊pot × rake_bps / 10000⌋, paid from the pot to house".
# Basis points of a rake paid *from the pot* lie in 0..10000: at 20000 the engine pays
# the house 400 chips out of a pot of 200 and books a transfer of -200 chips to the
# winner (net -300 for the player who won); at -1 the house pays the pot 1 chip. The
# engine flags out-of-range values as LOG-RULES in the other variants (r500 target/rounds/
# chip_ratio, Liverpool max_buys, Michigan pay_ante/widow_price/deals) and then reads the
# default; classic takes any int.
@pytest.mark.parametrize("rake_bps", [-1, 10_001, 20_000])
def test_classic_rake_bps_outside_basis_points_is_log_rules(rake_bps: int) -> None:
    rec = replay(_leave_game({"rake_bps": rake_bps}))
    assert (0, "LOG-RULES", "integrity") in findings(rec)
    # the default (no rake) applies, as for every other rejected value
    assert [(t.src, t.dst, t.amount) for t in rec.transfers] == [
        ("p1", "pot", 100), ("p2", "pot", 100), ("pot", "p1", 200)]
    assert rec.results.net == {"p1": 100, "p2": -100}


# RULES.md §1: "Deck: 2 × 52 + 4 jokers (config decks, jokers)": a number of 52-card decks
# and a number of jokers. A negative count is no deck composition (the engine silently
# reads it as 0: range(-1) is empty), and 0 decks is a deck of jokers only, which no
# classic hand can meld.
@pytest.mark.parametrize("rules", [{"decks": 0}, {"decks": -1}, {"jokers": -1}])
def test_classic_deck_counts_out_of_range_are_log_rules(rules: dict[str, Any]) -> None:
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1, rules=rules)
    # the default deck: with the rejected value replaced by its default it is the right one
    log.round(format_cards(standard_deck(2, 4)), dealer=1)
    assert findings(replay(log.events)) == [(0, "LOG-RULES", "integrity")]


def _michigan_one_deal() -> list[dict[str, Any]]:
    events = play("michigan", ["p1", "p2", "p3"], seed=3, rules={"deals": 1}, game_id="mi-a11")
    assert not replay(events).findings  # clean: one deal played, GameEnded logged
    return events


def _append(events: list[dict[str, Any]], type_: str, actor: str, payload: dict[str, Any]) -> int:
    last = events[-1]
    seq = last["seq"] + 1
    events.append({"event_id": f"{last['game_id']}-x{seq}", "game_id": last["game_id"], "seq": seq,
                   "type": type_, "v": 1, "ts": format_ts(ts_millis(last["ts"]) + 1000),
                   "actor": actor, "payload": payload})
    return seq


def test_michigan_move_after_the_game_is_c_turn() -> None:
    """The engine's own reading, for contrast: with ``deals`` 1 played out, a card played
    after the game ended is C-TURN (RULES.md §0: nobody is entitled to act)."""
    events = copy.deepcopy(_michigan_one_deal())
    seq = _append(events, "CardPlayed", "p2", {"card": "2C"})
    assert findings(replay(events)) == [(seq, "C-TURN", "violation")]


# RULES.md §0 C-TURN: "a move by a player who is not entitled to act at that moment is a
# violation"; §4 MI-END: "the game lasts `deals` deals". A RoundStarted past `deals` is a
# system event (MI-END violation), and it entitles nobody: the moves of that deal are made
# after the game ended, exactly like the move of the test above, so each is C-TURN. The
# engine marks the deal "rogue" and ignores its moves without a finding, so the same
# CardPlayed is C-TURN or silent depending on whether the platform logged a deal first.
# Liverpool (a 7th deal: C-DEAL, then C-TURN per move) and r500 report every such move;
# the independent referee (tests/referee_liverpool_michigan.py) does too.
def test_michigan_moves_in_a_deal_past_deals_are_c_turn() -> None:
    events = copy.deepcopy(_michigan_one_deal())
    deal = _append(events, "RoundStarted", "system", {
        "round": 2, "dealer": (events[0]["payload"]["dealer"] + 1) % 3,
        "deck": format_cards(standard_deck(1, 0)), "redeal": 0})
    seq = _append(events, "CardPlayed", "p3", {"card": "2C"})
    assert findings(replay(events)) == [(deal, "MI-END", "violation"), (seq, "C-TURN", "violation")]
