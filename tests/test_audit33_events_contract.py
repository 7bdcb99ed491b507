"""Audit 33: EVENTS.md against ingest, the store and the file readers, for what audit 26
(test_audit26_sentences_events, which lists every statement with its tests) left open.

Each test runs the CLI (``ingest``, ``verify``, ``sql``) on small JSONL files built from
the spec's example game and asserts the outcome EVENTS.md gives: exit code, finding rule
and seq, the quarantined line kept byte for byte, nothing else lost.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from log_oracle import GENESIS, jcs, rechain
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events import fastpath, models

TESTS = Path(__file__).parent
EXAMPLE = TESTS / "data" / "spec" / "classic-3p.jsonl"
LINES = EXAMPLE.read_bytes().splitlines()
EVENTS: list[dict[str, Any]] = [orjson.loads(line) for line in LINES]
GAME = EVENTS[0]["game_id"]
Event = dict[str, Any]


# --- helpers -------------------------------------------------------------------------------
def _write(path: Path, items: list[Event | bytes]) -> Path:
    path.write_bytes(b"".join((i if isinstance(i, bytes) else orjson.dumps(i)) + b"\n"
                              for i in items))
    return path


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def _ingest(db: Path, *files: Path) -> Any:
    return _cli("ingest", *map(str, files), "--db", str(db), "--no-progress")


def _sql(db: Path, query: str) -> list[dict[str, Any]]:
    out = _cli("sql", query, "--db", str(db), "-f", "json")
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def _verify(*files: Path, db: Path | None = None) -> tuple[int, dict[str, list[tuple[int, str]]]]:
    args = ["verify", *map(str, files), "--json", "--no-progress"]
    if db is not None:
        args += ["--db", str(db)]
    out = _cli(*args)
    assert out.exit_code in (0, 1), out.output
    games = json.loads(out.stdout)["games"]
    return out.exit_code, {g["game_id"]: [(f["seq"], f["rule"]) for f in g["findings"]]
                           for g in games}


def _counts(db: Path) -> dict[str, int]:
    return {r["what"]: r["n"] for r in _sql(db, (
        "SELECT 'events' AS what, count(*) AS n FROM events UNION ALL "
        "SELECT 'quarantine', count(*) FROM quarantine"))}


# --- E20: the same event_id with the same content again is a no-op ------------------------
@pytest.mark.parametrize("nulls_first", [False, True])
def test_a_retry_that_writes_its_absent_hash_fields_as_null_is_a_no_op(
        tmp_path: Path, nulls_first: bool) -> None:
    """EVENTS.md, Ingest rules: "the same `event_id` with the same content again is a
    no-op". The project reads a hash field given as ``null`` as left out (models.py;
    audit 26 test_null_hash_fields_read_as_absent_by_every_reader): such a line is chained
    at ingest to the very hash of the line without them. So a retry that differs only
    in writing ``"prev_hash": null, "hash": null`` (or in leaving them out, after a first
    copy that wrote them) is the same event. Ingest called it ``conflict_event_id``
    (exit 1, and ``verify --db`` then reported a LOG-EVENT at its seq); fixed in
    events/ingest.py ``_same_content``."""
    nulls = [{**e, "prev_hash": None, "hash": None} for e in EVENTS]
    first, again = (nulls, EVENTS) if nulls_first else (EVENTS, nulls)
    db = tmp_path / "s.duckdb"
    assert _ingest(db, _write(tmp_path / "day.jsonl", first)).exit_code == 0
    # the retry of one event, in a file of its own and within one batch
    retry = _write(tmp_path / "retry.jsonl", [again[5]])
    out = _ingest(db, retry)
    assert out.exit_code == 0, out.output
    both = _write(tmp_path / "both.jsonl", [first[6], again[6]])
    assert _ingest(db, both).exit_code == 0
    assert _counts(db) == {"events": len(EVENTS), "quarantine": 0}
    files = {r["source"]: r["duplicates"] for r in _sql(
        db, "SELECT source, sum(duplicates) AS duplicates FROM ingest_batches GROUP BY 1")}
    assert files[str(retry.resolve())] == 1 and files[str(both.resolve())] == 2
    assert _verify(db=db) == (0, {GAME: []})


def test_a_retry_with_null_hash_fields_and_other_content_is_still_a_conflict(
        tmp_path: Path) -> None:
    """EVENTS.md: "the same `event_id` with other content ... is rejected as a conflict".
    The null-hash reading above must not widen "same content": a null hash field with
    another ``ts`` is a conflict, kept in the quarantine byte for byte."""
    db = tmp_path / "s.duckdb"
    assert _ingest(db, _write(tmp_path / "day.jsonl", EVENTS)).exit_code == 0
    line = orjson.dumps({**EVENTS[5], "ts": "2026-11-29T22:56:15.875Z", "hash": None})
    out = _ingest(db, _write(tmp_path / "retry.jsonl", [line]))
    assert out.exit_code == 1
    rows = _sql(db, "SELECT reason, raw, game_id, seq FROM quarantine")
    assert rows == [{"reason": "conflict_event_id", "raw": line.decode(), "game_id": GAME,
                     "seq": 5}]
    assert _counts(db)["events"] == len(EVENTS)


# --- E25 / docs/events.md "Versions": a future version, then an upgrade ------------------
def _as_an_older_release(monkeypatch: pytest.MonkeyPatch) -> None:
    """This release as one that knows ``Drew`` only up to v1: v2 is a future version."""
    monkeypatch.delitem(models.PAYLOADS, ("Drew", 2))
    monkeypatch.delitem(fastpath.FAST_TYPES, ("Drew", 2))
    monkeypatch.setitem(models.CURRENT_VERSION, "Drew", 1)


def test_an_older_release_quarantines_the_newer_version_and_everything_behind_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """EVENTS.md: "a `v` newer than the project knows, is quarantined whole (raw text +
    reason), never dropped". A release that knows Drew v1 only: each Drew v2 line is
    ``future_version`` (its raw line kept), the rest of the game behind the first one is
    a ``sequence_gap``, nothing is lost, and ``verify --db`` reports every such line."""
    db = tmp_path / "s.duckdb"
    log = _write(tmp_path / "day.jsonl", EVENTS)
    first_drew = next(e["seq"] for e in EVENTS if e["type"] == "Drew")
    with monkeypatch.context() as m:
        _as_an_older_release(m)
        assert _ingest(db, log).exit_code == 1
        rows = _sql(db, "SELECT line_no, reason, raw, seq FROM quarantine ORDER BY line_no")
        # audit 35: the store's replay folds the quarantined lines in where ingest read
        # them, so it says what a replay of the file says (this release: the replay halts
        # at the first Drew v2, and each later one is still reported); it used to give
        # one LOG-EVENT per quarantined line, the lines behind the gap included
        code, findings = _verify(db=db)
        assert (code, findings) == _verify(log)
    assert _counts(db) == {"events": first_drew, "quarantine": len(EVENTS) - first_drew}
    assert [r["seq"] for r in rows] == list(range(first_drew, len(EVENTS)))
    for r in rows:
        assert r["raw"].encode() == LINES[r["line_no"] - 1]
        drew = EVENTS[r["seq"]]["type"] == "Drew"
        assert r["reason"] == ("future_version" if drew else "sequence_gap"), r
    assert code == 1 and findings[GAME] == [(e["seq"], "LOG-EVENT") for e in EVENTS
                                            if e["type"] == "Drew"]


def test_after_an_upgrade_reingesting_the_same_file_stores_the_newer_version(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """EVENTS.md: a `v` "newer than the project knows" is quarantined, never guessed at;
    docs/events.md, Versions: "upgrade rummyguard and re-ingest the same file (already
    stored lines are no-ops)". Once the project knows the version the line is a valid
    event: the same command on the same file must store it and the rest of its game.
    (Until session 16 the verdicts stuck to the file: the second run read 27 = 0 stored +
    6 duplicates + 21 quarantined, again; events/ingest.py ``_revived_games``.)"""
    db = tmp_path / "s.duckdb"
    log = _write(tmp_path / "day.jsonl", EVENTS)
    with monkeypatch.context() as m:
        _as_an_older_release(m)
        assert _ingest(db, log).exit_code == 1
        before = _counts(db)
        assert _ingest(db, log).exit_code == 1  # the same release again: nothing changes
        assert _counts(db) == before
    out = _ingest(db, log)  # the upgraded release, the same file
    assert out.exit_code == 0, out.output
    assert _counts(db)["events"] == len(EVENTS)
    assert _verify(db=db) == (0, {GAME: []})


# --- E23/E24/E26: bad lines of every kind in one file, nothing else lost -------------------
def _second_game() -> list[Event]:
    text = EXAMPLE.read_text(encoding="utf-8").replace(GAME, "g2")
    return [json.loads(line) for line in text.splitlines()]


def test_bad_lines_of_every_kind_are_kept_whole_and_the_other_game_is_untouched(
        tmp_path: Path) -> None:
    """EVENTS.md: "A line that cannot be read, or has an unknown `type`, or a `v` newer
    than the project knows, is quarantined whole (raw text + reason), never dropped"; the
    other ingest rules quarantine conflicts. One file interleaves a clean game with a
    second game whose lines break in each way: every bad line is in ``quarantine`` with
    its exact bytes and a reason, the clean game is stored whole and verifies clean, the
    broken game's bad lines are LOG-EVENT findings at their seq (``verify --db``), and
    ``read = stored + duplicates + quarantined``."""
    g2 = _second_game()
    bad: list[tuple[bytes, str]] = [
        (b'{"event_id": "g2-x", "game_id": "g2", "seq": 5,', "not_json"),   # cut short
        (b"[1, 2, 3]", "not_object"),
        (b"", "not_json"),                                                 # an empty line
        (orjson.dumps({k: v for k, v in g2[5].items() if k != "type"}), "unknown_type"),
        (orjson.dumps({**g2[5], "type": "Sneezed"}), "unknown_type"),
        (orjson.dumps({**g2[5], "v": 3}), "future_version"),
        (orjson.dumps({**g2[5], "seq": "5"}), "invalid"),
        (orjson.dumps({**g2[5], "payload": {"card": "10C"}}), "invalid"),
        (orjson.dumps({**g2[5], "actor": "system"}), "bad_actor"),
        (orjson.dumps({**g2[4], "event_id": "g2-other"}), "conflict_seq"),
        (orjson.dumps({**g2[4], "ts": "2026-11-29T22:56:01.101Z"}), "conflict_event_id"),
    ]
    lines: list[bytes] = []
    for k, b in enumerate(g2):
        lines.append(LINES[k])
        if k == 5:
            lines.extend(line for line, _ in bad)
        else:
            lines.append(orjson.dumps(b))
    db = tmp_path / "s.duckdb"
    log = _write(tmp_path / "mixed.jsonl", lines)
    out = _ingest(db, log)
    assert out.exit_code == 1
    rows = _sql(db, "SELECT line_no, reason, raw, game_id FROM quarantine ORDER BY line_no")
    kept = {r["line_no"]: r for r in rows}
    for line_no, line in enumerate(lines, start=1):
        if line in {b for b, _ in bad}:
            assert kept[line_no]["raw"].encode() == line
            assert kept[line_no]["reason"] == dict(bad)[line], kept[line_no]
    # g2 lost seq 5 (never stored): its later lines wait behind the gap, in quarantine too
    assert {r["reason"] for r in rows} - {r for _, r in bad} == {"sequence_gap"}
    assert len(rows) == len(bad) + len(g2) - 6
    stored = _sql(db, "SELECT game_id, count(*) AS n FROM events GROUP BY 1 ORDER BY 1")
    assert stored == [{"game_id": GAME, "n": len(EVENTS)}, {"game_id": "g2", "n": 5}]
    summary = _sql(db, "SELECT sum(lines_read) AS r, sum(stored) AS s, sum(duplicates) AS d, "
                       "sum(quarantined) AS q FROM ingest_batches")[0]
    assert summary["r"] == len(lines) == summary["s"] + summary["d"] + summary["q"]
    code, findings = _verify(db=db)
    assert code == 1 and findings[GAME] == []
    g2_findings = findings["g2"]
    # audit 35: the store's replay folds g2's quarantined lines in where ingest read them,
    # so its findings are the file's (they were one LOG-EVENT per quarantined line): each
    # line that is not a valid event a LOG-EVENT at its seq (the one whose seq cannot be
    # read at the end), each second event at a taken seq a LOG-SEQ
    assert {rule for _, rule in g2_findings} >= {"LOG-EVENT", "LOG-SEQ"}
    assert [seq for seq, rule in g2_findings if rule == "LOG-EVENT"] == [5] * 5 + [len(g2) - 1]
    assert [seq for seq, rule in g2_findings if rule == "LOG-SEQ"] == [4, 4] + [5] * 4
    # the file itself: the clean game is clean, the broken one is judged as in the store
    code, findings = _verify(_write(tmp_path / "only-named.jsonl",
                                    [line for line in lines if line not in (bad[0][0], bad[1][0], b"")]))
    assert code == 1 and findings[GAME] == [] and findings["g2"] == g2_findings


def test_a_line_without_a_type_says_so_in_words(tmp_path: Path) -> None:
    """EVENTS.md: `type` is "one of the catalog below"; a line without one is quarantined
    (as no type of the catalog: ``unknown_type``, its game and seq named). The reason
    given read "unknown event type None" (Python's None: the producer wrote no such
    word); now it says the event has no `type`. A missing or null `v` likewise."""
    db = tmp_path / "s.duckdb"
    lines = [*LINES[:5],
             orjson.dumps({k: v for k, v in EVENTS[5].items() if k != "type"}),
             orjson.dumps({**EVENTS[5], "type": None}),
             orjson.dumps({k: v for k, v in EVENTS[5].items() if k != "v"})]
    assert _ingest(db, _write(tmp_path / "t.jsonl", lines)).exit_code == 1
    rows = _sql(db, "SELECT reason, detail, game_id, seq FROM quarantine ORDER BY line_no")
    assert [(r["reason"], r["game_id"], r["seq"]) for r in rows] == [
        ("unknown_type", GAME, 5), ("unknown_type", GAME, 5), ("invalid", GAME, 5)]
    assert "no `type`" in rows[0]["detail"] and "got null" in rows[1]["detail"]
    assert "no `v`" in rows[2]["detail"]
    assert all("None" not in r["detail"] for r in rows)


# --- E18/E19: the chain the store makes is the spec's chain ----------------------------------
def test_the_chain_made_at_ingest_is_checkable_from_the_spec_alone(tmp_path: Path) -> None:
    """EVENTS.md: "A producer may leave both hash fields out; the store then chains the
    events itself at ingest, and says so for each game". The stored links must be the
    spec's: ``prev_hash`` 64 zeros at seq 0, then the previous ``hash``; ``hash`` =
    sha256(JCS(the stored original + its prev_hash)), recomputed here with the
    independent JCS of tests/log_oracle.py (not rummyguard's). Its raw stays as sent."""
    db = tmp_path / "s.duckdb"
    assert _ingest(db, _write(tmp_path / "day.jsonl", LINES)).exit_code == 0
    rows = _sql(db, "SELECT seq, raw, prev_hash, hash, chained_by FROM events ORDER BY seq")
    assert [r["raw"].encode() for r in rows] == LINES
    assert {r["chained_by"] for r in rows} == {"ingest"}
    prev = GENESIS
    for r in rows:
        event = {**orjson.loads(r["raw"]), "prev_hash": prev}
        assert r["prev_hash"] == prev
        assert r["hash"] == hashlib.sha256(jcs(event)).hexdigest()
        prev = r["hash"]
    assert _sql(db, "SELECT chained_by FROM games") == [{"chained_by": "ingest"}]
    # the producer's own chain of the same game: stored as given and said so
    db2 = tmp_path / "p.duckdb"
    chained = rechain(EVENTS)
    assert _ingest(db2, _write(tmp_path / "chained.jsonl", chained)).exit_code == 0
    assert _sql(db2, "SELECT chained_by FROM games") == [{"chained_by": "producer"}]
    assert [r["hash"] for r in _sql(db2, "SELECT hash FROM events ORDER BY seq")] == [
        e["hash"] for e in chained]
