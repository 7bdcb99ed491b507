"""Spec audit of classic rummy (RULES.md §0, §1, §5): the readings an independent checker
would test, each pinned at its boundary. Every test here either failed before the audit's
fix (named in its docstring) or pins a boundary the spec states in numbers.

Seats as in test_classic_rules: p1 (seat 0) is the first player (15 cards), dealer seat 1.
"""

from __future__ import annotations

import copy
import json
from collections import Counter

import pytest
from logkit import Log, findings, stacked_deck
from spec_paths import EXAMPLES
from test_classic_rules import (
    DECK,
    P1_HAND,
    P2_HAND,
    STOCK_TOP,
    UP,
    WIN_MELDS,
    autoplay,
    opening,
    strikes_game,
)

from rummyguard.events.cards import JOKER, format_cards, parse_cards
from rummyguard.replay.engine import replay, state_at
from rummyguard.replay.rules.melds import MeldError, MeldRules, find_partition, validate_meld

RULES = MeldRules(wild=frozenset({JOKER}))
SPEC = EXAMPLES
P3_HAND = ["AC", "2H", "3C", "4C", "5S", "6C", "7S", "8H", "TS", "JS", "KS", "4S", "6H", "7D"]


def run_stands(cards: list[str], as_: dict[int, str] | None = None) -> list[str]:
    named = {i: parse_cards([c])[0] for i, c in (as_ or {}).items()} or None
    return format_cards(validate_meld("run", parse_cards(cards), named, RULES).stands)


def declare(hand: list[str], melds: list[dict], discard: str, **created) -> tuple[Log, int]:
    """p1 declares on his first turn with ``hand`` as his 15 cards."""
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1, **created)
    log.round(stacked_deck([hand, P2_HAND], UP, STOCK_TOP), dealer=1)
    seq = log.add("DeclaredRummy", "p1", {"melds": melds, "discard": discard})
    return log, seq


def three_players() -> Log:
    log = Log()
    log.created("classic", ["p1", "p2", "p3"], dealer=2)
    log.round(stacked_deck([P1_HAND, P2_HAND, P3_HAND], UP, STOCK_TOP), dealer=2)
    return log


# -- C-RUN / C-WILD ------------------------------------------------------------------------


def test_C_RUN_wild_named_past_the_ace_is_a_finding_not_a_crash():
    """Fix: ``as`` on a wild after the ace crashed the replay (CardError formatting
    the card above the ace). A wild above A runs past the ace: C-RUN."""
    hand = ["QH", "KH", "AH", "JK", "9C", "9D", "9S", "9H", "TD", "JD", "QD", "KC", "KD", "KS", "2C"]
    melds = [
        {"kind": "run", "cards": ["QH", "KH", "AH", "JK"], "as": {"3": "JH"}},
        {"kind": "set", "cards": ["9C", "9D", "9S", "9H"]},
        {"kind": "run", "cards": ["TD", "JD", "QD"]},
        {"kind": "set", "cards": ["KC", "KD", "KS"]},
    ]
    log, seq = declare(hand, melds, "2C")
    record = replay(log.events)
    assert findings(record) == [(seq, "C-RUN", "violation")]
    assert "past the ace" in record.findings[0].message


def test_C_WILD_lone_ace_written_last_is_the_high_end():
    """Fix: ``JK JK AH`` read the ace low (3H 2H AH); runs are written low to high, so
    the ace at the top is high and the wilds stand below it (C-WILD)."""
    assert run_stands(["JK", "JK", "AH"]) == ["QH", "KH", "AH"]
    assert run_stands(["JK", "JK", "AH"], {0: "QH"}) == ["QH", "KH", "AH"]
    assert run_stands(["AH", "JK", "JK"]) == ["AH", "2H", "3H"]  # ace first: low
    meld = validate_meld("run", parse_cards(["JK", "JK", "AH"]), None, RULES)
    assert (meld.lo, meld.hi) == (12, 14)


