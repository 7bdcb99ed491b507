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


def install(state: Any) -> None:
    """Install the fast paths that apply to ``state``'s variant (no-op for others)."""
    if getattr(state, "name", "") == "classic" and hasattr(state, "find_declaration"):
        def find_declaration(seat: int) -> dict[str, Any] | None:
            hand = state.hands[seat]
            lonely = isolated_list(hand)
            if len(lonely) >= 2:
                return None
            budget = 4 * hand[JOKER]
            if needy_count(hand, limit=budget + 1) > budget + 1:
                return None
            allow_wild = state.config["long_run_allows_joker"]
            # the engine's loop (discards from the highest card down, first success
            # wins), skipping discards that leave a card no meld can hold
            candidates = lonely if lonely else [d for d in range(51, -1, -1) if hand[d] > 0]
            for d in candidates:
                if state.taken[d] and state.before_take[d] == 0:
                    continue
                hand[d] -= 1
                try:
                    if needy_count(hand, limit=budget) > budget or isolated_list(hand, stop=1):
                        continue
                    parts = find_partition(hand, state.meld_rules, need_long_run=4,
                                           long_run_allows_wild=allow_wild)
                finally:
                    hand[d] += 1
                if parts is not None:
                    return {"melds": [{"kind": k, "cards": format_cards(cs)} for k, cs in parts],
                            "discard": format_card(d)}
            return None

        state.find_declaration = find_declaration


__all__ = ["install", "isolated_cards"]
