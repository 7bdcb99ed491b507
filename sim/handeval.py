"""Fast hand evaluation for the simulator's players: how useful each card is, how far a
hand is from going out, and how much a card would help a hand.

Policies decide hundreds of thousands of times per world, so everything here works on
the engine's integer cards (``rank * 4 + suit``, joker 52) and 53-slot count arrays,
with per-card tables computed once at import. Nothing is copied per call beyond a few
small lists; there is no partition search (the engine's ``find_partition`` decides
whether a hand can actually go out).

The measure is *meld connectivity*: a card in a complete meld (a run of 3+ of its suit
or a set of 3+ different suits, with wilds filling gaps) is worth most; a card in a
partial meld (a pair of a rank, two neighbours in a suit, a one-gap pair) is worth
less, and less again when the cards that would complete it are already dead (seen in
the discard pile or the player's own hand: "live outs"). A strong player weighs
partials by live outs; a weak one does not. ``distance`` (the number of cards outside
complete melds) is the "meld distance" that timing models and fraud labels use.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..events.cards import JOKER, NCARDS

#: value of a card inside a complete meld (runs/sets of 3+); partials stay far below it
COMPLETE = 10.0
PAIR_SET = 3.0  # two of a rank, different suits
NEIGHBOUR = 3.0  # two consecutive cards of a suit
GAP = 1.2  # two cards of a suit one rank apart (e.g. 5H 7H)
WILD_VALUE = 100.0  # wild cards are never worth discarding

_RANK = [c >> 2 for c in range(52)]
_SUIT = [c & 3 for c in range(52)]
#: other-suit cards of the same rank
SET_MATES: list[tuple[int, ...]] = [
    tuple(r * 4 + s2 for s2 in range(4) if s2 != s) for r, s in ((c >> 2, c & 3) for c in range(52))
]


def ladder_to_card(value: int, suit: int) -> int:
    """Ladder value 1..14 (1 and 14 both the ace) and a suit -> card."""
    return (12 if value in (1, 14) else value - 2) * 4 + suit


#: the ladder values (1..14) a card sits at: the ace at both ends
LADDER: list[tuple[int, ...]] = [((1, 14) if c >> 2 == 12 else ((c >> 2) + 2,)) for c in range(52)]
#: per suit, the card at each ladder value 0..15 (0 and 15 are off the ladder: -1)
SUIT_LADDER: list[list[int]] = [
    [-1] + [ladder_to_card(v, s) for v in range(1, 15)] + [-1] for s in range(4)
]


class HandEval:
    """Connectivity evaluation under one variant's meld rules.

    ``wilds``: card ints that are wild (classic/r500: the joker; Liverpool: every 2).
    ``ace_high_low``: the ace may end a run at either end (every variant here).
    """

    __slots__ = ("is_wild", "wilds")

    def __init__(self, wilds: Sequence[int] = (JOKER,)) -> None:
        self.wilds = tuple(wilds)
        flags = [False] * NCARDS
        for w in wilds:
            flags[w] = True
        self.is_wild = flags

    # -- the per-card measure --------------------------------------------------------------
    def run_length(self, hand: Sequence[int], card: int) -> tuple[int, int]:
        """(longest run of naturals through ``card`` in its suit, gap partner found 0/1)."""
        suit = _SUIT[card]
        ladder = SUIT_LADDER[suit]
        is_wild = self.is_wild
        best = 1
        gap = 0
        for v in LADDER[card]:
            lo = v
            while lo > 1:
                c = ladder[lo - 1]
                if hand[c] > 0 and not is_wild[c]:
                    lo -= 1
                else:
                    break
            hi = v
            while hi < 14:
                c = ladder[hi + 1]
                if hand[c] > 0 and not is_wild[c]:
                    hi += 1
                else:
                    break
            length = hi - lo + 1
            if length > best:
                best = length
            if not gap:
                below = ladder[lo - 2] if lo - 2 >= 1 else -1
                above = ladder[hi + 2] if hi + 2 <= 14 else -1
                for c in (below, above):
                    if c >= 0 and hand[c] > 0 and not is_wild[c]:
                        gap = 1
        return best, gap

    def card_value(self, hand: Sequence[int], card: int, nwild: int = 0,
                   seen: Sequence[int] | None = None) -> float:
        """How much ``card`` (held in ``hand``) contributes; ``seen`` = dead copies per card
        (pile + own hand) for live-out weighting (None = ignore liveness)."""
        if self.is_wild[card]:
            return WILD_VALUE
        setk = 0
        for m in SET_MATES[card]:
            if hand[m] > 0:
                setk += 1
        run, gap = self.run_length(hand, card)
        if run >= 3 or setk >= 2:
            value = COMPLETE + (run if run >= 3 else setk) + (1.0 if run >= 4 else 0.0)
        else:
            pair = PAIR_SET if setk == 1 else 0.0
            neighbour = NEIGHBOUR if run == 2 else 0.0
            gapv = GAP if gap else 0.0
            if seen is not None and (pair or neighbour):
                pair *= self._set_live(hand, card, seen) if pair else 1.0
                neighbour *= self._run_live(hand, card, seen) if neighbour else 1.0
            value = pair + neighbour + gapv
            if nwild and (pair or neighbour):
                value += 4.0  # a wild turns this partial into a meld
            elif nwild and gapv:
                value += 2.0
        if hand[card] > 1:
            value *= 0.55  # a second copy rarely has a meld of its own
        return value

    @staticmethod
    def _set_live(hand: Sequence[int], card: int, seen: Sequence[int]) -> float:
        live = 0
        for m in SET_MATES[card]:
            if hand[m] == 0:
                live += max(0, 2 - seen[m])
        return min(1.0, 0.25 + live / 4.0)

    @staticmethod
    def _run_live(hand: Sequence[int], card: int, seen: Sequence[int]) -> float:
        ladder = SUIT_LADDER[_SUIT[card]]
        live = 0
        for v in LADDER[card]:
            for w in (v - 1, v + 1):
                if 1 <= w <= 14 and hand[ladder[w]] > 0:
                    for end in (min(v, w) - 1, max(v, w) + 1):
                        if 1 <= end <= 14:
                            c = ladder[end]
                            live += max(0, 2 - seen[c])
        return min(1.0, 0.25 + live / 4.0)

    def values(self, hand: Sequence[int], seen: Sequence[int] | None = None) -> dict[int, float]:
        """``{card: value}`` for every distinct card in ``hand``."""
        nwild = 0
        for w in self.wilds:
            nwild += hand[w]
        out: dict[int, float] = {}
        for c in range(NCARDS):
            if hand[c] > 0:
                out[c] = self.card_value(hand, c, nwild, seen)
        return out

    def gain(self, hand: list[int], card: int, seen: Sequence[int] | None = None) -> float:
        """How much holding ``card`` as well would be worth to ``hand`` (its own value
        plus what it adds to the cards it connects with). ``hand`` is restored."""
        if self.is_wild[card]:
            return WILD_VALUE
        nwild = 0
        for w in self.wilds:
            nwild += hand[w]
        related = self._related(hand, card)
        before = 0.0
        for c in related:
            before += self.card_value(hand, c, nwild, seen)
        hand[card] += 1
        try:
            after = self.card_value(hand, card, nwild, seen)
            for c in related:
                after += self.card_value(hand, c, nwild, seen)
        finally:
            hand[card] -= 1
        return after - before

    def _related(self, hand: Sequence[int], card: int) -> list[int]:
        """Cards in ``hand`` whose value may change when ``card`` joins or leaves."""
        out = [m for m in SET_MATES[card] if hand[m] > 0]
        ladder = SUIT_LADDER[_SUIT[card]]
        is_wild = self.is_wild
        for v in LADDER[card]:
            for w in (v - 2, v - 1, v + 1, v + 2):
                if 1 <= w <= 14:
                    c = ladder[w]
                    if hand[c] > 0 and not is_wild[c] and c != card and c not in out:
                        out.append(c)
            # a card extends whole runs: include the cards further along a run
            for step in (-1, 1):
                w = v + step
                while 1 <= w <= 14 and hand[ladder[w]] > 0 and not is_wild[ladder[w]]:
                    c = ladder[w]
                    if c not in out and c != card:
                        out.append(c)
                    w += step
        return out

    def distance(self, hand: Sequence[int]) -> int:
        """Cards outside complete melds (0 = every natural is in a run or set of 3+),
        counting wilds as filling one missing card each."""
        nwild = 0
        for w in self.wilds:
            nwild += hand[w]
        loose = 0
        for c in range(NCARDS):
            k = hand[c]
            if k and not self.is_wild[c]:
                setk = 0
                for m in SET_MATES[c]:
                    if hand[m] > 0:
                        setk += 1
                if setk >= 2:
                    loose += k - 1
                    continue
                run, _ = self.run_length(hand, c)
                loose += k if run < 3 else k - 1
        return max(0, loose - 2 * nwild)


def deadwood_points(hand: Sequence[int], points: Sequence[int], values: dict[int, float]) -> float:
    """Points held in cards outside complete melds (r500-style scoring of a hand)."""
    total = 0.0
    for c, v in values.items():
        if v < COMPLETE:
            total += points[c] * hand[c]
    return total


__all__ = ["COMPLETE", "LADDER", "SET_MATES", "SUIT_LADDER", "HandEval", "deadwood_points",
           "ladder_to_card"]
