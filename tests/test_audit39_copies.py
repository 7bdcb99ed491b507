"""Audit 39: a copy of an earlier seq, as a support agent resolving a dispute meets it in a
producer-chained log and in an unchained one: an exact retry, a conflicting copy (same
event_id and seq, other payload; with the original's hash fields kept, or re-hashed by the
producer so its own hash matches its content), and a copy under a new event_id (a
reorder). EVENTS.md: "the same event_id with the same content again is a no-op; the same
event_id with other content, or a second event at a taken (game_id, seq), is rejected as a
conflict"; RULES.md §5: a duplicate is an integrity finding.

Every reader is asserted: ``verify FILE``, ``replay GAME FILE`` (``--json``, ``--at``,
``--html``), ``ingest`` + ``verify --db`` + ``replay --db``, ``dispute`` + ``check-bundle``.

What was found (and fixed):

- an older ``v`` of a type (``Discarded`` v1) in a producer-chained log: the file called a
  conflicting copy a conflict, the store's replay (whose stored first event is upcast, its
  hash covering the original) said "(unchained: content not compared)", false of a chained
  log (replay/engine.py ``_check_chain``: an intact upcast event's content hash is its hash);
- an unchained log whose exact retry ingest kept back behind a gap: the store's replay
  linked the copy to the chain's head, not where the first stood, and called the retry
  "again with other content (a conflict ...)" (replay/verify.py ``merge_store_lines``).

Every test runs the real CLI (typer's CliRunner) on real DuckDB files in ``tmp_path``.
"""

from __future__ import annotations

import copy
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import orjson
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.hashing import chain, event_hash

TESTS = Path(__file__).parent
EXAMPLE = TESTS / "data" / "spec" / "classic-3p.jsonl"
DOCS = TESTS.parent / "docs"
EVENTS: list[dict[str, Any]] = [orjson.loads(line) for line in EXAMPLE.read_bytes().splitlines()]
GAME = EVENTS[0]["game_id"]
K = 13  #: the copied seq: p2 discards the ace of spades
assert EVENTS[K]["type"] == "Discarded" and EVENTS[K]["payload"] == {"card": "AS"}

#: what a LOG-SEQ finding at seq 13 says of the copy
RETRY = ("seq 13 repeated: the same event_id again, with the same content (a retry or "
         "overlapping files) (expected 14); event skipped")
CONFLICT = (f"seq 13 repeated: event_id {EVENTS[K]['event_id']!r} again with other content "
            "(a conflict: EVENTS.md rejects it, ingest quarantines it) (expected 14); event skipped")
UNCOMPARED = ("seq 13 repeated: the same event_id again (unchained: content not compared) "
              "(expected 14); event skipped")
REORDER = "seq 13 repeated or out of order (expected 14); event skipped"


def _cli(*args: Any) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def _rehash(event: dict[str, Any]) -> dict[str, Any]:
    """The producer hashed the copy again: its own hash matches its (new) content."""
    linked = {k: v for k, v in event.items() if k != "hash"}
    return {**linked, "hash": event_hash(linked)}


