"""Spec audit of Rummy 500 (RULES.md §2) and Liverpool (RULES.md §3): the odd corners.

Each test reads one sentence of the spec (or one decision written in the variant's
module docstring where the spec is silent) and checks the replay's exact output: the
findings ``(seq, rule, kind)``, the state after the move, or the recomputed results.
Tests marked "fixed" failed before the audit's change to the variant module.

r500 logs come from tests/r500kit.py (two players, dealer p2, p1 starts); Liverpool logs
from the builders of tests/test_liverpool.py (three players, dealer p2, p0 starts; or the
stored clean two-player game cut before round 3).
"""

from __future__ import annotations

import json
from typing import Any

from logkit import findings
from r500kit import P1, P2, P2_PENALTY, RUN_H, UP, Script, go_out_round
from test_liverpool import DATA, H1, STOCK, Log, deal_first, opening, three

from rummyguard.replay.engine import GameRecord, replay, state_at
from rummyguard.replay.rules.liverpool import Liverpool
from rummyguard.replay.rules.r500 import chip_payments

P1J = ["3H", "4H", "5H", "JK", "7C", "7D", "7S", "7H", "TD", "JD", "QD", "KD", "2C"]


def lv_findings(rec: GameRecord) -> list[tuple[int, str, str]]:
    return [(f.seq, f.rule, f.kind) for f in rec.findings]


# == Rummy 500 ===================================================================================

# -- R5-END: a deal while a round is live is one breach (fixed) ----------------------------------


def test_r500_redeal_of_the_same_round_is_one_R5_END_finding():
    """The platform deals round 1 again (same number, same dealer) in the middle of it:
    one R5-END, not also a C-CLAIM on the round number and a C-DEAL on the dealer."""
    s = Script(rules={"mode": "rounds", "rounds": 2})
    s.draw("p1")
    s.round_no = 0
    seq = s.deal([P1, P2], UP, [], dealer=1)
    record = replay(s.log.events)
    assert findings(record) == [(seq, "R5-END", "violation")]
    view = record.state.snapshot()
    assert view["round"] == 1 and view["in_turn"] == "p1" and view["hand_counts"]["p1"] == 13


def test_r500_redeal_logged_as_the_next_round_is_one_R5_END_finding():
    s = Script(rules={"mode": "rounds", "rounds": 2})
    s.draw("p1")
    seq = s.deal([P2, P1], UP, [], dealer=0)
    record = replay(s.log.events)
    assert findings(record) == [(seq, "R5-END", "violation")]
    assert record.state.snapshot()["round"] == 2 and record.state.round_result(1) is None


# -- R5-LAYOFF: the logged end binds (fixed) -----------------------------------------------------


def test_r500_natural_laid_off_at_the_wrong_end_is_R5_LAYOFF():
    """2H fits 3H-6H only below 3H; the log says the platform put it at the high end."""
    s = Script()
    s.draw("p1")  # 2H
    s.meld("p1", RUN_H)
    seq = s.layoff("p1", "2H", 0, "high")
    record = replay(s.log.events)
    assert findings(record) == [(seq, "R5-LAYOFF", "violation")]
    meld = record.state.snapshot()["melds"][0]
    assert meld["cards"] == ["3H", "4H", "5H", "6H", "2H"]  # placed as logged


def test_r500_natural_without_end_goes_where_it_fits():
    s = Script()
    s.draw("p1")
    s.meld("p1", RUN_H)
    s.layoff("p1", "2H", 0)
    record = replay(s.log.events)
    assert findings(record) == []
    meld = record.state.snapshot()["melds"][0]
    assert meld["cards"][0] == "2H" and meld["points"][0] == 2


# -- GameCreated.rules: null means "not set" (fixed) --------------------------------------------


def test_r500_null_rules_values_take_the_defaults():
    s = Script(rules={"mode": None, "target": None, "chip_ratio": None})
    record = replay(s.log.events)
    assert findings(record) == []
    assert record.state.config == {"mode": "target", "target": 500, "rounds": 1, "chip_ratio": 1}


def test_r500_null_for_an_unknown_key_is_still_LOG_RULES():
    s = Script(rules={"max_buys": None})
    assert findings(replay(s.log.events)) == [(0, "LOG-RULES", "integrity")]


