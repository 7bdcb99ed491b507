"""Michigan rummy (RULES.md §4): every rule ID broken on purpose and found at its seq,
clean driver games, chip arithmetic, leaving, views and legal moves.

Scripted games use a stacked deal (tests/test_michigan_kit.py): seats a, b, c, dealer c,
so a is left of the dealer and starts; the widow holds 5H TH 6C JC 3D 7D QD 5S-9S KS.
"""

from __future__ import annotations

import copy
from collections import Counter
from itertools import combinations
from typing import Any

import pytest
from logkit import Log
from test_michigan_kit import (
    HAND_A,
    HAND_B,
    HAND_C,
    STACKED,
    WIDOW,
    cut,
    driver_game,
    find,
    game_where,
    michigan_deck,
    reasons,
    record,
    renumber,
    state_before,
    triples,
    walk,
)

from rummyguard.events.cards import format_cards, parse_card
from rummyguard.events.hashing import chain
from rummyguard.replay.engine import replay, state_at
from rummyguard.replay.rules.michigan import DEAD, FOLLOW, START, Michigan
from rummyguard.sim.driver import Choice, Platform, Turn, random_policy

SEATS = ["a", "b", "c"]


def opening(**rules: Any) -> Log:
    log = Log()
    log.created("michigan", SEATS, dealer=2, rules=rules)
    log.round(STACKED, dealer=2)
    return log


def plays(log: Log, script: str) -> int:
    """``"a:2H a:3H b:4H"`` -> CardPlayed events; returns the last seq."""
    seq = -1
    for step in script.split():
        who, card = step.split(":")
        seq = log.add("CardPlayed", who, {"card": card})
    return seq


def state_of(log: Log) -> Michigan:
    rec = replay(log.events)
    assert isinstance(rec.state, Michigan)
    return rec.state


def transfers(log: Log, reason: str | None = None) -> list[tuple[str, str, int]]:
    rec = replay(log.events)
    return [t.key() for t in rec.transfers if reason is None or t.reason == reason]


def findings_of(log: Log) -> list[tuple[int, str, str]]:
    return triples(replay(log.events))


def only_finding(log: Log) -> tuple[tuple[int, str, str], str]:
    rec = replay(log.events)
    assert len(rec.findings) == 1, rec.findings
    f = rec.findings[0]
    return (f.seq, f.rule, f.kind), f.message


# --- MI-DEAL ---------------------------------------------------------------------------


def test_deal_goes_one_at_a_time_from_left_of_dealer_with_the_widow_after_the_dealer() -> None:
    snap = state_of(opening()).snapshot()
    assert snap["hands"] == {"a": sorted_cards(HAND_A), "b": sorted_cards(HAND_B),
                             "c": sorted_cards(HAND_C)}
    assert snap["widow"] == sorted_cards(WIDOW)
    assert snap["hand_counts"] == {"a": 13, "b": 13, "c": 13}
    assert findings_of(opening()) == []


def sorted_cards(cards: list[str]) -> list[str]:
    return format_cards(sorted(parse_card(c) for c in cards))


def test_eight_players_hands_may_differ_in_size() -> None:
    seats = [f"p{i}" for i in range(8)]
    deck = [format_cards([c])[0] for c in range(52)]  # 2C 2D 2H 2S 3C ...
    log = Log()
    log.created("michigan", seats, dealer=3)
    log.round(deck, dealer=3)
    st = state_of(log)
    # deal order p4 p5 p6 p7 p0 p1 p2 p3(dealer) widow: 52 = 9*5 + 7, the first seven get 6
    sizes = st.snapshot()["hand_counts"]
    assert sizes == {"p4": 6, "p5": 6, "p6": 6, "p7": 6, "p0": 6, "p1": 6, "p2": 6, "p3": 5}
    assert st.snapshot()["widow_count"] == 5
    assert st.snapshot()["hands"]["p4"][:2] == ["2C", "4D"]  # cards 0 and 9 of the deck
    assert st.snapshot()["widow"][0] == "4C"  # card 8 of the deck


def test_deck_that_is_not_the_52_cards_is_C_DEAL_then_halts_MI_DEAL() -> None:
    """Audit 3: a deck that is not the variant's deck is C-DEAL in every variant; Michigan
    then cannot follow the deal and halts (MI-DEAL, integrity)."""
    deck = list(STACKED)
    deck[10] = deck[11]  # a card twice, another missing
    log = Log()
    log.created("michigan", SEATS, dealer=2)
    seq = log.round(deck, dealer=2)
    log.add("CardPlayed", "a", {"card": "2H"})
    rec = replay(log.events)
    assert triples(rec) == [(seq, "C-DEAL", "violation"), (seq, "MI-DEAL", "integrity")]
    assert rec.halted
    assert STACKED[10] in rec.findings[1].message  # the missing card is named


def test_redeal_is_a_MI_DEAL_violation() -> None:
    log = Log()
    log.created("michigan", SEATS, dealer=2)
    seq = log.round(STACKED, dealer=2, redeal=1)
    assert findings_of(log) == [(seq, "MI-DEAL", "violation")]


# --- MI-ANTE ---------------------------------------------------------------------------


