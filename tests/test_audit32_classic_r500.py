"""Audit 32: corners of classic rummy (RULES.md §1) and Rummy 500 (§2), with the common
rules of §0 and the findings of §5, checked against the spec's text.

Each test names the passage it reads. Most pin behaviour that was right already (the
corners the earlier audits did not script); the defect this audit found and fixed is
marked "DEFECT (fixed)":

- CL-TIMER after a turn that ended without its discard: the player had drawn, so that
  was his turn, and his next turn has the 30 s base, not the 60 s of a first turn.
"""

from __future__ import annotations

import pytest
from logkit import Log, findings, stacked_deck
from r500kit import Script, go_out_round, pot_claims

from rummyguard.events.cards import parse_cards
from rummyguard.replay.engine import replay, state_at
from rummyguard.replay.rules.r500 import hand_penalty

# == classic (RULES.md §1) ==================================================================

H1 = ["3H", "4H", "5H", "6H", "7H", "9C", "9D", "9S", "TD", "JD", "QD", "KC", "KD", "KH", "2C"]
H2 = ["AS", "2S", "5C", "6D", "8S", "8C", "JC", "QS", "4D", "7C", "TC", "3S", "5D", "6S"]
H3 = ["AC", "2D", "3C", "4S", "5S", "7D", "8H", "9H", "TH", "JH", "QC", "4C", "6C", "7S"]
UP = "8D"


def classic2(stock_top: list[str] | None = None, **created) -> Log:
    """Two players, dealer p2 (seat 1): p1 is the first player (15 cards)."""
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1, **created)
    log.round(stacked_deck([H1, H2], UP, stock_top or ["AH", "2D", "JK", "QC", "QH"]), dealer=1)
    return log


def classic3(stock_top: list[str] | None = None, **created) -> Log:
    """Three players, dealer p3 (seat 2): p1 first, then p2, p3."""
    log = Log()
    log.created("classic", ["p1", "p2", "p3"], dealer=2, **created)
    log.round(stacked_deck([H1, H2, H3], UP, stock_top or ["AH", "2H", "JK", "QH"]), dealer=2)
    return log


@pytest.mark.parametrize(("dt", "late"), [(100, True), (90, False)])
def test_CL_TIMER_a_turn_that_ended_without_a_discard_was_a_turn(dt: float, late: bool) -> None:
    """DEFECT (fixed). RULES.md CL-TIMER: "a turn has a base clock of 60 s if it is the
    player's first turn of the round and 30 s otherwise, then an extra clock of 60 s".
    p2 drew in his first turn and never discarded (CL-DISCARD at p1's next move); that
    was his first turn, so his next one has 30 + 60 s: a draw 100 s after it started is
    late (the engine used to give him the 60 s base again: no CL-TIMER), and at 90 s
    sharp it is on time (late is "later than turn start + base + extra")."""
    log = classic2()
    log.discard("p1", "2C")
    log.draw("p2", "stock", "AH")  # his first turn: drew, no discard
    cl_discard = log.draw("p1", "stock", "2D", dt=3)
    log.discard("p1", "2D")
    seq = log.draw("p2", "stock", "JK", dt=dt)
    assert findings(replay(log.events)) == [(cl_discard, "CL-DISCARD", "violation")] + (
        [(seq, "CL-TIMER", "violation")] if late else [])


def test_CL_TIMER_a_turn_broken_into_after_its_draw_was_a_turn():
    """DEFECT (fixed, the same). RULES.md CL-TIMER ("first turn of the round"), C-TURN.
    Three players: p2 drew in his first turn, then p1 (not the next player) moved out of
    turn (C-TURN) and played a turn; the turn then comes back to p2, whose first turn
    it is not: 30 s base, so 100 s is late."""
    log = classic3()
    log.discard("p1", "2C")
    log.draw("p2", "stock", "AH")
    out_of_turn = log.draw("p1", "stock", "2H", dt=3)
    log.discard("p1", "2H")
    late = log.draw("p2", "stock", "JK", dt=100)
    assert findings(replay(log.events)) == [(out_of_turn, "C-TURN", "violation"),
                                            (late, "CL-TIMER", "violation")]