# -- deep discard-pile draws (R5-DRAW-PILE, R5-USE-BOTTOM, R5-NODISCARD-TOP) -------------------------


def test_r500_deepest_card_swapped_for_a_table_joker_is_used():
    """R5-USE-BOTTOM: "melded, laid off, or swapped for a joker on the table"."""
    s = Script(hands=[P1J, P2], up="6H")
    s.log.draw("p1", "stock", "2H")
    s.meld("p1", {"kind": "run", "cards": ["3H", "4H", "5H", "JK"]})  # JK = 6H
    s.log.discard("p1", "2C")
    s.log.draw("p2", "discard", "6H", "2C")  # the up-card and p1's discard: 6H deepest
    s.swap("p2", 0, "6H")
    s.log.discard("p2", "2C")  # a taken card other than the deepest may go
    record = replay(s.log.events)
    assert findings(record) == []
    view = record.state.snapshot()
    assert view["melds"][0]["cards"] == ["3H", "4H", "5H", "6H"] and view["hand_counts"]["p2"] == 14


def deep_joker() -> Script:
    """p1 discards a joker, p2 covers it with KS, p1 takes both back: JK is the deepest."""
    s = Script(hands=[P1J, P2])
    s.log.draw("p1", "stock", "2H")
    s.log.discard("p1", "JK")
    s.log.draw("p2", "stock", "KS")
    s.log.discard("p2", "KS")
    s.log.draw("p1", "discard", "JK", "KS")
    return s


def test_r500_deepest_joker_melded_then_top_card_discarded_is_clean():
    s = deep_joker()
    s.meld("p1", {"kind": "run", "cards": ["3H", "4H", "5H", "JK"]})
    s.log.discard("p1", "KS")
    assert findings(replay(s.log.events)) == []


def test_r500_deepest_joker_not_used_is_R5_USE_BOTTOM_at_the_discard():
    s = deep_joker()
    s.meld("p1", {"kind": "run", "cards": ["TD", "JD", "QD", "KD"]})
    seq = s.log.discard("p1", "KS")
    record = replay(s.log.events)
    assert findings(record) == [(seq, "R5-USE-BOTTOM", "violation")]
    assert "JK" in record.findings[0].message


def test_r500_deepest_joker_discarded_is_both_pile_rules():
    s = deep_joker()
    seq = s.log.discard("p1", "JK")
    assert findings(replay(s.log.events)) == [(seq, "R5-NODISCARD-TOP", "violation"),
                                              (seq, "R5-USE-BOTTOM", "violation")]


def test_r500_pile_draw_listing_a_gap_is_R5_DRAW_PILE():
    """Cards of the pile that are not one card with every card above it."""
    s = Script()
    s.draw("p1")  # 2H
    s.log.discard("p1", "2C")
    s.draw("p2")  # KS
    s.log.discard("p2", "KS")
    seq = s.log.draw("p1", "discard", "9D", "KS")  # skips 2C between them
    record = replay(s.log.events)
    assert (seq, "R5-DRAW-PILE", "violation") in findings(record)
    assert record.state.snapshot()["discard_pile"] == ["2C"]


# -- R5-VALUES at the edges ------------------------------------------------------------------------


def test_r500_unnamed_low_joker_below_Q_K_reads_as_the_ace_above():
    """C-WILD: a wild at the low end stands for the card below only when the high end is
    A; ``JK QH KH`` is therefore Q K A and the joker is worth 11."""
    s = Script(hands=[["JK", "QH", "KH", *P1[3:]], P2], stock=["4S"])
    s.draw("p1")
    s.meld("p1", {"kind": "run", "cards": ["JK", "QH", "KH"]})
    meld = state_at(s.log.events, s.last())["melds"][0]
    assert meld["stands"] == ["AH", "QH", "KH"] and meld["points"] == [11, 10, 10]


def test_r500_unnamed_low_joker_below_K_A_stands_for_the_queen():
    s = Script(hands=[["JK", "KH", "AH", *P1[3:]], P2], stock=["4S"])
    s.draw("p1")
    s.meld("p1", {"kind": "run", "cards": ["JK", "KH", "AH"]})
    meld = state_at(s.log.events, s.last())["melds"][0]
    assert meld["stands"] == ["QH", "KH", "AH"] and meld["points"] == [10, 10, 11]


