"""Audit 47: corners of Liverpool (RULES.md §3) and Michigan (§4), with the common rules of
§0 / §5 they rely on, that the earlier audits did not script.

Each test quotes the sentence(s) it reads and asserts what the spec says; the expected
findings, scores and chips were worked out from the spec text before the log was
replayed. Where the spec leaves a choice open, the test names the engine's documented
reading (replay/rules/liverpool.py and michigan.py module docstrings) that it relies on.

Covered: Liverpool going out on the lay-down turn (rounds 1-4), laying down every card
outside round 6, buying in the round after one's lay-down, a buy once the next player's
turn has begun, a chain of two Rummy calls, the up-card's buy window after the first
player left, lay-offs onto a leaver's meld, a draw of a pile top that is not a live
discard, round scores with a leaver; Michigan widow bought by the dealer (last in the
offer), a pay card won from the widow and one rolled over from the dead hand into the
final split, a dear first start on a pay card (penalty and pay card together), the right
to start passed over a player who left, a three-way poker tie's odd chip.

Defects found: none; every test below passes as written (no xfail). Every scenario was
also run through the independent referee (tests/referee_liverpool_michigan.py), which
agrees finding for finding.

Documented readings this audit finds debatable (not defects, pinned elsewhere):
- LV-RUMMY "any other player who has laid down may call" — the engine bars the next
  player (test_liverpool case_rummy_by_next_player); in a two-player game nobody can ever
  call Rummy under that reading.
- MI-END "divided equally among all players" — the engine leaves out players who left,
  while it counts them for "the players with the highest net".
- MI-PENALTY "a player who starts a sequence with a card other than his lowest" — the
  engine charges no penalty when the wrong player starts (MI-START / MI-STOP finding).
"""

from __future__ import annotations

from typing import Any

from logkit import Log as MiLog
from test_liverpool import H0, H1, H2, STOCK, UP, opening, three
from test_liverpool import Log as LvLog
from test_michigan_kit import michigan_deck

from rummyguard.events.cards import format_cards
from rummyguard.replay.engine import GameRecord, replay
from rummyguard.replay.rules.liverpool import Liverpool
from rummyguard.replay.rules.michigan import Michigan


def found(rec: GameRecord) -> list[tuple[int, str, str]]:
    return [(f.seq, f.rule, f.kind) for f in rec.findings]


# == spec helpers (written from RULES.md, not from the engine) =====================================

#: LV-SCORE: "A and 2 = 25; 3–9 = 5; T J Q K = 10."
def lv_points(cards: str) -> int:
    return sum(25 if c[0] in "A2" else 10 if c[0] in "TJQK" else 5 for c in cards.split())


# == Liverpool ====================================================================================

#: p2's hand of test_liverpool with 5S swapped for KS, so that p0 may hold the fourth 5
H2K = H2.replace("5S", "KS")
#: p0 holds two four-suit sets and two wilds: 5C 5D 5H 5S 2C + 9C 9D 9H 9S 2D is ten cards
P0_TWO_BIG_SETS = "5C 5D 5H 5S 9C 9D 9H 9S 2C 2D"


def lv_three(h0: str = P0_TWO_BIG_SETS, stock: str = STOCK, rules: dict[str, Any] | None = None) -> LvLog:
    """Three players, dealer p2: p0 plays first (the up-card KD is his to take)."""
    log = LvLog(["p0", "p1", "p2"], dealer=2, rules=rules)
    log.deal(1, 2, {0: h0, 1: H1, 2: H2K}, UP, stock)
    return log


