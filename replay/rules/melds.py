"""Shared meld logic: runs, sets, wild cards and what they stand for (RULES.md §0).

Cards are the ints of :mod:`rummyguard.events.cards`. Runs are valued 1..14 along the
rank ladder: ``A`` is 1 (low, ``A23``) or 14 (high, ``QKA``), never both (C-RUN: no
wrap-around). A run in the log is ordered low to high, so the position of a wild card
fixes what it stands for (C-WILD), with the spec's one exception, applied literally:

    "A run whose wild is at an end may name it with ``as``; without it, a wild at the
    low end stands for the card below only when the high end is A."

So unnamed wilds at the *low* end of the list extend the run *upward* past its high
end while that is below an ace, and only then downward (decided: applied one wild at
a time, innermost first). Wilds elsewhere are positional. A meld needs at least one
natural card (decided: otherwise nothing fixes what it is); variants may ask for more.

Decisions (audit of RULES.md §0, C-RUN / C-WILD):

- A lone natural ace written last (``JK JK AH``) is the high end, so the wilds stand
  below it: Q-K-A. The list runs low to high, so its last card is the run's top.
- ``as`` on a low-end wild that names the card its position gives (``JK JK 5H 6H``
  with ``as {"0": "3H"}``) anchors the low end there; the wilds between it and the
  first natural are then middle wilds and stand positionally (3-4-5-6).
- A wild written after an ace (``QH KH AH JK``) would stand above the ace: C-RUN
  (``run_wrap``), whether or not ``as`` names it.

Errors carry a short ``code``; each variant maps codes to its own rule IDs (a short
run is ``CL-MELDS`` in classic but ``LV-CONTRACT`` in Liverpool).

>>> from rummyguard.events.cards import parse_cards, JOKER
>>> rules = MeldRules(wild=frozenset({JOKER}))
>>> m = validate_meld("run", parse_cards(["JK", "5H", "6H"]), None, rules)
>>> [format_card(c) for c in m.stands]
['7H', '5H', '6H']
>>> m = validate_meld("run", parse_cards(["JK", "KH", "AH"]), None, rules)
>>> format_card(m.stands[0]), m.lo, m.hi
('QH', 12, 14)
>>> validate_meld("run", parse_cards(["KH", "AH", "2H"]), None, rules)
Traceback (most recent call last):
...
rummyguard.replay.rules.melds.MeldError: run_wrap: KH AH 2H wraps around the ace (no K-A-2)
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from mypy_extensions import mypyc_attr

from ...events.cards import (
    JOKER,
    NCARDS,
    format_card,
    make_card,
    parse_card,
    parse_cards,
    rank_of,
    suit_of,
)

ACE = 12  # rank index of the ace


class MeldError(ValueError):
    """A meld that breaks the meld rules; ``code`` names which one."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@mypyc_attr(native_class=False)  # a plain class when compiled (setup.py): copies, pickles as is
@dataclass(frozen=True, slots=True)
class MeldRules:
    """What a variant accepts as a meld."""

    wild: frozenset[int] = frozenset({JOKER})
    run_min: int = 3
    set_min: int = 3
    set_max: int | None = 4
    set_distinct_suits: bool = True
    #: the distinct suits are the naturals' only (Liverpool, LV-CONTRACT: "naturals of different
    #: suits"): what a set's wild is named does not count, so ``5C 5D 2H`` with the 2
    #: named 5C is a set (two decks hold a second 5C), and a natural 5H may join a set
    #: whose wild was named 5H (audit 40). Elsewhere "all suits different" (classic) and
    #: sets of at most 4 from one deck (Rummy 500) count a named wild's suit too.
    set_suits_naturals_only: bool = False
    run_min_naturals: int = 1
    set_min_naturals: int = 1


