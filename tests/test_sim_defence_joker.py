"""The classic brain's defence (do not discard what the next player collects) when the next
player took a joker from the discard pile: the joker is penalised itself and says nothing of
ranks or suits. It used to index the natural cards' set-mates table with the joker and crash
the whole simulation (seen on a 30,000-game world, seed 4407)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from rummyguard.events.cards import JOKER, NCARDS, parse_card
from rummyguard.sim.brain_classic import ClassicBrain


def _penalty(taken: list[int]) -> list[float]:
    agent = cast(Any, SimpleNamespace(pickups={"next": taken}))
    out = ClassicBrain._defence(agent, "next")
    assert out is not None and len(out) == NCARDS
    return out


def test_a_taken_joker_is_penalised_alone() -> None:
    penalty = _penalty([JOKER])
    assert penalty[JOKER] == 1.5
    assert sum(penalty) == 1.5


def test_a_joker_beside_naturals_keeps_their_neighbours() -> None:
    seven = parse_card("7H")
    with_joker, without = _penalty([seven, JOKER]), _penalty([seven])
    assert with_joker[JOKER] == 1.5
    assert [p for c, p in enumerate(with_joker) if c != JOKER] == \
        [p for c, p in enumerate(without) if c != JOKER]
    assert without[parse_card("8H")] == 1.2 and without[parse_card("7S")] == 1.2


def test_nothing_taken_is_no_defence() -> None:
    agent = cast(Any, SimpleNamespace(pickups={}))
    assert ClassicBrain._defence(agent, "next") is None
