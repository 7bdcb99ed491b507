"""Audit 17: three corners of RULES.md that earlier audits left open, judged from the spec.

1. Classic CL-AUTOPLAY when the stock is empty and C-RESTOCK cannot refill it (the pile
   is its top card at most): what the system draws and discards.
2. Rummy 500: what the cards of a broken meld (and of a lay-off that does not fit)
   score, in the round and in the game's claims.
3. Liverpool: players who leave holding the last stock and pile cards, so the ones left
   cannot draw at all.

Each test states the spec sentences it stands on; where the spec is silent, the docstring
says what was decided and why. The engine and simulator defects found here are fixed;
their tests failed before the fix.
"""

from __future__ import annotations

import copy
import io
import json
import random
from typing import Any

import pytest
from logkit import Log, findings
from oracle_classic_r500 import oracle as oracle_cr
from oracle_liverpool_michigan import oracle as oracle_lm
from r500kit import P1, P2, Script, pot_claims
from referee_classic_r500 import mutants
from referee_classic_r500 import referee as referee_cr
from referee_liverpool_michigan import referee as referee_lm

from rummyguard.events.cards import format_cards, standard_deck
from rummyguard.replay.engine import GameEngine, replay
from rummyguard.sim.driver import Choice, Platform, Turn
from rummyguard.sim.world import WorldConfig, build_world, run_world

Events = list[dict[str, Any]]
SEATS4 = ["p1", "p2", "p3", "p4"]


# == 1. classic: auto-play with nothing to draw =================================================

#: one deck and six jokers: 58 cards, exactly what four players' deal takes (15 + 3 x 14,
#: then one card up), so the stock is empty from the deal (RULES.md §1: config decks, jokers)
STOCKLESS = {"decks": 1, "jokers": 6}
#: the deck in the library's fixed order (2C 2D 2H 2S 3C ... AS, then the jokers): dealt
#: one card a circuit from p1 (dealer p4), p1 holds the clubs, p2 the diamonds, p3 the
#: hearts, p4 the spades, each with one joker; p1's 15th card is a joker, one joker is up
STOCKLESS_DECK = format_cards(standard_deck(1, 6))


def _stockless_opening() -> Log:
    """p1 discards 2C (CL-FIRST: no draw); the pile is then JK 2C and the stock empty."""
    log = Log("cl-stockless")
    log.created("classic", SEATS4, dealer=3, rules=dict(STOCKLESS))
    log.round(STOCKLESS_DECK, dealer=3)
    log.discard("p1", "2C")
    return log


def _dead_stock() -> Log:
    """p2 takes 2C from the pile and leaves with it: his cards leave play (CL-LEAVE,
    CL-STRIKES "his cards leave play"), so the stock is empty and the pile holds only its
    top card (the joker turned up): C-RESTOCK has nothing to make a stock of."""
    log = _stockless_opening()
    log.draw("p2", "discard", "2C")
    log.add("PlayerLeft", "p2", {})
    log.sys("PlayerRemoved", {"player": "p2", "reason": "left"})
    return log


def _judges_cr(events: Events) -> list[tuple[int, str, str]]:
    return sorted(set(referee_cr(events).findings))


def test_autoplay_with_a_dead_stock_draws_nothing_and_discards_the_highest_natural() -> None:
    """RULES.md CL-AUTOPLAY: "draw from stock and discard the drawn card ... On the first
    player's first turn there is no draw: the highest non-joker card is discarded";
    EVENTS.md AutoPlayed: ``drew`` is "a card, or null on a turn with no draw".

    Decision (the spec is silent on an empty stock C-RESTOCK cannot refill): there is no
    stock card, so the system's turn has no draw and it discards the highest non-joker
    card, the rule's own no-draw branch. p3's first turn starts at p2's leave (CL-TIMER:
    "a removal"); 125 s later both clocks (60 s + 60 s) have run out. p3 holds the hearts
    and a joker: AH goes. The engine now expects no discard at all, so any auto-play there
    is CL-AUTOPLAY, and the simulator's driver crashes formatting that None."""
    log = _dead_stock()
    seq = log.add("AutoPlayed", "system", {"player": "p3", "drew": None, "discarded": "AH",
                                           "strike": 1}, dt=125)
    rec = replay(log.events)
    assert not rec.halted
    assert _judges_cr(log.events) == []
    assert findings(rec) == [], seq


