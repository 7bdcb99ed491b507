"""Audit 44: the CLI and SQL surface as the support agent, risk analyst and data analyst
use it (README "The CLI at a glance", "SQL for analysts"; docs/sql.md)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

RG = str(Path(sys.executable).with_name("rummyguard"))


def rg(*args: str, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RG, *args], capture_output=True, text=True, timeout=timeout)


def one_line_error(r: subprocess.CompletedProcess[str]) -> None:
    # README: "Errors a user can cause ... are one line on stderr with exit code 2,
    # never a traceback"
    assert r.returncode == 2, (r.returncode, r.stdout[-500:], r.stderr[-1500:])
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("a44")
    log, labels, db, bare = d / "w.jsonl", d / "l.json", d / "s.duckdb", d / "bare.duckdb"
    assert rg("simulate", "--games", "12", "--seed", "11", "--out", str(log),
              "--labels", str(labels)).returncode == 0
    assert rg("ingest", str(log), "--db", str(db)).returncode == 0
    assert rg("ingest", str(log), "--db", str(bare)).returncode == 0
    r = rg("scan", "--db", str(db), "--model", "none", timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert rg("verify", "--db", str(db)).returncode in (0, 1)
    return {"dir": d, "log": log, "db": db, "bare": bare}


def sql_rows(db: Path, query: str) -> list[dict]:
    r = rg("sql", "--db", str(db), "-f", "json", query)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- refusals -------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["read_blob", "read_text"])
def test_sql_reads_no_file_but_the_store_itself(store: dict[str, Path], fn: str) -> None:
    # docs/sql.md: "So a query cannot ... read or list a file (`read_csv`, `read_text`,
    # `glob`, `'file.parquet'`; the one file DuckDB lets it read is the store itself, which
    # it already holds open ... so it is allowed)". Audit 44 asked for the store's own bytes
    # to be refused too; disabling DuckDB's local file system after the store is open does
    # that, but it also changes what ATTACH of the store and the secret manager do (audit
    # 10 pins both), so the store's own file stays readable, as audit 10 decided, and the
    # docs say so. Any other file, the log beside the store included, is refused.
    db = store["db"]
    r = rg("sql", "--db", str(db), "-f", "csv", f"SELECT size FROM read_blob('{db}')")
    assert r.returncode == 0 and int(r.stdout.splitlines()[1]) == db.stat().st_size, r.stderr
    r = rg("sql", "--db", str(db), "-f", "csv", f"SELECT size FROM {fn}('{store['log']}')")
    one_line_error(r)
    assert "refused" in r.stderr


def test_sql_refuses_attach_copy_export_and_file_reads(store: dict[str, Path]) -> None:
    # docs/sql.md: writes, ATTACH, COPY ... TO, reading or listing a file, installing an
    # extension are "each ... refused with one line and exit code 2"
    d, db = store["dir"], store["db"]
    before = digest(db)
    for q in [f"ATTACH '{d}/x.duckdb' AS x", "ATTACH ':memory:' AS m",
              f"COPY (SELECT 1) TO '{d}/x.csv'", f"EXPORT DATABASE '{d}/exp'",
              f"SELECT * FROM '{store['log']}'", "FROM read_csv('/etc/passwd')",
              f"FROM glob('{d}/*')", "INSTALL httpfs", "LOAD httpfs",
              "SET enable_external_access = true", "RESET enable_external_access",
              "CREATE TABLE t (x INT)", "CREATE MACRO m(x) AS x",
              "DELETE FROM store.events", "DROP VIEW events"]:
        r = rg("sql", "--db", str(db), q)
        one_line_error(r)
        assert "refused" in r.stderr, (q, r.stderr)
    assert not (d / "x.csv").exists() and not (d / "exp").exists()
    assert not (d / "x.duckdb").exists()
    assert digest(db) == before


def test_sql_checkpoint_and_vacuum_leave_the_store_unchanged(store: dict[str, Path]) -> None:
    # README: "`rummyguard sql` opens the store read-only"
    db = store["db"]
    before = digest(db)
    for q in ["CHECKPOINT", "VACUUM", "FORCE CHECKPOINT"]:
        r = rg("sql", "--db", str(db), q)
        assert "Traceback" not in r.stderr
    assert digest(db) == before


def test_sql_on_a_store_locked_by_a_writer_is_one_line(store: dict[str, Path]) -> None:
    # README: "an unusable store ... one line on stderr with exit code 2"
    import duckdb
    copy = store["dir"] / "locked.duckdb"
    copy.write_bytes(store["bare"].read_bytes())
    con = duckdb.connect(str(copy))
    try:
        one_line_error(rg("sql", "--db", str(copy), "SELECT 1"))
    finally:
        con.close()


@pytest.mark.parametrize("query,view,command", [
    ("FROM findings", "findings", "rummyguard verify"),
    ("DESCRIBE flags", "flags", "rummyguard scan"),
    ("SELECT * FROM main.moves", "moves", "rummyguard scan"),
    ("SELECT count(*) FROM chip_flows", "chip_flows", "rummyguard scan"),
    ("FROM sessions", "sessions", "rummyguard scan"),
])
def test_sql_missing_command_view_names_the_command(store: dict[str, Path], query: str,
                                                    view: str, command: str) -> None:
    # docs/sql.md: "Until its command has run on the store, a query naming one of them is
    # refused with one line that names the command"
    r = rg("sql", "--db", str(store["bare"]), query)
    one_line_error(r)
    assert f"no view {view}" in r.stderr and command in r.stderr, r.stderr


def test_sql_one_statement_rules(store: dict[str, Path]) -> None:
    # docs/sql.md: "an empty query, one of comments only, or several statements separated
    # by `;` is an error (one line, exit 2)"
    db = str(store["db"])
    for q in ["", "   ", ";", "-- nothing", "SELECT 1; SELECT 2"]:
        one_line_error(rg("sql", "--db", db, "--", q))
    r = rg("sql", "--db", db, "-f", "csv", "--", "-- why\nSELECT 1 AS x")
    assert r.returncode == 0 and r.stdout.splitlines() == ["x", "1"], r


def test_sql_json_repeated_names_and_empty_result(store: dict[str, Path]) -> None:
    # docs/sql.md: "a repeated column name ... gets `_1` appended ... so no column is lost"
    rows = sql_rows(store["db"], "SELECT 1 AS a, 2 AS a, 3 AS A")
    assert rows == [{"a": 1, "a_1": 2, "A_2": 3}]
    assert sql_rows(store["db"], "SELECT * FROM games WHERE false") == []


# --- views against the raw events -----------------------------------------------------

def test_moves_match_the_events(store: dict[str, Path]) -> None:
    # README: `moves` one row per player move; docs/sql.md columns game_id, seq, player,
    # type, ts_ms, ...
    rows = sql_rows(store["db"], """
        SELECT count(*) FILTER (WHERE e.seq IS NULL) AS orphan,
               count(*) FILTER (WHERE e.type <> m.type) AS bad_type,
               count(*) FILTER (WHERE e.type <> 'AutoPlayed' AND e.actor <> m.player) AS bad_player,
               count(*) FILTER (WHERE epoch_ms(e.ts) <> m.ts_ms) AS bad_ts,
               count(*) FILTER (WHERE m.auto <> (e.type = 'AutoPlayed')) AS bad_auto
        FROM moves m LEFT JOIN events e USING (game_id, seq)""")
    assert rows == [{"orphan": 0, "bad_type": 0, "bad_player": 0, "bad_ts": 0, "bad_auto": 0}]


def test_sessions_match_the_events(store: dict[str, Path]) -> None:
    # docs/sql.md: `sessions` "one row per PlayerConnected / PlayerDisconnected ... (a
    # blank hash is NULL)"
    rows = sql_rows(store["db"], """
        SELECT (SELECT count(*) FROM sessions) AS n,
               (SELECT count(*) FROM events WHERE type IN ('PlayerConnected',
                                                            'PlayerDisconnected')) AS e,
               (SELECT count(*) FROM sessions s JOIN events e USING (game_id, seq)
                WHERE s.player <> e.actor OR s.ts_ms <> epoch_ms(e.ts)
                   OR s.ip_hash IS DISTINCT FROM nullif(e.payload->>'ip_hash', '')
                   OR s.device_hash IS DISTINCT FROM nullif(e.payload->>'device_hash', '')
                   OR s.client IS DISTINCT FROM (e.payload->>'client')) AS bad""")
    assert rows[0]["n"] == rows[0]["e"] and rows[0]["bad"] == 0, rows


def test_games_dealer_is_the_first_rounds_dealer(store: dict[str, Path]) -> None:
    # docs/sql.md games.dealer: "the first dealer's seat"
    rows = sql_rows(store["db"], """
        SELECT count(*) AS bad FROM games g JOIN events e
          ON e.game_id = g.game_id AND e.type = 'RoundStarted'
         AND (e.payload->>'round')::INT = 1 AND (e.payload->>'redeal')::INT = 0
        WHERE g.dealer <> (e.payload->>'dealer')::INT""")
    assert rows == [{"bad": 0}]


def test_flags_view_matches_the_flags_command(store: dict[str, Path]) -> None:
    # README: `flags` lists the scan's flags; the `flags` view holds the same
    r = rg("flags", "--db", str(store["db"]), "--json", "--top", "1000")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    n = sql_rows(store["db"], "SELECT count(*) AS n FROM flags")[0]["n"]
    assert doc["total"] == n and len(doc["flags"]) == n


# --- support agent / risk analyst commands: bad input ---------------------------------

def test_replay_and_flags_bad_input_is_one_line(store: dict[str, Path]) -> None:
    # README: "an unknown game ... one line on stderr with exit code 2"
    db, d = str(store["db"]), store["dir"]
    game = sql_rows(store["db"], "SELECT min(game_id) AS g FROM games")[0]["g"]
    for args in [("replay", "nosuch", "--db", db),
                 ("replay", game, "--db", db, "--at", "999999"),
                 ("replay", game, "--db", db, "--at", "-1"),
                 ("replay", game, "--db", db, "--as", "nobody"),
                 ("replay", game, "--db", db, "--html", str(d)),
                 ("replay", game, "--db", db, "--html", str(d / "no" / "x.html")),
                 ("flags", "--db", db, "--kind", "bogus"),
                 ("flags", "--db", db, "--source", "bogus"),
                 ("flags", "--db", db, "--mechanism", "bogus"),
                 ("flags", "--db", str(store["bare"])),
                 ("dispute", "nosuch", "--db", db, "--bundle", str(d / "b.zip")),
                 ("prove", "nosuch", "--db", db),
                 ("verify-log", "--db", db, "--game", "nosuch"),
                 ("check-bundle", str(store["log"])),
                 ("export", "--db", db, "--parquet", str(store["log"])),
                 ("sql", "--db", str(store["log"]), "SELECT 1"),
                 ("sql", "--db", str(d), "SELECT 1")]:
        r = rg(*args)
        one_line_error(r)
