"""The simulator's fast paths must not change the engine's legal moves: the pruned
``find_declaration`` gives exactly the engine's answer, on hands near and far from a
declaration."""

from __future__ import annotations

import random
import types

from rummyguard.events.cards import JOKER
from rummyguard.replay.rules.classic import ClassicRummy
from rummyguard.replay.rules.melds import MeldRules, find_partition
from rummyguard.replay.variant import GameContext
from rummyguard.sim import fastpaths
from rummyguard.sim.fastpaths import MeldFeasibility, isolated_cards, needy_count, wild_deficit

RULES = MeldRules(wild=frozenset({JOKER}), run_min=3, set_min=3, set_max=4)
DECK = [c for _ in range(2) for c in range(52)] + [JOKER] * 4


def _near_hand(rng: random.Random, size: int) -> list[int] | None:
    """A hand built from melds, then a few cards swapped for random ones."""
    cards: list[int] = []
    while len(cards) < size:
        if rng.random() < 0.6:
            suit, low, length = rng.randrange(4), rng.randrange(0, 11), rng.randint(3, 5)
            cards += [min(12, low + k) * 4 + suit for k in range(length)]
        else:
            rank = rng.randrange(13)
            cards += [rank * 4 + s for s in rng.sample(range(4), rng.choice((3, 4)))]
    cards = cards[:size]
    for _ in range(rng.randint(0, 3)):
        cards[rng.randrange(size)] = rng.choice(DECK)
    hand = [0] * 53
    for c in cards:
        hand[c] += 1
    if max(hand[:52]) > 2 or hand[JOKER] > 4:
        return None
    return hand


def _state(hand: list[int]) -> ClassicRummy:
    ctx = GameContext("g", ["a", "b"], 0, 10)
    state = ClassicRummy(ctx, {})
    state.hands[0] = list(hand)
    return state


def test_pruned_declaration_search_equals_the_engine() -> None:
    rng = random.Random(7)
    checked = found = 0
    while checked < 700:
        hand = _near_hand(rng, 15) if rng.random() < 0.8 else None
        if hand is None:
            hand = [0] * 53
            for c in rng.sample(DECK, 15):
                hand[c] += 1
            if max(hand[:52]) > 2:
                continue
        plain = _state(hand)
        fast = _state(hand)
        if rng.random() < 0.3:  # a card taken from the pile may not be the discard
            taken = rng.choice([c for c in range(52) if hand[c]])
            for st in (plain, fast):
                st.taken[taken] = 1
                st.before_take[taken] = hand[taken] - 1
        fastpaths.install(fast)
        assert isinstance(fast.declaration_finder, types.FunctionType)
        want = plain.find_declaration(0)
        assert fast.find_declaration(0) == want
        found += want is not None
        checked += 1
    assert found > 50  # the sample holds many declarable hands, not only hopeless ones


def test_feasibility_never_rejects_what_the_engine_partitions() -> None:
    rng = random.Random(3)
    accepted = 0
    for _ in range(1500):
        hand = _near_hand(rng, 14)
        if hand is None:
            continue
        engine = find_partition(hand, RULES, need_long_run=4) is not None
        if engine:
            assert MeldFeasibility(4).feasible(hand)
            assert wild_deficit(hand) <= hand[JOKER]
            assert needy_count(hand) <= 4 * hand[JOKER]
            assert isolated_cards(hand) == 0
            accepted += 1
    assert accepted > 100


def test_bounds_reject_hopeless_hands() -> None:
    hand = [0] * 53
    for c in (0, 9, 18, 27, 36, 45, 50, 3, 14, 22, 33, 40, 47, 6):  # scattered singletons
        hand[c] += 1
    assert wild_deficit(hand) > 0
    assert not MeldFeasibility(4).feasible(hand)