# -- R5-GAME / R5-CHIPS boundaries ---------------------------------------------------------------


def test_r500_target_is_reached_at_exactly_the_target():
    """"until at least one player's total >= target": p1 scores 88 in round 1."""
    s = Script(rules={"target": 88})
    go_out_round(s)
    record = replay(s.log.events)
    assert record.state.is_over() and record.results.winners == ["p1"]
    assert record.results.net == {"p1": 100, "p2": -100}
    s = Script(rules={"target": 89})
    go_out_round(s)
    assert not replay(s.log.events).state.is_over()


def test_r500_tournament_stack_of_exactly_zero_is_out_and_one_chip_stays():
    """R5-CHIPS: p2 owes (88 - -87) x 1 = 175. With 175 chips he is left with none (out,
    the game ends); with 176 he keeps one chip and plays on."""
    s = Script(rules={"mode": "tournament"}, stake=175)
    go_out_round(s)
    record = replay(s.log.events)
    assert record.state.is_over() and record.results.winners == ["p1"]
    assert record.results.net == {"p1": 175, "p2": -175}
    s = Script(rules={"mode": "tournament"}, stake=176)
    go_out_round(s)
    record = replay(s.log.events)
    assert not record.state.is_over() and record.state.snapshot()["stacks"] == {"p1": 351, "p2": 1}


def test_r500_chips_tied_winners_split_each_capped_payment_remainder_in_seat_order():
    assert chip_payments({0: 50, 1: 50, 2: -11}, 1) == [(2, 0, 31), (2, 1, 30)]
    # 60 x 3 = 180, capped at the 101 chips seat 2 holds, split 51 / 50
    assert chip_payments({2: 50, 0: 50, 1: -10}, 3, {0: 10, 1: 101, 2: 10}) == [(1, 0, 51), (1, 2, 50)]


def test_r500_round_scores_claim_of_a_negative_score():
    """R5-SCORE can be negative; the claim is compared value by value."""
    s = Script()
    go_out_round(s)
    seq = s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 88, "p2": 87}})
    record = replay(s.log.events)
    assert findings(record) == [(seq, "C-CLAIM", "discrepancy")]
    assert f"p2: claimed 87, recomputed {9 - P2_PENALTY}" in record.findings[0].message


# == Liverpool ===================================================================================


def round3_with_runs(wild_end: str | None) -> tuple[Log, str, int]:
    """The stored two-player game before round 3: ``who`` lays down 3H-6H and 9S-QS,
    both play a turn, then ``who`` lays off the wild 2C on the hearts run."""
    log, who = deal_first(3, "3H 4H 5H 6H 9S TS JS QS 2C 2D", "KS 8H 7D 2S 4C 5D")
    log.drew(who)
    log.laid(who, ("run", "3H 4H 5H 6H"), ("run", "9S TS JS QS"))
    log.disc(who, "KS")
    other = next(s for s in log.seats if s != who)
    log.drew(other)
    log.disc(other, log.events[-1]["payload"]["cards"][0])
    log.drew(who)
    return log, who, log.off(who, "2C", 0, wild_end)


# -- lay-offs without `end` (fixed) --------------------------------------------------------------


def test_lv_wild_laid_off_without_end_reads_high_like_C_WILD():
    log, _who, seq = round3_with_runs(None)
    rec = log.replay()
    assert rec.clean, rec.findings
    meld = rec.state.melds[0]
    assert meld.to_dict()["stands"] == ["3H", "4H", "5H", "6H", "7H"] and meld.hi == 7 and seq


def test_lv_wild_laid_off_at_a_named_end_binds():
    log, _who, _seq = round3_with_runs("low")
    rec = log.replay()
    assert rec.clean, rec.findings
    assert rec.state.melds[0].to_dict()["stands"][0] == "2H"