def test_a_dead_stock_leaves_the_pile_top_to_draw_by_hand() -> None:
    """RULES.md CL-DRAW: "every later turn starts with one draw: the top of the stock or
    the face-up top discard". With no stock, the top discard is the draw; it may not be
    discarded in the same turn (CL-NODISCARD-TAKEN), another card is. Clean for the
    engine and the judges alike."""
    log = _dead_stock()
    log.draw("p3", "discard", "JK")
    log.discard("p3", "AH")
    rec = replay(log.events)
    assert (findings(rec), rec.halted) == ([], False)
    assert _judges_cr(log.events) == []
    assert oracle_cr(log.events).claims == []


def test_an_empty_stock_the_pile_can_refill_is_restocked_before_the_autoplay() -> None:
    """RULES.md §0 "Stock exhausted": "the discard pile except its top card becomes the
    new stock, in the order the platform records in a StockReplenished event". After the
    restock (here one card, the joker turned up at the deal), the auto-play draws that
    stock top; a joker drawn is kept and the highest non-joker card is discarded
    (CL-AUTOPLAY). p2's first turn: both clocks ran out 120 s after p1's discard."""
    log = _stockless_opening()
    log.sys("StockReplenished", {"stock": ["JK"]})
    log.add("AutoPlayed", "system", {"player": "p2", "drew": "JK", "discarded": "AD",
                                     "strike": 1}, dt=125)
    rec = replay(log.events)
    assert (findings(rec), rec.halted) == ([], False)
    assert _judges_cr(log.events) == []


def test_an_autoplay_that_skips_a_due_restock_breaks_the_autoplay_rule() -> None:
    """Decision: while the pile below its top can refill the stock (C-RESTOCK), the rule's
    draw exists (the new stock's top), so an auto-play that draws nothing plays other
    cards than CL-AUTOPLAY gives: "An AutoPlayed event ... that plays other cards than
    this rule gives, is a violation." The engine and the oracle both say so."""
    log = _stockless_opening()
    seq = log.add("AutoPlayed", "system", {"player": "p2", "drew": None, "discarded": "AD",
                                           "strike": 1}, dt=125)
    rec = replay(log.events)
    assert (findings(rec), rec.halted) == ([(seq, "CL-AUTOPLAY", "violation")], False)
    assert [(s, r) for s, r, _k in oracle_cr(log.events).claims] == [(seq, "CL-AUTOPLAY")]


def test_the_simulator_plays_a_stockless_classic_game_to_its_end() -> None:
    """``rummyguard simulate``'s platform (sim.driver, corner policy: slow moves, leaves)
    on classic with ``decks`` 1 and ``jokers`` 7 (four players: one stock card after the
    deal). In this seeded game p3 draws the last stock card and is removed for strikes
    with it, the pile is one card, and p1 times out: the driver asks the engine for the
    auto-play's cards and gets no discard (TypeError in format_card). With the fix the
    game ends and replays clean for the engine and the judges."""
    from config_kit import differences, sim_game

    events = sim_game("classic", 4, {"decks": 1, "jokers": 7}, 3)
    rec = replay(events)
    assert (findings(rec), rec.halted) == ([], False)
    assert any(e["type"] == "AutoPlayed" and e["payload"]["drew"] is None for e in events[3:])
    assert differences(events) == []


# == 2. Rummy 500: the points of a broken meld ======================================================


