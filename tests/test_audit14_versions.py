"""Audit 14: event versions and upcasting end to end (EVENTS.md "Older versions still
accepted", ARCHITECTURE.md "upcasting ... on read, through a chain of pure v -> v+1
functions"), on every path an old-version event takes.

The v1 logs here are written from clean and faulty v2 games of ``tests/data`` by this
file's own v2 -> v1 writer, exactly as EVENTS.md defines v1 (``from``: ``deck``/``pile``,
the legacy ``{rank, suit}`` card, ``{"rank": "joker"}`` without a suit); a ``Drew`` of
several discard cards has no v1 form (v1 takes the top card only) and stays v2, which
makes those games mixed. A producer-chained log is re-chained where its hash was right,
so a deliberate chain fault of a fixture stays a fault.

Readings taken (EVENTS.md):
- "Upcasting v1 -> v2 is exact and loses nothing": every valid v1 payload upcasts to a
  valid v2 payload, so there is no "valid v1, invalid v2" event to decide about; a v1
  event and its v2 form say the same thing and must be judged the same, on every path.
- The hash covers the event as written: ingest and ``verify-log`` hash the original
  bytes, never the upcast form.
- A ``v`` newer than known is ``future_version`` (never guessed at); ``v`` 0, negative,
  ``"2"``, ``2.0`` or ``true`` is no version at all: ``invalid``.

Some tests pin the defects this audit found and the fixes made (a broken or non-integer
version given straight to replay(), a stored old-version line edited behind ingest's
back, a session event of an unknown version read alike on both paths); the others pin
what holds.
"""

from __future__ import annotations

import copy
import io
import json
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.hashing import chain, event_hash
from rummyguard.events.models import EventError, validate_event
from rummyguard.events.store import EventStore
from rummyguard.events.upcast import upcast
from rummyguard.replay.engine import replay
from rummyguard.replay.verify import verify_files

DATA = Path(__file__).parent / "data"
Event = dict[str, Any]

# --- EVENTS.md's v1, written out again here (not imported from the project) ----------------
_V1_RANK = {str(n): str(n) for n in range(2, 10)} | {"T": "10", "J": "J", "Q": "Q", "K": "K",
                                                      "A": "A"}
_V1_SUIT = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
_V1_FROM = {"stock": "deck", "discard": "pile"}


def _v1_card(code: str) -> dict[str, str]:
    """``"TH"`` -> ``{"rank": "10", "suit": "hearts"}``; ``"JK"`` -> ``{"rank": "joker"}``."""
    if code == "JK":
        return {"rank": "joker"}
    return {"rank": _V1_RANK[code[0]], "suit": _V1_SUIT[code[1]]}


def _down(event: Event) -> Event | None:
    """The v1 form of a v2 Drew/Discarded, or None when it has none (or is not one)."""
    p = event.get("payload")
    if event.get("v") != 2 or not isinstance(p, dict):
        return None
    if event.get("type") == "Drew" and len(p.get("cards", ())) == 1:
        return {**event, "v": 1,
                "payload": {"from": _V1_FROM[p["source"]], "card": _v1_card(p["cards"][0])}}
    if event.get("type") == "Discarded":
        return {**event, "v": 1, "payload": {"card": _v1_card(p["card"])}}
    return None


def _to_v1(events: list[Event], pick: Callable[[int], bool] = lambda i: True) -> list[Event]:
    """Events of a file with Drew/Discarded at ``pick``ed positions written as v1.

    Hash links are recomputed only where they were right (a right hash gets the new
    content's hash; a prev_hash that named a right hash names its new value), so a
    fixture's deliberate chain break stays one."""
    out: list[Event] = []
    renamed: dict[str, str] = {}
    for i, event in enumerate(events):
        new = (_down(event) if pick(i) else None) or dict(event)
        if isinstance(event.get("hash"), str) and "prev_hash" in event:
            if event.get("prev_hash") in renamed:
                new["prev_hash"] = renamed[event["prev_hash"]]
            if event_hash(event) == event["hash"]:
                new["hash"] = event_hash(new)
                renamed[event["hash"]] = new["hash"]
        out.append(new)
    return out


def _load(path: Path) -> list[Event]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _write(path: Path, events: list[Event]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events))
    return path


def _strip(events: list[Event]) -> list[Event]:
    return [{k: v for k, v in e.items() if k not in ("hash", "prev_hash")} for e in events]