@mypyc_attr(native_class=False)  # a plain class when compiled (setup.py): copies, pickles as is
@dataclass(slots=True)
class Meld:
    """A meld on the table (or in a declaration), with what each card stands for.

    ``stands[i]`` is the natural card that ``cards[i]`` stands for, or ``-1`` for an
    unnamed wild in a set (any suit of the set's rank not already present).
    For runs ``lo``/``hi`` are ladder values 1..14 and ``suit`` the run's suit; for sets
    ``rank`` is the rank index.
    """

    kind: str
    cards: list[int]
    stands: list[int]
    owner: int = -1
    suit: int = -1
    lo: int = 0
    hi: int = 0
    rank: int = -1
    #: cards each seat laid off on this meld (for scoring laid-off points)
    contributed: dict[int, list[int]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        out: dict = {
            "kind": self.kind,
            "cards": [format_card(c) for c in self.cards],
            "stands": [format_card(c) if c >= 0 else None for c in self.stands],
            "owner": self.owner,
        }
        return out


def ladder_card(value: int, suit: int) -> int:
    """Ladder value 1..14 and a suit -> card (1 and 14 are both the ace)."""
    return make_card(ACE if value in (1, 14) else value - 2, suit)


def _values(rank: int) -> tuple[int, ...]:
    return (1, 14) if rank == ACE else (rank + 2,)


def _text(cards: Sequence[int]) -> str:
    return " ".join(format_card(c) for c in cards)


def validate_meld(
    kind: str,
    cards: Sequence[int],
    as_map: Mapping[int, int] | None,
    rules: MeldRules,
) -> Meld:
    """Check one meld; return it with what every card stands for, or raise MeldError."""
    if not as_map:  # nothing named: the fast paths, without the copies of ``as``
        if rules.wild.isdisjoint(cards):
            if kind == "run":
                meld = _natural_run(list(cards), rules)
            elif kind == "set":
                meld = _natural_set(list(cards), rules)
            else:
                meld = None
        elif kind == "run":
            meld = _wild_run(list(cards), rules)
        elif kind == "set":
            meld = _wild_set(list(cards), rules)
        else:
            meld = None
        if meld is not None:
            return meld
    if kind == "run":
        return _validate_run(list(cards), dict(as_map or {}), rules)
    if kind == "set":
        return _validate_set(list(cards), dict(as_map or {}), rules)
    raise MeldError("kind", f"unknown meld kind {kind!r}")


def _check_as_keys(cards: list[int], as_map: dict[int, int], rules: MeldRules) -> None:
    for index, named in as_map.items():
        if not 0 <= index < len(cards):
            raise MeldError("wild_as", f"`as` names position {index}, outside the meld")
        if cards[index] not in rules.wild:
            raise MeldError(
                "wild_as", f"`as` names position {index} ({format_card(cards[index])}), not a wild"
            )
        if named in rules.wild and named == JOKER:
            raise MeldError("wild_as", "`as` must name a natural card")


def _natural_run(cards: list[int], rules: MeldRules) -> Meld | None:
    """The common case of :func:`_validate_run` without its general machinery: a run of
    naturals only, in one suit, written low to high (ace low only as its first card).
    None = not that case (the general path decides, and words any error)."""
    n = len(cards)
    if not cards or n < rules.run_min or n < rules.run_min_naturals:
        return None
    first = cards[0]
    suit = first & 3
    rank = first >> 2
    if rank == ACE:  # A-2-3...: the ace is 1
        lo, expect = 1, 0
    else:
        lo, expect = rank + 2, rank + 1
    for c in cards[1:]:
        if c != (expect << 2 | suit) or expect > ACE:
            return None
        expect += 1
    hi = lo + n - 1
    if hi > 14 or (lo == 1 and n > 13):
        return None
    return Meld("run", cards, list(cards), suit=suit, lo=lo, hi=hi)


def _wild_run(cards: list[int], rules: MeldRules) -> Meld | None:
    """The common case of :func:`_general_run` with unnamed wilds: the first card is a
    natural other than an ace, so it fixes the run's low end (its value) and every
    wild stands where its position puts it; the run must stay at or below the ace.
    Gives what the general path gives; None = not that case, or an error (the general
    path decides, and words it)."""
    n = len(cards)
    wild = rules.wild
    first = cards[0] if cards else JOKER
    if first in wild or n < rules.run_min:
        return None
    rank = first >> 2
    if rank >= ACE:
        return None
    suit = first & 3
    lo = rank + 2
    hi = lo + n - 1
    if hi > 14:
        return None
    naturals = 0
    stands = []
    for i, c in enumerate(cards):
        v = lo + i
        if c in wild:
            stands.append(((ACE if v == 14 else v - 2) << 2) | suit)
            continue
        # the natural of value v in the suit (the ace, value 14, is rank ACE)
        if c & 3 != suit or (c >> 2) + 2 != v:
            return None
        naturals += 1
        stands.append(c)
    if naturals < rules.run_min_naturals:
        return None
    return Meld("run", cards, stands, suit=suit, lo=lo, hi=hi)


def _validate_run(cards: list[int], as_map: dict[int, int], rules: MeldRules) -> Meld:
    if not as_map and rules.wild.isdisjoint(cards):
        meld = _natural_run(cards, rules)
        if meld is not None:
            return meld
    return _general_run(cards, as_map, rules)


def _general_run(cards: list[int], as_map: dict[int, int], rules: MeldRules) -> Meld:
    wild = rules.wild
    n = len(cards)
    _check_as_keys(cards, as_map, rules)
    naturals = [(i, c) for i, c in enumerate(cards) if c not in wild]
    if len(naturals) < max(1, rules.run_min_naturals):
        raise MeldError(
            "run_naturals",
            f"run {_text(cards)} has {len(naturals)} natural cards, needs {max(1, rules.run_min_naturals)}",
        )
    if n < rules.run_min:
        raise MeldError("run_short", f"run {_text(cards)} has {n} cards, needs {rules.run_min}")
    suit = suit_of(naturals[0][1])
    if any(suit_of(c) != suit for _, c in naturals):
        raise MeldError("run_suit", f"run {_text(cards)} mixes suits")
    # Position -> value: try each reading of the first natural (an ace is 1 or 14). A
    # lone natural ace written last is the run's high end (``JK JK AH`` is Q-K-A): the
    # list runs low to high, so the card at its top is the top of the run.
    i0, c0 = naturals[0]
    readings = _values(rank_of(c0))
    if len(naturals) == 1 and i0 == n - 1 and len(readings) == 2:
        readings = readings[::-1]
    start = None
    for v0 in readings:
        s = v0 - i0
        if all((s + i) in _values(rank_of(c)) for i, c in naturals):
            start = s
            break
    if start is None:
        ranks = [rank_of(c) for _, c in naturals]
        wrapped = any(r == ACE for r in ranks) and _consecutive_mod13(naturals)
        if wrapped:
            raise MeldError("run_wrap", f"{_text(cards)} wraps around the ace (no K-A-2)")
        raise MeldError("run_gap", f"run {_text(cards)} is not consecutive")
    values = [start + i for i in range(n)]
    if values[-1] > 14:  # wilds written after the ace: nothing is above it (C-RUN)
        raise MeldError("run_wrap", f"run {_text(cards)} runs past the ace")
    lead = 0
    while lead < n and cards[lead] in wild:
        lead += 1
    # A low-end wild that `as` names as the card its position gives (the one below the
    # run) anchors the run's low end there: the wilds between it and the first natural
    # are then middle wilds, positional like any other (``JK JK 5H 6H`` with
    # ``as {0: 3H}`` is 3-4-5-6).
    anchor = next(
        (i for i in range(lead) if i in as_map and suit_of(as_map[i]) == suit
         and values[i] in _values(rank_of(as_map[i]))),
        lead,
    )
    # Unnamed wilds outside the anchor: extended upward while the high end is below A,
    # then downward (innermost first).
    hi = values[-1]
    lo = values[anchor]
    for i in range(anchor - 1, -1, -1):
        if i in as_map:
            continue
        if hi < 14:
            hi += 1
            values[i] = hi
        else:
            lo -= 1
            values[i] = lo
    # Named wilds (anywhere): the name must be in the run's suit; wilds from the anchor
    # on stand where their position puts them.
    for i, named in as_map.items():
        if suit_of(named) != suit:
            raise MeldError("wild_as", f"`as` {format_card(named)} is not in the run's suit")
        options = _values(rank_of(named))
        if i >= anchor:
            if values[i] not in options:
                raise MeldError(
                    "wild_as",
                    f"the wild at position {i} stands for {format_card(ladder_card(values[i], suit))}, "
                    f"not {format_card(named)}",
                )
        else:
            values[i] = options[0] if len(options) == 1 else (1 if values[lead] <= 7 else 14)
    ordered = sorted(values)
    if ordered[0] < 1 or ordered[-1] > 14:
        raise MeldError("run_wrap", f"run {_text(cards)} runs past the ace")
    if any(b != a + 1 for a, b in itertools.pairwise(ordered)):
        raise MeldError("wild_as", f"run {_text(cards)}: its wilds do not make it consecutive")
    if ordered[0] == 1 and ordered[-1] == 14:
        raise MeldError("run_wrap", f"run {_text(cards)} uses the ace both low and high")
    stands = [c if c not in wild else ladder_card(values[i], suit) for i, c in enumerate(cards)]
    return Meld("run", cards, stands, suit=suit, lo=ordered[0], hi=ordered[-1])


def _consecutive_mod13(naturals: list[tuple[int, int]]) -> bool:
    i0, c0 = naturals[0]
    r0 = rank_of(c0)
    return all((rank_of(c) - r0) % 13 == (i - i0) % 13 for i, c in naturals)


def _natural_set(cards: list[int], rules: MeldRules) -> Meld | None:
    """The common case of :func:`_validate_set`: naturals only, one rank, a legal size,
    suits distinct where required. None = not that case (the general path decides)."""
    n = len(cards)
    if (not cards or n < rules.set_min or n < rules.set_min_naturals
            or (rules.set_max is not None and n > rules.set_max)):
        return None
    rank = cards[0] >> 2
    if rank > ACE:
        return None
    suits = 0
    for c in cards:
        bit = 1 << (c & 3)
        if c >> 2 != rank or (suits & bit and rules.set_distinct_suits):
            return None
        suits |= bit
    return Meld("set", cards, list(cards), rank=rank)


def _wild_set(cards: list[int], rules: MeldRules) -> Meld | None:
    """The common case of :func:`_general_set` with unnamed wilds: naturals of one rank
    (suits distinct where required), enough of them, a legal size; each wild stands
    for ``-1`` (any missing suit). None = not that case (the general path decides)."""
    n = len(cards)
    if n < rules.set_min or (rules.set_max is not None and n > rules.set_max):
        return None
    wild = rules.wild
    rank = -1
    suits = 0
    naturals = 0
    stands = []
    for c in cards:
        if c in wild:
            stands.append(-1)
            continue
        bit = 1 << (c & 3)
        if rank < 0:
            rank = c >> 2
            if rank > ACE:
                return None
        elif c >> 2 != rank:
            return None
        if suits & bit and rules.set_distinct_suits:
            return None
        suits |= bit
        naturals += 1
        stands.append(c)
    if naturals < max(1, rules.set_min_naturals):
        return None
    return Meld("set", cards, stands, rank=rank)


def _validate_set(cards: list[int], as_map: dict[int, int], rules: MeldRules) -> Meld:
    if not as_map and rules.wild.isdisjoint(cards):
        meld = _natural_set(cards, rules)
        if meld is not None:
            return meld
    return _general_set(cards, as_map, rules)


def _general_set(cards: list[int], as_map: dict[int, int], rules: MeldRules) -> Meld:
    wild = rules.wild
    n = len(cards)
    _check_as_keys(cards, as_map, rules)
    naturals = [c for c in cards if c not in wild]
    if len(naturals) < max(1, rules.set_min_naturals):
        raise MeldError(
            "set_naturals",
            f"set {_text(cards)} has {len(naturals)} natural cards, needs {max(1, rules.set_min_naturals)}",
        )
    rank = rank_of(naturals[0])
    if any(rank_of(c) != rank for c in naturals):
        raise MeldError("set_rank", f"set {_text(cards)} mixes ranks")
    if n < rules.set_min or (rules.set_max is not None and n > rules.set_max):
        most = f"-{rules.set_max}" if rules.set_max is not None else "+"
        raise MeldError("set_size", f"set {_text(cards)} has {n} cards, needs {rules.set_min}{most}")
    suits = [suit_of(c) for c in naturals]
    for i, named in as_map.items():
        if rank_of(named) != rank:
            raise MeldError("wild_as", f"`as` {format_card(named)} is not of the set's rank")
        if not rules.set_suits_naturals_only:
            suits.append(suit_of(named))
        del i
    if rules.set_distinct_suits and len(set(suits)) != len(suits):
        raise MeldError("set_suits", f"set {_text(cards)} repeats a suit")
    stands = [
        c if c not in wild else (as_map.get(i, -1)) for i, c in enumerate(cards)
    ]
    return Meld("set", cards, stands, rank=rank)


def parse_as(as_payload: Mapping[str, str] | None) -> dict[int, int] | None:
    """The event's ``as`` object (``{"0": "4H"}``) -> ``{0: card}``."""
    if not as_payload:
        return None
    return {int(k): parse_card(v) for k, v in as_payload.items()}


#: what :class:`KnownMelds` keeps of a valid meld: (cards, stands, suit, lo, hi, rank)
_MeldFields = tuple[tuple[int, ...], tuple[int, ...], int, int, int, int]


class KnownMelds:
    """The valid melds with nothing named (no ``as``) that one rule set has seen, by
    kind and card codes as the event writes them.

    A clean declaration's melds repeat across games (a few thousand distinct ones in
    a world of classic games), and parsing plus checking a meld costs several times
    a look-up, so each is checked once: :meth:`meld` gives a fresh :class:`Meld`,
    equal to what ``validate_meld(kind, parse_cards(codes), None, rules)`` returns.
    Only valid melds are kept: a bad code or a meld that breaks a rule takes the
    checks every time and raises their own errors. Bounded (emptied when full), and
    the answers do not depend on what is kept, so replays stay deterministic.
    """

    __slots__ = ("_known", "_limit", "rules")

    def __init__(self, rules: MeldRules, limit: int = 1 << 15) -> None:
        self.rules = rules
        self._limit = limit
        self._known: dict[tuple[object, tuple[object, ...]], _MeldFields] = {}

    def meld(self, kind: str, codes: Sequence[str]) -> Meld:
        """The meld ``kind`` of card ``codes``; raises CardError (a bad code) or
        MeldError (a meld rule) exactly as parsing and :func:`validate_meld` do."""
        try:
            key = (kind, tuple(codes))
            known = self._known.get(key)
        except TypeError:  # not a list of codes, or an unhashable kind: the checks say
            key, known = None, None
        if known is not None:
            cards, stands, suit, lo, hi, rank = known
            return Meld(kind, list(cards), list(stands), suit=suit, lo=lo, hi=hi, rank=rank)
        meld = validate_meld(kind, parse_cards(codes), None, self.rules)
        if key is not None:
            if len(self._known) >= self._limit:
                self._known.clear()
            self._known[key] = (tuple(meld.cards), tuple(meld.stands), meld.suit, meld.lo,
                                meld.hi, meld.rank)
        return meld


# --- extending melds on the table (lay-offs) -------------------------------------------


def layoff_position(meld: Meld, card: int, end: str | None, rules: MeldRules) -> int | None:
    """Where ``card`` fits on ``meld`` (a ladder value for runs, the rank for sets),
    or None if it does not. For runs ``end`` picks the end (required when a wild could
    fit either end); a natural must be the next card of the run's suit at that end.
    """
    if meld.kind == "set":
        if card in rules.wild:
            return meld.rank
        if rank_of(card) != meld.rank:
            return None
        if rules.set_max is not None and len(meld.cards) + 1 > rules.set_max:
            return None
        if rules.set_distinct_suits:
            if rules.set_suits_naturals_only:
                present = {suit_of(c) for c in meld.cards if c not in rules.wild}
            else:
                present = {suit_of(s) for s in meld.stands if s >= 0}
            if suit_of(card) in present:
                return None
        return meld.rank
    low_value, high_value = meld.lo - 1, meld.hi + 1
    if card in rules.wild:
        if end == "low":
            return low_value if low_value >= 1 and not (low_value == 1 and meld.hi == 14) else None
        if end == "high":
            return high_value if high_value <= 14 and not (high_value == 14 and meld.lo == 1) else None
        return None
    if suit_of(card) != meld.suit:
        return None
    options = _values(rank_of(card))
    fits = []
    if low_value in options and low_value >= 1 and not (low_value == 1 and meld.hi == 14):
        fits.append(("low", low_value))
    if high_value in options and high_value <= 14 and not (high_value == 14 and meld.lo == 1):
        fits.append(("high", high_value))
    for side, value in fits:
        if end is None or end == side:
            return value
    return None


def apply_layoff(meld: Meld, card: int, value: int, seat: int, rules: MeldRules) -> None:
    """Add ``card`` at ladder ``value`` (runs) or to the set; record who laid it off."""
    meld.contributed.setdefault(seat, []).append(card)
    if meld.kind == "set":
        meld.cards.append(card)
        meld.stands.append(card if card not in rules.wild else -1)
        return
    stand = card if card not in rules.wild else ladder_card(value, meld.suit)
    if value < meld.lo:
        meld.lo = value
        meld.cards.insert(0, card)
        meld.stands.insert(0, stand)
    else:
        meld.hi = value
        meld.cards.append(card)
        meld.stands.append(stand)


# --- whole-hand partitions (classic's Rummy declaration) --------------------------------


def counts(cards: Sequence[int]) -> list[int]:
    out = [0] * NCARDS
    for c in cards:
        out[c] += 1
    return out


def find_partition(
    hand: Sequence[int],
    rules: MeldRules,
    *,
    need_long_run: int = 0,
    long_run_allows_wild: bool = True,
) -> list[tuple[str, list[int]]] | None:
    """Partition the multiset ``hand`` (53 counts) into valid melds, or None.

    A depth-first search that always covers the lowest natural card left, trying the
    sets and runs through it (wilds filling gaps); wilds left at the end join any meld
    that can take them. ``need_long_run``: at least one run of that many cards (with
    ``long_run_allows_wild`` False, a run with no wild card at all: CL-LONGRUN). Used
    by the simulator to find a declaration; the replay only *checks* declared partitions.
    """
    hand = list(hand)
    wild_cards = [w for w in sorted(rules.wild) if hand[w] > 0]
    nwild = sum(hand[w] for w in wild_cards)
    return _search(hand, wild_cards, nwild, rules, need_long_run, long_run_allows_wild, [])


def _take_wild(hand: list[int], wild_cards: list[int]) -> int | None:
    for w in wild_cards:
        if hand[w] > 0:
            hand[w] -= 1
            return w
    return None


def _search(
    hand: list[int], wild_cards: list[int], nwild: int, rules: MeldRules, need_long: int,
    long_wild_ok: bool, melds: list[tuple[str, list[int]]],
) -> list[tuple[str, list[int]]] | None:
    first = next((c for c in range(52) if hand[c] > 0 and c not in rules.wild), None)
    if first is None:
        if nwild:
            placed = _place_wilds(hand, wild_cards, rules, melds)
            if placed is None:
                return None
            melds = placed
        if need_long and not any(
            k == "run"
            and len(cs) >= need_long
            and (long_wild_ok or not any(c in rules.wild for c in cs))
            for k, cs in melds
        ):
            return None
        return list(melds)
    rank, suit = rank_of(first), suit_of(first)
    # sets through `first`
    same_rank = [make_card(rank, s) for s in range(4) if hand[make_card(rank, s)] > 0]
    others = [c for c in same_rank if c != first]
    set_sizes = range(rules.set_min, (rules.set_max or rules.set_min + 2) + 1)
    for size in set_sizes:
        for wilds in range(0, min(nwild, size - 1) + 1):
            k = size - wilds  # naturals, `first` included
            if k < max(1, rules.set_min_naturals):
                continue
            for combo in combinations(others, k - 1):
                naturals = [first, *combo]
                for c in naturals:
                    hand[c] -= 1
                used = [w for _ in range(wilds) if (w := _take_wild(hand, wild_cards)) is not None]
                result = _search(
                    hand, wild_cards, nwild - wilds, rules, need_long, long_wild_ok,
                    [*melds, ("set", naturals + used)],
                )
                for c in naturals + used:
                    hand[c] += 1
                if result is not None:
                    return result
    # runs starting at `first` (as the lowest natural; wilds below it are tried via ace/low),
    # and runs through `first` that start at its suit's ace, low (A-2-3: the ace's card
    # number is the suit's highest, so it is never `first` while a 2 or a 3 is held)
    starts = [(first, v0) for v0 in _values(rank)]
    ace = make_card(ACE, suit)
    if ace != first and hand[ace] > 0:
        starts.append((ace, 1))
    for start, v0 in starts:
        for lead in range(0, min(nwild, 2) + 1):
            run_cards: list[int] = []
            used_wild = 0
            taken: list[int] = []
            for _ in range(lead):
                w = _take_wild(hand, wild_cards)
                if w is None:
                    break
                taken.append(w)
                run_cards.append(w)
                used_wild += 1
            if len(taken) < lead or v0 - lead < 1:
                for w in taken:
                    hand[w] += 1
                continue
            hand[start] -= 1
            run_cards.append(start)
            taken.append(start)
            v = v0
            result = None
            while True:
                if len(run_cards) >= rules.run_min:
                    ok = True
                    if lead and v != 14:
                        ok = False  # leading wilds would read as extending upward
                    if ok:
                        result = _search(
                            hand, wild_cards, nwild - used_wild, rules, need_long, long_wild_ok,
                            [*melds, ("run", list(run_cards))],
                        )
                        if result is not None:
                            break
                v += 1
                if v > 14 or (v == 14 and v0 - lead == 1):
                    break
                nxt = ladder_card(v, suit)
                if hand[nxt] > 0:
                    hand[nxt] -= 1
                    taken.append(nxt)
                    run_cards.append(nxt)
                else:
                    w = _take_wild(hand, wild_cards)
                    if w is None:
                        break
                    taken.append(w)
                    run_cards.append(w)
                    used_wild += 1
            for c in taken:
                hand[c] += 1
            if result is not None:
                return result
    return None


def _place_wilds(
    hand: list[int], wild_cards: list[int], rules: MeldRules, melds: list[tuple[str, list[int]]]
) -> list[tuple[str, list[int]]] | None:
    """Attach leftover wilds to melds that can take them (runs at either end, sets);
    on failure every wild taken is given back, so the caller's hand stays intact."""
    out = [(k, list(cs)) for k, cs in melds]
    taken: list[int] = []
    while (w := _take_wild(hand, wild_cards)) is not None:
        taken.append(w)
        if not any(_attach(k, cs, w, rules) for k, cs in out):
            for t in taken:
                hand[t] += 1
            return None
    for t in taken:  # the caller restores the hand itself when it returns a partition
        hand[t] += 1
    return out


def _attach(kind: str, cards: list[int], wild: int, rules: MeldRules) -> bool:
    if kind == "set":
        if rules.set_max is None or len(cards) < rules.set_max:
            cards.append(wild)
            return True
        return False
    for candidate in ([*cards, wild], [wild, *cards]):
        try:
            validate_meld("run", candidate, None, rules)
        except MeldError:
            continue
        cards[:] = candidate
        return True
    return False
