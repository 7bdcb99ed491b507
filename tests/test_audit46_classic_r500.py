"""Audit 46: odd corners of classic rummy (RULES.md §1) and Rummy 500 (§2), with the
common rules of §0 / §5 they rely on, that the ~45 earlier audits did not script: Fresh
votes completed by a strikes removal, a redeal's first player removed at his fourth
timeout, a Fresh pressed in the middle of a turn, a unanimous Fresh ended by a leave, a
late Rummy declaration, an auto-play that discards a drawn joker; Rummy 500 pile draws
whose single card is melded to go out, deep draws whose deepest card is the drawer's own
discard, a joker swapped off a run it topped as the ace and the run extended below,
a joker laid off on a set of aces, and the seed's second R5-CHIPS test vector played through a
three-player tournament round.

Each test quotes the sentences it reads; the expected result was worked out from the
spec's text before the log was replayed.

Defects found: none — every corner below holds. A differential run (not kept: it takes
minutes) of the engine against the independent referee and results oracle
(tests/referee_classic_r500.py, tests/oracle_classic_r500.py) over simulated 3-6 player
classic games with Fresh presses, timeouts, strikes removals and injected leaves, and
2-4 player r500 games in all three modes with injected leaves, agreed on every finding
and result, apart from two documented engine readings that the referee does not share
(neither marked here as a defect, both pinned by earlier tests):

- a ``FreshPressed`` before the deal or after the game's end is CL-FRESH in the engine;
  EVENTS.md says FreshPressed "may come at any moment" and CL-FRESH only grants the press
  "at any moment of a round", so the referee reports nothing;
- a wrong removal claim in classic (``strikes`` before the fourth timeout or after the
  end, ``left`` without a PlayerLeft) is a CL-STRIKES / CL-LEAVE *violation* in the
  engine, where §0 C-CLAIM reads "Scores, payouts, removals and auto-plays that the
  platform logs are recomputed from the moves; a difference is a discrepancy finding"
  (r500 gives C-CLAIM for the same claims).
"""

from __future__ import annotations

import pytest
from logkit import Log, findings, stacked_deck
from r500kit import P2, RUN_H, SET_7, Script

# audit 41's classic table (the same hands, up-card and stock) and its turn helpers
from test_audit41_classic_michigan import (
    H1,
    H2,
    H3,
    STOCK,
    UP,
    classic3,
    strike_out,
)

from rummyguard.events.cards import format_card
from rummyguard.replay.engine import replay

# == classic (RULES.md §1) ====================================================================


def classic(seats: list[str], hands: list[list[str]], stock: list[str] | None = None,
            **created) -> Log:
    """Dealer = the last seat, so seats[0] is the first player (15 cards)."""
    log = Log()
    log.created("classic", seats, dealer=len(seats) - 1, **created)
    log.round(stacked_deck(hands, UP, stock or STOCK), dealer=len(seats) - 1)
    return log


def test_CL_FRESH_a_strikes_removal_completes_the_vote_and_the_first_fresh_charges_those_left() -> None:
    """CL-FRESH: "When every active player has pressed it in the same round, the round is
    redealt (new RoundStarted, same first player). The first unanimous Fresh of a game also
    charges every active player one more stake". CL-STRIKES: "at the fourth he is removed
    instead ... and loses his stake". p1 and p3 press Fresh; p2, who never pressed, is
    auto-played three times and removed at his fourth timeout: now every active player
    (p1, p3) has pressed, so the round is redealt (redeal 1) and p1 and p3 stake again;
    p2 lost only his first stake. After the redeal p1 (first player, 15 cards) discards
    without a draw (CL-FIRST)."""
    log = classic3()
    log.discard("p1", "2C")
    log.add("FreshPressed", "p1", {})
    log.add("FreshPressed", "p3", {})
    strike_out(log)
    log.round(stacked_deck([H1, H3], UP, STOCK), dealer=2, redeal=1)
    log.discard("p1", "2C")
    rec = replay(log.events)
    assert findings(rec) == []
    assert rec.results.net == {"p1": -200, "p2": -100, "p3": -200}
    assert rec.state.hand_size(0) == 14 and rec.state.hand_size(2) == 14
    assert rec.state.to_act() == ["p3"]