def _broken_meld_round() -> tuple[Script, int, int]:
    """p1 melds a set with a stray card (7C 7D 7S 6H: C-SET), a clean run TD-KD; p2 lays
    5C off at the low end of that run, where it does not fit (R5-LAYOFF); p1 then melds
    AH-5H and goes out with 7H. Returns the script and the two breaching seqs."""
    s = Script([P1, P2])
    s.draw("p1")  # 2H
    broken = s.meld("p1", {"kind": "set", "cards": ["7C", "7D", "7S", "6H"]})
    s.meld("p1", {"kind": "run", "cards": ["TD", "JD", "QD", "KD"]})
    s.log.discard("p1", "2C")
    s.log.draw("p2", "stock", "KS")
    s.stock.pop(0)
    misfit = s.layoff("p2", "5C", 1, "low")
    s.log.discard("p2", "KS")
    s.log.draw("p1", "stock", "AH")
    s.stock.pop(0)
    s.meld("p1", {"kind": "run", "cards": ["AH", "2H", "3H", "4H", "5H"]})
    s.log.discard("p1", "7H")
    return s, broken, misfit


def test_broken_meld_and_misfit_layoff_score_their_cards_face_value() -> None:
    """RULES.md R5-SCORE: "round score = value of cards the player melded or laid off −
    value of cards left in his hand"; R5-VALUES: "2–10 face value; J Q K 10; ace 11, but
    1 in a run A 2 3…; a melded joker is worth the card it stands for".

    Decision: a broken meld's cards were melded (play goes on as the platform applied it),
    so they score; a natural is worth its own face, not the place a broken list would give
    it (the stray 6H is 6, not a fourth 7), and a card laid off where it does not fit is
    worth its face (5C is 5, not the 9 of the place below TD). A joker in a broken meld
    stands for no card and is worth nothing. p1: 7+7+7+6 + 40 + 15 = 82; p2: 5 − 91 =
    −86 (AS 15, 2S 2, 6D 6, 9S 9, 8C 8, JC 10, QS 10, 4D 4, 9C 9, TC 10, 3S 3, 5D 5).
    The engine, the results oracle and the referee agree on every finding and result."""
    s, broken, misfit = _broken_meld_round()
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 82, "p2": -86}})
    pot_claims(s, {"p1": 200})
    s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    events = s.log.events
    rec = replay(events)
    want = [(broken, "C-SET", "violation"), (misfit, "R5-LAYOFF", "violation")]
    assert (findings(rec), rec.halted) == (want, False)
    assert rec.results.scores == {"p1": 82, "p2": -86}
    assert sorted(set(referee_cr(events).findings)) == want
    o = oracle_cr(events)
    assert (o.scores, o.winners, o.net, o.claims) == (
        {"p1": 82, "p2": -86}, ["p1"], {"p1": 100, "p2": -100}, [])


def test_a_round_score_claimed_by_place_is_a_claim_discrepancy() -> None:
    """The same round with the scores a by-place reading gives (the stray 6H as a 7, 5C
    as a 9: p1 83, p2 −82): both the engine and the oracle call the claim wrong."""
    s, broken, misfit = _broken_meld_round()
    seq = s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 83, "p2": -82}})
    events = s.log.events
    rec = replay(events)
    assert findings(rec) == [(broken, "C-SET", "violation"), (misfit, "R5-LAYOFF", "violation"),
                             (seq, "C-CLAIM", "discrepancy")]
    assert [(q, r) for q, r, _k in oracle_cr(events).claims] == [(seq, "C-CLAIM")]


# == 3. Liverpool: nothing left to draw ==============================================================


def _liverpool_dead_end(seed: int = 4) -> Log:
    """A round-1 game of four players driven through the engine's own state: nobody lays
    down, p3 buys every discard he may (LV-BUY: each buy takes the discard and the top
    stock card), so the cards outside the hands dwindle (restocks as C-RESTOCK says) to
    two; p3 draws one and leaves, p4 draws the last and leaves. p1 and p2 are left with
    no stock and no pile, p1 in turn."""
    log = Log("lv-dead-end")
    log.created("liverpool", SEATS4, dealer=0)
    deck = format_cards(standard_deck(2, 0))
    random.Random(seed).shuffle(deck)
    log.round(deck)
    engine = GameEngine(verify_hashes=False)
    fed = 0
    stage = 0
    st: Any = None
    for _ in range(5000):
        while fed < len(log.events):
            engine.apply(log.events[fed])
            fed += 1
        assert not engine.halted, engine.findings
        st = engine.variant
        restock = st.restock_due()
        if restock is not None:
            log.sys("StockReplenished", {"stock": format_cards(restock[::-1])})
            continue
        cur, outside = st.player(st.current), len(st.stock) + len(st.pile)
        if st.drawn:
            log.discard(cur, format_cards([max(st.hand_cards(st.current))])[0])
            continue
        if not st.stock and not st.pile:
            return log
        source, top = ("stock", st.stock[-1]) if st.stock else ("discard", st.pile[-1])
        log.draw(cur, source, format_cards([top])[0])
        if (stage, cur, outside) == (0, "p3", 2) or (stage == 1 and outside == 1):
            log.add("PlayerLeft", cur, {})
            stage += 1
        elif stage == 0 and cur != "p3":
            engine.apply(log.events[fed])
            fed += 1
            offer = st.legal_moves("p3")
            if offer and offer[0][0] == "Bought":
                log.add("Bought", "p3", offer[0][1])
    raise AssertionError("the round did not reach the dead end")


