"""The state a support agent reads (``replay --at``) says who is out of the game and why.

Classic kept a ``removed`` map it never wrote: a player removed for strikes and one who
left both showed only as missing from ``active``. Every variant's snapshot now has
``out`` (player -> reason): classic ``strikes`` / ``left`` (CL-STRIKES, CL-LEAVE),
Rummy 500 its own reasons, Liverpool and Michigan ``left`` (or ``removed`` on a platform
claim). These tests failed before the change (no ``out`` key in classic, Liverpool or
Michigan snapshots).
"""

from __future__ import annotations

from typing import Any

import pytest
from corners_kit import corner_game, ev, insert, renumber

from rummyguard.replay.engine import state_at

Event = dict[str, Any]


def _first(events: list[Event], type_: str) -> Event:
    return next(e for e in events if e["type"] == type_)


@pytest.mark.parametrize(("variant", "seed", "kind"), [
    ("classic", 3, "PlayerRemoved"),
    ("r500", 0, "PlayerLeft"),
    ("liverpool", 0, "PlayerLeft"),
    ("michigan", 6, "PlayerLeft"),
])
def test_out_names_who_left_or_was_removed_and_why(variant: str, seed: int, kind: str) -> None:
    events, _profile, _injected = corner_game(variant, seed)
    gone = _first(events, kind)
    who = gone["payload"]["player"] if kind == "PlayerRemoved" else gone["actor"]
    before = state_at(events, gone["seq"] - 1)
    after = state_at(events, gone["seq"])
    assert who not in before["out"]
    assert who not in after["active"]
    want = gone["payload"]["reason"] if kind == "PlayerRemoved" else "left"
    assert after["out"][who] == want
    # every viewer sees it: a player's leaving or removal is public
    for viewer in after["active"]:
        assert state_at(events, gone["seq"], viewer)["out"][who] == want


def test_classic_leave_shows_left_and_strikes_removal_shows_strikes() -> None:
    events, _profile, _injected = corner_game("classic", 3)
    removed = _first(events, "PlayerRemoved")
    assert removed["payload"]["reason"] == "strikes"
    # someone else still in the game leaves right after the removal
    after = state_at(events, removed["seq"])
    assert len(after["active"]) >= 2, "the corner game must leave two players in"
    leaver = after["active"][0]
    i = events.index(removed) + 1
    left = renumber(insert(events, i, ev(removed, "PlayerLeft", leaver, {})))
    seq = next(e["seq"] for e in left if e["type"] == "PlayerLeft" and e["actor"] == leaver)
    out = state_at(left, seq)["out"]
    assert out == {removed["payload"]["player"]: "strikes", leaver: "left"}


def test_classic_bust_claim_shows_removed() -> None:
    """'bust' is no classic removal (a finding): the player is out, shown as "removed"."""
    events, _profile, _injected = corner_game("classic", 3)
    removed = _first(events, "PlayerRemoved")
    bust = [dict(e, payload={**e["payload"], "reason": "bust"}) if e is removed else e
            for e in events]
    who = removed["payload"]["player"]
    assert state_at(bust, removed["seq"])["out"][who] == "removed"