def test_CL_LEAVE_in_turn_starts_the_next_turn_and_its_clock_then():
    """RULES.md CL-LEAVE: "if it was his turn, the next turn starts then"; CL-TIMER: the
    next player's first turn has 60 s + 60 s from the leave."""
    for dt, want_late in ((120, False), (120.001, True)):
        log = classic3()
        log.discard("p1", "2C")
        log.add("PlayerLeft", "p2", {}, dt=50)
        log.sys("PlayerRemoved", {"player": "p2", "reason": "left"})
        seq = log.draw("p3", "stock", "AH", dt=dt - 0.2)  # sys() advanced the clock 0.2 s
        got = findings(replay(log.events))
        assert got == ([(seq, "CL-TIMER", "violation")] if want_late else []), dt


def test_CL_LEAVE_of_a_player_not_in_turn_keeps_the_clock_running():
    """RULES.md CL-LEAVE / CL-TIMER: only the leave of the player in turn starts a turn;
    p2's first turn is still timed from p1's discard (121 s later: late)."""
    log = classic3()
    log.discard("p1", "2C")
    log.add("PlayerLeft", "p3", {}, dt=50)
    seq = log.draw("p2", "stock", "AH", dt=71)
    assert findings(replay(log.events)) == [(seq, "CL-TIMER", "violation")]


def test_CL_RESULT_rake_on_a_doubled_pot_won_by_the_last_player_standing():
    """RULES.md CL-FRESH (the first unanimous Fresh charges every active player one more
    stake), CL-STRIKES/CL-LEAVE (last player standing wins the pot at once), CL-RUMMY
    (rake = ⌊pot × rake_bps / 10000⌋ to ``house``), CL-RESULT (net = pot − rake − own
    stakes for the winner, minus the stakes for everyone else). 3 × 2 × 100 = 600,
    rake 250 bps = 15; p1 gets 585, net 385."""
    log = classic3(rules={"rake_bps": 250})
    for p in ("p2", "p3", "p1"):
        log.add("FreshPressed", p, {})
    log.round(stacked_deck([H1, H2, H3], UP, ["AH", "2H", "JK", "QH"]), dealer=2, redeal=1)
    log.discard("p1", "2C")
    log.add("PlayerLeft", "p2", {})
    log.add("PlayerLeft", "p3", {})
    transfers = [{"from": p, "to": "pot", "amount": 100, "reason": "stake"}
                 for _ in range(2) for p in ("p1", "p2", "p3")]
    transfers += [{"from": "pot", "to": "house", "amount": 15, "reason": "rake"},
                  {"from": "pot", "to": "p1", "amount": 585, "reason": "pot"}]
    log.sys("ChipsTransferred", {"transfers": transfers})
    log.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {}})
    log.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 385, "p2": -200, "p3": -200}})
    record = replay(log.events)
    assert findings(record) == []
    assert record.results.net == {"p1": 385, "p2": -200, "p3": -200}


def test_CL_RESULT_a_rake_rounded_up_is_a_claim_discrepancy_at_its_event():
    """RULES.md C-CLAIM: the first differing ChipsTransferred carries the finding; the
    rake is floored (7.5 -> 7 on a 300 pot at 250 bps), a claimed 8 differs."""
    log = classic3(rules={"rake_bps": 250})
    log.discard("p1", "2C")
    log.add("PlayerLeft", "p2", {})
    log.add("PlayerLeft", "p3", {})
    transfers = [{"from": p, "to": "pot", "amount": 100, "reason": "stake"} for p in ("p1", "p2", "p3")]
    transfers += [{"from": "pot", "to": "house", "amount": 8, "reason": "rake"},
                  {"from": "pot", "to": "p1", "amount": 292, "reason": "pot"}]
    seq = log.sys("ChipsTransferred", {"transfers": transfers})
    log.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 193, "p2": -100, "p3": -100}})
    record = replay(log.events)
    assert findings(record) == [(seq, "C-CLAIM", "discrepancy")]
    assert record.results.net == {"p1": 193, "p2": -100, "p3": -100}


