"""Fourth spec audit (fresh eyes): the odd corners of Michigan (RULES.md §4) and classic's
Fresh redeals (§1 CL-FRESH), in complete games.

Each whole game below was scored by hand from the spec before it was replayed: every
chip movement, ``winners``, ``net``, the exact findings list (rule, kind, seq, and no
other finding), and what ``state_at(events, seq, viewer)`` shows each player. The
claims in the logs (``ChipsTransferred``, ``RoundEnded``, ``GameEnded``) are written
out by hand, not copied from the replay.

Tests named ``fix_...``, and the lines marked "fixed" in the others (the views), failed
before this audit's change:

- Michigan: when leaves ended the game in the poker phase, the poker pot was never
  settled: the last player's declared hand did not take it and its chips vanished from
  every ``net`` (the nets summed to less than zero).
- Michigan: the full view lost the cards of a player who left (they are dead cards,
  stops, but were listed nowhere), and a player who left did not see the hand he left.
- Classic: after a unanimous Fresh the view still showed the old player in turn and
  ``legal_moves`` offered him a draw, though any move then is a CL-FRESH breach.
- Classic: a platform that played on after a unanimous Fresh got one CL-FRESH finding
  per move to the end of the game; it is one breach, reported once.
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

from logkit import Log, findings, stacked_deck
from test_audit2_classic import P3_HAND
from test_classic_rules import DECK, P1_HAND, P2_HAND, STOCK_TOP, UP, WIN_MELDS
from test_michigan_kit import HAND_A, HAND_B, STACKED, michigan_deck

from rummyguard.replay.engine import GameEngine, replay, state_at
from rummyguard.replay.rules.classic import ClassicRummy
from rummyguard.replay.rules.michigan import Michigan

RANKS = "23456789TJQKA"
PAY = ("JS", "QD", "KC", "AH")


def cards(text: str) -> list[str]:
    return text.split()


def suit(s: str) -> list[str]:
    return [r + s for r in RANKS]


def transfer(src: str, dst: str, amount: int, reason: str = "") -> dict[str, Any]:
    return {"from": src, "to": dst, "amount": amount, "reason": reason}


def michigan_antes(order: list[str], dealer: str, pay_ante: int = 1) -> list[dict[str, Any]]:
    """MI-ANTE written from the rule: 1 chip to the kitty (the dealer 2), ``pay_ante`` from
    each player on each pay card."""
    out = [transfer(p, "kitty", 2 if p == dealer else 1, "ante") for p in order]
    out += [transfer(p, "pay:" + c, pay_ante, "pay ante") for p in order for c in PAY]
    return out


# == Michigan: four players, two deals, three in one ===============================================
#
# Seats a b c d, dealer b, ``three_in_one``, ``deals`` 2, ``widow_price`` 3, stake 0.
#
# Deal 1 (dealer b): dealt c d a b + widow, 11 11 10 10 10 cards.
#   c: 2C-5C 7C-KC   d: 2D-5D 7D-KD   a: 2H-7H 9H TH JH QS
#   b: 6C AC 6D AD 8H QH KH AH KS AS   widow: 2S-JS
# Antes: kitty c1 d1 a1 b2 = 5, each pay card 4. b (the dealer, last offered) buys the
# widow for 3: kitty 8; his old hand is dead (6C 6D 8H KS are stops, AH is stuck).
# Poker: c 2C 3C 4C 5C 7C, d the same in diamonds, b the same in spades (three flushes
# 7-5-4-3-2, suits never break ties), a 2H 3H 4H 5H QS (queen high). Pot 4: 1 each to
# b c d, the odd chip to the first of them from left of the dealer: c. c 2, d 1, b 1.
# Stops: c 2C-5C (6C dead); c holds only clubs, the right passes to d: 2D-5D (6D dead);
# d holds only diamonds, to a: a starts 3H holding 2H (MI-PENALTY: 1 to b, c, d), plays
# 3H-7H (8H dead); a restarts outside hearts with QS (KS dead); outside spades with 2H
# (3H played); a holds only hearts, the right passes to b: 2S-JS (JS: 4), b is out
# (kitty 8). QD (d's), KC (c's), AH (dead) roll over with 4 each.
#   net a -1-4-1-3 = -9; b -2-4-3-1+1+1+4+8 = +4; c -1-4-1+2+1 = -3; d -1-4-1+1+1 = -4.
# c leaves between the deals: the next dealer would be c, so it is d.
# Deal 2 (dealer d): dealt a b (c skipped) d + widow, 13 each: a hearts, b clubs,
# d diamonds, widow spades. Antes: kitty a1 b1 d2 = 4; pay cards +3: JS 3, QD 7, KC 7,
# AH 7. a declares a straight flush (2H-6H), b clubs 7-5-4-3-2; a leaves (his hand is
# dead, he cannot win the pot); d declares diamonds 7-5-4-3-2: the pot (3) splits b/d,
# the odd chip to b (the first of them from left of the dealer d: a is gone, then b).
# b (left of d, a gone) starts 2C and plays all 13 clubs (KC: 7), out: kitty 4.
# MI-END: JS 3 + QD 7 + AH 7 = 17 over b and d: 8 each, the odd chip to b, the first
# player still in from left of the last dealer d (a has left).
#   net a -1-4-1 = -6; b -1-4-1+2+7+4+9 = +16; d -2-4-1+1+8 = +2.
# Game: a -15, b +20, c -3, d -2 (sum 0); winners: b.

MI_DEAL1 = {
    "c": cards("2C 3C 4C 5C 7C 8C 9C TC JC QC KC"),
    "d": cards("2D 3D 4D 5D 7D 8D 9D TD JD QD KD"),
    "a": cards("2H 3H 4H 5H 6H 7H 9H TH JH QS"),
    "b": cards("6C AC 6D AD 8H QH KH AH KS AS"),
    "widow": cards("2S 3S 4S 5S 6S 7S 8S 9S TS JS"),
}
MI_NET = {"a": -15, "b": 20, "c": -3, "d": -2}


def michigan_game() -> tuple[Log, dict[str, int]]:
    log = Log("mi4")
    at: dict[str, int] = {}
    log.created("michigan", ["a", "b", "c", "d"], dealer=1, stake=0,
                rules={"three_in_one": True, "deals": 2, "widow_price": 3})
    at["deal1"] = log.round(michigan_deck([MI_DEAL1[k] for k in ("c", "d", "a", "b", "widow")]),
                            dealer=1)
    at["widow"] = log.add("WidowBought", "b", {"price": 3})
    for player, hand in (("c", "2C 3C 4C 5C 7C"), ("d", "2D 3D 4D 5D 7D"),
                         ("a", "2H 3H 4H 5H QS"), ("b", "2S 3S 4S 5S 7S")):
        at["poker1"] = log.add("PokerHandDeclared", player, {"cards": cards(hand)})

    def play(player: str, text: str) -> int:
        for card in cards(text):
            seq = log.add("CardPlayed", player, {"card": card})
        return seq

    at["stop_c"] = play("c", "2C 3C 4C 5C")
    at["stop_d"] = play("d", "2D 3D 4D 5D")
    at["penalty"] = log.add("CardPlayed", "a", {"card": "3H"})
    at["follow_a"] = at["penalty"]  # 4H is due; a holds it
    at["stop_a"] = play("a", "4H 5H 6H 7H")
    at["restart_qs"] = play("a", "QS")
    at["restart_2h"] = play("a", "2H")
    at["out1"] = play("b", "2S 3S 4S 5S 6S 7S 8S 9S TS JS")
    at["claims1"] = log.sys("ChipsTransferred", {"transfers": [
        *michigan_antes(["c", "d", "a", "b"], "b"),
        transfer("b", "kitty", 3, "widow"),
        *(transfer(p, "poker", 1, "poker ante") for p in "cdab"),
        transfer("poker", "c", 2), transfer("poker", "d", 1), transfer("poker", "b", 1),
        transfer("a", "b", 1, "penalty"), transfer("a", "c", 1, "penalty"),
        transfer("a", "d", 1, "penalty"),
        transfer("pay:JS", "b", 4), transfer("kitty", "b", 8)]})
    at["ended1"] = log.sys("RoundEnded", {"round": 1, "winners": ["b"], "scores": {}})
    at["c_left"] = log.add("PlayerLeft", "c")
    log.sys("PlayerRemoved", {"player": "c", "reason": "left"})
    at["deal2"] = log.round(michigan_deck([suit("H"), suit("C"), suit("D"), suit("S")]),
                            round_no=2, dealer=3)
    log.add("PokerHandDeclared", "a", {"cards": cards("2H 3H 4H 5H 6H")})
    log.add("PokerHandDeclared", "b", {"cards": cards("2C 3C 4C 5C 7C")})
    at["a_left"] = log.add("PlayerLeft", "a")
    log.sys("PlayerRemoved", {"player": "a", "reason": "left"})
    at["poker2"] = log.add("PokerHandDeclared", "d", {"cards": cards("2D 3D 4D 5D 7D")})
    at["out2"] = play("b", " ".join(suit("C")))
    at["claims2"] = log.sys("ChipsTransferred", {"transfers": [
        *michigan_antes(["a", "b", "d"], "d"),
        *(transfer(p, "poker", 1, "poker ante") for p in "abd"),
        transfer("poker", "b", 2), transfer("poker", "d", 1),
        transfer("pay:KC", "b", 7), transfer("kitty", "b", 4)]})
    at["split"] = log.sys("ChipsTransferred", {"transfers": [
        transfer("pay:JS", "b", 3, "split"), transfer("pay:QD", "b", 6, "split"),
        transfer("pay:QD", "d", 1, "split"), transfer("pay:AH", "d", 7, "split")]})
    at["ended2"] = log.sys("RoundEnded", {"round": 2, "winners": ["b"], "scores": {}})
    at["game_ended"] = log.sys("GameEnded", {"winners": ["b"], "net": MI_NET})
    return log, at


def test_michigan_four_player_game_matches_the_hand_count() -> None:
    log, _ = michigan_game()
    rec = replay(log.events)
    assert findings(rec) == [] and not rec.halted
    assert rec.results.to_dict() == {"winners": ["b"], "net": MI_NET, "scores": {}}
    st = rec.state
    assert isinstance(st, Michigan) and st.over
    assert set(st.pools.values()) == {0}
    assert sum(rec.results.net.values()) == 0
    assert [(t.dst, t.amount) for t in rec.transfers if t.src == "poker"] == [
        ("b", 1), ("c", 2), ("d", 1), ("b", 2), ("d", 1)]
    assert [(t.dst, t.amount) for t in rec.transfers if t.src == "kitty"] == [("b", 8), ("b", 4)]


def test_michigan_four_player_game_views() -> None:
    log, at = michigan_game()
    events = log.events
    # the widow: its buyer sees his old hand among the dead cards, nobody else sees it
    full = state_at(events, at["widow"])
    assert full["widow_buyer"] == "b" and full["widow_count"] == 0
    assert full["hands"]["b"] == MI_DEAL1["widow"]
    assert Counter(full["dead"]) == Counter(MI_DEAL1["b"]) and full["dead_count"] == 10
    assert state_at(events, at["widow"], "b")["dead"] == full["dead"]
    for viewer in "acd":
        view = state_at(events, at["widow"], viewer)
        assert view["dead"] is None and view["widow"] is None and view["dead_count"] == 10
        assert set(view["hands"]) == {viewer}
    # before the purchase the offer goes round from left of the dealer, the dealer last
    offer = state_at(events, at["widow"] - 1, "a")
    assert offer["to_act"] == ["c", "d", "a", "b"] and offer["in_turn"] is None
    assert offer["widow_count"] == 10 and offer["phase"] == "widow"
    # poker: after the showdown each player sees his own declaration and who won
    shown = state_at(events, at["poker1"], "d")["poker"]
    assert shown == {"declared": {"d": cards("2D 3D 4D 5D 7D")}, "winners": ["b", "c", "d"]}
    # the right passed from c to d: a stop and its starter are public, the suit barred
    stop = state_at(events, at["stop_c"], "a")
    assert (stop["in_turn"], stop["barred_suit"], stop["next_card"]) == ("d", "C", None)
    # a holds 4H, the next card: only a is told
    assert state_at(events, at["follow_a"], "a")["next_card"] == "4H"
    other = state_at(events, at["follow_a"], "c")
    assert (other["in_turn"], other["next_card"], other["to_act"]) == (None, None, [])
    # the last restart passes the right from a (hearts only, hearts barred) to b
    last = state_at(events, at["restart_2h"], "c")
    assert (last["in_turn"], last["barred_suit"]) == ("b", "H")
    assert last["pots"] == {"kitty": 8, "poker": 0, "pay:JS": 4, "pay:QD": 4, "pay:KC": 4,
                            "pay:AH": 4}
    # fixed: c leaves between the deals; his clubs are dead, and he still sees them
    gone = state_at(events, at["c_left"], "c")
    assert gone["dead"] == cards("7C 8C 9C TC JC QC KC") and gone["hands"] == {"c": []}
    assert state_at(events, at["c_left"], "a")["dead"] is None
    # deal 2 skips c: dealer d, hands a b d of 13, antes from three players
    deal2 = state_at(events, at["deal2"], "b")
    assert (deal2["round"], deal2["dealer"], deal2["active"]) == (2, "d", ["a", "b", "d"])
    assert deal2["hand_counts"] == {"a": 13, "b": 13, "c": 0, "d": 13}
    assert deal2["pots"] == {"kitty": 4, "poker": 0, "pay:JS": 3, "pay:QD": 7, "pay:KC": 7,
                             "pay:AH": 7}
    # fixed: a's hearts are dead once he leaves; the full view still holds the 52 cards
    left = state_at(events, at["a_left"])
    assert left["dead"] == suit("H") and left["dead_count"] == 13 and left["active"] == ["b", "d"]
    assert left["to_act"] == ["d"] and left["phase"] == "poker"
    end = state_at(events, at["game_ended"], "d")
    assert end["over"] and end["winners"] == ["b"] and set(end["pots"].values()) == {0}
    assert end["deal_winners"] == ["b", "b"]


def test_michigan_full_view_always_holds_the_52_cards() -> None:
    """fixed: a player's cards left the view when he left (the dead pile missed them)."""
    log, at = michigan_game()
    for seq in range(at["deal1"], len(log.events)):
        view = state_at(log.events, seq)
        held = [c for hand in view["hands"].values() for c in hand]
        every = held + view["widow"] + view["dead"] + view["played"]
        assert len(every) == 52 and len(set(every)) == 52, seq