def test_antes_dealer_two_others_one_and_pay_ante_on_each_pay_card() -> None:
    log = opening(pay_ante=2)
    got = Counter(transfers(log))
    want = Counter()
    for p in SEATS:
        want[(p, "kitty", 2 if p == "c" else 1)] += 1
        for card in ("JS", "QD", "KC", "AH"):
            want[(p, f"pay:{card}", 2)] += 1
    assert got == want
    assert state_of(log).snapshot()["pots"] == {
        "kitty": 4, "poker": 0, "pay:JS": 6, "pay:QD": 6, "pay:KC": 6, "pay:AH": 6}


def test_house_pay_cards_config() -> None:
    log = opening(pay_cards=["2C", "AS"])
    assert state_of(log).snapshot()["pots"] == {"kitty": 4, "poker": 0, "pay:2C": 3, "pay:AS": 3}


def test_bad_config_is_LOG_RULES_and_defaults_apply() -> None:
    log = Log()
    log.created("michigan", SEATS, dealer=2, rules={"pay_cards": ["JS", "JS"], "deals": -1})
    log.round(STACKED, dealer=2)
    rec = replay(log.events)
    assert [(f.seq, f.rule) for f in rec.findings] == [(0, "LOG-RULES"), (0, "LOG-RULES")]
    st = rec.state
    assert isinstance(st, Michigan)
    assert st.total_deals == 3 and "pay:AH" in st.pools


def test_ante_claim_wrong_is_C_CLAIM_naming_both_values() -> None:
    events = driver_game(3, 1, deals=1)
    i = next(i for i, e in enumerate(events) if e["type"] == "ChipsTransferred")
    t = next(t for t in events[i]["payload"]["transfers"] if t["amount"] == 2 and t["to"] == "kitty")
    t["amount"] = 1  # the platform says the dealer anted 1
    rec = record(events)
    assert triples(rec) == [(i, "C-CLAIM", "discrepancy")]
    msg = rec.findings[0].message
    assert f"claimed but not due: {t['from']}->kitty 1" in msg
    assert f"due but not claimed: {t['from']}->kitty 2" in msg


# --- MI-START / MI-PENALTY ---------------------------------------------------------------


def test_left_of_dealer_starts_with_his_lowest_card() -> None:
    log = opening()
    st = state_of(log)
    assert st.to_act() == ["a", "b", "c"]  # the widow offer, in seat order from a
    assert st.due() == (START, 0, -1)
    plays(log, "a:2H a:3H b:4H")
    assert findings_of(log) == []
    assert transfers(log, "penalty") == []


def test_wrong_first_starter_is_MI_START_naming_the_starter() -> None:
    log = opening()
    seq = plays(log, "b:4H")
    (found, msg) = only_finding(log)
    assert found == (seq, "MI-START", "violation")
    assert msg.startswith("a should start")
    # applied as the platform did: 5H is in the widow, so b (the last player) restarts
    assert state_of(log).to_act() == ["b"]
    assert transfers(log, "penalty") == []  # an irregular play never pays the penalty


def test_start_not_with_lowest_card_pays_a_chip_to_every_other_player() -> None:
    log = opening()
    plays(log, "a:3H")
    assert findings_of(log) == []  # allowed at a price: not a finding
    assert transfers(log, "penalty") == [("a", "b", 1), ("a", "c", 1)]
    assert state_of(log).to_act() == ["b"]  # the play stands: 4H is next


def test_penalty_not_claimed_is_C_CLAIM_at_game_end() -> None:
    events = game_where(3, lambda ev: "penalty" in reasons(ev), first=2)
    penalties = [t for e in events if e["type"] == "ChipsTransferred"
                 for t in e["payload"]["transfers"] if t["reason"] == "penalty"]
    dropped = penalties[0]
    for e in events:
        if e["type"] == "ChipsTransferred" and dropped in e["payload"]["transfers"]:
            e["payload"]["transfers"].remove(dropped)
            break
    rec = record(events)
    assert triples(rec) == [(len(events) - 1, "C-CLAIM", "discrepancy")]
    assert f"due but not claimed: {dropped['from']}->{dropped['to']} 1" in rec.findings[0].message


# --- MI-FOLLOW ------------------------------------------------------------------------------


def test_holder_of_the_next_card_plays_it_turns_do_not_rotate() -> None:
    log = opening()
    plays(log, "a:2H")
    st = state_of(log)
    assert st.due() == (FOLLOW, 0, parse_card("3H"))
    assert st.to_act() == ["a"]  # a again: he holds 3H
    assert st.legal_moves("a") == [("CardPlayed", {"card": "3H"})]
    assert st.legal_moves("b") == []


def test_play_by_someone_else_is_MI_FOLLOW_naming_the_holder() -> None:
    log = opening()
    plays(log, "a:2H")
    seq = plays(log, "b:2C")
    found, msg = only_finding(log)
    assert found == (seq, "MI-FOLLOW", "violation")
    assert msg == "a holds 3H, the next card, and should have played it; b played 2C"
    assert state_of(log).to_act() == ["c"]  # the sequence runs on from 2C: 3C is c's


