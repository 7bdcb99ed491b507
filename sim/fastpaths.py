"""Speed-ups the simulator installs on a live variant state, without changing what the
engine's ``legal_moves`` returns.

Classic's ``legal_moves`` looks for a Rummy declaration after every draw: for each
possible discard it runs the meld-partition search, about 1 ms per turn — most of a
simulated game's cost, spent on hands that are nowhere near going out. A declaration
needs every card but the discard in a meld, so a hand holding two cards that cannot be
in *any* meld (no set mates and no run window, even with all its jokers) has none.
:func:`install` puts that test in front of the state's ``find_declaration`` (an instance
attribute, so only this game's state changes); when the test passes the engine's own
search runs as before. The test is a necessary condition only, so the moves are
exactly the engine's (``tests/test_sim_fastpaths.py`` checks this on random hands).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..events.cards import JOKER, NCARDS
from .handeval import LADDER, SET_MATES, SUIT_LADDER


def isolated_cards(hand: Sequence[int], wild: int = JOKER, run_min: int = 3) -> int:
    """How many cards of ``hand`` (counting copies) can be in no run and no set even
    with every wild card of the hand."""
    w = hand[wild]
    isolated = 0
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
            isolated += k
    return isolated


def install(state: Any) -> None:
    """Install the fast paths that apply to ``state``'s variant (no-op for others)."""
    if getattr(state, "name", "") == "classic" and hasattr(state, "find_declaration"):
        original: Callable[[int], dict[str, Any] | None] = state.find_declaration

        def find_declaration(seat: int) -> dict[str, Any] | None:
            if isolated_cards(state.hands[seat]) >= 2:
                return None
            return original(seat)

        state.find_declaration = find_declaration


__all__ = ["install", "isolated_cards"]