def test_CL_RESULT_round_scores_claim_must_be_empty():
    """RULES.md CL-RESULT: "RoundEnded.scores is {}" — a non-zero score claimed for a
    classic round differs from the recomputed value (C-CLAIM)."""
    log = classic2()
    log.discard("p1", "2C")
    log.add("PlayerLeft", "p2", {})
    seq = log.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 5}})
    assert findings(replay(log.events)) == [(seq, "C-CLAIM", "discrepancy")]


def test_CL_AUTOPLAY_a_drawn_joker_makes_the_ace_the_card_to_discard():
    """RULES.md CL-AUTOPLAY: a drawn joker is kept and "the highest non-joker card in hand
    (ranks as usual, then suits C < D < H < S)" is discarded: the ace is the highest rank
    (§0 Cards: ``2 … K A``), so AS, not QS."""
    for discarded, want in (("AS", []), ("QS", ["CL-AUTOPLAY"])):
        log = classic2(stock_top=["JK", "AH"])
        log.discard("p1", "2C")
        seq = log.add("AutoPlayed", "system", {"player": "p2", "drew": "JK", "discarded": discarded,
                                               "strike": 1}, dt=121)
        assert [r for s, r, _ in findings(replay(log.events)) if s == seq] == want, discarded


def test_CL_NODISCARD_TAKEN_applies_to_the_declarations_discard():
    """RULES.md CL-RUMMY (the declaration holds a ``discard``) and CL-NODISCARD-TAKEN: a
    card taken from the discard pile may not be the discard of a Rummy declared in the
    same turn. p2 takes p1's 2C and names it as his declaration's discard."""
    hand2 = ["3S", "4S", "5S", "6S", "7S", "8C", "8D", "8H", "TC", "JC", "QC", "KC", "KD", "KH"]
    hand1 = ["AS", "2S", "5C", "6D", "9S", "9C", "JH", "QS", "4D", "7C", "TD", "3C", "5D", "6H", "2C"]
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(stacked_deck([hand1, hand2], UP, ["AH"]), dealer=1)
    log.discard("p1", "2C")
    log.draw("p2", "discard", "2C")
    melds = [{"kind": "run", "cards": ["3S", "4S", "5S", "6S", "7S"]},
             {"kind": "set", "cards": ["8C", "8D", "8H"]},
             {"kind": "run", "cards": ["TC", "JC", "QC"]},
             {"kind": "set", "cards": ["KC", "KD", "KH"]}]
    seq = log.add("DeclaredRummy", "p2", {"melds": melds, "discard": "2C"})
    assert findings(replay(log.events)) == [(seq, "CL-NODISCARD-TAKEN", "violation")]
    # the same declaration after a stock draw, discarding the drawn card, is clean
    clean = Log()
    clean.created("classic", ["p1", "p2"], dealer=1)
    clean.round(stacked_deck([hand1, hand2], UP, ["AH"]), dealer=1)
    clean.discard("p1", "2C")
    clean.draw("p2", "stock", "AH")
    clean.add("DeclaredRummy", "p2", {"melds": melds, "discard": "AH"})
    assert findings(replay(clean.events)) == []


def test_C_CLAIM_auto_play_strike_count_is_recomputed():
    """RULES.md C-CLAIM ("auto-plays that the platform logs are recomputed") with
    CL-STRIKES (strikes 1-3 count the player's timeouts): p2's first auto-play claiming
    strike 2 is a discrepancy; the play itself is the rule's (drew AH, discarded AH)."""
    for strike, want in ((1, []), (2, ["C-CLAIM"])):
        log = classic2()
        log.discard("p1", "2C")
        log.add("AutoPlayed", "system", {"player": "p2", "drew": "AH", "discarded": "AH",
                                         "strike": strike}, dt=121)
        assert [r for _, r, _ in findings(replay(log.events))] == want, strike