def test_michigan_four_player_game_wrong_claims() -> None:
    log, at = michigan_game()
    bad = copy.deepcopy(log.events)
    pot = bad[at["claims1"]]["payload"]["transfers"]
    odd = next(t for t in pot if t["from"] == "poker" and t["to"] == "c")
    odd["amount"] = 1  # the odd chip of the tie given to b instead of c
    next(t for t in pot if t["from"] == "poker" and t["to"] == "b")["amount"] = 2
    split = bad[at["split"]]["payload"]["transfers"]
    split[1]["amount"], split[2]["amount"] = 5, 2  # the split's odd chip to d instead of b
    bad[at["ended2"]]["payload"]["winners"] = ["d"]
    bad[at["game_ended"]]["payload"]["net"] = {"a": -15, "b": 20, "d": -2}  # c left out
    rec = replay(bad)
    assert findings(rec) == [
        (at["claims1"], "C-CLAIM", "discrepancy"),  # the first event with a wrong transfer
        (at["ended2"], "C-CLAIM", "discrepancy"),
        (at["game_ended"], "C-CLAIM", "discrepancy"),
    ]
    assert rec.findings[0].message == (
        "chip transfers differ; claimed but not due: poker->c 1, poker->b 2, pay:QD->b 5, "
        "pay:QD->d 2; due but not claimed: pay:QD->b 6, pay:QD->d 1, poker->b 1, poker->c 2")
    assert rec.findings[1].message == "round 2 winners: claimed ['d'], recomputed ['b']"
    assert rec.findings[2].message == "net differs: c: claimed 0, recomputed -3"
    assert rec.results.to_dict() == {"winners": ["b"], "net": MI_NET, "scores": {}}


