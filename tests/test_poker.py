"""The Michigan poker evaluator (RULES.md §4 MI-POKER): ranking, ties and pot splitting."""

from __future__ import annotations

import doctest
from collections import Counter
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rummyguard.events.cards import JOKER, make_card, parse_cards, rank_of, suit_of
from rummyguard.replay.rules import poker
from rummyguard.replay.rules.poker import (
    CATEGORY_NAMES,
    FLUSH,
    FOUR_OF_A_KIND,
    FULL_HOUSE,
    HIGH_CARD,
    PAIR,
    STRAIGHT,
    STRAIGHT_FLUSH,
    THREE_OF_A_KIND,
    TWO_PAIR,
    PokerError,
    best_hands,
    category_name,
    evaluate,
    split_pot,
)


def ev(text: str) -> tuple[int, ...]:
    return evaluate(parse_cards(text.split()))


# --- the full enumeration -------------------------------------------------------------

# Known counts of the 2,598,960 five-card hands and of their distinct values (7,462).
HANDS_PER_CATEGORY = {
    STRAIGHT_FLUSH: 40,
    FOUR_OF_A_KIND: 624,
    FULL_HOUSE: 3_744,
    FLUSH: 5_108,
    STRAIGHT: 10_200,
    THREE_OF_A_KIND: 54_912,
    TWO_PAIR: 123_552,
    PAIR: 1_098_240,
    HIGH_CARD: 1_302_540,
}
VALUES_PER_CATEGORY = {
    STRAIGHT_FLUSH: 10,
    FOUR_OF_A_KIND: 156,
    FULL_HOUSE: 156,
    FLUSH: 1_277,
    STRAIGHT: 10,
    THREE_OF_A_KIND: 858,
    TWO_PAIR: 858,
    PAIR: 2_860,
    HIGH_CARD: 1_277,
}
KEY_LENGTH = {  # category + tie-break ranks
    STRAIGHT_FLUSH: 2,
    FOUR_OF_A_KIND: 3,
    FULL_HOUSE: 3,
    FLUSH: 6,
    STRAIGHT: 2,
    THREE_OF_A_KIND: 4,
    TWO_PAIR: 4,
    PAIR: 5,
    HIGH_CARD: 6,
}


@pytest.fixture(scope="module")
def all_keys() -> Counter[tuple[int, ...]]:
    """Every five-card hand evaluated once through the public evaluate()."""
    return Counter(map(evaluate, combinations(range(52), 5)))


def test_enumeration_category_counts(all_keys: Counter[tuple[int, ...]]) -> None:
    assert sum(all_keys.values()) == 2_598_960
    per_category: Counter[int] = Counter()
    for key, n in all_keys.items():
        per_category[key[0]] += n
    assert dict(per_category) == HANDS_PER_CATEGORY
    assert all_keys[(STRAIGHT_FLUSH, 12)] == 4  # the royal flushes


def test_enumeration_distinct_values(all_keys: Counter[tuple[int, ...]]) -> None:
    # Exactly as many distinct keys per category as poker has hand values: a missing
    # tie-break rank would merge values, a spurious one (e.g. suits) would split them.
    assert len(all_keys) == 7_462
    assert dict(Counter(key[0] for key in all_keys)) == VALUES_PER_CATEGORY
    assert all(len(key) == KEY_LENGTH[key[0]] for key in all_keys)
    assert all(0 <= r <= 12 for key in all_keys for r in key[1:])


def test_enumeration_extremes(all_keys: Counter[tuple[int, ...]]) -> None:
    ordered = sorted(all_keys)
    assert ordered[0] == ev("7C 5D 4H 3S 2C")  # the worst hand
    assert ordered[-1] == ev("AS KS QS JS TS")  # royal flush
    # Each value occurs as often as its rank multiset allows, e.g. 4**5 - 4 suitings
    # of a non-straight high card and 4 of a flush.
    assert all_keys[ev("7C 5D 4H 3S 2C")] == 4**5 - 4
    assert all_keys[ev("7C 5C 4C 3C 2C")] == 4
    assert all_keys[ev("AC AD AH AS KC")] == 4
    assert all_keys[ev("AC AD AH KS KC")] == 4 * 6


