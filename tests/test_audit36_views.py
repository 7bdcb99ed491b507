"""Audit 36: what each player could see — ``rummyguard replay GAME FILE --as PLAYER
[--at SEQ] [--json | --html OUT]``, the view a support agent shows a disputing player.

The view must show what that player could see at that moment (spec/RULES.md,
spec/EVENTS.md; README "Settling a dispute", docs/disputes.md) and nothing more. Checked
here, against the independent oracle of tests/viewer_oracle.py where it applies:

- the oracle comparison of every snapshot, and the scan of every per-player page row, on
  corner games of the four variants (Fresh redeals, auto-plays, a restock, removals,
  Rummy 500 deep pile draws and joker swaps, Liverpool buys and Rummy calls, Michigan
  widow purchases, poker hands and leaves), which test_viewer_oracle.py does not replay;
- the CLI at many ``--at`` points (the deal, another player's and one's own stock draw, a
  deep pile draw, a buy by another and by oneself, a Rummy call, a Fresh redeal, an
  auto-play, a restock, a widow purchase, poker declarations, a removal, a round's end,
  the game's end), in JSON and in the page it writes: the state, the timeline, the
  findings and results, each card named, the hand sizes, and nothing after ``--at``;
- the page in a real headless Chromium at those points;
- byte-identical output for the same viewer across runs (hash seeds differ).

Defects this audit fixed (each has a test below that failed before the fix):

1. A player's page of a game read from FILES named the server's log file: the row of a
   line that is not a valid event showed "/srv/in/x.jsonl:7 is not a valid event: ..."
   (the finding was masked, the row was not).
2. Michigan's C-HOLD finding told every player where a hidden card was: "p1 plays 4C,
   which is held by p3" (or "in the widow", "in a dead hand"); the card is in the event,
   its place is not: others now read "which is not in his hand".
3. ``--as P --at S`` showed P what happened after S: the JSON ``record`` held the whole
   game's later findings and final results (and ``finished``), the text printed "Results
   of the whole game", and the ``--html`` page embedded every later event and state. The
   player's view now ends at S: findings up to S, results so far, a page cut at S.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from corners_kit import corner_game
from test_viewer_oracle import _PRETTY, _PRETTY_RE, _hidden, _row_codes, _shown, differences, page_leaks
from typer.testing import CliRunner
from viewer_oracle import ViewOracle, codes_in, expected, knowable, leaks, observed

from rummyguard.cli.app import app
from rummyguard.replay.engine import GameEngine, replay, state_at
from rummyguard.replay.html import apply_patch

Event = dict[str, Any]
DATA = Path(__file__).parent / "data"
EXAMPLE = DATA / "spec" / "classic-3p.jsonl"  # example-classic, seats example-classic-p1..p3
MI_HOLD = DATA / "michigan" / "c-hold-card-not-in-hand.jsonl"  # mi3-101: seq 8 halts (C-HOLD)
#: one corner game per variant (corners_kit, fixed seeds), each with the corners it must hold
CORNERS: dict[str, tuple[str, int, dict[str, int]]] = {
    "classic": ("classic", 3, {"redeal": 1, "AutoPlayed": 5, "StockReplenished": 1,
                               "PlayerRemoved": 1, "DeclaredRummy": 1}),
    "r500": ("r500", 0, {"deep": 3, "JokerSwapped": 1, "RoundEnded": 2, "PlayerLeft": 1}),
    "liverpool": ("liverpool", 0, {"Bought": 3, "RummyCalled": 1, "StockReplenished": 1,
                                   "PlayerLeft": 1}),
    "liverpool-rounds": ("liverpool", 6, {"Bought": 10, "RummyCalled": 3, "RoundEnded": 6}),
    "michigan": ("michigan", 6, {"WidowBought": 2, "PokerHandDeclared": 5, "PlayerLeft": 1,
                                 "RoundEnded": 2}),
}
#: a card code in a sentence (not the card of a pay-card pool, ``pay:JS``)
CARD = re.compile(r"(?<!pay:)\b(?:[2-9TJQKA][CDHS]|JK)\b")


@cache
def _corner(name: str) -> tuple[Event, ...]:
    variant, seed, _ = CORNERS[name]
    events, _profile, _injected = corner_game(variant, seed)
    return tuple(events)


def corner(name: str) -> list[Event]:
    return [dict(e) for e in _corner(name)]


def features(events: list[Event]) -> Counter[str]:
    out = Counter(e["type"] for e in events)
    out["redeal"] = sum(1 for e in events if e["type"] == "RoundStarted" and e["payload"]["redeal"])
    out["deep"] = sum(1 for e in events if e["type"] == "Drew" and len(e["payload"]["cards"]) > 1)
    return out


def write(events: list[Event], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def cli(*args: Any) -> Any:
    res = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "250"})
    assert res.exit_code == 0, (args, res.output)
    return res


def embedded(page: str) -> dict[str, Any]:
    m = re.search(r'<script type="application/json" id="rg-data">(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))


def last_state(report: dict[str, Any]) -> Any:
    state = None
    for patch in report["patches"]:
        state = apply_patch(state, patch)
    return state


def ever_known(events: list[Event], upto: int, viewer: str) -> Counter[str]:
    """Every card code ``viewer`` could name at some moment up to seq ``upto``."""
    oracle, seen = ViewOracle(), Counter[str]()
    for e in events:
        if e["seq"] > upto:
            break
        oracle.apply(e)
        seen |= knowable(oracle.t, viewer)
    return seen


def table_at(events: list[Event], upto: int) -> Any:
    oracle = ViewOracle()
    for e in events:
        if e["seq"] > upto:
            break
        oracle.apply(e)
    return oracle.t


def text_codes(text: str) -> set[str]:
    """Card codes a sentence names, as codes or with suit symbols."""
    return {_PRETTY[m] for m in _PRETTY_RE.findall(text)} | set(CARD.findall(text))


# == 1. the oracle on corner games ================================================================


@pytest.mark.parametrize("name", list(CORNERS))
def test_views_match_the_oracle_on_corner_games(name: str) -> None:
    """Every seq, every viewer (and the full state): the engine's view equals the
    oracle's, names no card the viewer could not know, and each player's page rows name
    only cards he knew then."""
    events = corner(name)
    assert replay(corner(name)).clean, name
    have = features(events)
    for feature, least in CORNERS[name][2].items():
        assert have[feature] >= least, (name, feature, have[feature])
    problems, counts = differences(events, state_at_every=40)
    assert problems == [], f"{name}: {problems[:5]}"
    assert counts["scans"] >= len(events) * 2 and counts["turns"] > 10
    for viewer in events[0]["payload"]["seats"]:
        rows, n = page_leaks(events, viewer)
        assert rows == [] and n == len(events), (name, viewer, rows[:5])


# == 2. the CLI at many points ======================================================================


def _points(events: list[Event]) -> list[tuple[str, int, str]]:
    """``(what, seq, viewer)``: the moments a dispute asks about, each seen by another
    player and, where it is his own move, by the mover."""
    seats: list[str] = events[0]["payload"]["seats"]

    def other(*not_these: str) -> str:
        return next(s for s in seats if s not in not_these)

    out: list[tuple[str, int, str]] = []

    def first(what: str, pred: Any, mover: Any = None, also_mover: bool = True) -> None:
        e = next((e for e in events if pred(e)), None)
        if e is None:
            return
        who = mover(e) if mover else e["actor"]
        out.append((what, e["seq"], other(who)))
        if also_mover and who in seats:
            out.append((what + " (his own)", e["seq"], who))

    first("the deal", lambda e: e["type"] == "RoundStarted", lambda e: seats[0])
    first("a stock draw", lambda e: e["type"] == "Drew" and e["payload"]["source"] == "stock")
    first("a deep pile draw", lambda e: e["type"] == "Drew" and len(e["payload"]["cards"]) > 1)
    first("a buy", lambda e: e["type"] == "Bought")
    first("a Rummy call", lambda e: e["type"] == "RummyCalled")
    first("a Fresh redeal", lambda e: e["type"] == "RoundStarted" and e["payload"]["redeal"],
          lambda e: seats[0])
    first("an auto-play", lambda e: e["type"] == "AutoPlayed" and e["payload"]["drew"],
          lambda e: e["payload"]["player"])
    first("a restock", lambda e: e["type"] == "StockReplenished", lambda e: seats[0], False)
    first("a widow purchase", lambda e: e["type"] == "WidowBought")
    first("a poker hand", lambda e: e["type"] == "PokerHandDeclared")
    first("a removal", lambda e: e["type"] == "PlayerRemoved", lambda e: e["payload"]["player"])
    first("a round's end", lambda e: e["type"] == "RoundEnded", lambda e: seats[0], False)
    out.append(("the game's end", events[-1]["seq"], seats[-1]))
    return out


def check_cli_view(events: list[Event], log: Path, at: int, viewer: str, tmp: Path) -> dict[str, Any]:
    """``replay --as VIEWER --at AT`` in JSON and its page: everything it shows was his to
    see at AT, nothing is from after AT, and the JSON and the page agree."""
    game = events[0]["game_id"]
    variant, seats = events[0]["payload"]["variant"], events[0]["payload"]["seats"]
    out = json.loads(cli("replay", game, log, "--as", viewer, "--at", at, "--json").stdout)
    state = out["state"]
    where = (game, at, viewer)
    # the table: the engine's view at AT, equal to the oracle's, his own hand only
    assert state == json.loads(json.dumps(state_at(events, at, viewer))), where
    table = table_at(events, at)
    assert observed(state, variant, seats) == expected(table, viewer), where
    assert list(state["hands"]) == [viewer] and "stock" not in state, where
    assert state["hand_counts"][viewer] == len(state["hands"][viewer]), where
    assert sum(state["hand_counts"].values()) == sum(sum(h.values()) for h in table.hands.values())
    assert leaks(state, table, viewer) == [], where
    # nothing after AT: rows, findings, results
    assert out["at"] == at and out["timeline"] and out["timeline"][-1]["seq"] <= at, where
    assert all(f["seq"] <= at for f in out["record"]["findings"]), where
    so_far = replay([e for e in events if e["seq"] <= at])
    assert out["record"]["results"] == json.loads(json.dumps(so_far.results.to_dict())), where
    assert out["finished"] == so_far.finished, where
    # each row names only the cards of its event he saw; every card named was his to know
    by_seq = {e["seq"]: e for e in events}
    ever = ever_known(events, at, viewer)
    named: set[str] = set(codes_in(state))
    for row in out["timeline"]:
        e = by_seq[row["seq"]]
        assert Counter(text_codes(row["text"])) - _shown(e, viewer) == Counter(), (where, row["text"])
        if _hidden(e, viewer):  # test_viewer_oracle's check of a row with hidden cards
            assert _row_codes(row) - _shown(e, viewer) == Counter(), (where, row["text"])
        named |= text_codes(row["text"])
    for f in out["record"]["findings"]:
        named |= set(CARD.findall(f["message"]))
    assert sorted(c for c in named if ever[c] <= 0) == [], where
    # the page he is sent: the same table, findings and results, cut at AT
    page = tmp / f"{game}-{viewer}-{at}.html"
    cli("replay", game, log, "--as", viewer, "--at", at, "--html", page)
    report = embedded(page.read_text(encoding="utf-8"))
    assert report["meta"]["viewer"] == viewer and report["meta"]["until"] == at, where
    assert [e["seq"] for e in report["events"]] == [e["seq"] for e in events if e["seq"] <= at]
    assert last_state(report) == state, where
    assert report["meta"]["results"] == out["record"]["results"], where
    assert sorted((f["seq"], f["rule"], f["message"]) for f in report["findings"]) == sorted(
        (f["seq"], f["rule"], f["message"]) for f in out["record"]["findings"]), where
    in_page = codes_in(report["events"]) | codes_in(report["patches"])
    for row in report["events"]:
        in_page |= {seg["c"] for seg in row["desc"] if isinstance(seg, dict)}
    assert not [r for r in report["events"] if {"hash", "prev_hash"} & set(r["event"])], where
    assert sorted(c for c in in_page if c != "??" and ever[c] <= 0) == [], where
    return out


@pytest.mark.parametrize("name", list(CORNERS))
def test_the_cli_view_at_many_points(name: str, tmp_path: Path) -> None:
    events = corner(name)
    log = write(events, tmp_path / f"{name}.jsonl")
    points = _points(events)
    wanted = {"classic": {"a Fresh redeal", "an auto-play", "a restock", "a removal"},
              "r500": {"a deep pile draw", "a round's end"},
              "liverpool": {"a buy", "a buy (his own)", "a Rummy call", "a restock"},
              "liverpool-rounds": {"a buy", "a round's end"},
              "michigan": {"a widow purchase", "a widow purchase (his own)", "a poker hand",
                           "a removal", "a round's end"}}[name]
    assert wanted <= {what for what, _, _ in points}, points
    long = len(events) > 400  # the six-round Liverpool game: its corners only, not each twice
    for what, at, viewer in points:
        if long and what not in wanted:
            continue
        check_cli_view(events, log, at, viewer, tmp_path)
        if at > 0 and not long and "(his own)" not in what:  # right before it too (mid-turn)
            check_cli_view(events, log, at - 1, viewer, tmp_path)


def test_another_players_stock_draw_is_hidden_mid_turn(tmp_path: Path) -> None:
    """The example game, seq 10: p1 drew J♣ from the stock (mid-turn, before his discard).
    p2 sees "drew ??", p1 one card more (a count), the stock one less; p1 sees the card."""
    events = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    assert events[10]["type"] == "Drew" and events[10]["payload"] == {"source": "stock", "cards": ["JC"]}
    p1, p2 = "example-classic-p1", "example-classic-p2"
    seen = check_cli_view(events, EXAMPLE, 10, p2, tmp_path)
    assert seen["timeline"][-1]["text"] == f"{p1} drew ?? from the stock"
    assert seen["state"]["hand_counts"][p1] == 15 and seen["state"]["in_turn"] == p1
    before = state_at(events, 9, p2)
    assert seen["state"]["stock_count"] == before["stock_count"] - 1
    mine = check_cli_view(events, EXAMPLE, 10, p1, tmp_path)
    assert "J♣" in mine["timeline"][-1]["text"] and "JC" in mine["state"]["hands"][p1]
    text = cli("replay", "example-classic", EXAMPLE, "--as", p2, "--at", 10).stdout
    assert "J♣ from" not in text and "drew ?? from the stock" in text


# == 3. defects fixed ===============================================================================


def test_a_players_page_does_not_name_the_servers_log_file(tmp_path: Path) -> None:
    """Defect 1: a line of the game that is not a valid event (here p2's stock draw at
    seq 6 with a broken ``cards``) is a row of the page; the page written with ``--as``
    named the file the platform exported ("…/srv-in/platform-export.jsonl:7 is not a
    valid event"), as the agent's page does."""
    events = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    events[6]["payload"]["cards"] = "5S"  # not a list: the line is not a valid event
    log = write(events, tmp_path / "srv-in" / "platform-export.jsonl")
    agent = tmp_path / "agent.html"
    cli("replay", "example-classic", log, "--html", agent)
    assert "platform-export.jsonl:7 is not a valid event" in agent.read_text(encoding="utf-8")
    for viewer, at in (("example-classic-p1", None), ("example-classic-p3", 8)):
        page = tmp_path / f"{viewer}.html"
        cli("replay", "example-classic", log, "--as", viewer, "--html", page,
            *(("--at", at) if at is not None else ()))
        text = page.read_text(encoding="utf-8")
        assert "platform-export" not in text and str(tmp_path) not in text, viewer
        report = embedded(text)
        row = next(r for r in report["events"] if r["seq"] == 6)
        assert row["desc"] == ["a line of the log is not a valid event: invalid: payload.cards: "
                               "Input should be a valid list"], row
        assert "payload" not in row["event"]
        for args in ((), ("--json",)):
            shown = cli("replay", "example-classic", log, "--as", viewer, *args).stdout
            assert "platform-export" not in shown and "5S" not in shown.replace("5♠", ""), viewer


def _mi_hold(tmp_path: Path, card: str | None = None, actor: str = "p1", seq: int = 8) -> tuple[Path, str]:
    """mi3-101 (unchanged: p1 plays 4C at seq 8, held by p3), or with the event at
    ``seq`` replaced by ``actor`` playing ``card``."""
    events = [json.loads(line) for line in MI_HOLD.read_text(encoding="utf-8").splitlines()]
    if card is not None:
        events[seq].update(type="CardPlayed", v=1, actor=actor, payload={"card": card})
    return write(events, tmp_path / "mi.jsonl"), events[seq]["payload"]["card"]


def _dealt(log: Path) -> dict[str, list[str]]:
    """mi3-101's deal (MI-DEAL: one card at a time from left of the dealer, the widow
    after the dealer): seats p1 p2 p3, dealer seat 0."""
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    deck = events[1]["payload"]["deck"]
    slots = ["p2", "p3", "p1", "widow"]
    return {s: deck[i::4] for i, s in enumerate(slots)}


@pytest.mark.parametrize("case", ["held by p3", "in a dead hand", "in the widow"])
def test_a_c_hold_finding_does_not_say_where_a_hidden_card_is(case: str, tmp_path: Path) -> None:
    """Defect 2: "p1 plays 4C, which is held by p3" told p1 and p2 that p3 holds 4C (the
    view hides others' hands, and who holds a card); a card in the widow or in a dead
    hand likewise. The card is in the event and stays; its place is shown only to the
    player who holds it, and to the agent."""
    if case == "held by p3":
        log, card = _mi_hold(tmp_path)  # the sample: p1 plays 4C, p3 holds it
        holder: str | None = "p3"
    else:
        dealt = _dealt(MI_HOLD)
        # p1 bought the widow at seq 2: his dealt hand is dead; before it, the widow is
        # still the widow (seq 2 is replaced by p2 playing a widow card)
        if case == "in a dead hand":
            log, card = _mi_hold(tmp_path, dealt["p1"][0], "p2", 3)
        else:
            log, card = _mi_hold(tmp_path, min(dealt["widow"]), "p2", 2)
        holder = None
    agent = json.loads(cli("replay", "mi3-101", log, "--json").stdout)
    (hold,) = [f for f in agent["record"]["findings"] if f["rule"] == "C-HOLD"]
    assert hold["message"].endswith(f"plays {card}, which is {case}"), hold
    for viewer in ("p1", "p2", "p3"):
        out = json.loads(cli("replay", "mi3-101", log, "--as", viewer, "--json").stdout)
        messages = [f["message"] for f in out["record"]["findings"] if f["rule"] == "C-HOLD"]
        messages += [f["message"] for r in out["timeline"] for f in r["findings"] if f["rule"] == "C-HOLD"]
        want = hold["message"] if viewer == holder else hold["message"].replace(case, "not in his hand")
        assert messages == [want, want], (viewer, messages)
        page = tmp_path / f"{viewer}.html"
        cli("replay", "mi3-101", log, "--as", viewer, "--html", page)
        text = page.read_text(encoding="utf-8")
        assert (case in text) == (viewer == holder), viewer
        shown = cli("replay", "mi3-101", log, "--as", viewer).stdout
        assert (case in shown) == (viewer == holder), viewer


def test_a_players_view_at_a_seq_holds_nothing_after_it(tmp_path: Path) -> None:
    """Defect 3: mi3-101 halts at seq 8 (C-HOLD) and the game ends at seq 103 (p1 wins).
    ``--as p2 --at 5`` showed p2, at seq 5, the C-HOLD finding of seq 8, the winner and
    the final net, ``finished: true``, "Results of the whole game", and a page holding
    all 104 events. The agent's view (no --as) keeps the whole game's record."""
    log, _ = _mi_hold(tmp_path)
    agent = json.loads(cli("replay", "mi3-101", log, "--at", 5, "--json").stdout)
    assert [f["seq"] for f in agent["record"]["findings"]] == [8] and agent["finished"] is False
    assert agent["record"]["results"]["net"] == {"p1": -6, "p2": -4, "p3": -4}
    full = json.loads(cli("replay", "mi3-101", log, "--as", "p2", "--json").stdout)
    assert [f["seq"] for f in full["record"]["findings"]] == [8]  # the whole game: it is there
    out = json.loads(cli("replay", "mi3-101", log, "--as", "p2", "--at", 5, "--json").stdout)
    assert out["record"]["findings"] == [] and out["record"]["clean"] is True
    assert out["record"]["halted"] is False and out["halted_at"] is None
    assert out["finished"] is False and [r["seq"] for r in out["timeline"]] == list(range(6))
    so_far = replay([json.loads(x) for x in log.read_text().splitlines()][:6]).results.to_dict()
    assert out["record"]["results"] == so_far and so_far["winners"] == []
    text = cli("replay", "mi3-101", log, "--as", "p2", "--at", 5).stdout
    assert "whole game" not in text and "C-HOLD" not in text and "clean" in text.splitlines()[0]
    assert "Results so far, after seq 5 (what p2 could know then): winners []" in text
    page = tmp_path / "p2.html"
    cli("replay", "mi3-101", log, "--as", "p2", "--at", 5, "--html", page)
    html = page.read_text(encoding="utf-8")
    report = embedded(html)
    assert [e["seq"] for e in report["events"]] == list(range(6))
    assert report["findings"] == [] and report["meta"]["halted"] is False
    assert report["meta"]["results"] == so_far and "C-HOLD" not in html
    assert "As seen by p2 up to seq 5" in html and "Clean" in html
    # past the halt, the same view at seq 9 shows the halt and the finding, not seq 10
    out = json.loads(cli("replay", "mi3-101", log, "--as", "p2", "--at", 9, "--json").stdout)
    assert [f["seq"] for f in out["record"]["findings"]] == [8] and out["record"]["halted"] is True
    assert out["timeline"][-1]["seq"] == 9


# == 4. the same output every run ===================================================================


def test_the_same_viewer_gets_byte_identical_output_across_runs(tmp_path: Path) -> None:
    """Two processes with different hash seeds: the same JSON, text and page, byte for
    byte, for a Liverpool buy and a Michigan widow purchase seen by a player."""
    lv = write(corner("liverpool"), tmp_path / "lv.jsonl")
    bought = next(e for e in corner("liverpool") if e["type"] == "Bought")
    viewer = next(s for s in corner("liverpool")[0]["payload"]["seats"] if s != bought["actor"])
    mi = write(corner("michigan"), tmp_path / "mi.jsonl")
    widow = next(e for e in corner("michigan") if e["type"] == "WidowBought")
    other = next(s for s in corner("michigan")[0]["payload"]["seats"] if s != widow["actor"])
    calls = [["replay", bought["game_id"], str(lv), "--as", viewer, "--at", str(bought["seq"] + 1)],
             ["replay", widow["game_id"], str(mi), "--as", other, "--at", str(widow["seq"] + 3)]]
    # one process per hash seed runs every call (--json, text, --html) and prints them all
    script = (
        "import sys, json\n"
        "from typer.testing import CliRunner\n"
        "from rummyguard.cli.app import app\n"
        "out = []\n"
        "for k, call in enumerate(json.loads(sys.argv[1])):\n"
        "    for extra in (['--json'], [], ['--html', sys.argv[2] + str(k)]):\n"
        "        res = CliRunner().invoke(app, call + extra, env={'COLUMNS': '200'})\n"
        "        assert res.exit_code == 0, res.output\n"
        "        out.append(res.stdout)\n"
        "    out.append(open(sys.argv[2] + str(k), encoding='utf-8').read())\n"
        "sys.stdout.write(json.dumps(out))\n")
    runs = {}
    for seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", script, json.dumps(calls), str(tmp_path / "page")],
                              capture_output=True, env=env, check=False, timeout=120)
        assert done.returncode == 0, done.stderr
        runs[seed] = json.loads(done.stdout)
    assert len(runs["0"]) == 8 and runs["0"] == runs["4242"]
    assert f'"viewer":"{viewer}"' in runs["0"][3] and f'"viewer":"{other}"' in runs["0"][7]
    assert "(+?? penalty)" in runs["0"][0]  # his view: the buy's penalty card is hidden
    assert json.loads(runs["0"][4])["state"]["widow"] is None