def test_holder_who_skips_his_card_is_MI_FOLLOW() -> None:
    log = opening()
    plays(log, "a:2H")
    seq = plays(log, "a:4C")
    found, msg = only_finding(log)
    assert found == (seq, "MI-FOLLOW", "violation")
    assert msg.startswith("a holds 3H")


def test_non_holder_playing_the_next_card_halts_C_HOLD() -> None:
    log = opening()
    plays(log, "a:2H")
    seq = plays(log, "b:3H")
    rec = replay(log.events)
    assert triples(rec) == [(seq, "C-HOLD", "integrity")] and rec.halted
    assert "held by a" in rec.findings[0].message


# --- MI-STOP --------------------------------------------------------------------------------


def test_stop_at_widow_card_last_player_restarts_in_another_suit() -> None:
    log = opening()
    plays(log, "a:2H a:3H b:4H")  # 5H is in the widow
    st = state_of(log)
    assert st.due() == (START, 1, parse_card("2H") & 3)
    moves = [m[1]["card"] for m in st.legal_moves("b")]
    assert moves[:3] == ["2C", "5D", "3S"]  # his lowest of each other suit first
    assert "8H" not in moves
    plays(log, "b:2C c:3C a:4C b:5C b:3S c:4S c:2D")
    assert findings_of(log) == []


def test_stop_after_the_ace_and_at_a_played_card() -> None:
    log = opening()
    plays(log, "a:2H a:3H b:4H b:2C c:3C a:4C b:5C b:3S c:4S c:2D")
    plays(log, "c:KH")  # a dear start (his lowest heart is 6H): penalty
    assert state_of(log).due() == (FOLLOW, 0, parse_card("AH"))
    plays(log, "a:AH")  # the ace stops the hearts; AH is a pay card
    assert state_of(log).due() == (START, 0, parse_card("AH") & 3)
    plays(log, "a:2S")  # 3S was already played: a stop again
    assert state_of(log).due() == (START, 0, parse_card("2S") & 3)
    assert findings_of(log) == []
    assert transfers(log, "penalty") == [("c", "a", 1), ("c", "b", 1)]
    assert transfers(log, "pay card") == [("pay:AH", "a", 3)]


def test_wrong_restarter_is_MI_STOP_naming_the_right_player() -> None:
    log = opening()
    plays(log, "a:2H a:3H b:4H")
    seq = plays(log, "c:3C")
    found, msg = only_finding(log)
    assert found == (seq, "MI-STOP", "violation")
    assert msg == "b should start the sequence; c started with 3C"


def test_restart_in_the_stopped_suit_is_MI_STOP() -> None:
    log = opening()
    plays(log, "a:2H a:3H b:4H")
    seq = plays(log, "b:8H")
    found, msg = only_finding(log)
    assert found == (seq, "MI-STOP", "violation")
    assert "stopped suit" in msg
    assert transfers(log, "penalty") == []  # 8H is his lowest heart


# A 4-player deal, dealer d: a holds only clubs, 3C is in the widow.
FOUR = michigan_deck([
    ["2C", "4C", "5C", "6C", "7C", "8C", "9C", "TC", "JC", "QC", "KC"],
    ["2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD", "JD", "QD"],
    ["KD", "AD", "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H"],
    ["TH", "JH", "QH", "KH", "AH", "2S", "3S", "4S", "5S", "6S"],
    ["3C", "AC", "7S", "8S", "9S", "TS", "JS", "QS", "KS", "AS"],
])


def four_log() -> Log:
    log = Log()
    log.created("michigan", ["a", "b", "c", "d"], dealer=3)
    log.round(FOUR, dealer=3)
    return log


def test_last_player_without_another_suit_passes_the_right_left() -> None:
    log = four_log()
    plays(log, "a:2C")
    st = state_of(log)
    assert st.to_act() == ["b"]
    assert st.legal_moves("b")[0] == ("CardPlayed", {"card": "2D"})
    plays(log, "b:2D b:3D b:4D b:5D b:6D b:7D b:8D b:9D b:TD b:JD b:QD")
    rec = replay(log.events)
    assert rec.findings == []
    st = rec.state
    assert isinstance(st, Michigan)
    # b went out: the deal is his, with the kitty (1+1+1+2)
    assert st.round_result(1) == (["b"], {})
    assert ("kitty", "b", 5) in [t.key() for t in rec.transfers]


def test_passed_over_last_player_playing_anyway_is_MI_STOP() -> None:
    log = four_log()
    plays(log, "a:2C")
    seq = plays(log, "a:4C")
    found, msg = only_finding(log)
    assert found == (seq, "MI-STOP", "violation")
    assert msg.startswith("b should start")


def test_suit_restriction_lapses_when_nobody_holds_another_suit() -> None:
    log = four_log()
    plays(log, "a:2C")
    st = state_of(log)
    for c in range(52):
        if st.owner[c] in (1, 2, 3):
            st._move_card(c, DEAD)  # only a's clubs are left in play
    assert st.due() == (START, 0, -1)
    assert st.legal_moves("a")[0] == ("CardPlayed", {"card": "4C"})


# --- MI-PAY / MI-OUT --------------------------------------------------------------------------


