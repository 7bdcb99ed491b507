"""Helpers for the Michigan tests: stacked decks, driver games, and log surgery.

Not a test module (it holds no tests); it is named ``test_michigan_*`` only so it sits
with the files of the Michigan tests.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from rummyguard.events.cards import format_cards, parse_cards
from rummyguard.replay.engine import GameEngine, GameRecord, replay
from rummyguard.replay.rules.michigan import Michigan
from rummyguard.sim.driver import play

Events = list[dict[str, Any]]

# A stacked 3-player deal, dealer c (seat 2): hands are dealt a, b, c, widow.
HAND_A = ["2H", "3H", "7H", "JH", "AH", "4C", "8C", "QC", "4D", "8D", "JD", "2S", "TS"]
HAND_B = ["4H", "8H", "QH", "2C", "5C", "9C", "KC", "5D", "9D", "KD", "3S", "JS", "AS"]
HAND_C = ["6H", "9H", "KH", "3C", "7C", "TC", "AC", "2D", "6D", "TD", "AD", "4S", "QS"]
WIDOW = ["5H", "TH", "6C", "JC", "3D", "7D", "QD", "5S", "6S", "7S", "8S", "9S", "KS"]


def michigan_deck(hands: list[list[str]]) -> list[str]:
    """The 52-card deck that deals ``hands`` (deal order: left of the dealer first, the
    widow last), one card at a time round the table."""
    deck: list[str] = []
    k = len(hands)
    total = sum(len(h) for h in hands)
    assert total == 52, total
    for i in range(total):
        h, j = i % k, i // k
        assert j < len(hands[h]), f"hand {h} is too short for a one-at-a-time deal"
        deck.append(hands[h][j])
    assert sorted(parse_cards(deck)) == list(range(52)), "not the 52 cards"
    return deck


STACKED = michigan_deck([HAND_A, HAND_B, HAND_C, WIDOW])


def driver_game(n: int, seed: int, **rules: Any) -> Events:
    """A whole game written by the platform driver with the random policy."""
    return play("michigan", [f"p{i + 1}" for i in range(n)], seed=seed, game_id=f"mi{n}-{seed}",
                rules=rules)


def game_where(n: int, ok: Callable[[Events], bool], *, first: int = 100, **rules: Any) -> Events:
    """The first driver game (seeds from ``first``) with the property the test needs, so
    tests do not hang on what one seed of the random policy happens to do."""
    for seed in range(first, first + 300):
        events = driver_game(n, seed, **rules)
        if ok(events):
            return events
    raise LookupError("no seed gives a game with that property")


def reasons(events: Events) -> list[str]:
    """The reasons of every claimed chip transfer, in order."""
    return [t["reason"] for e in events if e["type"] == "ChipsTransferred"
            for t in e["payload"]["transfers"]]


def walk(events: Events) -> Iterator[tuple[int, Michigan | None, dict[str, Any]]]:
    """Yield ``(index, state before the event, event)`` while folding the events."""
    engine = GameEngine(verify_hashes=False)
    for i, event in enumerate(events):
        yield i, engine.variant, event  # type: ignore[misc]
        engine.apply(event)


def find(events: Events, pred: Callable[[Michigan, dict[str, Any]], bool]) -> int:
    """Index of the first event for which ``pred(state_before, event)`` holds."""
    for i, state, event in walk(events):
        if state is not None and pred(state, event):
            return i
    raise LookupError("no event matches")


def state_before(events: Events, index: int) -> Michigan:
    """A fresh state folded over ``events[:index]``."""
    for i, state, _ in walk(events):
        if i == index:
            assert state is not None
            return state
    raise IndexError(index)


def renumber(events: Events) -> Events:
    """Contiguous seqs and event ids after events were inserted or removed."""
    out = []
    for seq, event in enumerate(events):
        e = dict(event)
        e["seq"] = seq
        e["event_id"] = f"{e['game_id']}-{seq:05d}"
        out.append(e)
    return out


def cut(events: Events, index: int) -> Events:
    """The log up to and including ``events[index]`` (the rest would only echo a break)."""
    return copy.deepcopy(events[: index + 1])


def play_event(like: dict[str, Any], actor: str, card: str) -> dict[str, Any]:
    e = copy.deepcopy(like)
    e["type"], e["v"], e["actor"], e["payload"] = "CardPlayed", 1, actor, {"card": card}
    return e


def lowest_cards(state: Michigan, seat: int) -> list[str]:
    """The seat's lowest card of each suit it holds."""
    out = []
    for suit in range(4):
        low = state.lowest(seat, suit)
        if low is not None:
            out.append(low)
    return format_cards(out)


def record(events: Events) -> GameRecord:
    return replay(events, verify_hashes=False)


def triples(rec: GameRecord) -> list[tuple[int, str, str]]:
    return [(f.seq, f.rule, f.kind) for f in rec.findings]
