"""Audit 18: the fraud scan on unseen, valid-but-unusual input (data our simulator never
writes, but a real platform or an independent checker could).

A risk analyst runs ``rummyguard scan`` nightly on whatever the platform logged. The scan
must never crash or hang, never silently drop a game or a player, and must explain every
flag with evidence moves a reviewer opens with the flag's own ``replay`` command
(docs/fraud.md, "Reading a flag"). The audit ran ingest + verify + scan + flags over ~40
small stores (scratch in /tmp/s8_scan); what held is guarded here, and each defect
below is pinned by a test that failed before its fix:

- a game id that starts with ``-`` or holds a space: the flag's ``replay`` command does
  not open the evidence (typer reads ``-g1`` as an option, ``g 1`` as two arguments);
- blank device / IP hashes (``""``: the platform had none): counted as one shared
  identifier, so every pair "shares a device" and every player joins one ring;
- the ring search hangs for ever on a shared-device graph (networkx Louvain oscillates
  on float round-off with the 0.9 shared-device weight: networkx issues #6751, #8739);
- an ``unusual`` flag whose top signal is ``disconnect_rate`` gets no evidence although
  the player's ``PlayerDisconnected`` events are in ``fraud.sessions``;
- ``--model ''`` is reported as "``.`` is not a rummyguard model: IsADirectoryError";
- a platform whose clock ticks in whole seconds (every ``ts`` at ``.000``), or that stamps
  a game's events alike: the built-in model reads the clock as the players' timing and
  flags an honest world (6 "unusual" players at 1 s, 21 "bots" at one stamp per game,
  0 at ms resolution).

Stores are small (a few driver games each) so the file stays fast; only the clock test
needs the built-in model (cached after its first fit; one module-scoped world).
"""

from __future__ import annotations

import shlex
import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import duckdb
import orjson
import polars as pl
import pytest
from factkit import facts_db
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.timestamps import format_ts, ts_millis
from rummyguard.events.upcast import upcast
from rummyguard.fraud.flags import _flag, unusual_evidence
from rummyguard.fraud.rings import build_graph, find_rings
from rummyguard.sim.driver import play

Events = list[dict[str, Any]]
T0 = 1_795_000_000_000
SCAN = ("--model", "none", "--json", "--no-progress", "--workers", "0", "--top", "1000")


def _run(*args: str) -> Any:
    """The CLI in process (stdout and stderr kept apart, as a shell sees them)."""
    return CliRunner().invoke(app, list(args))


def _write(path: Path, games: list[Events]) -> Path:
    with path.open("wb") as fh:
        for events in games:
            for e in events:
                fh.write(orjson.dumps(e) + b"\n")
    return path


def _game(variant: str, seats: list[str], i: int, game_id: str | None = None,
          connections: dict[str, tuple[str, str, str]] | None = None) -> Events:
    """One driver game (random policy), an hour after the previous one."""
    return play(variant, seats, seed=i, game_id=game_id or f"g{i}", start_ms=T0 + i * 3_600_000,
                table_id=f"t{i % 3}", connections=connections)


def _store(tmp: Path, name: str, games: list[Events]) -> Path:
    db = tmp / f"{name}.duckdb"
    res = _run("ingest", "--db", str(db), "--no-progress", str(_write(tmp / f"{name}.jsonl", games)))
    assert res.exit_code == 0, res.output
    return db


def _scan(db: Path) -> dict[str, Any]:
    res = _run("scan", "--db", str(db), *SCAN)
    assert res.exit_code == 0, res.output
    return orjson.loads(res.stdout)


def _flags(db: Path) -> list[dict[str, Any]]:
    res = _run("flags", "--db", str(db), "--json", "--top", "1000")
    assert res.exit_code == 0, res.output
    return orjson.loads(res.stdout)["flags"]