def test_pay_card_chips_go_to_whoever_plays_it() -> None:
    log = opening()
    plays(log, "a:2H a:3H b:4H b:KC")  # a dear start: penalty, and the KC chips
    assert findings_of(log) == []
    assert transfers(log, "pay card") == [("pay:KC", "b", 3)]
    assert transfers(log, "penalty") == [("b", "a", 1), ("b", "c", 1)]
    st = state_of(log)
    assert st.pools["pay:KC"] == 0 and st.to_act() == ["c"]  # c holds AC
    plays(log, "c:AC")  # the ace stops; c restarts outside clubs
    assert state_of(log).due() == (START, 2, parse_card("AC") & 3)


def test_pay_card_claim_to_wrong_player_is_C_CLAIM() -> None:
    events = game_where(3, lambda ev: "pay card" in reasons(ev), first=4, deals=1)
    i, t = next((i, t) for i, e in enumerate(events) if e["type"] == "ChipsTransferred"
                for t in e["payload"]["transfers"] if t["reason"] == "pay card")
    right = t["to"]
    t["to"] = next(p for p in ("p1", "p2", "p3") if p != right)
    rec = record(events)
    assert (i, "C-CLAIM", "discrepancy") in triples(rec)
    msg = next(f.message for f in rec.findings if f.seq == i)
    assert f"{t['from']}->{t['to']} {t['amount']}" in msg and f"{t['from']}->{right}" in msg


def test_kitty_to_first_out_and_round_claims() -> None:
    events = driver_game(3, 5)
    rec = record(events)
    assert rec.clean
    st = rec.state
    assert isinstance(st, Michigan)
    ends = [e for e in events if e["type"] == "RoundEnded"]
    assert len(ends) == 3
    for e in ends:
        assert st.round_result(e["payload"]["round"]) == (e["payload"]["winners"], {})
    kitty = [t for t in rec.transfers if t.reason == "kitty"]
    assert [t.dst for t in kitty] == [e["payload"]["winners"][0] for e in ends]
    # mutate the round winner claim
    bad = copy.deepcopy(events)
    j = next(i for i, e in enumerate(bad) if e["type"] == "RoundEnded")
    right = bad[j]["payload"]["winners"][0]
    wrong = next(p for p in ("p1", "p2", "p3") if p != right)
    bad[j]["payload"]["winners"] = [wrong]
    rec = record(bad)
    assert triples(rec) == [(j, "C-CLAIM", "discrepancy")]
    assert rec.findings[0].message == f"round 1 winners: claimed ['{wrong}'], recomputed ['{right}']"


def test_unplayed_pay_card_chips_roll_over() -> None:
    """An oracle over many games: each pool grows by the antes, empties when its card is
    played, and is split at the end."""
    rolled = 0
    for seed in range(12):
        events = driver_game(4, seed, pay_ante=2)
        expect = {"JS": 0, "QD": 0, "KC": 0, "AH": 0}
        for i, st, e in walk(events):
            if e["type"] == "RoundStarted":
                rolled += any(expect.values())
                for k in expect:
                    expect[k] += 4 * 2
            elif e["type"] == "CardPlayed" and e["payload"]["card"] in expect:
                expect[e["payload"]["card"]] = 0
            elif e["type"] == "RoundEnded" and st is not None and not st.over:
                assert {k: st.pools[f"pay:{k}"] for k in expect} == expect, (seed, i)
        rec = record(events)
        assert rec.clean
        assert all(v == 0 for v in rec.state.pools.values())  # type: ignore[union-attr]
    assert rolled > 5, "games must roll pay-card chips over to later deals"


# --- MI-WIDOW ---------------------------------------------------------------------------------


def test_widow_purchase_swaps_hands_and_the_old_hand_is_dead() -> None:
    log = opening()
    log.add("WidowBought", "b", {"price": 1})
    st = state_of(log)
    snap = st.snapshot()
    assert snap["hands"]["b"] == sorted_cards(WIDOW)
    assert snap["dead"] == sorted_cards(HAND_B)
    assert snap["pots"]["kitty"] == 5
    assert st.to_act() == ["a"]
    plays(log, "a:2H a:3H")  # 4H is in b's dead hand: a stop
    st = state_of(log)
    assert st.due() == (START, 0, parse_card("2H") & 3)
    assert findings_of(log) == []
    assert ("b", "kitty", 1) in transfers(log, "widow")


def test_second_widow_purchase_is_MI_WIDOW() -> None:
    log = opening()
    log.add("WidowBought", "b", {"price": 1})
    seq = log.add("WidowBought", "c", {"price": 1})
    found, msg = only_finding(log)
    assert found == (seq, "MI-WIDOW", "violation")
    assert msg == "c bought the widow, but b already bought it"
    assert state_of(log).snapshot()["hands"]["c"] == sorted_cards(HAND_C)  # ignored


def test_widow_purchase_after_the_first_card_is_MI_WIDOW_and_applied() -> None:
    log = opening()
    plays(log, "a:2H")
    seq = log.add("WidowBought", "c", {"price": 1})
    found, msg = only_finding(log)
    assert found == (seq, "MI-WIDOW", "violation")
    assert "after the first card was played" in msg
    assert state_of(log).snapshot()["hands"]["c"] == sorted_cards(WIDOW)