def _chained(events: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    return chain(copy.deepcopy(EVENTS if events is None else events))


def _plain() -> list[dict[str, Any]]:
    return copy.deepcopy(EVENTS)


def _log(tmp: Path, events: list[dict[str, Any]], extra: dict[str, Any], *,
         drop: int | None = None) -> Path:
    """The game with ``extra`` read right after seq 13 (and seq ``drop`` left out)."""
    lines = [orjson.dumps(e) for e in events]
    lines = [*lines[:K + 1], orjson.dumps(extra), *lines[K + 1:]]
    if drop is not None:
        del lines[drop]
    path = (tmp / "log.jsonl").resolve()
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def _said(findings: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    return [(f["seq"], f["rule"], f["message"]) for f in findings]


def _replay(*args: Any) -> dict[str, Any]:
    out = _cli("replay", GAME, *args, "--json")
    assert out.exit_code == 0, out.output
    return orjson.loads(out.stdout)


def _verify(*args: Any) -> tuple[int, list[tuple[int, str, str]]]:
    out = _cli("verify", *args, "--json", "--no-progress")
    assert out.exit_code in (0, 1), out.output
    (game,) = orjson.loads(out.stdout)["games"]
    return out.exit_code, _said(game["findings"])


_DATA = re.compile(r'<script type="application/json" id="rg-data">(.*?)</script>', re.S)


def _page(page: Path, *args: Any) -> list[tuple[int, str, str]]:
    out = _cli("replay", GAME, *args, "--html", page)
    assert out.exit_code == 0, out.output
    data = json.loads(_DATA.search(page.read_text(encoding="utf-8")).group(1))  # type: ignore[union-attr]
    return _said(data["findings"])


def _readers(tmp: Path, log: Path) -> dict[str, Any]:
    """What each reader says of the game: the file's, then the store's after ingest."""
    said: dict[str, Any] = {}
    said["verify file"] = _verify(log)
    body = _replay(log)
    said["replay file"] = _said(body["record"]["findings"])
    said["replay file finished"] = (body["finished"], body["record"]["results"]["winners"])
    said["replay file --at"] = _said(_replay(log, "--at", K)["record"]["findings"])
    said["html file"] = _page(tmp / "file.html", log)
    db = tmp / "s.duckdb"
    out = _cli("ingest", log, "--db", db, "--json", "--no-progress")
    assert out.exit_code in (0, 1), out.output
    summary = orjson.loads(out.stdout)
    said["ingest"] = (out.exit_code, summary["duplicates"], summary["reasons"])
    said["verify store"] = _verify("--db", db)
    body = _replay("--db", db)
    said["replay store"] = _said(body["record"]["findings"])
    said["replay store finished"] = (body["finished"], body["record"]["results"]["winners"])
    said["replay store marks"] = [(r["seq"], r["quarantined"]) for r in body["timeline"]
                                  if "quarantined" in r]
    said["replay store --at"] = _said(_replay("--db", db, "--at", K)["record"]["findings"])
    said["html store"] = _page(tmp / "store.html", "--db", db)
    said["db"] = db
    return said


def _bundle(tmp: Path, db: Path) -> tuple[list[tuple[int, str, str]], dict[str, str]]:
    """``dispute`` the game (after a checkpoint), then ``check-bundle`` the zip: the
    report's findings and each check's status."""
    assert _cli("checkpoint", "--db", db).exit_code == 0
    zip_path = tmp / "dispute.zip"
    out = _cli("dispute", GAME, "--bundle", zip_path, "--db", db)
    assert out.exit_code == 0, out.output
    with zipfile.ZipFile(zip_path) as zf:
        report = json.loads(zf.read("report.json"))
    out = _cli("check-bundle", zip_path, "--json")
    checked = orjson.loads(out.stdout)
    assert out.exit_code == 0 and checked["ok"], out.output
    return _said(report["record"]["findings"]), {c["name"]: c["status"] for c in checked["checks"]}


def _assert_all(tmp: Path, log: Path, *, file_says: str, ingest: tuple[int, int, dict[str, int]],
                store_says: str | None) -> None:
    """Every reader of the file says ``file_says`` at seq 13 and nothing else; ingest
    counts or quarantines the copy as ``ingest`` says; every reader of the store (and the
    dispute bundle, re-replayed by check-bundle) says ``store_says`` (None: clean)."""
    said = _readers(tmp, log)
    in_file = [(K, "LOG-SEQ", file_says)]
    assert said["verify file"] == (1, in_file)
    for reader in ("replay file", "replay file --at", "html file"):
        assert said[reader] == in_file, reader
    assert said["replay file finished"] == (True, [EVENTS[0]["payload"]["seats"][0]])
    assert said["ingest"] == ingest
    in_store = [] if store_says is None else [(K, "LOG-SEQ", store_says)]
    assert said["verify store"] == (1 if in_store else 0, in_store)
    for reader in ("replay store", "replay store --at", "html store"):
        assert said[reader] == in_store, reader
    assert said["replay store finished"] == said["replay file finished"]
    # the copy's row in the store's timeline says it was not stored, and why
    assert said["replay store marks"] == [(K, r) for r in ingest[2]]
    report, checks = _bundle(tmp, said["db"])
    assert report == in_store
    assert checks["replay"] == checks["chain"] == "pass"
    assert checks["quarantine"] == ("warn" if ingest[2] else "pass")


# --- (a) an exact retry -----------------------------------------------------------------------------
def test_a_chained_exact_retry(tmp_path: Path) -> None:
    """(a) Producer-chained log, seq 13's line again: every file reader says "the same
    content (a retry ...)"; ingest counts a duplicate, the store (holding it once) and the
    bundle are clean (docs/events.md: an exact copy is a no-op at ingest)."""
    chained = _chained()
    _assert_all(tmp_path, _log(tmp_path, chained, chained[K]), file_says=RETRY,
                ingest=(0, 1, {}), store_says=None)


# --- (b) a conflicting copy -------------------------------------------------------------------------
def test_b_chained_conflict_with_the_originals_hash_fields(tmp_path: Path) -> None:
    """(b) Producer-chained log, seq 13 again with its event_id, seq and hash fields but
    another card: a conflict from every reader, never a retry; ingest quarantines it as
    ``conflict_event_id``; the bundle's report says conflict and check-bundle agrees."""
    chained = _chained()
    other = {**chained[K], "payload": {"card": "KS"}}
    _assert_all(tmp_path, _log(tmp_path, chained, other), file_says=CONFLICT,
                ingest=(1, 0, {"conflict_event_id": 1}), store_says=CONFLICT)


def test_b_chained_conflict_rehashed_by_the_producer(tmp_path: Path) -> None:
    """(b') The same conflicting copy, re-hashed by the producer (its hash matches its own
    content): still a conflict everywhere (compared with the first's content, not with
    its own hash field)."""
    chained = _chained()
    other = _rehash({**chained[K], "payload": {"card": "KS"}})
    assert other["hash"] == event_hash(other) != chained[K]["hash"]
    _assert_all(tmp_path, _log(tmp_path, chained, other), file_says=CONFLICT,
                ingest=(1, 0, {"conflict_event_id": 1}), store_says=CONFLICT)


def test_b_chained_copy_with_the_same_content_and_an_edited_hash_is_a_conflict(
        tmp_path: Path) -> None:
    """(b'') Seq 13 again with the same content but another ``hash`` value: ingest's no-op
    compares whole lines, so it quarantines the copy as ``conflict_event_id``; the replay
    compares the hash field too and says conflict as well, never "the same content (a
    retry)" of a line that is not the same."""
    chained = _chained()
    other = {**chained[K], "hash": "0" * 64}
    assert event_hash(other) == chained[K]["hash"]  # the content is the first's
    _assert_all(tmp_path, _log(tmp_path, chained, other), file_says=CONFLICT,
                ingest=(1, 0, {"conflict_event_id": 1}), store_says=CONFLICT)


# --- (c) a copy under a new event_id: a reorder ----------------------------------------------------
def test_c_chained_copy_with_a_new_event_id(tmp_path: Path) -> None:
    """(c) Producer-chained log, seq 13's event again under a new event_id (hash fields
    kept, or re-hashed): "repeated or out of order" from every reader, never "the same
    event_id"; ingest quarantines it as ``conflict_seq``."""
    chained = _chained()
    for i, other in enumerate(({**chained[K], "event_id": "new-id"},
                               _rehash({**chained[K], "event_id": "new-id"}))):
        tmp = tmp_path / str(i)
        tmp.mkdir()
        _assert_all(tmp, _log(tmp, chained, other), file_says=REORDER,
                    ingest=(1, 0, {"conflict_seq": 1}), store_says=REORDER)


# --- (d) the same in an unchained log --------------------------------------------------------------
def test_d_unchained_exact_retry(tmp_path: Path) -> None:
    """(d-a) Unchained log, seq 13's line again: the file cannot compare ("unchained:
    content not compared", never "retry" or "conflict"); ingest counts a duplicate and the
    store is clean (docs/events.md)."""
    plain = _plain()
    _assert_all(tmp_path, _log(tmp_path, plain, plain[K]), file_says=UNCOMPARED,
                ingest=(0, 1, {}), store_says=None)


def test_d_unchained_conflict(tmp_path: Path) -> None:
    """(d-b) Unchained log, seq 13 again with another card: the file says "content not
    compared"; ingest compared and quarantined it (``conflict_event_id``), so the store and
    the bundle say conflict (docs/events.md: only the wording differs)."""
    plain = _plain()
    _assert_all(tmp_path, _log(tmp_path, plain, {**plain[K], "payload": {"card": "KS"}}),
                file_says=UNCOMPARED, ingest=(1, 0, {"conflict_event_id": 1}),
                store_says=CONFLICT)
    docs = " ".join((DOCS / "events.md").read_text(encoding="utf-8").split())
    assert 'a replay of an *unchained* file says "(unchained: content not compared)"' in docs


def test_d_unchained_copy_with_a_new_event_id(tmp_path: Path) -> None:
    """(d-c) Unchained log, seq 13's event under a new event_id: "repeated or out of
    order" from every reader; ingest quarantines it as ``conflict_seq``."""
    plain = _plain()
    _assert_all(tmp_path, _log(tmp_path, plain, {**plain[K], "event_id": "new-id"}),
                file_says=REORDER, ingest=(1, 0, {"conflict_seq": 1}), store_says=REORDER)


# --- the defects found ------------------------------------------------------------------------------
def _v1(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The game with seq 13 written as a ``Discarded`` v1 (EVENTS.md "Older versions")."""
    events = copy.deepcopy(events)
    events[K] = {**events[K], "v": 1, "payload": {"card": {"rank": "A", "suit": "spades"}}}
    return events


_KS_V1 = {"card": {"rank": "K", "suit": "spades"}}


def test_b_chained_conflict_of_an_older_version_is_a_conflict_in_the_store_too(
        tmp_path: Path) -> None:
    """(b, v1) Producer-chained log whose seq 13 is a ``Discarded`` v1, copied with another
    card (hash fields kept, or re-hashed): the store's replay said "(unchained: content not
    compared)" of a chained log (its first event is upcast); now a conflict, as the file
    says. The exact retry of it is a retry in the file and a no-op in the store."""
    chained = _chained(_v1(EVENTS))
    for i, other in enumerate(({**chained[K], "payload": _KS_V1},
                               _rehash({**chained[K], "payload": _KS_V1}))):
        tmp = tmp_path / str(i)
        tmp.mkdir()
        _assert_all(tmp, _log(tmp, chained, other), file_says=CONFLICT,
                    ingest=(1, 0, {"conflict_event_id": 1}), store_says=CONFLICT)
    tmp = tmp_path / "retry"
    tmp.mkdir()
    _assert_all(tmp, _log(tmp, chained, chained[K]), file_says=RETRY, ingest=(0, 1, {}),
                store_says=None)


def test_d_unchained_conflict_of_an_older_version(tmp_path: Path) -> None:
    """(d-b, v1) Unchained log, a v1 seq 13 copied with another card: the store says
    conflict (ingest compared), as for a current-version line; the file cannot compare."""
    plain = _v1(EVENTS)
    _assert_all(tmp_path, _log(tmp_path, plain, {**plain[K], "payload": _KS_V1}),
                file_says=UNCOMPARED, ingest=(1, 0, {"conflict_event_id": 1}),
                store_says=CONFLICT)


def test_a_copy_kept_back_behind_a_gap_is_compared_as_the_first_was_linked(
        tmp_path: Path) -> None:
    """(a/b/d behind a gap) seq 3 missing, so ingest keeps back every later line (the copy
    too) as ``sequence_gap``. An unchained exact retry: the store's replay called it "other
    content (a conflict ...)" (it linked the copy to the chain's head); now "the same
    content", and an unchained conflict stays a conflict. The file says "not compared";
    a chained log's retry and conflict read alike from the file and the store."""
    seq13 = [(K, "LOG-SEQ")]
    for name, events, other, file_says, store_says in (
            ("unchained retry", _plain(), EVENTS[K], UNCOMPARED, RETRY),
            ("unchained conflict", _plain(), {**EVENTS[K], "payload": {"card": "KS"}},
             UNCOMPARED, CONFLICT),
            ("chained retry", _chained(), _chained()[K], RETRY, RETRY),
            ("chained conflict", _chained(), {**_chained()[K], "payload": {"card": "KS"}},
             CONFLICT, CONFLICT)):
        tmp = tmp_path / name.replace(" ", "-")
        tmp.mkdir()
        log = _log(tmp, events, other, drop=3)
        db = tmp / "s.duckdb"
        out = _cli("ingest", log, "--db", db, "--json", "--no-progress")
        assert orjson.loads(out.stdout)["reasons"] == {"sequence_gap": 24}, name
        in_file = [f for f in _said(_replay(log)["record"]["findings"]) if f[0] == K]
        in_store = [f for f in _said(_replay("--db", db)["record"]["findings"]) if f[0] == K]
        assert [f[:2] for f in in_file] == [f[:2] for f in in_store] == seq13, name
        assert (in_file[0][2], in_store[0][2]) == (file_says, store_says), name
        assert _verify("--db", db)[1] == _said(_replay("--db", db)["record"]["findings"]), name