def test_fix_game_ended_by_leaves_in_the_poker_phase_settles_the_poker_pot() -> None:
    """Stacked 3-player deal, dealer c, ``three_in_one``. a and b declare, b leaves, c
    leaves: a is the last player: the deal (kitty 4) and the game are his, and the poker
    pot (2: b's chip too; b left, so his hand cannot win) goes to a's declared hand.
    MI-END: the 12 chips on the pay cards to a. net a = -1-4-1+4+2+12 = 12, b -6, c -6.
    Before: the pot stayed in ``poker`` and a's net was 10."""
    log = Log("mi-poker")
    log.created("michigan", ["a", "b", "c"], dealer=2, stake=0, rules={"three_in_one": True})
    log.round(STACKED, dealer=2)
    log.add("PokerHandDeclared", "a", {"cards": HAND_A[:5]})
    log.add("PokerHandDeclared", "b", {"cards": HAND_B[:5]})
    log.add("PlayerLeft", "b")
    last = log.add("PlayerLeft", "c")
    log.sys("RoundEnded", {"round": 1, "winners": ["a"], "scores": {}})
    log.sys("GameEnded", {"winners": ["a"], "net": {"a": 12, "b": -6, "c": -6}})
    rec = replay(log.events)
    assert findings(rec) == []
    assert rec.results.to_dict() == {"winners": ["a"], "net": {"a": 12, "b": -6, "c": -6},
                                     "scores": {}}
    assert rec.state.pools["poker"] == 0
    assert [t.key() for t in rec.transfers if t.seq == last] == [
        ("poker", "a", 2), ("kitty", "a", 4), ("pay:JS", "a", 3), ("pay:QD", "a", 3),
        ("pay:KC", "a", 3), ("pay:AH", "a", 3)]
    assert state_at(log.events, last, "a")["poker"] == {
        "declared": {"a": HAND_A[:5]}, "winners": ["a"]}