@pytest.fixture(scope="module")
def dead_end() -> Log:
    return _liverpool_dead_end()


def _both_lm(events: Events) -> tuple[tuple[list[tuple[int, str, str]], bool, list[str]], ...]:
    rec = replay(events, verify_hashes=False)
    verdict, results = referee_lm(events), oracle_lm(events)
    return ((findings(rec), rec.halted, sorted(rec.results.winners)),
            (sorted(set(verdict.findings)), verdict.halted, sorted(results.winners)))


def test_leavers_taking_the_last_cards_leave_a_round_in_progress(dead_end: Log) -> None:
    """RULES.md §3: LV-DRAW "a turn starts with one draw, stock top or discard top";
    §0 C-RESTOCK makes a stock of "the discard pile except its top card"; LV-OUT "the
    round ends when a player has no cards"; CL-LEAVE-like leaving is the project's
    decision for Liverpool (his hand leaves play).

    Decision (the spec has no rule for it, as for the blocked round the engine documents):
    with no stock and no pile nothing can be drawn and nothing restocked, and nobody went
    out, so the round is still in progress: no finding, no halt, no winner; the engine
    offers the player in turn no move (the simulator must abandon such a game)."""
    events = dead_end.events
    rec = replay(events, verify_hashes=False)
    assert (findings(rec), rec.halted, rec.results.winners) == ([], False, [])
    st: Any = rec.state
    assert (st.stock, st.pile, st.to_act()) == ([], [], ["p1"])
    assert st.legal_moves("p1") == []
    assert [s for s in SEATS4 if st.active[st.seat(s)]] == ["p1", "p2"]
    assert _both_lm(events)[1] == ([], False, [])


def _extended(log: Log, how: str) -> Log:
    out = copy.deepcopy(log)
    rec = replay(out.events, verify_hashes=False)
    hand = format_cards(rec.state.hand_cards(0))  # type: ignore[union-attr]
    if how == "discard":
        out.discard("p1", hand[0])
    elif how == "claim":
        out.sys("RoundEnded", {"round": 1, "winners": [], "scores": {}})
    elif how == "redeal":
        deck = format_cards(standard_deck(2, 0))
        random.Random(1).shuffle(deck)
        out.round(deck, round_no=2, dealer=1)
    elif how == "leave":
        out.add("PlayerLeft", "p1", {})
    elif how == "phantom":
        out.draw("p1", "stock", "AS")
    return out


@pytest.mark.parametrize(("how", "rule", "halted", "winners"), [
    ("discard", "LV-DRAW", False, []),      # a turn without its draw, applied as logged
    ("claim", "C-CLAIM", False, []),        # "by the rules it has not" ended
    ("redeal", "LV-OUT", False, []),        # a deal while the round is live
    ("leave", None, False, ["p2"]),         # one player left: he wins at once
    ("phantom", "C-HOLD", True, []),        # a stock card that is not there: halt
])
def test_what_the_platform_does_next_is_judged_without_a_crash(
        dead_end: Log, how: str, rule: str | None, halted: bool, winners: list[str]) -> None:
    """What a platform may log at the dead end, and the verdict: the spec's rules applied
    as they stand (no crash, no halt but for a card that is not there, C-HOLD). The
    independent Liverpool judges give the same findings, halting and winners."""
    log = _extended(dead_end, how)
    seq = len(log.events) - 1
    engine, judges = _both_lm(log.events)
    want = [] if rule is None else [(seq, rule, "integrity" if rule == "C-HOLD" else
                                     "discrepancy" if rule == "C-CLAIM" else "violation")]
    assert engine == (want, halted, winners)
    assert judges == engine


