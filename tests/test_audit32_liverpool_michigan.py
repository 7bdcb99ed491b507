"""Audit 32: odd corners of Liverpool (RULES.md §3) and Michigan (§4), with the shared
rules of §0 and §5 as they apply to them, each on a small hand-built log whose expected
findings were worked out from the spec text before the log was replayed.

No engine defect was found in this audit; every test pins behaviour the spec states.
Where the spec leaves a choice open the test says so in its docstring and pins the
engine's documented reading (replay/rules/liverpool.py and michigan.py docstrings).
"""

from __future__ import annotations

from typing import Any

import pytest
from logkit import Log as MiLog
from test_liverpool import H0, H1, H2, STOCK, UP, deal_first, three
from test_liverpool import Log as LvLog
from test_michigan_kit import michigan_deck, triples

from rummyguard.events.cards import format_cards
from rummyguard.replay.engine import GameRecord, replay
from rummyguard.replay.rules.liverpool import Liverpool
from rummyguard.replay.rules.michigan import START, Michigan


def found(rec: GameRecord) -> list[tuple[int, str, str]]:
    return [(f.seq, f.rule, f.kind) for f in rec.findings]


# == Liverpool =====================================================================================


def test_lv_round_5_lay_down_of_every_card_breaks_allout_and_discard() -> None:
    """LV-ALLOUT: "in round 5 all cards but the one discarded"; LV-DISCARD: "a turn ends
    with one discard, except a going-out in round 6". Laying down all 13 cards in round 5
    breaks both at the lay-down (the player has no cards: LV-OUT ends the round)."""
    log, who = deal_first(5, "5C 5D 5H 9C 9D 9H 3S 4S 5S 6S 7S 8S", "9S 4D 3H")
    log.drew(who)
    seq = log.laid(who, ("set", "5C 5D 5H"), ("set", "9C 9D 9H"), ("run", "3S 4S 5S 6S 7S 8S 9S"))
    rec = log.replay()
    assert found(rec) == [(seq, "LV-ALLOUT", "violation"), (seq, "LV-DISCARD", "violation")]
    assert rec.state is not None and rec.state.round_result(5) is not None
    assert rec.state.round_result(5)[0] == [who]  # type: ignore[index]


def test_lv_round_6_lay_down_leaving_a_card_then_discarding_it_is_one_allout() -> None:
    """LV-ALLOUT: in round 6 laying down must use every card. A lay-down that leaves one
    card is the breach; the discard that then empties the hand is an ordinary going-out
    with a discard (LV-OUT), not a second finding."""
    log, who = deal_first(6, "5C 5D 5H 3S 4S 5S 6S 9H TH JH QH KH", "7S 4D")
    log.drew(who)
    seq = log.laid(who, ("set", "5C 5D 5H"), ("run", "3S 4S 5S 6S"), ("run", "9H TH JH QH KH"))
    log.disc(who, "7S")
    rec = log.replay()
    assert found(rec) == [(seq, "LV-ALLOUT", "violation")]
    assert rec.state is not None and rec.state.is_over()


def _set_layoff_log(hand: str, meld: str, card: str, rules: dict[str, Any] | None = None) -> tuple[LvLog, int]:
    """p0 lays down ``meld`` + 9C 9D 9H, the others pass a turn each, p0 draws ``card``
    and lays it off on meld 0 (his later turn, LV-LAYOFF)."""
    log = LvLog(["p0", "p1", "p2"], dealer=2, rules=rules)
    log.deal(1, 2, {0: hand, 1: H1, 2: H2}, UP, "4H 6H TH " + card)
    log.drew("p0")
    log.laid("p0", ("set", meld), ("set", "9C 9D 9H"))
    log.disc("p0", "4C")
    log.drew("p1")
    log.disc("p1", "TS")
    log.drew("p2")
    log.disc("p2", "3C")
    log.drew("p0")
    return log, log.off("p0", card, 0)


