"""Audit 10: the store side (ingest, store, SQL sandbox, views, export, ``verify --db``),
checked from the texts only: spec/EVENTS.md, ARCHITECTURE.md, README.md, docs/sql.md and
points 6-10 of the event-log issue.

- The SQL sandbox: every DuckDB route to a file, the network, an extension, a setting or
  a write is tried on ``rummyguard sql``; each must fail with one line and exit 2, or be
  harmless, and the store file must keep its bytes (sha256 before and after).
- The views against an independent recomputation in plain Python from the JSONL
  (EVENTS.md's hash and its v1 -> v2 upcast written out again here, not imported).
- Ingest accounting on adversarial files: ``read = stored + duplicates + quarantined``,
  the exit code, and the quarantine row holding the raw bytes with file and line number.
- Export: partitions by variant and the GameCreated date, whole games, rows sorted,
  equal to the store; re-export into a non-empty directory.

Four defects this round found are fixed and pinned here (the store's temp directory as a
way out of the sandbox, Ctrl-C on a query that never ends, MAPs with non-string keys,
re-ingesting a file whose game is out of order); the rest guard what an attacker or a
fussy analyst would try.
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson
import polars as pl
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app

TESTS = Path(__file__).parent
SAMPLE = TESTS / "data" / "sample" / "classic-3p.jsonl"
GOLDEN = TESTS / "data" / "events" / "golden.jsonl"
BAD = TESTS / "data" / "events" / "bad.jsonl"
GENESIS = "0" * 64
Event = dict[str, Any]


# --- helpers ------------------------------------------------------------------------------
def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def _sample(game_id: str) -> list[Event]:
    """The sample classic game (unchained) under a new game id and event ids."""
    events = [orjson.loads(line) for line in SAMPLE.read_bytes().splitlines()]
    for e in events:
        e["event_id"] = f"{game_id}-{e['seq']:04d}"
        e["game_id"] = game_id
    return events


def _lines(events: list[Event]) -> list[bytes]:
    return [orjson.dumps(e) for e in events]


def _write(path: Path, lines: list[bytes], end: bytes = b"\n") -> Path:
    path.write_bytes(b"".join(line + end for line in lines))
    return path


def _ingest(db: Path, *files: Path, extra: tuple[str, ...] = ()) -> tuple[int, dict[str, Any]]:
    out = _cli("ingest", "--db", str(db), "--json", "--no-progress", *extra, *map(str, files))
    assert "Traceback" not in out.stderr, out.stderr
    return out.exit_code, (orjson.loads(out.stdout) if out.stdout.strip() else {})


def _balanced(summary: dict[str, Any]) -> bool:
    return summary["read"] == summary["stored"] + summary["duplicates"] + summary["quarantined"]


def _quarantine(db: Path) -> list[tuple[str, int, str, bytes]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT source, line_no, reason, raw_bytes FROM store.quarantine "
                           "ORDER BY source, line_no, reason").fetchall()
    finally:
        con.close()
    return [(s, n, r, bytes(b)) for s, n, r, b in rows]


def _snapshot(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Everything an ingest may change, but the batch log (one row per transaction)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {
            "events": con.execute("SELECT * EXCLUDE (batch_id) FROM store.events "
                                  "ORDER BY game_id, seq").fetchall(),
            "chain": con.execute("SELECT game_id, chained_by, next_seq, last_hash "
                                 "FROM store.games_chain ORDER BY game_id").fetchall(),
            "quarantine": con.execute("SELECT source, line_no, reason, detail, raw_bytes "
                                      "FROM store.quarantine ORDER BY ALL").fetchall(),
        }
    finally:
        con.close()


# --- the independent oracle (EVENTS.md, written out again) -------------------------------
def _jcs(value: Any) -> bytes:
    """RFC 8785 for these events: ASCII keys sorted, compact, integers only."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _hash(event: Event) -> str:
    return hashlib.sha256(_jcs({k: v for k, v in event.items() if k != "hash"})).hexdigest()


def _rechain(events: list[Event]) -> list[Event]:
    prev = GENESIS
    for e in events:
        e.pop("hash", None)
        e["prev_hash"] = prev
        e["hash"] = prev = _hash(e)
    return events


_SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
_SUIT_CODES = {v: k for k, v in _SUIT_NAMES.items()}


def _v1_card(code: str) -> dict[str, str]:
    if code == "JK":
        return {"rank": "joker"}
    return {"rank": "10" if code[0] == "T" else code[0], "suit": _SUIT_NAMES[code[1]]}


def _downgrade(e: Event) -> None:
    """EVENTS.md "Older versions still accepted": Drew / Discarded as the old export wrote them."""
    p = e["payload"]
    if e["type"] == "Drew" and len(p["cards"]) == 1:
        e["v"] = 1
        e["payload"] = {"from": "deck" if p["source"] == "stock" else "pile",
                        "card": _v1_card(p["cards"][0])}
    elif e["type"] == "Discarded":
        e["v"] = 1
        e["payload"] = {"card": _v1_card(p["card"])}


