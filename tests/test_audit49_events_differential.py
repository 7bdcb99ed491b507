"""Audit 49: an independent validator written from spec/EVENTS.md, run differentially
against validate_event, the compiled fast path and ``rummyguard ingest`` (36,522 single
mutations of 109 events of all four variants and both versions, 60,000 double mutations,
255 targeted cases, 46 raw-line variants, all 36,522 mutated lines through the real
ingest). validate_event, the fast path and JSONL ingest agreed on every line; every
disagreement with the independent validator is a documented decision (the bounds of the
JSON Schemas, ``null`` = absent, lower-case hex, no leap second, a non-string ``type`` is
``unknown_type``, ...) or a rule the replay judges (two cards drawn from the stock, a
joker given in a JokerSwapped, an ``as`` index outside its meld, a dealer seat that does
not exist, a ``pay:`` pool that is not a card).

Two defects, both off the JSONL-to-validate_event path, fixed and pinned here: the Parquet
input EVENTS.md allows ("The project may add other inputs, e.g. Parquet, with the same
fields.") turned a date, time or UUID value into a string (orjson writes them itself;
events/parquet_source.py now quarantines such a row ``not_json``, at any depth); and a line
that is not UTF-8 inside a game was placed in its game by ``verify FILE`` but not by ingest
(events/ingest.py ``salvage_ids`` now reads its ids as the file readers do), so
``verify --db`` judged the game otherwise.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, date, datetime, time
from pathlib import Path

import duckdb
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app

EXAMPLE = Path(__file__).parent / "data" / "spec" / "classic-3p.jsonl"


def _cli(*args: object) -> object:
    return CliRunner().invoke(app, [str(a) for a in args])


def test_a_parquet_date_column_is_not_turned_into_a_string_event_id(tmp_path: Path) -> None:
    """EVENTS.md, Files: "(The project may add other inputs, e.g. Parquet, with the same
    fields.)"; the envelope: ``event_id`` is a "string, 1-64 chars". The project's reading
    (events/parquet_source.py): "a row holding a decimal, date, time or duration is
    quarantined ``not_json`` with the row as read (EVENTS.md's numbers are integers and its
    strings are strings: nothing is converted into either)". A decimal is; a date is
    stored as the event_id "2026-11-29"."""
    table = pa.table({
        "event_id": pa.array([date(2026, 11, 29)], pa.date32()),
        "game_id": ["a49-g"], "seq": [0], "type": ["CardPlayed"], "v": [1],
        "ts": ["2026-11-29T18:00:00.000Z"], "actor": ["p1"], "payload": ['{"card":"5H"}'],
    })
    path, db = tmp_path / "one.parquet", tmp_path / "x.duckdb"
    pq.write_table(table, path)
    result = CliRunner().invoke(app, ["ingest", str(path), "--db", str(db), "--json",
                                      "--no-progress", "--workers", "0"])
    summary = orjson.loads(result.stdout)
    with duckdb.connect(str(db), read_only=True) as con:
        stored = con.execute("SELECT event_id FROM events").fetchall()
    assert stored == [] and summary["quarantined"] == 1, (stored, summary["reasons"])
    assert summary["reasons"] == {"not_json": 1}


_ENVELOPE = {"event_id": ["a49-e"], "game_id": ["a49-g"], "seq": [0], "type": ["CardPlayed"],
             "v": [1], "ts": ["2026-11-29T18:00:00.000Z"], "actor": ["p1"],
             "payload": ['{"card":"5H"}']}


_UUID = uuid.UUID(int=49).bytes
_VALUES = {  # built when a test runs: a bad build is then that test's failure alone
    "time actor": lambda: ("actor", pa.array([time(18, 0)], pa.time64("us"))),
    "uuid actor": lambda: ("actor", pa.array([_UUID], pa.uuid())),
    "timestamp event_id": lambda: (
        "event_id", pa.array([datetime(2026, 11, 29, tzinfo=UTC)], pa.timestamp("ms", "UTC"))),
    "date in payload": lambda: (
        "payload", pa.array([{"card": date(2026, 11, 29)}], pa.struct([("card", pa.date32())]))),
    "uuid in payload": lambda: (
        "payload", pa.StructArray.from_arrays([pa.array([_UUID], pa.uuid())], names=["card"])),
    "date ts": lambda: ("ts", pa.array([date(2026, 11, 29)], pa.date32())),
}


@pytest.mark.parametrize("case", sorted(_VALUES))
def test_no_parquet_value_is_converted_into_a_string(tmp_path: Path, case: str) -> None:
    """The same reading for every value JSON has no form for, at the top or inside the
    payload: the row is quarantined ``not_json`` with the row as read, nothing stored."""
    column, array = _VALUES[case]()
    table = pa.table({**{k: v for k, v in _ENVELOPE.items() if k != column}, column: array})
    path, db = tmp_path / "one.parquet", tmp_path / "x.duckdb"
    pq.write_table(table, path)
    result = CliRunner().invoke(app, ["ingest", str(path), "--db", str(db), "--json",
                                      "--no-progress", "--workers", "0"])
    summary = orjson.loads(result.stdout)
    assert (summary["stored"], summary["reasons"]) == (0, {"not_json": 1})
    with duckdb.connect(str(db), read_only=True) as con:
        (raw,) = con.execute("SELECT raw FROM quarantine").fetchone()
    assert raw.startswith("<a Parquet row with a value JSON cannot hold")


def test_a_line_that_is_not_utf8_is_judged_alike_from_the_file_and_the_store(
        tmp_path: Path) -> None:
    """EVENTS.md: "JSON Lines, UTF-8, one event object per line"; "A line that cannot be
    read ... is quarantined whole (raw text + reason), never dropped." docs/events.md:
    "`verify` and `replay` from the store judge a game as they judge the file it was
    ingested from"; a line that is not an event "is a `LOG-EVENT` finding at its seq, and
    the replay halts there"."""
    lines = EXAMPLE.read_bytes().splitlines()
    lines[10] = lines[10].replace(b'"actor":"', b'"actor":"\xe9', 1)  # Latin-1, not UTF-8
    log, db = (tmp_path / "log.jsonl").resolve(), tmp_path / "s.duckdb"
    log.write_bytes(b"".join(line + b"\n" for line in lines))
    assert _cli("ingest", log, "--db", db, "--json", "--no-progress").exit_code == 1

    def findings(*source: object) -> list[tuple[int, str]]:
        out = _cli("verify", *source, "--json", "--no-progress")
        return sorted((f["seq"], f["rule"]) for g in orjson.loads(out.stdout)["games"]
                      for f in g["findings"])

    from_file = findings(log)
    assert from_file == [(10, "LOG-EVENT")]
    assert findings("--db", db) == from_file


