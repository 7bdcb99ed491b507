"""Speed-ups the simulator installs on a live variant state, without changing what the
engine's ``legal_moves`` returns.

Classic's ``legal_moves`` looks for a Rummy declaration after every draw: for each
possible discard it runs the meld-partition search, about 1 ms per turn — most of a
simulated game's cost, spent on hands that are nowhere near going out. A declaration
needs every card but the discard in a meld, so a hand holding two cards that cannot be
in *any* meld (no set mates and no run window, even with all its jokers) has none.
:func:`install` puts that test in front of the state's ``find_declaration`` (as its
``declaration_finder``, so only this game's state changes); when the test passes the engine's own
search runs as before. The test is a necessary condition only, so the moves are
exactly the engine's (``tests/test_sim_fastpaths.py`` checks this on random hands).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..events.cards import JOKER, NCARDS, format_card, format_cards
from ..replay.rules.melds import find_partition
from .handeval import LADDER, SET_MATES, SUIT_LADDER


def isolated_cards(hand: Sequence[int], wild: int = JOKER, run_min: int = 3) -> int:
    """How many cards of ``hand`` (counting copies) can be in no run and no set even
    with every wild card of the hand."""
    return len(isolated_list(hand, wild, run_min, stop=NCARDS))


def isolated_list(hand: Sequence[int], wild: int = JOKER, run_min: int = 3,
                  stop: int = 2) -> list[int]:
    """The isolated cards (one entry per copy), stopping once ``stop`` are found."""
    w = hand[wild]
    isolated: list[int] = []
    for c in range(NCARDS):
        k = hand[c]
        if not k or c == wild:
            continue
        mates = 0
        for m in SET_MATES[c]:
            if hand[m] > 0:
                mates += 1
        if mates + w >= 2:
            continue
        ladder = SUIT_LADDER[c & 3]
        fits = False
        for v in LADDER[c]:
            lo_start = max(1, v - run_min + 1)
            hi_start = min(v, 14 - run_min + 1)
            for start in range(lo_start, hi_start + 1):
                missing = 0
                for pos in range(start, start + run_min):
                    if pos != v and hand[ladder[pos]] == 0:
                        missing += 1
                if missing <= w:
                    fits = True
                    break
            if fits:
                break
        if not fits:
            isolated.extend([c] * k)
            if len(isolated) >= stop:
                return isolated
    return isolated


def needy_count(hand: Sequence[int], wild: int = JOKER, limit: int = 99) -> int:
    """How many cards (counting copies) have no wild-free meld in ``hand``: no two
    set mates and no complete natural run window of three. Stops past ``limit``.

    Such a card can only be melded with a wild, and a meld with ``k`` wilds holds at
    most ``4k`` of them (in a run, only cards within two places of a wild lack a
    natural window; a set with a wild has at most three naturals). So a hand that
    melds completely has at most ``4 x wilds`` needy cards.
    """
    needy = 0
    for c in range(52):
        k = hand[c]
        if not k:
            continue
        mates = 0
        for m in SET_MATES[c]:
            if hand[m] > 0:
                mates += 1
        if mates >= 2:
            continue
        ladder = SUIT_LADDER[c & 3]
        ok = False
        for v in LADDER[c]:
            for start in range(max(1, v - 2), min(v, 12) + 1):
                if all(pos == v or hand[ladder[pos]] > 0 for pos in range(start, start + 3)):
                    ok = True
                    break
            if ok:
                break
        if not ok:
            needy += k
            if needy > limit:
                return needy
    return needy


def _neighbours() -> list[tuple[int, ...]]:
    """Per card: the cards it can share a meld with without a wild in between (other
    suits of its rank; the next and previous card of its suit, the ace at both ends)."""
    out = []
    for c in range(52):
        near = set(SET_MATES[c])
        ladder = SUIT_LADDER[c & 3]
        for v in LADDER[c]:
            for u in (v - 1, v + 1):
                if 1 <= u <= 14:
                    near.add(ladder[u])
        near.discard(c)
        out.append(tuple(sorted(near)))
    return out


def _gap_neighbours() -> list[tuple[int, ...]]:
    """Per card: the cards two places away in its suit (a wild can bridge the gap)."""
    out = []
    for c in range(52):
        ladder = SUIT_LADDER[c & 3]
        near = {ladder[u] for v in LADDER[c] for u in (v - 2, v + 2) if 1 <= u <= 14}
        near.discard(c)
        out.append(tuple(sorted(near)))
    return out


NEAR = _neighbours()
GAP_NEAR = _gap_neighbours()


def wild_deficit(hand: Sequence[int], wild: int = JOKER) -> int:
    """A lower bound on the wilds a full partition of ``hand`` needs: cards that can
    share a meld form connected groups, and a group of one card needs two wilds, of two
    cards one (a meld has three cards or more; melds never cross groups)."""
    w = hand[wild]
    present = [c for c in range(52) if hand[c]]
    seen: set[int] = set()
    deficit = 0
    for c in present:
        if c in seen:
            continue
        seen.add(c)
        stack = [c]
        size = 0
        while stack:
            x = stack.pop()
            size += hand[x]
            for y in NEAR[x]:
                if hand[y] and y not in seen:
                    seen.add(y)
                    stack.append(y)
            if w:
                for y in GAP_NEAR[x]:
                    if hand[y] and y not in seen:
                        seen.add(y)
                        stack.append(y)
        if size < 3:
            deficit += 3 - size
    return deficit


class MeldFeasibility:
    """Can a multiset be split into classic melds (runs of 3+, sets of 3-4 different
    suits, jokers anywhere, one run of ``long_run``+)? An exhaustive search over the
    lowest card left, memoised on the remaining cards, so the ~15 candidate discards of
    one turn share their sub-searches. It answers for the *rules*, not for the engine's
    search, so it never says no to a hand the engine can partition; ``install`` only
    uses its "no" to skip the engine's search.
    """

    __slots__ = ("allowed", "long_run", "memo", "skip")

    def __init__(self, long_run: int = 4) -> None:
        self.long_run = long_run
        self.memo: dict[tuple[bytes, int, bool, int], bool] = {}
        self.skip = 0
        self.allowed: Sequence[bool] = ()

    def feasible(self, hand: Sequence[int]) -> bool:
        """Can all of ``hand`` be melded?"""
        self.skip = 0
        counts = bytearray(hand[:52])
        return self._solve(counts, hand[JOKER], self.long_run > 0, False)

    def feasible_after_discard(self, hand: Sequence[int], allowed: Sequence[bool]) -> bool:
        """Can all of ``hand`` but one discard (a natural with ``allowed[card]``) be
        melded? One search for every discard at once (a discard "skips" the lowest
        card left); a hand with no natural left to skip is accepted (relaxation)."""
        self.skip = 1
        self.allowed = allowed
        counts = bytearray(hand[:52])
        return self._solve(counts, hand[JOKER], self.long_run > 0, False)

    def _solve(self, counts: bytearray, w: int, need_long: bool, have_meld: bool) -> bool:
        c = 52 - len(counts.lstrip(b"\x00"))  # the lowest card left (52: none)
        if c >= 52:
            if w and not have_meld:
                return False
            if need_long:
                # a leftover joker may lengthen a 3-run: accept (a relaxation)
                return bool(w) and have_meld
            return True
        key = (bytes(counts), w, need_long, self.skip)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        ok = False
        if self.skip and self.allowed[c]:
            self.skip = 0
            counts[c] -= 1
            ok = self._solve(counts, w, need_long, have_meld)
            counts[c] += 1
            self.skip = 1
        ok = ok or self._sets(counts, c, w, need_long) or self._runs(counts, c, w, need_long)
        self.memo[key] = ok
        return ok

    def _sets(self, counts: bytearray, c: int, w: int, need_long: bool) -> bool:
        mates = [m for m in SET_MATES[c] if counts[m]]
        n = len(mates)
        for mask in range(1 << n):
            chosen = [mates[i] for i in range(n) if mask >> i & 1]
            naturals = 1 + len(chosen)
            for j in range(0, min(w, 4 - naturals) + 1):
                if naturals + j < 3:
                    continue
                counts[c] -= 1
                for m in chosen:
                    counts[m] -= 1
                ok = self._solve(counts, w - j, need_long, True)
                counts[c] += 1
                for m in chosen:
                    counts[m] += 1
                if ok:
                    return True
        return False

    def _runs(self, counts: bytearray, c: int, w: int, need_long: bool) -> bool:
        ladder = SUIT_LADDER[c & 3]
        for v in LADDER[c]:
            # c is the lowest natural of the run, except an ace played low below it
            # the places below c: jokers, or the low ace and jokers (w + 1: the ace is no
            # joker, so A-2-3 with no joker needs a lead of one)
            for lead in range(0, w + 2):
                for ace_low in ((False, True) if lead >= 1 and counts[ladder[1]] and v > 1 else (False,)):
                    start = v - lead
                    if start < 1:
                        break
                    jokers = lead - (1 if ace_low else 0)
                    if ace_low and start != 1:
                        continue
                    if jokers > w:
                        continue
                    taken: list[int] = [c]
                    counts[c] -= 1
                    if ace_low:
                        counts[ladder[1]] -= 1
                        taken.append(ladder[1])
                    ok = self._extend(counts, ladder, start, v, w - jokers, need_long, taken)
                    for t in taken:
                        counts[t] += 1
                    if ok:
                        return True
        return False

    def _extend(self, counts: bytearray, ladder: list[int], start: int, pos: int, w: int,
                need_long: bool, taken: list[int]) -> bool:
        """The run covers ``start..pos``; try ending it here or going on (naturals or
        jokers at each further place)."""
        length = pos - start + 1
        if length >= 3:
            long_done = need_long and length >= self.long_run
            if self._solve(counts, w, need_long and not long_done, True):
                return True
        nxt = pos + 1
        if nxt > 14 or (nxt == 14 and start == 1):
            return False
        card = ladder[nxt]
        if counts[card]:
            counts[card] -= 1
            taken.append(card)
            if self._extend(counts, ladder, start, nxt, w, need_long, taken):
                return True
            taken.pop()
            counts[card] += 1
        if w:
            return self._extend(counts, ladder, start, nxt, w - 1, need_long, taken)
        return False


def install(state: Any) -> None:
    """Install the fast paths that apply to ``state``'s variant (no-op for others)."""
    if getattr(state, "name", "") == "classic" and hasattr(state, "declaration_finder"):
        def find_declaration(seat: int) -> dict[str, Any] | None:
            hand = state.hands[seat]
            lonely = isolated_list(hand)
            if len(lonely) >= 2:
                return None
            w = hand[JOKER]
            if wild_deficit(hand) - 2 > w:
                return None
            budget = 4 * w
            if needy_count(hand, limit=budget + 1) > budget + 1:
                return None
            allow_wild = state.config["long_run_allows_joker"]
            solver = MeldFeasibility(4) if allow_wild else None
            if solver is not None:
                allowed = [bool(hand[d]) and not (state.taken[d] and state.before_take[d] == 0)
                           for d in range(52)]
                if not solver.feasible_after_discard(hand, allowed):
                    return None
            # the engine's loop (discards from the highest card down, first success
            # wins), skipping discards that leave a card no meld can hold
            candidates = lonely if lonely else [d for d in range(51, -1, -1) if hand[d] > 0]
            for d in candidates:
                if state.taken[d] and state.before_take[d] == 0:
                    continue
                hand[d] -= 1
                try:
                    if wild_deficit(hand) > w or needy_count(hand, limit=budget) > budget \
                            or isolated_list(hand, stop=1):
                        continue
                    if solver is not None and not solver.feasible(hand):
                        continue
                    parts = find_partition(hand, state.meld_rules, need_long_run=4,
                                           long_run_allows_wild=allow_wild)
                finally:
                    hand[d] += 1
                if parts is not None:
                    return {"melds": [{"kind": k, "cards": format_cards(cs)} for k, cs in parts],
                            "discard": format_card(d)}
            return None

        state.declaration_finder = find_declaration


__all__ = ["install", "isolated_cards"]