def test_lv_wild_without_end_on_a_run_ending_in_the_ace_goes_low():
    log, who = deal_first(3, "JH QH KH AH 9S TS JS QS 2C 2D", "KS 8H 7D 2S 4C 5D")
    log.drew(who)
    log.laid(who, ("run", "JH QH KH AH"), ("run", "9S TS JS QS"))
    log.disc(who, "KS")
    other = next(s for s in log.seats if s != who)
    log.drew(other)
    log.disc(other, log.events[-1]["payload"]["cards"][0])
    log.drew(who)
    log.off(who, "2C", 0)
    rec = log.replay()
    assert rec.clean, rec.findings
    assert rec.state.melds[0].to_dict()["stands"] == ["TH", "JH", "QH", "KH", "AH"]


def test_lv_natural_laid_off_at_the_wrong_end_is_LV_LAYOFF():
    log, who = deal_first(3, "3H 4H 5H 6H 9S TS JS QS 7H 2D", "KS 8H 7D 2S 4C 5D")
    log.drew(who)
    log.laid(who, ("run", "3H 4H 5H 6H"), ("run", "9S TS JS QS"))
    log.disc(who, "KS")
    other = next(s for s in log.seats if s != who)
    log.drew(other)
    log.disc(other, log.events[-1]["payload"]["cards"][0])
    log.drew(who)
    seq = log.off(who, "7H", 0, "low")
    rec = log.replay()
    assert lv_findings(rec)[-1:] == [(seq, "LV-LAYOFF", "violation")]
    assert rec.state.melds[0].to_dict()["cards"][0] == "7H"  # placed as logged


# -- melds laid down broken: nothing fits them (fixed) ---------------------------------------------

BROKEN_P0 = "5C 5D 9S 9C 9D 9H 2C QS JS 4C"


def broken_set_game() -> tuple[Log, int]:
    """p0 lays down ``5C 5D 9S`` (C-SET) and 9C-9H; p1 lays down sevens and eights."""
    log = Log(["p0", "p1", "p2"], dealer=2)
    log.deal(1, 2, {0: BROKEN_P0, 1: H1, 2: "3C 3H 6C 6D JD QD TC AC AD 2S"}, "KD", STOCK)
    log.drew("p0")                                                    # 2
    bad = log.laid("p0", ("set", "5C 5D 9S"), ("set", "9C 9D 9H"))    # 3
    log.disc("p0", "4C")
    log.drew("p1")
    log.laid("p1", ("set", "7C 7D 7H"), ("set", "8C 8D 8H"))          # melds 2, 3
    log.disc("p1", "TS")
    log.drew("p2")
    return log, bad


def test_lv_wild_laid_off_on_a_broken_set_is_LV_LAYOFF():
    log, bad = broken_set_game()
    log.disc("p2", "TH")
    log.drew("p0")
    seq = log.off("p0", "2C", 0)
    rec = log.replay()
    assert lv_findings(rec) == [(bad, "C-SET", "violation"), (seq, "LV-LAYOFF", "violation")]
    assert "laid down broken" in rec.findings[1].message


def test_lv_rummy_call_onto_a_broken_set_is_LV_RUMMY():
    log, bad = broken_set_game()
    log.disc("p2", "2S")  # a wild fits any good meld: p1 may call it onto his sevens
    assert log.replay().state.entitled_callers() == [1]
    clean = log.call("p1", "2S", 2, "3D")
    assert lv_findings(log.replay()) == [(bad, "C-SET", "violation")] and clean
    log.events.pop()
    seq = log.call("p1", "2S", 0, "3D")
    assert lv_findings(log.replay()) == [(bad, "C-SET", "violation"), (seq, "LV-RUMMY", "violation")]


# -- a deal while a round is live (fixed) ------------------------------------------------------------


def test_lv_redeal_logged_as_the_next_round_is_one_LV_OUT_finding():
    log = opening(three(), 2)
    seq = log.deal(2, 0, {1: H1, 2: "3C 3H 6C 6D JD QD TC AC AD 5S",
                          0: "5C 5D 5H 9C 9D 9H 9S QS JS 4C"}, "KD", STOCK)
    rec = log.replay()
    assert lv_findings(rec) == [(seq, "LV-OUT", "violation")]
    st = rec.state
    assert isinstance(st, Liverpool)
    assert st.snapshot()["contract"] == "1 set + 1 run" and st.round_result(1) is None
    assert st.to_act() == ["p1"]  # left of dealer seat 0


