"""Audit 40: corners of Rummy 500 (RULES.md §2) and Liverpool (§3) the earlier audits
did not script, each on a small hand-built log whose expected verdict was worked out
from the spec's text (quoted in each test) before the log was replayed."""

from __future__ import annotations

from typing import Any

from logkit import findings
from r500kit import Script, pot_claims
from test_liverpool import H1 as LV_H1
from test_liverpool import H2 as LV_H2
from test_liverpool import UP as LV_UP
from test_liverpool import Log as LvLog
from test_liverpool import deal_first, opening, three

from rummyguard.replay.engine import replay


def found(rec) -> list[tuple[int, str, str]]:
    return [(f.seq, f.rule, f.kind) for f in rec.findings]


# == spec helpers (written from RULES.md, not from the engine) ==================================

#: R5-VALUES: "2–10 face value; J Q K 10; ace 11 ... Left in hand at the end: ace and joker
#: −15 each, others their face value as above (negative)."
_R5_FACE = {"2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "T": 10, "J": 10,
            "Q": 10, "K": 10}


def r5_hand(cards: list[str]) -> int:
    return sum(15 if c == "JK" or c[0] == "A" else _R5_FACE[c[0]] for c in cards)


#: LV-SCORE: "A and 2 = 25; 3–9 = 5; T J Q K = 10."
def lv_hand(cards: list[str]) -> int:
    return sum(25 if c[0] in "A2" else 10 if c[0] in "TJQK" else 5 for c in cards)


# == Rummy 500 ===================================================================================

# p1 (first player, dealer p2) can meld 12 of his 13 cards at once; the set holds the joker.
R_P1 = ["7C", "7D", "JK", "3S", "4S", "5S", "9H", "TH", "JH", "QC", "KC", "AC", "6D"]
R_P2 = ["2C", "3C", "4D", "5C", "6C", "8D", "9C", "TD", "JC", "2H", "4H", "8S", "KD"]
R_UP = "QD"
SET7 = {"kind": "set", "cards": ["7C", "7D", "JK"]}
RUN_S = {"kind": "run", "cards": ["3S", "4S", "5S"]}
RUN_H = {"kind": "run", "cards": ["9H", "TH", "JH"]}
RUN_C = {"kind": "run", "cards": ["QC", "KC", "AC"]}


def _p1_melds_all(s: Script, draw: str) -> None:
    """p1 draws ``draw`` from the stock and melds his four melds (left: 6D and ``draw``)."""
    s.log.draw("p1", "stock", draw)
    s.stock.remove(draw)
    for spec in (SET7, RUN_S, RUN_H, RUN_C):
        s.meld("p1", spec)


def test_r500_going_out_with_a_joker_won_by_a_swap_the_same_turn() -> None:
    """R5-SWAP: "a player may give the natural card a table joker stands for and take the
    joker into his hand." R5-DISCARD: "A player goes out by discarding his last card".
    R5-LAYOFF: a player may add cards to any meld, his own included. Nothing in §2 bars
    playing a joker won by a swap in the same turn (CL-NODISCARD-JOKER is classic's).
    p1 melds 7C 7D JK (+ three runs); next turn he draws 7H, gives it for the joker, lays
    the joker off above 3S 4S 5S (it stands for 6S) and goes out with 6D.
    R5-VALUES/R5-SCORE: p1 = set 7×3 (21) + 3S..6S (18) + 9H TH JH (29) + QC KC AC (31,
    ace 11 at the high end) = 99; p2 = −(his 13 cards). rounds mode, 1 round: p1 wins."""
    s = Script([R_P1, R_P2], R_UP, ["8C", "2S", "7H", "9D"])
    _p1_melds_all(s, "8C")
    s.log.discard("p1", "8C")
    s.turn("p2")  # 2S
    s.draw("p1")  # 7H
    s.swap("p1", 0, "7H")
    s.layoff("p1", "JK", 1, "high")
    s.log.discard("p1", "6D")
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 99, "p2": -r5_hand(R_P2)}})
    pot_claims(s, {"p1": 200})
    s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    rec = replay(s.log.events)
    assert findings(rec) == []
    assert rec.results is not None and rec.results.scores == {"p1": 99, "p2": -r5_hand(R_P2)}