@pytest.mark.parametrize("edit", [b'"seq":-1', b'"seq":9223372036854775808',
                                  b'"game_id":"' + b"g" * 300 + b'"'],
                         ids=["seq -1", "seq 2**63", "a 300-char game_id"])
def test_a_bad_lines_ids_are_read_alike_from_the_file_and_the_store(tmp_path: Path,
                                                                    edit: bytes) -> None:
    """The same promise for a line whose seq or game id the store's quarantine cannot hold
    (a seq outside 0..2**63-1, a game id past 256 chars): both readers read such a line
    as naming no seq (a LOG-EVENT at the game's last seq) or no game (a line of no game),
    so ``verify FILE`` and ``verify --db`` give the same findings and the same count of
    lines of no game."""
    lines = EXAMPLE.read_bytes().splitlines()
    key = edit.split(b":")[0]
    lines[10] = re.sub(key + rb':("[^"]*"|-?\d+)', lambda _m: edit, lines[10], count=1)
    assert edit in lines[10]
    log, db = (tmp_path / "log.jsonl").resolve(), tmp_path / "s.duckdb"
    log.write_bytes(b"".join(line + b"\n" for line in lines))
    assert _cli("ingest", log, "--db", db, "--json", "--no-progress").exit_code == 1

    def verdict(*source: object) -> tuple[list[tuple[int, str]], int]:
        out = orjson.loads(_cli("verify", *source, "--json", "--no-progress").stdout)
        found = sorted((f["seq"], f["rule"]) for g in out["games"] for f in g["findings"])
        return found, len(out.get("unreadable_lines", []))

    from_file = verdict(log)
    assert from_file[0], "the edited line leaves a mark on the game"
    assert verdict("--db", db) == from_file
