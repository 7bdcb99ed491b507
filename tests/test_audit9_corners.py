"""Audit 9: the odd corners of the four variants, engine against the independent judges.

The corner generator (tests/corners_kit.py) drove thousands of games and one-fault logs
through ``replay`` and the judges (tests/referee_*.py, tests/oracle_*.py). Every
disagreement it found was decided from RULES.md / EVENTS.md; all of them were judge
errors, fixed in the judges and pinned here by hand-built logs (the engine was right):

- the classic/r500 results oracle took a pile draw's card by ``list.remove``, i.e. the
  DEEPEST copy of a duplicated code (two decks), so its pile kept the drawn card on top,
  it stopped at the next pile draw ("not the top discard") and lost every later claim;
- the classic referee timed an out-of-turn move with the clock of the turn it broke
  into (CL-TIMER times "a move of the player in turn"; the engine starts the seized
  turn's clock at the move);
- the classic referee did not check a redeal's number (EVENTS.md: ``redeal`` is "n for
  the n-th Fresh redeal"; it already reported a first deal numbered ≠ 0 as CL-FRESH);
- the classic referee let an auto-play follow a unanimous Fresh unflagged (CL-FRESH: the
  round is redealt; it flagged only a player's move played on instead);
- the classic/r500 results oracle did not check an auto-play's draw: one without the
  stock draw the rule gives ("draw from stock and discard the drawn card"; only the
  first player's first turn has none) and one that draws again after the player's own
  draw (the oracle's own reading: the system then only discards) passed unflagged;
- the classic/r500 results oracle gave the remainder of a tied round's R5-CHIPS payment
  to the tied winner first in deal order (from left of the dealer), not "in seat
  order" (GameCreated.seats) as R5-CHIPS says and the engine does;
- the Liverpool referee closed a buy window for good when the player after the discarder
  left after drawing from the stock; LV-BUY is worded by "the player after the
  discarder", who is then the new player in turn: the discard is his to take, or
  buyable once he draws from the stock (the engine's reading).

The other tests pin corner readings on which engine and judges agree, each stated from
the spec, so that a later change to either side that breaks one is caught here.
One engine bug was found and fixed: a halt dropped the ``ChipsTransferred`` comparison
of every transfer claimed before it (``GameEngine.record`` skipped ``_check_transfers``
when the game halted), so a wrong stake or payout claim was reported when the log simply
ended but vanished when a later event broke the log.
"""

from __future__ import annotations

import copy
from typing import Any

from logkit import Log, findings, stacked_deck
from oracle_classic_r500 import oracle
from r500kit import P1, RUN_D, RUN_H, SET_7, Script
from referee_classic_r500 import referee as referee_cr
from referee_liverpool_michigan import referee as referee_lm
from referee_liverpool_michigan import walk as walk_lm
from test_classic_rules import DECK
from test_michigan_kit import HAND_A, HAND_B, HAND_C, WIDOW, michigan_deck

from rummyguard.replay.engine import replay

Event = dict[str, Any]


def engine(events: list[Event]) -> tuple[list[tuple[int, str, str]], bool]:
    rec = replay(events, verify_hashes=False)
    return sorted(set(findings(rec))), rec.halted


def judge(events: list[Event]) -> tuple[list[tuple[int, str, str]], bool]:
    variant = events[0]["payload"]["variant"]
    verdict = referee_cr(events) if variant in ("classic", "r500") else referee_lm(events)
    return sorted(verdict.findings), verdict.halted


# == judge fixes ====================================================================================