def test_widow_price_claim_is_checked() -> None:
    log = opening()
    seq = log.add("WidowBought", "a", {"price": 3})
    found, msg = only_finding(log)
    assert found == (seq, "C-CLAIM", "discrepancy")
    assert msg == "widow price: claimed 3, the rules say 1"
    assert state_of(log).pools["kitty"] == 5  # the rules' price is charged


def test_widow_price_config() -> None:
    log = opening(widow_price=4)
    log.add("WidowBought", "a", {"price": 4})
    assert findings_of(log) == [] and state_of(log).pools["kitty"] == 8


# --- MI-POKER -----------------------------------------------------------------------------------


def declare(log: Log, who: str, cards: str) -> int:
    return log.add("PokerHandDeclared", who, {"cards": cards.split()})


def test_poker_tie_splits_with_the_odd_chip_from_left_of_the_dealer() -> None:
    log = opening(three_in_one=True)
    st = state_of(log)
    assert st.to_act() == ["a", "b", "c"]
    assert len([m for m in st.legal_moves("a") if m[0] == "PokerHandDeclared"]) == 1287
    assert st.legal_moves("a")[1] == ("PokerHandDeclared", {"cards": ["2H", "3H", "7H", "JH", "AH"]})
    declare(log, "a", "AH QC JD 8D 4C")
    assert state_of(log).to_act() == ["b", "c"]  # the widow offer closed
    declare(log, "c", "6H 9H KH 3C 7C")
    declare(log, "b", "AS QH JS 8H 4H")  # the same A Q J 8 4 as a
    assert findings_of(log) == []
    assert transfers(log, "poker ante") == [("a", "poker", 1), ("c", "poker", 1), ("b", "poker", 1)]
    assert transfers(log, "poker pot") == [("poker", "a", 2), ("poker", "b", 1)]
    st = state_of(log)
    assert st.to_act() == ["a"] and st.poker_winners == ["a", "b"]
    plays(log, "a:2H")  # declared cards stay in the hand
    assert findings_of(log) == []


def test_poker_best_hand_takes_the_pot() -> None:
    log = opening(three_in_one=True)
    declare(log, "a", "2H 3H 7H JH AH")  # a flush
    declare(log, "b", "KC KD 9C 9D AS")  # two pair
    declare(log, "c", "AC AD TC TD QS")  # aces up
    assert transfers(log, "poker pot") == [("poker", "a", 3)]


def test_widow_is_bought_before_poker() -> None:
    log = opening(three_in_one=True)
    log.add("WidowBought", "c", {"price": 1})
    declare(log, "c", "5S 6S 7S 8S 9S")  # a straight flush from the widow
    declare(log, "a", "2H 3H 7H JH AH")
    declare(log, "b", "KC KD 9C 9D AS")
    assert findings_of(log) == []
    assert transfers(log, "poker pot") == [("poker", "c", 3)]


def test_widow_after_poker_began_is_MI_WIDOW() -> None:
    log = opening(three_in_one=True)
    declare(log, "a", "2H 3H 7H JH AH")
    seq = log.add("WidowBought", "b", {"price": 1})
    found, msg = only_finding(log)
    assert found == (seq, "MI-WIDOW", "violation") and "poker declarations began" in msg


def test_second_declaration_is_MI_POKER() -> None:
    log = opening(three_in_one=True)
    declare(log, "a", "2H 3H 7H JH AH")
    seq = declare(log, "a", "4C 8C QC 4D 8D")
    found, msg = only_finding(log)
    assert found == (seq, "MI-POKER", "violation") and "already declared" in msg
    assert transfers(log, "poker ante") == [("a", "poker", 1)]


def test_declaration_without_three_in_one_is_MI_POKER() -> None:
    log = opening()
    seq = declare(log, "a", "2H 3H 7H JH AH")
    found, msg = only_finding(log)
    assert found == (seq, "MI-POKER", "violation") and "three_in_one is off" in msg


def test_stop_phase_before_everyone_declared_is_MI_POKER() -> None:
    log = opening(three_in_one=True)
    declare(log, "a", "2H 3H 7H JH AH")
    declare(log, "b", "KC KD 9C 9D AS")
    seq = plays(log, "a:2H")
    found, msg = only_finding(log)
    assert found == (seq, "MI-POKER", "violation")
    assert msg == "the stop phase began before c declared a poker hand"
    assert transfers(log, "poker pot") == [("poker", "a", 2)]  # settled among the declared


def test_repeated_card_declaration_is_MI_POKER_and_cannot_win() -> None:
    log = opening(three_in_one=True)
    seq = declare(log, "a", "AH AH JH 7H 3H")
    declare(log, "b", "4H 8H QH 2C 5C")
    declare(log, "c", "6H 9H KH 3C 7C")
    assert findings_of(log) == [(seq, "MI-POKER", "violation")]
    assert transfers(log, "poker pot") == [("poker", "c", 3)]  # K high beats Q high


def test_declaring_a_card_not_held_halts_C_HOLD() -> None:
    log = opening(three_in_one=True)
    seq = declare(log, "a", "2H 3H 7H JH KH")
    rec = replay(log.events)
    assert triples(rec) == [(seq, "C-HOLD", "integrity")] and "held by c" in rec.findings[0].message