def _fact_bytes(db: Path) -> bytes:
    """Every fraud table, rows in stored order, as bytes (byte-identical runs)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        out = []
        for t in ("moves", "discards", "pickups", "player_games", "chip_flows", "sessions",
                  "round_ends", "starts", "flags"):
            out.append(repr(con.execute(f"SELECT * FROM fraud.{t}").fetchall()).encode())
        return b"\n".join(out)
    finally:
        con.close()


WEIRD_IDS = ["1", "007", "é玩家", 'a"b', "a,b", "x'); DROP TABLE fraud.flags; --", "NULL",
             "🃏", "%", "_", "O'Brien", "[model]", "x" * 64]


@pytest.fixture(scope="module")
def weird_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Michigan and classic games among players whose ids look like numbers, hold
    unicode, quotes, commas, SQL-ish text or markup; two accounts share a device."""
    tmp = tmp_path_factory.mktemp("audit18_ids")
    games = []
    for i in range(9):
        seats = [WEIRD_IDS[(i + k) % len(WEIRD_IDS)] for k in range(3)]
        conn = {p: (f"ip-{p}", f"dev-{p}", "web") for p in seats}
        for p in seats:
            if p in ('a"b', "x'); DROP TABLE fraud.flags; --"):
                conn[p] = ("ip-shared", "dev-shared", "web")
        games.append(_game("michigan" if i % 2 else "classic", seats, i, connections=conn))
    return _store(tmp, "ids", games)


# -- what held: guards -----------------------------------------------------------------------
def test_unusual_player_ids_lose_no_player_and_flags_name_them(weird_world: Path) -> None:
    """Every seated account reaches fraud.player_games under its exact id, the scan is
    byte-identical when run twice, and ``flags --player`` finds an SQL-ish id."""
    doc = _scan(weird_world)
    first = _fact_bytes(weird_world)
    assert _scan(weird_world)["flags"] == doc["flags"]
    assert _fact_bytes(weird_world) == first
    con = duckdb.connect(str(weird_world), read_only=True)
    try:
        seated = {p for (s,) in con.execute(
            "SELECT payload->'seats' FROM store.events WHERE type = 'GameCreated'").fetchall()
            for p in orjson.loads(s)}
        stored = {p for (p,) in con.execute("SELECT DISTINCT player FROM fraud.player_games").fetchall()}
        games = con.execute("SELECT count(DISTINCT game_id) FROM fraud.player_games").fetchall()[0][0]
    finally:
        con.close()
    assert stored == seated and games == 9 == doc["games"]
    every = _flags(weird_world)
    assert len(every) == doc["flags"]
    for who in ("x'); DROP TABLE fraud.flags; --", 'a"b', "é玩家", "1"):
        res = _run("flags", "--db", str(weird_world), "--json", "--player", who, "--top", "1000")
        assert res.exit_code == 0, res.output
        got = orjson.loads(res.stdout)["flags"]
        assert [f["flag_id"] for f in got] == [f["flag_id"] for f in every if who in f["players"]]


def test_v1_events_and_unchained_logs_give_the_same_facts_and_flags(tmp_path: Path) -> None:
    """Drew/Discarded v1 (the older export) mixed with v2, and a log without hash fields,
    scan exactly like the v2 producer-chained original (upcasting is exact)."""
    legacy_rank = {"T": "10"}
    suits = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}

    def legacy(card: str) -> dict[str, str]:
        return {"rank": "joker"} if card == "JK" else {"rank": legacy_rank.get(card[0], card[0]),
                                                       "suit": suits[card[1]]}

    seats = ["p1", "p2", "p3"]
    games = [_game("classic", seats, i) for i in range(3)]
    old: list[Events] = []
    for events in games:
        out = []
        for n, e in enumerate(events):
            e = {k: v for k, v in e.items() if k not in ("prev_hash", "hash")}
            if n % 2 and e["type"] == "Drew" and len(e["payload"]["cards"]) == 1:
                p = e["payload"]
                e = {**e, "v": 1, "payload": {"from": "deck" if p["source"] == "stock" else "pile",
                                              "card": legacy(p["cards"][0])}}
                assert upcast(e)["payload"] == p
            elif n % 2 and e["type"] == "Discarded":
                e = {**e, "v": 1, "payload": {"card": legacy(e["payload"]["card"])}}
            out.append(e)
        old.append(out)
    a, b = _store(tmp_path, "v2", games), _store(tmp_path, "v1", old)
    assert _scan(a)["fact_rows"] == _scan(b)["fact_rows"]
    assert _fact_bytes(a) == _fact_bytes(b)