def _upcast(e: Event) -> tuple[int, Any]:
    """EVENTS.md: v1 -> v2 "is exact and loses nothing"."""
    def code(card: dict[str, str]) -> str:
        if card["rank"] == "joker":
            return "JK"
        return ("T" if card["rank"] == "10" else card["rank"]) + _SUIT_CODES[card["suit"]]

    p = e["payload"]
    if e["type"] == "Drew" and e["v"] == 1:
        return 2, {"source": {"deck": "stock", "pile": "discard"}[p["from"]], "cards": [code(p["card"])]}
    if e["type"] == "Discarded" and e["v"] == 1:
        return 2, {"card": code(p["card"])}
    return e["v"], p


def _ts(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")


def _predict_store(files: list[Path], invalid: set[str]) -> tuple[list[tuple[Event, bytes, str, str]],
                                                                  dict[str, str]]:
    """What the store must hold after ingesting ``files`` in order (``invalid``: event
    ids known to fail validation): per game, events contiguous from seq 0, each chained by
    the producer (hash checked) or at ingest (hash computed), up to the first bad one."""
    heads: dict[str, dict[str, Any]] = {}
    stored = []
    for path in files:
        for raw in path.read_bytes().splitlines():
            e = orjson.loads(raw)
            h = heads.setdefault(e["game_id"], {"next": 0, "last": GENESIS, "mode": None})
            if e["event_id"] in invalid or e["seq"] != h["next"]:
                continue
            if "hash" in e:
                if _hash(e) != e["hash"] or e["prev_hash"] != h["last"]:
                    continue
                prev, this, mode = e["prev_hash"], e["hash"], "producer"
            else:
                prev, mode = h["last"], "ingest"
                this = _hash({**e, "prev_hash": prev})
            h.update(next=e["seq"] + 1, last=this, mode=h["mode"] or mode)
            stored.append((e, raw, prev, this))
    return stored, {g: h["mode"] for g, h in heads.items() if h["mode"]}


# --- a store with every kind of game --------------------------------------------------------
@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Six games of the sample, interleaved and split over two files ingested by two
    commands (so most games span both ingests): producer-chained; unchained with v1
    draws and discards; producer-chained v1; unfinished (no GameEnded); without a
    GameCreated; and one whose GameCreated is invalid (quarantined whole)."""
    d = tmp_path_factory.mktemp("world")
    games = {
        "g-prod": _rechain(_sample("g-prod")),
        "g-v1": _sample("g-v1"),
        "g-v1prod": _sample("g-v1prod"),
        "g-open": _sample("g-open")[:-1],
        "g-nocreate": _sample("g-nocreate")[1:],
        "g-badcreate": _sample("g-badcreate"),
    }
    for e in games["g-v1"]:
        _downgrade(e)
    for e in games["g-v1prod"]:
        _downgrade(e)
    _rechain(games["g-v1prod"])
    for seq, e in enumerate(games["g-nocreate"]):
        e["seq"] = seq
        e["event_id"] = f"g-nocreate-{seq:04d}"
    games["g-badcreate"][0]["payload"]["variant"] = "poker"
    queues = [list(v) for v in games.values()]
    order: list[Event] = []
    while any(queues):
        for q in queues:
            if q:
                order.append(q.pop(0))
    lines = _lines(order)
    half = len(lines) // 2
    files = [_write(d / "a.jsonl", lines[:half]), _write(d / "b.jsonl", lines[half:])]
    db = d / "w.duckdb"
    codes = [_ingest(db, f)[0] for f in files]
    stored, modes = _predict_store(files, invalid={"g-badcreate-0000"})
    return {"dir": d, "db": db, "files": files, "codes": codes, "stored": stored, "modes": modes,
            "games": games}


def test_world_fixture_has_what_it_claims(world: dict[str, Any]) -> None:
    """Guard: v1 events are in it, and the bad game made ingest exit 1."""
    assert any(e["v"] == 1 and e["type"] in ("Drew", "Discarded") for e, *_ in world["stored"])
    assert world["codes"] == [1, 1]
    assert set(world["modes"]) == {"g-prod", "g-v1", "g-v1prod", "g-open", "g-nocreate"}


def test_events_view_equals_an_independent_recomputation(world: dict[str, Any]) -> None:
    """``events``: "current version payloads, upcast", the original kept byte-exact,
    the chain the producer's or the one computed at ingest, ``chained_by`` per game."""
    con = duckdb.connect(str(world["db"]), read_only=True)
    try:
        rows = con.execute(
            "SELECT event_id, game_id, seq, type, v, stored_v, ts, ts_text, actor, payload, "
            "stored_payload, prev_hash, hash, chained_by, raw FROM events ORDER BY game_id, seq"
        ).fetchall()
    finally:
        con.close()
    want = []
    for e, raw, prev, this in sorted(world["stored"], key=lambda t: (t[0]["game_id"], t[0]["seq"])):
        v, payload = _upcast(e)
        want.append((e["event_id"], e["game_id"], e["seq"], e["type"], v, e["v"], _ts(e["ts"]),
                     e["ts"], e["actor"], payload, e["payload"], prev, this,
                     world["modes"][e["game_id"]], raw.decode()))
    got = [(*r[:9], orjson.loads(r[9]), orjson.loads(r[10]), *r[11:]) for r in rows]
    assert len(got) == len(want)
    assert got == want


def test_games_view_equals_an_independent_recomputation(world: dict[str, Any]) -> None:
    """``games``: one row per stored game; variant, table, seats, start/end, count,
    chained-by; NULLs for a game without GameCreated / GameEnded."""
    by_game: dict[str, list[Event]] = {}
    for e, *_ in world["stored"]:
        by_game.setdefault(e["game_id"], []).append(e)
    want = {}
    for g, evs in by_game.items():
        created = next((e for e in evs if e["type"] == "GameCreated"), None)
        ended = next((e for e in evs if e["type"] == "GameEnded"), None)
        p = created["payload"] if created else {}
        want[g] = (p.get("variant"), p.get("table_id"), p.get("seats"), p.get("dealer"),
                   p.get("stake"), _ts(created["ts"]) if created else None,
                   _ts(ended["ts"]) if ended else None, len(evs), min(_ts(e["ts"]) for e in evs),
                   max(_ts(e["ts"]) for e in evs), evs[-1]["seq"], world["modes"][g])
    con = duckdb.connect(str(world["db"]), read_only=True)
    try:
        got = {r[0]: r[1:] for r in con.execute(
            "SELECT game_id, variant, table_id, seats, dealer, stake, started_at, ended_at, "
            "event_count, first_ts, last_ts, last_seq, chained_by FROM games").fetchall()}
    finally:
        con.close()
    assert got == want
    assert got["g-nocreate"][0] is None and got["g-open"][6] is None
    assert "g-badcreate" not in got  # nothing of it is stored: it is all in quarantine


def test_quarantined_game_is_in_quarantine_whole_with_its_raw_bytes(world: dict[str, Any]) -> None:
    """"nothing is dropped": every line of the game whose GameCreated is invalid is a
    quarantine row holding its line byte for byte, with its file and line number."""
    lines = {}
    for path in world["files"]:
        for n, raw in enumerate(path.read_bytes().splitlines(), start=1):
            if orjson.loads(raw)["game_id"] == "g-badcreate":
                lines[(str(path.resolve()), n)] = raw
    rows = {(s, n): (r, raw) for s, n, r, raw in _quarantine(world["db"])}
    assert {k: raw for k, (_r, raw) in rows.items()} == lines
    assert sorted({r for r, _raw in rows.values()}) == ["invalid", "sequence_gap"]


def test_export_round_trip_partitions_and_order(world: dict[str, Any], tmp_path: Path) -> None:
    """Issue point 9 and docs/sql.md: ``variant=V/date=D`` (the GameCreated's UTC date;
    ``unknown`` and the first event's date without one), a game never split, rows by
    ``game_id, seq``, the same rows as the ``events`` view, read by DuckDB and Polars."""
    out = tmp_path / "pq"
    res = _cli("export", "--parquet", str(out), "--db", str(world["db"]), "--json")
    assert res.exit_code == 0, res.stderr
    cols = ("event_id, game_id, seq, type, v, stored_v, ts, ts_text, actor, payload, "
            "stored_payload, prev_hash, hash, chained_by, raw")
    con = duckdb.connect(str(world["db"]), read_only=True)
    try:
        store = con.execute(f"SELECT {cols.replace('payload,', 'payload::VARCHAR,')} FROM events "
                            "ORDER BY game_id, seq").fetchall()
    finally:
        con.close()
    mem = duckdb.connect()
    glob = f"{out}/**/*.parquet"
    back = mem.execute(f"SELECT {cols} FROM read_parquet('{glob}', hive_partitioning = true) "
                       "ORDER BY game_id, seq").fetchall()
    assert back == store
    parts = mem.execute(
        f"SELECT game_id, count(DISTINCT filename), any_value(variant), "
        f"any_value(date)::VARCHAR FROM read_parquet('{glob}', hive_partitioning = true, "
        f"filename = true) GROUP BY game_id ORDER BY game_id").fetchall()
    first = {}
    for e, *_ in world["stored"]:
        g = first.setdefault(e["game_id"], e)
        if e["type"] == "GameCreated" and g["type"] != "GameCreated":
            first[e["game_id"]] = e
    want = [(g, 1, e["payload"]["variant"] if e["type"] == "GameCreated" else "unknown",
             e["ts"][:10]) for g, e in sorted(first.items())]
    assert parts == want
    for f in sorted(out.rglob("*.parquet")):
        keys = mem.execute(f"SELECT game_id, seq FROM read_parquet('{f}')").fetchall()
        assert keys == sorted(keys)
    frame = pl.scan_parquet(glob, hive_partitioning=True).collect()
    assert frame.height == len(store)
    assert set(frame["variant"].unique()) == {"classic", "unknown"}


def test_export_into_a_non_empty_directory(world: dict[str, Any], tmp_path: Path) -> None:
    """Refused without --overwrite (one line, exit 2); --overwrite replaces an earlier
    export, stale partitions included; a folder that is not an export is never cleared."""
    out = tmp_path / "pq"
    assert _cli("export", "--parquet", str(out), "--db", str(world["db"])).exit_code == 0
    stale = out / "variant=r500" / "date=2001-01-01"
    stale.mkdir(parents=True)
    (stale / "part-0.parquet").write_bytes(b"old")
    again = _cli("export", "--parquet", str(out), "--db", str(world["db"]))
    assert again.exit_code == 2 and "not empty" in again.stderr
    assert again.stderr.count("\n") == 1
    assert _cli("export", "--parquet", str(out), "--db", str(world["db"]),
                "--overwrite").exit_code == 0
    assert not stale.exists()
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    refused = _cli("export", "--parquet", str(other), "--db", str(world["db"]), "--overwrite")
    assert refused.exit_code == 2 and (other / "notes.txt").read_text() == "keep me"


def test_verify_db_views_match_verify_json(world: dict[str, Any], tmp_path: Path) -> None:
    """``findings`` and ``player_games`` after ``verify --db`` say what ``verify --json``
    says: every finding of every game, one row per seated player with the results."""
    db = tmp_path / "v.duckdb"
    db.write_bytes(world["db"].read_bytes())
    res = _cli("verify", "--db", str(db), "--json", "--no-progress")
    assert res.exit_code == 1, res.stderr
    report = orjson.loads(res.stdout)
    con = duckdb.connect(str(db), read_only=True)
    try:
        findings = con.execute("SELECT game_id, seq, rule, kind, message, variant FROM findings"
                               ).fetchall()
        players = con.execute("SELECT game_id, player, seat, variant, net, score, won, clean, "
                              "halted FROM player_games ORDER BY game_id, seat").fetchall()
        seats = dict(con.execute("SELECT game_id, seats FROM games").fetchall())
    finally:
        con.close()
    # an unknown variant (no GameCreated) is "" in the JSON (a string field) and NULL in
    # the views, as in `games`
    variant = {g["game_id"]: g["variant"] or None for g in report["games"]}
    want_f = [(g["game_id"], f["seq"], f["rule"], f["kind"], f["message"], variant[g["game_id"]])
              for g in report["games"] for f in g["findings"]]
    assert sorted(findings) == sorted(want_f)
    want_p = []
    for g in sorted(report["games"], key=lambda g: g["game_id"]):
        res_ = g["results"]
        for seat, p in enumerate(seats.get(g["game_id"]) or []):
            want_p.append((g["game_id"], p, seat, variant[g["game_id"]], res_["net"].get(p),
                           res_["scores"].get(p), p in res_["winners"], g["clean"], g["halted"]))
    assert players == want_p
    # the quarantined game is reported: (audit 35) its lines folded in where ingest read
    # them, as a replay of its files does, it halts at its GameCreated that is not a valid
    # event (it was one LOG-EVENT per line of it, the lines behind the first one included)
    bad = [f for f in findings if f[0] == "g-badcreate"]
    assert [(f[1], f[2]) for f in bad] == [(0, "LOG-EVENT")], bad
    from_files = _cli("verify", *map(str, world["files"]), "--json", "--no-progress")
    assert [(f["seq"], f["rule"]) for g in orjson.loads(from_files.stdout)["games"]
            if g["game_id"] == "g-badcreate" for f in g["findings"]] == [(0, "LOG-EVENT")]


# --- the SQL sandbox -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("sandbox")
    db = d / "s.duckdb"
    code, summary = _ingest(db, SAMPLE, GOLDEN, BAD)
    assert code == 1 and _balanced(summary)
    secret = d / "secret.csv"
    secret.write_text("a,b\n1,2\n")
    return {"dir": d, "db": db, "secret": secret}


def _sql(db: Path, query: str, fmt: str = "csv") -> Any:
    return _cli("sql", "--db", str(db), "-f", fmt, "--", query)


REFUSED = [
    # reads of files, absolute, relative, home, globbed, by replacement scan, remote
    ("SELECT * FROM read_csv('{secret}')", "no file or network access"),
    ("SELECT * FROM read_csv('secret.csv')", "no file or network access"),
    ("SELECT * FROM read_csv('~/secret.csv')", "no file or network access"),
    ("SELECT * FROM read_json('/etc/passwd')", "no file or network access"),
    ("SELECT * FROM read_json_auto('/etc/passwd')", "no file or network access"),
    ("FROM read_ndjson_objects('/etc/passwd')", "no file or network access"),
    ("SELECT * FROM read_parquet('{dir}/x.parquet')", "no file or network access"),
    ("SELECT * FROM parquet_metadata('{dir}/x.parquet')", "no file or network access"),
    ("SELECT * FROM read_text('{secret}')", "no file or network access"),
    ("SELECT * FROM read_blob('/etc/hostname')", "no file or network access"),
    ("SELECT * FROM glob('{dir}/*')", "no file or network access"),
    ("SELECT * FROM glob('*')", "no file or network access"),
    ("SELECT * FROM sniff_csv('{secret}')", "no file or network access"),
    ("SELECT * FROM '{secret}'", "no file or network access"),
    ("SELECT * FROM 'https://example.com/x.csv'", "no file or network access"),
    ("DESCRIBE SELECT * FROM read_csv('{secret}')", "no file or network access"),
    ("CREATE TEMP TABLE t AS SELECT * FROM read_csv('{secret}')", "no file or network access"),
    # a path that climbs out of a directory DuckDB allows
    ("SELECT * FROM read_text('{db}.tmp/../secret.csv')", "no file or network access"),
    # writes of files
    ("COPY events TO '{dir}/out.csv'", "no file or network access"),
    ("COPY (SELECT 1) TO 'out.csv'", "no file or network access"),
    ("COPY (SELECT 1) TO '{db}'", "belongs to an attached database"),
    ("COPY (SELECT 1) TO '{db}.wal'", "belongs to an attached database"),
    ("EXPORT DATABASE '{dir}/exp'", "no file or network access"),
    ("IMPORT DATABASE '{dir}/exp'", "no file or network access"),
    # other databases
    ("ATTACH '{dir}/other.duckdb' AS o", "no file or network access"),
    ("ATTACH ':memory:' AS m", "read-only"),
    ("ATTACH 'md:' AS md", "no file or network access"),
    # extensions and secrets
    ("INSTALL httpfs", "no file or network access"),
    ("LOAD httpfs", "no file or network access"),
    ("LOAD '{dir}/x.duckdb_extension'", "no file or network access"),
    ("CREATE SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')", "no file or network access"),
    ("CREATE PERSISTENT SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')", "no file or network access"),
    ("SELECT * FROM duckdb_secrets()", "no file or network access"),
    # settings that would turn any of it back on, or write logs / profiles
    ("SET enable_external_access = true", "locked"),
    ("SET GLOBAL enable_external_access = true", "locked"),
    ("RESET enable_external_access", "locked"),
    ("SET lock_configuration = false", "locked"),
    ("RESET lock_configuration", "locked"),
    ("SET allow_unsigned_extensions = true", "locked"),
    ("SET temp_directory = '{dir}/t'", "locked"),
    ("PRAGMA enable_profiling = 'json'", "locked"),
    ("PRAGMA profiling_output = '{dir}/p.json'", "locked"),
    ("CALL enable_logging(storage = 'file', storage_path = '{dir}/logs')", "locked"),
    ("PRAGMA disable_checkpoint_on_shutdown", "locked"),
    # writes to the store
    ("CREATE TABLE x (a INT)", "read-only"),
    ("CREATE MACRO m(a) AS a + 1", "read-only"),
    ("CREATE SEQUENCE q", "read-only"),
    ("DROP VIEW events", "read-only"),
    ("DROP SCHEMA store CASCADE", "read-only"),
    ("UPDATE store.events SET actor = 'x'", "read-only"),
    ("DELETE FROM store.quarantine", "read-only"),
    ("SELECT nextval('store.batch_seq')", "read-only"),
    # several statements, whatever hides them
    ("SELECT 1; DROP VIEW events", "one statement at a time"),
    ("SELECT 1 /* c */; DELETE FROM store.events", "one statement at a time"),
    ("SELECT * FROM query('DROP VIEW events')", "single SELECT"),
    # a bomb in the parser
    ("SELECT " + "(" * 3000 + "1" + ")" * 3000, "expression depth"),
]


@pytest.mark.parametrize(("template", "needle"), REFUSED, ids=[q[:40] for q, _ in REFUSED])
def test_sandbox_refuses_with_one_line_and_the_store_keeps_its_bytes(
        sandbox: dict[str, Path], template: str, needle: str) -> None:
    query = template.format(**{k: str(v) for k, v in sandbox.items()})
    before = _sha(sandbox["db"])
    files_before = sorted(p.name for p in sandbox["dir"].iterdir())
    out = _sql(sandbox["db"], query)
    assert out.exit_code == 2, (out.stdout, out.stderr)
    assert needle in out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert out.stdout == ""
    assert _sha(sandbox["db"]) == before
    assert sorted(p.name for p in sandbox["dir"].iterdir()) == files_before


HARMLESS = [
    # in memory, gone with the connection (docs/sql.md allows CREATE TEMP TABLE)
    "CREATE TEMP TABLE t AS SELECT 1 AS a",
    "CREATE OR REPLACE TEMP TABLE events AS SELECT 1 AS a",
    "CREATE TEMP MACRO m(a) AS a + 1",
    "SET VARIABLE x = 1",
    "PREPARE p AS SELECT 1",
    "BEGIN TRANSACTION",
    # no-ops on a read-only database
    "CHECKPOINT",
    "FORCE CHECKPOINT",
    "VACUUM",
    "ANALYZE",
    # the store itself, again, read-only: no other database, no new data
    "ATTACH '{db}' AS again",
    "ATTACH '{db}' AS again (READ_ONLY)",
    "USE store",
    "SET schema = 'store'",
    "CALL pragma_version()",
    "SELECT current_setting('enable_external_access')",
    "SELECT * FROM duckdb_settings()",
    "SELECT * FROM read_blob('{db}')",
    "SELECT 1 -- ; DROP VIEW events",
]


@pytest.mark.parametrize("template", HARMLESS, ids=[q[:40] for q in HARMLESS])
def test_sandbox_harmless_statements_leave_the_store_and_folder_alone(
        sandbox: dict[str, Path], template: str) -> None:
    query = template.format(**{k: str(v) for k, v in sandbox.items()})
    before = _sha(sandbox["db"])
    files_before = sorted(p.name for p in sandbox["dir"].iterdir())
    out = _sql(sandbox["db"], query)
    assert out.exit_code == 0, out.stderr
    assert _sha(sandbox["db"]) == before
    assert sorted(p.name for p in sandbox["dir"].iterdir()) == files_before


def test_external_access_stays_off_and_a_temp_table_is_gone(sandbox: dict[str, Path]) -> None:
    out = _sql(sandbox["db"], "SELECT current_setting('enable_external_access') AS e, "
               "current_setting('lock_configuration') AS l", fmt="json")
    assert orjson.loads(out.stdout) == [{"e": False, "l": True}]
    assert _sql(sandbox["db"], "CREATE TEMP TABLE gone AS SELECT 1 AS a").exit_code == 0
    later = _sql(sandbox["db"], "SELECT * FROM gone")
    assert later.exit_code == 2 and "gone" in later.stderr


@pytest.mark.parametrize("what", ["write", "read"])
def test_the_store_temp_directory_is_no_way_out(tmp_path: Path, what: str) -> None:
    """Issue point 10: "a write, ... a COPY TO or a read of a file outside the store fails
    with a clear message". DuckDB adds ``<db>.tmp/`` (its default temp_directory) to
    ``allowed_directories`` even with external access disabled."""
    db = tmp_path / "t.duckdb"
    assert _ingest(db, SAMPLE)[0] == 0
    spill = tmp_path / "t.duckdb.tmp"
    spill.mkdir()  # what a spill leaves behind when the process is killed
    (spill / "planted.csv").write_text("a\n1\n")
    before = _sha(db)
    if what == "write":
        out = _sql(db, f"COPY (SELECT * FROM events) TO '{spill}/dump.csv'")
    else:
        out = _sql(db, f"SELECT * FROM read_csv('{spill}/planted.csv')")
    assert out.exit_code == 2 and "no file or network access" in out.stderr, out.stdout
    assert not (spill / "dump.csv").exists()
    assert _sha(db) == before


_INTERRUPT = textwrap.dedent("""
    import sys
    from rummyguard.cli.app import app
    sys.argv = ["rummyguard", "sql", "--db", sys.argv[1],
                "SELECT sum(a.range % 7) FROM range(1000000000000) a"]
    print("ready", file=sys.stderr, flush=True)
    app()
""")


def test_ctrl_c_on_a_query_that_never_ends_is_one_line(sandbox: dict[str, Path]) -> None:
    """README: errors are "one line on stderr ..., never a traceback". A query that never
    ends has no other guard than Ctrl-C, so Ctrl-C must end it, cleanly, every time."""
    proc = subprocess.Popen([sys.executable, "-c", _INTERRUPT, str(sandbox["db"])],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200"})
    try:
        assert proc.stderr is not None and proc.stderr.readline().strip() == "ready"
        time.sleep(1.5)  # connect and start the scan (milliseconds)
        deadline = time.monotonic() + 20
        signals = 0
        while proc.poll() is None and time.monotonic() < deadline:
            proc.send_signal(signal.SIGINT)
            signals += 1
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=4)
    finally:
        if proc.poll() is None:
            proc.kill()
        _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, f"exit {proc.returncode} after {signals} Ctrl-C"
    assert "Traceback" not in err, err[-500:]
    assert err.strip().count("\n") == 0 and "interrupt" in err.lower()


@pytest.mark.parametrize("fmt", ["json", "csv", "table"])
def test_histogram_of_an_integer_column_prints(sandbox: dict[str, Path], fmt: str) -> None:
    """docs/sql.md: json/csv/table output of any query; ``histogram(seq)`` is a MAP
    keyed by INTEGER, the most ordinary analyst aggregate."""
    out = _sql(sandbox["db"], "SELECT histogram(seq) AS h FROM events WHERE game_id = "
               "'example-classic'", fmt=fmt)
    assert out.exit_code == 0, repr(out.exception)
    if fmt == "json":
        assert orjson.loads(out.stdout) == [{"h": {str(s): 1 for s in range(27)}}]


def test_long_queries_run(sandbox: dict[str, Path]) -> None:
    """A 100 kB query (a long IN list) is read whole; nothing is cut."""
    ids = ",".join(str(i) for i in range(20_000))
    out = _sql(sandbox["db"], f"SELECT count(*) AS n FROM events WHERE seq IN ({ids})", fmt="json")
    assert out.exit_code == 0 and orjson.loads(out.stdout) == [{"n": 27 + 26}]


# --- ingest accounting on adversarial files ----------------------------------------------
def _game_lines(game_id: str = "g1") -> list[bytes]:
    return _lines(_sample(game_id))


@pytest.mark.parametrize(
    ("name", "data", "want"),
    [
        ("crlf", b"".join(line + b"\r\n" for line in _game_lines()), (27, 27, 0, 0)),
        ("bom_crlf", b"\xef\xbb\xbf" + b"".join(line + b"\r\n" for line in _game_lines()),
         (27, 27, 0, 0)),
        ("no_final_newline", b"\n".join(_game_lines()), (27, 27, 0, 0)),
        ("crlf_no_final_newline", b"\r\n".join(_game_lines()), (27, 27, 0, 0)),
        ("blank_line", b"\n".join([*_game_lines()[:5], b"", *_game_lines()[5:]]) + b"\n",
         (28, 27, 0, 1)),
        ("whitespace_line", b"\n".join([*_game_lines()[:5], b" \t", *_game_lines()[5:]]) + b"\n",
         (28, 27, 0, 1)),
        ("duplicates_in_one_batch",
         b"\n".join([*_game_lines()[:5], _game_lines()[4], _game_lines()[4], *_game_lines()[5:]])
         + b"\n", (29, 27, 2, 0)),
    ],
)
def test_ingest_accounting(tmp_path: Path, name: str, data: bytes, want: tuple[int, ...]) -> None:
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(data)
    code, s = _ingest(tmp_path / "s.duckdb", path)
    assert (s["read"], s["stored"], s["duplicates"], s["quarantined"]) == want
    assert _balanced(s) and code == (1 if want[3] else 0)


def test_quarantine_rows_are_byte_exact_with_file_and_line(tmp_path: Path) -> None:
    """A non-UTF-8 byte, an oversize field (a 10 MB line), the same event_id with other
    content, a blank line: each is one quarantine row with its exact bytes, its file, its
    1-based line number and the reason docs/sql.md gives; the rest of the game behind an
    unreadable line is ``sequence_gap``; read = stored + duplicates + quarantined."""
    good = _game_lines()
    big = orjson.loads(good[1])
    big["payload"]["client"] = "x" * 10_000_000
    other = orjson.loads(good[3])
    other["ts"] = "2026-11-29T22:56:00.601Z"
    latin = good[20].replace(b'"actor":"', b'"actor":"\xe9', 1)  # Latin-1 in a string
    lines = [good[0], orjson.dumps(big), *good[1:4], orjson.dumps(other), *good[4:20], b"", latin,
             *good[21:]]
    path = _write(tmp_path / "adv.jsonl", lines)
    code, s = _ingest(tmp_path / "s.duckdb", path, extra=("--batch-lines", "7"))
    assert code == 1 and _balanced(s) and s["read"] == len(lines)
    rows = _quarantine(tmp_path / "s.duckdb")
    source = str(path.resolve())
    assert {(src, n) for src, n, _r, _b in rows} == {(source, n) for n in
                                                      [2, 6, 23, 24, *range(25, len(lines) + 1)]}
    by_line = {n: (r, raw) for _s, n, r, raw in rows}
    assert by_line[2] == ("invalid", lines[1])
    assert by_line[6] == ("conflict_event_id", lines[5])
    assert by_line[23] == ("not_json", b"")
    assert by_line[24] == ("not_json", latin)
    assert all(by_line[n] == ("sequence_gap", lines[n - 1]) for n in range(25, len(lines) + 1))
    assert s["stored"] == 20 and s["quarantined"] == len(rows)


def test_two_files_in_one_command_and_a_cut_gzip_refuses_everything(tmp_path: Path) -> None:
    """Two files (one gzip) are one ingest; a truncated gzip among the inputs is refused
    before anything is stored (one line, exit 2), so no half-ingested file."""
    lines = _game_lines()
    first = tmp_path / "a.jsonl.gz"
    first.write_bytes(gzip.compress(b"".join(line + b"\n" for line in lines[:10])))
    second = _write(tmp_path / "b.jsonl", lines[10:])
    code, s = _ingest(tmp_path / "s.duckdb", first, second)
    assert code == 0 and (s["read"], s["stored"]) == (27, 27) and len(s["files"]) == 2
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress(b"".join(line + b"\n" for line in _lines(_sample("g2"))))[:-30])
    ok = _write(tmp_path / "ok.jsonl", _lines(_sample("g3")))
    db = tmp_path / "t.duckdb"
    out = _cli("ingest", "--db", str(db), "--no-progress", str(ok), str(cut))
    assert out.exit_code == 2 and "nothing was done" in out.stderr
    assert out.stderr.count("\n") == 1 and not db.exists()