def _file_findings(path: Path) -> tuple[list[tuple[Any, ...]], list[str]]:
    run = verify_files([path])
    found = sorted((r.game_id, f.seq, f.rule, f.kind) for r in run.records for f in r.findings)
    return found, [b.code for b in run.bad_lines]


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


# Every game file of the classic, r500 and Liverpool fixtures (the variants with Drew and
# Discarded): clean games and one per rule, chained and not.
_FIXTURES = sorted(
    p for d in ("classic", "r500", "liverpool", "sample", "spec")
    for p in (DATA / d).glob("*.jsonl")
)
_MODES: dict[str, Callable[[int], bool]] = {"all": lambda i: True, "mixed": lambda i: i % 2 == 0}


def _has_v1_form(path: Path, mode: str) -> bool:
    events = _load(path)
    return any(_down(e) is not None for i, e in enumerate(events) if _MODES[mode](i))


#: (fixture, mode) pairs whose log has at least one event written in v1 by that mode
_CASES = [(p, m) for p in _FIXTURES for m in sorted(_MODES) if _has_v1_form(p, m)]


# === verify FILES and replay(): a v1 (or mixed) game is judged as the same game in v2 ========
@pytest.mark.parametrize(("fixture", "mode"), _CASES,
                         ids=[f"{p.parent.name}/{p.stem}-{m}" for p, m in _CASES])
def test_v1_and_mixed_logs_give_the_findings_of_the_v2_log(
    fixture: Path, mode: str, tmp_path: Path
) -> None:
    """Rule, kind and seq of every finding (rule breaks made through the v1 fields
    included: the fixtures' faulty moves are written in v1 too) equal the v2 log's, in
    ``verify FILES`` and in ``replay()``; and the v1 log really holds v1 events."""
    events = _load(fixture)
    v1 = _to_v1(events, _MODES[mode])
    assert any(a.get("v") != b.get("v") for a, b in zip(events, v1, strict=True))
    v1_path = _write(tmp_path / "v1.jsonl", v1)
    assert _file_findings(v1_path) == _file_findings(fixture)
    by_game: dict[str, tuple[list[Event], list[Event]]] = {}
    for a, b in zip(events, v1, strict=True):
        pair = by_game.setdefault(a["game_id"], ([], []))
        pair[0].append(a)
        pair[1].append(b)
    for v2_events, v1_events in by_game.values():
        want = [(f.seq, f.rule, f.kind) for f in replay(v2_events).findings]
        assert [(f.seq, f.rule, f.kind) for f in replay(v1_events).findings] == want


def test_the_v1_writer_is_the_inverse_of_the_upcast() -> None:
    """Guard for the test above: the v1 written here upcasts back to the v2 it came from."""
    events = _load(DATA / "classic" / "clean-driver-0.jsonl")
    v1 = _to_v1(_strip(events))
    lifted = [upcast(e) for e in v1]
    assert any(e["v"] == 1 for e in v1)
    assert [(e["v"], e["payload"]) for e in lifted] == [(e["v"], e["payload"]) for e in events]


# === an upcast never has to make an invalid v2 out of a valid v1 ===============================
_LEGACY = [{"rank": r, "suit": s} for r in _V1_RANK.values() for s in _V1_SUIT.values()]
_LEGACY.append({"rank": "joker"})


def test_every_valid_v1_payload_upcasts_to_a_valid_v2_payload() -> None:
    """EVENTS.md: "exact and loses nothing". All 53 legacy cards x both sources: the v1
    event is valid, its upcast is a valid v2 event, distinct payloads stay distinct."""
    env = {"event_id": "e", "game_id": "g", "seq": 3, "ts": "2026-11-18T11:06:44.200Z",
           "actor": "p2"}
    seen = set()
    for card in _LEGACY:
        for source in ("deck", "pile"):
            for type_name, payload in (("Drew", {"from": source, "card": card}),
                                       ("Discarded", {"card": card})):
                event = {**env, "type": type_name, "v": 1, "payload": payload}
                validate_event(event)
                lifted = upcast(event)
                validate_event({k: v for k, v in lifted.items() if k != "upcast_from"})
                seen.add((type_name, orjson.dumps(lifted["payload"])))
    assert len(seen) == 53 * 2 + 53


