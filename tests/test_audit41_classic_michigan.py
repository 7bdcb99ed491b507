"""Audit 41: corners of classic rummy (RULES.md §1) and Michigan (§4), with the general
rules of §0 / §5 and EVENTS.md they rely on, that the earlier audits did not script.

Each test quotes the sentence it reads and asserts what the spec says, not what the
engine does. A failing test is a finding of this audit.
"""

from __future__ import annotations

import pytest
from logkit import Log, findings, stacked_deck
from test_michigan_kit import michigan_deck

from rummyguard.events.cards import format_card
from rummyguard.replay.engine import replay

# == classic (RULES.md §1) ====================================================================

H1 = ["3H", "4H", "5H", "6H", "7H", "9C", "9D", "9S", "TD", "JD", "QD", "KC", "KD", "KH", "2C"]
H2 = ["AS", "2S", "5C", "6D", "8S", "8C", "JC", "QS", "4D", "7C", "TC", "3S", "5D", "6S"]
H3 = ["AC", "2D", "3C", "4S", "5S", "7D", "8H", "9H", "TH", "JH", "QC", "4C", "6C", "7S"]
UP = "8D"
STOCK = ["2H", "3D", "4D", "5D", "6H", "7H", "8H", "9D", "TH", "JH", "QH", "KH", "AH", "2S"]


def classic3(stock: list[str] | None = None, **created) -> Log:
    """Three players, dealer p3 (seat 2): p1 is the first player (15 cards), then p2, p3."""
    log = Log()
    log.created("classic", ["p1", "p2", "p3"], dealer=2, **created)
    log.round(stacked_deck([H1, H2, H3], UP, stock or STOCK), dealer=2)
    return log


def stock_top(log: Log) -> str:
    return format_card(replay(log.events).state.stock[-1])


def auto(log: Log, player: str, dt: float, strike: int) -> int:
    """An auto-play as CL-AUTOPLAY gives it on a turn with a draw (stock top, not a joker)."""
    card = stock_top(log)
    return log.add("AutoPlayed", "system", {"player": player, "drew": card, "discarded": card,
                                            "strike": strike}, dt=dt)


def turn(log: Log, player: str) -> None:
    card = stock_top(log)
    log.draw(player, "stock", card, dt=2)
    log.discard(player, card, dt=1)


def strike_out(log: Log, player: str = "p2") -> None:
    """CL-STRIKES at p1 p2 p3 with p2 timing out: three auto-plays (120 s on his first
    turn, then 90 s), each followed by p3's and p1's turns, then his removal at the fourth
    timeout (90 s)."""
    for strike, dt in ((1, 120), (2, 90), (3, 90)):
        auto(log, player, dt, strike)
        turn(log, "p3")
        turn(log, "p1")
    log.sys("PlayerRemoved", {"player": player, "reason": "strikes"}, dt=90)


def test_CL_FRESH_a_press_by_a_player_who_left_is_not_a_move_out_of_turn() -> None:
    """EVENTS.md: "PlayerConnected, PlayerDisconnected, PlayerLeft and FreshPressed may
    come at any moment; the others are moves, made in turn". RULES.md C-TURN: "a *move*
    by a player who is not entitled to act at that moment is a violation". CL-FRESH: "any
    player may press "Fresh" at any moment of a round, in turn or not" and the redeal
    needs "every active player". p3 leaves, then presses Fresh: not a move, so no C-TURN;
    his press counts for nothing (he is not active); p1 and p2 then make it unanimous."""
    log = classic3()
    log.discard("p1", "2C")
    log.add("PlayerLeft", "p3", {})
    log.add("FreshPressed", "p3", {})
    log.add("FreshPressed", "p1", {})
    log.add("FreshPressed", "p2", {})
    rec = replay(log.events)
    assert findings(rec) == []
    # the unanimous Fresh of p1 and p2 (the active players) charged them a second stake
    assert rec.results.net == {"p1": -200, "p2": -200, "p3": -100}


@pytest.mark.parametrize(("dt", "late"), [(90, False), (90.001, True)])
def test_CL_STRIKES_removal_at_the_fourth_timeout_starts_the_next_turn(dt: float, late: bool) -> None:
    """CL-STRIKES: "a player's first three timeouts in a game are auto-played (strikes
    1-3); at the fourth he is removed instead ... Otherwise play goes on with the next
    player". CL-TIMER: "The turn starts at the ts of the event that ended the previous
    turn (a discard, a declaration, an auto-play, a removal)"; 30 s base (not his first
    turn) + 60 s extra. p2 is auto-played three times, removed at his fourth timeout;
    p3's draw 90 s after the removal is on time, 90.001 s is late."""
    log = classic3()
    log.discard("p1", "2C")
    strike_out(log)
    card = stock_top(log)
    seq = log.draw("p3", "stock", card, dt=dt)
    rec = replay(log.events)
    assert findings(rec) == ([(seq, "CL-TIMER", "violation")] if late else [])
    st = rec.state
    assert not st.active[1] and st.to_act() == ["p3"]


