"""How good a hand is, and how much one card would help it — fast, over count arrays.

The fraud facts need, for every discard and every other seat, "would this card have
helped that player, and by how much" (card feeding, hidden-card knowledge), and for
every move "how far is the mover from a finished hand" (decision difficulty, deal
strength). A game has ~100 such questions per seat, and a 100k-game scan leaves about
10 ms per game, so an exact meld-partition search (what the replay's
:func:`~rummyguard.replay.rules.melds.find_partition` does to check a declaration) is
far too slow. These are deliberately cheap, documented approximations:

``gain_vector(hand, family)`` — for each of the 53 cards, the *meld gain* the card
would give the hand, computed for all cards at once with numpy:

- 2: it completes a meld with cards already held (a third card of a rank in a new
  suit; the missing card of a run window of the family's minimum run length), or
  it is a wild card;
- 1: it makes a partial meld (a pair of a rank in two suits; two of a 3-card run
  window, three of a 4-card one (Liverpool), or the fourth suit of a set);
- 0: it joins nothing (or the hand already holds that exact card: sets need
  distinct suits, so a duplicate rarely helps).

``meld_distance(hand, family)`` — the number of cards not covered by complete melds
(runs and sets found greedily, the better of runs-first and sets-first, then each
wild card completing one partial meld). 0 means the hand is (about) finished. It is
the "deadwood count" a player would estimate by eye.

Families: ``classic`` and ``r500`` (jokers wild, runs >= 3, sets 3-4 distinct suits),
``liverpool`` (every 2 is wild, no jokers, runs >= 4, sets >= 3). Michigan is a stops
game without melds: :func:`family_of` returns None and callers skip meld facts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..events.cards import JOKER, NCARDS
from ..replay.rules.classic import MELD_RULES as CLASSIC_MELDS
from ..replay.rules.melds import find_partition

ACE = 12


@dataclass(frozen=True, slots=True)
class Family:
    """Meld parameters of a variant family."""

    name: str
    run_min: int
    wild_rank: int | None  # rank index whose cards are wild (Liverpool: the 2s), else None
    jokers_wild: bool
    #: a finished hand needs a run of at least this many cards (classic: CL-LONGRUN), 0: no
    long_run: int = 0


FAMILIES: dict[str, Family] = {
    "classic": Family("classic", 3, None, True, long_run=4),
    "r500": Family("r500", 3, None, True),
    "liverpool": Family("liverpool", 4, 0, False),
}


def family_of(variant: str) -> Family | None:
    """The meld family of a variant, or None for a variant without melds (Michigan)."""
    return FAMILIES.get(variant)


def is_wild(card: int, fam: Family) -> bool:
    if card == JOKER:
        return fam.jokers_wild
    return fam.wild_rank is not None and card // 4 == fam.wild_rank


_M13 = (1 << 13) - 1
_M14 = (1 << 14) - 1


def _raw_masks(nat: list[int], k: int, s: int) -> tuple[int, int]:
    """(gain-2, gain-1) rank masks of suit ``s`` *before* excluding held cards: what a
    card of that suit would add to the other cards of the hand. Run windows of length
    ``k`` (3 or 4) on the ace-low/high ladder (bit 0 = ace low, bit 13 = ace high), as
    explicit shifts: bit p of ``x >> d`` is bit p + d of x."""
    m = nat[s]
    a, b, c = nat[(s + 1) & 3], nat[(s + 2) & 3], nat[(s + 3) & 3]
    set2 = (a & b & ~c) | (a & c & ~b) | (b & c & ~a)
    set1 = (a ^ b ^ c) & ~set2
    lad = ((m << 1) | (m >> 12 & 1)) & _M14
    p1, p2, p3 = lad >> 1, lad >> 2, lad >> 3
    m1, m2, m3 = (lad << 1) & _M14, (lad << 2) & _M14, (lad << 3) & _M14
    if k == 3:
        r2 = (p1 & p2) | (m1 & p1) | (m1 & m2)
        r1 = p1 | p2 | m1 | m2
    else:  # k == 4: windows (+1,+2,+3) (-1,+1,+2) (-2,-1,+1) (-3,-2,-1)
        r2 = (p1 & p2 & p3) | (m1 & p1 & p2) | (m2 & m1 & p1) | (m3 & m2 & m1)
        r1 = ((p1 & p2) | (p1 & p3) | (p2 & p3) | (m1 & p1) | (m1 & p2) | (p1 & p2)
              | (m2 & m1) | (m2 & p1) | (m1 & p1) | (m3 & m2) | (m3 & m1) | (m2 & m1))
    run2 = ((r2 >> 1) & _M13) | ((r2 & 1) << 12)
    run1 = ((r1 >> 1) & _M13) | ((r1 & 1) << 12)
    two = set2 | run2
    return two & _M13, (set1 | run1) & ~two & _M13


def hand_masks(hand: list[int], fam: Family) -> tuple[list[int], int]:
    """(per-suit 13-bit rank masks of the natural cards held, number of wild cards)."""
    nat = [0, 0, 0, 0]
    wild = 0
    wr = fam.wild_rank
    for c in range(52):
        if hand[c]:
            r = c >> 2
            if r == wr:
                wild += hand[c]
            else:
                nat[c & 3] |= 1 << r
    if fam.jokers_wild and len(hand) > JOKER:
        wild += hand[JOKER]
    return nat, wild


def gain_masks(hand: list[int], fam: Family) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The meld gain of every card for ``hand`` as bit masks: (g2, g1), per suit a 13-bit
    rank mask of the cards of gain 2 and of gain 1 (gain 0 elsewhere; wild cards are
    handled by :func:`gain_of`). Pure integer bit operations: ~20x cheaper than a numpy
    pass, which matters at one call per hand change per game."""
    nat, _ = hand_masks(hand, fam)
    return masks_gain(nat, fam)


