"""Games for the HTML replay page tests (test_html.py, test_html_browser.py): clean games
from the simulator's driver and a classic game with findings planted on purpose.

No tests live here; the module only builds logs.
"""

from __future__ import annotations

import copy
import importlib.util
from functools import cache
from typing import Any

import pytest

from rummyguard.events.timestamps import format_ts, ts_millis
from rummyguard.replay.engine import GameEngine
from rummyguard.sim.driver import play

Event = dict[str, Any]

#: a player id an attacker could choose: it must be shown as text, never run
EVIL = '<script>alert("pwned")</script>'
#: the classic game with planted findings: seats, seed
SEATS = ["alice", "bob", "carol"]
SEED = 7
#: the late move (CL-TIMER) is carol's first discard after this seq
LATE_AFTER = 60
#: the variants beside classic, each being written in its own module
VARIANT_SEATS = {
    "r500": ["ann", "ben", "cat"],
    "liverpool": ["ann", "ben", "cat"],
    "michigan": ["ann", "ben", "cat", "dan"],
}


@cache
def _clean(variant: str, seats: tuple[str, ...], seed: int) -> tuple[Event, ...]:
    return tuple(play(variant, list(seats), seed=seed))


def clean_game(variant: str, seats: list[str], seed: int) -> list[Event]:
    """A driver game (a deep copy: tests may mutate it)."""
    return copy.deepcopy(list(_clean(variant, tuple(seats), seed)))


def planted_game(seats: list[str] | None = None) -> tuple[list[Event], int]:
    """A clean classic game with four findings planted; returns the events and the seq of
    the late move. Findings: CL-TIMER at the late move; C-CLAIM on the chip transfers
    (a payout 7 chips too high), on the game winners and on alice's net (50 too high)."""
    events = clean_game("classic", seats or SEATS, SEED)
    late = next(e for e in events if e["seq"] > LATE_AFTER and e["type"] == "Discarded"
                and e["actor"] == (seats or SEATS)[2])
    late["ts"] = format_ts(ts_millis(late["ts"]) + 200_000)
    ended = events[-1]
    assert ended["type"] == "GameEnded"
    alice = (seats or SEATS)[0]
    ended["payload"]["net"][alice] += 50
    ended["payload"]["winners"] = [alice]
    claims = [e for e in events if e["type"] == "ChipsTransferred"]
    claims[-1]["payload"]["transfers"][-1]["amount"] += 7
    return events, late["seq"]


def snapshots(events: list[Event], viewer: str | None = None) -> list[dict[str, Any]]:
    """The snapshot after each event, computed independently of the renderer."""
    engine = GameEngine()
    out = []
    for event in events:
        engine.apply(event)
        out.append(engine.variant.snapshot(viewer) if engine.variant is not None else {})
    return out


def need_variant(variant: str) -> None:
    """Skip (with the reason) while a variant's rules module has not landed."""
    if variant == "classic":
        return
    module = f"rummyguard.replay.rules.{variant}"
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} does not exist yet (the {variant} variant is being written)")
