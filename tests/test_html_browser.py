"""The HTML replay page in a real browser: headless Chromium (Debian's package) driven by
Playwright. The tests step through the timeline like a support agent, read the hands and
findings off the page, check the per-player view hides the other hands, and save
screenshots (their paths are printed; directory: $RUMMYGUARD_ARTIFACTS or tests/artifacts).

The browser is Debian's /usr/bin/chromium (`make test` installs it as root when missing;
so does this module, the same way, if it runs as root with apt-get). Playwright's own
browser download (`playwright install`) is never used. Without a browser the tests skip
and say why.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_html_kit import EVIL, SEATS, VARIANT_SEATS, clean_game, need_variant, planted_game, snapshots

from rummyguard.replay.html import render_html

pytestmark = pytest.mark.browser

CHROMIUM = Path(os.environ.get("RUMMYGUARD_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ARTIFACTS = Path(os.environ.get("RUMMYGUARD_ARTIFACTS", Path(__file__).parent / "artifacts"))
APT_ENV = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}


def _install_chromium() -> str | None:
    """Install Debian's chromium if missing and possible; None if a browser is there,
    else the reason there is none. Serialised by a file lock (xdist runs two workers)."""
    if CHROMIUM.exists():
        return None
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return (f"{CHROMIUM} is missing and this user cannot install it (needs root and apt-get); "
                "run `make test` as root or `apt-get install chromium`")
    with open("/tmp/rummyguard-chromium.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not CHROMIUM.exists():
            for cmd in (["apt-get", "update", "-qq"],
                        ["apt-get", "install", "-y", "-qq", "--no-install-recommends",
                         "chromium", "chromium-driver", "fonts-dejavu-core"]):
                done = subprocess.run(cmd, env=APT_ENV, capture_output=True, text=True, timeout=900,
                                      check=False)
                if done.returncode != 0:
                    tail = (done.stderr or done.stdout).strip().splitlines()[-1:]
                    return f"apt-get could not install chromium: {' '.join(tail) or done.returncode}"
    return None if CHROMIUM.exists() else f"{CHROMIUM} is still missing after apt-get"


Opener = Callable[..., Any]


@pytest.fixture
def open_page(browser: Any, tmp_path: Path) -> Iterator[Opener]:
    """Write a page for ``events`` and open it; on teardown assert the script raised no
    error, no dialog opened and nothing but the file itself was requested."""
    pages: list[tuple[Any, list[str], list[str]]] = []

    def opener(events: list[dict[str, Any]], width: int = 1400, **kwargs: Any) -> Any:
        path = tmp_path / f"replay-{len(pages)}.html"
        path.write_text(render_html(events, **kwargs), encoding="utf-8")
        page = browser.new_page(viewport={"width": width, "height": 1000})
        errors: list[str] = []
        requests: list[str] = []
        page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
        page.on("console", lambda msg: errors.append(f"console: {msg.text}") if msg.type == "error" else None)
        page.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(path.as_uri())
        page.wait_for_selector("body[data-ready=true]")
        pages.append((page, errors, requests))
        return page

    yield opener
    for page, errors, requests in pages:
        assert errors == []
        assert all(url.startswith("file://") for url in requests), requests
        page.close()


def index(page: Any) -> int:
    return int(page.get_attribute("body", "data-index"))


def shown_hands(page: Any) -> dict[str, list[str]]:
    """Each seat's cards as drawn (``??`` = face down), sorted."""
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('[data-testid=seat]')].map(s =>
             [s.dataset.player, [...s.querySelectorAll('[data-testid=hand] .card')]
               .map(c => c.dataset.card).sort()]))"""
    )


def screenshot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    assert path.stat().st_size > 10_000
    return path


def test_step_to_each_finding_and_read_it(open_page: Opener) -> None:
    events, late_seq = planted_game()
    states = snapshots(events)
    page = open_page(events, at=0)
    assert index(page) == 0
    assert page.inner_text("[data-testid=position]").startswith(f"Event 1 of {len(events)}")
    assert page.is_disabled("[data-testid=prev]") and page.is_enabled("[data-testid=next]")
    assert page.locator("[data-testid=marker]").count() == 3  # the two at GameEnded share one

    page.click("[data-testid=next-finding]")
    assert index(page) == late_seq
    here = page.inner_text("[data-testid=here]")
    assert "CL-TIMER" in here and "VIOLATION" in here.upper() and "carol moved 120." in here
    assert "a turn has a base clock of 60 s" in here
    assert "carol discarded" in page.inner_text("[data-testid=event-desc]")
    want = {p: sorted(cards) for p, cards in states[late_seq]["hands"].items()}
    assert shown_hands(page) == want
    top = page.get_attribute("[data-testid=discard-top]", "data-card")
    assert top == events[late_seq]["payload"]["card"] == states[late_seq]["discard_pile"][-1]
    screenshot(page, "classic-finding-cl-timer")

    page.keyboard.press("ArrowRight")
    assert index(page) == late_seq + 1
    assert shown_hands(page) == {p: sorted(c) for p, c in states[late_seq + 1]["hands"].items()}
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Shift+ArrowRight")
    assert index(page) == late_seq + 10

    page.click("[data-testid=next-finding]")
    assert events[index(page)]["type"] == "ChipsTransferred"
    cmp = page.locator("[data-testid=here] [data-testid=cmp]")
    assert cmp.locator("td.claimed").inner_text() == "307"
    assert cmp.locator("td.recomputed").inner_text() == "300"

    page.keyboard.press("n")
    assert index(page) == len(events) - 1
    assert page.is_disabled("[data-testid=next-finding]") and page.is_disabled("[data-testid=last]")
    rows = page.locator("[data-testid=here] [data-testid=cmp] tbody tr").all_inner_texts()
    assert [r.split("\t") for r in rows] == [["winners", "alice", "carol"], ["net alice", "-50", "-100"]]
    assert "Game over · winners: carol" in page.inner_text("[data-testid=status]")
    screenshot(page, "classic-finding-net")

    page.keyboard.press("Home")
    assert index(page) == 0
    page.locator("[data-testid=marker]").nth(0).click()
    assert index(page) == late_seq
    page.locator("[data-testid=slider]").fill("100")
    assert index(page) == 100
    assert page.evaluate("location.hash") == f"#seq={events[100]['seq']}"
    page.click(".rg-all .finding-jump >> nth=1")
    assert events[index(page)]["type"] == "ChipsTransferred"


def test_the_player_view_hides_the_other_hands(open_page: Opener) -> None:
    events, late_seq = planted_game()
    viewer = "bob"
    omniscient = snapshots(events)[late_seq]
    page = open_page(events, viewer=viewer, at=late_seq)
    assert page.inner_text("[data-testid=view]") == f"As seen by {viewer}"
    hands = shown_hands(page)
    assert hands[viewer] == sorted(omniscient["hands"][viewer])
    for player in SEATS:
        if player != viewer:
            assert hands[player] == ["??"] * omniscient["hand_counts"][player]
            assert page.get_attribute(f"[data-player={player}] [data-testid=hand]", "data-visible") == "false"
    assert page.locator("[data-testid=stock] details").count() == 0  # no stock order
    # another player's draw from the stock shows a face-down card
    other_draw = next(e["seq"] for e in events if e["seq"] > late_seq and e["type"] == "Drew"
                      and e["actor"] != viewer and e["payload"]["source"] == "stock")
    page.locator("[data-testid=slider]").fill(str(other_draw))
    desc = page.locator("[data-testid=event-desc] .card")
    assert desc.count() == 1 and desc.get_attribute("data-card") == "??"
    assert "Hidden from bob: cards" in page.inner_text("[data-testid=event]")
    screenshot(page, "classic-view-bob")


def test_untrusted_ids_are_shown_as_text(open_page: Opener) -> None:
    events, _ = planted_game(["alice", EVIL, "carol"])
    page = open_page(events)
    assert page.locator("script").count() == 2
    names = page.locator("[data-testid=seat] .name").all_inner_texts()
    assert EVIL in names
    assert EVIL in page.inner_text("[data-testid=players]")


def test_the_layout_fits_a_phone(open_page: Opener) -> None:
    events, late_seq = planted_game()
    page = open_page(events, width=420, at=late_seq)
    assert page.evaluate("document.documentElement.scrollWidth") <= 420
    screenshot(page, "classic-phone")


@pytest.mark.parametrize("variant", ["r500", "liverpool", "michigan"])
def test_each_variant_draws_its_table(open_page: Opener, variant: str) -> None:
    need_variant(variant)
    seats = VARIANT_SEATS[variant]
    events = clean_game(variant, seats, 1)
    states = snapshots(events)
    page = open_page(events)
    assert index(page) == len(events) - 1
    assert "Clean — no findings" in page.inner_text("[data-testid=verdict]")
    middle = len(events) // 2
    page.locator("[data-testid=slider]").fill(str(middle))
    state = states[middle]
    assert shown_hands(page) == {p: sorted(state["hands"][p]) for p in seats}
    for pool, amount in state.get("pots", {}).items():
        shown = page.locator(f'[data-pool="{pool}"] .amount').first.inner_text()
        assert shown == str(amount), pool
    if variant == "michigan":
        tiles = page.locator("[data-testid=paycards] .paycard")
        assert tiles.count() == len([k for k in state["pots"] if k.startswith("pay:")]) == 4
        assert page.locator("[data-testid=pots] [data-pool=kitty]").count() == 1
    else:
        assert page.locator("[data-testid=stock] .zone-note").inner_text().startswith(str(state["stock_count"]))
    screenshot(page, f"{variant}-middle")
    viewer = seats[0]
    page = open_page(events, viewer=viewer, at=events[middle]["seq"])
    hands = shown_hands(page)
    assert hands[viewer] == sorted(state["hands"][viewer])
    assert all(set(h) <= {"??"} for p, h in hands.items() if p != viewer)
