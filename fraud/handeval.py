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
- 1: it makes a partial meld (a pair of a rank in two suits; two of a run window,
  or the fourth suit of a set);
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

ACE = 12


@dataclass(frozen=True, slots=True)
class Family:
    """Meld parameters of a variant family."""

    name: str
    run_min: int
    wild_rank: int | None  # rank index whose cards are wild (Liverpool: the 2s), else None
    jokers_wild: bool


FAMILIES: dict[str, Family] = {
    "classic": Family("classic", 3, None, True),
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


def gain_vector(hand: list[int], fam: Family) -> np.ndarray:
    """Meld gain (0, 1, 2) of each of the 53 cards for ``hand`` (53 counts)."""
    counts = np.asarray(hand[:52], dtype=np.int16).reshape(13, 4)
    held = counts > 0
    natural = held.copy()
    if fam.wild_rank is not None:
        natural[fam.wild_rank, :] = False
    # sets: other suits of the same rank held (naturals)
    per_rank = natural.sum(axis=1, keepdims=True)
    others = per_rank - natural
    set_gain = np.where(others == 2, 2, np.where((others == 1) | (others == 3), 1, 0))
    # runs on the ace-low/high ladder: position 0 = ace low, 1..13 = ranks 2..A
    k = fam.run_min
    ladder = np.vstack([natural[ACE:ACE + 1], natural]).astype(np.int16)  # (14, 4)
    pad = np.zeros((k - 1, 4), dtype=np.int16)
    lp = np.vstack([pad, ladder, pad])  # (14 + 2k - 2, 4)
    csum = np.vstack([np.zeros((1, 4), dtype=np.int16), np.cumsum(lp, axis=0)])
    windows = csum[k:] - csum[:-k]  # window sums starting at each padded position
    best = np.zeros((14, 4), dtype=np.int16)
    for off in range(k):  # window that holds ladder position i at offset ``off``
        w = windows[off:off + 14] - ladder  # cards of the window other than this one
        best = np.maximum(best, np.where(w >= k - 1, 2, np.where(w >= max(k - 2, 1), 1, 0)))
    run_gain = best[1:14].copy()
    run_gain[ACE] = np.maximum(run_gain[ACE], best[0])
    gain = np.maximum(set_gain, run_gain)
    gain[held] = 0
    out = np.zeros(NCARDS, dtype=np.int8)
    out[:52] = gain.reshape(52)
    if fam.wild_rank is not None:
        out[fam.wild_rank * 4:fam.wild_rank * 4 + 4] = 2
    if fam.jokers_wild:
        out[JOKER] = 2
    return out


_RANKS_MASK = (1 << 13) - 1


def _run_cover(ranks: int, k: int) -> int:
    """Ranks (bits 0..12, ace = 12) of ``ranks`` lying in a run of >= k consecutive held
    cards on the ace-low/high ladder (ace low via ladder bit 0, never both ends at once)."""
    mask = ((ranks << 1) | (ranks >> 12 & 1))  # ladder bits 0..13
    w = mask
    for i in range(1, k):
        w &= mask >> i
    if not w:
        return 0
    cover = 0
    for i in range(k):
        cover |= w << i
    cover &= mask
    return ((cover >> 1) & _RANKS_MASK) | ((cover & 1) << 12)


def _popcount(x: int) -> int:
    return x.bit_count()


def _leftover(m1: list[int], m2: list[int], k: int, sets_first: bool) -> tuple[list[int], list[int]]:
    """Per-suit rank masks of the two copies left after greedy runs and sets."""
    a = list(m1)
    b = list(m2)

    def runs() -> None:
        for s in range(4):
            a[s] &= ~_run_cover(a[s], k)
            b[s] &= ~_run_cover(b[s], k)

    def sets() -> None:
        # bit-parallel over ranks: a rank with cards in >= 3 suits is a set; one copy of
        # each of its suits leaves (the duplicate layer first, so runs keep the other)
        u0, u1, u2, u3 = (a[0] | b[0]), (a[1] | b[1]), (a[2] | b[2]), (a[3] | b[3])
        ge3 = (u0 & u1 & u2) | (u0 & u1 & u3) | (u0 & u2 & u3) | (u1 & u2 & u3)
        if not ge3:
            return
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
    return a, b


def _partials(a: list[int], b: list[int]) -> int:
    """Disjoint two-card partial melds among the leftover cards (greedy, bit-parallel):
    pairs of a rank in two suits (two pairs from four suits), then same-suit cards one
    or two ranks apart."""
    u0, u1, u2, u3 = a
    ge2 = (u0 & u1) | (u0 & u2) | (u0 & u3) | (u1 & u2) | (u1 & u3) | (u2 & u3)
    ge4 = u0 & u1 & u2 & u3
    n = ge2.bit_count() + ge4.bit_count()
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
        a, b = _leftover(m1, m2, k, sets_first)
        left = extra + sum(_popcount(x) for x in a) + sum(_popcount(x) for x in b)
        if wild and left:
            left -= 2 * min(wild, _partials(a, b))
        if best < 0 or left < best:
            best = left
    return max(best, 0)


__all__ = ["FAMILIES", "Family", "family_of", "gain_vector", "is_wild", "meld_distance"]
