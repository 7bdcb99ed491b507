"""Audit 20: how the support agent's, the risk analyst's and the data analyst's commands
behave on a big store — pinned as functional facts, never as timings (speed lives in
benchmarks/bench_commands.py).

The scale audit (2,000 and 20,000 simulated games, 0.23M and 2.6M events) measured:

- ``replay GAME --db`` reads its game through ``store.events`` filtered on ``game_id``
  (fine while the simulator's games lie in ``game_id`` order in the file), but the
  quarantine read it shares with ``verify`` joins *every* quarantined line against
  *every* stored event, whatever game is asked for: a single-game command whose cost
  grows with the store. Pinned here from the query plans: every scan of
  ``store.events`` or ``store.quarantine`` a replay runs must be filtered on its game.
- ``verify-log`` sorted the whole log (raw lines included) in one query and held the
  sorted result: peak RSS 0.43 GB at 0.23M events, 2.8 GB at 2.6M. Pinned from the
  plans: no whole-log read is sorted.
- ``verify-log`` and ``export --parquet`` are long on a big store (33 s and ~20 s at
  2.6M events; minutes at 10M) and show nothing on a terminal, while ``verify``,
  ``scan`` and ``simulate`` show a progress bar. Pinned on a pseudo-terminal.
- No command leaves a file behind in the store's folder (DuckDB's ``<store>.tmp`` spill
  folder, a half-written export): pinned.

The plan checks run ``EXPLAIN (FORMAT JSON)`` of each statement the command sent to
DuckDB (recorded by wrapping the store's connection), so they state what is read, not
how fast: they hold on any machine and fail only if a whole-log read comes back.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest
from typer.testing import CliRunner

import rummyguard.events.store as store_module
from rummyguard.cli.app import app
from rummyguard.cli.replay_cmd import load_events
from rummyguard.events.store import EventStore

GAMES = 48
BAR = "━"  # rich's BarColumn glyph: a progress bar was drawn


def run(*args: str | Path) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A small simulated store (all four variants) whose quarantine holds lines of
    several games: two lines that are not valid events, of two different games."""
    root = tmp_path_factory.mktemp("audit20")
    db = root / "scale.duckdb"
    out = run("simulate", "--games", GAMES, "--seed", 2020, "--db", db, "--no-progress",
              "--workers", 1)
    assert out.exit_code == 0, out.stderr
    with EventStore.open(db) as store:
        ids = store.game_ids()
        bad = []
        for gid in (ids[1], ids[-2]):
            first = store.load_game(gid)[0]
            line = {k: v for k, v in first.items() if k not in ("prev_hash", "hash", "upcast_from")}
            line.update(event_id=f"{gid}-bogus", seq=len(store.load_game(gid)), type="NoSuchEvent")
            bad.append(orjson.dumps(line))
        summary = store.ingest_lines(bad, source="bad.jsonl")
        assert summary.quarantined == 2
        quarantined_games = {r[0] for r in store.con.execute(
            "SELECT DISTINCT game_id FROM store.quarantine").fetchall()}
    assert {ids[1], ids[-2]} <= quarantined_games
    return {"root": root, "db": db, "ids": ids, "quarantined": (ids[1], ids[-2])}


# --- what a command reads ---------------------------------------------------------------------