def test_lv_going_out_on_the_lay_down_turn_in_round_1_is_clean() -> None:
    """LV-CONTRACT round 1 "two sets"; "Sets: ≥3 cards of a rank, naturals of different
    suits"; LV-WILD "a set needs ≥2 natural cards" (nothing caps a set's size); LV-DISCARD
    "a turn ends with one discard"; LV-OUT "the round ends when a player has no cards";
    LV-ALLOUT binds rounds 5 and 6 only, so nothing forbids laying down and going out in one
    turn of round 1. p0 draws 4H, lays down 5C 5D 5H 5S 2C + 9C 9D 9H 9S 2D (ten cards) and
    discards 4H: out. LV-SCORE: "the others score what they hold": p1 = 7C 7D 7H 8C 8D 8H
    TS 3D 5S 6S = 9 × 5 + 10 = 55; p2 = 3C 3H 6C 6D JD QD TC AC AD KS = 4 × 5 + 4 × 10 +
    2 × 25 = 110."""
    assert lv_points(H1) == 55 and lv_points(H2K) == 110
    log = lv_three()
    log.drew("p0")  # 4H
    log.laid("p0", ("set", "5C 5D 5H 5S 2C"), ("set", "9C 9D 9H 9S 2D"))
    log.disc("p0", "4H")
    log.add("RoundEnded", "system", {"round": 1, "winners": ["p0"], "scores": {"p0": 0, "p1": 55, "p2": 110}})
    rec = log.replay()
    assert found(rec) == []
    st = rec.state
    assert isinstance(st, Liverpool)
    assert st.round_result(1) == (["p0"], {"p0": 0, "p1": 55, "p2": 110})
    assert st.scores() == {"p0": 0, "p1": 55, "p2": 110}


def test_lv_laying_down_every_card_in_round_1_is_LV_DISCARD_alone() -> None:
    """LV-DISCARD: "a turn ends with one discard, except a going-out in round 6"; LV-ALLOUT
    speaks of rounds 5 and 6 only; LV-OUT: "the round ends when a player has no cards".
    p0 draws 2H and lays down all eleven cards (5C 5D 5H 5S 2C 2H + 9C 9D 9H 9S 2D, two
    legal sets): one LV-DISCARD at the lay-down, no LV-ALLOUT, and the round is over (he has
    no cards), scored as LV-SCORE says."""
    log = lv_three(stock="2H " + STOCK)
    log.drew("p0")  # 2H
    seq = log.laid("p0", ("set", "5C 5D 5H 5S 2C 2H"), ("set", "9C 9D 9H 9S 2D"))
    rec = log.replay()
    assert found(rec) == [(seq, "LV-DISCARD", "violation")]
    assert isinstance(rec.state, Liverpool)
    assert rec.state.round_result(1) == (["p0"], {"p0": 0, "p1": 55, "p2": 110})


def test_lv_a_player_who_laid_down_last_round_may_buy_in_the_next() -> None:
    """LV-BUY: "A player who has laid down may not buy" — laying down is per round
    (LV-CONTRACT: "to lay down, a player shows exactly the round's contract"); "Buys per
    player per round". p0 lays down and goes out in round 1; in round 2 (dealer p0, so p1
    plays first) p1 draws from the stock and p0, who has not laid down in round 2, buys the
    up-card KC with the penalty QS: clean, his first buy of round 2."""
    log = lv_three()
    log.drew("p0")
    log.laid("p0", ("set", "5C 5D 5H 5S 2C"), ("set", "9C 9D 9H 9S 2D"))
    log.disc("p0", "4H")
    log.deal(2, 0, {1: "3C 3D 3H 4S 5S 6S 7S KD KH QC", 2: "8C 8D 8H 9C TC JC QD JH JD 4D",
                    0: "AC AD AH AS 6C 6D 6H 6S TH TD"}, "KC", "QS JS TS")
    log.drew("p1")  # QS
    seq = log.buy("p0", "KC")  # penalty JS
    rec = log.replay()
    assert found(rec) == [] and seq == 7
    st = rec.state
    assert isinstance(st, Liverpool)
    assert st.buys == [1, 0, 0] and st.laid == [False, False, False]
    assert st.hand_size(0) == 12