def test_r500_a_joker_won_by_a_swap_may_be_discarded_the_same_turn() -> None:
    """R5-DISCARD: "every turn ends with one discard"; no §2 rule forbids discarding a
    joker (CL-NODISCARD-JOKER is classic's only). p1 gives 7H for his set's joker and
    discards the joker: clean, and the round goes on (he still holds 6D)."""
    s = Script([R_P1, R_P2], R_UP, ["8C", "2S", "7H", "9D"])
    _p1_melds_all(s, "8C")
    s.log.discard("p1", "8C")
    s.turn("p2")
    s.draw("p1")
    s.swap("p1", 0, "7H")
    s.log.discard("p1", "JK")
    s.turn("p2")  # 9D: the round is still live
    assert findings(replay(s.log.events)) == []


def test_r500_single_pile_card_given_for_a_joker_then_the_joker_discarded() -> None:
    """R5-NODISCARD-TOP: "a single card taken from the pile may be kept but not discarded
    in the same turn" — only that card is barred. R5-SWAP has no precondition (p2 has not
    melded). p1 discards 7H; p2 takes it (single card), gives it for the joker of p1's set
    7C 7D JK and discards the joker: the taken card was not discarded, so clean."""
    s = Script([R_P1, R_P2], R_UP, ["7H", "2S", "9D"])
    _p1_melds_all(s, "7H")
    s.log.discard("p1", "7H")
    s.log.draw("p2", "discard", "7H")
    s.swap("p2", 0, "7H")
    s.log.discard("p2", "JK")
    s.turn("p1")  # 2S
    assert findings(replay(s.log.events)) == []


def test_r500_set_joker_becomes_the_last_suit_after_a_lay_off_and_can_be_swapped() -> None:
    """R5-LAYOFF: p2 (who has not melded: "even before he has melded") lays 7H off on
    p1's 7C 7D JK; the set is then full (R5-MELD: "sets (3–4 of a rank)"), its joker can
    only be 7S. R5-SWAP: p1 then gives 7S for it: clean. A later 7-lay-off on the full
    set would be a fifth card (not tested here)."""
    s = Script([R_P1, R_P2], R_UP, ["8C", "7H", "7S", "9D"])
    _p1_melds_all(s, "8C")
    s.log.discard("p1", "8C")
    s.draw("p2")  # 7H
    s.layoff("p2", "7H", 0)
    s.log.discard("p2", "KD")
    s.draw("p1")  # 7S
    s.swap("p1", 0, "7S")
    s.log.discard("p1", "JK")
    assert findings(replay(s.log.events)) == []


def test_r500_a_card_of_another_rank_given_for_a_set_joker_is_R5_SWAP() -> None:
    """R5-SWAP: the natural given must be "the natural card a table joker stands for".
    After p2 lays 7H off on 7C 7D JK the joker can only stand for 7S; p1 gives 8C (not
    a 7 at all): R5-SWAP at the swap, and nothing else."""
    s = Script([R_P1, R_P2], R_UP, ["8C", "7H", "8H", "9D"])
    _p1_melds_all(s, "8C")
    s.log.discard("p1", "6D")
    s.draw("p2")  # 7H
    s.layoff("p2", "7H", 0)
    s.log.discard("p2", "KD")
    s.draw("p1")  # 8H
    seq = s.swap("p1", 0, "8C")
    s.log.discard("p1", "8H")
    assert findings(replay(s.log.events)) == [(seq, "R5-SWAP", "violation")]


# == Liverpool ===================================================================================


def test_lv_round_3_two_runs_of_one_suit_end_to_end() -> None:
    """LV-CONTRACT: round 3 is "two runs"; "Runs: ≥4 cards, one suit, consecutive". Two
    runs of the same suit that meet end to end (3H..6H and 7H..TH) are two runs: clean."""
    log, who = deal_first(3, "3H 4H 5H 6H 7H 8H 9H TH KC QD", "5D 4C")
    log.drew(who)
    log.laid(who, ("run", "3H 4H 5H 6H"), ("run", "7H 8H 9H TH"))
    log.disc(who, "5D")
    assert log.replay().findings == []


def test_lv_rummy_caller_discards_his_own_copy_of_the_called_card() -> None:
    """LV-RUMMY: the caller "takes the card, lays it off, and then discards a card of his
    own." With two decks p1 holds a second 5S: he calls Rummy on p2's 5S (it fits p0's
    5C 5D 5H), lays it off and discards his own 5S. Clean; that 5S is then the live
    discard, p0 (next) may take it."""
    log = opening(three())
    log.call("p1", "5S", 0, "5S")
    log.took("p0", "5S")
    log.disc("p0", "QS")
    assert log.replay().findings == []