@pytest.mark.parametrize(("rules", "expect_breach"), [({}, True), ({"set_distinct_suits": False}, False)])
def test_lv_laying_off_a_second_natural_of_a_suit_on_a_set(rules: dict[str, Any], expect_breach: bool) -> None:
    """LV-CONTRACT: set naturals of different suits (config ``set_distinct_suits``, default
    true); LV-LAYOFF: cards added to a meld must fit it. With two decks p0 can hold a
    second 5C: laying it off on 5C 5D 5H breaks LV-LAYOFF only while suits must differ."""
    log, seq = _set_layoff_log("5C 5D 5H 9C 9D 9H 9S QS JS 4C", "5C 5D 5H", "5C", rules)
    assert found(log.replay()) == ([(seq, "LV-LAYOFF", "violation")] if expect_breach else [])


@pytest.mark.parametrize(("card", "clean"), [("5H", True), ("2S", True), ("5C", False)])
def test_lv_set_with_a_wild_judges_suits_of_naturals_only(card: str, clean: bool) -> None:
    """LV-CONTRACT: "naturals of different suits"; LV-WILD: "a 2 stands for any card". On
    the set 5C 5D 2H the wild's own suit does not count: 5H and another wild fit, a second
    5C does not."""
    log, seq = _set_layoff_log("5C 5D 2H 9C 9D 9H 9S QS JS 4C", "5C 5D 2H", card)
    assert found(log.replay()) == ([] if clean else [(seq, "LV-LAYOFF", "violation")])


@pytest.mark.parametrize(("card", "end", "clean"), [
    ("9H", None, True), ("9H", "high", True), ("4H", None, True), ("4H", "low", True),
    ("8H", "high", False),
])
def test_lv_unnamed_low_end_wild_extends_the_run_upward(card: str, end: str | None, clean: bool) -> None:
    """C-WILD: "without [as], a wild at the low end stands for the card below only when
    the high end is A". The run 2C 5H 6H 7H (no ``as``) is therefore 5H-8H, the 2C standing
    for 8H: 9H fits high and 4H low, but a natural 8H at the high end does not (its place is
    the wild's), LV-LAYOFF."""
    log, who = deal_first(3, "5H 6H 7H 2C 9S TS JS QS KD KC", "KS 3D " + card)
    other = next(s for s in log.seats if s != who)
    log.drew(who)
    log.laid(who, ("run", "2C 5H 6H 7H"), ("run", "9S TS JS QS KS"))
    log.disc(who, "KD")
    log.drew(other)
    log.disc(other, "3D")
    log.drew(who)
    seq = log.off(who, card, 0, end)
    rec = log.replay()
    assert found(rec) == ([] if clean else [(seq, "LV-LAYOFF", "violation")])
    if clean:
        assert isinstance(rec.state, Liverpool)
        stands = format_cards(rec.state.melds[0].stands)
        assert sorted(stands, key=lambda c: "23456789TJQKA".index(c[0])) == (
            ["5H", "6H", "7H", "8H", "9H"] if card == "9H" else ["4H", "5H", "6H", "7H", "8H"])


def test_lv_two_players_the_dealer_may_buy_the_up_card_but_nobody_may_buy_back() -> None:
    """LV-BUY: once the first player draws from the stock, the face-up card may be bought
    (the engine's reading: the up-card is live like a discard with no discarder); with two
    players the only other player is the discarder, who "may not buy back his own card"."""
    log = LvLog(["p0", "p1"], dealer=1)
    log.deal(1, 1, {0: H0, 1: H1}, UP, STOCK)
    log.drew("p0")
    rec = log.replay()
    assert isinstance(rec.state, Liverpool) and rec.state.to_act() == ["p0", "p1"]
    log.buy("p1", UP)  # penalty 6H
    log.disc("p0", "QS")
    log.drew("p1")
    assert log.replay().clean
    seq = log.buy("p0", "QS")
    assert found(log.replay()) == [(seq, "LV-BUY", "violation")]


def test_lv_second_buy_of_the_same_discard_is_LV_BUY() -> None:
    """LV-BUY: "the first other player to buy it takes it"; the window then closes. A
    second Bought of that card is LV-BUY, and the card is no longer on the pile (C-HOLD:
    the replay halts)."""
    log = three()
    log.drew("p0")
    log.buy("p1", UP)
    seq = log.buy("p2", UP)
    rec = log.replay()
    assert found(rec) == [(seq, "LV-BUY", "violation"), (seq, "C-HOLD", "integrity")]
    assert rec.halted