def test_a_gap_filled_by_a_later_file_of_the_same_command(tmp_path: Path) -> None:
    """EVENTS.md: files are in seq order within a game. Here the game's seq 5 comes in a
    second file of the same command, and the first file is then ingested again. Whatever
    ingest decides for the lines behind the gap (today: quarantined, then stored by the
    re-ingest), nothing is lost or counted twice: every line is a stored event or a
    quarantine row, each summary balances, the exit code says whether anything was
    quarantined, and ``verify`` is clean exactly when the whole game is stored."""
    lines = _game_lines()
    a = _write(tmp_path / "a.jsonl", lines[:5] + lines[6:])
    b = _write(tmp_path / "b.jsonl", lines[5:6])
    db = tmp_path / "s.duckdb"
    code, s = _ingest(db, a, b)
    assert _balanced(s) and s["read"] == 27 and s["stored"] >= 6
    assert code == (1 if s["quarantined"] else 0)
    code, s = _ingest(db, a)
    assert _balanced(s) and s["read"] == 26 and code == (1 if s["quarantined"] else 0)
    snap = _snapshot(db)
    stored = {row[0] for row in snap["events"]}  # event ids
    waiting = {orjson.loads(raw)["event_id"] for *_x, raw in snap["quarantine"]}
    assert stored | waiting == {f"g1-{n:04d}" for n in range(27)}
    res = _cli("verify", "--db", str(db), "--json", "--no-progress")
    assert res.exit_code == (0 if len(stored) == 27 else 1), res.stdout[-400:]


