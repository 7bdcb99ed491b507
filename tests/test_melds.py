"""Shared meld logic against slow, obviously-correct references (hypothesis)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rummyguard.events.cards import JOKER, format_card, make_card, parse_cards, rank_of, suit_of
from rummyguard.replay.rules.melds import (
    MeldError,
    MeldRules,
    apply_layoff,
    find_partition,
    layoff_position,
    validate_meld,
)

RULES = MeldRules(wild=frozenset({JOKER}))
ACE = 12
naturals = st.integers(0, 51)


def values(card: int) -> tuple[int, ...]:
    """Ladder values of a natural: 2..13 for 2..K, the ace 1 or 14."""
    r = rank_of(card)
    return (1, 14) if r == ACE else (r + 2,)


def ref_natural_run(cards: list[int], run_min: int = 3) -> bool:
    """A wild-free list is a run iff some reading of its aces climbs by one, in one suit,
    without using the ace at both ends."""
    if len(cards) < run_min or len({suit_of(c) for c in cards}) != 1:
        return False
    for reading in itertools.product(*(values(c) for c in cards)):
        steps_ok = all(b == a + 1 for a, b in itertools.pairwise(reading))
        if steps_ok and not (reading[0] == 1 and reading[-1] == 14):
            return True
    return False


def ref_set(cards: list[int], wild=frozenset({JOKER}), lo=3, hi=4, distinct=True) -> bool:
    nat = [c for c in cards if c not in wild]
    if not nat or not lo <= len(cards) <= hi or len({rank_of(c) for c in nat}) != 1:
        return False
    return not distinct or len({suit_of(c) for c in nat}) == len(nat)


@settings(max_examples=400, deadline=None)
@given(st.lists(naturals, min_size=1, max_size=8))
def test_wild_free_runs_match_the_reference(cards):
    try:
        meld = validate_meld("run", cards, None, RULES)
        ok = True
    except MeldError:
        ok = False
    assert ok == ref_natural_run(cards)
    if ok:
        assert meld.stands == cards and meld.hi - meld.lo + 1 == len(cards)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 3), st.integers(1, 12), st.integers(3, 9), st.data())
def test_runs_with_middle_and_trailing_wilds_read_positionally(suit, lo, length, data):
    assume(lo + length - 1 <= 14)
    run = [make_card(ACE if v in (1, 14) else v - 2, suit) for v in range(lo, lo + length)]
    holes = data.draw(st.sets(st.integers(1, length - 1), max_size=length - 1))
    assume(len(holes) < length - 1 or length - 1 - len(holes) >= 0)
    cards = [JOKER if i in holes else c for i, c in enumerate(run)]
    assume(any(c != JOKER for c in cards))
    meld = validate_meld("run", cards, None, RULES)
    assert meld.stands == run
    assert (meld.lo, meld.hi) == (lo, lo + length - 1)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 3), st.integers(2, 12), st.integers(3, 8))
def test_a_leading_wild_extends_upward_unless_the_top_is_an_ace(suit, lo, length):
    hi = lo + length - 2  # the naturals lo..hi, a joker written first
    assume(hi <= 14)
    naturals_run = [make_card(ACE if v in (1, 14) else v - 2, suit) for v in range(lo, hi + 1)]
    meld = validate_meld("run", [JOKER, *naturals_run], None, RULES)
    if hi == 14:
        assert meld.stands[0] == make_card(lo - 3, suit) if lo > 2 else True
        assert (meld.lo, meld.hi) == (lo - 1, 14)
    else:
        assert meld.stands[0] == make_card(ACE if hi + 1 == 14 else hi - 1, suit)
        assert (meld.lo, meld.hi) == (lo, hi + 1)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(naturals, st.just(JOKER)), min_size=1, max_size=6))
def test_sets_match_the_reference(cards):
    try:
        validate_meld("set", cards, None, RULES)
        ok = True
    except MeldError:
        ok = False
    assert ok == ref_set(cards)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(naturals, st.just(JOKER)), min_size=3, max_size=7))
def test_every_accepted_run_stands_for_a_true_run(cards):
    """Soundness with wilds anywhere: what the wilds stand for makes a real run."""
    try:
        meld = validate_meld("run", cards, None, RULES)
    except MeldError:
        return
    stands = sorted(meld.stands, key=lambda c: 0)
    vals = sorted(v for c in stands for v in values(c) if meld.lo <= v <= meld.hi)
    assert vals == list(range(meld.lo, meld.hi + 1))
    assert len({suit_of(c) for c in meld.stands}) == 1
    assert all(s == c for s, c in zip(meld.stands, cards, strict=True) if c != JOKER)
    assert not (meld.lo == 1 and meld.hi == 14)


def test_as_names_what_a_low_end_wild_stands_for():
    run = parse_cards(["JK", "5H", "6H"])
    below = validate_meld("run", run, {0: parse_cards(["4H"])[0]}, RULES)
    above = validate_meld("run", run, None, RULES)
    assert format_card(below.stands[0]) == "4H" and format_card(above.stands[0]) == "7H"
    with pytest.raises(MeldError) as err:
        validate_meld("run", run, {0: parse_cards(["9H"])[0]}, RULES)
    assert err.value.code == "wild_as"
    with pytest.raises(MeldError) as err:
        validate_meld("run", run, {1: parse_cards(["5H"])[0]}, RULES)
    assert err.value.code == "wild_as"  # `as` on a natural


def test_liverpool_style_rules_wild_twos_and_natural_minimums():
    twos = frozenset(make_card(0, s) for s in range(4))
    lv = MeldRules(wild=twos, run_min=4, set_max=None, run_min_naturals=3, set_min_naturals=2)
    ok = validate_meld("run", parse_cards(["5S", "6S", "2D", "8S"]), None, lv)
    assert format_card(ok.stands[2]) == "7S"
    with pytest.raises(MeldError) as err:
        validate_meld("run", parse_cards(["5S", "2C", "2D", "8S"]), None, lv)
    assert err.value.code == "run_naturals"
    with pytest.raises(MeldError) as err:
        validate_meld("set", parse_cards(["9S", "2C", "2D"]), None, lv)
    assert err.value.code == "set_naturals"
    assert len(validate_meld("set", parse_cards(["9S", "9C", "2C", "2D", "2H"]), None, lv).cards) == 5


def test_layoffs_extend_runs_at_the_right_end_and_sets_by_missing_suit():
    run = validate_meld("run", parse_cards(["5H", "6H", "7H"]), None, RULES)
    four, eight, nine = parse_cards(["4H", "8H", "9H"])
    assert layoff_position(run, four, None, RULES) == 4
    assert layoff_position(run, nine, None, RULES) is None
    apply_layoff(run, eight, layoff_position(run, eight, "high", RULES), seat=1, rules=RULES)
    assert (run.lo, run.hi) == (5, 8) and run.contributed == {1: [eight]}
    s = validate_meld("set", parse_cards(["9C", "9D", "9H"]), None, RULES)
    assert layoff_position(s, parse_cards(["9S"])[0], None, RULES) == rank_of(parse_cards(["9S"])[0])
    assert layoff_position(s, parse_cards(["9C"])[0], None, RULES) is None


def _check_partition(hand, parts, need_long=4):
    used = [0] * 53
    for kind, cards in parts:
        validate_meld(kind, cards, None, RULES)
        for c in cards:
            used[c] += 1
    assert used == hand
    assert any(k == "run" and len(cs) >= need_long for k, cs in parts)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_find_partition_is_sound_and_finds_constructed_hands(data):
    """Build a hand from disjoint valid melds (one run of >= 4); the search must find a
    partition, and any partition it returns must be valid."""
    hand = [0] * 53
    melds = []
    suit, lo = data.draw(st.integers(0, 3)), data.draw(st.integers(2, 10))
    long_run = [make_card(v - 2, suit) for v in range(lo, lo + 4)]
    melds.append(long_run)
    for _ in range(data.draw(st.integers(1, 3))):
        rank = data.draw(st.integers(0, 12))
        suits = data.draw(st.lists(st.integers(0, 3), min_size=3, max_size=3, unique=True))
        melds.append([make_card(rank, s) for s in suits])
    for m in melds:
        for c in m:
            hand[c] += 1
    assume(max(hand) <= 2)
    parts = find_partition(hand, RULES, need_long_run=4)
    assert parts is not None
    _check_partition(hand, parts)


def test_find_partition_with_jokers_and_a_hopeless_hand():
    hand = [0] * 53
    for c in parse_cards(["3H", "4H", "JK", "6H", "9C", "9D", "JK", "TD", "JD", "QD", "KC", "KD", "KH", "KS"]):
        hand[c] += 1
    parts = find_partition(hand, RULES, need_long_run=4)
    assert parts is not None
    _check_partition(hand, parts)
    hopeless = [0] * 53
    for c in parse_cards(["2C", "4D", "6H", "8S", "TC", "QD", "AH", "3S", "5C", "7D", "9H", "JS", "KC", "2D"]):
        hopeless[c] += 1
    assert find_partition(hopeless, RULES, need_long_run=4) is None


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_find_partition_with_jokers_is_sound(data):
    """Hands built from valid melds with some cards swapped for jokers: whatever the
    search returns must be a valid partition of exactly that hand."""
    hand = [0] * 53
    suit, lo = data.draw(st.integers(0, 3)), data.draw(st.integers(2, 9))
    cards = [make_card(v - 2, suit) for v in range(lo, lo + 5)]
    for _ in range(3):
        rank = data.draw(st.integers(0, 12))
        suits = data.draw(st.lists(st.integers(0, 3), min_size=3, max_size=3, unique=True))
        cards += [make_card(rank, s) for s in suits]
    jokers = data.draw(st.sets(st.integers(0, len(cards) - 1), max_size=4))
    cards = [JOKER if i in jokers else c for i, c in enumerate(cards)]
    for c in cards:
        hand[c] += 1
    assume(max(hand[:52]) <= 2)
    parts = find_partition(hand, RULES, need_long_run=4)
    if parts is not None:
        _check_partition(hand, parts)