def test_poker_claim_wrong_is_C_CLAIM() -> None:
    events = driver_game(3, 6, three_in_one=True)
    i, t = next((i, t) for i, e in enumerate(events) if e["type"] == "ChipsTransferred"
                for t in e["payload"]["transfers"] if t["reason"] == "poker pot")
    t["amount"] += 1
    rec = record(events)
    assert (i, "C-CLAIM", "discrepancy") in triples(rec)


# --- MI-END ----------------------------------------------------------------------------------


def test_deals_dealer_rotation_and_game_winners_by_net() -> None:
    events = driver_game(4, 7)
    rec = record(events)
    assert rec.clean
    deals = [e["payload"] for e in events if e["type"] == "RoundStarted"]
    assert [d["round"] for d in deals] == [1, 2, 3, 4]  # one deal per player
    assert [d["dealer"] for d in deals] == [0, 1, 2, 3]
    best = max(rec.results.net.values())
    assert rec.results.winners == sorted(p for p, v in rec.results.net.items() if v == best)
    assert sum(rec.results.net.values()) == 0  # every pool is empty at the end
    assert record(driver_game(4, 7, deals=2)).state.deals_started == 2  # type: ignore[union-attr]


def test_game_end_split_of_pay_card_chips_remainder_from_left_of_last_dealer() -> None:
    log = opening()
    st = state_of(log)
    st.pools.update({"pay:JS": 5, "pay:QD": 0, "pay:KC": 2, "pay:AH": 4})
    before = len(st.ctx.transfers)
    st._end_game()
    got = [t.key() for t in st.ctx.transfers[before:]]
    # 11 chips, 3 players: 3 each, the 2 odd chips to a and b (left of the dealer c);
    # poured from the pools in pay_cards order
    assert got == [("pay:JS", "a", 4), ("pay:JS", "b", 1), ("pay:KC", "b", 2), ("pay:AH", "b", 1),
                   ("pay:AH", "c", 3)]
    assert all(v == 0 for k, v in st.pools.items() if k.startswith("pay:"))
    assert st.over


def test_wrong_dealer_is_MI_END_and_the_platform_deal_is_followed() -> None:
    log = Log()
    log.created("michigan", SEATS, dealer=2)
    seq = log.round(STACKED, dealer=0)
    found, msg = only_finding(log)
    assert found == (seq, "MI-END", "violation")
    assert msg == "deal 1 dealt by seat 0; the dealer is seat 2 (c)"
    assert state_of(log).snapshot()["hands"]["b"] == sorted_cards(HAND_A)  # b was left of a


def test_wrong_round_number_is_a_C_CLAIM_discrepancy() -> None:
    """Audit 3: RoundStarted.round is a number the platform claims (RULES.md §0/§5), so a
    wrong one is C-CLAIM in every variant (it was MI-END here)."""
    log = Log()
    log.created("michigan", SEATS, dealer=2)
    seq = log.round(STACKED, dealer=2, round_no=2)
    assert findings_of(log) == [(seq, "C-CLAIM", "discrepancy")]


def test_deal_beyond_the_configured_deals_is_MI_END_and_ignored() -> None:
    events = driver_game(3, 8, deals=1)
    j = next(i for i, e in enumerate(events) if e["type"] == "RoundEnded")
    extra = copy.deepcopy(next(e for e in events if e["type"] == "RoundStarted"))
    extra["payload"]["round"] = 2
    extra["payload"]["dealer"] = 1
    # a play inside the ignored deal: nobody is entitled to act after the game's last deal
    # (C-TURN, as for a play after the game with no extra deal logged), and it is ignored
    move = copy.deepcopy(events[j - 2])
    events = renumber([*events[:j], extra, move, *events[j:]])
    rec = record(events)
    assert triples(rec) == [(j, "MI-END", "violation"), (j + 1, "C-TURN", "violation")]
    assert "over after 1 deals" in rec.findings[0].message


def test_new_deal_before_anyone_went_out_is_MI_END() -> None:
    events = driver_game(3, 9, deals=2)
    i = find(events, lambda st, e: e["type"] == "CardPlayed" and len(st.played) == 10)
    extra = copy.deepcopy(next(e for e in events if e["type"] == "RoundStarted"))
    extra["payload"].update(round=2, dealer=1)
    events = renumber([*events[:i], extra])
    rec = record(events)
    assert triples(rec) == [(i, "MI-END", "violation")]
    st = rec.state
    assert isinstance(st, Michigan)
    widow = sum(1 for e in events if e["type"] == "WidowBought")
    assert st.round_result(1) is None
    assert st.pools["kitty"] == 4 + widow + 4  # deal 1's kitty rolled into deal 2


def test_game_winners_claim_wrong_is_C_CLAIM() -> None:
    events = driver_game(3, 10)
    end = events[-1]
    right = record(events).results.winners
    end["payload"]["winners"] = [p for p in ("p1", "p2", "p3") if p not in right][:1]
    rec = record(events)
    assert triples(rec) == [(end["seq"], "C-CLAIM", "discrepancy")]
    assert f"recomputed {sorted(right)}" in rec.findings[0].message