@pytest.mark.parametrize(("dt", "late"), [(120, False), (120.001, True)])
def test_CL_STRIKES_first_player_removed_on_the_first_turn_of_the_third_redeal(dt: float,
                                                                             late: bool) -> None:
    """CL-AUTOPLAY: "On the first player's first turn there is no draw: the highest
    non-joker card is discarded" (KH). CL-STRIKES: "a player's first three timeouts in a
    game are auto-played (strikes 1-3); at the fourth he is removed instead ... Otherwise
    play goes on with the next player". CL-FRESH: "later unanimous Fresh only redeal".
    CL-TIMER: the turn starts at "a removal"; p2's turn is his first of the (redealt)
    round: 60 s + 60 s. p1 times out on the first turn of the deal and of each of three
    redeals; his fourth timeout removes him; p2, not the first player, starts his turn
    with a draw (the face-up 8D) 120 s after the removal (on time) or 120.001 s (late)."""
    log = classic3()
    for k in range(3):
        log.add("AutoPlayed", "system", {"player": "p1", "drew": None, "discarded": "KH",
                                         "strike": k + 1}, dt=120)
        for p in ("p1", "p2", "p3"):
            log.add("FreshPressed", p, {})
        log.round(stacked_deck([H1, H2, H3], UP, STOCK), dealer=2, redeal=k + 1)
    log.sys("PlayerRemoved", {"player": "p1", "reason": "strikes"}, dt=120)
    log.draw("p2", "discard", "8D", dt=dt - 1)
    seq = log.discard("p2", "AS", dt=1)
    rec = replay(log.events)
    assert findings(rec) == ([(seq, "CL-TIMER", "violation")] if late else [])
    # one doubling only (the first unanimous Fresh); p1's cards left play with him
    assert rec.results.net == {"p1": -200, "p2": -200, "p3": -200}
    assert rec.state.hand_size(0) == 0 and rec.state.hand_size(1) == 14
    assert rec.state.to_act() == ["p3"]


def test_CL_FRESH_pressed_after_a_draw_the_redeal_restores_the_deal() -> None:
    """CL-FRESH: "any player may press "Fresh" at any moment of a round, in turn or not";
    a unanimous Fresh redeals "(new RoundStarted, same first player)". p2 presses between
    his draw and his discard, then p3 and p1: the redeal deals p1 15 and the others 14
    again (the drawn card went back into the new deck), p1 discards without drawing
    (CL-FIRST), and every player has staked twice."""
    log = classic3()
    log.discard("p1", "2C")
    log.draw("p2", "stock", "2H")
    for p in ("p2", "p3", "p1"):
        log.add("FreshPressed", p, {})
    log.round(stacked_deck([H1, H2, H3], UP, STOCK), dealer=2, redeal=1)
    log.discard("p1", "2C")
    log.draw("p2", "discard", "2C")
    log.discard("p2", "AS")
    rec = replay(log.events)
    assert findings(rec) == []
    assert [rec.state.hand_size(s) for s in range(3)] == [14, 14, 14]
    assert rec.results.net == {"p1": -200, "p2": -200, "p3": -200}


def test_CL_FRESH_unanimous_then_the_only_other_player_leaves_before_the_redeal() -> None:
    """CL-FRESH: the first unanimous Fresh "charges every active player one more stake (the
    pot doubles)". CL-LEAVE: a player who leaves "at any moment" "is removed at once and
    forfeits his stake"; CL-STRIKES: "With one active player left, that player wins the
    pot at once"; CL-RESULT: "winners = ... the last player standing; net = pot - rake -
    own stake(s) for the winner, minus the stake(s) paid for everyone else". Two players
    vote Fresh (pot 400), p2 leaves before the redeal: p1 takes the 400 (net +200)."""
    log = classic(["p1", "p2"], [H1, H2])
    log.add("FreshPressed", "p1", {})
    log.add("FreshPressed", "p2", {})
    log.add("PlayerLeft", "p2", {})
    log.sys("ChipsTransferred", {"transfers": [
        {"from": "p1", "to": "pot", "amount": 100, "reason": "stake"},
        {"from": "p2", "to": "pot", "amount": 100, "reason": "stake"},
        {"from": "p1", "to": "pot", "amount": 100, "reason": "fresh"},
        {"from": "p2", "to": "pot", "amount": 100, "reason": "fresh"},
        {"from": "pot", "to": "p1", "amount": 400, "reason": "pot"}]})
    log.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {}})
    log.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 200, "p2": -200}})
    rec = replay(log.events)
    assert findings(rec) == []
    assert rec.results.winners == ["p1"] and rec.results.net == {"p1": 200, "p2": -200}


