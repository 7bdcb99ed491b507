"""The store API (append with optimistic concurrency, reads) and verify-log's checks of
a store tampered with after ingest."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.hashing import chain, verify_chain
from rummyguard.events.store import AppendRejected, ConcurrencyError, EventStore, StoreError

TESTS = Path(__file__).parent
SAMPLE = TESTS / "data" / "sample" / "classic-3p.jsonl"
CHAINED = TESTS / "data" / "sample" / "classic-3p.chained.jsonl"
GOLDEN = TESTS / "data" / "events" / "golden.jsonl"


def _events(path: Path = SAMPLE, game_id: str | None = None) -> list[dict[str, Any]]:
    out = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    if game_id is not None:
        out = [{**e, "game_id": game_id, "event_id": f"{game_id}-{e['seq']}"} for e in out]
    return out


@pytest.fixture
def store(tmp_path: Path):
    with EventStore.open(tmp_path / "s.duckdb") as s:
        yield s


def test_append_chains_unchained_events_and_checks_expected_seq(store: EventStore) -> None:
    events = _events(game_id="live")
    assert store.append("live", events[:5], expected_seq=0) == 5
    assert store.append("live", events[5:9], expected_seq=5) == 9
    with pytest.raises(ConcurrencyError, match="next seq is 9, not 5"):
        store.append("live", events[5:8], expected_seq=5)
    assert store.append("live", events[9:], expected_seq=9) == 27
    loaded = store.load_game("live")
    assert [e["seq"] for e in loaded] == list(range(27)) and verify_chain(loaded) == []
    assert store.verify().ok


def test_append_producer_chained_and_rejections(store: EventStore) -> None:
    events = chain(_events(game_id="prod"))
    store.append("prod", events[:3], expected_seq=0)
    with pytest.raises(AppendRejected) as info:
        store.append("prod", [{**events[3], "payload": {"ip_hash": "x", "device_hash": "y",
                                                        "client": "z"}}], expected_seq=3)
    assert info.value.reason == "bad_hash"
    unchained = {k: v for k, v in events[3].items() if k not in ("hash", "prev_hash")}
    with pytest.raises(AppendRejected, match="chain_mixed"):
        store.append("prod", [unchained], expected_seq=3)
    with pytest.raises(AppendRejected, match="sequence_gap"):
        store.append("prod", [events[4]], expected_seq=3)
    with pytest.raises(AppendRejected, match="invalid"):
        store.append("prod", [{**events[3], "seq": "3"}], expected_seq=3)
    with pytest.raises(AppendRejected, match="belongs to game"):
        store.append("other", [events[3]], expected_seq=0)
    with pytest.raises(AppendRejected, match="conflict_event_id"):
        store.append("prod2", [{**_events(game_id="prod2")[0], "event_id": "prod-0"}],
                     expected_seq=0)
    assert store.counts()["events"] == 3
    store.append("prod", events[3:], expected_seq=3)
    assert store.verify().ok


_RACER = textwrap.dedent("""
    import sys, orjson, time
    from rummyguard.events.store import EventStore, ConcurrencyError
    db, who, go = sys.argv[1], sys.argv[2], float(sys.argv[3])
    base = orjson.loads(sys.argv[4])
    while time.time() < go:
        time.sleep(0.001)
    won = lost = 0
    while won < 10:
        with EventStore.open(db) as s:
            n = s.con.execute("SELECT coalesce(max(next_seq), 0) FROM store.games_chain "
                              "WHERE game_id = 'race'").fetchall()[0][0]
        event = {**base, "seq": n, "event_id": f"race-{who}-{won}", "actor": f"p-{who}"}
        try:
            with EventStore.open(db) as s:
                s.append("race", [event], expected_seq=n)
            won += 1
        except ConcurrencyError:
            lost += 1
    print(won, lost)