def test_r500_going_out_on_the_last_stock_card_ends_the_round_once() -> None:
    """R5-END: "the round ends when a player goes out, or when the stock is empty after a
    discard (the player who drew the last stock card finishes his turn first)". p1 melds
    12 cards at once; both then draw and discard until p1 draws the last stock card (7H),
    gives it for his set's joker, lays the joker off on 3S 4S 5S and goes out with 6D:
    both ends at one discard, one round, scored as in the swap test (p1 99)."""
    from collections import Counter

    from rummyguard.events.cards import format_cards, parse_cards, standard_deck

    rest = Counter(standard_deck(1, 2)) - Counter(parse_cards(R_P1 + R_P2 + [R_UP]))
    stock = [c for c in format_cards(sorted(rest.elements())) if c != "7H"] + ["7H"]
    assert len(stock) == 27
    s = Script([R_P1, R_P2], R_UP, stock)
    first = stock[0]
    _p1_melds_all(s, first)
    s.log.discard("p1", first)
    who = "p2"
    while len(s.stock) > 1:
        s.turn(who)
        who = "p1" if who == "p2" else "p2"
    assert who == "p1" and s.stock == ["7H"]
    s.draw("p1")
    s.swap("p1", 0, "7H")
    s.layoff("p1", "JK", 1, "high")
    last = s.log.discard("p1", "6D")
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 99, "p2": -r5_hand(R_P2)}})
    pot_claims(s, {"p1": 200})
    s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    rec = replay(s.log.events)
    assert findings(rec) == []
    assert rec.state is not None and rec.state.round_result(1) == (["p1"], {"p1": 99, "p2": -r5_hand(R_P2)})
    assert last == s.last() - 3


def _lv_named_set_log(as_name: str, card: str) -> tuple[Any, int, int]:
    """p0 lays down 5C 5D 2H (the 2H named ``as_name`` by ``as``) + 9C 9D 9H, the others
    pass a turn each, p0 draws ``card`` and lays it off on the fives (his later turn).
    Returns the log, the lay-down's seq and the lay-off's seq."""
    log = LvLog(["p0", "p1", "p2"], dealer=2)
    log.deal(1, 2, {0: "5C 5D 2H 9C 9D 9H 9S QS JS 4C", 1: LV_H1, 2: LV_H2}, LV_UP, "4H 6H TH " + card)
    log.drew("p0")
    laid = log.laid("p0", ("set", "5C 5D 2H", {"2": as_name}), ("set", "9C 9D 9H"))
    log.disc("p0", "4C")
    log.drew("p1")
    log.disc("p1", "TS")
    log.drew("p2")
    log.disc("p2", "3C")
    log.drew("p0")
    return log, laid, log.off("p0", card, 0)


def test_lv_a_set_wild_named_as_a_suit_a_natural_has_is_still_a_legal_set() -> None:
    """LV-CONTRACT: "Sets: ≥3 cards of a rank, naturals of different suits"; LV-WILD: "a 2
    stands for any card; a set needs ≥2 natural cards". Two decks hold two 5C: the set
    5C 5D 2H with the 2H named 5C (``as``) has the naturals 5C and 5D, of different
    suits, and two naturals: the contract (two sets) is met, nothing is broken. The
    lay-off of 5H (a third suit among the naturals) is also clean."""
    log, _laid, _off = _lv_named_set_log("5C", "5H")
    assert found(log.replay()) == []


def test_lv_a_natural_of_the_suit_a_set_wild_was_named_may_be_laid_off() -> None:
    """LV-LAYOFF: after laying down a player may add cards to any melds; LV-CONTRACT: the
    set's *naturals* must be of different suits. On 5C 5D 2H with the 2H named 5H, the
    natural 5H makes the naturals 5C 5D 5H — all different suits — so laying it off is
    clean (the spec constrains the naturals' suits, not what a wild was named)."""
    log, _laid, _off = _lv_named_set_log("5H", "5H")
    assert found(log.replay()) == []