def test_lv_buy_after_the_next_player_took_the_discard_is_LV_BUY() -> None:
    """LV-BUY: the discard may be bought only if the next player "draws from the stock
    instead". Once he has taken it as his draw nothing is left to buy."""
    log = three()
    log.took("p0", UP)
    seq = log.buy("p1", UP)
    rec = log.replay()
    assert found(rec)[0] == (seq, "LV-BUY", "violation")
    assert found(rec)[-1] == (seq, "C-HOLD", "integrity")


def test_lv_buy_with_a_penalty_card_that_is_not_the_stock_top_halts() -> None:
    """LV-BUY: the buyer takes "the top stock card as a penalty"; C-HOLD: a card an event
    takes must be there. An entitled buy naming another card is no LV-BUY, it halts."""
    log = three()
    log.drew("p0")  # 4H; the stock top is now 6H
    seq = log.add("Bought", "p2", {"card": UP, "penalty": "TH"})
    rec = log.replay()
    assert found(rec) == [(seq, "C-HOLD", "integrity")] and rec.halted


def test_lv_laying_down_more_than_the_contract_is_LV_CONTRACT() -> None:
    """LV-CONTRACT: "a player shows exactly the round's contract at once": three sets in
    round 1 (two sets) is a breach, though every set is valid."""
    log = LvLog(["p0", "p1", "p2"], dealer=2)
    log.deal(1, 2, {0: "5C 5D 5H 9C 9D 9H QC QD QH 4C", 1: H1, 2: H2.replace("QD", "KS")}, UP, STOCK)
    log.drew("p0")
    seq = log.laid("p0", ("set", "5C 5D 5H"), ("set", "9C 9D 9H"), ("set", "QC QD QH"))
    assert found(log.replay()) == [(seq, "LV-CONTRACT", "violation")]


def test_lv_gapped_run_in_a_contract_is_C_RUN() -> None:
    """C-RUN (§0): runs are cards of one suit "in consecutive rank". LV-CONTRACT restates
    it for Liverpool ("Runs: >=4 cards, one suit, consecutive"); the spec gives both IDs for
    a gap. The engine (as r500 and classic) reports the shared shape rule C-RUN and keeps
    LV-CONTRACT for the contract's own terms (length, count, distinct suits) - an
    ambiguity of the spec, pinned here."""
    log, who = deal_first(3, "3H 4H 5H 7H 9S TS JS QS 2C 2D", "KS")
    log.drew(who)
    seq = log.laid(who, ("run", "3H 4H 5H 7H"), ("run", "9S TS JS QS"))
    assert found(log.replay()) == [(seq, "C-RUN", "violation")]


@pytest.mark.parametrize(("type_", "actor", "payload"), [
    ("AutoPlayed", "system", {"player": "p0", "drew": None, "discarded": "QS", "strike": 1}),
    ("FreshPressed", "p1", {}),
    ("WidowBought", "p1", {"price": 1}),
    ("Melded", "p0", {"kind": "set", "cards": ["5C", "5D", "5H"]}),
])
def test_lv_an_event_of_another_variant_is_LOG_EVENT_and_skipped(type_: str, actor: str, payload: dict[str, Any]) -> None:
    """§5: "integrity: ... an event the variant does not know". Liverpool has no timers,
    Fresh, widow or Melded (EVENTS.md catalog, variants column); the event is an integrity
    finding, skipped, and the game replays on."""
    log = three()
    log.drew("p0")
    seq = log.add(type_, actor, payload)
    log.disc("p0", "QS")
    rec = log.replay()
    assert found(rec) == [(seq, "LOG-EVENT", "integrity")] and not rec.halted
    assert isinstance(rec.state, Liverpool) and rec.state.to_act() == ["p1"]


def test_lv_round_ended_claim_before_anyone_went_out_is_C_CLAIM() -> None:
    """C-CLAIM: scores the platform logs are recomputed; LV-OUT: the round ends when a
    player has no cards. A RoundEnded while everybody holds cards is a discrepancy."""
    log = three()
    log.drew("p0")
    seq = log.add("RoundEnded", "system", {"round": 1, "winners": ["p0"], "scores": {}})
    assert found(log.replay()) == [(seq, "C-CLAIM", "discrepancy")]


# == Michigan =========================================================================================