def test_lv_buy_once_the_next_players_turn_began_but_before_his_draw_is_LV_BUY() -> None:
    """LV-BUY: "the player after the discarder may take the discard as his draw. If he
    draws from the stock instead, the discard may be bought until he discards". p0 draws,
    discards QS: p1's turn has begun, and QS is his to take until he draws. p2 buying QS
    before p1 has drawn is LV-BUY at the buy (the window opens only with p1's stock draw)."""
    log = three()
    log.drew("p0")  # 4H
    log.disc("p0", "QS")
    seq = log.buy("p2", "QS")
    rec = log.replay()
    assert found(rec)[:1] == [(seq, "LV-BUY", "violation")]
    assert "has not drawn from the stock" in rec.findings[0].message


def test_lv_chain_of_rummy_calls_on_each_others_discards() -> None:
    """LV-RUMMY: "when a discard could have been laid off on a meld on the table, any other
    player who has laid down may call "Rummy" before the next player draws or a buy
    happens. He takes the card, lays it off, and then discards a card of his own." All
    three lay down two sets; p2 discards 5S (fits p0's fives). p0 is next to draw. p1
    calls on 5S and discards 6S, which fits p2's sixes; p2 — not 6S's discarder, not the
    next player, laid down — calls on it and discards JD. p0 has still not drawn; he draws
    from the stock and discards. Clean throughout."""
    log = LvLog(["p0", "p1", "p2"], dealer=2)
    log.deal(1, 2, {0: H0, 1: H1, 2: "3C 3H 3D 6C 6D 6H JD QD AC 5S"}, UP, STOCK)
    opening(log, 7)                                                    # 2..8: p2 drew TH
    log.laid("p2", ("set", "3C 3H 3D"), ("set", "6C 6D 6H"))           # 9: melds 4, 5
    log.disc("p2", "5S")                                               # 10
    log.call("p1", "5S", 0, "6S")                                      # 11
    log.call("p2", "6S", 5, "JD")                                      # 12
    log.drew("p0")                                                     # 13: JH
    log.disc("p0", "QS")                                               # 14
    rec = log.replay()
    assert found(rec) == []
    st = rec.state
    assert isinstance(st, Liverpool)
    assert format_cards(st.melds[0].cards) == ["5C", "5D", "5H", "5S"]
    assert format_cards(st.melds[5].cards) == ["6C", "6D", "6H", "6S"]
    # p1: 11 - 6 laid - TS - 6S = 3D 5S 6H; p2: 11 - 6 laid - 5S - JD = QD AC TH
    assert st.hand_size(1) == 3 and st.hand_size(2) == 3 and st.current == 1


def test_lv_up_card_buy_window_after_the_first_player_left_before_drawing() -> None:
    """LV-BUY: "If he draws from the stock instead, the discard may be bought until he
    discards: the first other player to buy it takes it plus the top stock card as a
    penalty". Engine readings (liverpool.py docstring): the up-card "is live like a discard
    with no discarder", and when the player in turn leaves "the next player's turn starts
    with the same live discard". p0 leaves before his first draw; p1 is now in turn with KD
    on the pile; he draws 4H from the stock and p2 buys KD (penalty 6H): clean."""
    log = three()
    log.add("PlayerLeft", "p0", {})
    log.drew("p1")  # 4H
    log.buy("p2", "KD")  # 6H
    log.disc("p1", "TS")
    rec = log.replay()
    assert found(rec) == []
    st = rec.state
    assert isinstance(st, Liverpool)
    assert st.buys == [0, 0, 1] and st.hand_size(2) == 12 and st.to_act() == ["p2"]