def test_category_boundaries_in_key_order(all_keys: Counter[tuple[int, ...]]) -> None:
    # Sorting all keys must list categories as contiguous bands, worst first.
    categories = [key[0] for key in sorted(all_keys)]
    bands = [c for i, c in enumerate(categories) if i == 0 or categories[i - 1] != c]
    assert bands == list(range(9))


# --- ordering -------------------------------------------------------------------------


def test_wheel_is_the_lowest_straight() -> None:
    wheel = ev("AC 2D 3H 4S 5C")
    assert wheel == (STRAIGHT, 3)
    assert wheel < ev("2C 3D 4H 5S 6C")
    assert wheel > ev("AC AD AH KS QC")  # still a straight, above any trips
    assert ev("6C 7D 8H 9S TC") < ev("TD JD QH KS AC") == (STRAIGHT, 12)


def test_steel_wheel_is_the_lowest_straight_flush() -> None:
    steel = ev("AH 2H 3H 4H 5H")
    assert steel == (STRAIGHT_FLUSH, 3)
    assert steel < ev("2H 3H 4H 5H 6H")
    assert steel > ev("AC AD AH AS KC")
    assert ev("KH QH JH TH 9H") < ev("AH KH QH JH TH")


@pytest.mark.parametrize(
    "text",
    ["QC KD AH 2S 3C", "KC AD 2H 3S 4C", "JC QD KH AS 2C"],
)
def test_straights_do_not_wrap(text: str) -> None:
    assert ev(text)[0] == HIGH_CARD
    suited = " ".join(card[0] + "S" for card in text.split())
    assert ev(suited)[0] == FLUSH


@pytest.mark.parametrize(
    ("better", "worse"),
    [
        ("AC AD KH 7S 2C", "AH AS QH JS TC"),  # pair: first kicker
        ("AC AD KH 7S 3C", "AH AS KD 7C 2D"),  # pair: last kicker
        ("3C 3D 2H 2S 4C", "AC AD KH QS JD"),  # category beats ranks
        ("KC KD 3H 3S 5C", "KH KS 3C 3D 4D"),  # two pair: kicker
        ("KC KD 4H 4S 2C", "KH KS 3C 3D AD"),  # two pair: low pair before kicker
        ("AC AD 2H 2S 3C", "KH KS QC QD JD"),  # two pair: high pair first
        ("7C 7D 7H AS 2C", "7C 7D 7H KS QC"),  # trips: first kicker
        ("7C 7D 7H 9S 3C", "7C 7D 7H 9S 2C"),  # trips: second kicker
        ("4C 4D 4H 2S 2C", "3C 3D 3H AS AC"),  # full house: trips decide
        ("4C 4D 4H AS AC", "4C 4D 4H KS KC"),  # full house: then the pair
        ("9C 9D 9H 9S 3C", "9C 9D 9H 9S 2C"),  # quads: kicker
        ("2C 2D 2H 2S 3C", "AC AD AH KS KC"),  # quads beat any full house
        ("AH 9H 7H 5H 3H", "AS 9S 7S 5S 2S"),  # flush: down to the fifth card
        ("2H 3H 4H 5H 7H", "AC KD QH JS 9C"),  # worst flush beats best high card
        ("AC QD 9H 5S 3C", "AH QS 9C 5D 2D"),  # high card: fifth card
        ("6C 5D 4H 3S 2C", "AC AD AH KS QC"),  # six-high straight beats trips
    ],
)
def test_ordering(better: str, worse: str) -> None:
    assert ev(better) > ev(worse)
    better_cards, worse_cards = parse_cards(better.split()), parse_cards(worse.split())
    if not set(better_cards) & set(worse_cards):  # both could come from one deck
        assert best_hands({"x": worse_cards, "y": better_cards}) == ["y"]
        assert best_hands({"y": better_cards, "x": worse_cards}) == ["y"]


def test_suits_never_break_ties() -> None:
    assert ev("AC KD QH JS 9C") == ev("AS KH QD JC 9D")
    assert ev("AS KS QS JS TS") == ev("AH KH QH JH TH")


def test_key_shapes() -> None:
    assert ev("QC QD QH 5S 5C") == (FULL_HOUSE, 10, 3)
    assert ev("5C 5D 5H QS QC") == (FULL_HOUSE, 3, 10)
    assert ev("2C 2D 9H 9S KC") == (TWO_PAIR, 7, 0, 11)
    assert ev("8C 2D 8H 5S KC") == (PAIR, 6, 11, 3, 0)
    assert ev("JC JD JH JS 4C") == (FOUR_OF_A_KIND, 9, 2)