def test_last_player_who_never_declared_does_not_take_the_poker_pot() -> None:
    """The decision beside that fix: with no declared hand still in, nobody wins the pot;
    its chip stays in ``poker`` (a later deal's pot would take it; here the game ends)."""
    log = Log("mi-poker2")
    log.created("michigan", ["a", "b", "c"], dealer=2, stake=0, rules={"three_in_one": True})
    log.round(STACKED, dealer=2)
    log.add("PokerHandDeclared", "b", {"cards": HAND_B[:5]})
    log.add("PlayerLeft", "b")
    log.add("PlayerLeft", "c")
    rec = replay(log.events)
    assert findings(rec) == []
    assert rec.results.net == {"a": 4 + 12 - 5, "b": -6, "c": -6}
    assert rec.state.pools["poker"] == 1 and rec.state.poker_winners == []


def test_the_holder_of_the_next_card_leaving_makes_a_stop() -> None:
    """b holds 4H, the next card, and leaves: his cards are dead, so hearts stop and a,
    who played 3H, restarts outside hearts with a lowest card (4C: no penalty). 5C is
    b's (dead): a restarts again, outside clubs (4D); 5D is b's too: a stop, seen by
    all. (fixed: the views showed b's dead cards nowhere, not even to b.)"""
    log = Log("mi-stop")
    log.created("michigan", ["a", "b", "c"], dealer=2, stake=0)
    log.round(STACKED, dealer=2)
    log.add("CardPlayed", "a", {"card": "2H"})
    log.add("CardPlayed", "a", {"card": "3H"})
    left = log.add("PlayerLeft", "b")
    log.add("CardPlayed", "a", {"card": "4C"})
    seq = log.add("CardPlayed", "a", {"card": "4D"})
    rec = replay(log.events)
    assert findings(rec) == []
    view = state_at(log.events, left, "c")
    assert (view["in_turn"], view["barred_suit"], view["active"]) == ("a", "H", ["a", "c"])
    assert Counter(state_at(log.events, left)["dead"]) == Counter(HAND_B)
    assert state_at(log.events, left, "b")["dead"] == state_at(log.events, left)["dead"]
    assert not [t for t in rec.transfers if t.reason == "penalty"]
    assert state_at(log.events, seq)["hand_counts"] == {"a": 9, "b": 0, "c": 13}
    view = state_at(log.events, seq, "c")
    assert (view["in_turn"], view["barred_suit"], view["next_card"]) == ("a", "D", None)