# === version edge cases: verify FILES and ingest ===============================================
_CLEAN = DATA / "classic" / "clean.jsonl"
_EDGES: dict[str, tuple[int, dict[str, Any], str]] = {
    # name: (line to edit, fields to set, the quarantine reason)
    "drew-v0": (3, {"v": 0}, "invalid"),
    "drew-v-1": (3, {"v": -1}, "invalid"),
    "drew-v3": (3, {"v": 3}, "future_version"),
    "drew-v-str": (3, {"v": "2"}, "invalid"),
    "drew-v-float": (3, {"v": 2.0}, "invalid"),
    "drew-v-true": (3, {"v": True,
                        "payload": {"from": "deck", "card": {"rank": "A", "suit": "hearts"}}},
                    "invalid"),
    "drew-v1-unknown-field": (3, {"v": 1, "payload": {
        "from": "deck", "card": {"rank": "A", "suit": "hearts"}, "note": "x"}}, "invalid"),
    "drew-v1-card-unknown-field": (3, {"v": 1, "payload": {
        "from": "deck", "card": {"rank": "A", "suit": "hearts", "deck": 1}}}, "invalid"),
    "drew-v1-v2-payload": (3, {"v": 1}, "invalid"),
    "drew-v1-from-stock": (3, {"v": 1, "payload": {
        "from": "stock", "card": {"rank": "A", "suit": "hearts"}}}, "invalid"),
    "drew-v1-rank-T": (3, {"v": 1, "payload": {
        "from": "deck", "card": {"rank": "T", "suit": "hearts"}}}, "invalid"),
    "drew-v1-joker-with-suit": (3, {"v": 1, "payload": {
        "from": "deck", "card": {"rank": "joker", "suit": "hearts"}}}, "invalid"),
    "discarded-v1-no-suit": (2, {"v": 1, "payload": {"card": {"rank": "2"}}}, "invalid"),
    "roundended-v2": (8, {"v": 2}, "future_version"),  # a type that has only v1
    "roundended-v-true": (8, {"v": True}, "invalid"),
}


@pytest.mark.parametrize("chained", [False, True], ids=["unchained", "chained"])
@pytest.mark.parametrize("name", sorted(_EDGES))
def test_a_bad_version_is_one_log_event_finding_that_halts_and_is_quarantined(
    name: str, chained: bool, tmp_path: Path
) -> None:
    """verify FILES: one LOG-EVENT integrity finding at the line's seq, the game halted
    there, the line's reason as ingest gives it; ingest: the line quarantined with that
    reason (the rest of the game after it too, as a sequence gap), nothing guessed."""
    index, patch, reason = _EDGES[name]
    events = _load(_CLEAN)
    events[index] = {**events[index], **patch}
    path = _write(tmp_path / "log.jsonl", chain(events) if chained else events)
    run = verify_files([path])
    (record,) = run.records
    assert [(f.seq, f.rule, f.kind) for f in record.findings] == [(index, "LOG-EVENT",
                                                                     "integrity")]
    assert record.halted
    assert [b.code for b in run.bad_lines] == [reason]
    with EventStore.open(tmp_path / "s.duckdb") as store:
        store.ingest_files([path], workers=0)
        stored = store.con.execute("SELECT max(seq) FROM store.events").fetchone()
        rows = store.con.execute(
            "SELECT reason FROM store.quarantine WHERE line_no = ?", [index + 1]).fetchall()
    assert stored == (index - 1,)
    assert rows == [(reason,)]


