"""``rummyguard sql``: the views, the formats, and the read-only analyst connection
refusing writes, ATTACH, COPY TO, file reads and re-enabling access."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.store import EventStore
from rummyguard.events.views import QueryError, connect_readonly, register_view, run_query

TESTS = Path(__file__).parent
SAMPLE = TESTS / "data" / "sample" / "classic-3p.jsonl"
CHAINED = TESTS / "data" / "sample" / "classic-3p.chained.jsonl"
GOLDEN = TESTS / "data" / "events" / "golden.jsonl"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sql") / "x.duckdb"
    with EventStore.open(path) as s:
        s.ingest_files([SAMPLE, CHAINED, GOLDEN, TESTS / "data" / "events" / "bad.jsonl"])
        register_view(s.con, "discards", "SELECT game_id, seq, payload->>'card' AS card "
                      "FROM events WHERE type = 'Discarded'")
    return path


def _sql(db: Path, query: str, *extra: str):
    return CliRunner().invoke(app, ["sql", query, "--db", str(db), *extra])


def test_games_view(db: Path) -> None:
    out = _sql(db, "SELECT game_id, variant, table_id, seats, dealer, stake, started_at, "
               "ended_at, event_count, chained_by FROM games WHERE variant = 'classic' "
               "ORDER BY game_id", "--format", "json")
    assert out.exit_code == 0, out.stderr
    rows = orjson.loads(out.stdout)
    assert [r["game_id"] for r in rows] == ["example-classic", "example-classic-chained"]
    first = rows[0]
    assert first["seats"] == ["example-classic-p1", "example-classic-p2", "example-classic-p3"]
    assert (first["dealer"], first["stake"], first["event_count"]) == (2, 100, 27)
    assert first["started_at"].startswith("2026-11-29T22:56:00")
    assert first["ended_at"].startswith("2026-11-29T22:58:03.514")
    assert [r["chained_by"] for r in rows] == ["ingest", "producer"]


def test_events_view_is_upcast(db: Path) -> None:
    out = _sql(db, "SELECT type, v, stored_v, payload, stored_payload FROM events "
               "WHERE stored_v < v ORDER BY type", "--format", "json")
    rows = orjson.loads(out.stdout)
    assert [(r["type"], r["v"], r["stored_v"]) for r in rows] == [("Discarded", 2, 1),
                                                                  ("Drew", 2, 1)]
    assert orjson.loads(rows[1]["payload"]) == {"source": "stock", "cards": ["TH"]}
    assert orjson.loads(rows[1]["stored_payload"])["from"] == "deck"


def test_csv_and_table_formats_and_registered_views(db: Path) -> None:
    out = _sql(db, "SELECT * FROM discards WHERE game_id = 'example-classic' ORDER BY seq "
               "LIMIT 3", "--format", "csv")
    assert out.exit_code == 0
    assert list(csv.reader(io.StringIO(out.stdout))) == [
        ["game_id", "seq", "card"], ["example-classic", "5", "2C"],
        ["example-classic", "7", "4C"], ["example-classic", "9", "7D"]]
    table = _sql(db, "SELECT reason, count(*) AS n FROM quarantine GROUP BY reason "
                 "ORDER BY reason")
    assert table.exit_code == 0 and "not_json" in table.stdout and "row(s)" in table.stdout


@pytest.mark.parametrize(
    ("query", "needle"),
    [
        ("CREATE TABLE x (a INT)", "read-only"),
        ("INSERT INTO store.events SELECT * FROM store.events", "read-only"),
        ("DELETE FROM store.quarantine", "read-only"),
        ("ATTACH '/tmp/rg-attach-test.duckdb' AS other", "no file or network access"),
        ("COPY (SELECT 1) TO '/tmp/rg-copy-test.csv'", "no file or network access"),
        ("SELECT * FROM read_csv('/etc/passwd')", "no file or network access"),
        ("SELECT * FROM read_text('/etc/hostname')", "no file or network access"),
        ("SELECT * FROM glob('/etc/*')", "no file or network access"),
        ("SET enable_external_access = true", "locked"),
        ("INSTALL httpfs", "no file or network access"),
        ("SELEC 1", "syntax error"),
    ],
)
def test_refusals_are_one_clear_line(db: Path, query: str, needle: str) -> None:
    out = _sql(db, query)
    assert out.exit_code == 2
    assert needle in out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert not Path("/tmp/rg-copy-test.csv").exists()


def test_library_connection(db: Path) -> None:
    con = connect_readonly(db)
    try:
        cols, rows = run_query(con, "SELECT count(*) AS n FROM events")
        assert cols == ["n"] and rows == [(27 * 2 + 26,)]
        with pytest.raises(QueryError, match="read-only"):
            run_query(con, "DROP VIEW events")
    finally:
        con.close()
    with pytest.raises(QueryError, match="no store"):
        connect_readonly(db.parent / "none.duckdb")


def test_register_view_rejects_bad_names(tmp_path: Path) -> None:
    with EventStore.open(tmp_path / "v.duckdb") as s, pytest.raises(ValueError):
        register_view(s.con, "x; DROP TABLE store.events", "SELECT 1")


def test_missing_store_is_one_line(tmp_path: Path) -> None:
    out = _sql(tmp_path / "none.duckdb", "SELECT 1")
    assert out.exit_code == 2 and "no store" in out.stderr