# --- mutation tests ---------------------------------------------------------------------------


def test_card_not_in_hand_halts_C_HOLD() -> None:
    events = driver_game(5, 11)
    i = find(events, lambda st, e: e["type"] == "CardPlayed" and len(st.played) == 7)
    st = state_before(events, i)
    seat = st.index[events[i]["actor"]]
    other = next(c for c in range(52) if st.owner[c] >= 0 and st.owner[c] != seat)
    events[i]["payload"]["card"] = format_cards([other])[0]
    rec = record(events)
    assert triples(rec) == [(i, "C-HOLD", "integrity")] and rec.halted
    assert rec.events_read == len(events)  # the rest was read but not judged


def test_playing_a_widow_card_halts_C_HOLD() -> None:
    events = game_where(3, lambda ev: sum(e["type"] == "WidowBought" for e in ev) < 3, first=12)
    i = find(events, lambda st, e: e["type"] == "CardPlayed" and st.widow_buyer is None
             and len(st.played) == 3)
    st = state_before(events, i)
    widow_card = next(c for c in range(52) if st.owner[c] == -1)
    events[i]["payload"]["card"] = format_cards([widow_card])[0]
    rec = record(events)
    assert triples(rec) == [(i, "C-HOLD", "integrity")]
    assert "in the widow" in rec.findings[0].message


def test_wrong_kitty_payout_is_C_CLAIM() -> None:
    events = driver_game(4, 13)
    i, t = next((i, t) for i, e in enumerate(events) if e["type"] == "ChipsTransferred"
                for t in e["payload"]["transfers"] if t["reason"] == "kitty")
    t["amount"] += 2
    rec = record(events)
    assert triples(rec)[0] == (i, "C-CLAIM", "discrepancy")
    assert f"kitty->{t['to']} {t['amount']}" in rec.findings[0].message


def test_wrong_net_claim_is_C_CLAIM() -> None:
    events = driver_game(3, 14)
    events[-1]["payload"]["net"]["p1"] += 5
    rec = record(events)
    assert triples(rec) == [(events[-1]["seq"], "C-CLAIM", "discrepancy")]
    assert "p1: claimed" in rec.findings[0].message


def test_tampered_hash_is_LOG_CHAIN() -> None:
    events = chain(driver_game(3, 15))
    assert replay(events).clean
    i = next(i for i, e in enumerate(events) if e["type"] == "CardPlayed")
    st = state_before(events, i)
    card = parse_card(events[i]["payload"]["card"])
    same_holder = next(c for c in range(52) if c != card and st.owner[c] == st.owner[card])
    events[i]["payload"]["card"] = format_cards([same_holder])[0]  # still a card he holds
    rec = replay(events)
    assert (i, "LOG-CHAIN", "integrity") in triples(rec)


def test_unknown_event_type_is_LOG_EVENT() -> None:
    log = opening()
    seq = log.add("Discarded", "a", {"card": "2H"})
    assert findings_of(log) == [(seq, "LOG-EVENT", "integrity")]


def test_moves_outside_a_deal_are_C_TURN() -> None:
    log = Log()
    log.created("michigan", SEATS, dealer=2)
    seq = log.add("CardPlayed", "a", {"card": "2H"})
    seq2 = log.add("WidowBought", "zed", {"price": 1})
    assert findings_of(log) == [(seq, "C-TURN", "violation"), (seq2, "C-TURN", "violation")]


def test_seat_count_outside_three_to_eight_is_reported() -> None:
    log = Log()
    log.created("michigan", ["a", "b"], dealer=0)
    assert findings_of(log) == [(0, "LOG-GAME", "integrity")]


# --- leaving -------------------------------------------------------------------------------------


def leaving_policy(who: str, after_played: int) -> Any:
    def policy(turn: Turn) -> Choice:
        st = turn.state
        assert isinstance(st, Michigan)
        if turn.player == who and st.deals_started == 1 and len(st.played) >= after_played:
            return Choice("PlayerLeft", {}, 1000)
        return random_policy(turn)
    return policy


def test_player_who_leaves_mid_deal_is_out_and_the_game_goes_on() -> None:
    for seed in range(6):
        platform = Platform(f"left-{seed}", "michigan", ["p1", "p2", "p3", "p4"], seed=seed)
        events = platform.run(leaving_policy("p2", 6))
        left = [e["seq"] for e in events if e["type"] == "PlayerLeft"]
        if not left:
            continue
        rec = replay(events)
        assert rec.clean, rec.findings
        assert all(e["actor"] != "p2" for e in events if e["seq"] > left[0])
        st = rec.state
        assert isinstance(st, Michigan)
        assert not st.active[1] and st.over and "p2" not in rec.results.winners
        assert st.deals_started == 4
        dealers = [e["payload"]["dealer"] for e in events if e["type"] == "RoundStarted"]
        assert dealers == [0, 2, 3, 0]  # the rotation skips him
        return
    pytest.fail("no seed made p2 leave")