def test_C_CLAIM_a_bust_removal_in_classic_is_a_discrepancy_and_applied():
    """RULES.md C-CLAIM (removals are recomputed) and §1, which removes for strikes and
    leaving only: a ``bust`` removal differs; applied, it leaves p1 the last player."""
    log = classic2()
    log.discard("p1", "2C")
    seq = log.sys("PlayerRemoved", {"player": "p2", "reason": "bust"})
    record = replay(log.events)
    assert findings(record) == [(seq, "C-CLAIM", "discrepancy")]
    assert record.results.winners == ["p1"]


# == Rummy 500 (RULES.md §2) ==================================================================

#: p2's hand in the scripts below (no card the p1 hands or stocks use)
Q2 = ["AS", "2S", "5C", "6D", "9S", "2D", "JC", "QS", "4D", "3D", "8D", "3S", "5D"]


def _penalty(cards: list[str]) -> int:
    counts = [0] * 53
    for c in parse_cards(cards):
        counts[c] += 1
    return hand_penalty(counts)


def test_R5_VALUES_joker_in_an_ace_set_named_low_ace_and_unnamed_end_joker():
    """RULES.md R5-VALUES: "ace 11, but 1 in a run A 2 3…; a melded joker is worth the
    card it stands for"; C-WILD: a low-end wild stands for the card below only when the
    high end is A, else `as` names it. p1 goes out with AC AD JK (33), JK 2S 3S as AS
    (1 + 2 + 3), QH KH AH (31) and 5C-8C (26): 96; unnamed, JK 2S 3S is 2-3-4 (9): 99."""
    p1 = ["AC", "AD", "JK", "JK", "2S", "3S", "QH", "KH", "AH", "5C", "6C", "7C", "8C"]
    p2 = ["4D", "5D", "9S", "TS", "2C", "3C", "9H", "TH", "4H", "5H", "6S", "7S", "KD"]
    for named, want in ((True, 96), (False, 99)):
        s = Script(hands=[p1, p2], up="9D", stock=["2D", "QD"])
        s.draw("p1")
        s.meld("p1", {"kind": "set", "cards": ["AC", "AD", "JK"]})
        run = {"kind": "run", "cards": ["JK", "2S", "3S"]}
        if named:
            run["as"] = {"0": "AS"}
        s.meld("p1", run)
        s.meld("p1", {"kind": "run", "cards": ["QH", "KH", "AH"]})
        s.meld("p1", {"kind": "run", "cards": ["5C", "6C", "7C", "8C"]})
        s.log.discard("p1", "2D")  # his last card: out
        seq = s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": want, "p2": -_penalty(p2)}})
        record = replay(s.log.events)
        assert findings(record) == [], named
        assert record.state.round_result(1) == (["p1"], {"p1": want, "p2": -84})
        wrong = Script(hands=[p1, p2], up="9D", stock=["2D", "QD"])
        wrong.log.events = [dict(e) for e in s.log.events]
        wrong.log.events[seq] = {**s.log.events[seq], "payload": {
            "round": 1, "winners": ["p1"], "scores": {"p1": 195 - want, "p2": -84}}}
        assert findings(replay(wrong.log.events)) == [(seq, "C-CLAIM", "discrepancy")]


def test_R5_VALUES_joker_laid_off_below_a_2_is_the_low_ace_worth_1():
    """RULES.md R5-LAYOFF (points of a laid-off card go to who laid it off), R5-VALUES (a
    joker is worth the card it stands for, the ace 1 in ``A 2 3``). Laid off at the low
    end of 2H 3H 4H the joker is AH, 1 point; with no ``end`` it reads high (C-WILD: a
    wild below stands for the card below only when the high end is A): 5H, 5 points."""
    p1 = ["2H", "3H", "4H", "JK", "7C", "7D", "7S", "7H", "TD", "JD", "QD", "KD", "2C"]
    for end, stand, points in (("low", "AH", 1), (None, "5H", 5), ("high", "5H", 5)):
        s = Script(hands=[p1, Q2], up="9D", stock=["KS", "QH"])
        s.draw("p1")
        s.meld("p1", {"kind": "run", "cards": ["2H", "3H", "4H"]})
        seq = s.layoff("p1", "JK", 0, end)
        assert findings(replay(s.log.events)) == [], end
        meld = state_at(s.log.events, seq)["melds"][0]
        at = 0 if end == "low" else 3
        assert meld["stands"][at] == stand and meld["points"][at] == points, end