def masks_gain(nat: list[int], fam: Family) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """:func:`gain_masks` from the natural rank masks (held cards gain 0)."""
    k = fam.run_min
    keep = _M13 if fam.wild_rank is None else _M13 & ~(1 << fam.wild_rank)
    g2 = []
    g1 = []
    for s in range(4):
        two, one = _raw_masks(nat, k, s)
        free = keep & ~nat[s]
        g2.append(two & free)
        g1.append(one & free)
    return tuple(g2), tuple(g1)


def gain_of(masks: tuple[tuple[int, ...], tuple[int, ...]], card: int, fam: Family) -> int:
    """The meld gain (0, 1, 2) of ``card`` given :func:`gain_masks`."""
    if card == JOKER:
        return 2 if fam.jokers_wild else 0
    r = card >> 2
    if r == fam.wild_rank:
        return 2
    s = card & 3
    if masks[0][s] >> r & 1:
        return 2
    return 1 if masks[1][s] >> r & 1 else 0


def gain_sum(masks: tuple[tuple[int, ...], tuple[int, ...]], opts: list[int]) -> int:
    """Sum of the gains of the natural cards in ``opts`` (per-suit rank masks)."""
    g2, g1 = masks
    return sum(2 * (g2[s] & opts[s]).bit_count() + (g1[s] & opts[s]).bit_count() for s in range(4))


def own_values(nat: list[int], fam: Family) -> dict[int, int]:
    """{card: value} for every natural card held: the meld gain the card gives the rest
    of the hand (what keeping it is worth) — 2 in a meld, 1 in a partial meld, 0 loose.
    A card's value to the rest equals the raw gain at its own place (a window never
    counts the card itself, and the ace's two ladder places never share a window), so
    one pass over the hand serves every card; a duplicate is valued like its twin."""
    out: dict[int, int] = {}
    k = fam.run_min
    for s in range(4):
        m = nat[s]
        if not m:
            continue
        two, one = _raw_masks(nat, k, s)
        while m:
            low = m & -m
            m ^= low
            r = low.bit_length() - 1
            out[r * 4 + s] = 2 if two & low else (1 if one & low else 0)
    return out


def gain_vector(hand: list[int], fam: Family) -> np.ndarray:
    """Meld gain (0, 1, 2) of each of the 53 cards for ``hand`` (53 counts): the
    array form of :func:`gain_masks` (for analysts and tests)."""
    masks = gain_masks(hand, fam)
    held = [hand[c] > 0 for c in range(52)]
    out = np.zeros(NCARDS, dtype=np.int8)
    for c in range(52):
        out[c] = 0 if held[c] and c >> 2 != fam.wild_rank else gain_of(masks, c, fam)
    if fam.jokers_wild:
        out[JOKER] = 2
    return out


_RANKS_MASK = (1 << 13) - 1


def _run_cover(ranks: int, k: int) -> int:
    """Ranks (bits 0..12, ace = 12) of ``ranks`` lying in a run of >= k consecutive held
    cards on the ace-low/high ladder (ace low via ladder bit 0, never both ends at once).

    One layer holds one copy of each card, so its ace may serve the low run (``A23``) or
    the high run (``QKA``), not both: when both would use it, the reading that covers
    more cards is kept (``2 3 Q K A`` covers three cards, not five)."""
    if ranks.bit_count() < k:
        return 0
    mask = ((ranks << 1) | (ranks >> 12 & 1))  # ladder bits 0..13
    cover = _ladder_cover(mask, k)
    if cover & 1 and cover >> 13 & 1:  # the one ace in both runs: keep the better reading
        low = _ladder_cover(mask & ~(1 << 13), k)
        high = _ladder_cover(mask & ~1, k)
        cover = low if low.bit_count() >= high.bit_count() else high
    return ((cover >> 1) & _RANKS_MASK) | ((cover & 1) << 12)


