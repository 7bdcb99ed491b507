"""Five-card poker for Michigan's "three in one" phase (RULES.md §4, MI-POKER).

Before the stop phase each player declares five cards of his hand; the best poker hand
wins the poker pot, ties split it. This module is only that judgement: it knows poker
ranking and how a pot is shared, nothing about events, chips in play, or whose turn it is.

Ranking is the standard one, ace high, with ``A2345`` (the *wheel*) the lowest straight:
its high card is the 5. Straights do not wrap (``QKA23`` is ace high, not a straight),
and a royal flush is simply the highest straight flush. Suits never break ties.

:func:`evaluate` maps a hand to a tuple key; comparing keys compares hands, equal keys
are exact ties. The key is ``(category, *tie_break_ranks)``, ranks as rank indexes
(``2`` = 0 ... ``A`` = 12, see :mod:`..events.cards`), most significant first:

==  ===============  ======================================================
 8  straight flush   high card (the wheel's is the 5, index 3)
 7  four of a kind   quad rank, kicker
 6  full house       trips rank, pair rank
 5  flush            the five ranks, high to low
 4  straight         high card (the wheel's is the 5, index 3)
 3  three of a kind  trips rank, two kickers high to low
 2  two pair         high pair, low pair, kicker
 1  pair             pair rank, three kickers high to low
 0  high card        the five ranks, high to low
==  ===============  ======================================================

Every key of one category has the same length, so tuple comparison never compares a
rank against a missing element. The 2,598,960 five-card hands fall into exactly the
7,462 distinct keys poker knows (tests/test_poker.py enumerates them all).

Speed: the key of every rank multiset is computed once at import (6,175 non-flush
multisets plus 1,287 flush rank sets); :func:`evaluate` validates the cards, sums a
per-card weight into a rank signature and looks the key up, a few microseconds a hand.

>>> from rummyguard.events.cards import parse_cards
>>> def ev(text):
...     return evaluate(parse_cards(text.split()))
>>> ev("AH KH QH JH TH")
(8, 12)
>>> category_name(ev("AH KH QH JH TH"))
'straight flush'
>>> ev("5C 4D 3H 2S AC")          # the wheel: a straight whose high card is the 5
(4, 3)
>>> ev("5C 4D 3H 2S AC") < ev("6C 5D 4H 3S 2C")
True
>>> ev("QC KD AH 2S 3C")          # no wrap-around: ace high
(0, 12, 11, 10, 1, 0)
>>> ev("AC AD KH 7S 2C") > ev("AH AS QH JS TC")   # the first kicker decides
True
>>> best_hands({"ann": parse_cards("9C 9D 4H 4S 2C".split()),
...             "bob": parse_cards("KC KD 3H 3S 8C".split()),
...             "cy": parse_cards("KH KS 3C 3D 8D".split())})
['bob', 'cy']
>>> split_pot(7, ["bob", "cy"], ["ann", "bob", "cy"], "cy")
{'bob': 3, 'cy': 4}
>>> evaluate(parse_cards("AS AS KD QC JH".split()))
Traceback (most recent call last):
...
rummyguard.replay.rules.poker.PokerError: duplicate card AS in poker hand AS AS KD QC JH
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import combinations, combinations_with_replacement

from ...events.cards import JOKER, RA, format_card, rank_of, suit_of

__all__ = [
    "CATEGORY_NAMES",
    "FLUSH",
    "FOUR_OF_A_KIND",
    "FULL_HOUSE",
    "HIGH_CARD",
    "PAIR",
    "STRAIGHT",
    "STRAIGHT_FLUSH",
    "THREE_OF_A_KIND",
    "TWO_PAIR",
    "PokerError",
    "best_hands",
    "category_name",
    "evaluate",
    "split_pot",
]

HIGH_CARD, PAIR, TWO_PAIR, THREE_OF_A_KIND, STRAIGHT = 0, 1, 2, 3, 4
FLUSH, FULL_HOUSE, FOUR_OF_A_KIND, STRAIGHT_FLUSH = 5, 6, 7, 8

CATEGORY_NAMES: tuple[str, ...] = (
    "high card",
    "pair",
    "two pair",
    "three of a kind",
    "straight",
    "flush",
    "full house",
    "four of a kind",
    "straight flush",
)

HAND_SIZE = 5
_NATURALS = 52
_WHEEL = (RA, 3, 2, 1, 0)  # A 5 4 3 2 as rank indexes, high to low
_WHEEL_HIGH = 3  # the 5


class PokerError(ValueError):
    """Cards that are not a five-card Michigan poker hand, or a pot that cannot be split."""


# --- the tables ---------------------------------------------------------------------
#
# A hand's rank signature is the sum over its cards of 8**rank: three bits per rank hold
# that rank's count (at most 4 in one deck), so the sum identifies the rank multiset.
# Flush hands have five distinct ranks and are looked up in their own table.

_WEIGHT: tuple[int, ...] = tuple(1 << (3 * rank_of(c)) for c in range(_NATURALS))
_SUIT: tuple[int, ...] = tuple(suit_of(c) for c in range(_NATURALS))


def _straight_high(ranks_desc: tuple[int, ...]) -> int | None:
    """High card of five distinct ranks (high to low) if they form a straight, else None."""
    if ranks_desc[0] - ranks_desc[4] == 4:
        return ranks_desc[0]
    if ranks_desc == _WHEEL:
        return _WHEEL_HIGH
    return None


def _key_of(ranks: Sequence[int], flush: bool) -> tuple[int, ...]:
    """The key of a rank multiset; the single source of truth behind the lookup tables."""
    counts = Counter(ranks)
    # Most copies first, then higher rank: exactly the tie-break order of every category.
    groups = sorted(counts.items(), key=lambda rc: (rc[1], rc[0]), reverse=True)
    ordered = tuple(rank for rank, _ in groups)
    shape = tuple(n for _, n in groups)
    if shape == (1, 1, 1, 1, 1):
        high = _straight_high(ordered)
        if high is not None:
            return (STRAIGHT_FLUSH if flush else STRAIGHT, high)
        return (FLUSH if flush else HIGH_CARD, *ordered)
    if flush:
        raise AssertionError("a flush cannot repeat a rank in a single deck")
    category = {
        (4, 1): FOUR_OF_A_KIND,
        (3, 2): FULL_HOUSE,
        (3, 1, 1): THREE_OF_A_KIND,
        (2, 2, 1): TWO_PAIR,
        (2, 1, 1, 1): PAIR,
    }[shape]
    return (category, *ordered)


def _signature(ranks: Sequence[int]) -> int:
    return sum(1 << (3 * r) for r in ranks)


def _build_tables() -> tuple[dict[int, tuple[int, ...]], dict[int, tuple[int, ...]]]:
    plain: dict[int, tuple[int, ...]] = {}
    for ranks in combinations_with_replacement(range(13), HAND_SIZE):
        if max(Counter(ranks).values()) <= 4:
            plain[_signature(ranks)] = _key_of(ranks, flush=False)
    flush = {
        _signature(ranks): _key_of(ranks, flush=True)
        for ranks in combinations(range(13), HAND_SIZE)
    }
    return plain, flush


_PLAIN_KEYS, _FLUSH_KEYS = _build_tables()


# --- evaluation -----------------------------------------------------------------------


def _show(hand: Sequence[object]) -> str:
    """A hand for an error message, in card notation where the items are cards."""
    return " ".join(
        format_card(c) if type(c) is int and 0 <= c < _NATURALS else repr(c) for c in hand
    )


def _as_card(item: object, hand: Sequence[object]) -> int:
    """One card integer, or :class:`PokerError`; the slow path behind :func:`evaluate`."""
    if isinstance(item, bool) or not hasattr(item, "__index__"):
        raise PokerError(f"not a card integer: {item!r} in poker hand {_show(hand)}")
    card = operator.index(item)  # numpy integers and the like
    if card == JOKER:
        raise PokerError(f"Michigan has no jokers: JK in poker hand {_show(hand)}")
    if not 0 <= card < _NATURALS:
        raise PokerError(f"not a card integer: {item!r} in poker hand {_show(hand)}")
    return card


def _validated(cards: Sequence[int]) -> tuple[int, ...]:
    if isinstance(cards, str | bytes):
        raise PokerError(f"a poker hand is a sequence of card integers, not {cards!r}")
    hand = tuple(cards)
    if len(hand) != HAND_SIZE:
        raise PokerError(f"a poker hand is exactly 5 cards, got {len(hand)}: {_show(hand)}")
    for item in hand:
        if type(item) is not int or not 0 <= item < _NATURALS:
            hand = tuple(_as_card(c, hand) for c in hand)
            break
    if len(set(hand)) != HAND_SIZE:
        seen: set[int] = set()
        for c in hand:
            if c in seen:
                raise PokerError(f"duplicate card {format_card(c)} in poker hand {_show(hand)}")
            seen.add(c)
    return hand


def evaluate(cards: Sequence[int]) -> tuple[int, ...]:
    """The ranking key of exactly five distinct cards (higher is better, equal = tie).

    Raises :class:`PokerError` (a ``ValueError``) for anything but five distinct natural
    cards: a joker, a duplicate, a non-card integer, or the wrong number of cards.
    """
    return trusted_key(_validated(cards))


def trusted_key(cards: Sequence[int]) -> tuple[int, ...]:
    """:func:`evaluate` without the checks, for five distinct natural cards the caller
    already holds as such (the engine ranking a player's own hand's combinations: 1,287
    of them for 13 cards, where the checks cost more than the ranking)."""
    a, b, c, d, e = cards
    signature = _WEIGHT[a] + _WEIGHT[b] + _WEIGHT[c] + _WEIGHT[d] + _WEIGHT[e]
    if _SUIT[a] == _SUIT[b] == _SUIT[c] == _SUIT[d] == _SUIT[e]:
        return _FLUSH_KEYS[signature]
    return _PLAIN_KEYS[signature]


def category_name(key: Sequence[int]) -> str:
    """The category of a key from :func:`evaluate`, for findings and reports.

    >>> category_name((6, 12, 0))
    'full house'
    """
    if not key or type(key[0]) is not int or not 0 <= key[0] < len(CATEGORY_NAMES):
        raise PokerError(f"not a poker hand key: {key!r}")
    return CATEGORY_NAMES[key[0]]


def best_hands(hands: Mapping[str, Sequence[int]]) -> list[str]:
    """The names holding the best hand: one winner, or every tied winner in input order.

    The hands come from one 52-card deck, so a card declared by two players is an error,
    not a tie: the caller has a broken deal or log and must not pay a pot on it.
    """
    if not hands:
        raise PokerError("no hands to compare")
    keys: dict[str, tuple[int, ...]] = {}
    holder: dict[int, str] = {}
    for name, cards in hands.items():
        keys[name] = evaluate(cards)
        for card in _validated(cards):
            if card in holder:
                raise PokerError(
                    f"card {format_card(card)} declared by both {holder[card]} and {name}"
                )
            holder[card] = name
    best = max(keys.values())
    return [name for name, key in keys.items() if key == best]


# --- the pot --------------------------------------------------------------------------


def split_pot(
    pot: int, winners: list[str], seat_order: list[str], first_seat: str
) -> dict[str, int]:
    """Share ``pot`` chips among ``winners``: equal shares, then the odd chips.

    RULES.md §4 MI-POKER: "ties split, remainder one chip each in seat order from left of
    the dealer". Every winner gets ``pot // len(winners)``; the ``pot % len(winners)`` odd
    chips go one each to the winners met walking ``seat_order`` (wrapping) from
    ``first_seat`` inclusive. ``first_seat`` is where the walk starts, not a recipient
    unless it is a winner: for MI-POKER the caller passes the seat left of the dealer.
    MI-END's division of the pay-card chips among all players is the same rule with
    ``winners = seat_order`` and ``first_seat`` left of the last dealer.

    The result maps each winner to his chips, in seat order, and sums to ``pot``.

    >>> split_pot(10, ["a", "c", "d"], ["a", "b", "c", "d"], "b")
    {'a': 3, 'c': 4, 'd': 3}
    >>> split_pot(11, ["a", "c", "d"], ["a", "b", "c", "d"], "d")
    {'a': 4, 'c': 3, 'd': 4}
    """
    if type(pot) is not int or pot < 0:
        raise PokerError(f"a pot is a whole number of chips >= 0, got {pot!r}")
    if len(set(seat_order)) != len(seat_order):
        raise PokerError(f"seat order repeats a seat: {seat_order!r}")
    if first_seat not in seat_order:
        raise PokerError(f"first seat {first_seat!r} is not in the seat order {seat_order!r}")
    if not winners:
        raise PokerError("a pot needs at least one winner")
    if len(set(winners)) != len(winners):
        raise PokerError(f"winners repeat a seat: {winners!r}")
    strangers = [w for w in winners if w not in seat_order]
    if strangers:
        raise PokerError(f"winners not in the seat order: {strangers!r}")

    share, odd = divmod(pot, len(winners))
    start = seat_order.index(first_seat)
    walk = seat_order[start:] + seat_order[:start]
    winner_set = set(winners)
    in_walk_order = [seat for seat in walk if seat in winner_set]
    extra = set(in_walk_order[:odd])
    return {
        seat: share + (1 if seat in extra else 0) for seat in seat_order if seat in winner_set
    }