# p1's 15 cards: a run of 5, a set, a 3-run, a set of four, and the discard 2C.
RUMMY1 = ["3H", "4H", "5H", "6H", "7H", "9C", "9D", "9S", "3S", "4S", "5S", "7C", "7D", "7S", "2C"]
RUMMY_MELDS = [{"kind": "run", "cards": ["3H", "4H", "5H", "6H", "7H"]},
               {"kind": "set", "cards": ["9C", "9D", "9S"]},
               {"kind": "run", "cards": ["3S", "4S", "5S"]},
               {"kind": "set", "cards": ["7C", "7D", "7S"]}]


@pytest.mark.parametrize(("dt", "late"), [(120, False), (120.001, True)])
def test_CL_TIMER_a_late_declaration_is_a_violation_and_still_wins(dt: float, late: bool) -> None:
    """CL-TIMER: "A move of the player in turn whose ts is later than turn start + base +
    extra is late (a violation if accepted)"; the first turn has 60 s base + 60 s extra
    from RoundStarted. CL-RUMMY: the first player may declare on his first turn without a
    draw; "The winner takes the pot". The declaration at 120.001 s was accepted: CL-TIMER,
    and p1 still wins (a finding never undoes a move)."""
    log = classic(["p1", "p2"], [RUMMY1, H2])
    seq = log.add("DeclaredRummy", "p1", {"melds": RUMMY_MELDS, "discard": "2C"}, dt=dt)
    rec = replay(log.events)
    assert findings(rec) == ([(seq, "CL-TIMER", "violation")] if late else [])
    assert rec.results.winners == ["p1"] and rec.results.net == {"p1": 100, "p2": -100}


def test_CL_AUTOPLAY_discarding_the_drawn_joker_is_a_violation() -> None:
    """CL-AUTOPLAY: the system draws from stock and discards the drawn card "or, if it is a
    joker, the highest non-joker card in hand"; "An AutoPlayed event ... that plays other
    cards than this rule gives, is a violation". The stock top is a joker; the platform
    auto-plays p2 by drawing it and discarding it: CL-AUTOPLAY at that event (the rule
    gives AS, the highest non-joker card of p2's hand: ace high, spades last)."""
    log = classic3(stock=["JK", "2H"])
    log.discard("p1", "2C")
    seq = log.add("AutoPlayed", "system", {"player": "p2", "drew": "JK", "discarded": "JK",
                                           "strike": 1}, dt=120)
    rec = replay(log.events)
    got = findings(rec)
    assert (seq, "CL-AUTOPLAY", "violation") in got
    assert all(s == seq and kind == "violation" for s, _, kind in got)
    assert "discard AS" in next(f.message for f in rec.findings if f.rule == "CL-AUTOPLAY")


# == Rummy 500 (RULES.md §2) ==================================================================

#: R5-VALUES: "2-10 face value; J Q K 10; ace 11 ... Left in hand at the end: ace and joker
#: -15 each, others their face value as above (negative)."
_FACE = {"2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "T": 10, "J": 10,
         "Q": 10, "K": 10}


def r5_hand(cards: list[str]) -> int:
    return sum(15 if c == "JK" or c[0] == "A" else _FACE[c[0]] for c in cards)