# Eight players p1..p8, dealer p8: hands are dealt p1..p8 then the widow; 52 = 9 x 5 + 7, so
# p1..p7 get 6 cards, p8 and the widow 5. p1 and p2 hold only clubs; 7C is in the widow.
_R = "23456789TJQKA"
_REST = [r + s for s in "DHS" for r in _R]
EIGHT_HANDS = [
    ["2C", "3C", "4C", "5C", "6C", "8C"], ["9C", "TC", "JC", "QC", "KC", "AC"],
    _REST[0:6], _REST[6:12], _REST[12:18], _REST[18:24], _REST[24:30], _REST[30:35],
    ["7C", *_REST[35:39]],
]
EIGHT = michigan_deck(EIGHT_HANDS)
EIGHT_SEATS = [f"p{i}" for i in range(1, 9)]


def eight(**rules: Any) -> MiLog:
    log = MiLog("mi8")
    log.created("michigan", EIGHT_SEATS, dealer=7, rules=rules)
    log.round(EIGHT, dealer=7)
    return log


def play(log: MiLog, script: str) -> int:
    seq = -1
    for step in script.split():
        who, card = step.split(":")
        seq = log.add("CardPlayed", who, {"card": card})
    return seq


CLUB_STOP = "p1:2C p1:3C p1:4C p1:5C p1:6C"  # 7C is in the widow: a stop


def test_mi_right_passes_left_over_a_player_who_holds_only_the_stopped_suit() -> None:
    """MI-STOP: the last player restarts "with his lowest card of a suit different from the
    stopped one; if he has none, the right passes left". p1 (only clubs) stops at 7C; p2,
    on his left, also holds only clubs, so the right goes on to p3, who starts clean with
    his lowest diamond. (Reading: the passed right keeps the suit restriction.)"""
    log = eight()
    play(log, CLUB_STOP)
    rec = replay(log.events)
    assert isinstance(rec.state, Michigan)
    assert rec.state.to_act() == ["p3"] and rec.state.due() == (START, 2, 0)
    play(log, "p3:2D")
    assert replay(log.events).clean


def test_mi_a_passed_over_player_starting_anyway_is_MI_STOP() -> None:
    """MI-STOP: after the stop the start belongs to p3 (above); p2 starting with a club is
    a restart by the wrong player, MI-STOP at his play, and pays no MI-PENALTY."""
    log = eight()
    play(log, CLUB_STOP)
    seq = play(log, "p2:9C")
    rec = replay(log.events)
    assert found(rec) == [(seq, "MI-STOP", "violation")]
    assert rec.findings[0].message.startswith("p3 should start")
    assert [t for t in rec.transfers if t.reason == "penalty"] == []


def test_mi_passed_right_started_dear_pays_every_other_player() -> None:
    """MI-PENALTY: "a player who starts a sequence with a card other than his lowest of that
    suit pays 1 chip to every other player. The play stands; it is not a finding." It
    prices the start after a passed right too: p3 starts 3D holding 2D and pays 1 to each
    of the seven others."""
    log = eight()
    play(log, CLUB_STOP)
    play(log, "p3:3D")
    rec = replay(log.events)
    assert rec.clean
    assert sorted(t.key() for t in rec.transfers if t.reason == "penalty") == [
        ("p3", p, 1) for p in EIGHT_SEATS if p != "p3"]


def test_mi_first_starter_leaving_before_the_first_card_passes_the_start_left() -> None:
    """MI-START: the player left of the dealer starts; a player who left is out at once
    (his cards dead). p1 leaves before any card: p2, now left of the dealer among those
    still in, starts with his lowest club, clean; a later move by p1 is C-TURN."""
    log = eight()
    log.add("PlayerLeft", "p1", {})
    rec = replay(log.events)
    assert isinstance(rec.state, Michigan) and rec.state.due() == (START, 1, -1)
    play(log, "p2:9C")
    assert replay(log.events).clean
    seq = play(log, "p1:2C")
    assert found(replay(log.events)) == [(seq, "C-TURN", "violation")]


