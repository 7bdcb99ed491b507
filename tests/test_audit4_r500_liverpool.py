"""Third spec audit (fresh eyes): the odd corners of Rummy 500 (RULES.md §2: deep pile
draws, lay-offs, melded v held points, the end of a round and of the game) and Liverpool
(RULES.md §3: buy windows, the Rummy call, the six contracts, going out, scoring), in
complete logs.

Every expected value below was written by hand from the spec before the log was run; the
hand computation sits next to it. Each test checks what an independent checker compares:
``winners``, ``net``, ``scores``, the findings (rule, kind, seq, and that no other finding
appears), halting, and ``state_at`` with and without a viewer.

r500 logs use tests/r500kit.py (two players, dealer p2, so p1 plays first; the stock
starts ``2H KS AH JK QH``). Liverpool logs use the :class:`test_liverpool.Log` builder
(three players; every hand, the up-card and the top of the stock given in full).
"""

from __future__ import annotations

import copy
from typing import Any

from logkit import findings
from r500kit import P1, P2, RUN_H, SET_7, Script
from test_liverpool import H1, H2, UP, Log

from rummyguard.events.cards import format_cards, parse_cards
from rummyguard.replay.engine import GameRecord, replay, state_at
from rummyguard.replay.rules.liverpool import Liverpool

Events = list[dict[str, Any]]


def pot_claims(seats: list[str], stake: int, payouts: dict[str, int]) -> dict[str, Any]:
    """One ChipsTransferred payload: every stake into the pot, then the payouts."""
    transfers = [{"from": p, "to": "pot", "amount": stake, "reason": "stake"} for p in seats]
    transfers += [{"from": "pot", "to": p, "amount": a, "reason": "pot"} for p, a in payouts.items()]
    return {"transfers": transfers}


# == Rummy 500: a round of deep pile draws ===========================================================
#
# p1 (3H 4H 5H 6H 7C 7D 7S 7H TD JD QD KD 2C) and p2 (AS 2S 5C 6D 9S 8C JC QS 4D 9C TC 3S 5D);
# the pile starts with 9D. Mode rounds, one round, stake 100.
#
#  p1 draws 2H, melds 3H-6H (18), discards 2C            pile 9D 2C
#  p2 draws KS, discards it                              pile 9D 2C KS
#  p1 takes 9D 2C KS (9D deepest), melds 9D-KD (9 + 40 = 49), lays 2H off low on 3H-6H (2),
#     discards KS (a pile card, but not the deepest: allowed)          pile KS
#  p2 draws AH, lays it off low on AH-6H (the ace is 1 there), discards 5D   pile KS 5D
#  p1 draws JK, melds the four 7s (28), discards 2C                    pile KS 5D 2C
#  p2 takes 5D 2C (5D deepest, his own earlier discard), melds 4D 5D 6D (15), discards 2C
#  p1 draws QH, lays JK off on 9D-KD (no ``end``: C-WILD reads it high, the ace: 11),
#     discards QH: out.
#
#  p1: 18 + 49 + 2 + 28 + 11 = 108, nothing in hand.
#  p2: 1 + 15 = 16 melded; holds AS 15, 2S 2, 5C 5, 9S 9, 8C 8, JC 10, QS 10, 9C 9, TC 10,
#      3S 3 = 81; 16 - 81 = -65. p1 wins the round and the game: the pot of 200.

R5_SCORES = {"p1": 108, "p2": -65}


def r500_deep_round(*, p2_uses_bottom: bool = True) -> tuple[Script, dict[str, int]]:
    """The round above (claims not yet logged); returns the script and the seqs of note.
    ``p2_uses_bottom=False``: p2 takes 5D 2C and discards 2C without using 5D."""
    s = Script(rules={"mode": "rounds", "rounds": 1})
    at: dict[str, int] = {}
    s.draw("p1")
    s.meld("p1", RUN_H)
    s.log.discard("p1", "2C")
    s.draw("p2")
    s.log.discard("p2", "KS")
    at["deep"] = s.log.draw("p1", "discard", "9D", "2C", "KS")
    at["meld_9d"] = s.meld("p1", {"kind": "run", "cards": ["9D", "TD", "JD", "QD", "KD"]})
    s.layoff("p1", "2H", 0, "low")
    at["discard_ks"] = s.log.discard("p1", "KS")
    s.draw("p2")
    s.layoff("p2", "AH", 0, "low")
    s.log.discard("p2", "5D")
    s.draw("p1")
    s.meld("p1", SET_7)
    s.log.discard("p1", "2C")
    at["deep2"] = s.log.draw("p2", "discard", "5D", "2C")
    if p2_uses_bottom:
        s.meld("p2", {"kind": "run", "cards": ["4D", "5D", "6D"]})
    at["discard_2c"] = s.log.discard("p2", "2C")
    s.draw("p1")
    s.layoff("p1", "JK", 1)
    at["out"] = s.log.discard("p1", "QH")
    return s, at


