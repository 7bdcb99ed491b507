"""Differential test of ``state_at`` and the per-player views against tests/viewer_oracle.py.

Why: the views decide what a disputing player is shown; a leak (another hand, the stock,
a stock draw, Michigan's widow or next-card holder) or a wrong state would pass every
results test. The oracle recomputes both from the events alone (spec/RULES.md, EVENTS.md,
README "Settling a dispute"); here every seq of a few clean simulated games per variant
and the clean tests/data logs is compared, every viewer snapshot is scanned for card codes
the viewer could not know, and the CLI's ``--as --json`` output and the per-player HTML
page are scanned the same way.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner
from viewer_oracle import ViewOracle, _copy, codes_in, expected, expected_turn, knowable, leaks, observed

from rummyguard.cli.app import app
from rummyguard.events.cards import format_card, pretty_card
from rummyguard.replay.engine import GameEngine, replay, state_at
from rummyguard.replay.html import build_report, render_html
from rummyguard.sim.world import WorldConfig, build_world, run_world

DATA = Path(__file__).parent / "data"
CLEAN_LOGS = [*sorted(DATA.glob("*/clean*.jsonl")), DATA / "sample" / "classic-3p.jsonl"]
VARIANTS = ("classic", "r500", "liverpool", "michigan")
Event = dict[str, Any]


def _games(lines: bytes | str) -> list[list[Event]]:
    text = lines.decode() if isinstance(lines, bytes) else lines
    by_game: dict[str, list[Event]] = defaultdict(list)
    for line in text.splitlines():
        if line.strip():
            e = json.loads(line)
            by_game[e["game_id"]].append(e)
    return [sorted(g, key=lambda e: e["seq"]) for g in by_game.values()]


@pytest.fixture(scope="module")
def simulated() -> dict[str, list[list[Event]]]:
    """Six clean simulated games per variant (seeded: the same games every run)."""
    out: dict[str, list[list[Event]]] = {}
    for variant in VARIANTS:
        chunks: list[bytes] = []
        run_world(build_world(WorldConfig(games=6, seed=5, variants=(variant,))), chunks.append)
        out[variant] = [g for g in _games(b"".join(chunks)) if replay(g).clean]
    return out


def differences(events: list[Event], state_at_every: int = 0) -> tuple[list[str], Counter[str]]:
    """Every disagreement between the engine's views and the oracle over every seq and
    viewer (None = the full state); ``state_at_every``: also check ``state_at`` equals the
    incremental snapshot on every n-th seq."""
    engine, oracle = GameEngine(), ViewOracle()
    seats: list[str] = events[0]["payload"]["seats"]
    variant: str = events[0]["payload"]["variant"]
    problems: list[str] = []
    counts: Counter[str] = Counter()
    for i, e in enumerate(events):
        engine.apply(e)
        oracle.apply(e)
        assert engine.variant is not None
        nxt = events[i + 1] if i + 1 < len(events) else None
        for viewer in [None, *seats]:
            snap = engine.variant.snapshot(viewer)
            if state_at_every and i % state_at_every == 0:
                counts["state_at"] += 1
                if state_at(events, e["seq"], viewer) != snap:
                    problems.append(f"seq {e['seq']} {viewer}: state_at differs from the fold")
            want, got = expected(oracle.t, viewer), observed(snap, variant, seats)
            counts["compared"] += 1
            problems += [f"seq {e['seq']} {viewer} {k}: want {want[k]} got {got[k]}"
                         for k in want if want[k] != got[k]]
            checkable, who = expected_turn(oracle.t, nxt, viewer)
            if checkable:
                counts["turns"] += 1
                if snap.get("in_turn") != who:
                    problems.append(f"seq {e['seq']} {viewer} in_turn: want {who} got {snap.get('in_turn')}")
            holder = oracle.t.due_holder
            if variant == "michigan" and viewer not in (None, holder) and holder is not None:
                counts["follows"] += 1  # who holds the due card: only he may be shown
                if snap["next_card"] is not None or holder in snap["to_act"]:
                    problems.append(f"seq {e['seq']} {viewer}: shows the holder {holder}")
            if viewer is not None:
                counts["scans"] += 1
                bad = leaks(snap, oracle.t, viewer)
                if bad:
                    problems.append(f"seq {e['seq']} {viewer}: leaks {bad}")
    return problems, counts


@pytest.mark.parametrize("variant", VARIANTS)
def test_views_match_oracle_on_simulated_games(simulated: dict[str, list[list[Event]]],
                                               variant: str) -> None:
    games = simulated[variant]
    assert len(games) >= 4, "the simulator should give clean games"
    total: Counter[str] = Counter()
    for g in games:
        problems, counts = differences(g, state_at_every=25)
        assert problems == [], f"{g[0]['game_id']}: {problems[:5]}"
        total += counts
    assert total["compared"] > 500 and total["turns"] > 100 and total["state_at"] > 20


@pytest.mark.parametrize("path", CLEAN_LOGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_views_match_oracle_on_clean_logs(path: Path) -> None:
    for g in _games(path.read_text()):
        if not replay(g).clean:
            continue
        problems, _ = differences(g)
        assert problems == [], f"{g[0]['game_id']}: {problems[:5]}"


# -- the oracle can fail: a leak and a wrong state are caught ------------------------------


def test_oracle_catches_a_leaked_hand_and_a_wrong_count() -> None:
    g = _games((DATA / "michigan" / "clean-3p.jsonl").read_text())[0]
    oracle = ViewOracle()
    for e in g[:12]:
        oracle.apply(e)
    seats = g[0]["payload"]["seats"]
    snap = state_at(g, g[11]["seq"], seats[0])
    assert leaks(snap, oracle.t, seats[0]) == []
    full = state_at(g, g[11]["seq"])
    assert leaks(full, oracle.t, seats[0]) != []  # the full state shows others' cards
    wrong = {**snap, "hand_counts": {**snap["hand_counts"], seats[1]: 99}}
    assert expected(oracle.t, seats[0]) != observed(wrong, "michigan", seats)


# -- the CLI's --as --json output and the per-player page -----------------------------------

_PRETTY = {pretty_card(c): format_card(c) for c in range(53)}
_PRETTY_RE = re.compile("|".join(re.escape(k) for k in sorted(_PRETTY, key=len, reverse=True)
                                  if k != "JK"))


def _hidden(e: Event, viewer: str) -> list[str]:
    """The cards of an event that ``viewer`` did not see (README "Settling a dispute")."""
    p, kind = e["payload"], e["type"]
    if kind == "RoundStarted":
        return list(p["deck"])
    if kind == "StockReplenished":
        return list(p["stock"])
    if kind == "Drew" and p["source"] == "stock" and e["actor"] != viewer:
        return list(p["cards"])
    if kind == "Bought" and e["actor"] != viewer:
        return [p["penalty"]]
    if kind == "AutoPlayed" and p["player"] != viewer and p.get("drew"):
        return [p["drew"]]
    if kind == "PokerHandDeclared" and e["actor"] != viewer:
        return list(p["cards"])
    return []


def _shown(e: Event, viewer: str) -> Counter[str]:
    """The cards of an event ``viewer`` saw (its payload's codes minus the hidden ones)."""
    seen = Counter(c for c in re.findall(r'"([2-9TJQKA][CDHS]|JK)"', json.dumps(e["payload"])))
    return seen - Counter(_hidden(e, viewer))


def _row_codes(row: dict[str, Any]) -> Counter[str]:
    text = row["text"]
    out = Counter(_PRETTY[m] for m in _PRETTY_RE.findall(text))
    out.update(re.findall(r"\b(?:[2-9TJQKA][CDHS]|JK)\b", text))
    return out


@pytest.mark.parametrize("variant", VARIANTS)
def test_cli_as_json_hides_what_the_viewer_did_not_see(
        simulated: dict[str, list[list[Event]]], variant: str, tmp_path: Path) -> None:
    g = simulated[variant][0]
    log = tmp_path / "g.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in g))
    viewer = g[0]["payload"]["seats"][1]
    at = g[len(g) * 2 // 3]["seq"]
    res = CliRunner().invoke(app, ["replay", g[0]["game_id"], str(log), "--at", str(at),
                                   "--as", viewer, "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["state"] == state_at(g, at, viewer)
    oracle = ViewOracle()
    for e in g:
        if e["seq"] > at:
            break
        oracle.apply(e)
    assert leaks(out["state"], oracle.t, viewer) == []
    assert leaks(out["record"], oracle.t, viewer) == []
    by_seq = {e["seq"]: e for e in g}
    hidden_rows = 0
    for row in out["timeline"]:
        e = by_seq[row["seq"]]
        if _hidden(e, viewer):
            hidden_rows += 1
            # a row may name only the cards of its event the viewer saw
            assert _row_codes(row) - _shown(e, viewer) == Counter(), row


@pytest.mark.parametrize("variant", ["r500", "michigan"])  # one deck: a code names one card
def test_per_player_page_holds_no_card_the_viewer_never_saw(
        simulated: dict[str, list[list[Event]]], variant: str) -> None:
    g = simulated[variant][0]
    viewer = g[0]["payload"]["seats"][0]
    ever: Counter[str] = Counter()
    oracle = ViewOracle()
    for e in g:
        oracle.apply(e)
        ever |= knowable(_copy(oracle.t), viewer)
    page = render_html(g, viewer=viewer)
    assert '"hash"' not in page and "prev_hash" not in page
    # what a joker stands for in a meld on the table is public, and names no real card
    # (a run AC 2C 3C JK: "stands" AC 2C 3C 4C, while the 4C itself may be hidden)
    page = re.sub(r'"stands":\["=",\[[^\]]*\]\]|"stands":\[[^\]]*\]', "", page)
    embedded = set(re.findall(r'"([2-9TJQKA][CDHS]|JK)"', page))
    embedded |= {_PRETTY[m] for m in _PRETTY_RE.findall(page)}
    if variant == "michigan":  # no jokers in the deck: "JK" is the page script's own text
        embedded.discard("JK")
    never = sorted(c for c in embedded if ever[c] <= 0)
    assert never == [], f"{viewer} never saw {never}"
    full = render_html(g)
    assert codes_in(full) - set(ever), "the omniscient page should show more (the check can fail)"


def page_leaks(events: list[Event], viewer: str) -> tuple[list[str], int]:
    """Cards the per-player page's rows (embedded event and description) name that
    ``viewer`` could not know right after that event, and how many rows were checked."""
    report = build_report(events, viewer)
    oracle = ViewOracle()
    problems: list[str] = []
    for e, row in zip(events, report["events"], strict=True):
        oracle.apply(e)
        assert row["seq"] == e["seq"]
        assert "hash" not in row["event"] and "prev_hash" not in row["event"]
        named = codes_in(row["event"]) | codes_in(row["desc"])
        known = knowable(oracle.t, viewer)
        bad = sorted(c for c in named if known[c] <= 0)
        if bad:
            problems.append(f"seq {e['seq']} {e['type']}: {bad}")
    return problems, len(report["events"])


@pytest.mark.parametrize("variant", VARIANTS)
def test_per_player_page_rows_name_only_known_cards(
        simulated: dict[str, list[list[Event]]], variant: str) -> None:
    rows = 0
    for g in simulated[variant][:3]:
        for viewer in g[0]["payload"]["seats"]:
            problems, n = page_leaks(g, viewer)
            assert problems == [], f"{g[0]['game_id']} as {viewer}: {problems[:5]}"
            rows += n
    assert rows > 100


def test_scores_and_pools_follow_the_claims(simulated: dict[str, list[list[Event]]]) -> None:
    """Clean logs: after each RoundEnded the game totals (r500: sum of round scores,
    Liverpool: penalty points) are the running sum of the claims, and after each
    ChipsTransferred every pool and tournament stack is what the claims moved so far."""
    checked = 0
    for variant in VARIANTS:
        for g in simulated[variant]:
            engine, totals, flows = GameEngine(), Counter[str](), Counter[str]()
            created = g[0]["payload"]
            for e in g:
                engine.apply(e)
                assert engine.variant is not None
                snap = engine.variant.snapshot(created["seats"][0])
                if e["type"] == "RoundEnded":
                    totals.update(e["payload"]["scores"])
                    want = ({p: totals[p] for p in created["seats"]}
                            if variant in ("r500", "liverpool") else {})
                    assert snap.get("scores", {}) == want, (e["game_id"], e["seq"])
                    checked += 1
                elif e["type"] == "ChipsTransferred":
                    for tr in e["payload"]["transfers"]:
                        flows[tr["from"]] -= tr["amount"]
                        flows[tr["to"]] += tr["amount"]
                    assert snap["pots"] == {k: flows[k] for k in snap["pots"]}, (e["game_id"], e["seq"])
                    if "stacks" in snap:
                        assert snap["stacks"] == {p: created["stake"] + flows[p] for p in created["seats"]}
                    checked += 1
    assert checked > 40