# === the store: ingest, views, verify --db, verify-log, export, re-ingest, replay --db ========
@pytest.fixture(scope="module")
def v1_world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A store holding: a producer-chained classic game all in v1 (jokers included), an
    unchained Liverpool game all in v1 (chained at ingest), a producer-chained r500 game
    mixing v1 and v2 (its multi-card draws have no v1), a classic rule break made in v1
    (a joker discarded), and the v2 originals of each beside it on disk."""
    root = tmp_path_factory.mktemp("v1world")
    originals = {
        "classic": _load(DATA / "classic" / "clean-driver-0.jsonl"),
        "liverpool": _strip(_load(DATA / "liverpool" / "clean-2p.jsonl")),
        "r500": _load(DATA / "r500" / "clean-target.jsonl"),
        "fault": _load(DATA / "classic" / "CL-NODISCARD-JOKER.jsonl"),
    }
    v1 = {
        "classic": _to_v1(originals["classic"]),
        "liverpool": _to_v1(originals["liverpool"]),
        "r500": _to_v1(originals["r500"], _MODES["mixed"]),
        "fault": _to_v1(originals["fault"]),
    }
    files = {k: _write(root / f"{k}.v1.jsonl", evs) for k, evs in v1.items()}
    v2_files = {k: _write(root / f"{k}.v2.jsonl", evs) for k, evs in originals.items()}
    db = root / "v1world.duckdb"
    result = _cli("ingest", *map(str, files.values()), "--db", str(db), "--json",
                  "--no-progress", "--workers", "0")
    assert result.exit_code == 0, result.output
    return {"root": root, "db": db, "v1": v1, "v2": originals, "files": files,
            "v2_files": v2_files, "games": {k: evs[0]["game_id"] for k, evs in v1.items()}}


def test_world_holds_v1_and_mixed_games(v1_world: dict[str, Any]) -> None:
    counts = {k: sum(1 for e in evs if e["v"] == 1 and e["type"] in ("Drew", "Discarded"))
              for k, evs in v1_world["v1"].items()}
    assert all(counts.values()), counts
    mixed = v1_world["v1"]["r500"]
    assert any(e["type"] == "Drew" and e["v"] == 2 for e in mixed)
    assert any(e["type"] == "Drew" and e["v"] == 1 for e in mixed)
    assert any(e["payload"] == {"card": {"rank": "joker"}} for e in v1_world["v1"]["fault"])


def test_events_view_is_the_exact_upcast_and_the_hash_covers_the_original(
    v1_world: dict[str, Any]
) -> None:
    """``events``: ``v``/``payload`` the current version (upcast exactly), ``stored_v``/
    ``stored_payload``/``raw`` the line as written; ``hash`` the producer's, or for an
    unchained game sha256(JCS(original + prev_hash)), never a hash of the upcast form."""
    con = duckdb.connect(str(v1_world["db"]), read_only=True)
    try:
        for key, written in v1_world["v1"].items():
            rows = con.execute(
                "SELECT v, stored_v, payload, stored_payload, raw, prev_hash, hash, chained_by "
                "FROM events WHERE game_id = ? ORDER BY seq", [v1_world["games"][key]],
            ).fetchall()
            current = v1_world["v2"][key]
            linked = written if "hash" in written[0] else chain(written)
            assert len(rows) == len(written)
            for row, w, c, link in zip(rows, written, current, linked, strict=True):
                v, stored_v, payload, stored_payload, raw, prev_hash, h, chained_by = row
                assert (v, orjson.loads(payload)) == (c["v"], c["payload"])
                assert (stored_v, orjson.loads(stored_payload)) == (w["v"], w["payload"])
                assert raw.encode() == orjson.dumps(w)
                assert (prev_hash, h) == (link["prev_hash"], link["hash"])
                assert chained_by == ("producer" if "hash" in written[0] else "ingest")
    finally:
        con.close()


def test_games_view_of_v1_games(v1_world: dict[str, Any]) -> None:
    con = duckdb.connect(str(v1_world["db"]), read_only=True)
    try:
        rows = dict(con.execute(
            "SELECT game_id, event_count FROM games").fetchall())
    finally:
        con.close()
    assert rows == {v1_world["games"][k]: len(evs) for k, evs in v1_world["v1"].items()}


def test_verify_db_and_verify_log_on_v1_games(v1_world: dict[str, Any]) -> None:
    """``verify --db`` finds what ``verify`` on the v2 files finds; ``verify-log``
    re-hashes the original bytes and finds nothing."""
    db = str(v1_world["db"])
    from_db = _cli("verify", "--db", db, "--json", "--no-progress")
    from_v2 = _cli("verify", *map(str, v1_world["v2_files"].values()), "--json",
                   "--no-progress")
    assert from_db.exit_code == from_v2.exit_code == 1  # the v1 joker discard
    got, want = json.loads(from_db.stdout), json.loads(from_v2.stdout)

    def findings(doc: dict[str, Any]) -> set[tuple[Any, ...]]:
        return {(g["game_id"], f["seq"], f["rule"], f["kind"]) for g in doc["games"]
                for f in g["findings"]}

    assert findings(got) == findings(want) == {
        (v1_world["games"]["fault"], 8, "CL-NODISCARD-JOKER", "violation")}
    log = _cli("verify-log", "--db", db, "--json")
    assert log.exit_code == 0, log.output
    report = json.loads(log.stdout)
    assert report["ok"] and report["problems"] == []
    assert report["events_checked"] == sum(len(e) for e in v1_world["v1"].values())


def test_verify_log_catches_an_edit_of_a_stored_v1_line(
    v1_world: dict[str, Any], tmp_path: Path
) -> None:
    """The hash of a v1 event covers its v1 bytes: an edit of the raw line (another
    valid card) is a bad hash; an edit of the materialised upcast alone is a column
    mismatch (the ``events`` view would lie)."""
    db = tmp_path / "edited.duckdb"
    db.write_bytes(v1_world["db"].read_bytes())
    con = duckdb.connect(str(db))
    gid = v1_world["games"]["classic"]
    (eid, raw), (eid2, _) = con.execute(
        "SELECT event_id, raw FROM store.events WHERE game_id = ? AND type = 'Drew' AND v = 1 "
        "ORDER BY seq LIMIT 2", [gid]).fetchall()
    edited = re.sub(r'"suit":"(\w+)"', lambda m: '"suit":"%s"' % (
        "hearts" if m.group(1) != "hearts" else "spades"), raw, count=1)
    con.execute("UPDATE store.events SET raw = ?, payload = ? WHERE event_id = ?",
                [edited, orjson.dumps(orjson.loads(edited)["payload"]).decode(), eid])
    con.execute("UPDATE store.events SET up_payload = '{\"source\":\"stock\",\"cards\":[\"2C\"]}' "
                "WHERE event_id = ?", [eid2])
    con.close()
    result = _cli("verify-log", "--db", str(db), "--json")
    assert result.exit_code == 1
    kinds = {(p["seq"], p["kind"]) for p in json.loads(result.stdout)["problems"]}
    seqs = {e["event_id"]: e["seq"] for e in v1_world["v1"]["classic"]}
    assert (seqs[eid], "bad_hash") in kinds
    assert (seqs[eid2], "envelope_mismatch") in kinds


def test_replay_db_json_of_a_v1_game_is_the_replay_of_its_v2_file(
    v1_world: dict[str, Any]
) -> None:
    for key in ("classic", "liverpool", "r500"):
        gid = v1_world["games"][key]
        from_db = _cli("replay", gid, "--db", str(v1_world["db"]), "--json")
        from_v2 = _cli("replay", gid, str(v1_world["v2_files"][key]), "--json")
        from_v1 = _cli("replay", gid, str(v1_world["files"][key]), "--json")
        assert from_db.exit_code == from_v2.exit_code == from_v1.exit_code == 0
        want = json.loads(from_v2.stdout)
        assert json.loads(from_db.stdout) == want
        assert json.loads(from_v1.stdout) == want


def test_export_columns_carry_the_documented_versions_and_reingest_is_identical(
    v1_world: dict[str, Any], tmp_path: Path
) -> None:
    """docs/sql.md: the export's ``v``/``payload`` are the current version, ``stored_v``/
    ``stored_payload`` and ``raw`` the original; ingesting the export stores the very
    same events (original bytes, hashes, chain mode)."""
    out = tmp_path / "export"
    result = _cli("export", "--parquet", str(out), "--db", str(v1_world["db"]), "--json")
    assert result.exit_code == 0, result.output
    con = duckdb.connect()
    rows = con.execute(
        f"SELECT event_id, v, payload, stored_v, stored_payload, raw FROM read_parquet("
        f"'{out}/**/*.parquet', hive_partitioning = true) WHERE stored_v < v").fetchall()
    con.close()
    assert rows
    originals = {e["event_id"]: e for evs in v1_world["v1"].values() for e in evs}
    currents = {e["event_id"]: e for evs in v1_world["v2"].values() for e in evs}
    for event_id, v, payload, stored_v, stored_payload, raw in rows:
        assert (v, orjson.loads(payload)) == (2, currents[event_id]["payload"])
        assert (stored_v, orjson.loads(stored_payload)) == (1, originals[event_id]["payload"])
        assert raw.encode() == orjson.dumps(originals[event_id])
    db2 = tmp_path / "again.duckdb"
    parts = sorted(str(p) for p in out.rglob("*.parquet"))
    again = _cli("ingest", *parts, "--db", str(db2), "--json", "--no-progress", "--workers", "0")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["quarantined"] == 0
    query = ("SELECT event_id, game_id, seq, type, v, stored_v, ts_text, actor, "
             "CAST(payload AS VARCHAR), CAST(stored_payload AS VARCHAR), prev_hash, hash, "
             "chained_by, raw FROM events ORDER BY game_id, seq")
    a = duckdb.connect(str(v1_world["db"]), read_only=True)
    b = duckdb.connect(str(db2), read_only=True)
    try:
        assert a.execute(query).fetchall() == b.execute(query).fetchall()
    finally:
        a.close()
        b.close()


def test_v1_parquet_input_is_stored_as_the_same_jsonl_is(
    v1_world: dict[str, Any], tmp_path: Path
) -> None:
    """A producer's Parquet (contract columns, ``payload`` as JSON text, no ``raw``) of
    v1 and mixed games: nothing quarantined, the same versions, payloads and hashes as
    the JSONL ingest, the original bytes hash-checked by verify-log, verify FILES clean."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    parts = []
    for key in ("classic", "liverpool", "r500"):
        events = v1_world["v1"][key]
        columns = ["event_id", "game_id", "seq", "type", "v", "ts", "actor", "payload"]
        columns += ["prev_hash", "hash"] if "hash" in events[0] else []
        table = pa.table({c: [orjson.dumps(e[c]).decode() if c == "payload" else e[c]
                              for e in events] for c in columns})
        pq.write_table(table, tmp_path / f"{key}.parquet")
        parts.append(str(tmp_path / f"{key}.parquet"))
    db = tmp_path / "pq.duckdb"
    result = _cli("ingest", *parts, "--db", str(db), "--json", "--no-progress", "--workers", "0")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["quarantined"] == 0
    query = ("SELECT event_id, v, stored_v, CAST(payload AS VARCHAR), "
             "CAST(stored_payload AS VARCHAR), prev_hash, hash, chained_by FROM events "
             "WHERE game_id IN (?, ?, ?) ORDER BY game_id, seq")
    ids = [v1_world["games"][k] for k in ("classic", "liverpool", "r500")]
    a = duckdb.connect(str(v1_world["db"]), read_only=True)
    b = duckdb.connect(str(db), read_only=True)
    try:
        assert a.execute(query, ids).fetchall() == b.execute(query, ids).fetchall()
    finally:
        a.close()
        b.close()
    assert _cli("verify-log", "--db", str(db)).exit_code == 0
    assert _cli("verify", *parts, "--no-progress").exit_code == 0