# == Classic: Fresh ===============================================================================
#
# Four players p1-p4, dealer p4, stake 100, rake 250 bps. p1 (left of the dealer) is the
# first player of every deal while he is in.
# Deal: p1 discards; p2, p3, p1, p4 press Fresh: the first unanimous Fresh, every player
# stakes again (pot 800). p3 presses again before the redeal: nothing.
# Redeal 1: p1 discards, p2 draws AH and discards it; p3 leaves in his turn (p4's turn
# starts). p1, p2, p4 press: the second unanimous Fresh, only a redeal.
# Redeal 2 (p1 15 cards, p2 and p4 14): p4 and p2 press; p1 leaves in his first turn:
# unanimity is reached by his leave (the third Fresh: a redeal only).
# Redeal 3: p1 gone, so p2 is the first player (15 cards), p4 14. p2 declares on his
# first turn, 119 s after the deal (a redeal restarts the clocks: 60 s + 60 s).
# Pot 800, rake 20, p2 takes 780: net p1 -200, p2 +580, p3 -200, p4 -200, house +20.

P4_HAND = cards("AD 3D 4C 5C 6S 7C 8C 9H TH JH QC KC 2S 3S")
PLAYERS = ["p1", "p2", "p3", "p4"]
CL_NET = {"p1": -200, "p2": 580, "p3": -200, "p4": -200}