# == 5. the page in a real browser ==================================================================




#: the page's script stepped through every row: the card faces drawn at each, and each
#: seat's hand as drawn (``??`` = face down)
_WALK = """() => {
  const slider = document.querySelector('[data-testid=slider]');
  const out = [];
  for (let i = 0; i <= Number(slider.max); i++) {
    slider.value = String(i);
    slider.dispatchEvent(new Event('input'));
    const faces = [...document.querySelectorAll('[data-card]')].map(c => c.dataset.card);
    const hands = Object.fromEntries([...document.querySelectorAll('[data-testid=seat]')].map(s =>
      [s.dataset.player, [...s.querySelectorAll('[data-testid=hand] .card')].map(c => c.dataset.card).sort()]));
    out.push({faces, hands});
  }
  out[out.length - 1].text = document.body.innerText;
  return {max: Number(slider.max), steps: out};
}"""


@pytest.mark.browser
@pytest.mark.parametrize("name,kind", [("classic", "AutoPlayed"), ("liverpool", "Bought"),
                                       ("michigan", "WidowBought"), ("r500", "Drew")])
def test_the_players_page_in_a_browser(browser: Any, name: str, kind: str, tmp_path: Path) -> None:
    """The page ``--as P --at S`` writes, opened in Chromium and stepped through row by
    row: it ends at S, the other seats are face down with the right counts, his hand is
    his, and no card face or card in the text was ever unknown to him up to S."""
    events = corner(name)
    log = write(events, tmp_path / f"{name}.jsonl")
    moment = next(e for e in events if e["type"] == kind and (
        kind != "Drew" or len(e["payload"]["cards"]) > 1))
    mover = moment["payload"]["player"] if kind == "AutoPlayed" else moment["actor"]
    viewer = next(s for s in events[0]["payload"]["seats"] if s != mover)
    at = moment["seq"]
    page_path = tmp_path / "view.html"
    cli("replay", events[0]["game_id"], log, "--as", viewer, "--at", at, "--html", page_path)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(page_path.as_uri())
        page.wait_for_selector("body[data-ready=true]")
        kept = [e for e in events if e["seq"] <= at]
        assert int(page.get_attribute("body", "data-index")) == len(kept) - 1
        walk = page.evaluate(_WALK)
    finally:
        page.close()
    assert errors == []
    assert walk["max"] == len(kept) - 1  # no row after S to step to
    ever = ever_known(events, at, viewer)
    engine = GameEngine()
    for e, step in zip(kept, walk["steps"], strict=True):
        engine.apply(e)
        assert engine.variant is not None
        view = json.loads(json.dumps(engine.variant.snapshot(viewer)))
        for meld in view.get("melds") or []:  # what a wild stands for is public (C-WILD)
            ever.update(c for c in meld.get("stands") or [] if c)
        for player, cards in step["hands"].items():
            if player == viewer:
                assert cards == sorted(view["hands"][viewer]), (e["seq"], player)
            else:
                assert cards == ["??"] * view["hand_counts"][player], (e["seq"], player, cards)
        shown = {c for c in step["faces"] if c != "??"} | text_codes(step.get("text", ""))
        assert sorted(c for c in shown if ever[c] <= 0) == [], (e["seq"], e["type"])
    assert f"As seen by {viewer} up to seq {at}" in walk["steps"][-1]["text"]