def test_dispute_bundle_of_a_v1_game_checks(v1_world: dict[str, Any], tmp_path: Path) -> None:
    """The bundle carries the original v1 lines; check-bundle re-hashes them and its
    re-replay matches the report."""
    db = tmp_path / "bundle.duckdb"
    db.write_bytes(v1_world["db"].read_bytes())
    assert _cli("checkpoint", "--db", str(db)).exit_code == 0
    for key in ("classic", "liverpool"):
        bundle = tmp_path / f"{key}.zip"
        made = _cli("dispute", v1_world["games"][key], "--db", str(db), "-o", str(bundle))
        assert made.exit_code == 0, made.output
        with zipfile.ZipFile(io.BytesIO(bundle.read_bytes())) as z:
            lines = z.read("events.jsonl").splitlines()
        assert [orjson.loads(x)["v"] for x in lines] == [e["v"] for e in v1_world["v1"][key]]
        checked = _cli("check-bundle", str(bundle), "--json")
        assert checked.exit_code == 0, checked.output
        doc = json.loads(checked.stdout)
        assert doc["ok"] and not doc["failed"]
        assert {c["name"]: c["status"] for c in doc["checks"]}["chain"] == "pass"


def test_a_v1_event_sent_again_as_v2_under_its_id_is_a_conflict(tmp_path: Path) -> None:
    """EVENTS.md: the same event_id with other content is a conflict, even when the
    other content is the upcast of the first: the stored original is never rewritten."""
    events = _strip(_load(_CLEAN))
    v1 = _to_v1(events)
    first = _write(tmp_path / "v1.jsonl", v1)
    again = _write(tmp_path / "v2.jsonl", events[3:4])
    with EventStore.open(tmp_path / "s.duckdb") as store:
        store.ingest_files([first], workers=0)
        summary = store.ingest_files([again], workers=0)
        raw = store.con.execute("SELECT raw FROM store.events WHERE seq = 3").fetchone()
    assert summary.stored == 0 and summary.duplicates == 0
    assert raw == (orjson.dumps(v1[3]).decode(),)