@pytest.mark.parametrize(("discarded", "clean"), [("KH", True), ("KD", False), ("2C", False)])
def test_CL_AUTOPLAY_first_players_first_turn_of_a_redeal_and_strikes_carry_over(discarded: str,
                                                                                  clean: bool) -> None:
    """CL-FRESH: a unanimous Fresh redeals ("new RoundStarted, same first player").
    CL-AUTOPLAY: "On the first player's first turn there is no draw: the highest non-joker
    card is discarded" ("ranks as usual, then suits C < D < H < S": of KC KD KH, KH).
    CL-STRIKES: "a player's first three timeouts *in a game*": p1's auto-play in the
    redealt round is strike 2. The first-turn clock is 60 + 60 s from RoundStarted."""
    log = classic3()
    log.add("AutoPlayed", "system", {"player": "p1", "drew": None, "discarded": "KH", "strike": 1},
            dt=120)
    for p in ("p1", "p2", "p3"):
        log.add("FreshPressed", p, {})
    log.round(stacked_deck([H1, H2, H3], UP, STOCK), dealer=2, redeal=1)
    seq = log.add("AutoPlayed", "system", {"player": "p1", "drew": None, "discarded": discarded,
                                           "strike": 2}, dt=120)
    got = findings(replay(log.events))
    assert got == ([] if clean else [(seq, "CL-AUTOPLAY", "violation")])


def test_CL_LEAVE_in_turn_after_the_draw_the_drawn_card_leaves_play() -> None:
    """CL-LEAVE: the leaver "is removed at once"; CL-STRIKES/CL-LEAVE (decided): "his cards
    leave play"; "if it was his turn, the next turn starts then". p2 draws AH and leaves
    before discarding: the pile top is still p1's 2C, which p3 may take (CL-DRAW: "the
    face-up top discard"), and the stock top is the next card (2D)."""
    log = classic3(stock=["AH", "2H", "JK", "QH"])
    log.discard("p1", "2C")
    log.draw("p2", "stock", "AH")
    log.add("PlayerLeft", "p2", {})
    log.draw("p3", "discard", "2C")
    log.discard("p3", "AC")
    log.draw("p1", "stock", "2H")
    log.discard("p1", "2H")
    rec = replay(log.events)
    assert findings(rec) == []
    assert rec.state.hand_size(1) == 0


# p1's 15 cards: a long run whose only 4+ run holds a joker (JK QH KH AH: JK is JH, the
# high end being A), a set, a 3-run, a set of four, and the discard 2C.
RUMMY1 = ["JK", "QH", "KH", "AH", "9C", "9D", "9S", "3S", "4S", "5S", "7C", "7D", "7H", "7S", "2C"]
RUMMY_MELDS = [{"kind": "run", "cards": ["JK", "QH", "KH", "AH"]},
               {"kind": "set", "cards": ["9C", "9D", "9S"]},
               {"kind": "run", "cards": ["3S", "4S", "5S"]},
               {"kind": "set", "cards": ["7C", "7D", "7H", "7S"]}]


@pytest.mark.parametrize("allows", [True, False])
def test_CL_RUMMY_on_the_first_turn_with_a_joker_long_run(allows: bool) -> None:
    """CL-RUMMY: "the first player may on his first turn, without [a draw]": "his 15 cards
    minus one discard are partitioned into valid melds covering all 14". C-WILD: "a wild
    at the low end stands for the card below only when the high end is A" (JK QH KH AH is
    J-Q-K-A). CL-LONGRUN: "at least one meld of a winning hand is a run of >=4 cards;
    jokers may stand in it (config long_run_allows_joker, default true)": with false, the
    only long run holds a joker, a CL-LONGRUN violation. The winner takes the pot."""
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1, rules={"long_run_allows_joker": allows})
    log.round(stacked_deck([RUMMY1, H2], UP, ["AS"]), dealer=1)
    seq = log.add("DeclaredRummy", "p1", {"melds": RUMMY_MELDS, "discard": "2C"})
    rec = replay(log.events)
    assert findings(rec) == ([] if allows else [(seq, "CL-LONGRUN", "violation")])
    assert rec.results.winners == ["p1"] and rec.results.net == {"p1": 100, "p2": -100}


# == Michigan (RULES.md §4) ===================================================================

R = "23456789TJQKA"


def suit(s: str) -> list[str]:
    return [r + s for r in R]


def plays(log: Log, who: str, cards: list[str]) -> int:
    seq = -1
    for c in cards:
        seq = log.add("CardPlayed", who, {"card": c})
    return seq


