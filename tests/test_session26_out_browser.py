"""The replay page in a real headless Chromium names why a player is out (session 26):
the seat's "Out" tag carries the state's ``out`` reason — a classic removal for strikes,
a player who left — and the reason is not repeated as a second stat on the seat."""

from __future__ import annotations

from typing import Any

import pytest
from corners_kit import corner_game, ev, insert, renumber
from test_html_browser import Opener, open_page  # noqa: F401  (the fixture)

pytestmark = pytest.mark.browser


def _seat_tags(page: Any) -> dict[str, list[str]]:
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('[data-testid=seat]')].map(s =>
             [s.dataset.player, [...s.querySelectorAll('.seat-head .tag')].map(t => t.textContent)]))"""
    )


def test_out_tags_name_the_reason(open_page: Opener) -> None:  # noqa: F811
    events, _profile, _injected = corner_game("classic", 3)
    removed = next(e for e in events if e["type"] == "PlayerRemoved")
    struck = removed["payload"]["player"]
    seats = next(e for e in events if e["type"] == "GameCreated")["payload"]["seats"]
    leaver = next(p for p in seats if p != struck)
    i = events.index(removed) + 1
    events = renumber(insert(events, i, ev(removed, "PlayerLeft", leaver, {})))
    left_seq = next(e["seq"] for e in events if e["type"] == "PlayerLeft" and e["actor"] == leaver)

    before = _seat_tags(open_page(events, at=removed["seq"] - 1))
    assert not any(t.startswith("Out") for t in before[struck])

    after = _seat_tags(open_page(events, at=left_seq))
    assert "Out (strikes)" in after[struck]
    assert "Out (left)" in after[leaver]
    assert not any(t.startswith("out ") for tags in after.values() for t in tags)
    stays = [p for p in seats if p not in (struck, leaver)]
    assert all(not any(t.startswith("Out") for t in after[p]) for p in stays)