def test_R5_single_pile_card_melded_and_out_on_the_first_turn() -> None:
    """R5-DRAW-STOCK: "a turn starts with a draw: the top stock card, or from the discard
    pile"; R5-NODISCARD-TOP: "a single card taken from the pile may be kept but not
    discarded in the same turn" (melding it is neither); R5-MELD: "no minimum value for a
    first meld"; R5-DISCARD: "A player goes out by discarding his last card"; R5-END: the
    round ends when a player goes out. p1 takes the face-up 9D, melds 9D-KD, 3H-6H and the
    four 7s, and goes out with 2C. R5-SCORE: p1 = 9+40 + 18 + 28 = 95; p2 = -96."""
    s = Script()
    s.log.draw("p1", "discard", "9D")
    s.meld("p1", {"kind": "run", "cards": ["9D", "TD", "JD", "QD", "KD"]})
    s.meld("p1", RUN_H)
    s.meld("p1", SET_7)
    s.log.discard("p1", "2C")
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 95, "p2": -r5_hand(P2)}})
    s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    rec = replay(s.log.events)
    assert findings(rec) == []
    assert rec.results.scores == {"p1": 95, "p2": -96}


@pytest.mark.parametrize("use", [True, False])
def test_R5_USE_BOTTOM_the_deepest_card_may_be_the_drawers_own_discard(use: bool) -> None:
    """R5-DRAW-PILE: "a player may take any card of the discard pile together with every
    card above it"; R5-USE-BOTTOM: "if more than one card was taken, the deepest one must
    be used in the same turn: melded, laid off, or swapped"; R5-NODISCARD-TOP: "after
    taking several, any of them but the deepest may be discarded". Nothing bars the
    drawer's own earlier discard: p1 melds 3H..6H and discards the 2H he drew, p2
    discards KS, p1 takes 2H KS (2H deepest). Laying 2H off below 3H uses it, and p1 may
    discard KS (the top card): clean. Keeping 2H (discarding 2C) is R5-USE-BOTTOM at the
    discard that ends the turn."""
    s = Script()
    s.draw("p1")  # 2H
    s.meld("p1", RUN_H)
    s.log.discard("p1", "2H")
    s.draw("p2")  # KS
    s.log.discard("p2", "KS")
    s.log.draw("p1", "discard", "2H", "KS")
    if use:
        s.layoff("p1", "2H", 0, "low")
    seq = s.log.discard("p1", "KS" if use else "2C")
    rec = replay(s.log.events)
    assert findings(rec) == ([] if use else [(seq, "R5-USE-BOTTOM", "violation")])
    assert rec.state.to_act() == ["p2"]


def test_R5_SWAP_unnamed_low_joker_read_as_the_ace_above_then_swapped_and_extended_low() -> None:
    """C-WILD: "without [as], a wild at the low end stands for the card below only when
    the high end is A": JK QH KH stands for Q-K-A (the joker is AH). R5-SWAP: "a player
    may give the natural card a table joker stands for and take the joker into his hand"
    (p2, who has not melded); R5-LAYOFF: he may then add JH below QH ("his own or
    another's, even before he has melded"). R5-VALUES/R5-SCORE: the AH at the high end is
    11 for the giver, JH 10 for the layer; p1 keeps QH KH (20)."""
    a = ["JK", "QH", "KH", "3C", "4D", "5S", "7C", "8D", "9S", "2D", "6C", "TS", "4S"]
    b = ["AH", "JH", "2C", "5C", "6D", "8S", "9C", "TC", "3S", "5D", "7S", "2S", "3D"]
    s = Script([a, b], "9D", ["6H", "7H", "8H", "9H"])
    s.draw("p1")  # 6H
    s.meld("p1", {"kind": "run", "cards": ["JK", "QH", "KH"]})
    s.log.discard("p1", "6H")
    s.draw("p2")  # 7H
    s.swap("p2", 0, "AH")
    s.layoff("p2", "JH", 0, "low")
    s.log.discard("p2", "7H")
    rec = replay(s.log.events)
    assert findings(rec) == []
    tm = rec.state.melds[0]
    placed = {format_card(c): (rec.state.player(by), pts) for c, by, pts in
              zip(tm.meld.cards, tm.by, tm.points, strict=True)}
    assert placed == {"JH": ("p2", 10), "QH": ("p1", 10), "KH": ("p1", 10), "AH": ("p2", 11)}
    assert rec.state.hands[1][52] == 1  # the joker is in p2's hand