def test_lv_an_unnamed_wild_on_a_set_of_all_four_suits_is_legal() -> None:
    """LV-CONTRACT: "Sets: ≥3 cards of a rank, naturals of different suits"; LV-WILD: "a 2
    stands for any card". 5C 5D 5H 5S 2C: four naturals of four suits plus a wild (which
    can only stand for a second five of some suit, two decks): a legal set."""
    log = LvLog(["p0", "p1", "p2"], dealer=2)
    log.deal(1, 2, {0: "5C 5D 5H 5S 2C 9C 9D 9H QS JS", 1: "7C 7D 7H 8C 8D 8H TS 3D 4S 6S",
                    2: "3C 3H 6C 6D JD QD TC AC AD 4D"}, LV_UP, "4H 6H")
    log.drew("p0")
    log.laid("p0", ("set", "5C 5D 5H 5S 2C"), ("set", "9C 9D 9H"))
    log.disc("p0", "QS")
    log.drew("p1")
    assert found(log.replay()) == []


def test_lv_a_discard_taken_may_be_discarded_again_and_then_bought_by_its_first_discarder() -> None:
    """LV-DRAW: "a turn starts with one draw, stock top or discard top"; LV-DISCARD: "a turn
    ends with one discard" — §3 has no rule against discarding the card just taken (that
    is R5-NODISCARD-TOP, Rummy 500's). LV-BUY: "nor may the discarder buy back his own
    card": after p1 takes p0's 4C and discards it again, p1 is its discarder; p0 (not laid
    down) may buy it once p2 has drawn from the stock."""
    log = three()
    log.drew("p0")
    log.disc("p0", "4C")
    log.took("p1", "4C")
    log.disc("p1", "4C")
    log.drew("p2")
    log.buy("p0", "4C")
    log.disc("p2", "5S")
    assert found(log.replay()) == []


def test_lv_max_buys_zero_does_not_stop_a_rummy_call() -> None:
    """LV-BUY: "Buys per player per round: unlimited ..., config max_buys" limits *buys*
    (``Bought``); LV-RUMMY is a different move. With max_buys 0 p1 may still call Rummy
    on p2's 5S (it fits p0's 5C 5D 5H) and discard 3D: clean."""
    log = opening(three({"max_buys": 0}))
    log.call("p1", "5S", 0, "3D")
    log.took("p0", "3D")
    assert found(log.replay()) == []


def test_r500_a_swap_before_the_draw_breaks_the_draw_rule() -> None:
    """R5-DRAW-STOCK: "a turn starts with a draw: the top stock card, or from the discard
    pile." p1 opens his second turn by giving 7H for his set's joker, then draws and
    discards: the swap is the turn's first move, not a draw (R5-DRAW-STOCK at the swap;
    the draw that follows is the turn's one draw, nothing more)."""
    s = Script([R_P1, R_P2], R_UP, ["7H", "2S", "9D"])
    _p1_melds_all(s, "7H")
    s.log.discard("p1", "6D")
    s.turn("p2")  # 2S
    seq = s.swap("p1", 0, "7H")
    s.draw("p1")  # 9D
    s.log.discard("p1", "9D")
    assert findings(replay(s.log.events)) == [(seq, "R5-DRAW-STOCK", "violation")]


def test_r500_lay_off_on_the_meld_of_a_player_who_left() -> None:
    """R5-LAYOFF: "a player may add cards to any meld on the table, his own or another's".
    A meld stays on the table when its owner leaves (PlayerLeft: "may come at any
    moment"), so p2 may lay 7H off on the departed p1's 7C 7D 7S. Three players, 7 cards
    each (deal: "7 each with 3–4")."""
    h1 = ["7C", "7D", "7S", "3H", "4H", "5H", "9C"]
    h2 = ["2C", "3C", "4D", "5C", "6C", "8D", "KD"]
    h3 = ["TD", "JC", "2H", "4S", "8S", "QS", "AD"]
    s = Script([h1, h2, h3], "QD", ["8C", "7H", "9S"], dealer=2)
    s.draw("p1")  # 8C
    s.meld("p1", {"kind": "set", "cards": ["7C", "7D", "7S"]})
    s.meld("p1", {"kind": "run", "cards": ["3H", "4H", "5H"]})
    s.log.discard("p1", "8C")
    s.log.add("PlayerLeft", "p1", {})
    s.draw("p2")  # 7H
    s.layoff("p2", "7H", 0)
    s.log.discard("p2", "KD")
    s.turn("p3")  # 9S
    assert findings(replay(s.log.events)) == []