def test_last_player_standing_wins_the_deal_and_the_game() -> None:
    log = opening()
    plays(log, "a:2H a:3H b:4H")
    log.add("PlayerLeft", "b")
    st = state_of(log)
    assert st.to_act() == ["c"]  # b was to restart: the right passes to c
    log.add("PlayerLeft", "c")
    log.sys("PlayerRemoved", {"player": "c", "reason": "left"})
    rec = replay(log.events)
    assert rec.findings == []
    st = rec.state
    assert isinstance(st, Michigan)
    assert st.over and st.round_result(1) == (["a"], {}) and rec.results.winners == ["a"]
    assert rec.results.net == {"a": 11, "b": -5, "c": -6}  # kitty 4 + all 12 pay-card chips


def test_leaving_during_the_poker_phase_settles_among_the_rest() -> None:
    log = opening(three_in_one=True)
    declare(log, "a", "2H 3H 7H JH AH")
    declare(log, "b", "KC KD 9C 9D AS")
    log.add("PlayerLeft", "c")
    assert findings_of(log) == []
    assert transfers(log, "poker pot") == [("poker", "a", 2)]
    st = state_of(log)
    assert st.to_act() == ["a"] and st.snapshot()["hand_counts"]["c"] == 0
    plays(log, "a:2H a:3H b:4H")  # 5H is in the widow: b restarts
    assert state_of(log).to_act() == ["b"] and findings_of(log) == []


def test_removal_claims_are_checked() -> None:
    log = opening()
    seq = log.sys("PlayerRemoved", {"player": "b", "reason": "strikes"})
    seq2 = log.sys("PlayerRemoved", {"player": "c", "reason": "left"})
    assert findings_of(log) == [(seq, "C-CLAIM", "discrepancy"), (seq2, "C-CLAIM", "discrepancy")]
    st = state_of(log)
    assert st.over and st.active == [True, False, False]


# --- views and legal moves -------------------------------------------------------------------------


def test_player_view_hides_widow_dead_hand_and_others_hands() -> None:
    log = opening(three_in_one=True)
    log.add("WidowBought", "b", {"price": 1})
    declare(log, "a", "2H 3H 7H JH AH")
    st = state_of(log)
    view_a, view_b, full = st.snapshot("a"), st.snapshot("b"), st.snapshot()
    assert set(view_a["hands"]) == {"a"} and view_a["widow"] is None and view_a["dead"] is None
    assert view_b["dead"] == sorted_cards(HAND_B)  # he saw his own old hand
    assert view_b["poker"]["declared"] == {}  # a's hand is not shown before the showdown
    assert view_a["poker"]["declared"] == {"a": ["2H", "3H", "7H", "JH", "AH"]}
    assert full["widow"] == [] and full["widow_buyer"] == "b"
    for key in ("variant", "round", "dealer", "in_turn", "active", "hands", "hand_counts", "pots",
                "scores", "over", "winners"):
        assert key in view_a
    assert full["phase"] == "poker" and full["to_act"] == ["b", "c"]
    seq = len(log.events) - 1
    assert state_at(log.events, seq, "c")["hands"] == {"c": sorted_cards(HAND_C)}


def test_legal_moves_agree_with_the_rules() -> None:
    """Every legal move of every entitled player, at every step of several games, replays
    without a finding; players not entitled have no move."""
    for seed in (20, 21):
        events = driver_game(4, seed, three_in_one=seed == 21)
        checked = 0
        for i, st, e in walk(events):
            if st is None or e["type"] not in ("CardPlayed", "WidowBought", "PokerHandDeclared"):
                continue
            entitled = set(st.to_act())
            for p in st.ctx.seats:
                moves = st.legal_moves(p)
                assert bool(moves) == (p in entitled), (i, p)
                for kind, payload in moves[:4]:
                    trial = [*cut(events, i - 1), dict(e, type=kind, actor=p, payload=payload)]
                    assert record(trial).clean, (i, p, kind, payload)
                    checked += 1
        assert checked > 50


def test_clean_driver_games_all_sizes() -> None:
    for n in range(3, 9):
        for seed in range(4):
            for tio in (False, True):
                events = driver_game(n, seed, three_in_one=tio)
                rec = record(events)
                assert rec.clean, (n, seed, tio, rec.findings[:2])
                assert sum(1 for e in events if e["type"] == "RoundStarted") == n
                assert rec.to_dict() == record(events).to_dict()  # deterministic
                st = rec.state
                assert isinstance(st, Michigan) and st.over
                assert all(v == 0 for v in st.pools.values())
                assert sum(rec.results.net.values()) == 0


def test_chips_are_conserved_at_every_event() -> None:
    events = driver_game(6, 30, three_in_one=True)
    for _, st, _e in walk(events):
        if st is not None:
            assert sum(st.net) + sum(st.pools.values()) == 0


def test_poker_legal_moves_are_all_five_card_subsets_best_first() -> None:
    log = opening(three_in_one=True)
    st = state_of(log)
    decl = [m[1]["cards"] for m in st.legal_moves("c") if m[0] == "PokerHandDeclared"]
    assert len(decl) == len(list(combinations(HAND_C, 5)))
    assert len({tuple(d) for d in decl}) == len(decl)
    assert decl[0] == ["TC", "TD", "KH", "AC", "AD"]  # aces and tens, king kicker