def test_C_WILD_named_low_wild_makes_the_wilds_inside_it_positional():
    """Fix: ``JK JK 5H 6H`` with ``as {0: 3H}`` was rejected (the inner wild was pushed
    above 6H); between a named low end and the first natural a wild is a middle wild."""
    assert run_stands(["JK", "JK", "5H", "6H"], {0: "3H"}) == ["3H", "4H", "5H", "6H"]
    hand = ["JK", "JK", "5H", "6H", "7H", "9C", "9D", "9S", "TD", "JD", "QD", "KC", "KD", "KH", "2C"]
    melds = [
        {"kind": "run", "cards": ["JK", "JK", "5H", "6H", "7H"], "as": {"0": "3H"}},
        {"kind": "set", "cards": ["9C", "9D", "9S"]},
        {"kind": "run", "cards": ["TD", "JD", "QD"]},
        {"kind": "set", "cards": ["KC", "KD", "KH"]},
    ]
    log, _ = declare(hand, melds, "2C")
    record = replay(log.events)
    assert findings(record) == []
    assert record.state.snapshot()["melds"][0]["stands"] == ["3H", "4H", "5H", "6H", "7H"]


def test_C_WILD_unnamed_low_wild_and_middle_wilds_keep_their_readings():
    """The reading the spec states (and the team decided) is unchanged by the fixes."""
    assert run_stands(["JK", "5H", "6H"]) == ["7H", "5H", "6H"]  # high end below A: upward
    assert run_stands(["JK", "KH", "AH"]) == ["QH", "KH", "AH"]  # high end A: below
    assert run_stands(["JK", "5H", "6H"], {0: "4H"}) == ["4H", "5H", "6H"]
    assert run_stands(["3H", "JK", "5H"]) == ["3H", "4H", "5H"]
    with pytest.raises(MeldError) as err:
        validate_meld("run", parse_cards(["QH", "KH", "AH", "JK"]), None, RULES)
    assert err.value.code == "run_wrap"


# -- CL-LONGRUN ------------------------------------------------------------------------------


LONG_HAND = ["3H", "4H", "JK", "6H", "7H", "9C", "9D", "9S", "TD", "JD", "QD", "KC", "KD", "KH", "2C"]
LONG_MELDS = [
    {"kind": "run", "cards": ["3H", "4H", "JK", "6H", "7H"]},
    {"kind": "set", "cards": ["9C", "9D", "9S"]},
    {"kind": "run", "cards": ["TD", "JD", "QD"]},
    {"kind": "set", "cards": ["KC", "KD", "KH"]},
]


def test_CL_LONGRUN_without_jokers_the_long_run_holds_no_joker():
    """Fix: with ``long_run_allows_joker`` false a run with 4 naturals and a joker
    (3H 4H JK 6H 7H: no four natural cards in a row) counted as the long run."""
    log, seq = declare(LONG_HAND, LONG_MELDS, "2C", rules={"long_run_allows_joker": False})
    assert findings(replay(log.events)) == [(seq, "CL-LONGRUN", "violation")]
    log, _ = declare(LONG_HAND, LONG_MELDS, "2C")  # default: jokers may stand in it
    assert findings(replay(log.events)) == []


def test_find_partition_honours_a_joker_free_long_run():
    """The simulator's search agrees with the replay's CL-LONGRUN reading."""
    hand = [0] * 53
    for c in parse_cards(LONG_HAND[:-1]):
        hand[c] += 1
    assert find_partition(hand, RULES, need_long_run=4) is not None
    parts = find_partition(hand, RULES, need_long_run=4, long_run_allows_wild=False)
    assert parts is None or any(
        k == "run" and len(cs) >= 4 and JOKER not in cs for k, cs in parts
    )
    natural = [0] * 53
    for c in parse_cards(["3H", "4H", "5H", "6H", "JK", "9C", "9D", "9S", "TD", "JD", "QD",
                          "KC", "KD", "KH"]):
        natural[c] += 1
    parts = find_partition(natural, RULES, need_long_run=4, long_run_allows_wild=False)
    assert parts is not None
    assert any(k == "run" and len(cs) >= 4 and JOKER not in cs for k, cs in parts)


# -- C-RESTOCK / C-HOLD ------------------------------------------------------------------------