def classic_fresh_game(*, declare_dt: float = 119) -> tuple[Log, dict[str, int]]:
    log = Log("cf4")
    at: dict[str, int] = {}
    log.created("classic", PLAYERS, dealer=3, rules={"rake_bps": 250})
    four = stacked_deck([P1_HAND, P2_HAND, P3_HAND, P4_HAND], UP, STOCK_TOP)
    at["deal"] = log.round(four, dealer=3)
    log.discard("p1", "2C")
    for p in ("p2", "p3", "p1"):
        log.add("FreshPressed", p)
    at["fresh1"] = log.add("FreshPressed", "p4")
    at["again"] = log.add("FreshPressed", "p3")
    at["redeal1"] = log.round(four, dealer=3, redeal=1)
    log.discard("p1", "2C")
    log.draw("p2", "stock", "AH")
    log.discard("p2", "AH")
    at["p3_left"] = log.add("PlayerLeft", "p3")
    log.sys("PlayerRemoved", {"player": "p3", "reason": "left"})
    for p in ("p1", "p2"):
        log.add("FreshPressed", p)
    at["fresh2"] = log.add("FreshPressed", "p4")
    at["redeal2"] = log.round(stacked_deck([P1_HAND, P2_HAND, P4_HAND], UP, STOCK_TOP),
                              dealer=3, redeal=2)
    log.add("FreshPressed", "p4")
    log.add("FreshPressed", "p2")
    at["fresh3"] = log.add("PlayerLeft", "p1")
    log.sys("PlayerRemoved", {"player": "p1", "reason": "left"})
    at["redeal3"] = log.round(stacked_deck([P1_HAND, P2_HAND], UP, STOCK_TOP), dealer=3,
                              redeal=3)
    at["declared"] = log.add("DeclaredRummy", "p2", {"melds": WIN_MELDS, "discard": "2C"},
                             dt=declare_dt)
    at["stakes"] = log.sys("ChipsTransferred", {"transfers": [
        transfer(p, "pot", 100, "stake") for p in PLAYERS]})
    at["doubled"] = log.sys("ChipsTransferred", {"transfers": [
        transfer(p, "pot", 100, "fresh") for p in PLAYERS]})
    at["payout"] = log.sys("ChipsTransferred", {"transfers": [
        transfer("pot", "house", 20, "rake"), transfer("pot", "p2", 780, "pot")]})
    at["round_ended"] = log.sys("RoundEnded", {"round": 1, "winners": ["p2"], "scores": {}})
    at["game_ended"] = log.sys("GameEnded", {"winners": ["p2"],
                                             "net": {**CL_NET, "house": 20}})
    return log, at


def test_classic_three_fresh_redeals_with_two_leavers_matches_the_hand_count() -> None:
    log, _ = classic_fresh_game()
    rec = replay(log.events)
    assert findings(rec) == [] and not rec.halted
    assert rec.results.to_dict() == {"winners": ["p2"], "net": CL_NET, "scores": {}}
    st = rec.state
    assert isinstance(st, ClassicRummy) and st.unanimous_fresh == 3


def test_classic_fresh_game_views() -> None:
    log, at = classic_fresh_game()
    events = log.events
    voted = state_at(events, at["fresh1"], "p3")
    assert voted["pots"] == {"pot": 800} and voted["fresh_votes"] == PLAYERS
    assert voted["redeals"] == 1 and voted["in_turn"] is None  # fixed: was p2
    assert state_at(events, at["again"], "p1")["pots"] == {"pot": 800}
    redealt = state_at(events, at["redeal1"], "p4")
    assert redealt["fresh_votes"] == [] and redealt["in_turn"] == "p1"
    assert redealt["hand_counts"] == {"p1": 15, "p2": 14, "p3": 14, "p4": 14}
    assert set(redealt["hands"]) == {"p4"} and Counter(redealt["hands"]["p4"]) == Counter(P4_HAND)
    assert redealt["discard_pile"] == [UP] and "stock" not in redealt
    assert state_at(events, at["p3_left"], "p1")["in_turn"] == "p4"
    second = state_at(events, at["fresh2"], "p2")
    assert second["pots"] == {"pot": 800} and second["redeals"] == 2 and second["in_turn"] is None
    third = state_at(events, at["fresh3"], "p4")  # reached by p1's leave
    assert third["redeals"] == 3 and third["fresh_votes"] == ["p2", "p4"]
    assert third["active"] == ["p2", "p4"] and third["in_turn"] is None
    last = state_at(events, at["redeal3"], "p2")
    assert last["in_turn"] == "p2" and last["hand_counts"] == {"p1": 0, "p2": 15, "p3": 0, "p4": 14}
    assert Counter(last["hands"]["p2"]) == Counter(P1_HAND) and last["stock_count"] == 108 - 30
    end = state_at(events, at["declared"], "p4")
    assert end["over"] and end["winners"] == ["p2"] and end["pots"] == {"pot": 0}