@pytest.mark.parametrize("cards", [["2C", "3C", "4C", "5C"], ["2C", "3C", "4C", "5C", "6C", "8C"]])
def test_mi_a_declaration_of_other_than_five_cards_is_MI_POKER(cards: list[str]) -> None:
    """MI-POKER: each player "declares five cards of his hand". Four or six is MI-POKER
    (a rules breach, not a broken log): the replay goes on."""
    log = eight(three_in_one=True)
    seq = log.add("PokerHandDeclared", "p1", {"cards": cards})
    rec = replay(log.events)
    assert found(rec) == [(seq, "MI-POKER", "violation")] and not rec.halted


@pytest.mark.parametrize(("type_", "actor", "payload"), [
    ("AutoPlayed", "system", {"player": "p1", "drew": None, "discarded": "2C", "strike": 1}),
    ("Drew", "p1", {"source": "stock", "cards": ["2C"]}),
    ("Bought", "p2", {"card": "2C", "penalty": "3C"}),
])
def test_mi_an_event_of_another_variant_is_LOG_EVENT_and_skipped(type_: str, actor: str, payload: dict[str, Any]) -> None:
    """§5 integrity: "an event the variant does not know" (EVENTS.md: Drew and Bought are
    not Michigan's; Michigan has no clocks, so no AutoPlayed). Skipped; play goes on."""
    log = eight()
    seq = log.add(type_, actor, payload)
    play(log, "p1:2C")
    rec = replay(log.events)
    assert found(rec) == [(seq, "LOG-EVENT", "integrity")] and not rec.halted


def test_mi_round_ended_claims_count_chips_only() -> None:
    """§5: Michigan's ``scores`` are ``{}`` (it counts chips only); MI-END: "A deal's
    winners is the player who went out". The suited deal below is won by p1 (he holds all
    the spades); a RoundEnded naming him with ``{}`` is clean, one claiming a score for
    anybody, or naming another winner, is C-CLAIM."""
    spades = [r + "S" for r in _R]
    suited = michigan_deck([spades, [r + "H" for r in _R], [r + "D" for r in _R], [r + "C" for r in _R]])
    log = MiLog("mi3")
    log.created("michigan", ["p1", "p2", "p3"], dealer=2)
    log.round(suited, dealer=2)
    play(log, " ".join("p1:" + c for c in spades))
    clean = log.add("RoundEnded", "system", {"round": 1, "winners": ["p1"], "scores": {}})
    assert replay(log.events).clean, replay(log.events).findings
    bad_score = log.add("RoundEnded", "system", {"round": 1, "winners": ["p1"], "scores": {"p2": 13}})
    bad_winner = log.add("RoundEnded", "system", {"round": 1, "winners": ["p2"], "scores": {}})
    assert clean < bad_score < bad_winner
    assert triples(replay(log.events)) == [(bad_score, "C-CLAIM", "discrepancy"),
                                           (bad_winner, "C-CLAIM", "discrepancy")]


@pytest.mark.parametrize(("as_map", "card", "end", "clean"), [
    ({"0": "2H"}, "AH", "low", True),
    ({"0": "2H"}, "6H", "high", True),
    (None, "AH", "low", False),
    (None, "6H", "high", False),
    (None, "7H", "high", True),
])
def test_lv_as_decides_what_a_low_end_wild_stands_for(as_map: dict[str, str] | None, card: str, end: str,
                                                      clean: bool) -> None:
    """C-WILD: "A run whose wild is at an end may name it with "as"; without it, a wild at
    the low end stands for the card below only when the high end is A". 2C 3H 4H 5H with
    ``as`` {0: 2H} is 2H-5H (AH fits low, 6H high); without ``as`` it is 3H-6H (the 2C is
    6H), so AH low and 6H high do not fit (LV-LAYOFF) and 7H high does."""
    log, who = deal_first(3, "3H 4H 5H 9S TS JS QS 2C KD KC", "KS 3D " + card)
    other = next(s for s in log.seats if s != who)
    log.drew(who)
    run: tuple[str, str] | tuple[str, str, dict[str, str]] = (
        ("run", "2C 3H 4H 5H", as_map) if as_map else ("run", "2C 3H 4H 5H"))
    log.laid(who, run, ("run", "9S TS JS QS KS"))
    log.disc(who, "KD")
    log.drew(other)
    log.disc(other, "3D")
    log.drew(who)
    seq = log.off(who, card, 0, end)
    assert found(log.replay()) == ([] if clean else [(seq, "LV-LAYOFF", "violation")])