def test_lv_lay_off_onto_the_meld_of_a_player_who_left() -> None:
    """LV-LAYOFF: "after he has laid down, in his later turns, a player may add cards to any
    melds on the table". A leaver's melds stay on the table (engine reading: "his melds stay
    on the table for lay-offs"; §3 never takes them away). p0 and p1 lay down, p0 leaves;
    p2 discards 5S, p1 (next) takes it as his draw (LV-DRAW) and lays it off on p0's fives
    (meld 0) in this later turn: clean."""
    log = opening(three(), 6)          # 2..7: p0 melds 0, 1; p1 melds 2, 3; p1 discarded TS
    log.add("PlayerLeft", "p0", {})    # 8
    log.drew("p2")                     # 9: TH
    log.disc("p2", "5S")               # 10
    log.took("p1", "5S")               # 11
    log.off("p1", "5S", 0)             # 12
    log.disc("p1", "3D")               # 13
    rec = log.replay()
    assert found(rec) == []
    st = rec.state
    assert isinstance(st, Liverpool)
    assert format_cards(st.melds[0].cards) == ["5C", "5D", "5H", "5S"]
    assert st.to_act() == ["p2"]


def test_lv_draw_of_a_pile_top_that_is_no_live_discard() -> None:
    """LV-DRAW: "a turn starts with one draw, stock top or discard top" — any discard top.
    p0 draws from the stock (KD passed, nobody buys) and discards QS; p1 takes QS and leaves
    before discarding (engine reading: a leaver in turn passes the turn to the next player).
    p2's turn: the pile's top is KD again; taking it is a legal draw, and he discards."""
    log = three()
    log.drew("p0")                      # 4H
    log.disc("p0", "QS")
    log.took("p1", "QS")
    log.add("PlayerLeft", "p1", {})
    log.took("p2", "KD")
    log.disc("p2", "JD")
    rec = log.replay()
    assert found(rec) == []
    st = rec.state
    assert isinstance(st, Liverpool)
    assert format_cards(st.pile) == ["JD"]
    assert st.to_act() == ["p0"]


def test_lv_round_scores_after_a_leave_cover_the_players_still_in() -> None:
    """LV-SCORE: "the others score what they hold"; a player who left holds nothing (engine
    reading: "his hand leaves play ... he scores nothing more"). p2 leaves; p0 goes out on
    his lay-down turn; the round scores are p0 0, p1 55, and a claim giving exactly those
    is clean, and the game goes on with two players."""
    log = lv_three()
    log.add("PlayerLeft", "p2", {})
    log.add("PlayerRemoved", "system", {"player": "p2", "reason": "left"})
    log.drew("p0")
    log.laid("p0", ("set", "5C 5D 5H 5S 2C"), ("set", "9C 9D 9H 9S 2D"))
    log.disc("p0", "4H")
    log.add("RoundEnded", "system", {"round": 1, "winners": ["p0"], "scores": {"p0": 0, "p1": 55}})
    rec = log.replay()
    assert found(rec) == []
    st = rec.state
    assert isinstance(st, Liverpool) and not st.is_over()
    result = st.round_result(1)
    assert result is not None and result[0] == ["p0"]
    assert {p: result[1].get(p, 0) for p in ("p0", "p1", "p2")} == {"p0": 0, "p1": 55, "p2": 0}


# == Michigan =====================================================================================

R = "23456789TJQKA"


def suit(s: str) -> list[str]:
    return [r + s for r in R]


def mi3(hands: list[list[str]], **rules: Any) -> MiLog:
    """Three players a, b, c, dealer c (seat 2): hands are dealt a, b, c, widow."""
    log = MiLog("mi")
    log.created("michigan", ["a", "b", "c"], dealer=2, rules=rules)
    log.round(michigan_deck(hands), dealer=2)
    return log


def plays(log: MiLog, who: str, cards: list[str]) -> int:
    seq = -1
    for c in cards:
        seq = log.add("CardPlayed", who, {"card": c})
    return seq