def test_classic_fresh_game_breaches_and_wrong_claims() -> None:
    # the second redeal numbered 1: CL-FRESH there, nothing else
    log, at = classic_fresh_game()
    log.events[at["redeal2"]]["payload"]["redeal"] = 1
    assert findings(replay(log.events)) == [(at["redeal2"], "CL-FRESH", "violation")]
    # a second round of extra stakes claimed (later unanimous Fresh only redeal)
    log, at = classic_fresh_game()
    log.events[at["payout"]]["payload"]["transfers"] += [transfer("p2", "pot", 100),
                                                          transfer("p4", "pot", 100)]
    rec = replay(log.events)
    assert findings(rec) == [(at["payout"], "C-CLAIM", "discrepancy")]
    assert rec.findings[0].message == (
        "chip transfers differ; claimed but not due: p2->pot 100, p4->pot 100")
    # the declaration one second past the redealt round's first-turn clocks
    log, at = classic_fresh_game(declare_dt=121)
    assert findings(replay(log.events)) == [(at["declared"], "CL-TIMER", "violation")]
    # a player who left pressing Fresh: no vote, and no finding (session 22, audit 41;
    # this audit first read it as C-TURN): FreshPressed is not a move (EVENTS.md: it "may
    # come at any moment"; "the others are moves") and C-TURN judges moves
    log, at = classic_fresh_game()
    late = {**log.events[at["fresh2"]], "actor": "p3", "event_id": "cf4-late"}
    events = [*log.events[: at["fresh2"]], late]
    assert findings(replay(events)) == []
    assert state_at(events, at["fresh2"])["fresh_votes"] == ["p1", "p2"]


def two_players_fresh() -> Log:
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(DECK, dealer=1)
    log.add("FreshPressed", "p2")
    log.add("FreshPressed", "p1")
    return log


def test_fix_nobody_in_turn_while_a_unanimous_fresh_awaits_its_redeal() -> None:
    log = two_players_fresh()
    engine = GameEngine()
    for event in log.events:
        engine.apply(event)
    st = engine.variant
    assert isinstance(st, ClassicRummy) and st.fresh_pending
    assert st.to_act() == [] and st.legal_moves("p1") == [] and st.legal_moves("p2") == []
    assert st.deal_due() is not None and st.deal_due()["redeal"] == 1
    for viewer in (None, "p1", "p2"):
        assert state_at(log.events, len(log.events) - 1, viewer)["in_turn"] is None
    log.round(DECK, dealer=1, redeal=1)
    after = state_at(log.events, len(log.events) - 1, "p2")
    assert after["in_turn"] == "p1" and after["fresh_votes"] == []


def test_fix_playing_on_after_a_unanimous_fresh_is_one_CL_FRESH() -> None:
    """The platform ignores the unanimous Fresh and plays the round out: one breach, at
    the first move after it (before: one CL-FRESH per move). The stake stays doubled."""
    log = two_players_fresh()
    first = log.discard("p1", "2C")
    log.draw("p2", "stock", "AH")
    log.discard("p2", "AH")
    log.draw("p1", "stock", "2D")
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2D"})
    log.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 200, "p2": -200}})
    rec = replay(log.events)
    assert findings(rec) == [(first, "CL-FRESH", "violation")]
    assert rec.results.to_dict() == {"winners": ["p1"], "net": {"p1": 200, "p2": -200},
                                     "scores": {}}
    # a stray move, then the redeal after all: the same one finding, the redeal clean
    log = two_players_fresh()
    stray = log.discard("p1", "2C")
    log.round(DECK, dealer=1, redeal=1)
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2C"})
    assert findings(replay(log.events)) == [(stray, "CL-FRESH", "violation")]