def test_games_cut_short_or_without_moves_are_scanned_not_dropped(tmp_path: Path) -> None:
    """A game of GameCreated alone, one cut after its deal, one cut mid-play: all three
    are in fraud.player_games with ``won``/``net`` NULL (no result yet)."""
    seats = ["p1", "p2", "p3"]
    full = [_game("classic", seats, i, game_id=f"g{i}") for i in range(4)]
    games = [full[0][:1], full[1][:2], full[2][: len(full[2]) // 2], full[3]]
    db = _store(tmp_path, "cut", games)
    assert _scan(db)["games"] == 4
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT game_id, count(*), bool_and(won IS NULL), bool_and(net IS NULL) "
                           "FROM fraud.player_games GROUP BY 1 ORDER BY 1").fetchall()
    finally:
        con.close()
    assert [r[0] for r in rows] == ["g0", "g1", "g2", "g3"]
    assert all(r[1] == 3 for r in rows)
    assert [r[2] and r[3] for r in rows] == [True, True, True, False]


def test_flags_before_any_scan_is_one_line(tmp_path: Path) -> None:
    db = _store(tmp_path, "noscan", [_game("michigan", ["p1", "p2", "p3"], 0)])
    res = _run("flags", "--db", str(db))
    assert res.exit_code == 2
    assert "run `rummyguard scan` first" in res.output and "Traceback" not in res.output


# -- defects -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def odd_game_ids(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Games whose ids start with ``-`` or hold a space (EVENTS.md: any 1-64 chars)."""
    tmp = tmp_path_factory.mktemp("audit18_gids")
    seats = ["p1", "p2", "p3"]
    return _store(tmp, "gids", [_game("michigan", seats, 0, game_id="-g1"),
                                _game("michigan", seats, 1, game_id="g 1")])


def _open_flag_replay(db: Path, game_id: str, seq: int) -> Any:
    """Run a flag's ``replay`` command as a shell would split it, against ``db``."""
    flag = _flag("player", ["p1"], 0.9, "bot", "model", [], duckdb.connect(),
                 evidence=[{"game_id": game_id, "seq": seq, "what": "p1 made a move"}])
    argv = shlex.split(flag["replay"])
    assert argv[:2] == ["rummyguard", "replay"], flag["replay"]
    return _run("replay", "--db", str(db), *argv[2:])


@pytest.mark.parametrize("game_id", ["-g1", "g 1"])
def test_replay_command_of_a_flag_opens_any_game_id(odd_game_ids: Path, game_id: str) -> None:
    res = _open_flag_replay(odd_game_ids, game_id, 5)
    assert res.exit_code == 0, res.output
    assert game_id in res.output


def test_replay_command_opens_an_ordinary_game_id(odd_game_ids: Path) -> None:
    """Guard for the test above: the helper itself works on a plain id."""
    db = _store(odd_game_ids.parent, "plain", [_game("michigan", ["p1", "p2", "p3"], 2)])
    res = _open_flag_replay(db, "g2", 5)
    assert res.exit_code == 0, res.output


@pytest.fixture(scope="module")
def blank_sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Eight Michigan games among five accounts whose platform logs blank device and IP
    hashes (it had none): valid per EVENTS.md (strings)."""
    tmp = tmp_path_factory.mktemp("audit18_blank")
    names = ["a", "b", "c", "d", "e"]
    games = []
    for i in range(8):
        seats = [names[(i + k) % 5] for k in range(3)]
        games.append(_game("michigan", seats, i, connections={p: ("", "", "web") for p in seats}))
    db = _store(tmp, "blank", games)
    _scan(db)
    return db


def test_blank_device_hashes_are_not_a_shared_device(blank_sessions: Path) -> None:
    con = duckdb.connect(str(blank_sessions), read_only=True)
    try:
        from rummyguard.fraud.features import pair_features

        pairs = pair_features(con)
        rings = con.execute("SELECT subject FROM fraud.flags WHERE subject_kind = 'ring'").fetchall()
    finally:
        con.close()
    assert pairs.height > 0
    assert pairs.filter((pl.col("shared_devices") > 0) | (pl.col("shared_ips") > 0)).height == 0
    assert rings == []


def test_blank_device_hashes_are_stored_as_logged(blank_sessions: Path) -> None:
    """Guard: the sessions are there (24 connects), so the test above is about their
    meaning, not a lost row."""
    con = duckdb.connect(str(blank_sessions), read_only=True)
    try:
        n = con.execute("SELECT count(*) FROM fraud.sessions WHERE event = 'connect'").fetchall()[0][0]
    finally:
        con.close()
    assert n == 24


#: the shared-device graph of a store (seven accounts, each pair below logged from one
#: device in some game): Louvain never returns on it with float weights
SHARED_PAIRS = [("u0", "u1"), ("u0", "u2"), ("u0", "u3"), ("u1", "u2"), ("u1", "u3"), ("u1", "u4"),
                ("u2", "u3"), ("u2", "u4"), ("u2", "u5"), ("u3", "u4"), ("u3", "u5"), ("u3", "u6"),
                ("u4", "u5"), ("u4", "u6"), ("u5", "u6")]


class _Hung(Exception):
    pass


def _alarm(_sig: int, _frame: FrameType | None) -> None:
    raise _Hung("the ring search did not return within 3 s")


@pytest.fixture
def deadline() -> Iterator[None]:
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(3)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_ring_search_returns_on_a_shared_device_graph(deadline: None) -> None:
    link = pl.DataFrame({"p1": ["u0"], "p2": ["u1"], "link": [0.0]})  # no model link above the cut
    shared = pl.DataFrame({"p1": [a for a, _ in SHARED_PAIRS], "p2": [b for _, b in SHARED_PAIRS],
                           "shared_devices": [1] * len(SHARED_PAIRS)})
    rings = find_rings(build_graph(link, "link", 0.5, shared))
    members = sorted(m for r in rings for m in r.members)
    assert members == [f"u{i}" for i in range(7)]


def test_ring_search_on_exact_weights_returns(deadline: None) -> None:
    """Guard for the test above: the same graph with weight 1.0 returns at once."""
    link = pl.DataFrame({"p1": [a for a, _ in SHARED_PAIRS], "p2": [b for _, b in SHARED_PAIRS],
                         "link": [1.0] * len(SHARED_PAIRS)})
    rings = find_rings(build_graph(link, "link", 0.5))
    assert sorted(m for r in rings for m in r.members) == [f"u{i}" for i in range(7)]


def _disconnect_facts() -> duckdb.DuckDBPyConnection:
    """A Michigan player who dropped his connection in three games (no auto-plays, no
    Fresh: Michigan has no clock)."""
    sessions = []
    for g in range(3):
        sessions.append({"game_id": f"m{g}", "seq": 4, "player": "p1", "event": "connect",
                         "ts_ms": T0, "ip_hash": "ip1", "device_hash": "d1", "client": "web"})
        sessions.append({"game_id": f"m{g}", "seq": 20 + g, "player": "p1", "event": "disconnect",
                         "ts_ms": T0 + 60_000})
    moves = [{"game_id": f"m{g}", "seq": 10 + k, "player": "p1", "seat": 0, "variant": "michigan",
              "type": "CardPlayed", "ts_ms": T0, "think_ms": 2000, "turn": k + 1, "hand_size": 13,
              "dist": -1, "difficulty": -1, "auto": False} for g in range(3) for k in range(3)]
    return facts_db(sessions=sessions, moves=moves)


def test_disconnect_rate_flag_shows_the_disconnects() -> None:
    con = _disconnect_facts()
    signals = [{"signal": "disconnect_rate", "value": 1.0, "population_median": 0.2,
                "percentile": 0.95, "suspicious_when": "high"},
               {"signal": "n_games", "value": 3, "population_median": 3, "percentile": 0.5,
                "suspicious_when": "evidence count"}]
    ev = unusual_evidence(con, ["p1"], signals)
    assert [(e["game_id"], e["seq"]) for e in ev] == [("m0", 20), ("m1", 21), ("m2", 22)]
    assert all("disconnect" in e["what"] for e in ev)


def test_empty_model_value_is_named_in_the_error(odd_game_ids: Path) -> None:
    res = _run("scan", "--db", str(odd_game_ids), "--model", "", "--no-progress")
    assert res.exit_code == 2
    assert "IsADirectoryError" not in res.output and "--model" in res.output


@pytest.mark.parametrize("content", [b"", b"garbage\n"])
def test_unusable_model_file_is_one_line(odd_game_ids: Path, tmp_path: Path, content: bytes) -> None:
    """Guard: a corrupt or empty model file is refused with one line, exit 2."""
    bad = tmp_path / "m.joblib"
    bad.write_bytes(content)
    res = _run("scan", "--db", str(odd_game_ids), "--model", str(bad), "--no-progress")
    assert res.exit_code == 2
    assert "is not a rummyguard model" in res.output and "Traceback" not in res.output


@pytest.fixture(scope="module")
def honest_world(tmp_path_factory: pytest.TempPathFactory) -> list[Events]:
    """A small honest simulated world (no planted fraud), as games."""
    tmp = tmp_path_factory.mktemp("audit18_clock")
    out = tmp / "w.jsonl"
    res = _run("simulate", "--games", "120", "--seed", "7", "--fraud-rate", "0", "--out", str(out),
               "--workers", "1", "--no-progress")
    assert res.exit_code == 0, res.output
    games: dict[str, Events] = {}
    for line in out.read_bytes().splitlines():
        e = orjson.loads(line)
        games.setdefault(e["game_id"], []).append(e)
    return list(games.values())


def _retimed(games: list[Events], clock: str) -> list[Events]:
    """The same games on a coarser clock, unchained (the producer's hashes covered the
    original times; a producer may leave both hash fields out)."""
    out = []
    for events in games:
        first = ts_millis(events[0]["ts"])
        rows = []
        for e in events:
            t = ts_millis(e["ts"])
            t = t - t % 1000 if clock == "seconds" else first
            rows.append({**{k: v for k, v in e.items() if k not in ("prev_hash", "hash")},
                         "ts": format_ts(t)})
        out.append(rows)
    return out


def _builtin_flags(tmp: Path, name: str, games: list[Events]) -> list[dict[str, Any]]:
    db = _store(tmp, name, games)
    res = _run("scan", "--db", str(db), "--json", "--no-progress", "--workers", "0", "--top", "1000")
    assert res.exit_code == 0, res.output
    return orjson.loads(res.stdout)["top_flags"]


def test_honest_world_at_ms_resolution_has_no_flag(honest_world: list[Events], tmp_path: Path) -> None:
    """Guard for the test below: the built-in model flags nobody in this honest world."""
    assert _builtin_flags(tmp_path, "ms", honest_world) == []


@pytest.mark.parametrize("clock", ["seconds", "one_stamp"])
def test_coarse_clock_does_not_flag_an_honest_world(honest_world: list[Events], tmp_path: Path,
                                                    clock: str) -> None:
    flags = _builtin_flags(tmp_path, clock, _retimed(honest_world, clock))
    assert [(f["subject"], f["mechanism"], f["source"]) for f in flags] == []