def test_mi_dealer_buys_the_widow_last_in_the_offer() -> None:
    """MI-WIDOW: "before the first card is played, any one player may buy the widow for
    widow_price chips (default 1) into the kitty; the first buyer takes it and his own hand
    becomes dead" — the dealer is a player too. c (the dealer) buys the widow (clubs); his
    diamonds are dead. a starts and plays 2H..AH and is out (MI-OUT: the kitty, 1 + 1 + 2
    antes + 1 widow = 5; MI-PAY: pay:AH 3). deals 1 (MI-END): JS QD KC hold 3 each, 9
    chips, 3 to each player. Net: a = -1 - 4 + 5 + 3 + 3 = 6; b = -1 - 4 + 3 = -2;
    c = -2 - 4 - 1 + 3 = -4."""
    log = mi3([suit("H"), suit("S"), suit("D"), suit("C")], deals=1)
    log.add("WidowBought", "c", {"price": 1})
    plays(log, "a", suit("H"))
    log.sys("RoundEnded", {"round": 1, "winners": ["a"], "scores": {}})
    log.sys("GameEnded", {"winners": ["a"], "net": {"a": 6, "b": -2, "c": -4}})
    rec = replay(log.events, verify_hashes=False)
    assert found(rec) == []
    assert ("c", "kitty", 1) in [t.key() for t in rec.transfers]
    assert rec.results.net == {"a": 6, "b": -2, "c": -4} and rec.results.winners == ["a"]


def test_mi_pay_card_won_from_the_widow_and_one_rolled_over_from_the_dead_hand() -> None:
    """MI-WIDOW (the buyer "takes it and his own hand becomes dead"), MI-FOLLOW, MI-STOP
    ("or the ace was played"), MI-PAY ("whoever plays a pay card takes the chips on it"),
    MI-OUT, MI-END ("the chips left on all pay cards together are divided equally among
    all players"). a: 2C..7C + 2H..8H; b: spades; c: diamonds; widow: 8C..AC + 9H..AH.
    b buys the widow (his spades, JS among them, are dead). a starts 2C..7C; b holds 8C..AC
    and follows (KC: +3); the ace stops clubs; b restarts with his lowest heart 9H and plays
    to AH (+3) and is out: kitty 1 + 1 + 2 + 1 = 5. JS (dead) and QD (c's) were never played:
    6 chips, 2 each. Net: a = -5 + 2 = -3; b = -5 - 1 + 5 + 3 + 3 + 2 = 7; c = -6 + 2 = -4."""
    a = suit("C")[:6] + suit("H")[:7]
    widow = suit("C")[6:] + suit("H")[7:]
    log = mi3([a, suit("S"), suit("D"), widow], deals=1)
    log.add("WidowBought", "b", {"price": 1})
    plays(log, "a", suit("C")[:6])
    plays(log, "b", suit("C")[6:] + suit("H")[7:])
    log.sys("RoundEnded", {"round": 1, "winners": ["b"], "scores": {}})
    log.sys("GameEnded", {"winners": ["b"], "net": {"a": -3, "b": 7, "c": -4}})
    rec = replay(log.events, verify_hashes=False)
    assert found(rec) == []
    keys = [t.key() for t in rec.transfers]
    assert ("pay:KC", "b", 3) in keys and ("pay:AH", "b", 3) in keys and ("kitty", "b", 5) in keys
    assert rec.results.net == {"a": -3, "b": 7, "c": -4}


def test_mi_dear_first_start_on_a_pay_card_pays_the_penalty_and_takes_the_card() -> None:
    """MI-START / MI-PENALTY: "a player who starts a sequence with a card other than his
    lowest of that suit pays 1 chip to every other player. The play stands; it is not a
    finding"; MI-PAY: "whoever plays a pay card takes the chips on it". a (left of the
    dealer) holds 5S and JS and starts with JS: 1 chip to b and to c, and pay:JS (3)
    to a; b holds QS KS AS and follows; the ace stops spades. No finding."""
    spades_b = [c for c in suit("S") if c not in ("5S", "JS")]  # 11 cards
    a = ["5S", "JS", *suit("H")[:11]]
    b = spades_b + suit("H")[11:]
    log = mi3([a, b, suit("D"), suit("C")])
    plays(log, "a", ["JS"])
    plays(log, "b", ["QS", "KS", "AS"])
    rec = replay(log.events, verify_hashes=False)
    assert found(rec) == []
    keys = [t.key() for t in rec.transfers]
    assert ("a", "b", 1) in keys and ("a", "c", 1) in keys and ("pay:JS", "a", 3) in keys
    st = rec.state
    assert isinstance(st, Michigan) and st.to_act() == ["b"]  # b played the ace: he restarts