@pytest.mark.parametrize("case", ["swapped", "early_rival"])
def test_reingesting_the_same_file_changes_nothing(tmp_path: Path, case: str) -> None:
    """Issue point 7: "Re-ingesting the same file changes nothing." ``swapped``: seq 6
    is written before seq 5; ``early_rival``: a rival event for seq 2 (another id,
    other content) comes before seq 1."""
    lines = _game_lines()
    if case == "swapped":
        data = [*lines[:5], lines[6], lines[5], *lines[7:]]
    else:
        rival = orjson.loads(lines[2])
        rival["event_id"] = "g1-rival"
        rival["ts"] = "2026-11-29T22:56:00.401Z"
        data = [lines[0], orjson.dumps(rival), *lines[1:]]
    path = _write(tmp_path / "f.jsonl", data)
    db = tmp_path / "s.duckdb"
    first_code, first = _ingest(db, path)
    after_first = _snapshot(db)
    second_code, second = _ingest(db, path)
    assert _balanced(first) and _balanced(second)
    assert second["stored"] == 0
    assert _snapshot(db) == after_first
    assert second_code == first_code


def test_reingest_of_a_clean_and_of_a_bad_file_changes_nothing(tmp_path: Path) -> None:
    """The in-order case the issue names: a second ingest adds no event, no chain head and
    no quarantine row (only its own row in ``ingest_batches``)."""
    db = tmp_path / "s.duckdb"
    files = [SAMPLE, GOLDEN, BAD]
    code, _ = _ingest(db, *files)
    snap = _snapshot(db)
    code2, s = _ingest(db, *files)
    assert (code, code2) == (1, 1) and s["stored"] == 0 and _balanced(s)
    assert _snapshot(db) == snap