def _restock_position() -> Log:
    """p1 discarded 2C on 8D; p2 drew AH and discarded it: the pile is 8D 2C AH."""
    log = opening()
    log.discard("p1", "2C")
    log.draw("p2", "stock", "AH")
    log.discard("p2", "AH")
    return log


def test_C_HOLD_restock_naming_a_card_not_in_the_pile_halts():
    """Fix: a new stock with a card from nowhere was only C-RESTOCK and the card was
    created; a card not where the event says it is halts the replay (C-HOLD)."""
    hand2 = [*P2_HAND[:-1], "KH"]  # both KH are in hands now: p1's and p2's
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(stacked_deck([P1_HAND, hand2], UP, STOCK_TOP), dealer=1)
    log.discard("p1", "2C")
    seq = log.sys("StockReplenished", {"stock": ["8D", "KH"]})
    record = replay(log.events)
    assert findings(record)[-1] == (seq, "C-HOLD", "integrity") and record.halted
    assert "KH" in record.findings[-1].message


def test_C_RESTOCK_wrong_restock_applied_as_logged_without_losing_cards():
    """Fix: a restock that took only part of the pile made the rest vanish (the pile was
    reset to its top). The cards it leaves stay in the pile; no card is lost or made."""
    log = _restock_position()
    seq = log.sys("StockReplenished", {"stock": ["8D"]})
    record = replay(log.events)
    assert findings(record) == [(seq, "C-RESTOCK", "violation"), (seq, "C-RESTOCK", "violation")]
    snap = state_at(log.events, seq)
    assert snap["discard_pile"] == ["2C", "AH"]
    assert snap["stock"][0] == "8D"
    total = sum(snap["hand_counts"].values()) + snap["stock_count"] + len(snap["discard_pile"])
    assert total == 108


def test_C_RESTOCK_correct_restock_is_clean():
    log = _restock_position()
    seq = log.sys("StockReplenished", {"stock": ["2C", "8D"]})
    record = replay(log.events)
    assert [(s, r) for s, r, _ in findings(record)] == [(seq, "C-RESTOCK")]  # stock not empty
    snap = state_at(log.events, seq)
    assert snap["discard_pile"] == ["AH"] and snap["stock"][:2] == ["2C", "8D"]


# -- CL-STRIKES / CL-LEAVE / claims about removals ------------------------------------------------


def test_CL_LEAVE_leaving_after_being_removed_is_not_a_finding():
    """Fix: a player removed for strikes who then leaves the table got a C-TURN."""
    log, _ = strikes_game("remove")
    log.add("PlayerLeft", "p2")
    log.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    record = replay(log.events)
    assert findings(record) == []


def test_C_CLAIM_removal_of_a_player_who_already_left_is_a_discrepancy():
    """Fix: PlayerRemoved(strikes) for a player who had left was a CL-STRIKES violation;
    nothing is applied, it is a claim that differs from the state (C-CLAIM)."""
    log = three_players()
    log.discard("p1", "2C")
    log.add("PlayerLeft", "p3")
    seq = log.sys("PlayerRemoved", {"player": "p3", "reason": "strikes"})
    assert findings(replay(log.events)) == [(seq, "C-CLAIM", "discrepancy")]
    ok = three_players()
    ok.discard("p1", "2C")
    ok.add("PlayerLeft", "p3")
    ok.sys("PlayerRemoved", {"player": "p3", "reason": "left"})
    assert findings(replay(ok.events)) == []


def test_CL_AUTOPLAY_for_the_wrong_player_is_one_finding():
    """Fix: an auto-play for a player not in turn was also reported as 'too early',
    measured from a clock that started at the auto-play itself."""
    log = opening()
    seq = autoplay(log, "p2", "AH", "AH", 1, dt=200)
    record = replay(log.events)
    assert findings(record) == [(seq, "CL-AUTOPLAY", "violation")]
    assert "was in turn" in record.findings[0].message


def test_CL_RESULT_round_started_after_the_game_ended_is_not_C_TURN():
    """Fix: a system event is never out of turn (C-TURN); a second deal after the game
    ended breaks CL-RESULT (a classic game is one round)."""
    log = opening()
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2C"})
    seq = log.round(DECK, dealer=1)
    assert findings(replay(log.events)) == [(seq, "CL-RESULT", "violation")]