""")


def test_two_processes_appending_to_one_game(tmp_path: Path) -> None:
    """Each racer reads the head, then appends in a separate session: the loser of each
    race gets ConcurrencyError, retries, and the game ends with no gap or duplicate."""
    import time

    db = tmp_path / "race.duckdb"
    EventStore.open(db).close()
    base = {"game_id": "race", "type": "PlayerConnected", "v": 1,
            "ts": "2026-11-29T18:00:00.000Z", "payload": {"ip_hash": "i", "device_hash": "d",
                                                         "client": "web"}}
    go = time.time() + 1.5
    procs = [subprocess.Popen([sys.executable, "-c", _RACER, str(db), who, str(go),
                               orjson.dumps(base).decode()], stdout=subprocess.PIPE, text=True)
             for who in ("a", "b")]
    outs = [p.communicate(timeout=120)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert [int(o[0]) for o in outs] == [10, 10]
    with EventStore.open(db, read_only=True) as s:
        seqs = [r[0] for r in s.con.execute(
            "SELECT seq FROM store.events WHERE game_id = 'race' ORDER BY seq").fetchall()]
        assert seqs == list(range(20))
        assert s.verify().ok


def test_first_append_wins_between_two_processes(tmp_path: Path) -> None:
    db = tmp_path / "first.duckdb"
    EventStore.open(db).close()
    script = textwrap.dedent("""
        import sys, orjson
        from rummyguard.events.store import EventStore, ConcurrencyError
        ev = orjson.loads(sys.argv[2])
        try:
            with EventStore.open(sys.argv[1]) as s:
                s.append("g", [ev], expected_seq=0)
            print("won")
        except ConcurrencyError:
            print("lost")
    """)
    events = [{"event_id": f"g-{who}", "game_id": "g", "seq": 0, "type": "PlayerLeft", "v": 1,
               "ts": "2026-11-29T18:00:00.000Z", "actor": who, "payload": {}}
              for who in ("a", "b")]
    procs = [subprocess.Popen([sys.executable, "-c", script, str(db), orjson.dumps(e).decode()],
                              stdout=subprocess.PIPE, text=True) for e in events]
    results = sorted(p.communicate(timeout=60)[0].strip() for p in procs)
    assert results == ["lost", "won"]
    with EventStore.open(db, read_only=True) as s:
        assert s.con.execute("SELECT count(*) FROM store.events").fetchall()[0][0] == 1


def test_same_process_two_connections_one_wins(store: EventStore) -> None:
    ev = _events(game_id="twin")[0]
    other = EventStore(store.con.cursor(), store.path, read_only=False)
    other.con.execute("BEGIN")  # an open transaction on the other connection...
    other.con.execute("SELECT count(*) FROM store.games_chain").fetchall()
    store.append("twin", [ev], expected_seq=0)
    other.con.execute("ROLLBACK")
    with pytest.raises(ConcurrencyError):
        other.append("twin", [{**ev, "event_id": "twin-x"}], expected_seq=0)


def test_reads(store: EventStore) -> None:
    store.ingest_files([SAMPLE, CHAINED, GOLDEN])
    ids = store.game_ids()
    assert ids == sorted(ids) and len(ids) == 28
    assert store.game_ids(variant="classic") == ["example-classic", "example-classic-chained"]
    assert store.game_ids(variant="r500") == ["golden-GameCreated-v1"]
    games = list(store.iter_games(batch_size=5))
    assert [g[0]["game_id"] for g in games] == ids
    assert all([e["seq"] for e in g] == list(range(len(g))) for g in games)
    assert games[ids.index("example-classic")] == store.load_game("example-classic")
    assert store.load_game("nope") == []
    assert next(iter(store.iter_games(game_ids=["example-classic"])))[26]["type"] == "GameEnded"


def test_open_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no store"):
        EventStore.open(tmp_path / "missing.duckdb", read_only=True)
    junk = tmp_path / "junk.duckdb"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="cannot open"):
        EventStore.open(junk)


# --- tampering with the store after ingest ---------------------------------------------
def _tamper(tmp_path: Path, *sql: str, chained: bool = False) -> list[tuple[int | None, str]]:
    db = tmp_path / "t.duckdb"
    with EventStore.open(db) as s:
        s.ingest_files([CHAINED if chained else SAMPLE])
        game = "example-classic-chained" if chained else "example-classic"
        for statement in sql:
            s.con.execute(statement.replace("GAME", game))
        report = s.verify()
    result = CliRunner().invoke(app, ["verify-log", "--db", str(db), "--json"])
    assert result.exit_code == (0 if report.ok else 1)
    assert orjson.loads(result.stdout)["problems"] == [p.as_dict() for p in report.problems]
    return [(p.seq, p.kind) for p in report.problems]


@pytest.mark.parametrize("chained", [False, True])
def test_store_flip_a_payload_byte(tmp_path: Path, chained: bool) -> None:
    problems = _tamper(tmp_path, "UPDATE store.events SET raw = replace(raw, '\"card\":\"4C\"', "
                       "'\"card\":\"4D\"') WHERE game_id = 'GAME' AND seq = 7", chained=chained)
    # the hash no longer matches, and the payload column no longer says what raw says
    assert problems == [(7, "bad_hash"), (7, "envelope_mismatch")]


@pytest.mark.parametrize("column", [
    "payload = replace(payload, '\"card\":\"4C\"', '\"card\":\"4D\"')",
    "actor = 'someone'",
    "ts = ts + INTERVAL 1 SECOND",
])
def test_store_edit_of_a_derived_column_alone(tmp_path: Path, column: str) -> None:
    """What SQL shows (payload, actor, ts) is checked against raw: an edit of the column
    alone leaves every hash intact and is still caught, at its seq."""
    problems = _tamper(tmp_path, f"UPDATE store.events SET {column} WHERE game_id = 'GAME' AND seq = 7")
    assert problems == [(7, "envelope_mismatch")]


def test_store_swap_two_events(tmp_path: Path) -> None:
    problems = _tamper(
        tmp_path,
        "UPDATE store.events SET seq = -1 WHERE game_id = 'GAME' AND seq = 5",
        "UPDATE store.events SET seq = 5 WHERE game_id = 'GAME' AND seq = 6",
        "UPDATE store.events SET seq = 6 WHERE game_id = 'GAME' AND seq = -1",
    )
    assert (5, "reorder") in problems and (6, "reorder") in problems
    assert (5, "chain_break") in problems and (6, "chain_break") in problems
    assert min(s for s, _ in problems if s is not None) == 5


def test_store_drop_one(tmp_path: Path) -> None:
    problems = _tamper(tmp_path, "DELETE FROM store.events WHERE game_id = 'GAME' AND seq = 11")
    assert problems == [(11, "gap"), (12, "chain_break")]  # the gap at the missing seq


def test_store_truncate_the_end(tmp_path: Path) -> None:
    problems = _tamper(tmp_path, "DELETE FROM store.events WHERE game_id = 'GAME' AND seq >= 24")
    assert problems == [(24, "head_mismatch")]


def test_store_edit_a_hash(tmp_path: Path) -> None:
    problems = _tamper(tmp_path, "UPDATE store.events SET hash = repeat('a', 64) "
                       "WHERE game_id = 'GAME' AND seq = 3")
    assert problems == [(3, "bad_hash"), (4, "chain_break")]


def test_store_edit_a_producer_hash(tmp_path: Path) -> None:
    problems = _tamper(tmp_path, "UPDATE store.events SET raw = replace(raw, hash, "
                       "repeat('b', 64)) WHERE game_id = 'GAME' AND seq = 3", chained=True)
    assert problems == [(3, "envelope_mismatch")]


def test_verify_log_cli(tmp_path: Path) -> None:
    db = tmp_path / "v.duckdb"
    with EventStore.open(db) as s:
        s.ingest_files([SAMPLE, CHAINED])
        s.con.execute("DELETE FROM store.events WHERE game_id = 'example-classic' AND seq = 2")
    runner = CliRunner()
    out = runner.invoke(app, ["verify-log", "--db", str(db)])
    assert out.exit_code == 1
    assert "example-classic seq 2: gap: seq 2 missing (1 event(s)); the next stored event is seq 3" in out.stdout
    ok = runner.invoke(app, ["verify-log", "--db", str(db), "--game", "example-classic-chained"])
    assert ok.exit_code == 0 and "1 game(s), 27 event(s): intact" in ok.stdout
    missing = runner.invoke(app, ["verify-log", "--db", str(db), "--game", "nope"])
    assert missing.exit_code == 2 and "no game 'nope'" in missing.stderr
    nodb = runner.invoke(app, ["verify-log", "--db", str(tmp_path / "none.duckdb")])
    assert nodb.exit_code == 2 and "no store" in nodb.stderr


def test_a_store_named_after_a_schema_is_refused_with_one_line(tmp_path):
    from rummyguard.events.store import EventStore, StoreError

    for name in ("store.duckdb", "fraud.db", "STORE.duckdb"):
        with pytest.raises(StoreError, match="may not be called"):
            EventStore.open(tmp_path / name)


def test_a_data_file_is_not_opened_as_a_store(tmp_path: Path) -> None:
    """DuckDB would open it as a throw-away in-memory database: writes reported, lost."""
    log = tmp_path / "log.jsonl"
    log.write_bytes(SAMPLE.read_bytes())
    with pytest.raises(StoreError, match="not a DuckDB database file"):
        EventStore.open(log)
    assert log.read_bytes() == SAMPLE.read_bytes()
