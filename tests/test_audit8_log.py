"""Audit 8: log-level integrity, found by the differential check of tests/log_oracle.py.

EVENTS.md: ``event_id`` is "globally unique; the idempotency key", and "the same
``event_id`` with other content ... is rejected as a conflict". RULES.md §5: a
``duplicate`` makes the log itself broken (an ``integrity`` finding). The store path
agrees (ingest quarantines the line as ``conflict_event_id``; ``verify`` from the store
then reports LOG-EVENT at its seq); ``replay()`` and ``verify FILES`` did not look at
event ids at all, so the same broken log was clean one way and broken the other. They now
report an id used twice in one game (LOG-EVENT at the second use, until its GameEnded).
An id reused by another game is a ``conflict_event_id`` line for the file readers too
(``verify FILES``, ``replay GAME FILES``), as it is for ingest; ``replay()`` of one game
cannot know the others.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import orjson
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
import log_oracle as lo

from rummyguard.cli.app import app
from rummyguard.replay.engine import replay

CLEAN = Path(__file__).parent / "data" / "classic" / "clean.jsonl"
Event = dict[str, Any]


def _game() -> list[Event]:
    """The classic clean example, producer-chained (so a forger must re-chain)."""
    events = [orjson.loads(line) for line in CLEAN.read_bytes().splitlines() if line.strip()]
    first = events[0]["game_id"]
    return lo.rechain([e for e in events if e["game_id"] == first])


def _write(path: Path, events: list[Event]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events))
    return path


def test_the_reused_id_log_is_otherwise_clean() -> None:
    """Guard for the tests below: before the id is reused the log replays clean, and
    after it the only log-level fault the oracle sees is the reused id."""
    events = _game()
    assert replay(copy.deepcopy(events)).findings == []
    m = copy.deepcopy(events)
    m[6]["event_id"] = m[5]["event_id"]
    assert lo.predict(lo.rechain(m)).findings == [(6, "LOG-EVENT")]


def test_replay_reports_an_event_id_used_twice_in_a_game() -> None:
    m = copy.deepcopy(_game())
    m[6]["event_id"] = m[5]["event_id"]
    rec = replay(lo.rechain(m))
    found = [(f.seq, f.rule, f.kind) for f in rec.findings if f.kind == "integrity"]
    assert found and found[0] == (6, "LOG-EVENT", "integrity")


def test_verify_files_reports_an_event_id_reused_by_another_game(tmp_path: Path) -> None:
    a = _game()
    b = lo.rechain([{**copy.deepcopy(e), "game_id": "other-game"} for e in a])
    path = _write(tmp_path / "two.jsonl", a + b)
    res = CliRunner().invoke(app, ["verify", str(path), "--json", "--no-progress"])
    games = {g["game_id"]: g for g in json.loads(res.stdout)["games"]}
    assert games[a[0]["game_id"]]["clean"]
    first = games["other-game"]["findings"][0]
    assert (first["seq"], first["rule"], first["kind"]) == (0, "LOG-EVENT", "integrity")
    assert res.exit_code == 1


def _one_reused_id() -> tuple[list[Event], list[Event]]:
    """Game a, and game b (a's moves under another game id and fresh event ids) whose
    event at seq 5 reuses the id of a's event at seq 3."""
    a = _game()
    b = [{**copy.deepcopy(e), "game_id": "other-game", "event_id": f"b-{e['seq']}"} for e in a]
    b[5]["event_id"] = a[3]["event_id"]
    return a, lo.rechain(b)


def _verify(paths: list[Path], *extra: str) -> dict[str, Any]:
    res = CliRunner().invoke(app, ["verify", *map(str, paths), *extra, "--json", "--no-progress"])
    assert res.exit_code == 1, res.output
    return {g["game_id"]: g for g in json.loads(res.stdout)["games"]}


def test_files_and_store_agree_on_an_id_reused_by_another_game(tmp_path: Path) -> None:
    """The same reuse, read from a file and from the store after ingest: the same
    findings (LOG-EVENT at seq 5 of the second game, which halts there), the first game
    clean, and the line's reason is the store's ``conflict_event_id``."""
    a, b = _one_reused_id()
    path = _write(tmp_path / "ab.jsonl", a + b)
    from_files = _verify([path])
    db = tmp_path / "s.duckdb"
    CliRunner().invoke(app, ["ingest", str(path), "--db", str(db), "--no-progress"])
    from_store = _verify([], "--db", str(db))
    assert from_files[a[0]["game_id"]]["clean"] and from_store[a[0]["game_id"]]["clean"]
    got = [(f["seq"], f["rule"], f["kind"]) for f in from_files["other-game"]["findings"]]
    assert got[0] == (5, "LOG-EVENT", "integrity")
    assert "conflict_event_id" in from_files["other-game"]["findings"][0]["message"]
    assert from_files["other-game"]["halted"] is True
    assert got[:1] == [(f["seq"], f["rule"], f["kind"])
                       for f in from_store["other-game"]["findings"]][:1]


def test_the_first_use_in_read_order_keeps_the_id(tmp_path: Path) -> None:
    """Games interleaved in one file, or split over two files: whichever line is read
    first keeps the id (as ingest stores the first), the later one is the conflict."""
    a, b = _one_reused_id()
    # b's line with the reused id comes before a's seq 3: a is now the second user
    order = a[:3] + b + a[3:]
    games = _verify([_write(tmp_path / "mixed.jsonl", order)])
    assert games["other-game"]["clean"]
    assert next((f["seq"], f["rule"]) for f in games[a[0]["game_id"]]["findings"]) == (3, "LOG-EVENT")
    two = _verify([_write(tmp_path / "b.jsonl", b), _write(tmp_path / "a.jsonl", a)])
    assert two["other-game"]["clean"] and not two[a[0]["game_id"]]["clean"]


def test_replay_from_files_shows_the_reused_id(tmp_path: Path) -> None:
    """``replay GAME FILES`` reads the files as ``verify`` does: the same finding."""
    a, b = _one_reused_id()
    path = _write(tmp_path / "ab.jsonl", a + b)
    res = CliRunner().invoke(app, ["replay", "other-game", str(path), "--json"])
    assert res.exit_code == 0, res.output
    findings = orjson.loads(res.stdout)["record"]["findings"]
    assert (findings[0]["seq"], findings[0]["rule"]) == (5, "LOG-EVENT")


def test_ingest_rejects_the_reused_id_as_a_conflict(tmp_path: Path) -> None:
    """The store path already follows EVENTS.md: the second use is quarantined as a
    conflict, counted, and the summary balances (read = stored + duplicates +
    quarantined); verify from the store then reports it at its seq."""
    m = copy.deepcopy(_game())
    m[6]["event_id"] = m[5]["event_id"]
    path = _write(tmp_path / "reused.jsonl", lo.rechain(m))
    db = tmp_path / "s.duckdb"
    res = CliRunner().invoke(app, ["ingest", str(path), "--db", str(db), "--json",
                                   "--no-progress"])
    s = json.loads(res.stdout)
    assert s["read"] == len(m) == s["stored"] + s["duplicates"] + s["quarantined"]
    assert s["stored"] == 6 and s["reasons"]["conflict_event_id"] == 1
    # every later line of the game follows a line that was not stored: a gap each
    assert s["reasons"] == {"conflict_event_id": 1, "sequence_gap": len(m) - 7}
    out = CliRunner().invoke(app, ["verify", "--db", str(db), "--json", "--no-progress"])
    findings = json.loads(out.stdout)["games"][0]["findings"]
    assert (findings[0]["seq"], findings[0]["rule"]) == (6, "LOG-EVENT")


def test_events_without_ids_are_not_taken_for_a_reused_id() -> None:
    """A direct caller of replay() may pass events without ``event_id`` (the readers
    validate at the edge): two of them are not "the same id used twice"."""
    events = copy.deepcopy(_game())
    for e in events:
        del e["event_id"]
    rec = replay(events, verify_hashes=False)
    assert not [f for f in rec.findings if "event_id" in f.message]
