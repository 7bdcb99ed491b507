"""The natural-run and natural-set fast paths of replay/rules/melds.py give exactly what the general
path gives, or declines (None) and leaves the verdict to it."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from rummyguard.replay.rules.melds import (
    MeldError,
    MeldRules,
    _general_run,
    _general_set,
    _natural_run,
    _natural_set,
)

RULES = [MeldRules(), MeldRules(run_min=4), MeldRules(wild=frozenset({0, 1, 2, 3})),
         MeldRules(set_max=None, set_distinct_suits=False), MeldRules(set_min=4, set_max=8)]


#: meld kind -> (fast path, general path)
PATHS = {"run": (_natural_run, _general_run), "set": (_natural_set, _general_set)}


def _general(kind: str, cards: list[int], rules: MeldRules) -> object:
    try:
        return PATHS[kind][1](list(cards), {}, rules)
    except MeldError as err:
        return err.code


def _check(kind: str, cards: list[int], rules: MeldRules) -> bool:
    """True if the fast path answered (and then agreed with the general path)."""
    if not rules.wild.isdisjoint(cards):
        return False
    fast = PATHS[kind][0](list(cards), rules)
    if fast is None:
        return False
    assert fast == _general(kind, cards, rules), cards
    return True


def test_every_natural_run_takes_the_fast_path_and_agrees() -> None:
    answered = 0
    for rules, suit, start, length in itertools.product(RULES[:2], range(4), range(13), range(3, 15)):
        ranks = [(start + i) % 13 for i in range(length)]
        cards = [r << 2 | suit for r in ranks]
        if _check("run", cards, rules):
            answered += 1
        elif not isinstance(_general("run", cards, rules), str):
            # a valid run the fast path declined: only an ace-low run longer than
            # the ladder or a wrapped one may be left to the general path
            raise AssertionError(f"fast path declined a valid run {cards}")
    assert answered > 300


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.integers(0, 52), min_size=0, max_size=15), st.sampled_from(RULES))
def test_fast_path_never_disagrees(cards: list[int], rules: MeldRules) -> None:
    _check("run", cards, rules)


def test_every_natural_set_takes_the_fast_path_and_agrees() -> None:
    answered = 0
    for rules in RULES:
        for rank in range(13):
            for suits in itertools.chain.from_iterable(
                itertools.combinations_with_replacement(range(4), k) for k in range(1, 7)
            ):
                cards = [rank << 2 | s for s in suits]
                if _check("set", cards, rules):
                    answered += 1
                elif rules.wild.isdisjoint(cards):
                    assert isinstance(_general("set", cards, rules), str), (cards, rules)
    assert answered > 300


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.integers(0, 52), min_size=0, max_size=9), st.sampled_from(RULES))
def test_set_fast_path_never_disagrees(cards: list[int], rules: MeldRules) -> None:
    _check("set", cards, rules)


@settings(max_examples=2000, deadline=None)
@given(st.integers(0, 12), st.lists(st.integers(0, 3), min_size=1, max_size=8),
       st.sampled_from(RULES))
def test_set_fast_path_on_one_rank(rank: int, suits: list[int], rules: MeldRules) -> None:
    _check("set", [rank << 2 | s for s in suits], rules)