def _ladder_cover(mask: int, k: int) -> int:
    """Ladder bits of ``mask`` lying in a window of >= k consecutive set bits."""
    w = mask
    for i in range(1, k):
        w &= mask >> i
    if not w:
        return 0
    cover = 0
    for i in range(k):
        cover |= w << i
    return cover & mask


def _popcount(x: int) -> int:
    return x.bit_count()


def _leftover(m1: list[int], m2: list[int], k: int, sets_first: bool
              ) -> tuple[list[int], list[int], int]:
    """Per-suit rank masks of the two copies left after greedy runs and sets, and how
    many more wild cards the melds found can take: many when there is a run (it grows
    at either end), else one per three-card set (a set holds at most four suits)."""
    a = list(m1)
    b = list(m2)
    room = [0]

    def runs() -> None:
        for s in range(4):
            ca, cb = _run_cover(a[s], k), _run_cover(b[s], k)
            if ca or cb:
                room[0] = _MANY
            a[s] &= ~ca
            b[s] &= ~cb

    def sets() -> None:
        # bit-parallel over ranks: a rank with cards in >= 3 suits is a set; one copy of
        # each of its suits leaves (the duplicate layer first, so runs keep the other)
        u0, u1, u2, u3 = (a[0] | b[0]), (a[1] | b[1]), (a[2] | b[2]), (a[3] | b[3])
        ge3 = (u0 & u1 & u2) | (u0 & u1 & u3) | (u0 & u2 & u3) | (u1 & u2 & u3)
        if not ge3:
            return
        ge4 = u0 & u1 & u2 & u3
        room[0] += (ge3 & ~ge4).bit_count()
        for s in range(4):
            in_set = ge3 & (a[s] | b[s])
            from_b = in_set & b[s]
            b[s] &= ~from_b
            a[s] &= ~(in_set & ~from_b)

    if sets_first:
        sets()
        runs()
    else:
        runs()
        sets()
    return a, b, room[0]


#: "as many wild cards as a hand holds": the room of a run
_MANY = 64


def _partials(a: list[int], b: list[int], runs: bool = True) -> int:
    """Disjoint two-card partial melds among the leftover cards (greedy, bit-parallel):
    pairs of a rank in two suits (two pairs from four suits), then, when one wild card
    makes a run of them (``runs``: the family's runs start at 3 cards), same-suit cards
    one or two ranks apart."""
    u0, u1, u2, u3 = a
    ge2 = (u0 & u1) | (u0 & u2) | (u0 & u3) | (u1 & u2) | (u1 & u3) | (u2 & u3)
    ge4 = u0 & u1 & u2 & u3
    n = ge2.bit_count() + ge4.bit_count()
    if not runs:
        return n
    for s in range(4):
        m = (a[s] | b[s]) & ~ge2
        while m:
            low = m & -m
            m ^= low
            near = m & ((low << 1) | (low << 2))
            if near:
                m ^= near & -near
                n += 1
    return n


def meld_distance(hand: list[int], fam: Family) -> int:
    """Approximate count of the hand's cards outside complete melds (0 = finished)."""
    wild = hand[JOKER] if fam.jokers_wild and len(hand) > JOKER else 0
    m1 = [0, 0, 0, 0]
    m2 = [0, 0, 0, 0]
    extra = 0  # copies beyond two (3+ decks): counted as deadwood
    wr = fam.wild_rank
    for c in range(52):
        n = hand[c]
        if not n:
            continue
        r = c >> 2
        if r == wr:
            wild += n
            continue
        bit = 1 << r
        m1[c & 3] |= bit
        if n >= 2:
            m2[c & 3] |= bit
            extra += n - 2
    k = fam.run_min
    best = -1
    for sets_first in (False, True):
        a, b, room = _leftover(m1, m2, k, sets_first)
        left = extra + sum(_popcount(x) for x in a) + sum(_popcount(x) for x in b)
        used = min(wild, _partials(a, b, runs=k <= 3)) if wild and left else 0
        left -= 2 * used
        # A wild card is a card too: one that completes no partial joins a meld with
        # room for it (each wild-completed meld takes one more), else it is deadwood.
        # (A run partial plus one wild is a meld only where runs start at 3 cards:
        # Liverpool's runs need 4 cards, 3 of them natural.)
        left += max(0, wild - used - room - used)
        if best < 0 or left < best:
            best = left
    if best <= 0 and fam.long_run and any(hand) and find_partition(
            hand, CLASSIC_MELDS, need_long_run=fam.long_run) is None:
        return 1  # every card melds, but the hand cannot be declared (no long run): not finished
    return max(best, 0)


__all__ = ["FAMILIES", "Family", "family_of", "gain_masks", "gain_of", "gain_sum", "gain_vector",
           "hand_masks", "is_wild", "masks_gain", "meld_distance", "own_values"]