def test_category_name() -> None:
    assert [category_name((c,)) for c in range(9)] == list(CATEGORY_NAMES)
    assert category_name(ev("AS KS QS JS TS")) == "straight flush"
    assert category_name(ev("AC 2D 3H 4S 5C")) == "straight"
    assert category_name(ev("QC KD AH 2S 3C")) == "high card"
    for bad in [(), (9, 1), (-1,), ("flush",)]:
        with pytest.raises(PokerError, match="not a poker hand key"):
            category_name(bad)


# --- invalid input --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "message"),
    [
        ([0, 1, 2, 3], "exactly 5 cards, got 4"),
        ([0, 1, 2, 3, 4, 5], "exactly 5 cards, got 6"),
        ([], "exactly 5 cards, got 0"),
        ([0, 1, 2, 3, JOKER], "no jokers"),
        ([0, 1, 2, 3, 3], "duplicate card 2S"),
        ([0, 1, 2, 3, 53], "not a card integer: 53"),
        ([0, 1, 2, 3, -1], "not a card integer: -1"),
        ([0, 1, 2, 3, 4.0], "not a card integer: 4.0"),
        ([0, 1, 2, 3, True], "not a card integer: True"),
        ([0, 1, 2, 3, "AS"], "not a card integer: 'AS'"),
        ("AS KS", "not 'AS KS'"),
    ],
)
def test_invalid_hands(cards: list[object], message: str) -> None:
    with pytest.raises(PokerError, match=message) as info:
        evaluate(cards)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)


def test_numpy_cards_are_cards() -> None:
    cards = parse_cards(["AH", "KH", "QH", "JH", "TH"])
    assert evaluate(np.array(cards, dtype=np.int8)) == evaluate(cards) == (STRAIGHT_FLUSH, 12)
    assert evaluate(tuple(reversed(cards))) == (STRAIGHT_FLUSH, 12)


# --- best_hands -----------------------------------------------------------------------


def test_best_hands_ties_in_input_order() -> None:
    hands = {
        "dan": parse_cards(["KH", "KS", "3C", "3D", "8D"]),
        "ann": parse_cards(["9C", "9D", "4H", "4S", "2C"]),
        "bob": parse_cards(["KC", "KD", "3H", "3S", "8C"]),
    }
    assert best_hands(hands) == ["dan", "bob"]
    assert best_hands(dict(reversed(hands.items()))) == ["bob", "dan"]
    assert best_hands({"solo": parse_cards(["2C", "3D", "4H", "5S", "7C"])}) == ["solo"]


def test_best_hands_rejects_bad_input() -> None:
    with pytest.raises(PokerError, match="no hands"):
        best_hands({})
    with pytest.raises(PokerError, match="AS declared by both ann and bob"):
        best_hands(
            {
                "ann": parse_cards(["AS", "KD", "QC", "JH", "9C"]),
                "bob": parse_cards(["AS", "2D", "3C", "4H", "6C"]),
            }
        )
    with pytest.raises(PokerError, match="no jokers"):
        best_hands({"ann": parse_cards(["AS", "KD", "QC", "JH", "JK"])})


# --- split_pot ------------------------------------------------------------------------

SEATS = ["s0", "s1", "s2", "s3", "s4"]


@pytest.mark.parametrize(
    ("pot", "winners", "first", "expected"),
    [
        (9, ["s1", "s3", "s4"], "s0", {"s1": 3, "s3": 3, "s4": 3}),
        (10, ["s1", "s3", "s4"], "s0", {"s1": 4, "s3": 3, "s4": 3}),
        (11, ["s1", "s3", "s4"], "s0", {"s1": 4, "s3": 4, "s4": 3}),
        (11, ["s1", "s3", "s4"], "s4", {"s1": 4, "s3": 3, "s4": 4}),  # wraps past s4
        (10, ["s4", "s1", "s3"], "s2", {"s1": 3, "s3": 4, "s4": 3}),  # walk, not list order
        (10, ["s1", "s3", "s4"], "s1", {"s1": 4, "s3": 3, "s4": 3}),  # first seat inclusive
        (5, ["s2"], "s3", {"s2": 5}),
        (0, ["s0", "s1"], "s1", {"s0": 0, "s1": 0}),
        (2, SEATS, "s3", {"s0": 0, "s1": 0, "s2": 0, "s3": 1, "s4": 1}),  # MI-END use
    ],
)
def test_split_pot(pot: int, winners: list[str], first: str, expected: dict[str, int]) -> None:
    result = split_pot(pot, winners, SEATS, first)
    assert result == expected
    assert list(result) == [s for s in SEATS if s in winners]  # seat order, deterministic