# Three players, dealer p3: p1 (15 cards) starts. The face-up card is 7S and p2 holds the
# other 7S of the two decks.
CL_P1 = ["2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC", "JC", "QC", "KC", "AC", "KH", "2D"]
CL_P2 = ["3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD", "JD", "QD", "KD", "AD", "7S", "2H"]
CL_P3 = ["3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "AH", "2S", "3S", "4S"]
CL_DECK = stacked_deck([CL_P1, CL_P2, CL_P3], "7S", ["5S"])


def duplicate_pile_draw(net: dict[str, int]) -> list[Event]:
    """p1 discards KH over the face-up 7S; p2 discards the other 7S; p3 takes that 7S from
    the pile and leaves; p1 (in turn: CL-LEAVE) takes KH, now the top, and discards 2D;
    p2 leaves and p1 is the last player standing. ``net`` is the platform's claim."""
    log = Log("dup")
    log.created("classic", ["p1", "p2", "p3"], dealer=2, stake=10)
    log.round(CL_DECK, dealer=2)
    log.discard("p1", "KH")
    log.draw("p2", "stock", "5S")
    log.discard("p2", "7S")
    log.draw("p3", "discard", "7S")
    log.add("PlayerLeft", "p3")
    log.sys("PlayerRemoved", {"player": "p3", "reason": "left"})
    log.draw("p1", "discard", "KH")
    log.discard("p1", "2D")
    log.add("PlayerLeft", "p2")
    log.sys("PlayerRemoved", {"player": "p2", "reason": "left"})
    log.sys("GameEnded", {"winners": ["p1"], "net": net})
    return log.events


def test_oracle_takes_a_pile_draw_off_the_top_when_the_code_is_also_deeper() -> None:
    """§0 C-HOLD / CL-DRAW: the pile is [7S, KH, 7S]; p3 draws the top 7S, so KH is the
    top when p1 draws it. The oracle used to remove the deepest 7S, stop at p1's draw and
    drop every later claim."""
    good = duplicate_pile_draw({"p1": 20, "p2": -10, "p3": -10})
    out = oracle(good)
    assert not out.halted and out.claims == []
    assert out.winners == ["p1"] and out.net == {"p1": 20, "p2": -10, "p3": -10}
    assert engine(good) == judge(good) == ([], False)
    bad = duplicate_pile_draw({"p1": 30, "p2": -10, "p3": -20})
    last = len(bad) - 1
    assert engine(bad) == judge(bad) == ([(last, "C-CLAIM", "discrepancy")], False)


def test_referee_starts_a_seized_turns_clock_at_the_out_of_turn_move() -> None:
    """CL-TIMER times "a move of the player in turn"; p2's move 200 s into p1's first turn
    is C-TURN only (it used to be CL-TIMER too: p1's clock ran out at 120 s)."""
    log = Log("seize")
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(DECK, dealer=1)
    seized = log.draw("p2", "stock", "AH", dt=200)
    log.discard("p2", "AH", dt=10)
    assert engine(log.events) == judge(log.events) == ([(seized, "C-TURN", "violation")], False)


def test_an_auto_play_instead_of_the_redeal_breaks_cl_fresh() -> None:
    """CL-FRESH: every active player pressed, so the round is redealt; the platform ran
    p1's clocks out and auto-played him instead: CL-FRESH at the auto-play (once)."""
    log = Log("fresh-auto")
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(DECK, dealer=1)
    log.add("FreshPressed", "p2")
    log.add("FreshPressed", "p1")
    seq = log.sys("AutoPlayed", {"player": "p1", "drew": None, "discarded": "KH", "strike": 1},
                  dt=125)
    assert engine(log.events) == judge(log.events) == ([(seq, "CL-FRESH", "violation")], False)


def test_auto_play_draws_exactly_the_draw_the_turn_owes() -> None:
    """CL-AUTOPLAY: p2's turn owes a draw, so an auto-play that draws nothing is a
    violation; after p2's own stock draw, an auto-play that draws again is one too; the
    right plays are clean."""
    log = two_player_fresh_log()
    log.discard("p1", "2C")
    start = copy.deepcopy(log)
    seq = log.sys("AutoPlayed", {"player": "p2", "drew": None, "discarded": "AS", "strike": 1},
                  dt=121)
    assert engine(log.events) == judge(log.events) == ([(seq, "CL-AUTOPLAY", "violation")], False)
    log = copy.deepcopy(start)
    log.sys("AutoPlayed", {"player": "p2", "drew": "AH", "discarded": "AH", "strike": 1}, dt=121)
    assert engine(log.events) == judge(log.events) == ([], False)
    log = copy.deepcopy(start)
    log.draw("p2", "stock", "AH")
    seq = log.sys("AutoPlayed", {"player": "p2", "drew": "2D", "discarded": "2D", "strike": 1},
                  dt=121)
    assert engine(log.events) == judge(log.events) == ([(seq, "CL-AUTOPLAY", "violation")], False)
    log = copy.deepcopy(start)
    log.draw("p2", "stock", "AH")
    log.sys("AutoPlayed", {"player": "p2", "drew": None, "discarded": "AH", "strike": 1}, dt=121)
    assert engine(log.events) == judge(log.events) == ([], False)


def test_redeal_number_is_the_count_of_unanimous_fresh() -> None:
    """EVENTS.md ``redeal``: "n for the n-th Fresh redeal"; a first redeal numbered 2 is
    CL-FRESH (as a first deal numbered 1 is); numbered 1 it is clean."""
    for number, want in ((1, []), (2, ["CL-FRESH"])):
        log = Log("redeal")
        log.created("classic", ["p1", "p2"], dealer=1)
        log.round(DECK, dealer=1)
        log.add("FreshPressed", "p2")
        log.add("FreshPressed", "p1")
        seq = log.round(DECK, dealer=1, redeal=number)
        expected = [(seq, rule, "violation") for rule in want]
        assert engine(log.events) == judge(log.events) == (expected, False)


# == classic corners both sides read alike =========================================================


def two_player_fresh_log() -> Log:
    log = Log("fresh")
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(DECK, dealer=1)
    return log


def test_a_fresh_press_after_the_deadline_is_not_a_late_move() -> None:
    """EVENTS.md: FreshPressed "may come at any moment" and is not a move; CL-TIMER
    times moves. p1 (in turn) presses 125 s into his 120 s, then is auto-played."""
    log = two_player_fresh_log()
    log.add("FreshPressed", "p1", dt=125)
    log.sys("AutoPlayed", {"player": "p1", "drew": None, "discarded": "KH", "strike": 1}, dt=1)
    assert engine(log.events) == judge(log.events) == ([], False)


def test_a_move_on_the_deadline_is_on_time_and_one_ms_later_is_late() -> None:
    """CL-TIMER: late is "later than turn start + base + extra" (60 + 60 s here); an
    out-of-turn vote in between does not move the clock."""
    for dt, want in ((20.0, []), (20.001, ["CL-TIMER"])):
        log = two_player_fresh_log()
        log.add("FreshPressed", "p2", dt=100)
        seq = log.discard("p1", "2C", dt=dt)
        assert engine(log.events) == judge(log.events) == ([(seq, r, "violation") for r in want], False)


def test_vote_then_the_last_non_voter_leaves_makes_the_fresh_unanimous() -> None:
    """CL-FRESH: "every active player has pressed": p1 and p2 press, p3 leaves, so the
    round must be redealt (and the stake charged again, the first unanimous Fresh); a
    move instead of the redeal is CL-FRESH, the redeal is clean."""
    log = Log("vote-leave")
    log.created("classic", ["p1", "p2", "p3"], dealer=2, stake=10)
    log.round(CL_DECK, dealer=2)
    log.add("FreshPressed", "p1")
    log.add("FreshPressed", "p2")
    log.add("PlayerLeft", "p3")
    log.sys("PlayerRemoved", {"player": "p3", "reason": "left"})
    played_on = copy.deepcopy(log.events)
    seq = len(played_on)
    played_on.append({**played_on[-1], "seq": seq, "event_id": "vote-leave-x", "type": "Discarded",
                      "v": 2, "actor": "p1", "payload": {"card": "KH"}})
    assert engine(played_on) == judge(played_on) == ([(seq, "CL-FRESH", "violation")], False)
    log.round(stacked_deck([CL_P1, CL_P2], "7S"), dealer=2, redeal=1)
    log.add("PlayerLeft", "p2")
    log.sys("PlayerRemoved", {"player": "p2", "reason": "left"})
    # p1 wins the pot: 3 stakes + the doubled 2 of the two then active = 50
    log.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 30, "p2": -20, "p3": -10}})
    assert engine(log.events) == judge(log.events) == ([], False)