def test_R5_LAYOFF_wild_without_end_on_a_run_topped_by_the_ace_goes_low():
    """RULES.md C-WILD read for lay-offs: nothing is above the ace (no wrap-around,
    C-RUN), so a joker laid off on QH KH AH stands for JH (10 points); at the named
    high end it does not fit (R5-LAYOFF)."""
    p1 = ["QH", "KH", "AH", "JK", "7C", "7D", "7S", "7H", "TD", "JD", "QD", "KD", "2C"]
    s = Script(hands=[p1, Q2], up="9D", stock=["KS", "QC"])
    s.draw("p1")
    s.meld("p1", {"kind": "run", "cards": ["QH", "KH", "AH"]})
    base = list(s.log.events)
    seq = s.layoff("p1", "JK", 0)
    assert findings(replay(s.log.events)) == []
    meld = state_at(s.log.events, seq)["melds"][0]
    assert meld["stands"][0] == "JH" and meld["points"] == [10, 10, 10, 11]
    s.log.events = base
    seq = s.layoff("p1", "JK", 0, "high")
    assert findings(replay(s.log.events)) == [(seq, "R5-LAYOFF", "violation")]


def test_R5_SWAP_high_end_joker_stands_for_the_ace_and_its_11_points_go_to_the_giver():
    """RULES.md R5-SWAP ("give the natural card a table joker stands for"), C-WILD (a wild
    at the high end of QH KH JK stands for AH), R5-VALUES (ace high 11). Giving AH takes
    the joker and its place's 11 points to the giver; giving JH is R5-SWAP."""
    p1 = ["QH", "KH", "JK", "7C", "7D", "7S", "7H", "TD", "JD", "QD", "KD", "2C", "9C"]
    p2 = ["AH", "JH", *Q2[2:]]
    for card, want in (("AH", []), ("JH", ["R5-SWAP"])):
        s = Script(hands=[p1, p2], up="9D", stock=["KS", "QC", "TC"])
        s.draw("p1")
        s.meld("p1", {"kind": "run", "cards": ["QH", "KH", "JK"]})
        s.log.discard("p1", "KS")
        s.draw("p2")
        seq = s.swap("p2", 0, card)
        assert [r for _, r, _ in findings(replay(s.log.events))] == want, card
        if not want:
            view = state_at(s.log.events, seq)
            meld = view["melds"][0]
            assert meld["cards"] == ["QH", "KH", "AH"] and meld["points"] == [10, 10, 11]
            assert meld["by"] == ["p1", "p1", "p2"]


def test_R5_SWAP_a_set_joker_named_by_as_stands_for_that_card_only():
    """RULES.md C-WILD ("stand for exactly one card, fixed when the meld is made"; `as`
    names it), R5-SWAP: the joker of 7C 7D JK named 7H is swapped for 7H only; 7S (also
    missing from the set) is R5-SWAP."""
    p1 = ["7C", "7D", "JK", "3H", "4H", "5H", "6H", "TD", "JD", "QD", "KD", "2C", "9C"]
    p2 = ["7H", "7S", *Q2[2:]]
    for card, want in (("7H", []), ("7S", ["R5-SWAP"])):
        s = Script(hands=[p1, p2], up="9D", stock=["KS", "QC", "TC"])
        s.draw("p1")
        s.meld("p1", {"kind": "set", "cards": ["7C", "7D", "JK"], "as": {"2": "7H"}})
        s.log.discard("p1", "KS")
        s.draw("p2")
        s.swap("p2", 0, card)
        assert [r for _, r, _ in findings(replay(s.log.events))] == want, card