def test_MI_PAY_and_MI_OUT_on_the_same_last_card() -> None:
    """MI-PAY: "whoever plays a pay card takes the chips on it"; MI-OUT: "the first player
    to play all his cards wins the kitty". a (left of the dealer c) holds all the hearts
    and plays 2H..AH: his last card AH is a pay card (default JS QD KC AH) and the ace (a
    stop, MI-STOP) — he takes pay:AH (3 chips) and the kitty (1 + 1 + 2)."""
    log = Log("mi")
    log.created("michigan", ["a", "b", "c"], dealer=2, rules={"deals": 1})
    log.round(michigan_deck([suit("H"), suit("S"), suit("D"), suit("C")]), dealer=2)
    plays(log, "a", suit("H"))
    log.sys("RoundEnded", {"round": 1, "winners": ["a"], "scores": {}})
    rec = replay(log.events, verify_hashes=False)
    assert findings(rec) == []
    keys = [t.key() for t in rec.transfers]
    assert ("pay:AH", "a", 3) in keys and ("kitty", "a", 4) in keys
    # MI-END after the last deal: JS QD KC hold 3 each: 9 chips, 3 to each player
    assert rec.results.net == {"a": -5 + 3 + 4 + 3, "b": -5 + 3, "c": -6 + 3}


def test_MI_PENALTY_first_start_by_the_widow_buyer_from_his_new_hand() -> None:
    """MI-WIDOW: the buyer "takes it and his own hand becomes dead"; MI-START: the player
    left of the dealer starts "with a card of any suit, which must be his lowest card of
    that suit"; MI-PENALTY: "a player who starts a sequence with a card other than his
    lowest of that suit pays 1 chip to every other player. The play stands; it is not a
    finding". a (left of the dealer) buys the widow (all the clubs) and starts with 3C
    holding 2C: 1 chip to b and to c, no finding."""
    log = Log("mi")
    log.created("michigan", ["a", "b", "c"], dealer=2)
    log.round(michigan_deck([suit("H"), suit("S"), suit("D"), suit("C")]), dealer=2)
    log.add("WidowBought", "a", {"price": 1})
    plays(log, "a", ["3C"])
    rec = replay(log.events, verify_hashes=False)
    assert findings(rec) == []
    assert sorted(t.key() for t in rec.transfers if t.src == "a" and t.dst in ("b", "c")) == [
        ("a", "b", 1), ("a", "c", 1)]


def test_MI_END_two_deals_with_rollover_dealer_rotation_and_split() -> None:
    """MI-ANTE (1 chip each, the dealer 2; pay_ante on each pay card), MI-PAY, MI-OUT
    ("Chips on unplayed pay cards roll over"), MI-END ("the dealer moves left each deal";
    "After the last, the chips left on all pay cards together are divided equally among
    all players"; winners = the highest net). Deal 1 (dealer c): a plays all spades (JS
    +3, kitty +4). Deal 2 (dealer a): b plays all hearts (AH: 3 + 3 = 6, kitty +4). Left:
    JS 3, QD 6, KC 6 = 15, 5 each. a: -5 +3 +4 -6 +5 = 1; b: -5 -5 +6 +4 +5 = 5;
    c: -6 -5 +5 = -6."""
    log = Log("mi")
    log.created("michigan", ["a", "b", "c"], dealer=2, rules={"deals": 2})
    log.round(michigan_deck([suit("S"), suit("H"), suit("D"), suit("C")]), dealer=2)
    plays(log, "a", suit("S"))
    log.sys("RoundEnded", {"round": 1, "winners": ["a"], "scores": {}})
    # deal 2, dealer a (seat 0): hands b, c, a, widow
    log.round(michigan_deck([suit("H"), suit("D"), suit("S"), suit("C")]), round_no=2, dealer=0)
    plays(log, "b", suit("H"))
    log.sys("RoundEnded", {"round": 2, "winners": ["b"], "scores": {}})
    log.sys("GameEnded", {"winners": ["b"], "net": {"a": 1, "b": 5, "c": -6}})
    rec = replay(log.events, verify_hashes=False)
    assert findings(rec) == []
    assert rec.results.net == {"a": 1, "b": 5, "c": -6} and rec.results.winners == ["b"]


@pytest.mark.parametrize(("dt", "drew", "discarded", "want"), [
    (120, "AH", "AH", []),  # on the deadline: both clocks have run out
    (119.999, "AH", "AH", ["CL-AUTOPLAY"]),  # earlier than the clocks allow
    (120, None, "AS", ["CL-AUTOPLAY"]),  # the no-draw rule is the first player's only
])
def test_CL_AUTOPLAY_after_the_first_player_left_in_his_first_turn(dt: float, drew: str | None,
                                                                   discarded: str,
                                                                   want: list[str]) -> None:
    """CL-LEAVE: "if it was his turn, the next turn starts then"; CL-TIMER: the base is
    60 s on "the player's first turn of the round", then 60 s extra; CL-AUTOPLAY: "draw
    from stock and discard the drawn card"; "On the first player's first turn there is no
    draw" — p2 is not the first player (he holds 14 cards), so his auto-play draws. p1
    leaves in his first turn before discarding; p2 times out 120 s after the leave."""
    log = classic3(stock=["AH", "2H", "JK", "QH"])
    log.add("PlayerLeft", "p1", {}, dt=30)
    seq = log.add("AutoPlayed", "system", {"player": "p2", "drew": drew, "discarded": discarded,
                                           "strike": 1}, dt=dt)
    got = [r for s, r, _ in findings(replay(log.events)) if s == seq]
    assert got == want
