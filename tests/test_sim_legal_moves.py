"""The fast move generators must offer exactly the moves of the plain enumeration.

``Rummy500.legal_moves`` was rewritten for speed (the simulator calls it before every
move). The plain enumeration it replaced is kept here, verbatim in logic, as the
reference: on many mid-game positions — reached by real simulated play, then
perturbed (random hands with jokers, deep piles, cards that may not be discarded) —
both must give the same list, in the same order. Likewise Liverpool's contract solver
(``find_contract``: a pruned window test and a memo) against its plain search.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import combinations
from typing import Any

import pytest

from rummyguard.events.cards import JOKER, NCARDS, format_card, format_cards, make_card, rank_of, suit_of
from rummyguard.replay.rules import liverpool as lv
from rummyguard.replay.rules.melds import ACE, ladder_card
from rummyguard.replay.rules.r500 import Rummy500
from rummyguard.sim.agents import Agent
from rummyguard.sim.brain_meld import R500Brain
from rummyguard.sim.driver import Choice, Platform, Turn, random_policy
from rummyguard.sim.timing import human_timing

Move = tuple[str, dict[str, Any]]

# --- the reference: the plain enumeration, as it was ----------------------------------------------


def ref_legal_moves(st: Rummy500, player: str) -> list[Move]:
    seat = st.seat(player)
    if seat is None or seat != st.current or st.over or not st.in_round:
        return []
    hand = st.hands[seat]
    if not st.drawn:
        return _ref_draw_moves(st, hand)
    if st.must_use:
        return _ref_use_moves(st, hand, st.blocked, st.must_use[0], first_only=False)
    moves: list[Move] = []
    blocked = st.blocked
    for kind, cards, as_map in _ref_all_melds(hand):
        if _ref_discard_left(hand, blocked, cards):
            moves.append(("Melded", _ref_payload(kind, cards, as_map)))
    moves.extend(m for m, removed in _ref_layoffs(st, hand, None) if _ref_discard_left(hand, blocked, removed))
    moves.extend(m for m, removed in _ref_swaps(st, hand, None)
                 if _ref_discard_left(hand, blocked, removed, True))
    for c in range(NCARDS):
        if hand[c] > blocked.get(c, 0):
            moves.append(("Discarded", {"card": format_card(c)}))
    return moves


def _ref_draw_moves(st: Rummy500, hand: list[int]) -> list[Move]:
    moves: list[Move] = []
    if st.stock:
        moves.append(("Drew", {"source": "stock", "cards": [format_card(st.stock[-1])]}))
    pile = st.pile
    added: list[int] = []
    try:
        for k in range(1, len(pile) + 1):
            card = pile[-k]
            hand[card] += 1
            added.append(card)
            if k == 1 or _ref_use_moves(st, hand, {card: 1}, card, first_only=True):
                moves.append(("Drew", {"source": "discard", "cards": format_cards(pile[-k:])}))
    finally:
        for c in added:
            hand[c] -= 1
    return moves


def _ref_use_moves(st: Rummy500, hand: list[int], blocked: dict[int, int], card: int, *,
                   first_only: bool) -> list[Move]:
    moves: list[Move] = []
    for move, removed in _ref_layoffs(st, hand, card):
        if _ref_discard_left(hand, blocked, removed):
            moves.append(move)
            if first_only:
                return moves
    for move, removed in _ref_swaps(st, hand, card):
        if _ref_discard_left(hand, blocked, removed, True):
            moves.append(move)
            if first_only:
                return moves
    for kind, cards, as_map in _ref_melds_through(hand, card):
        if _ref_discard_left(hand, blocked, cards):
            moves.append(("Melded", _ref_payload(kind, cards, as_map)))
            if first_only:
                return moves
    return moves


def _ref_layoffs(st: Rummy500, hand: list[int], only: int | None) -> Iterator[tuple[Move, list[int]]]:
    cards = [only] if only is not None else [c for c in range(NCARDS) if hand[c] > 0]
    for index, tm in enumerate(st.melds):
        if not tm.valid:
            continue
        for c in cards:
            if hand[c] <= 0:
                continue
            if tm.meld.kind == "set":
                if st._fit(tm, c, None) is not None:
                    yield ("LaidOff", {"card": format_card(c), "meld": index}), [c]
                continue
            for side in ("low", "high"):
                fit = st._fit(tm, c, side)
                if fit is not None and fit[1] == side:
                    yield ("LaidOff", {"card": format_card(c), "meld": index, "end": side}), [c]


def _ref_swaps(st: Rummy500, hand: list[int], only: int | None) -> Iterator[tuple[Move, list[int]]]:
    for index, tm in enumerate(st.melds):
        if not tm.valid or JOKER not in tm.meld.cards:
            continue
        m = tm.meld
        wanted: set[int] = set()
        for i, c in enumerate(m.cards):
            if c != JOKER:
                continue
            if m.stands[i] >= 0:
                wanted.add(m.stands[i])
            else:
                present = {suit_of(s) for s in m.stands if s >= 0}
                wanted.update(make_card(m.rank, s) for s in range(4) if s not in present)
        for c in sorted(wanted):
            if hand[c] > 0 and (only is None or c == only):
                yield ("JokerSwapped", {"meld": index, "card": format_card(c)}), [c]


def _ref_payload(kind: str, cards: list[int], as_map: dict[int, int] | None) -> dict[str, Any]:
    payload: dict[str, Any] = {"kind": kind, "cards": format_cards(cards)}
    if as_map:
        payload["as"] = {str(i): format_card(c) for i, c in as_map.items()}
    return payload


def _ref_discard_left(hand: list[int], blocked: dict[int, int], removed: Sequence[int],
                      gets_joker: bool = False) -> bool:
    for c in removed:
        hand[c] -= 1
    if gets_joker:
        hand[JOKER] += 1
    try:
        gone = Counter(removed)
        return any(k > max(0, blocked.get(c, 0) - gone[c]) for c, k in enumerate(hand) if k)
    finally:
        for c in removed:
            hand[c] += 1
        if gets_joker:
            hand[JOKER] -= 1


def _ref_set_melds(hand: Sequence[int], rank: int, must: int | None = None) -> Iterator[tuple[str, list[int], None]]:
    naturals = [make_card(rank, s) for s in range(4) if hand[make_card(rank, s)] > 0]
    jokers = min(hand[JOKER], 2)
    for m in range(1, len(naturals) + 1):
        for combo in combinations(naturals, m):
            if must is not None and must != JOKER and must not in combo:
                continue
            for j in range(jokers + 1):
                if 3 <= m + j <= 4 and not (must == JOKER and j == 0):
                    yield "set", [*combo, *[JOKER] * j], None


def _ref_run_melds(hand: Sequence[int], suit: int, must_values: tuple[int, ...] = (),
                   need_joker: bool = False) -> Iterator[tuple[str, list[int], dict[int, int] | None]]:
    jokers = hand[JOKER]
    for lo in range(1, 13):
        cards: list[int] = []
        missing = naturals = 0
        for v in range(lo, 15):
            if lo == 1 and v == 14:
                break
            c = ladder_card(v, suit)
            if hand[c] > 0:
                cards.append(c)
                naturals += 1
            else:
                cards.append(JOKER)
                missing += 1
                if missing > jokers:
                    break
            if len(cards) < 3 or not naturals or (need_joker and not missing):
                continue
            if must_values and not any(lo <= mv <= v for mv in must_values):
                continue
            lead = next(i for i, x in enumerate(cards) if x != JOKER)
            as_map = {i: ladder_card(lo + i, suit) for i in range(lead)} or None
            yield "run", list(cards), as_map


def _ref_all_melds(hand: Sequence[int]) -> Iterator[tuple[str, list[int], dict[int, int] | None]]:
    for rank in range(13):
        yield from _ref_set_melds(hand, rank)
    for suit in range(4):
        yield from _ref_run_melds(hand, suit)


def _ref_melds_through(hand: Sequence[int], card: int) -> Iterator[tuple[str, list[int], dict[int, int] | None]]:
    if card == JOKER:
        for rank in range(13):
            yield from _ref_set_melds(hand, rank, JOKER)
        for suit in range(4):
            yield from _ref_run_melds(hand, suit, need_joker=True)
        return
    yield from _ref_set_melds(hand, rank_of(card), card)
    values = (1, 14) if rank_of(card) == ACE else (rank_of(card) + 2,)
    yield from _ref_run_melds(hand, suit_of(card), values)


# --- positions ------------------------------------------------------------------------------------


class Checker:
    """A policy wrapper: compares both generators at every position, and at a few
    perturbations of it, then lets ``inner`` move."""

    def __init__(self, inner: Any, rng: random.Random, perturb: float) -> None:
        self.inner = inner
        self.rng = rng
        self.perturb = perturb
        self.checked = 0
        self.kinds: Counter[str] = Counter()

    def __call__(self, turn: Turn) -> Choice | None:
        st = turn.state
        assert isinstance(st, Rummy500)
        assert turn.moves == ref_legal_moves(st, turn.player)
        self.checked += 1
        self.kinds.update(k for k, _ in turn.moves)
        if self.rng.random() < self.perturb:
            self._perturbed(st, turn.player)
        return self.inner(turn)

    def _perturbed(self, st: Rummy500, player: str) -> None:
        """Same table, a random hand (jokers likely), maybe a deeper pile and blocked
        cards; the state is restored afterwards."""
        seat = st.seat(player)
        assert seat is not None
        rng = self.rng
        saved = (list(st.hands[seat]), list(st.pile), dict(st.blocked), list(st.must_use))
        free = [c for c in range(52) for _ in range(1)] + [JOKER, JOKER]
        hand = [0] * NCARDS
        for c in rng.sample(free, rng.randint(1, 14)):
            hand[c] += 1
        st.hands[seat][:] = hand
        if rng.random() < 0.5:
            st.pile.extend(rng.sample(range(52), rng.randint(1, 8)))
        if st.drawn and rng.random() < 0.5:
            held = [c for c in range(NCARDS) if hand[c]]
            st.blocked = {rng.choice(held): 1}
            if rng.random() < 0.4:
                st.must_use = [rng.choice(held)]
        try:
            assert st.legal_moves(player) == ref_legal_moves(st, player)
            self.checked += 1
        finally:
            st.hands[seat][:] = saved[0]
            st.pile[:] = saved[1]
            st.blocked = saved[2]
            st.must_use = saved[3]


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_r500_fast_legal_moves_equal_the_plain_enumeration(seats: int) -> None:
    rng = random.Random(seats)
    brain = R500Brain()
    checked = 0
    kinds: Counter[str] = Counter()
    for g in range(9):
        names = [f"p{i}" for i in range(seats)]
        if g % 3 == 2:
            inner: Any = random_policy
        else:
            inner = {p: Agent(p, rng.random(), "casual", human_timing(rng, 0.5),
                              random.Random(rng.getrandbits(32)), brain) for p in names}
        wrapped = {}
        for p in names:
            policy = inner if callable(inner) else inner[p]
            wrapped[p] = Checker(policy, random.Random(rng.getrandbits(32)), perturb=0.25)
            if hasattr(policy, "observe"):
                wrapped[p].observe = policy.observe  # type: ignore[attr-defined]
        Platform(f"g{g}", "r500", names, dealer=g % seats, seed=1000 * seats + g,
                 rules={"mode": "rounds", "rounds": 2}, max_events=1500).run(wrapped)
        for w in wrapped.values():
            checked += w.checked
            kinds.update(w.kinds)
    assert checked > 1000
    assert {"Melded", "LaidOff", "JokerSwapped", "Discarded", "Drew"} <= set(kinds)


# --- Liverpool's contract solver: the minimal-meld search, as it was ---------------------------------


def _ref_window(nat: list[int], suit: int, lo: int, length: int) -> list[int]:
    return [ladder_card(v, suit) if nat[ladder_card(v, suit)] > 0 else lv._WILD for v in range(lo, lo + length)]


def _ref_pick(nat: list[int], budget: int, sets: int, runs: int, rules: Any, min_rank: int,
              min_run: tuple[int, int]) -> list[tuple[Any, ...]] | None:
    if sets:
        per_rank = [sum(nat[make_card(r, s)] for s in range(4)) for r in range(min_rank, 13)]
        if min(sum(k // 2 for k in per_rank), sum(k // 3 for k in per_rank) + budget) < sets:
            return None
        for rank in range(min_rank, 13):
            for naturals, need in lv._sets_from(nat, rank, rules, budget):
                lv._take(nat, naturals, 1)
                rest = _ref_pick(nat, budget - need, sets - 1, runs, rules, rank, min_run)
                lv._take(nat, naturals, -1)
                if rest is not None:
                    return [("set", rank, naturals, need), *rest]
        return None
    if runs:
        for suit, lo in itertools.product(range(4), range(1, 12)):
            if (suit, lo) < min_run:
                continue
            slots = _ref_window(nat, suit, lo, 4)
            need = slots.count(lv._WILD)
            if need > min(budget, 1):
                continue
            lv._take(nat, slots, 1)
            rest = _ref_pick(nat, budget - need, 0, runs - 1, rules, min_rank, (suit, lo))
            lv._take(nat, slots, -1)
            if rest is not None:
                return [("run", suit, lo, slots), *rest]
        return None
    return []


def test_liverpool_contract_solver_is_unchanged_and_remembers_copies(monkeypatch: pytest.MonkeyPatch) -> None:
    """``find_contract`` (pruned, remembered) gives the plans of the plain search, on
    random hands of every round, and every call gets its own copy of a plan."""
    rng = random.Random(17)
    deck = [c for _ in range(3) for c in range(52)]
    cases = []
    for distinct in (True, False):
        rules = lv.meld_rules(distinct)
        for _ in range(1500):
            rnd = rng.randint(1, 6)
            hand = [0] * NCARDS
            for c in rng.sample(deck, rng.choice([10, 11, 12, 13, 14])):
                hand[c] += 1
            for leave in [None] if rnd < 5 else [None, 0, 1]:
                cases.append((hand, *lv.CONTRACTS[rnd], rules, leave))
    with monkeypatch.context() as m:
        m.setattr(lv, "_pick", _ref_pick)
        m.setattr(lv, "_window", _ref_window)
        want = [lv._find_contract(h, s, r, rules, leave=leave) for h, s, r, rules, leave in cases]
    got = [lv.find_contract(h, s, r, rules, leave=leave) for h, s, r, rules, leave in cases]
    assert got == want
    assert sum(w is not None for w in want) > 300
    h, s, r, rules, leave = next(c for c, w in zip(cases, want, strict=True) if w is not None)
    first = lv.find_contract(h, s, r, rules, leave=leave)
    assert first is not None
    first[0][1].append(99)
    assert lv.find_contract(h, s, r, rules, leave=leave) == lv._find_contract(h, s, r, rules, leave=leave)