def _hoarder(turn: Turn) -> Choice | None:
    """A driver policy that walks a four-seat Liverpool game into the dead end: nobody
    lays down, p3 buys whenever he is offered, p3 leaves right after drawing when one card
    is left outside the hands and p4 after drawing that last one."""
    st: Any = turn.state
    me, moves = turn.player, turn.moves
    if st.player(st.current) != me:  # a buy offer: p3 takes it, nobody else
        buy = [m for m in moves if m[0] == "Bought"] if me == "p3" else []
        return Choice(*buy[0], think_ms=500) if buy else None
    draws = [m for m in moves if m[0] == "Drew"]
    if draws:
        return Choice(*draws[0], think_ms=1000)
    gone = sum(1 for s in ("p3", "p4") if not st.active[st.seat(s)])
    if (me, gone, len(st.stock) + len(st.pile)) in (("p3", 0, 1), ("p4", 1, 0)):
        return Choice("PlayerLeft", {}, think_ms=500)
    discards = [m for m in moves if m[0] == "Discarded"]
    return Choice(*max(discards, key=lambda m: m[1]["card"]), think_ms=1000)


def test_the_simulator_abandons_a_round_nobody_can_draw_in() -> None:
    """The simulator's platform (sim.driver) meets the dead end above: the player in turn
    has no legal move and no system event is due. The engine is right to offer nothing
    (no card to draw, RULES.md LV-DRAW); the platform must end such a game the way it ends
    a blocked round (players leave until one is left, who wins), not raise."""
    platform = Platform("lv-sim-0", "liverpool", SEATS4, seed=0, dealer=0, max_events=4000)
    events = platform.run(_hoarder)
    assert platform.abandoned == "blocked"
    rec = replay(events)
    assert (findings(rec), rec.halted, rec.results.winners) == ([], False, ["p2"])


# == 2 (continued): the judges and the engine on broken-meld mutants ================================

#: the referee's mutants that leave a broken meld or a misfit card on the table
MELD_MUTANTS = ("meld_reverse", "meld_kind", "meld_card", "wrong_as", "layoff_end",
                "layoff_meld", "swap_card")


def test_broken_meld_mutants_agree_with_the_judges_to_the_end() -> None:
    """Every finding (not only the first), halting and the results of Rummy 500 games with
    one meld, lay-off or swap broken: after the module decisions above, the engine and the
    judges (referee for moves, oracle for scores and claims) agree to the game's end,
    through the later rounds where a by-place score used to make the claims differ."""
    config = WorldConfig(games=16, seed=7, variants=("r500",), fraud_rate=0.0, chain=False)
    buf = io.BytesIO()
    run_world(build_world(config), buf.write)
    games: dict[str, Events] = {}
    for line in buf.getvalue().splitlines():
        e = json.loads(line)
        games.setdefault(e["game_id"], []).append(e)
    checked, bad = 0, []
    for events in games.values():
        for name, i, mutant in mutants(events, per_kind=2):
            if name not in MELD_MUTANTS:
                continue
            checked += 1
            rec, verdict, o = replay(mutant, verify_hashes=False), referee_cr(mutant), oracle_cr(mutant)
            engine = sorted({f for f in findings(rec) if not f[1].startswith(("LOG-", "CL-NEXT"))})
            judged = sorted({f for f in verdict.findings if not f[1].startswith(("LOG-", "CL-NEXT"))})
            same = engine == judged and rec.halted == verdict.halted
            if same and not rec.halted and not o.halted:
                res = rec.results
                same = (res.winners, res.net, res.scores) == (o.winners, o.net, o.scores)
            if not same:
                bad.append((name, mutant[0]["game_id"], i))
    assert checked >= 100
    assert bad == []
