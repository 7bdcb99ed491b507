"""Audit 4 (odd corners of the support agent's dispute flow): ``rummyguard replay`` (text,
``--at``, ``--as``, ``--json``, ``--html``), ``dispute``/``check-bundle`` and the views.
Each test failed before the fix it pins (see the audit report).

- A player's HTML page carried every event's ``hash``/``prev_hash``: trying the 53 card
  codes against the hash of a redacted stock draw gave the hidden card back.
- A finding of a repeated seq ("event skipped") sat on the first event of that seq, the
  one that was applied, not on the skipped copy that caused it.
- ``replay FILE --html`` rendered without the game's lines that are not valid events: the
  page showed a false LOG-SEQ gap instead of verify's LOG-EVENT, and went on replaying
  past a line the replay cannot follow; ``--at`` did the same for the state.
- The text state left out the melds, the variant's extras (widow, buy window, played
  cards...) and all but the top 10 cards of the discard pile (r500 draws from deep in it).
- Classic and Liverpool views gave a meld's ``owner`` as a seat number, r500 as a player
  id: now a player id in every variant (the snapshot convention's "owner").
- A redacted row of ``--as`` read as the HTML page's sentence, not the timeline's.
- ``dispute`` read game ids and paths as rich markup, and told the recipient to check
  ``FILE.zip`` instead of the file it wrote.
- ``--as`` on a log without a usable GameCreated said the player "is not a player".
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.cards import parse_card, pretty_card
from rummyguard.events.hashing import chain, event_hash
from rummyguard.replay.engine import replay, state_at
from rummyguard.replay.html import HIDDEN, build_report
from rummyguard.replay.timeline import timeline
from rummyguard.sim.driver import play

Event = dict[str, Any]
CODES = [r + s for r in "23456789TJQKA" for s in "CDHS"] + ["JK"]
SEATS3 = ["ann", "ben", "cat"]
SEATS4 = ["ann", "ben", "cat", "dan"]
CLASSIC = ["alice", "bob", "carol"]


def run(*args: str | Path) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args])


def write(path: Path, events: list[Event]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def embedded(page: str) -> dict[str, Any]:
    m = re.search(r'<script[^>]*application/json[^>]*>(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))


def game(variant: str, seed: int, **kw: Any) -> list[Event]:
    seats = {"michigan": SEATS4, "classic": CLASSIC}.get(variant, SEATS3)
    return play(variant, seats, seed=seed, **kw)


# -- a player's page: no hash to brute-force --------------------------------------------------
@pytest.mark.parametrize(("variant", "seed", "field"), [
    ("classic", 7, "cards"), ("liverpool", 5, "penalty"), ("r500", 3, "cards")])
def test_a_players_page_has_no_hash_that_gives_a_hidden_card_back(variant: str, seed: int,
                                                                   field: str) -> None:
    events = chain(game(variant, seed))
    for viewer in events[0]["payload"]["seats"]:
        report = build_report(events, viewer)
        redacted = [e["event"] for e in report["events"] if field in e["event"].get("redacted", [])]
        assert redacted
        for shown in report["events"]:
            assert "hash" not in shown["event"] and "prev_hash" not in shown["event"]
        # what an attacker would do with a hash: nothing to try it against any more
        for shown in redacted:
            base = {k: v for k, v in shown.items() if k != "redacted"}
            for code in CODES:
                guess = {**base, "payload": {**base["payload"],
                                             field: [code] if field == "cards" else code}}
                assert event_hash(guess) != next(e["hash"] for e in events
                                                 if e["seq"] == shown["seq"])
    # the omniscient page still embeds the events as logged, hashes and all
    full = build_report(events)
    assert [e["event"] for e in full["events"]] == events


# -- findings on the row of the event that caused them ----------------------------------------
def test_a_repeated_seq_finding_sits_on_the_skipped_copy() -> None:
    events = game("classic", 7)
    other = copy.deepcopy(events[5])
    other["event_id"] = "conflict"
    other["payload"]["cards"] = ["2C"]
    log = [*events[:6], other, *events[6:]]
    rows = timeline(log, replay(log))
    fives = [r for r in rows if r["seq"] == 5]
    assert [r["text"] for r in fives] == ["alice drew 9♦ from the discard pile",
                                          "alice drew 2♣ from the discard pile"]
    assert fives[0]["findings"] == []
    assert [f["rule"] for f in fives[1]["findings"]] == ["LOG-SEQ"]
    assert "event skipped" in fives[1]["findings"][0]["message"]
    # the page puts it on the same (second) row
    report = build_report(log)
    assert [(f["rule"], f["i"]) for f in report["findings"]] == [("LOG-SEQ", 6)]


# -- lines that are not valid events: the page and --at replay as verify does -----------------
@pytest.fixture
def bad_payload_log(tmp_path: Path) -> Path:
    """A classic game whose seq 5 (alice's draw) lacks its ``source``: not a valid event,
    and one the replay cannot follow (it halts there)."""
    events = game("classic", 7)
    events[5]["payload"] = {"cards": ["9D"]}
    return write(tmp_path / "bad-payload.jsonl", events)


@pytest.fixture
def unknown_type_log(tmp_path: Path) -> Path:
    events = game("classic", 7)
    events[5]["type"] = "Teleported"
    return write(tmp_path / "unknown.jsonl", events)


def _verify_findings(log: Path) -> list[tuple[int, str]]:
    body = orjson.loads(run("verify", log, "--json").stdout)
    return [(f["seq"], f["rule"]) for f in body["games"][0]["findings"]]


@pytest.mark.parametrize("which", ["bad_payload_log", "unknown_type_log"])
def test_the_html_page_lists_the_findings_verify_lists(which: str, tmp_path: Path,
                                                        request: pytest.FixtureRequest) -> None:
    log: Path = request.getfixturevalue(which)
    expected = _verify_findings(log)
    assert (5, "LOG-EVENT") in expected and not any(r == "LOG-SEQ" for _, r in expected)
    for extra in ([], ["--as", "bob"]):
        page = tmp_path / "page.html"
        out = run("replay", "g", log, "--html", page, *extra)
        assert out.exit_code == 0, out.stderr
        report = embedded(page.read_text(encoding="utf-8"))
        assert [(f["seq"], f["rule"]) for f in report["findings"]] == expected
        row = report["events"][5]  # the line has its own row, in its place
        assert row["seq"] == 5 and "is not a valid event" in row["desc"][0]
        if extra:  # a player's page does not embed the payload of a line it cannot read
            assert "payload" not in row["event"]


def json_lines(path: Path) -> list[Event]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_line_the_replay_cannot_follow_halts_the_page_and_the_state_at(
        bad_payload_log: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    assert run("replay", "g", bad_payload_log, "--html", page).exit_code == 0
    meta = embedded(page.read_text(encoding="utf-8"))["meta"]
    assert meta["halted"] and meta["halt_index"] == 5
    body = orjson.loads(run("replay", "g", bad_payload_log, "--at", "20", "--json").stdout)
    events = json_lines(bad_payload_log)
    assert body["state"] == json.loads(json.dumps(state_at(events, 4)))  # where it stopped
    halt = events[5]["seq"]  # session 15: the text and the JSON name the halting event
    assert body["halted_at"] == halt and body["finished"] is False
    text = run("replay", "g", bad_payload_log, "--at", "20").stdout
    assert f"State after seq 20 (the replay halted at seq {halt}: the table as it stood there)" in text
    assert "Results so far (the game did not end by the rules)" in text
    before = orjson.loads(run("replay", "g", bad_payload_log, "--at", str(halt - 1), "--json").stdout)
    assert before["halted_at"] is None  # not yet halted there


# -- the text state: the whole table ---------------------------------------------------------
def test_the_text_state_shows_melds_the_whole_pile_and_the_stock(tmp_path: Path) -> None:
    events = game("liverpool", 5)
    log = write(tmp_path / "lv.jsonl", events)
    deep = next(e["seq"] for e in events  # a pile deeper than the 10 cards shown before
                if len(state_at(events, e["seq"]).get("discard_pile", [])) > 12
                and state_at(events, e["seq"])["melds"])
    pile = state_at(events, deep)["discard_pile"]
    out = run("replay", "g", log, "--at", deep).stdout
    pretty = " ".join(pretty_card(parse_card(c)) for c in pile)
    assert f"discard pile ({len(pile)} cards, top last): {pretty}\n" in out
    melds = state_at(events, deep)["melds"]
    for k, meld in enumerate(melds):
        cards = " ".join(pretty_card(parse_card(c)) for c in meld["cards"])
        assert f"meld #{k} of {meld['owner']}: {meld['kind']} {cards}" in out
    assert "stock (" in out
    assert "stock (" not in run("replay", "g", log, "--at", deep, "--as", "ann").stdout


def test_the_text_state_shows_the_widow_to_nobody_but_the_omniscient_view(tmp_path: Path) -> None:
    events = game("michigan", 2)
    log = write(tmp_path / "mi.jsonl", events)
    bought = next(e["seq"] for e in events if e["type"] == "WidowBought")
    full = run("replay", "g", log, "--at", bought - 1).stdout
    widow = state_at(events, bought - 1)["widow"]
    assert widow and f"widow: {' '.join(pretty_card(parse_card(c)) for c in widow)}" in full
    for viewer in SEATS4:
        seen = run("replay", "g", log, "--at", bought - 1, "--as", viewer).stdout
        assert "widow:" not in seen and "widow_count: " in seen
        others = [p for p in SEATS4 if p != viewer]
        assert f"{viewer} holds:" in seen and not any(f"{p} holds:" in seen for p in others)


# -- one convention for meld owners ----------------------------------------------------------
@pytest.mark.parametrize(("variant", "seed"), [("classic", 7), ("liverpool", 5), ("r500", 3)])
def test_a_melds_owner_is_a_player_id_in_every_variant(variant: str, seed: int) -> None:
    events = game(variant, seed)
    melds = next(s["melds"] for s in (state_at(events, e["seq"]) for e in reversed(events))
                 if s.get("melds"))
    assert melds and all(m["owner"] in events[0]["payload"]["seats"] for m in melds)


# -- --as rows read as the timeline reads them ----------------------------------------------
def test_a_hidden_card_reads_as_the_timeline_sentence_with_question_marks(tmp_path: Path) -> None:
    events = game("liverpool", 5)
    log = write(tmp_path / "lv.jsonl", events)
    buy = next(e for e in events if e["type"] == "Bought" and e["actor"] != "ann")
    everyone = {r["seq"]: r["text"] for r in orjson.loads(run("replay", "g", log, "--json").stdout)[
        "timeline"]}
    seen = {r["seq"]: r["text"] for r in orjson.loads(run("replay", "g", log, "--json", "--as",
                                                          "ann").stdout)["timeline"]}
    penalty = pretty_card(parse_card(buy["payload"]["penalty"]))
    assert everyone[buy["seq"]].endswith(f"(+{penalty} penalty)")
    assert seen[buy["seq"]] == everyone[buy["seq"]].replace(f"(+{penalty} penalty)",
                                                            f"(+{HIDDEN} penalty)")


# -- dispute: ids and paths as they are --------------------------------------------------------
def test_dispute_prints_paths_as_they_are_and_names_the_file_to_check(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    log = write(tmp_path / "g.jsonl", play("classic", ["p1", "p2"], seed=11, game_id="g-1"))
    assert run("ingest", log, "--db", db).exit_code == 0
    assert run("checkpoint", "--db", db).exit_code == 0
    bundle = tmp_path / "[bold]g-1.zip"
    out = run("dispute", "g-1", "--bundle", bundle, "--db", db)
    assert out.exit_code == 0, out.stderr
    assert f"written to {bundle} (" in out.stdout.replace("\n", "")
    assert "rummyguard check-bundle '[bold]g-1.zip' --root <published root>" in out.stdout
    assert run("check-bundle", bundle).exit_code == 0


def test_as_a_player_of_a_log_without_game_created_says_why(tmp_path: Path) -> None:
    log = write(tmp_path / "no-gc.jsonl", game("classic", 7)[1:])
    out = run("replay", "g", log, "--as", "bob")
    assert out.exit_code == 2
    assert "no seated players (no GameCreated of a known variant" in out.stderr
