"""Audit 53: acceptance re-check of issue 10 (the HTML replay page) and issue 11 (the
newcomer's path), on the current code, by a reviewer who did not write it.

Every point of both issues' Deliver text was re-run with the real commands
(``rummyguard replay GAME FILE --html OUT [--as P] [--at SEQ]`` on games of all four
variants made by ``rummyguard simulate --faults``, and the spec's classic example), the
pages opened in the headless Chromium the suite already uses (tests/test_html_browser.py,
conftest's ``browser`` fixture), and the README followed as a newcomer on a fresh clone.

Issue 10 — points and verdicts (the evidence is in the audit report):

- one self-contained HTML file, no network: HOLDS (CSP ``default-src 'none'``; the
  browser requested nothing but the file itself for every page opened here);
- the table with real card faces, suits in colour: HOLDS (hearts/diamonds are drawn red,
  clubs/spades black: pinned below, computed style in the browser);
- each player's hand, stock, discard pile, melds, pots and chips: HOLDS (the hands, stock
  count, discard top, melds and pots shown in the browser equal ``replay --json --at``'s
  state at the same seq, for all four variants: pinned below);
- timeline slider and step buttons: HOLDS (already pinned by test_html_browser.py);
- findings marked on the timeline, with the rule text and claimed vs recomputed side by
  side: HOLDS (every finding of the CLI page equals ``replay --json``'s record — seq,
  rule, kind, message — one marker per finding row, the rule text and, for each
  discrepancy, the claimed and recomputed cells agree with the message: pinned below).
  A violation that judges a claim (CL-AUTOPLAY: an auto-play before the clocks ran out)
  has no claimed/recomputed table; docs/disputes.md limits the table to discrepancies,
  and the message states both times: a documented decision, not a defect;
- per-player view (``--as``): HOLDS — other seats are face down in the browser, the file
  holds no hash, and (new here) the page is byte-identical for two games that differ only
  in cards the viewer never saw (a dealt card of another player swapped with a card of
  the same rank in a third hand or the stock, neither ever shown): so no hidden card
  is anywhere in the file, whatever the encoding;
- ``--at SEQ``: HOLDS (the page opens on the last row at or before SEQ, ``#seq=SEQ``);
- summary header (variant, players, result, clean or not): HOLDS;
- all four variants render; Michigan shows pay cards and kitty (and the widow): HOLDS;
- tests drive the page in headless Chromium with Playwright, step to a finding, check
  the hand and the finding text, save a screenshot; install or skip with a reason: HOLDS
  (tests/test_html_browser.py, test_audit36_views.py; this file adds the CLI's pages).

Issue 11 — points and verdicts:

- the README's first command (``make demo``) on a fresh clone with an empty HOME: HOLDS —
  set-up and demo 2 min 15 s wall clock (the demo itself 23.1 s); simulates 800 games of
  the four variants with planted fraud and 6 platform faults, ingests (47 lines
  quarantined, with their reason), verifies (794 of 800 clean; findings by rule: C-CLAIM
  1, CL-AUTOPLAY 2, LOG-CHAIN 1, MI-FOLLOW 2 = the 6 faults), scans and prints the top
  flags with evidence beside the planted truth and where the HTML replay was written
  (demo-out/replay-t000032-00.html, opened in the browser: no error, no request). Not
  in this file (too slow); progress bars are pinned by test_audit27_accept.py;
- README: purpose, the two commands, CLI at a glance, docs/events.md, feeding an export,
  views with columns, five analyst queries run by a test, fraud signals and reading a
  flag, Ray, measured figures: HOLDS (every command of README.md and docs/*.md a newcomer
  would copy was run on the demo store: schema, sql, verify-log, verify, checkpoint,
  flags, replay, replay --html/--as/--at, dispute --bundle, check-bundle; the queries
  are run by test_readme_queries.py and test_audit15_docs.py; the Ray cluster line
  ``--address auto`` needs a cluster and was not run);
- "with progress bars": HOLDS for simulate, verify and scan (seen in a pseudo-terminal);
  DEFECT (minor, fixed) for ingest: the demo's ingest bar never reaches its total — its total
  is the log's size in MB rounded up, its progress the bytes done rounded down, so the
  default demo's last frame is "ingest (MB) 38/39" and a 40-game world's "1/2" (a log
  under 1 MB: "0/1" throughout) — test_the_demo_ingest_bar_reaches_its_total;
- ``--help`` teaches the tool; user errors are one line: HOLDS for every mistake tried
  (unknown game, unseated ``--as``, ``--at`` outside the game, ``--html`` into a missing
  folder or onto a folder, bad SQL, missing ingest file, a mistyped option), on top of
  test_cli_errors.py. DEFECT (minor, fixed): ``demo --help`` and the note printed while the
  built-in model is fitted say "about a minute"; the README says about 15 s,
  benchmarks/RESULTS.md 12 s, and the fit took 11.1 s here (23.1 s for the whole demo on
  the fresh clone) — test_the_demo_help_and_fit_note_give_the_measured_fit_time.

Also re-checked and holding, not pinned here: ``replay --as P`` (text and ``--json``) is
byte-identical for the unseen-card swaps below too; the page of a game read from the store
equals the file's but for the documented "not stored: quarantined by ingest" marks
(docs/events.md); a 5,009-event Liverpool page renders in 1 s, loads in 0.7 s.

The tests below pin the points that hold and that no other test pins: the CLI's pages
(not ``render_html`` on driver games) against ``replay --json`` for games with planted
faults of every variant, in the browser; suit colours; ``--at`` pages; the per-player
page's indistinguishability; then the two defects, fixed in session 24 (each test failed before its fix).
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.cards import is_card_code
from rummyguard.replay.engine import GameEngine, replay
from rummyguard.replay.html import apply_patch, render_html

Event = dict[str, Any]
VARIANTS = ("classic", "r500", "liverpool", "michigan")
#: per variant: (games, seed) of a small world with 3 planted faults, one of which is a
#: rule or claim finding (not only LOG-CHAIN)
WORLDS = {"classic": (8, 5), "r500": (6, 5), "liverpool": (6, 5), "michigan": (6, 5)}
ARTIFACTS = Path(__file__).parent / "artifacts"


def rg(*args: Any) -> Any:
    res = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})
    assert res.exit_code in (0, 1), (args, res.exit_code, res.output[-2000:])
    return res


def page_data(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="rg-data">(.*?)</script>', text, re.S)
    assert m is not None
    return json.loads(m.group(1))


def page_states(data: dict[str, Any]) -> list[Any]:
    out, state = [], None
    for patch in data["patches"]:
        state = apply_patch(state, patch)
        out.append(state)
    return out


def replay_json(game: str, log: Path, *extra: Any) -> dict[str, Any]:
    return json.loads(rg("replay", game, log, "--json", *extra).stdout)


def games_of(log: Path) -> dict[str, list[Event]]:
    out: dict[str, list[Event]] = defaultdict(list)
    for line in log.read_text().splitlines():
        e = json.loads(line)
        out[e["game_id"]].append(e)
    return {g: sorted(v, key=lambda e: e["seq"]) for g, v in out.items()}


def finding_rows(findings: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted((f["seq"], f["rule"], f["kind"], f["message"]) for f in findings)


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[dict[str, Any]]]]:
    """One small simulated world per variant, with planted faults (``rummyguard simulate``)."""
    root = tmp_path_factory.mktemp("audit53")
    out = {}
    for variant, (games, seed) in WORLDS.items():
        log, labels = root / f"{variant}.jsonl", root / f"{variant}.labels.json"
        rg("simulate", "--games", games, "--seed", seed, "--variants", variant, "--faults", 3,
           "--workers", 1, "--out", log, "--labels", labels, "--no-progress")
        faults = json.loads(labels.read_text())["faults"]
        assert any(f["expected_rule"] != "LOG-CHAIN" for f in faults), faults
        out[variant] = (log, faults)
    return out


def fault_game(worlds: dict[str, tuple[Path, list[dict[str, Any]]]], variant: str) -> tuple[Path, dict[str, Any]]:
    log, faults = worlds[variant]
    return log, next(f for f in faults if f["expected_rule"] != "LOG-CHAIN")


# -- issue 10: the CLI's page says what replay --json says --------------------------------------
@pytest.mark.parametrize("variant", VARIANTS)
def test_cli_page_findings_results_and_table_match_replay_json(
        worlds: dict[str, tuple[Path, list[dict[str, Any]]]], variant: str, tmp_path: Path) -> None:
    """Every game of the world: the page ``replay --html`` writes holds exactly the
    findings (seq, rule, kind, message) and results of ``replay --json``, its verdict is
    the record's, its last table is the JSON state, every planted fault is on the page at
    its seq with its rule, and the table at each finding's row is ``--json --at``'s."""
    log, faults = worlds[variant]
    for game in games_of(log):
        out = tmp_path / f"{game}.html"
        rg("replay", game, log, "--html", out)
        data, doc = page_data(out), replay_json(game, log)
        record = doc["record"]
        assert finding_rows(data["findings"]) == finding_rows(record["findings"]), game
        assert data["meta"]["results"] == record["results"], game
        assert data["meta"]["clean"] is record["clean"] and data["meta"]["variant"] == variant
        states = page_states(data)
        assert states[-1] == doc["state"], game
        for fault in (f for f in faults if f["game_id"] == game):
            assert (fault["seq"], fault["expected_rule"]) in {(f["seq"], f["rule"]) for f in data["findings"]}
        for f in data["findings"]:
            row = data["events"][f["i"]]
            assert row["seq"] == f["seq"], (game, f)
            if f["rule"] != "LOG-CHAIN":  # a tampered event's table is compared below
                assert states[f["i"]] == replay_json(game, log, "--at", f["seq"])["state"], (game, f)
            if f["kind"] == "discrepancy":  # both values side by side, as the message says
                assert f["details"], f
                for _label, claimed, recomputed in f["details"]:
                    assert claimed != recomputed, f


@pytest.mark.parametrize("variant", VARIANTS)
def test_cli_player_page_at_a_seq_matches_replay_json_as_at(
        worlds: dict[str, tuple[Path, list[dict[str, Any]]]], variant: str, tmp_path: Path) -> None:
    """``--html --as P --at S`` at the planted finding: the page ends at S, its last table
    is ``--json --as P --at S``'s state, its findings and results are the JSON record's,
    and it holds no ``hash``/``prev_hash``."""
    log, fault = fault_game(worlds, variant)
    game, seq = fault["game_id"], fault["seq"]
    seats = games_of(log)[game][0]["payload"]["seats"]
    for viewer in seats:
        out = tmp_path / f"{viewer}.html"
        rg("replay", game, log, "--html", out, "--as", viewer, "--at", seq)
        data, doc = page_data(out), replay_json(game, log, "--as", viewer, "--at", seq)
        assert data["meta"]["viewer"] == viewer and data["meta"]["until"] == seq
        assert data["events"][-1]["seq"] == seq
        assert page_states(data)[-1] == doc["state"]
        assert finding_rows(data["findings"]) == finding_rows(doc["record"]["findings"])
        assert data["meta"]["results"] == doc["record"]["results"]
        text = out.read_text(encoding="utf-8")
        assert '"hash"' not in text and '"prev_hash"' not in text


def test_the_spec_example_page_gives_the_expected_result(tmp_path: Path) -> None:
    """shared/spec/examples: the page of the classic example shows the expected.json result."""
    from spec_paths import EXAMPLES

    log = EXAMPLES / "classic-3p.jsonl"
    expected = json.loads((EXAMPLES / "classic-3p.expected.json").read_text())
    out = tmp_path / "example.html"
    rg("replay", expected["game_id"], log, "--html", out)
    data = page_data(out)
    assert data["meta"]["clean"] is expected["clean"] and data["findings"] == expected["findings"]
    assert data["meta"]["results"] == expected["results"]


# -- issue 10: the per-player page holds nothing the player never saw -------------------------
def _codes(value: Any, into: set[str]) -> None:
    if isinstance(value, str):
        if is_card_code(value):
            into.add(value)
    elif isinstance(value, dict):
        for v in value.values():
            _codes(v, into)
    elif isinstance(value, list):
        for v in value:
            _codes(v, into)


def _unseen_part(event: Event, viewer: str) -> set[str]:
    """The payload keys whose cards ``viewer`` does not see, from docs/disputes.md's list
    (written here independently of replay/html.py's redaction): the dealt deck, a
    restock, another player's stock draw, buy penalty card, auto-play draw and poker hand."""
    kind, p = event["type"], event["payload"]
    if kind == "RoundStarted":
        return {"deck"}
    if kind == "StockReplenished":
        return {"stock"}
    if kind == "Drew" and event["actor"] != viewer and p.get("source") == "stock":
        return {"cards"}
    if kind == "Bought" and event["actor"] != viewer:
        return {"penalty"}
    if kind == "AutoPlayed" and p.get("player") != viewer:
        return {"drew"}
    if kind == "PokerHandDeclared" and event["actor"] != viewer:
        return {"cards"}
    return set()


#: the full snapshot's keys that hold cards face down (the rest of the table is open)
_CLOSED = frozenset({"hands", "stock", "widow", "dead", "poker"})


def _swap(value: Any, x: str, y: str) -> Any:
    if isinstance(value, str):
        return y if value == x else x if value == y else value
    if isinstance(value, list):
        return [_swap(v, x, y) for v in value]
    if isinstance(value, dict):
        return {k: _swap(v, x, y) for k, v in value.items()}
    return value


def _unseen_pairs(events: list[Event], viewer: str, limit: int) -> list[tuple[int, int, str, str]]:
    """(first, end, X, Y): two cards of the same rank that ``viewer`` never sees in the
    round events[first:end] — never in his own hand nor open on the table, never named by
    a move he sees (only in the deck and in the moves of others he does not see); at most
    ``limit`` pairs, from different rounds."""
    starts = [i for i, e in enumerate(events) if e["type"] == "RoundStarted"]
    bounds = list(zip(starts, [*starts[1:], len(events)], strict=True))
    seen: dict[int, set[str]] = {first: set() for first in starts}
    engine = GameEngine()
    first = None
    for i, e in enumerate(events):
        if e["type"] == "RoundStarted":
            first = i
        engine.apply(e)
        if first is None:
            continue
        hidden = _unseen_part(e, viewer)
        _codes({key: v for key, v in e["payload"].items() if key not in hidden}, seen[first])
        assert engine.variant is not None
        full = engine.variant.snapshot(None)
        _codes(full["hands"].get(viewer, []), seen[first])  # his own hand
        # the table's open cards: discard pile (the upcard too), melds, played cards...
        _codes({key: v for key, v in full.items() if key not in _CLOSED}, seen[first])
    out: list[tuple[int, int, str, str]] = []
    for first, end in bounds:
        unseen = sorted(set(events[first]["payload"]["deck"]) - seen[first])
        pair = next(((x, y) for x in unseen for y in unseen if x < y and x[0] == y[0]), None)
        if pair is not None:
            out.append((first, end, *pair))
    return out[:limit]


def test_a_players_page_is_the_same_for_games_that_differ_only_in_what_he_never_saw(
        worlds: dict[str, tuple[Path, list[dict[str, Any]]]]) -> None:
    """Swap, in one round of a clean unchained game, two cards of the same rank that a
    player never sees (in others' hands, the stock, the widow, others' stock draws, buy
    penalties, poker hands): the full page changes, and while the swapped game is still
    clean, that player's page must not change by one byte — no hidden card is anywhere
    in the file, in any form (state, events, findings, counts, order)."""
    tried: Counter[str] = Counter()
    for variant in VARIANTS:
        log, _ = worlds[variant]
        for events in games_of(log).values():
            base = [{k: v for k, v in e.items() if k not in ("hash", "prev_hash")} for e in events]
            if not replay(base).clean:
                continue
            for viewer in base[0]["payload"]["seats"]:
                mine = render_html(base, viewer=viewer)
                for first, end, x, y in _unseen_pairs(base, viewer, limit=2):
                    other = copy.deepcopy(base)
                    for e in other[first:end]:
                        e["payload"] = _swap(e["payload"], x, y)
                    if not replay(other).clean:  # the swap made it another game (a poker flush...)
                        continue
                    tried[variant] += 1
                    assert render_html(other) != render_html(base)
                    assert render_html(other, viewer=viewer) == mine, (
                        variant, base[0]["game_id"], viewer, x, y)
    assert min(tried[v] for v in VARIANTS) >= 5, tried


# -- issue 10: the CLI's page in a real browser ----------------------------------------------------
def _open(browser: Any, path: Path, width: int = 1400) -> tuple[Any, list[str], list[str]]:
    page = browser.new_page(viewport={"width": width, "height": 1000})
    errors: list[str] = []
    requests: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
    page.on("console", lambda msg: errors.append(f"console: {msg.text}") if msg.type == "error" else None)
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready=true]")
    return page, errors, requests