def test_R5_NODISCARD_TOP_going_out_with_the_single_pile_card_is_a_violation_and_ends_the_round():
    """RULES.md R5-NODISCARD-TOP ("a single card taken from the pile may be kept but not
    discarded in the same turn") and R5-DISCARD/R5-END (out by discarding the last card):
    the breach is reported at the discard and the round still ends there (§5: the move
    was accepted), scored as played: p1 88, p2 minus his hand (82)."""
    p1 = ["2H", "3H", "4H", "5H", "6H", "7C", "7D", "7S", "7H", "TD", "JD", "QD", "KD"]
    s = Script(hands=[p1, Q2], up="9D", stock=["KS"])
    s.log.draw("p1", "discard", "9D")
    s.meld("p1", {"kind": "run", "cards": ["2H", "3H", "4H", "5H", "6H"]})
    s.meld("p1", {"kind": "set", "cards": ["7C", "7D", "7S", "7H"]})
    s.meld("p1", {"kind": "run", "cards": ["TD", "JD", "QD", "KD"]})
    seq = s.log.discard("p1", "9D")
    record = replay(s.log.events)
    assert findings(record) == [(seq, "R5-NODISCARD-TOP", "violation")]
    p2_penalty = _penalty(Q2)
    assert p2_penalty == 82
    assert record.state.round_result(1) == (["p1"], {"p1": 20 + 28 + 40, "p2": -p2_penalty})


def test_R5_USE_BOTTOM_going_out_after_a_deep_draw_with_the_top_card_is_clean():
    """RULES.md R5-DRAW-PILE, R5-USE-BOTTOM (the deepest card is melded this turn) and
    R5-NODISCARD-TOP ("after taking several, any of them but the deepest may be
    discarded"): p1 takes TC (his own stock draw, discarded) and 5D from the pile, melds
    8C 9C TC and goes out discarding 5D: clean; p1 18 + 21 + 40 + 27 = 106."""
    p1 = ["3H", "4H", "5H", "6H", "7C", "7D", "7S", "TD", "JD", "QD", "KD", "8C", "9C"]
    s = Script(hands=[p1, Q2], up="9D", stock=["TC", "KS"])
    s.turn("p1")  # draws TC, discards it
    s.draw("p2")  # KS
    s.log.discard("p2", "5D")
    s.log.draw("p1", "discard", "TC", "5D")
    s.meld("p1", {"kind": "run", "cards": ["8C", "9C", "TC"]})
    s.meld("p1", {"kind": "run", "cards": ["3H", "4H", "5H", "6H"]})
    s.meld("p1", {"kind": "set", "cards": ["7C", "7D", "7S"]})
    s.meld("p1", {"kind": "run", "cards": ["TD", "JD", "QD", "KD"]})
    s.log.discard("p1", "5D")
    p2_left = [c for c in Q2 if c != "5D"] + ["KS"]
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 106, "p2": -_penalty(p2_left)}})
    record = replay(s.log.events)
    assert findings(record) == []
    assert record.state.round_result(1) == (["p1"], {"p1": 106, "p2": -_penalty(p2_left)})


def test_R5_GAME_rounds_mode_game_ended_before_the_last_round_is_a_claim_discrepancy():
    """RULES.md R5-GAME ``rounds``: "a fixed number of rounds (config rounds)"; with 2 the
    game is not over after round 1, so a GameEnded there differs (C-CLAIM), and the
    next round is dealt by the next dealer (p1, seat 0) with p2 starting."""
    s = Script(rules={"mode": "rounds", "rounds": 2})
    go_out_round(s)
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 88, "p2": -87}})
    seq = s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    record = replay(s.log.events)
    got = findings(record)
    assert got and all(f == (seq, "C-CLAIM", "discrepancy") for f in got)
    assert not record.state.is_over()
    assert record.state.deal_due()["dealer"] == 0


def test_R5_POT_rounds_mode_pays_the_pot_after_the_last_round_only():
    """RULES.md R5-POT (the winner takes the pot) with R5-GAME ``rounds`` = 1: after the
    round the pot of 200 goes to p1 and the claims that say so are clean."""
    s = Script(rules={"mode": "rounds", "rounds": 1})
    go_out_round(s)
    pot_claims(s, {"p1": 200})
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 88, "p2": -87}})
    s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    record = replay(s.log.events)
    assert findings(record) == []
    assert record.results.scores == {"p1": 88, "p2": -87}