# === rummyguard schema ==========================================================================
def _schema_validators(tmp_path: Path) -> dict[str, Any]:
    jsonschema = pytest.importorskip("jsonschema")
    out = tmp_path / "schemas"
    result = _cli("schema", "--out", str(out))
    assert result.exit_code == 0, result.output
    return {
        p.name.removesuffix(".schema.json"): jsonschema.Draft202012Validator(
            orjson.loads(p.read_bytes()),
            format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
        for p in out.glob("*.schema.json")
    }


def test_schema_has_every_type_and_version(tmp_path: Path) -> None:
    from rummyguard.events.models import PAYLOADS

    names = set(_schema_validators(tmp_path))
    assert names == {f"{t}.v{v}" for t, v in PAYLOADS}
    assert {"Drew.v1", "Drew.v2", "Discarded.v1", "Discarded.v2"} <= names


def test_schema_verdicts_equal_ingest_verdicts_on_v1_and_v2_logs(tmp_path: Path) -> None:
    """Each event of the v1, mixed and v2 logs, the edge cases above (integers only: JSON
    Schema cannot tell 2.0 from 2, see the report) and legacy-card mutations: valid by
    its written schema exactly when validate_event accepts it."""
    validators = _schema_validators(tmp_path)
    candidates: list[Event] = []
    for name in ("classic/clean-driver-0", "r500/clean-target", "liverpool/clean-2p",
                 "classic/CL-NODISCARD-JOKER"):
        events = _load(DATA / f"{name}.jsonl")
        candidates += events + _to_v1(events) + _to_v1(events, _MODES["mixed"])
    base = _load(_CLEAN)
    for index, patch, _ in _EDGES.values():
        if not isinstance(patch["v"], float):
            candidates.append({**base[index], **patch})
    env = {"event_id": "e", "game_id": "g", "seq": 3, "ts": "2026-11-18T11:06:44.200Z",
           "actor": "p2"}
    for rank in ("2", "10", "T", "joker", "JK", 10, None):
        for suit in ("hearts", "H", None, "<absent>"):
            card: dict[str, Any] = {} if rank is None else {"rank": rank}
            if suit != "<absent>":
                card["suit"] = suit
            for source in ("deck", "pile", "stock"):
                candidates.append({**env, "type": "Drew", "v": 1,
                                   "payload": {"from": source, "card": card}})
            candidates.append({**env, "type": "Discarded", "v": 1, "payload": {"card": card}})
    checked = 0
    for event in candidates:
        key = f"{event['type']}.v{event['v']}" if type(event["v"]) is int else None
        by_schema = key in validators and validators[key].is_valid(event)
        try:
            validate_event(copy.deepcopy(event))
            by_ingest = True
        except EventError:
            by_ingest = False
        assert by_schema == by_ingest, event
        checked += 1
    assert checked > 3000


# === defects ====================================================================================
def _replay_or_raise(events: list[Event]) -> list[tuple[int, str, str]] | str:
    try:
        return [(f.seq, f.rule, f.kind) for f in replay(events).findings]
    except Exception as exc:  # what is pinned is that it raises at all
        return f"raised {type(exc).__name__}: {exc}"


_BAD_PAIRS = {
    # name: (line, the v2 form, the same break written in v1)
    "bad-card": (3, {"payload": {"source": "stock", "cards": ["1C"]}},
                 {"v": 1, "payload": {"from": "deck", "card": {"rank": "1", "suit": "clubs"}}}),
    "no-source": (3, {"payload": {"cards": ["AH"]}},
                  {"v": 1, "payload": {"card": {"rank": "A", "suit": "hearts"}}}),
    "natural-without-suit": (2, {"payload": {"card": "2"}},
                             {"v": 1, "payload": {"card": {"rank": "2"}}}),
}


@pytest.mark.parametrize("name", sorted(_BAD_PAIRS))
def test_replay_judges_a_broken_v1_event_as_the_same_break_in_v2(name: str) -> None:
    index, as_v2, as_v1 = _BAD_PAIRS[name]
    base = _load(_CLEAN)
    v2 = [*base[:index], {**base[index], **as_v2}, *base[index + 1:]]
    v1 = [*base[:index], {**base[index], **as_v1}, *base[index + 1:]]
    want = _replay_or_raise(v2)
    assert want == [(index, "LOG-EVENT", "integrity")]
    assert _replay_or_raise(v1) == want


@pytest.mark.parametrize("version", ["2", None, [2]], ids=["str", "null", "list"])
def test_replay_of_a_version_that_is_not_an_integer_is_a_finding(version: Any) -> None:
    base = _load(_CLEAN)
    events = [*base[:3], {**base[3], "v": version}, *base[4:]]
    assert _replay_or_raise(events) == [(3, "LOG-EVENT", "integrity")]


def _edited_store(v1_world: dict[str, Any], tmp_path: Path, key: str,
                  edit: Callable[[str], str]) -> tuple[Path, int]:
    db = tmp_path / f"{key}.duckdb"
    db.write_bytes(v1_world["db"].read_bytes())
    con = duckdb.connect(str(db))
    v = 1 if key == "classic" else 2
    gid = v1_world["games"][key]
    event_id, seq, raw = con.execute(
        "SELECT event_id, seq, raw FROM store.events WHERE game_id = ? AND type = 'Drew' "
        "AND v = ? ORDER BY seq LIMIT 1", [gid, v]).fetchone()
    edited = edit(raw)
    assert edited != raw
    con.execute("UPDATE store.events SET raw = ? WHERE event_id = ?", [edited, event_id])
    con.close()
    return db, seq


def _db_findings(db: Path, game_id: str) -> list[tuple[int, str, str]] | str:
    result = _cli("verify", "--db", str(db), "--json", "--no-progress")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return f"raised {type(result.exception).__name__}: {result.exception}"
    (game,) = [g for g in json.loads(result.stdout)["games"] if g["game_id"] == game_id]
    return sorted((f["seq"], f["rule"], f["kind"]) for f in game["findings"])


def _other_suit_v1(raw: str) -> str:
    return re.sub(r'"suit":"(\w+)"', lambda m: '"suit":"%s"' % (
        "hearts" if m.group(1) != "hearts" else "spades"), raw, count=1)


def _other_suit_v2(raw: str) -> str:
    return re.sub(r'"cards":\["(.)(.)"', lambda m: '"cards":["{}{}"'.format(
        m.group(1), "H" if m.group(2) != "H" else "S"), raw, count=1)


def test_verify_db_reports_an_edited_v2_line(v1_world: dict[str, Any], tmp_path: Path) -> None:
    """What holds for v2, the reference of the two defects below: a stored v2 line edited
    to another valid card is LOG-CHAIN (the hash) plus what the move now breaks; edited
    into an invalid card, LOG-CHAIN plus a LOG-EVENT halt."""
    gid = v1_world["games"]["r500"]
    db, seq = _edited_store(v1_world, tmp_path, "r500", _other_suit_v2)
    assert (seq, "LOG-CHAIN", "integrity") in _db_findings(db, gid)
    db, seq = _edited_store(v1_world, tmp_path, "r500",
                            lambda r: re.sub(r'"cards":\["', '"cards":["1', r, count=1))
    found = _db_findings(db, gid)
    assert (seq, "LOG-CHAIN", "integrity") in found and (seq, "LOG-EVENT", "integrity") in found


def test_verify_db_reports_a_v1_line_edited_into_an_invalid_card(
    v1_world: dict[str, Any], tmp_path: Path
) -> None:
    gid = v1_world["games"]["classic"]
    db, seq = _edited_store(v1_world, tmp_path, "classic",
                            lambda r: r.replace('"card":{"rank":"', '"card":{"rank":"1', 1))
    found = _db_findings(db, gid)
    assert isinstance(found, list), found
    assert (seq, "LOG-CHAIN", "integrity") in found and (seq, "LOG-EVENT", "integrity") in found


def test_verify_db_rehashes_a_stored_v1_line_as_it_does_a_v2_line(
    v1_world: dict[str, Any], tmp_path: Path
) -> None:
    gid = v1_world["games"]["classic"]
    db, seq = _edited_store(v1_world, tmp_path, "classic", _other_suit_v1)
    assert (seq, "LOG-CHAIN", "integrity") in _db_findings(db, gid)


@pytest.mark.parametrize("type_name", ["PlayerConnected", "PlayerDisconnected"])
@pytest.mark.parametrize("version", [2, 0])
def test_a_session_event_of_an_unknown_version_gives_one_record_on_both_paths(
    type_name: str, version: int, tmp_path: Path
) -> None:
    base = _load(_CLEAN)
    payload = ({"ip_hash": "a", "device_hash": "b", "client": "c"}
               if type_name == "PlayerConnected" else {})
    session = {"event_id": "s1", "game_id": base[0]["game_id"], "seq": 3, "type": type_name,
               "v": version, "ts": "2026-11-18T11:06:43.200Z", "actor": "p2",
               "payload": payload}
    events = [*base[:3], session, *({**e, "seq": e["seq"] + 1} for e in base[3:])]
    path = _write(tmp_path / "log.jsonl", events)
    (from_file,) = verify_files([path]).records
    direct = replay(events)
    assert [(f.seq, f.rule, f.kind) for f in direct.findings] == [
        (f.seq, f.rule, f.kind) for f in from_file.findings]
    assert direct.results == from_file.results
