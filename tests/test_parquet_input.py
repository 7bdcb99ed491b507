"""Parquet input (ARCHITECTURE.md: "JSON Lines (or Parquet)"): each row is read as the
line a JSONL producer would have written and takes the one ingest path: the same
validation, chain checks, quarantine reasons and accounting. Real files: pyarrow writes
them, DuckDB stores them, the CLI reads them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.parquet_source import row_line

DATA = Path(__file__).parent / "data"
UNCHAINED = DATA / "sample" / "classic-3p.jsonl"
CHAINED = DATA / "sample" / "classic-3p.chained.jsonl"
R500 = sorted((DATA / "r500").glob("clean*.jsonl"))[:1]
ENVELOPE = ("event_id", "game_id", "seq", "type", "v", "ts", "actor", "payload", "prev_hash",
            "hash")


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout + result.stderr


def events_of(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def write_rows(path: Path, events: list[dict], *, ts_as_timestamp: bool = False,
               extra: dict[str, list] | None = None) -> Path:
    """A producer's Parquet file: one column per envelope field, payload as JSON text."""
    columns: dict[str, pa.Array] = {}
    for name in ENVELOPE:
        values = [e.get(name) for e in events]
        if name == "payload":
            values = [orjson.dumps(v).decode() for v in values]
        if name == "ts" and ts_as_timestamp:
            values = [datetime.fromisoformat(v.replace("Z", "+00:00")) for v in values]
            columns[name] = pa.array(values, pa.timestamp("ms", tz="UTC"))
            continue
        columns[name] = pa.array(values)
    for name, values in (extra or {}).items():
        columns[name] = pa.array(values)
    pq.write_table(pa.table(columns), path)
    return path


def stored(db: Path) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(
            "SELECT e.event_id, e.game_id, e.seq, e.hash, e.prev_hash, c.chained_by "
            "FROM store.events e JOIN store.games_chain c USING (game_id) "
            "ORDER BY e.game_id, e.seq").fetchall()


def test_an_export_ingested_elsewhere_stores_the_same_bytes(tmp_path: Path) -> None:
    a, b, out = tmp_path / "a.duckdb", tmp_path / "b.duckdb", tmp_path / "export"
    assert run("ingest", "--db", str(a), str(UNCHAINED), str(CHAINED), *map(str, R500))[0] == 0
    assert run("export", "--db", str(a), "--parquet", str(out))[0] == 0
    parts = sorted(out.rglob("*.parquet"))
    code, text = run("ingest", "--db", str(b), "--json", *map(str, parts))
    assert code == 0, text
    summary = orjson.loads(text)
    with duckdb.connect(str(a), read_only=True) as con:
        raw_a = con.execute("SELECT event_id, raw FROM store.events ORDER BY event_id").fetchall()
    with duckdb.connect(str(b), read_only=True) as con:
        raw_b = con.execute("SELECT event_id, raw FROM store.events ORDER BY event_id").fetchall()
    assert summary["read"] == summary["stored"] == len(raw_a) > 50
    assert raw_a == raw_b  # byte-exact originals, so the same hashes and chains
    assert stored(a) == stored(b)
    assert run("verify-log", "--db", str(b))[0] == 0


@pytest.mark.parametrize("ts_as_timestamp", [False, True])
@pytest.mark.parametrize("source", [UNCHAINED, CHAINED])
def test_rows_rebuilt_from_columns_read_as_the_jsonl(tmp_path: Path, source: Path,
                                                      ts_as_timestamp: bool) -> None:
    events = events_of(source)
    parquet = write_rows(tmp_path / "log.parquet", events, ts_as_timestamp=ts_as_timestamp)
    a, b = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    assert run("ingest", "--db", str(a), str(source))[0] == 0
    code, text = run("ingest", "--db", str(b), str(parquet))
    assert code == 0, text
    assert stored(a) == stored(b)  # same ids, seqs, hashes and chaining
    code_j, out_j = run("verify", "--json", str(source))
    code_p, out_p = run("verify", "--json", str(parquet))
    assert code_j == code_p == 0 and orjson.loads(out_j) == orjson.loads(out_p)


def test_bad_rows_are_quarantined_with_row_number_and_nothing_is_lost(tmp_path: Path) -> None:
    events = events_of(UNCHAINED)[:10]
    events[3] = {**events[3], "payload": "not json {"}  # written as text that is not JSON
    events[5] = {**events[5], "ts": "2026-11-29T25:00:00.000Z"}  # a bad timestamp
    parquet = tmp_path / "bad.parquet"
    write_rows(parquet, events)
    table = pq.read_table(parquet)
    # row 4 (index 3): the payload column holds the text itself, not JSON of it
    payload = table.column("payload").to_pylist()
    payload[3] = "not json {"
    table = table.set_column(table.schema.get_field_index("payload"), "payload",
                             pa.array(payload))
    pq.write_table(table, parquet)
    db = tmp_path / "x.duckdb"
    code, text = run("ingest", "--db", str(db), "--json", str(parquet))
    summary = orjson.loads(text)
    assert code == 1
    assert summary["read"] == 10
    assert summary["read"] == summary["stored"] + summary["duplicates"] + summary["quarantined"]
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT line_no, reason, raw FROM store.quarantine ORDER BY line_no"
                           ).fetchall()
        sources = con.execute("SELECT DISTINCT source FROM store.quarantine").fetchall()
    reasons = {n: r for n, r, _ in rows}
    # rows 4 and 6 break the contract; what follows row 4 in its game is then a gap
    assert reasons == {4: "invalid", 6: "invalid", 5: "sequence_gap", 7: "sequence_gap",
                       8: "sequence_gap", 9: "sequence_gap", 10: "sequence_gap"}
    assert orjson.loads(rows[0][2])["payload"] == "not json {"  # the row as read, kept
    assert sources == [(str(parquet.resolve()),)]


def test_an_extra_column_is_an_extra_field(tmp_path: Path) -> None:
    events = events_of(UNCHAINED)[:3]
    parquet = write_rows(tmp_path / "x.parquet", events, extra={"region": ["eu"] * 3})
    db = tmp_path / "x.duckdb"
    code, text = run("ingest", "--db", str(db), "--json", str(parquet))
    assert code == 1 and orjson.loads(text)["quarantined"] == 3
    with duckdb.connect(str(db), read_only=True) as con:
        details = con.execute("SELECT reason, detail FROM store.quarantine").fetchall()
    assert len(details) == 3 and all(r == "invalid" and "region" in d for r, d in details)


def test_sub_millisecond_timestamps_are_not_rounded(tmp_path: Path) -> None:
    ts = datetime(2026, 11, 29, 10, 0, 0, 123456, tzinfo=UTC)
    line = row_line({"seq": 0, "ts": ts})
    assert orjson.loads(line)["ts"] == "2026-11-29T10:00:00.123456+00:00"  # invalid: quarantined
    whole = row_line({"seq": 0, "ts": ts.replace(microsecond=123000), "hash": None})
    assert whole == b'{"seq":0,"ts":"2026-11-29T10:00:00.123Z"}'


def test_a_truncated_parquet_file_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    whole = write_rows(tmp_path / "whole.parquet", events_of(UNCHAINED))
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(whole.read_bytes()[:-200])
    db = tmp_path / "x.duckdb"
    code, text = run("ingest", "--db", str(db), str(cut))
    assert code == 2 and "cut.parquet" in text and "Parquet" in text
    assert not db.exists()  # refused before the store was even opened: all or nothing
    code, text = run("verify", str(cut))
    assert code == 2 and "Parquet" in text