def test_CL_NODISCARD_JOKER_on_a_second_discard():
    """Fix: the second discard of a turn was not checked for a joker."""
    hand = [*P1_HAND[:-1], "JK"]
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(stacked_deck([hand, P2_HAND], UP, STOCK_TOP), dealer=1)
    log.discard("p1", "KH")
    seq = log.discard("p1", "JK")
    assert findings(replay(log.events)) == [
        (seq, "CL-DISCARD", "violation"), (seq, "CL-NODISCARD-JOKER", "violation")]


# -- boundaries the spec states in numbers (pinned) --------------------------------------------


@pytest.mark.parametrize("dt,late", [(120.0, False), (120.001, True)])
def test_CL_TIMER_first_turn_deadline_is_inclusive(dt, late):
    log = opening()
    seq = log.discard("p1", "2C", dt=dt)
    assert findings(replay(log.events)) == ([(seq, "CL-TIMER", "violation")] if late else [])


@pytest.mark.parametrize("dt,early", [(90.0, False), (89.999, True)])
def test_CL_AUTOPLAY_later_turn_at_exactly_the_deadline_is_on_time(dt, early):
    log = opening()
    log.discard("p1", "2C")
    log.draw("p2", "stock", "AH")
    log.discard("p2", "AH")
    seq = autoplay(log, "p1", "2D", "2D", 1, dt=dt)
    assert findings(replay(log.events)) == ([(seq, "CL-AUTOPLAY", "violation")] if early else [])


def test_CL_RUMMY_rake_is_floored_and_net_follows_CL_RESULT():
    log = opening(rules={"rake_bps": 333}, stake=7)  # pot 14 -> rake floor(0.4662) = 0
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2C"})
    record = replay(log.events)
    assert record.results.net == {"p1": 7, "p2": -7}
    log = opening(rules={"rake_bps": 250}, stake=99)  # pot 198 -> rake floor(4.95) = 4
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2C"})
    record = replay(log.events)
    assert ("pot", "house", 4) in [t.key() for t in record.transfers]
    assert record.results.net == {"p1": 99 - 4, "p2": -99}


def test_CL_FRESH_unanimity_reached_by_a_leave_doubles_the_pot_of_those_still_in():
    log = three_players()
    log.add("FreshPressed", "p2")
    log.add("FreshPressed", "p3")
    log.add("PlayerLeft", "p1")
    log.round(stacked_deck([P2_HAND, P3_HAND], UP, STOCK_TOP), dealer=2, redeal=1)
    record = replay(log.events)
    assert findings(record) == []
    assert record.results.net == {"p1": -100, "p2": -200, "p3": -200}
    assert state_at(log.events, 5)["in_turn"] == "p2"  # p1 gone: next left of the dealer


def test_CL_DEAL_circuits_with_three_players():
    snap = state_at(three_players().events, 1)
    assert Counter(snap["hands"]["p1"]) == Counter(P1_HAND)
    assert Counter(snap["hands"]["p3"]) == Counter(P3_HAND)
    assert snap["hand_counts"] == {"p1": 15, "p2": 14, "p3": 14}
    assert snap["stock_count"] == 108 - 43 - 1


# -- the spec's example -------------------------------------------------------------------------


def test_spec_example_replays_to_exactly_its_expected_output():
    events = [json.loads(line) for line in (SPEC / "classic-3p.jsonl").read_text().splitlines()
              if line.strip()]
    expected = json.loads((SPEC / "classic-3p.expected.json").read_text())
    got = replay(copy.deepcopy(events)).to_dict()
    assert {k: got[k] for k in expected} == expected
    assert got["halted"] is False and got["variant"] == "classic"


def test_removed_players_cards_leave_play():
    log = three_players()
    log.discard("p1", "2C")
    seq = log.add("PlayerLeft", "p2")
    snap = state_at(log.events, seq)
    assert snap["hand_counts"]["p2"] == 0 and snap["in_turn"] == "p3"
    assert sorted(parse_cards(snap["hands"]["p1"])) == sorted(
        parse_cards([c for c in P1_HAND if c != "2C"]))