def test_auto_play_after_a_pile_draw_keeps_the_taken_card() -> None:
    """CL-AUTOPLAY names no card for a player who drew from the pile before his clocks
    ran out; the engine reads the turn's own rule CL-NODISCARD-TAKEN into it (the system
    plays the player's turn, so it may not discard the card taken): the highest other
    non-joker. (The results oracle abstains there; see the audit-9 report.)"""
    log = two_player_fresh_log()
    log.discard("p1", "2C")
    log.draw("p2", "discard", "2C")
    late = log.sys("AutoPlayed", {"player": "p2", "drew": None, "discarded": "2C", "strike": 1},
                   dt=121)
    assert engine(log.events) == ([(late, "CL-AUTOPLAY", "violation")], False)
    fixed = {"player": "p2", "drew": None, "discarded": "AS", "strike": 1}
    ok = [*log.events[:-1], {**log.events[-1], "payload": fixed}]
    assert engine(ok) == judge(ok) == ([], False)


# == Rummy 500 deep draws ===========================================================================


def r500_deep(hands: list[list[str]], up: str, stock: list[str]) -> Script:
    s = Script(hands=hands, up=up, stock=stock)
    s.log.draw("p1", "stock", stock[0])
    s.meld("p1", RUN_H)
    s.meld("p1", SET_7)
    s.meld("p1", RUN_D)
    s.log.discard("p1", "2C")
    return s


P2_JOKER = ["AS", "2S", "5C", "6D", "9S", "8C", "JC", "QS", "4D", "9C", "TC", "3S", "JK"]
STOCK_J = ["2H", "KS", "AH", "5D", "QH"]