# Eight players p1..p8, dealer p8: p1..p7 get 6 cards, p8 and the widow 5. p1 and p2 hold
# only clubs; 7C is in the widow (as in audit 32).
_REST = [r + s for s in "DHS" for r in R]
EIGHT_HANDS = [
    ["2C", "3C", "4C", "5C", "6C", "8C"], ["9C", "TC", "JC", "QC", "KC", "AC"],
    _REST[0:6], _REST[6:12], _REST[12:18], _REST[18:24], _REST[24:30], _REST[30:35],
    ["7C", *_REST[35:39]],
]
EIGHT_SEATS = [f"p{i}" for i in range(1, 9)]


def test_mi_right_to_start_passes_over_a_player_who_left() -> None:
    """MI-STOP: after a stop the last player restarts in another suit; "if he has none, the
    right passes left". Engine reading: "A player who has left is passed over" (his cards
    are dead). p3 leaves before the first card. p1 plays 2C..6C; 7C is in the widow (stop);
    p1 holds only clubs, p2 (left) only clubs, p3 has left: p4 starts with 8D, his lowest
    diamond — clean, no penalty."""
    log = MiLog("mi8")
    log.created("michigan", EIGHT_SEATS, dealer=7)
    log.round(michigan_deck(EIGHT_HANDS), dealer=7)
    log.add("PlayerLeft", "p3", {})
    plays(log, "p1", ["2C", "3C", "4C", "5C", "6C"])
    rec = replay(log.events, verify_hashes=False)
    assert isinstance(rec.state, Michigan) and rec.state.to_act() == ["p4"]
    plays(log, "p4", ["8D"])
    rec = replay(log.events, verify_hashes=False)
    assert found(rec) == []
    assert [t for t in rec.transfers if t.reason == "penalty"] == []


def test_mi_three_way_poker_tie_odd_chip_from_left_of_the_dealer() -> None:
    """MI-POKER: "each player puts 1 chip in the poker pot and declares five cards of his
    hand; the best poker hand ... wins the pot; ties split, remainder one chip each in seat
    order from left of the dealer." Four players a b c d, dealer d: a, b, c declare A K Q
    J 9 (no flush, same ranks) and d a lower high card: pot 4, three-way tie, 1 each and
    the odd chip to a (left of the dealer, a tied winner)."""
    d_hand = ["2C", "3D", "4H", "5S", "7C", "8D", "8H", "8S", "7D", "6H"]
    hands = [
        ["AC", "KD", "QH", "JS", "9C"], ["AD", "KH", "QS", "JC", "9D"],
        ["AH", "KS", "QC", "JD", "9H"],
    ]
    used = {c for h in hands for c in h} | set(d_hand)
    rest = [c for c in (r + s for s in "CDHS" for r in R) if c not in used]
    # 52 cards into a, b, c, d and the widow one at a time: 11, 11, 10, 10, 10
    full = [hands[0] + rest[0:6], hands[1] + rest[6:12], hands[2] + rest[12:17], d_hand,
            rest[17:27]]
    assert sorted(c for h in full for c in h) == sorted(r + s for s in "CDHS" for r in R)
    log = MiLog("mi4")
    log.created("michigan", ["a", "b", "c", "d"], dealer=3, rules={"three_in_one": True})
    log.round(michigan_deck(full), dealer=3)
    for who, h in zip("abc", hands, strict=True):
        log.add("PokerHandDeclared", who, {"cards": h})
    log.add("PokerHandDeclared", "d", {"cards": ["8D", "7C", "6H", "4H", "2C"]})
    rec = replay(log.events, verify_hashes=False)
    assert found(rec) == []
    got = sorted(t.key() for t in rec.transfers if t.src == "poker")
    assert got == [("poker", "a", 2), ("poker", "b", 1), ("poker", "c", 1)]