def test_R5_VALUES_a_joker_laid_off_on_a_set_of_aces_is_worth_11_to_the_layer() -> None:
    """R5-VALUES: "ace 11, but 1 in a run A 2 3…; a melded joker is worth the card it
    stands for"; R5-LAYOFF: "Points of a laid-off card go to the player who laid it off".
    p1 melds AC AD AS (33) and 3C 4C 5C (12); p2 lays his joker off on the aces (it
    stands for AH: 11 to p2)."""
    a = ["AC", "AD", "AS", "3C", "4C", "5C", "9H", "TH", "JH", "2D", "6S", "8S", "QC"]
    b = ["JK", "2C", "7C", "5D", "6D", "8D", "9C", "TC", "3S", "4D", "7S", "2S", "3D"]
    s = Script([a, b], "KD", ["6H", "7H", "8H"])
    s.draw("p1")  # 6H
    s.meld("p1", {"kind": "set", "cards": ["AC", "AD", "AS"]})
    s.meld("p1", {"kind": "run", "cards": ["3C", "4C", "5C"]})
    s.log.discard("p1", "6H")
    s.draw("p2")  # 7H
    s.layoff("p2", "JK", 0)
    s.log.discard("p2", "7H")
    rec = replay(s.log.events)
    assert findings(rec) == []
    tm = rec.state.melds[0]
    assert tm.points == [11, 11, 11, 11] and [rec.state.player(b) for b in tm.by] == ["p1"] * 3 + ["p2"]


def test_R5_CHIPS_the_seeds_second_test_vector_played_through_a_tournament_round() -> None:
    """R5-CHIPS: "the round winner is the player with the highest round score. Each other
    player pays him (winner score − own score) × chip_ratio chips ... ratio 2; winner 60;
    others 0 and −10 → they pay 120 and 140". R5-POT: in tournament mode "stake is each
    player's starting stack; chips move only between players". Three players, 7 cards
    each (dealer p3, p1 starts). p1 melds KC KD KH (30) and 7S 8S 9S (24), later lays 6S
    off below 7S (6) and goes out: 60. p2 melds 6C 6D 6H (18) and keeps 2S 3C 4D 9C (18):
    0. p3 melds 2C 2D 2H (6) and keeps 3D 3H 5S 5C (16): −10. With stacks of 500 nobody
    is out, so the game goes on (no GameEnded due)."""
    a = ["KC", "KD", "KH", "7S", "8S", "9S", "QD"]
    b = ["6C", "6D", "6H", "2S", "3C", "4D", "9C"]
    c = ["2C", "2D", "2H", "3D", "3H", "5S", "5C"]
    s = Script([a, b, c], "4H", ["JC", "TC", "TD", "6S", "AS"], dealer=2,
               rules={"mode": "tournament", "chip_ratio": 2}, stake=500)
    s.draw("p1")  # JC
    s.meld("p1", {"kind": "set", "cards": ["KC", "KD", "KH"]})
    s.meld("p1", {"kind": "run", "cards": ["7S", "8S", "9S"]})
    s.log.discard("p1", "JC")
    s.draw("p2")  # TC
    s.meld("p2", {"kind": "set", "cards": ["6C", "6D", "6H"]})
    s.log.discard("p2", "TC")
    s.draw("p3")  # TD
    s.meld("p3", {"kind": "set", "cards": ["2C", "2D", "2H"]})
    s.log.discard("p3", "TD")
    s.draw("p1")  # 6S
    s.layoff("p1", "6S", 1, "low")
    s.log.discard("p1", "QD")
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 60, "p2": 0, "p3": -10}})
    s.sys("ChipsTransferred", {"transfers": [
        {"from": "p2", "to": "p1", "amount": 120, "reason": "round 1"},
        {"from": "p3", "to": "p1", "amount": 140, "reason": "round 1"}]})
    rec = replay(s.log.events)
    assert findings(rec) == []
    assert rec.results.net == {"p1": 260, "p2": -120, "p3": -140}
    assert rec.results.scores == {"p1": 60, "p2": 0, "p3": -10}
    assert not rec.state.is_over() and rec.state.deal_due() is not None