def test_deep_draw_with_a_joker_deepest_and_another_held() -> None:
    """R5-USE-BOTTOM / R5-NODISCARD-TOP with the only duplicate card: p2 holds a joker and
    takes [JK, 2C]. Melding a joker uses the deepest (hands are multisets), and the joker
    he held before may then be discarded; not using one is R5-USE-BOTTOM only (the joker
    discarded can be the one he held)."""
    s = r500_deep([P1, P2_JOKER], "JK", STOCK_J)
    s.log.draw("p2", "discard", "JK", "2C")
    s.meld("p2", {"kind": "set", "cards": ["2C", "2S", "JK"]})
    s.log.discard("p2", "JK")
    assert engine(s.log.events) == judge(s.log.events) == ([], False)
    s = r500_deep([P1, P2_JOKER], "JK", STOCK_J)
    s.log.draw("p2", "discard", "JK", "2C")
    seq = s.log.discard("p2", "JK")
    assert engine(s.log.events) == judge(s.log.events) == ([(seq, "R5-USE-BOTTOM", "violation")], False)


def test_deepest_card_laid_off_where_it_does_not_fit_is_used() -> None:
    """R5-USE-BOTTOM asks that the deepest card be "laid off"; a lay-off that breaks
    R5-LAYOFF still put it on the table: one finding, the lay-off's."""
    s = r500_deep([P1, ["AS", "2S", "5C", "6D", "9S", "8C", "JC", "QS", "4D", "9C", "TC", "3S", "5D"]],
                  "9D", ["2H", "KS", "AH", "JK", "QH"])
    s.log.draw("p2", "discard", "9D", "2C")
    seq = s.layoff("p2", "9D", 0, "high")
    s.log.discard("p2", "2C")
    assert engine(s.log.events) == judge(s.log.events) == ([(seq, "R5-LAYOFF", "violation")], False)


def test_tied_round_winners_split_a_payment_with_the_remainder_in_seat_order() -> None:
    """R5-CHIPS (tournament, ratio 1): p1 and p2 tie at -38, p3 has -75 and pays 37,
    split 19 + 18, the odd chip "in seat order": p1 (seat 0), although the deal (dealer
    p1) started at p2. The claim that gives it to p2 is C-CLAIM."""
    def game(first: str) -> list[Event]:
        s = Script(hands=[["2D", "3H", "4S", "5C", "7D", "8H", "9S"],
                          ["KC", "KD", "QH", "QS", "JC", "JD", "AS"],
                          ["2C", "3D", "4H", "5S", "7C", "8D", "9H"]], up="6C", stock=[],
                   seats=["p1", "p2", "p3"], dealer=0, rules={"mode": "tournament"})
        s.exhaust(["p2", "p3", "p1"])
        second = "p2" if first == "p1" else "p1"
        s.sys("ChipsTransferred", {"transfers": [
            {"from": "p3", "to": first, "amount": 19, "reason": "round 1"},
            {"from": "p3", "to": second, "amount": 18, "reason": "round 1"}]})
        return s.log.events

    assert engine(game("p1")) == judge(game("p1")) == ([], False)
    wrong = game("p2")
    assert engine(wrong) == judge(wrong) == ([(len(wrong) - 1, "C-CLAIM", "discrepancy")], False)


# == Michigan widow ================================================================================


def michigan_log(price: int, *, buyer: str = "b") -> list[Event]:
    """Three players a, b, c (dealer c): ``buyer`` buys the widow after nobody else took it,
    before the first card; a starts with 2H, follows with 3H; 4H sat in b's hand, now dead
    (MI-STOP), so a starts again."""
    log = Log("mi")
    log.created("michigan", ["a", "b", "c"], dealer=2, stake=0)
    log.round(michigan_deck([HAND_A, HAND_B, HAND_C, WIDOW]), dealer=2)
    log.add("WidowBought", buyer, {"price": price})
    log.add("CardPlayed", "a", {"card": "2H"})
    log.add("CardPlayed", "a", {"card": "3H"})
    log.add("CardPlayed", "a", {"card": "4C"})
    return log.events


def test_widow_bought_by_anyone_before_the_first_card_and_its_dead_hand_stops() -> None:
    """MI-WIDOW "before the first card is played, any one player may buy": clean; the
    dead hand's 4H stops the hearts (MI-STOP) and a, who played last, starts clubs."""
    events = michigan_log(1)
    assert engine(events) == judge(events) == ([], False)


