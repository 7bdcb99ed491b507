"""Session 15, a support agent's walk through ``rummyguard replay`` (persona test):

- ``--as PLAYER`` showed every opponent's ``ip_hash`` and ``device_hash`` (text, JSON and
  the HTML page). A player at a table never sees them, and they are the identifiers the
  multi-account detector works on: the per-player view hides them like hidden cards, and
  keeps the viewer's own.
- A game with hundreds of findings of one rule repeated the rule's text on every row; the
  text timeline now explains a rule once, at its first finding.
- ``--at SEQ`` on a seq the timeline shows as a quarantined line said only "outside the
  game"; it now says what that seq is.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson
from typer.testing import CliRunner

from rummyguard.cli.app import app

EXAMPLE = Path(__file__).parent / "data" / "spec" / "classic-3p.jsonl"


def run(*args: str | Path) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def _events() -> list[dict[str, Any]]:
    return [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]


def _write(events: list[dict[str, Any]], path: Path) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def test_a_player_view_hides_the_other_players_ip_and_device(tmp_path: Path) -> None:
    events = _events()
    conns = {e["actor"]: e["payload"] for e in events if e["type"] == "PlayerConnected"}
    viewer, *others = sorted(conns)
    assert others
    page = tmp_path / "view.html"
    text = run("replay", "example-classic", EXAMPLE, "--as", viewer, "--html", page)
    assert text.exit_code == 0, text.stderr
    body = run("replay", "example-classic", EXAMPLE, "--as", viewer, "--json")
    html = page.read_text(encoding="utf-8")
    for out in (text.stdout, body.stdout, html):
        for p in others:
            assert conns[p]["ip_hash"] not in out and conns[p]["device_hash"] not in out, p
    # the viewer's own identifiers are his to see, in the text and on the page
    assert conns[viewer]["device_hash"] in text.stdout and conns[viewer]["ip_hash"] in html
    rows = orjson.loads(body.stdout)["timeline"]
    hidden = [r["text"] for r in rows if r["type"] == "PlayerConnected" and r["actor"] != viewer]
    assert hidden and all("device ??" in t and "ip ??" in t for t in hidden), hidden
    # the omniscient view (no --as) still shows them: the support agent needs them
    full = run("replay", "example-classic", EXAMPLE)
    assert all(conns[p]["device_hash"] in full.stdout for p in others)


def test_the_text_timeline_explains_each_rule_once(tmp_path: Path) -> None:
    events = _events()
    # two C-TURN breaches: two non-system moves by the wrong player
    turns = [i for i, e in enumerate(events) if e["type"] in ("Drew", "Discarded")][:6]
    seated = sorted({e["actor"] for e in events if e["type"] == "PlayerConnected"})
    bad = [dict(e) for e in events]
    for i in (turns[1], turns[4]):
        bad[i]["actor"] = next(p for p in seated if p != bad[i]["actor"])
        bad[i].pop("hash", None)
        bad[i].pop("prev_hash", None)
    for e in bad:
        e.pop("hash", None)
        e.pop("prev_hash", None)
    log = _write(bad, tmp_path / "turns.jsonl")
    out = run("replay", "example-classic", log)
    assert out.exit_code == 0, out.stderr
    body = orjson.loads(run("replay", "example-classic", log, "--json").stdout)
    findings = [f for r in body["timeline"] for f in r["findings"]]
    by_rule: dict[str, int] = {}
    for f in findings:
        by_rule[f["rule"]] = by_rule.get(f["rule"], 0) + 1
    repeated = [r for r, n in by_rule.items() if n >= 2]
    assert repeated, by_rule  # the case this test is about
    for rule in by_rule:
        text = next(f["rule_text"] for f in findings if f["rule"] == rule)
        head = text.split("\n")[0][:40]
        # the text's own line (indented under the finding) appears once, whatever the count
        assert len(re.findall(re.escape(head), out.stdout)) == 1, (rule, by_rule[rule])
    assert out.stdout.count("⚠ ") == len(findings)  # every finding is still listed


def test_at_a_quarantined_seq_says_what_it_is(tmp_path: Path) -> None:
    events = _events()
    last = events[-1]["seq"]
    lines = [json.dumps(e) for e in events]
    lines.append(json.dumps({"game_id": "example-classic", "seq": last + 1, "type": "Drew", "v": 9}))
    log = tmp_path / "tail.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = run("replay", "example-classic", log, "--at", last + 1)
    assert out.exit_code == 2
    assert f"--at {last + 1}: that seq is a line of the game that is not a valid event" in out.stderr
    far = run("replay", "example-classic", log, "--at", last + 50)
    assert far.exit_code == 2 and "is outside the game" in far.stderr


def test_an_event_with_one_link_field_is_one_clear_finding(tmp_path: Path) -> None:
    """A log whose events carry ``hash`` but no ``prev_hash`` gave three LOG-CHAIN findings
    per event (mixed chaining, a broken link, a wrong hash) where ingest says it in one
    line ("only one of prev_hash/hash is present"); now one finding per event, saying so."""
    from rummyguard.events.hashing import event_hash

    events = []
    for e in _events():
        e = {k: v for k, v in e.items() if k not in ("hash", "prev_hash")}
        e["hash"] = event_hash(e)
        events.append(e)
    log = _write(events, tmp_path / "half.jsonl")
    body = orjson.loads(run("verify", log, "--json").stdout)
    findings = [f for g in body["games"] for f in g["findings"]]
    assert len(findings) == len(events), findings[:4]
    assert {(f["rule"], f["message"]) for f in findings} == {
        ("LOG-CHAIN", "only one of prev_hash and hash is present "
                      "(a chained event carries both, an unchained one neither)")}


def test_a_log_written_twice_is_named_a_repeat_after_the_game_ended(tmp_path: Path) -> None:
    """The example game written out twice (an export run twice into one file): the second
    copy's events came after GameEnded, where the engine had let go of the event ids, so
    each was "repeated or out of order" instead of "the same event_id again"."""
    text = EXAMPLE.read_text(encoding="utf-8")
    log = tmp_path / "twice.jsonl"
    log.write_text(text + text, encoding="utf-8")
    body = orjson.loads(run("verify", log, "--json").stdout)
    findings = [f for g in body["games"] for f in g["findings"]]
    assert len(findings) == len(_events())
    assert all(f["rule"] == "LOG-SEQ" and "the same event_id again" in f["message"]
               for f in findings), findings[:3]