@pytest.mark.parametrize(
    ("pot", "winners", "seats", "first", "message"),
    [
        (-1, ["s0"], SEATS, "s0", "whole number"),
        (2.0, ["s0"], SEATS, "s0", "whole number"),
        (True, ["s0"], SEATS, "s0", "whole number"),
        (3, [], SEATS, "s0", "at least one winner"),
        (3, ["s0", "s0"], SEATS, "s0", "winners repeat"),
        (3, ["s0", "zz"], SEATS, "s0", "not in the seat order"),
        (3, ["s0"], SEATS, "zz", "first seat 'zz'"),
        (3, ["s0"], ["s0", "s0"], "s0", "seat order repeats"),
    ],
)
def test_split_pot_rejects(
    pot: object, winners: list[str], seats: list[str], first: str, message: str
) -> None:
    with pytest.raises(PokerError, match=message):
        split_pot(pot, winners, seats, first)  # type: ignore[arg-type]


@given(
    pot=st.integers(0, 500),
    seats=st.integers(1, 8),
    data=st.data(),
)
def test_split_pot_properties(pot: int, seats: int, data: st.DataObject) -> None:
    order = [f"p{i}" for i in range(seats)]
    winners = data.draw(
        st.lists(st.sampled_from(order), min_size=1, unique=True), label="winners"
    )
    first = data.draw(st.sampled_from(order), label="first")
    result = split_pot(pot, winners, order, first)
    assert sorted(result) == sorted(winners)
    assert sum(result.values()) == pot
    share = pot // len(winners)
    assert set(result.values()) <= {share, share + 1}
    # The odd chips went to the first winners met from `first`, wrapping.
    start = order.index(first)
    walk = [s for s in order[start:] + order[:start] if s in winners]
    odd = pot % len(winners)
    assert [result[s] for s in walk] == [share + 1] * odd + [share] * (len(winners) - odd)


# --- invariance -----------------------------------------------------------------------

hands = st.lists(st.integers(0, 51), min_size=5, max_size=5, unique=True)


@given(cards=hands, order=st.permutations(range(5)), suits=st.permutations(range(4)))
def test_invariant_under_card_order_and_suit_permutation(
    cards: list[int], order: list[int], suits: list[int]
) -> None:
    key = evaluate(cards)
    reordered = [cards[i] for i in order]
    resuited = [make_card(rank_of(c), suits[suit_of(c)]) for c in reordered]
    assert evaluate(reordered) == key
    assert evaluate(resuited) == key
    is_flush = len({suit_of(c) for c in cards}) == 1
    assert (key[0] in (FLUSH, STRAIGHT_FLUSH)) == is_flush
    assert (len({suit_of(c) for c in resuited}) == 1) == is_flush


@given(cards=hands)
def test_breaking_a_flush_keeps_the_ranks(cards: list[int]) -> None:
    # Forcing all five suits equal turns high card into flush and straight into straight
    # flush with the same tie-break ranks; rank-repeating hands cannot be flushes.
    key = evaluate(cards)
    if len({rank_of(c) for c in cards}) < 5:
        return
    suited = evaluate([make_card(rank_of(c), 0) for c in cards])
    unsuited = evaluate([make_card(rank_of(c), i % 2) for i, c in enumerate(cards)])
    flush_of = {HIGH_CARD: FLUSH, STRAIGHT: STRAIGHT_FLUSH}
    assert unsuited[0] in flush_of
    assert suited == (flush_of[unsuited[0]], *unsuited[1:])
    assert key in (suited, unsuited)


def test_doctests() -> None:
    result = doctest.testmod(poker, raise_on_error=False, verbose=False)
    assert result.attempted >= 10
    assert result.failed == 0