class _Recording:
    """A DuckDB connection that records every statement (and its parameters) sent
    through ``execute`` or ``sql``; everything else goes straight to the connection."""

    def __init__(self, con: duckdb.DuckDBPyConnection, log: list[tuple[str, Any]]) -> None:
        self._con = con
        self._log = log

    def execute(self, query: str, parameters: Any = None) -> Any:
        self._log.append((query, parameters))
        if parameters is None:
            return self._con.execute(query)
        return self._con.execute(query, parameters)

    def sql(self, query: str, *args: Any, **kwargs: Any) -> Any:
        self._log.append((query, kwargs.get("params", args[0] if args else None)))
        return self._con.sql(query, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """The statements the store's connections run while the test body runs."""
    log: list[tuple[str, Any]] = []
    real = store_module._connect

    def connect(*args: Any, **kwargs: Any) -> Any:
        return _Recording(real(*args, **kwargs), log)

    monkeypatch.setattr(store_module, "_connect", connect)
    return log


def _scans(db: Path, log: list[tuple[str, Any]], tables: tuple[str, ...]
           ) -> Iterator[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    """(statement, scan node, nodes above it) for each scan of one of ``tables`` in the
    plans of the recorded read statements, planned on a fresh read-only connection."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        for query, params in log:
            head = query.lstrip().split(None, 1)[0].upper() if query.strip() else ""
            if head not in ("SELECT", "WITH", "FROM") or not any(t in query for t in tables):
                continue
            explain = "EXPLAIN (FORMAT JSON) " + query
            rows = (con.execute(explain, params) if params else con.execute(explain)).fetchall()
            for root in json.loads(rows[0][1]):
                yield from _walk(query, root, [], tables)
    finally:
        con.close()


def _walk(query: str, node: dict[str, Any], above: list[dict[str, Any]], tables: tuple[str, ...]
          ) -> Iterator[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    info = node.get("extra_info") or {}
    table = str(info.get("Table", "")) if isinstance(info, dict) else ""
    if "SCAN" in node.get("name", "") and any(table.endswith(t) for t in tables):
        yield query, node, above
    for child in node.get("children", []):
        yield from _walk(query, child, [*above, node], tables)


def _filtered_on(node: dict[str, Any], game_id: str) -> bool:
    """Whether a scan reads only ``game_id``'s rows: an equality filter on it (or an
    index lookup of it)."""
    info = node["extra_info"]
    filters = info.get("Filters", "")
    text = " ".join(filters) if isinstance(filters, list) else str(filters)
    return f"game_id = '{game_id}'" in text or info.get("Type") == "Index Scan"


def test_replay_reads_only_its_games_rows(world: dict[str, Any],
                                          statements: list[tuple[str, Any]]) -> None:
    """``replay GAME --db``: every scan of the event log or the quarantine is filtered on
    GAME, so a dispute's latency does not grow with the store."""
    game = world["ids"][len(world["ids"]) // 2]
    events, _bad = load_events(game, None, world["db"])
    assert events and all(e["game_id"] == game for e in events)
    scans = list(_scans(world["db"], statements, ("store.events", "store.quarantine")))
    assert any("store.events" in n["extra_info"]["Table"] for _q, n, _a in scans)
    unfiltered = [(q.split()[:8], n["extra_info"]["Table"]) for q, n, _a in scans
                  if not _filtered_on(n, game)]
    assert not unfiltered, unfiltered


def test_replay_keeps_its_own_quarantined_lines_and_no_others(world: dict[str, Any]) -> None:
    """The LOG-EVENT findings of a replay are its game's quarantined lines, not other
    games' (the behaviour a game-filtered quarantine read must keep)."""
    mine, other = world["quarantined"]
    out = run("replay", mine, "--db", world["db"], "--json")
    assert out.exit_code == 0, out.stderr
    findings = json.loads(out.stdout)["record"]["findings"]
    log_event = [f for f in findings if f["rule"] == "LOG-EVENT"]
    assert len(log_event) == 1 and "bad.jsonl" in log_event[0]["message"], log_event
    clean = run("replay", world["ids"][0], "--db", world["db"], "--json")
    assert clean.exit_code == 0, clean.stderr
    assert not [f for f in json.loads(clean.stdout)["record"]["findings"]
                if f["rule"] == "LOG-EVENT"]
    assert other != world["ids"][0]


def test_verify_log_does_not_sort_the_whole_log(world: dict[str, Any],
                                                statements: list[tuple[str, Any]]) -> None:
    """``verify-log``: no read of the whole log is sorted (a sort holds every row it
    sorts; the store's games are read as they lie and checked one by one)."""
    with EventStore.open(world["db"], read_only=True) as store:
        report = store.verify()
    assert report.ok and report.games == len(world["ids"])
    whole = [(q, n, above) for q, n, above in _scans(world["db"], statements, ("store.events",))
             if not n["extra_info"].get("Filters")]
    assert whole, "verify-log reads the log"
    sorted_reads = [q.split()[:6] for q, _n, above in whole
                    if any(a.get("name") in ("ORDER_BY", "TOP_N") for a in above)]
    assert not sorted_reads, sorted_reads


def test_verify_log_of_one_game_reads_only_that_game(world: dict[str, Any],
                                                     statements: list[tuple[str, Any]]) -> None:
    """``verify-log --game G`` reads G's rows only."""
    game = world["ids"][3]
    with EventStore.open(world["db"], read_only=True) as store:
        report = store.verify(game)
    assert report.ok and (report.games, report.problems) == (1, [])
    scans = list(_scans(world["db"], statements, ("store.events",)))
    assert scans and all(_filtered_on(n, game) for _q, n, _a in scans)


# --- progress on a terminal -------------------------------------------------------------------

def _on_a_terminal(*args: str | Path) -> tuple[int, str]:
    """Run ``rummyguard ARGS`` with stdout and stderr on a pseudo-terminal; its exit code
    and everything it drew."""
    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "rummyguard.cli", *map(str, args)],
                            stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return proc.wait(timeout=120), b"".join(chunks).decode("utf-8", "replace")


def test_verify_shows_a_progress_bar_on_a_terminal(world: dict[str, Any]) -> None:
    """The reference: ``verify`` over the store draws its bar on a terminal."""
    code, drawn = _on_a_terminal("verify", "--db", world["db"])
    assert code in (0, 1), drawn[-600:]
    assert BAR in drawn, drawn[-600:]


def test_verify_log_shows_a_progress_bar_on_a_terminal(world: dict[str, Any]) -> None:
    code, drawn = _on_a_terminal("verify-log", "--db", world["db"])
    assert code == 0, drawn[-600:]
    assert BAR in drawn, drawn[-600:]


def test_export_shows_a_progress_bar_on_a_terminal(world: dict[str, Any], tmp_path: Path) -> None:
    code, drawn = _on_a_terminal("export", "--db", world["db"], "--parquet", tmp_path / "pq")
    assert code == 0, drawn[-600:]
    assert BAR in drawn, drawn[-600:]


def test_progress_bars_stay_off_the_pipes(world: dict[str, Any], tmp_path: Path) -> None:
    """Without a terminal (a pipe, a log file, a cron job) no command draws a bar: the
    output stays what a script parses."""
    for args in (["verify-log", "--db", world["db"]],
                 ["export", "--db", world["db"], "--parquet", tmp_path / "pq", "--json"]):
        proc = subprocess.run([sys.executable, "-m", "rummyguard.cli", *map(str, args)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert BAR not in proc.stdout + proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["games"] == len(world["ids"])


# --- nothing left behind ----------------------------------------------------------------------

def test_commands_leave_nothing_beside_the_store(world: dict[str, Any], tmp_path: Path) -> None:
    """replay, verify-log, verify, sql, flags-less reads and export leave the store's
    folder as they found it (no ``<store>.tmp`` spill folder, no ``.wal`` once closed,
    no half-written file); the export folder holds only its partitions."""
    folder = tmp_path / "store"
    folder.mkdir()
    db = folder / "copy.duckdb"
    db.write_bytes(world["db"].read_bytes())
    game = world["ids"][5]
    for args in (["replay", game, "--db", db, "--json"],
                 ["replay", game, "--db", db, "--html", tmp_path / "g.html"],
                 ["verify-log", "--db", db],
                 ["verify", "--db", db, "--json", "--no-progress"],
                 ["sql", "--db", db, "SELECT count(*) FROM events"],
                 ["export", "--db", db, "--parquet", tmp_path / "pq"],
                 ["export", "--db", db, "--parquet", tmp_path / "pq", "--overwrite"]):
        out = run(*args)
        assert out.exit_code in (0, 1), (args, out.stderr)
        assert sorted(p.name for p in folder.iterdir()) == ["copy.duckdb"], args
    exported = sorted(p.relative_to(tmp_path / "pq").parts[0] for p in (tmp_path / "pq").rglob("*")
                      if p.is_file())
    assert exported and all(part.startswith("variant=") for part in exported)
    assert all(p.name == "part-0.parquet" for p in (tmp_path / "pq").rglob("*") if p.is_file())