def close_r500(s: Script, scores: dict[str, int]) -> dict[str, int]:
    at = {"round_ended": s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": scores})}
    at["chips"] = s.sys("ChipsTransferred", pot_claims(["p1", "p2"], 100, {"p1": 200}))
    at["game_ended"] = s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    return at


def test_r500_round_of_deep_pile_draws_scores_melded_minus_held() -> None:
    s, _at = r500_deep_round()
    close_r500(s, R5_SCORES)
    rec = replay(s.log.events)
    assert findings(rec) == [] and not rec.halted
    assert rec.results.to_dict() == {"winners": ["p1"], "net": {"p1": 100, "p2": -100}, "scores": R5_SCORES}
    melds = rec.state.snapshot()["melds"]
    # who put each card on the table, and its points (R5-LAYOFF: the layer's)
    assert melds[0]["cards"] == ["AH", "2H", "3H", "4H", "5H", "6H"]
    assert melds[0]["by"] == ["p2", "p1", "p1", "p1", "p1", "p1"] and melds[0]["points"] == [1, 2, 3, 4, 5, 6]
    assert melds[1]["stands"][-1] == "AD" and melds[1]["points"] == [9, 10, 10, 10, 10, 11]
    assert melds[3] == {"kind": "run", "cards": ["4D", "5D", "6D"], "stands": ["4D", "5D", "6D"], "owner": "p2",
                        "by": ["p2", "p2", "p2"], "points": [4, 5, 6], "valid": True}


def test_r500_views_after_a_deep_pile_draw() -> None:
    """Right after p1 takes 9D 2C KS: the pile is empty, p1 holds 9 + 3 = 12 cards and owes
    the use of 9D; p2 sees his own 13 cards and the counts, never the stock."""
    s, at = r500_deep_round()
    mine = state_at(s.log.events, at["deep"], "p1")
    theirs = state_at(s.log.events, at["deep"], "p2")
    for view in (mine, theirs):
        assert view["discard_pile"] == [] and view["must_use"] == ["9D"] and view["in_turn"] == "p1"
        assert view["hand_counts"] == {"p1": 12, "p2": 13} and "stock" not in view
    assert sorted(mine["hands"]["p1"]) == sorted(["2H", "7C", "7D", "7S", "7H", "TD", "JD", "QD", "KD",
                                                   "9D", "2C", "KS"])
    assert list(theirs["hands"]) == ["p2"] and len(theirs["hands"]["p2"]) == 13
    # the duty is met by the meld through 9D; the top card taken may then be discarded
    assert state_at(s.log.events, at["meld_9d"])["must_use"] == []
    full = state_at(s.log.events, at["discard_ks"])
    assert full["discard_pile"] == ["KS"] and len(full["stock"]) == full["stock_count"] == 54 - 27 - 2


def test_r500_deepest_card_left_unused_is_one_finding_and_the_claims_follow_the_cards() -> None:
    """p2 takes 5D 2C and discards 2C without using 5D: R5-USE-BOTTOM at that discard and
    nothing else in play. He then holds 4D 5D 6D too: 1 - (81 + 15) = -95, so the logged
    -65 is a C-CLAIM at RoundEnded; the winner, pot and net do not change."""
    s, at = r500_deep_round(p2_uses_bottom=False)
    claims = close_r500(s, R5_SCORES)
    rec = replay(s.log.events)
    assert findings(rec) == [(at["discard_2c"], "R5-USE-BOTTOM", "violation"),
                             (claims["round_ended"], "C-CLAIM", "discrepancy")]
    assert "p2: claimed -65, recomputed -95" in rec.findings[1].message
    assert rec.results.to_dict() == {"winners": ["p1"], "net": {"p1": 100, "p2": -100},
                                     "scores": {"p1": 108, "p2": -95}}


def test_r500_discarding_the_deepest_card_taken_breaks_both_pile_rules_once() -> None:
    """Discarding 5D itself (the deepest of the two taken): R5-NODISCARD-TOP and
    R5-USE-BOTTOM, both at that discard; the play goes on."""
    s, at = r500_deep_round(p2_uses_bottom=False)
    s.log.events[at["discard_2c"]]["payload"]["card"] = "5D"
    s.log.events[at["out"]]["payload"]["card"] = "QH"
    rec = replay(s.log.events)
    assert findings(rec) == [(at["discard_2c"], "R5-NODISCARD-TOP", "violation"),
                             (at["discard_2c"], "R5-USE-BOTTOM", "violation")]
    assert rec.state.round_result(1) is not None and not rec.halted


def test_r500_deepest_card_used_by_a_broken_move_is_one_finding() -> None:
    """The deepest card goes to the table by a move that breaks its own rule: that rule is
    the one finding; R5-USE-BOTTOM is met (the card was laid off / melded, as decided)."""
    s, at = r500_deep_round()
    events = copy.deepcopy(s.log.events[:at["discard_ks"] + 1])
    events[at["meld_9d"]]["type"] = "LaidOff"  # 9D onto 3H-6H's high end: it does not fit
    events[at["meld_9d"]]["payload"] = {"card": "9D", "meld": 0, "end": "high"}
    assert findings(replay(events)) == [(at["meld_9d"], "R5-LAYOFF", "violation")]
    events = copy.deepcopy(s.log.events[:at["discard_ks"] + 1])
    events[at["meld_9d"]]["payload"] = {"kind": "run", "cards": ["9D", "TD", "QD", "KD"]}  # a gap
    assert findings(replay(events)) == [(at["meld_9d"], "C-RUN", "violation")]


def test_r500_deep_draw_listed_top_first_or_past_the_pile() -> None:
    """R5-DRAW-PILE reads ``Drew.cards`` deepest first: the same three cards listed top
    first are a violation (taken all the same); a card the pile does not hold halts."""
    s, at = r500_deep_round()
    events = copy.deepcopy(s.log.events[:at["deep"] + 1])
    events[at["deep"]]["payload"]["cards"] = ["KS", "2C", "9D"]
    rec = replay(events)
    assert findings(rec) == [(at["deep"], "R5-DRAW-PILE", "violation")]
    assert rec.state.snapshot()["discard_pile"] == []
    events[at["deep"]]["payload"]["cards"] = ["8D", "9D", "2C", "KS"]
    rec = replay(events)
    assert findings(rec) == [(at["deep"], "C-HOLD", "integrity")] and rec.halted


# == Liverpool: six rounds, every contract ===========================================================
#
# Three players p0 p1 p2, dealer p2 (seat 2) in round 1, so the dealers are p2 p0 p1 p2 p0 p1
# and the first players p0 p1 p2 p0 p1 p2. Stake 101; max_buys 1 (per player per round).
# Each round's hands are given in full; the penalty points of the hands left are written
# next to each round (A and 2 = 25; 3-9 = 5; T J Q K = 10).

R1 = {0: "5C 5D 5H 9C 9D 9H 5S 2D QH 4C", 1: "7C 7D 7H 8C 8D 8H TS 3D JC 9S",
      2: "3C 3H 6C 6D JH QD TC AC AD 4S"}
R2 = {1: "4C 4D 4H 4S 5H 6H 7H 8H 9H 3C", 2: "KC KD 3C 3D 4D 6C 7C 8C 9C 9D",
      0: "AS AH 2S 3D 3H 5C 5D 6C 6D 7C"}
R3 = {2: "3S 4S 5S 2C 9D TD JD QD KD 8H", 0: "KC KD QC QH JC JH TC TH 9C 9H",
      1: "AC 2D 3C 4D 5C 6D 7C 8D 9C TS"}
R4 = {0: "5C 5D 5H 9C 9D 9H KC KD KH 4C", 1: "AC AD AH 2C 2D 3C 3D 3H 4S 6S",
      2: "3C 3D 4C 4D 6C 6D 7C 7D 8C 8D"}
R5 = {1: "5C 5D 5H 9C 9D 9H 3S 4S 5S 6S 7S JH", 2: "KC KD QC QD JC JD TC TD 8C 8D 6C 6D",
      0: "3C 3D 4C 4D 6H 7H 8H 9S TS JS QS KS"}
R6 = {2: "5C 5D 5H 3S 4S 5S 6S 9H TH JH QH KH", 0: "AC AD 2C 2D KC KD QC QD JC JD TC TD",
      1: "3C 3D 4C 4D 6C 6D 7C 7D 8C 8D 9C 9D"}

ROUND_SCORES = {
    # r1: p0 out. p1 keeps TS 3D JC 6H = 10 + 5 + 10 + 5 = 30. p2 keeps his ten less 4S, plus
    #     KD and 3S (bought) and JD (drawn): 3C 3H 6C 6D 3S = 25, JH QD TC KD JD = 50, AC AD = 50.
    1: ({"p0": 0, "p1": 30, "p2": 125}, "p0"),
    # r2: p1 out at once. p2: KC KD = 20, eight cards 3-9 = 40. p0: AS AH 2S = 75, seven 3-7 =
    #     35, plus QS and KH bought = 20.
    2: ({"p0": 130, "p1": 0, "p2": 60}, "p1"),
    # r3: p2 out at once. p0: eight court/ten cards = 80, 9C 9H = 10. p1: AC 2D = 50, seven
    #     3-9 = 35, TS = 10.
    3: ({"p0": 90, "p1": 95, "p2": 0}, "p2"),
    # r4: p0 out at once. p1: AC AD AH 2C 2D = 125, five 3-6 = 25. p2: ten 3-8 = 50.
    4: ({"p0": 0, "p1": 150, "p2": 50}, "p0"),
    # r5: p1 out (all but JH laid down). p2: eight T-K = 80, four 6/8 = 20. p0: eight 3-9 = 40,
    #     TS JS QS KS = 40, plus AH and 2H bought = 50.
    5: ({"p0": 130, "p1": 0, "p2": 100}, "p1"),
    # r6: p2 out without a discard. p0: AC AD 2C 2D = 100, eight T-K = 80. p1: twelve 3-9 = 60.
    6: ({"p0": 180, "p1": 60, "p2": 0}, "p2"),
}
# totals: p0 0+130+90+0+130+180 = 530; p1 30+0+95+150+0+60 = 335; p2 125+60+0+50+100+0 = 335
TOTALS = {"p0": 530, "p1": 335, "p2": 335}
# p1 and p2 tie for the lowest total and share the pot of 303: 152 to p1 (seat 1 before seat 2)
PAYOUT = {"p1": 152, "p2": 151}
NET = {"p0": -101, "p1": 51, "p2": 50}


def round_ended(log: Log, round_no: int) -> int:
    scores, winner = ROUND_SCORES[round_no]
    return log.add("RoundEnded", "system", {"round": round_no, "winners": [winner], "scores": dict(scores)})


def liverpool_game(*, late_buy_in_round_5: bool = False) -> tuple[Log, dict[str, int]]:
    """The six rounds above with every claim; returns the log and the seqs of note.
    ``late_buy_in_round_5``: p0's buy of round 5 is logged after p1 went out."""
    log = Log(["p0", "p1", "p2"], dealer=2, rules={"max_buys": 1}, stake=101)
    at: dict[str, int] = {}
    # round 1: two sets. p2, the dealer, buys the up-card KD (penalty 3S) once p0 drew 7S.
    log.deal(1, 2, R1, "KD", "7S 3S 6H JD 8S")
    log.drew("p0")
    at["buy_up_card"] = log.buy("p2", "KD")
    log.laid("p0", ("set", "5C 5D 5H"), ("set", "9C 9D 9H"))          # melds 0, 1
    log.disc("p0", "4C")                                              # fits nothing
    log.drew("p1")                                                    # 6H
    log.laid("p1", ("set", "7C 7D 7H"), ("set", "8C 8D 8H"))          # melds 2, 3
    at["discard_9s"] = log.disc("p1", "9S")                           # fits p0's nines
    at["call"] = log.call("p0", "9S", 1, "QH")                        # p0: 5S 2D 7S left
    log.drew("p2")                                                    # JD
    log.disc("p2", "4S")
    log.drew("p0")                                                    # 8S
    log.off("p0", "5S", 0)
    log.off("p0", "7S", 2)                                            # on p1's sevens
    log.off("p0", "8S", 3)                                            # on p1's eights
    at["out_1"] = log.disc("p0", "2D")
    at["ended_1"] = round_ended(log, 1)
    # round 2: a set and a run. p0, the dealer, buys the up-card QS (penalty KH).
    log.deal(2, 0, R2, "QS", "TH KH")
    log.drew("p1")
    log.buy("p0", "QS")
    log.laid("p1", ("set", "4C 4D 4H 4S"), ("run", "5H 6H 7H 8H 9H TH"))
    log.disc("p1", "3C")
    at["ended_2"] = round_ended(log, 2)
    # round 3: two runs; 2C written after 5S stands for 6S.
    log.deal(3, 1, R3, "6H", "7S")
    log.drew("p2")
    log.laid("p2", ("run", "3S 4S 5S 2C 7S"), ("run", "9D TD JD QD KD"))
    log.disc("p2", "8H")
    at["ended_3"] = round_ended(log, 3)
    # round 4: three sets.
    log.deal(4, 2, R4, "JS", "KS")
    log.drew("p0")
    log.laid("p0", ("set", "5C 5D 5H"), ("set", "9C 9D 9H"), ("set", "KC KD KH KS"))
    log.disc("p0", "4C")
    at["ended_4"] = round_ended(log, 4)
    # round 5: two sets and a run, every card but the discard. p0 buys the up-card AH (2H).
    log.deal(5, 0, R5, "AH", "8S 2H")
    log.drew("p1")
    if not late_buy_in_round_5:
        at["buy_5"] = log.buy("p0", "AH")
    log.laid("p1", ("set", "5C 5D 5H"), ("set", "9C 9D 9H"), ("run", "3S 4S 5S 6S 7S 8S"))
    at["out_5"] = log.disc("p1", "JH")
    if late_buy_in_round_5:
        at["buy_5"] = log.add("Bought", "p0", {"card": "JH", "penalty": "2H"})
    at["ended_5"] = round_ended(log, 5)
    # round 6: a set and two runs, every card, no discard: the game ends.
    log.deal(6, 1, R6, "AS", "7S")
    log.drew("p2")
    at["out_6"] = log.laid("p2", ("set", "5C 5D 5H"), ("run", "3S 4S 5S 6S 7S"), ("run", "9H TH JH QH KH"))
    at["ended_6"] = round_ended(log, 6)
    at["chips"] = log.add("ChipsTransferred", "system", pot_claims(["p0", "p1", "p2"], 101, PAYOUT))
    at["game_ended"] = log.add("GameEnded", "system", {"winners": ["p1", "p2"], "net": dict(NET)})
    return log, at


def lv_state(rec: GameRecord) -> Liverpool:
    assert isinstance(rec.state, Liverpool)
    return rec.state


def test_lv_six_rounds_every_contract_buys_a_call_and_tied_winners() -> None:
    log, _at = liverpool_game()
    rec = log.replay()
    assert findings(rec) == [] and not rec.halted
    assert rec.results.to_dict() == {"winners": ["p1", "p2"], "net": NET, "scores": TOTALS}
    st = lv_state(rec)
    assert st.is_over() and st.rounds_finished() == 6
    for round_no, (scores, winner) in ROUND_SCORES.items():
        assert st.round_result(round_no) == ([winner], scores)
    assert [t.key() for t in rec.transfers][-2:] == [("pot", "p1", 152), ("pot", "p2", 151)]


def test_lv_buys_are_counted_per_round() -> None:
    """max_buys 1: p0 buys once in round 2 and once in round 5, both clean; a second buy in
    one round is LV-BUY."""
    log, at = liverpool_game()
    assert lv_state(replay(log.events[:at["buy_5"] + 1])).buys == [1, 0, 0]
    assert lv_state(replay(log.events[:at["buy_up_card"] + 1])).buys == [0, 0, 1]
    # round 1 again: p2 (one buy used) buys p0's 4C once p1 has drawn from the stock
    second = Log(log.seats, prefix=log.events[:at["buy_up_card"] + 4])
    assert second.events[-1]["type"] == "Drew" and second.events[-1]["actor"] == "p1"
    seq = second.add("Bought", "p2", {"card": "4C", "penalty": "JD"})
    rec = second.replay()
    assert findings(rec) == [(seq, "LV-BUY", "violation")]
    assert "used his 1 buy(s) this round" in rec.findings[0].message
    assert lv_state(rec).buys == [0, 0, 2]  # applied as the platform did


def test_lv_windows_and_views_around_the_rummy_call() -> None:
    """After p1 discards 9S, p0 (laid down, not its discarder, not next to draw) alone may
    call it; p2, next to draw and not laid down, may only take it. After the call p0's QH
    is the live discard: it fits nothing, so there is no call, and no buy until p2 draws."""
    log, at = liverpool_game()
    before = state_at(log.events, at["discard_9s"])
    assert before["in_turn"] == "p2" and before["rummy_window"] == {"card": "9S", "entitled": ["p0"]}
    assert before["buy_window"] is None
    view = state_at(log.events, at["call"], "p2")
    assert view["hands"] == {"p2": format_cards(sorted(parse_cards([*R1[2].split(), "KD", "3S"])))}
    assert view["hand_counts"] == {"p0": 3, "p1": 4, "p2": 12}
    assert view["live_discard"] == "QH" and view["discard_pile"] == ["4C", "QH"]
    assert view["melds"][1]["cards"] == ["9C", "9D", "9H", "9S"]
    assert view["rummy_window"] == {"card": "QH", "entitled": []} and view["buy_window"] is None
    assert "stock" not in view and view["in_turn"] == "p2"
    after_draw = state_at(log.events, at["call"] + 1)
    assert after_draw["buy_window"] == {"card": "QH", "entitled": []}  # p1 laid down; p0 discarded it


def test_lv_buy_after_the_round_ended_is_LV_BUY_and_not_applied() -> None:
    """Round 5: p0's buy comes after p1 went out. LV-BUY (no window outside a round), not
    applied: p0 holds 80, not 130, so the logged round-5 scores are a C-CLAIM; totals
    p0 480, p1 335, p2 335: the winners, the pot and the net are the same."""
    log, at = liverpool_game(late_buy_in_round_5=True)
    rec = log.replay()
    assert findings(rec) == [(at["buy_5"], "LV-BUY", "violation"), (at["ended_5"], "C-CLAIM", "discrepancy")]
    assert "p0: claimed 130, recomputed 80" in rec.findings[1].message
    assert rec.results.to_dict() == {"winners": ["p1", "p2"], "net": NET,
                                     "scores": {"p0": 480, "p1": 335, "p2": 335}}


def test_lv_odd_chip_of_a_shared_pot_to_the_wrong_winner_is_one_C_CLAIM() -> None:
    log, at = liverpool_game()
    transfers = log.events[at["chips"]]["payload"]["transfers"]
    transfers[-2]["amount"], transfers[-1]["amount"] = 151, 152
    rec = log.replay()
    assert findings(rec) == [(at["chips"], "C-CLAIM", "discrepancy")]
    assert rec.results.net == NET


def test_lv_moves_and_a_seventh_deal_after_the_round_6_lay_down() -> None:
    """After the round-6 lay-down the game is over: a discard by the winner is a move after
    the game ended (C-TURN); a seventh deal is C-DEAL (decided) and is not applied."""
    log, at = liverpool_game()
    extra = Log(log.seats, prefix=log.events[:at["out_6"] + 1])
    seq = extra.disc("p2", "AS")
    deal = extra.deal(7, 2, R6, "AS", "7S")
    rec = extra.replay()
    assert findings(rec) == [(seq, "C-TURN", "violation"), (deal, "C-DEAL", "violation")]
    assert lv_state(rec).round_no == 6 and rec.results.winners == ["p1", "p2"]


def test_r500_round_after_the_game_ended_is_R5_GAME() -> None:
    s, _at = r500_deep_round()
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": R5_SCORES})
    seq = s.deal([P2, P1], "9D", [], dealer=0)  # a second round of a one-round game
    rec = replay(s.log.events)
    assert findings(rec) == [(seq, "R5-GAME", "violation")]
    assert rec.state.round_no == 1 and rec.results.winners == ["p1"]


# == Liverpool: buy windows at the edges of the stock ================================================


def stock_drawn_down() -> tuple[Log, str]:
    """Round 1 of the three-player builder game, everyone drawing and discarding the drawn
    card until p0 draws the last stock card (nobody lays down, so no call, no buy)."""
    log = Log(["p0", "p1", "p2"], dealer=2)
    log.deal(1, 2, {0: "5C 5D 5H 9C 9D 9H 9S QS JS 4C", 1: H1, 2: H2}, UP,
             "4H 6H TH JH QH AH 3S 4S TD JC KH KC")
    order = ["p0", "p1", "p2"]
    i = 0
    while True:
        player = order[i % 3]
        card = log.stock[0]
        log.drew(player)
        if not log.stock:
            return log, player
        log.disc(player, card)
        i += 1


def test_lv_buy_after_a_restock_takes_the_new_stock_top_as_penalty() -> None:
    """p0 draws the last stock card: the live discard cannot be bought (no penalty card).
    The platform replenishes the stock from the pile below its top (C-RESTOCK); the discard
    may then be bought by p1 (p2 discarded it), with the new stock's top as penalty."""
    log, last = stock_drawn_down()
    st = lv_state(log.replay())
    assert last == "p0" and st.stock == [] and st.to_act() == ["p0"]
    top = format_cards(st.pile[-1:])[0]
    new_stock = format_cards(st.pile[:-1])
    log.add("StockReplenished", "system", {"stock": new_stock})
    log.stock = list(new_stock)
    assert lv_state(log.replay()).to_act() == ["p0", "p1"]
    seq = log.buy("p1", top)
    rec = log.replay()
    assert findings(rec) == []
    st = lv_state(rec)
    assert st.buys == [0, 1, 0] and st.pile == [] and len(st.stock) == len(new_stock) - 1
    assert state_at(log.events, seq, "p2")["hand_counts"]["p1"] == 12


def test_lv_buy_with_an_empty_stock_halts_on_the_missing_penalty_card() -> None:
    log, _last = stock_drawn_down()
    st = lv_state(log.replay())
    top = format_cards(st.pile[-1:])[0]
    seq = log.add("Bought", "p1", {"card": top, "penalty": "4H"})
    rec = log.replay()
    assert findings(rec) == [(seq, "C-HOLD", "integrity")] and rec.halted


# == Liverpool: going out by a Rummy call ============================================================


def test_lv_rummy_call_that_empties_the_callers_hand_ends_the_round() -> None:
    """p0 lays down, lays off down to 2S, then discards 2D: one card left. p1 draws and
    discards the wild 2C; p0 calls it onto his nines and discards 2S, his last card: he
    is out (LV-OUT) with the call's own discard. p1 holds 7C 7D 7H 8C 8D 8H TS 3D 4D 6S
    = 55, p2 3C 3H 6C 6D JD QD TC AC AD 5S = 105."""
    log = Log(["p0", "p1", "p2"], dealer=2)
    log.deal(1, 2, {0: "5C 5D 5H 9C 9D 9H 5S 9S 2C 2D", 1: H1.replace("5S", "4D"), 2: H2}, UP,
             "2H 6H TH 2S 2C QH")
    log.drew("p0")
    log.laid("p0", ("set", "5C 5D 5H"), ("set", "9C 9D 9H"))
    log.disc("p0", "2H")
    log.drew("p1")
    log.disc("p1", "6H")
    log.drew("p2")
    log.disc("p2", "TH")
    log.drew("p0")                                                     # 2S
    for card, meld in (("5S", 0), ("9S", 1), ("2C", 0)):
        log.off("p0", card, meld)
    log.disc("p0", "2D")
    log.drew("p1")                                                     # 2C
    wild = log.disc("p1", "2C")
    assert state_at(log.events, wild)["rummy_window"] == {"card": "2C", "entitled": ["p0"]}
    call = log.call("p0", "2C", 1, "2S")
    ended = log.add("RoundEnded", "system", {"round": 1, "winners": ["p0"],
                                             "scores": {"p0": 0, "p1": 55, "p2": 105}})
    rec = log.replay()
    assert findings(rec) == []
    st = lv_state(rec)
    assert st.round_result(1) == (["p0"], {"p0": 0, "p1": 55, "p2": 105})
    assert state_at(log.events, call)["in_turn"] is None and st.to_act() == [] and ended
    assert rec.results.scores == {"p0": 0, "p1": 55, "p2": 105} and rec.results.winners == []


# == Liverpool: a round nobody can go out of (RULES.md §3's gap) =======================================
#
# Every set full-suited, all eight wilds on the table, every player laid down: no card
# outside the table fits any meld, so nobody can ever go out. p1 buys the up-card 2S,
# p2 buys twice before laying down (the only windows open to him: p0's discards during
# p1's turns). Stock top: KD KH KS 2H TC TD TH 2S TS.


def blocked_round() -> Log:
    log = Log(["p0", "p1", "p2"], dealer=2)
    log.deal(1, 2, {0: "5C 5D 5H 5S 9C 9D 9H 9S 2C KC", 1: "7C 7D 7H 7S 8C 8D 8H 8S 2D 2H",
                    2: "JC JD JH JS QC QD QH QS 2C 2D"}, "2S", "KD KH KS 2H TC TD TH 2S TS")
    log.drew("p0")                                                          # KD
    log.buy("p1", "2S")                                                     # penalty KH
    log.laid("p0", ("set", "5C 5D 5H 5S 2C"), ("set", "9C 9D 9H 9S"))
    log.disc("p0", "KD")                                                    # p0 holds KC
    log.drew("p1")                                                          # KS
    log.buy("p2", "KD")                                                     # penalty 2H
    log.laid("p1", ("set", "7C 7D 7H 7S 2D 2H"), ("set", "8C 8D 8H 8S 2S"))
    log.disc("p1", "KS")                                                    # p1 holds KH
    log.drew("p2")                                                          # TC
    log.disc("p2", "TC")
    log.drew("p0")                                                          # TD
    log.disc("p0", "TD")
    log.drew("p1")                                                          # TH
    log.buy("p2", "TD")                                                     # penalty 2S
    log.disc("p1", "TH")
    log.drew("p2")                                                          # TS
    log.laid("p2", ("set", "JC JD JH JS 2C 2D"), ("set", "QC QD QH QS 2H 2S"))
    log.disc("p2", "TS")                                                    # p2 holds KD TD
    return log


def test_lv_blocked_round_stays_in_progress_through_restocks() -> None:
    """Decided (module docstring): the replay invents no end. Draws, discards and a restock
    replay clean; the round stays live, unscored; the game has no winner yet."""
    log = blocked_round()
    st = lv_state(log.replay())
    assert st.round_blocked() and st.to_act() == ["p0"]
    assert [st.hand_size(s) for s in range(3)] == [1, 1, 2] and len(st.melds) == 6
    order = ["p0", "p1", "p2"]
    turn = 0
    for _cycle in range(2):
        while True:
            player = order[turn % 3]
            card = log.stock[0]
            log.drew(player)
            log.disc(player, card)
            turn += 1
            if not log.stock:
                break
        pile = lv_state(log.replay()).pile
        log.add("StockReplenished", "system", {"stock": format_cards(pile[:-1])})
        log.stock = format_cards(pile[:-1])
    rec = log.replay()
    st = lv_state(rec)
    assert findings(rec) == [] and st.in_round and st.round_blocked()
    assert st.round_result(1) is None and rec.results.to_dict() == {
        "winners": [], "net": {"p0": -100, "p1": -100, "p2": -100}, "scores": {"p0": 0, "p1": 0, "p2": 0}}


def test_lv_blocked_round_ended_by_the_platform_is_judged_like_any_round() -> None:
    """A RoundEnded claim for it is C-CLAIM (by the rules it has not ended); a new deal is
    LV-OUT (the round is not scored); players leaving end the game as usual."""
    log = blocked_round()
    claim = log.add("RoundEnded", "system", {"round": 1, "winners": [], "scores": {"p0": 10, "p1": 10, "p2": 20}})
    deal = log.deal(2, 0, R2, "QS", "TH KH")
    rec = log.replay()
    assert findings(rec) == [(claim, "C-CLAIM", "discrepancy"), (deal, "LV-OUT", "violation")]
    assert lv_state(rec).round_result(1) is None and rec.results.scores == {"p0": 0, "p1": 0, "p2": 0}
    log = blocked_round()
    log.add("PlayerLeft", "p0", {})
    log.add("PlayerLeft", "p2", {})
    rec = log.replay()
    assert findings(rec) == [] and rec.results.winners == ["p1"]
    assert rec.results.net == {"p0": -100, "p1": 200, "p2": -100}