def _shown_hands(page: Any) -> dict[str, list[str]]:
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('[data-testid=seat]')].map(s =>
             [s.dataset.player, [...s.querySelectorAll('[data-testid=hand] .card')]
               .map(c => c.dataset.card).sort()]))""")


@pytest.mark.browser
@pytest.mark.parametrize("variant", VARIANTS)
def test_cli_page_in_the_browser_at_the_planted_finding(
        browser: Any, worlds: dict[str, tuple[Path, list[dict[str, Any]]]], variant: str,
        tmp_path: Path) -> None:
    """The support agent's path: ``replay GAME FILE --html OUT``, open it, go to the first
    event, step to the next finding: the row is the planted fault's seq, the hands, stock,
    discard top, melds and pots shown are ``replay --json --at SEQ``'s, the finding shows
    its rule, message and rule text (and the claimed/recomputed cells of a discrepancy);
    the header names the variant, the players, the winners and the verdict; Michigan
    draws its pay cards, kitty and widow. Screenshot saved."""
    log, fault = fault_game(worlds, variant)
    game, seq = fault["game_id"], fault["seq"]
    out = tmp_path / f"{variant}.html"
    rg("replay", game, log, "--html", out)
    doc = replay_json(game, log, "--at", seq)
    finding = next(f for f in doc["record"]["findings"] if f["seq"] == seq and f["rule"] == fault["expected_rule"])
    state = doc["state"]
    page, errors, requests = _open(browser, out)
    header = page.inner_text("header")
    assert page.inner_text("[data-testid=variant]").lower() == variant
    assert all(p in page.inner_text("[data-testid=players]") for p in state["hands"])
    assert page.inner_text("[data-testid=winners]") == (", ".join(sorted(doc["record"]["results"]["winners"]))
                                                        or "nobody")
    n = len(doc["record"]["findings"])
    assert f"{n} finding" in page.inner_text("[data-testid=verdict]"), header
    assert page.locator("[data-testid=marker]").count() == len({f["i"] for f in page_data(out)["findings"]})
    page.click("[data-testid=first]")
    page.click("[data-testid=next-finding]")
    i = int(page.get_attribute("body", "data-index"))
    assert page_data(out)["events"][i]["seq"] == seq
    assert page.evaluate("location.hash") == f"#seq={seq}"
    assert _shown_hands(page) == {p: sorted(c) for p, c in state["hands"].items()}
    here = page.inner_text("[data-testid=here]")
    assert finding["rule"] in here and finding["message"] in here
    text = next(f["rule_text"] for r in doc["timeline"] for f in r["findings"]
                if f["seq"] == seq and f["rule"] == finding["rule"])
    assert text and " ".join(text.split())[:80] in " ".join(here.split())
    if finding["kind"] == "discrepancy":
        cmp = page.locator("[data-testid=here] [data-testid=cmp]")
        assert cmp.count() == 1
        claimed = cmp.locator("td.claimed").all_inner_texts()
        recomputed = cmp.locator("td.recomputed").all_inner_texts()
        assert claimed and claimed != recomputed
        labels = cmp.locator("tbody th").all_inner_texts()
        cells = {lab: (c.split(" + "), r.split(" + "))
                 for lab, c, r in zip(labels, claimed, recomputed, strict=True)}
        # the message's differences are in the cells: "claimed but not due: a->b 90; due
        # but not claimed: a->b 100" -> row "a → b", 90 claimed, 100 recomputed
        for side, part in (("claimed but not due", 0), ("due but not claimed", 1)):
            m = re.search(side + r": ([^;]+)", finding["message"])
            for item in (m.group(1).split(", ") if m else []):
                pair, amount = item.rsplit(" ", 1)
                assert amount in cells[pair.replace("->", " → ")][part], (item, cells)
    if "stock_count" in state:
        assert page.inner_text("[data-testid=stock] .zone-note").startswith(str(state["stock_count"]))
    if state.get("discard_pile"):
        assert page.get_attribute("[data-testid=discard-top]", "data-card") == state["discard_pile"][-1]
    assert page.locator("[data-testid=meld]").count() == len(state.get("melds") or [])
    for pool, amount in state.get("pots", {}).items():
        if not pool.startswith("pay:"):
            assert page.locator(f'[data-testid=pots] [data-pool="{pool}"] .amount').inner_text() == str(amount)
    if variant == "michigan":
        pays = [k for k in state["pots"] if k.startswith("pay:")]
        assert page.locator("[data-testid=paycards] .paycard").count() == len(pays) == 4
        assert page.locator("[data-testid=pots] [data-pool=kitty]").count() == 1
        assert page.locator("[data-testid=pile-widow]").count() == 1
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / f"audit53-cli-{variant}-finding.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    assert errors == [] and all(u.startswith("file://") for u in requests), (errors, requests)
    page.close()


@pytest.mark.browser
@pytest.mark.parametrize("variant", VARIANTS)
def test_cli_player_page_in_the_browser_hides_the_other_hands(
        browser: Any, worlds: dict[str, tuple[Path, list[dict[str, Any]]]], variant: str,
        tmp_path: Path) -> None:
    """``--html --as P`` (whole game) opened in the browser at every step from the first
    event to the planted finding: P's hand is P's hand of ``--json --as P --at``, the
    others are face down, as many as they hold."""
    log, fault = fault_game(worlds, variant)
    game, seq = fault["game_id"], fault["seq"]
    viewer = games_of(log)[game][0]["payload"]["seats"][1]
    out = tmp_path / f"{variant}-as.html"
    rg("replay", game, log, "--html", out, "--as", viewer)
    data = page_data(out)
    page, errors, requests = _open(browser, out)
    assert page.inner_text("[data-testid=view]") == f"As seen by {viewer}"
    page.click("[data-testid=first]")
    seen = 0
    while True:
        i = int(page.get_attribute("body", "data-index"))
        row_seq = data["events"][i]["seq"]
        if row_seq > seq:
            break
        if data["events"][i]["type"] in ("RoundStarted", "Drew", "CardPlayed", "Discarded", "WidowBought"):
            state = replay_json(game, log, "--as", viewer, "--at", row_seq)["state"]
            hands = _shown_hands(page)
            assert hands[viewer] == sorted(state["hands"][viewer]), row_seq
            for p, cards in hands.items():
                if p != viewer:
                    assert cards == ["??"] * state["hand_counts"][p], (row_seq, p)
            seen += 1
            if seen >= 6:
                break
        if page.is_disabled("[data-testid=next]"):
            break
        page.click("[data-testid=next]")
    assert seen >= 1
    if variant == "michigan":  # the layout in his view too; who holds the next card: nobody
        assert page.locator("[data-testid=paycards] .paycard").count() == 4
        assert page.locator("[data-testid=pots] [data-pool=kitty]").count() == 1
        full = page_states(page_data(_full_page(game, log, tmp_path)))
        mine = page_states(data)
        hidden = next(i for i, (f, m) in enumerate(zip(full, mine, strict=False))
                      if f.get("in_turn") not in (None, viewer) and m.get("in_turn") is None)
        page.locator("[data-testid=slider]").fill(str(hidden))
        status = page.inner_text("[data-testid=status]")
        assert "In turn —" in status and str(full[hidden]["in_turn"]) not in status, status
    assert errors == [] and all(u.startswith("file://") for u in requests), (errors, requests)
    page.close()


def _full_page(game: str, log: Path, tmp_path: Path) -> Path:
    out = tmp_path / f"{game}-full.html"
    rg("replay", game, log, "--html", out)
    return out


@pytest.mark.browser
@pytest.mark.parametrize("variant", ["r500", "michigan"])
def test_cli_page_at_a_seq_opens_there(browser: Any, worlds: dict[str, tuple[Path, list[dict[str, Any]]]],
                                       variant: str, tmp_path: Path) -> None:
    """``replay GAME FILE --html OUT --at SEQ`` (the command a flag's evidence names): the
    page opens on SEQ's row, the address says ``#seq=SEQ`` and the hands are
    ``--json --at SEQ``'s; the whole game stays on the page (the agent's view)."""
    log, fault = fault_game(worlds, variant)
    game = fault["game_id"]
    events = games_of(log)[game]
    seq = events[len(events) // 3]["seq"]
    out = tmp_path / "at.html"
    rg("replay", game, log, "--html", out, "--at", seq)
    data = page_data(out)
    assert data["events"][-1]["seq"] == events[-1]["seq"]
    page, errors, _ = _open(browser, out)
    assert data["events"][int(page.get_attribute("body", "data-index"))]["seq"] == seq
    assert page.evaluate("location.hash") == f"#seq={seq}"
    state = replay_json(game, log, "--at", seq)["state"]
    assert _shown_hands(page) == {p: sorted(c) for p, c in state["hands"].items()}
    assert errors == []
    page.close()


@pytest.mark.browser
def test_cards_are_drawn_with_suits_in_colour(browser: Any, worlds: dict[str, tuple[Path, list[dict[str, Any]]]],
                                              tmp_path: Path) -> None:
    """Issue 10: "real card faces (suits in colour)": hearts and diamonds are red, clubs and
    spades dark, in the colours the browser actually paints."""
    log, fault = fault_game(worlds, "classic")
    out = tmp_path / "colours.html"
    rg("replay", fault["game_id"], log, "--html", out)
    page, errors, _ = _open(browser, out)
    colours = page.evaluate(
        """() => { const out = {};
             for (const c of document.querySelectorAll('.card[data-card]')) {
               const code = c.dataset.card;
               if (code.length === 2 && 'CDHS'.includes(code[1]))
                 out[code[1]] = getComputedStyle(c).color; }
             return out; }""")
    assert set(colours) == set("CDHS"), colours

    def rgb(s: str) -> tuple[int, ...]:
        return tuple(int(v) for v in re.findall(r"\d+", s)[:3])

    for suit in "HD":
        r, g, b = rgb(colours[suit])
        assert r > 150 and g < 80 and b < 80, (suit, colours[suit])
    for suit in "CS":
        assert max(rgb(colours[suit])) < 60, (suit, colours[suit])
    assert errors == []
    page.close()


# -- issue 11: the newcomer's path --------------------------------------------------------------
def test_the_demo_ingest_bar_reaches_its_total(worlds: dict[str, tuple[Path, list[dict[str, Any]]]],
                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 11: "with progress bars". The demo's ingest bar, as it counts, must end full."""
    from contextlib import contextmanager

    from rummyguard.cli import demo_cmd

    seen: dict[str, Any] = {}

    @contextmanager
    def recording_bar(label: str, total: int | None):  # type: ignore[no-untyped-def]
        seen["total"] = total

        def update(**change: Any) -> None:
            seen.update(change)
        yield update

    monkeypatch.setattr(demo_cmd, "_bar", recording_bar)
    log = worlds["liverpool"][0]  # 0.9 MB
    summary = demo_cmd._ingest(tmp_path / "bar.duckdb", [log])
    assert summary.stored > 0 and seen["total"] >= 1
    assert seen.get("completed") == seen["total"], seen  # now: completed 0 of total 1


def test_the_demo_help_and_fit_note_give_the_measured_fit_time() -> None:
    """Issue 11: "each command's help teach the tool"; the README: the built-in model "is
    fitted on first use (about 15 s; benchmarks/bench_fit.py)"."""
    import inspect

    from rummyguard.fraud import builtin

    readme = (Path(__file__).parents[1] / "README.md").read_text()
    assert "It is fitted on first use (about 15 s" in readme
    help_text = " ".join(CliRunner().invoke(app, ["demo", "--help"], env={"COLUMNS": "200"}).output.split())
    note = inspect.getsource(builtin.builtin_model)
    assert "about a minute" not in help_text
    assert "about a minute" not in note