def test_append_is_all_or_nothing_and_optimistic(tmp_path: Path) -> None:
    """Issue point 6: ``append(game_id, events, expected_seq)``. A stale expected_seq and
    an invalid event in the middle both write nothing; the right one chains the events."""
    from rummyguard.events.store import AppendRejected, ConcurrencyError, EventStore

    events = _sample("live")
    with EventStore.open(tmp_path / "s.duckdb") as store:
        assert store.append("live", copy.deepcopy(events[:5]), 0) == 5
        with pytest.raises(ConcurrencyError):
            store.append("live", copy.deepcopy(events[3:6]), 3)  # another writer got to 5
        broken = copy.deepcopy(events[5:8])
        broken[2]["payload"]["card"] = "1X"  # seq 7, a Discarded
        with pytest.raises(AppendRejected) as exc:
            store.append("live", broken, 5)
        assert exc.value.reason == "invalid"
        assert store.counts()["events"] == 5
        assert store.append("live", copy.deepcopy(events[5:]), 5) == 27
        assert store.verify().ok
        stored = store.con.execute("SELECT hash FROM store.events WHERE game_id = 'live' "
                                   "ORDER BY seq").fetchall()
    prev, want = GENESIS, []
    for e in events:
        prev = _hash({**e, "prev_hash": prev})
        want.append((prev,))
    assert stored == want