def test_widow_price_other_than_the_config_is_a_claim_discrepancy() -> None:
    """The price is the platform's claim of what the rules charge (``widow_price``): a
    C-CLAIM discrepancy at the purchase, both sides."""
    events = michigan_log(2)
    assert engine(events) == judge(events) == ([(2, "C-CLAIM", "discrepancy")], False)


# == Liverpool buy windows ==========================================================================


def test_liverpool_buy_limit_is_per_round() -> None:
    """LV-BUY: ``max_buys`` counts "buys per player per round": in a game with
    max_buys 1, a player who bought in an earlier round may buy again (clean), but not
    twice in one round (LV-BUY)."""
    from corners_kit import corner_game, ev, renumber

    events = corner_game("liverpool", 6)[0]
    assert events[0]["payload"]["rules"]["max_buys"] == 1
    bought_before: set[str] = set()
    checked = 0
    for i, st in walk_lm(events):
        e = events[i]
        if e["type"] == "Bought":
            bought_before.add(e["actor"])
        if e["type"] != "Discarded" or st.live is None or st.live.state != "buy" \
                or e["actor"] != st.turn or len(st.stock) < 2:
            continue
        for q in st.active:
            if q in (st.turn, st.live.discarder) or q in st.laid or q not in st.hands:
                continue
            buy = ev(events[i - 1], "Bought", q, {"card": st.live.card, "penalty": st.stock[0]})
            log = renumber([*events[:i], buy])
            if st.buys[q] == 0 and q in bought_before:  # bought in an earlier round only
                assert engine(log) == judge(log) == ([], False)
                checked += 1
            elif st.buys[q] >= 1:
                want = ([(i, "LV-BUY", "violation")], False)
                assert engine(log) == judge(log) == want
                checked += 1
    assert checked >= 5


def test_liverpool_buy_window_passes_to_the_new_next_player_after_a_leave() -> None:
    """LV-BUY after the player in turn (he drew from the stock) leaves: the player now
    after the discarder has not drawn, so a buy before his draw is LV-BUY, and after his
    stock draw it is clean (the referee used to call both LV-BUY)."""
    from corners_kit import liverpool_faults

    seen = set()
    for seed in (6, 9, 10, 15):
        for kind, rule, log in liverpool_faults(corner_game_events("liverpool", seed)):
            if not kind.startswith("next_leaves_"):
                continue
            seen.add(kind)
            buy = len(log) - 1
            want = ([], False) if rule is None else ([(buy, rule, "violation")], False)
            assert engine(log) == judge(log) == want, (seed, kind)
    assert seen == {"next_leaves_buy_before_draw", "next_leaves_buy_after_draw"}


def corner_game_events(variant: str, seed: int) -> list[Event]:
    from corners_kit import corner_game

    return corner_game(variant, seed)[0]


# == engine bug =====================================================================================


def stake_claim_then_halt(*, halt: bool) -> list[Event]:
    """Classic, two players: the stakes are claimed wrong (p1 90, not 100) at seq 2; p1
    discards; then, if ``halt``, p2 draws QH, which is not the stock top (AH): C-HOLD."""
    log = Log("halt-claim")
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(DECK, dealer=1)
    log.sys("ChipsTransferred", {"transfers": [
        {"from": "p1", "to": "pot", "amount": 90, "reason": "stake"},
        {"from": "p2", "to": "pot", "amount": 100, "reason": "stake"}]})
    log.discard("p1", "2C")
    if halt:
        log.draw("p2", "stock", "QH")
    return log.events


def test_a_wrong_chip_claim_is_a_finding_in_a_log_that_ends_and_for_the_judges() -> None:
    """Guard for the test below: the claim at seq 2 is C-CLAIM when the log ends at seq
    3, for both; the judges keep it when seq 4 then halts."""
    ended = stake_claim_then_halt(halt=False)
    assert engine(ended) == judge(ended) == ([(2, "C-CLAIM", "discrepancy")], False)
    halted = stake_claim_then_halt(halt=True)
    assert judge(halted) == ([(2, "C-CLAIM", "discrepancy"), (4, "C-HOLD", "integrity")], True)


def test_a_halt_keeps_the_chip_claim_findings_before_it() -> None:
    """RULES.md C-CLAIM: the transfers a game logs must equal those the replay computes;
    the first differing event carries the finding. §5 / ARCHITECTURE: a break the state
    cannot follow halts the game with an integrity finding. The halt ends the fold at
    seq 4; the stake claimed at seq 2 was already wrong, as the engine itself says when
    the log ends at seq 3 (test above)."""
    halted = stake_claim_then_halt(halt=True)
    assert engine(halted) == ([(2, "C-CLAIM", "discrepancy"), (4, "C-HOLD", "integrity")], True)