# -- who may act: before the first deal, after the game (fixed) -------------------------------------


def test_lv_move_before_the_first_deal_is_C_TURN():
    log = Log(["p0", "p1", "p2"], dealer=2)
    seq = log.add("Drew", "p0", {"source": "stock", "cards": ["4H"]})
    buy = log.add("Bought", "p1", {"card": "KD", "penalty": "4H"})
    assert lv_findings(log.replay()) == [(seq, "C-TURN", "violation"), (buy, "C-TURN", "violation")]


def stored_clean_two_player_game() -> list[dict[str, Any]]:
    lines = (DATA / "clean-2p.jsonl").read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k not in ("hash", "prev_hash")}
            for line in lines if line.strip()]


def test_lv_buy_and_call_after_the_game_ended_are_C_TURN():
    events = stored_clean_two_player_game()
    assert replay(events).state.is_over()
    seats = events[0]["payload"]["seats"]
    base = dict(events[-1])
    extra = []
    for i, (type_, payload) in enumerate([
        ("Bought", {"card": "KD", "penalty": "4H"}),
        ("RummyCalled", {"card": "KD", "meld": 0, "discard": "4H"}),
    ]):
        seq = base["seq"] + 1 + i
        extra.append({**base, "event_id": f"extra-{i}", "seq": seq, "type": type_, "v": 1,
                      "actor": seats[0], "payload": payload})
    rec = replay(events + extra)
    assert lv_findings(rec)[-2:] == [(extra[0]["seq"], "C-TURN", "violation"),
                                     (extra[1]["seq"], "C-TURN", "violation")]


def test_lv_player_left_twice_is_not_a_finding():
    log = three()
    log.add("PlayerLeft", "p1", {})
    log.add("PlayerRemoved", "system", {"player": "p1", "reason": "left"})
    log.add("PlayerLeft", "p1", {})
    assert log.replay().clean
    seq = log.add("PlayerLeft", "stranger", {})
    assert lv_findings(log.replay()) == [(seq, "C-TURN", "violation")]


def test_lv_null_rules_values_take_the_defaults():
    log = Log(["p0", "p1", "p2"], dealer=2, rules={"max_buys": None, "set_distinct_suits": None})
    rec = log.replay()
    assert rec.clean, rec.findings
    assert rec.state.config == {"set_distinct_suits": True, "max_buys": -1}


# -- buy and Rummy windows (pinned) ------------------------------------------------------------------


def test_lv_rummy_callers_discard_is_live_for_the_next_draw_and_then_for_buying():
    """LV-RUMMY: the caller discards a card of his own; the next player still draws (he
    may take it), and after a stock draw a player who has not laid down may buy it."""
    log = opening(three())  # p2 discarded 5S (fits p0's fives); p0 is next to draw
    log.call("p1", "5S", 0, "3D")
    log.drew("p0")
    seq = log.buy("p2", "3D")
    rec = log.replay()
    assert rec.clean, rec.findings
    st = rec.state
    assert st.buys == [0, 0, 1] and st.hand_size(2) == 12 and seq


def test_lv_caller_may_not_buy_back_his_own_rummy_discard():
    log = opening(three())
    log.call("p1", "5S", 0, "3D")
    log.drew("p0")
    seq = log.buy("p1", "3D")
    rec = log.replay()
    assert lv_findings(rec) == [(seq, "LV-BUY", "violation")]
    assert "may not buy back his own discard" in rec.findings[0].message
    assert "has laid down" in rec.findings[0].message


def test_lv_buy_window_stays_open_after_the_player_in_turn_lays_down():
    """"the discard may be bought until he discards": laying down does not close it."""
    log = three()
    log.drew("p0")
    log.laid("p0", ("set", "5C 5D 5H"), ("set", "9C 9D 9H"))
    log.buy("p1", "KD")
    assert log.replay().clean
    log.disc("p0", "4C")
    seq = log.buy("p2", "KD")  # the window closed with p0's discard
    assert lv_findings(log.replay())[0] == (seq, "LV-BUY", "violation")
