"""Audit 45: the fraud scan's flags on a world with corners, as the nightly analyst meets them.

The issue: a risk analyst runs ``rummyguard scan`` nightly and reviews ``rummyguard
flags``; each flag has a subject (player, pair or ring), a score, a likely mechanism, its
top signals with their values vs the population, and evidence ``(game_id, seq)`` a
reviewer opens with ``rummyguard replay GAME --at SEQ``; the same input gives
byte-identical outputs; nothing is lost.

One seeded world (every variant, a quarter of the accounts in a planted mechanism) is
simulated, then given the corners a real log has: a game cut mid-way (its tail never
arrived), a game with a gap (its tail quarantined at ingest), a game with a tampered line
(a chain break), a game with one seated player. It is ingested once and scanned with
``--model none`` and with the built-in model (a low ``--threshold`` so that model flags
exist in a small world), and once more incrementally (half the games, scan, the rest,
scan). The tests read those stores; nothing here is re-simulated per test.
"""

from __future__ import annotations

import collections
import math
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import orjson
import polars as pl
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app

WORLD = ["--games", "300", "--seed", "4545", "--fraud-rate", "0.25", "--players", "30",
         "--workers", "1", "--no-progress"]
SCAN = ["--json", "--no-progress", "--top", "1000", "--workers", "1"]
FLAG_KEYS = {"flag_id", "subject_kind", "subject", "players", "score", "mechanism", "source",
             "signals", "evidence", "replay"}
SIGNAL_KEYS = {"signal", "value", "population_median", "percentile", "suspicious_when"}


def _run(*args: str) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args])


@dataclass(frozen=True)
class World:
    dir: Path
    base: Path  # ingested, never scanned
    none: Path  # scanned --model none
    model: Path  # scanned with the built-in model, --threshold 0.05
    inc: Path  # half ingested, scanned, the rest ingested, scanned (--model none)
    scan_none: dict[str, Any]
    scan_model: dict[str, Any]
    scan_inc: dict[str, Any]
    cut_game: str
    gap_game: str
    gap_seq: int
    tampered_game: str
    tampered_seq: int
    solo_game: str
    duo_game: str
    n_games: int


def _games(lines: list[bytes]) -> dict[str, list[dict[str, Any]]]:
    games: dict[str, list[dict[str, Any]]] = collections.OrderedDict()
    for raw in lines:
        e = orjson.loads(raw)
        games.setdefault(e["game_id"], []).append(e)
    return games


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    d = tmp_path_factory.mktemp("audit45")
    log, labels = d / "w.jsonl", d / "labels.json"
    res = _run("simulate", *WORLD, "--out", log, "--labels", labels)
    assert res.exit_code == 0, res.output
    games = _games(log.read_bytes().splitlines())
    classic = [g for g, es in games.items() if es[0]["payload"]["variant"] == "classic" and len(es) > 60]
    cut, gap, tampered = classic[3], classic[7], classic[11]
    out: list[dict[str, Any]] = []
    gap_seq = tampered_seq = -1
    for g, es in games.items():
        if g == cut:  # its tail never arrived: a game cut mid-way
            es = es[: len(es) // 2]
        elif g == gap:  # one line lost: the rest of the game is quarantined
            gap_seq = len(es) // 2
            es = es[:gap_seq] + es[gap_seq + 1:]
        elif g == tampered:  # a line edited after hashing: a chain break
            tampered_seq = len(es) // 2
            es = [dict(e) for e in es]
            es[tampered_seq] = {**es[tampered_seq], "ts": es[tampered_seq]["ts"][:-4] + "999Z"}
        out += es
    # a game with one seated player (unchained, as a producer may log it)
    first = games[next(iter(games))][0]
    solo = "solo-000001"
    one = first["payload"]["seats"][0]
    out.append({"event_id": f"{solo}-0", "game_id": solo, "seq": 0, "type": "GameCreated", "v": 1,
                "ts": first["ts"], "actor": "system",
                "payload": {**first["payload"], "seats": [one], "dealer": 0}})
    # a game where one player is left at once: the other walks out before any card
    duo = "duo-000001"
    two = first["payload"]["seats"][:2]
    out.append({"event_id": f"{duo}-0", "game_id": duo, "seq": 0, "type": "GameCreated", "v": 1,
                "ts": first["ts"], "actor": "system",
                "payload": {**first["payload"], "seats": two, "dealer": 0}})
    out.append({"event_id": f"{duo}-1", "game_id": duo, "seq": 1, "type": "PlayerLeft", "v": 1,
                "ts": first["ts"][:-4] + "999Z", "actor": two[1], "payload": {}})
    corner = d / "corner.jsonl"
    corner.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in out))
    base = d / "base.duckdb"
    res = _run("ingest", corner, "--db", base, "--no-progress")
    assert res.exit_code in (0, 1), res.output
    scans = {}
    for name, extra in (("none", ["--model", "none"]), ("model", ["--threshold", "0.05"])):
        shutil.copyfile(base, d / f"{name}.duckdb")
        res = _run("scan", "--db", d / f"{name}.duckdb", *SCAN, *extra)
        assert res.exit_code == 0, res.output
        scans[name] = orjson.loads(res.stdout)
    # the same lines, in two nights: half the games, a scan, the rest, a scan
    ids = list(dict.fromkeys(e["game_id"] for e in out))
    first_half = set(ids[: len(ids) // 2])
    a, b = d / "a.jsonl", d / "b.jsonl"
    a.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in out if e["game_id"] in first_half))
    b.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in out if e["game_id"] not in first_half))
    inc = d / "inc.duckdb"
    for part in (a, b):
        res = _run("ingest", part, "--db", inc, "--no-progress")
        assert res.exit_code in (0, 1), res.output
        res = _run("scan", "--db", inc, *SCAN, "--model", "none")
        assert res.exit_code == 0, res.output
    scans["inc"] = orjson.loads(res.stdout)
    return World(d, base, d / "none.duckdb", d / "model.duckdb", inc, scans["none"], scans["model"],
                 scans["inc"], cut, gap, gap_seq, tampered, tampered_seq, solo, duo, len(ids))


def _flags_doc(path: Path, *extra: str) -> tuple[bytes, dict[str, Any]]:
    res = _run("flags", "--db", path, "--json", "--top", "1000", *extra)
    assert res.exit_code == 0, res.output
    return res.stdout_bytes, orjson.loads(res.stdout)


def _flags(path: Path) -> list[dict[str, Any]]:
    return _flags_doc(path)[1]["flags"]


def _all(world: World) -> list[tuple[Path, list[dict[str, Any]]]]:
    return [(world.none, _flags(world.none)), (world.model, _flags(world.model))]


# -- the world holds what the tests below need -------------------------------------------------
def test_world_holds_flags_of_every_kind_and_the_corner_games(world: World) -> None:
    kinds = {f["subject_kind"] for _p, fl in _all(world) for f in fl}
    assert {"player", "pair"} <= kinds, kinds
    assert any(f["source"] == "model" for f in _flags(world.model))
    con = duckdb.connect(str(world.base), read_only=True)
    try:
        q = {r[0] for r in con.execute("SELECT DISTINCT game_id FROM quarantine").fetchall()}
    finally:
        con.close()
    assert {world.gap_game, world.tampered_game} <= q, q


# -- nothing lost: every stored game is scanned; what is not stored is in the quarantine --------
def test_every_stored_game_is_scanned_and_the_rest_is_quarantined(world: World) -> None:
    """docs/fraud.md: "It replays what the store holds: a game whose tail was quarantined
    is scanned as its stored prefix"; "Its fraud.player_games rows have won and net NULL"."""
    con = duckdb.connect(str(world.none), read_only=True)
    try:
        stored = {r[0] for r in con.execute("SELECT game_id FROM games").fetchall()}
        scanned = {r[0] for r in con.execute("SELECT DISTINCT game_id FROM fraud.player_games").fetchall()}
        quarantined = {r[0] for r in con.execute("SELECT DISTINCT game_id FROM quarantine").fetchall()}
        open_games = con.execute(
            "SELECT game_id, bool_and(won IS NULL AND net IS NULL) FROM fraud.player_games "
            "WHERE game_id IN (?, ?, ?) GROUP BY ALL ORDER BY ALL",
            [world.cut_game, world.gap_game, world.tampered_game]).fetchall()
        past = con.execute("SELECT count(*) FROM fraud.moves WHERE game_id = ? AND seq >= ?",
                           [world.gap_game, world.gap_seq]).fetchone()[0]
    finally:
        con.close()
    assert world.scan_none["games"] == len(stored)
    assert stored <= scanned, sorted(stored - scanned)[:5]
    assert stored | quarantined == stored | {world.solo_game} | quarantined
    assert world.solo_game in quarantined  # a one-seat game is not an event stream: kept, with a reason
    assert world.duo_game in stored
    assert [g for g, _ in open_games] == sorted([world.cut_game, world.gap_game, world.tampered_game])
    assert all(nulls for _, nulls in open_games), open_games
    assert past == 0  # nothing of the quarantined tail


# -- evidence: every move opens and is the subject's --------------------------------------------
def test_every_evidence_move_is_a_stored_move_of_a_flagged_player_and_opens_at_its_seq(world: World) -> None:
    """docs/fraud.md: "seq is the move the sentence names, by the player it names" and
    "every flag carries the moves to open with `rummyguard replay GAME --at SEQ`"; the
    documented exception is a chip flow ("p17 received 50 chips from p03": the move at
    which the replay made the transfer due), whose receiver is the subject's; an auto-play
    is the platform's event naming the player it played for."""
    for path, flags in _all(world):
        con = duckdb.connect(str(path), read_only=True)
        moves: set[tuple[str, int]] = set()
        try:
            for f in flags:
                for e in f["evidence"]:
                    row = con.execute("SELECT CASE WHEN type = 'AutoPlayed' THEN payload->>'player' "
                                      "ELSE actor END FROM events WHERE game_id = ? AND seq = ?",
                                      [e["game_id"], e["seq"]]).fetchone()
                    assert row is not None, (path.name, f["subject"], e)
                    who = e["what"].split()[0]
                    assert who in f["players"], (path.name, f["subject"], e)
                    if " received " not in e["what"]:
                        assert row[0] == who, (path.name, f["subject"], e, row)
                    assert not (e["game_id"] == world.gap_game and e["seq"] >= world.gap_seq)
                    moves.add((e["game_id"], e["seq"]))
        finally:
            con.close()
        assert moves
        for game, seq in sorted(moves):
            res = _run("replay", game, "--at", str(seq), "--db", path, "--json")
            assert res.exit_code == 0, (game, seq, res.output[-300:])
            assert orjson.loads(res.stdout)["at"] == seq


def test_ring_members_each_have_a_place_in_signals_or_evidence(world: World) -> None:
    """docs/fraud.md, Rings: a member none of the signals names "gets his shared_devices
    (else shared_ips) link as one more signal with its pair, and the connection from the
    shared device as evidence, so every member's place in the ring is explained"."""
    rings = [f for _p, fl in _all(world) for f in fl if f["subject_kind"] == "ring"]
    assert rings
    for f in rings:
        named = {p for s in f["signals"] for p in str(s.get("pair", "")).split("|") if p}
        assert set(f["players"]) <= named, (f["subject"], named)
        for s in f["signals"]:
            if "pair" in s:
                assert set(s["pair"].split("|")) <= set(f["players"])
        movers = {e["what"].split()[0] for e in f["evidence"]}
        assert movers <= set(f["players"]), (f["subject"], movers)
        assert len(f["evidence"]) <= 5


# -- the shape flags --json promises ---------------------------------------------------------------
def test_flags_json_fields_are_the_documented_columns(world: World) -> None:
    """README: flags has "flag_id, subject_kind, subject, players, score, mechanism, source,
    signals, evidence, replay"; docs/fraud.md: signals are "{signal, value,
    population_median, percentile, suspicious_when}" (a ring's, and a pair's through a
    common partner, also ``pair``); evidence "at most 5 {game_id, seq, what}"; ``replay``
    "the command that opens the first evidence move (empty when there is none)"."""
    for path, flags in _all(world):
        _raw, doc = _flags_doc(path)
        assert set(doc) == {"total", "flags"} and doc["total"] == len(flags)
        for f in flags:
            assert set(f) == FLAG_KEYS, set(f) ^ FLAG_KEYS
            for s in f["signals"]:
                assert set(s) - {"pair"} == SIGNAL_KEYS, s
            for e in f["evidence"]:
                assert set(e) == {"game_id", "seq", "what"} and isinstance(e["seq"], int)
            ev = f["evidence"]
            assert f["replay"] == (f"rummyguard replay {ev[0]['game_id']} --at {ev[0]['seq']}" if ev else "")
        top = world.scan_none if path == world.none else world.scan_model
        assert top["top_flags"] == flags


# -- value vs population ---------------------------------------------------------------------------
def _population(path: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    from rummyguard.fraud.features import pair_features, player_features

    con = duckdb.connect(str(path), read_only=True)
    try:
        return player_features(con), pair_features(con)
    finally:
        con.close()


def _directional(col: list[Any], x: float, high: bool) -> tuple[float, float]:
    v = np.array([np.nan if a is None else float(a) for a in col])
    v = v[np.isfinite(v)]
    p = ((v < x).sum() + 0.5 * (v == x).sum()) / len(v)  # (rank - 0.5) / n, ties counted half
    return (p if high else 1.0 - p), float(np.median(v))


def test_every_signal_is_its_value_against_the_scored_population(world: World) -> None:
    """docs/fraud.md: each signal is "{signal, value, population_median, percentile,
    suspicious_when}"; "percentile is taken in the suspicious_when direction ... the
    mid-rank (rank − 0.5) / n, ties counted half"; for an evidence count "the plain
    percentile"; a ring's signal is "the ring's strongest internal pair (pair) with its
    value against the pair population". Recomputed here from the features of the store."""
    n = 0
    for path, flags in _all(world):
        players, pairs = _population(path)
        for f in flags:
            for s in f["signals"]:
                if s["signal"] == "internal_links":
                    continue
                if "pair" in s or f["subject_kind"] == "pair":
                    a, b = s["pair"].split("|") if "pair" in s else f["players"]
                    df, row = pairs, pairs.filter((pl.col("p1") == a) & (pl.col("p2") == b))
                else:
                    df, row = players, players.filter(pl.col("player") == f["players"][0])
                assert row.height == 1, (f["subject"], s)
                x = float(row.get_column(s["signal"])[0])
                pct, med = _directional(df.get_column(s["signal"]).to_list(), x,
                                        s["suspicious_when"] != "low")
                assert math.isclose(s["value"], round(x, 4), abs_tol=1e-4), (f["subject"], s, x)
                assert math.isclose(s["population_median"], round(med, 4), abs_tol=1e-4), (f["subject"], s, med)
                assert math.isclose(s["percentile"], round(pct, 4), abs_tol=1e-4), (f["subject"], s, pct)
                n += 1
    assert n >= 10


# -- the same input, the same bytes -----------------------------------------------------------------
def test_a_scan_after_more_games_equals_one_scan_of_everything(world: World) -> None:
    """docs/fraud.md: "The scan replaces every fraud.* table and the views on each run";
    the issue: "the same input gives byte-identical outputs". A store filled over two
    nights and scanned each night holds the same games as one filled at once: its flags
    are the same bytes."""
    assert _flags_doc(world.inc)[0] == _flags_doc(world.none)[0]
    strip = lambda d: {k: v for k, v in d.items() if k != "seconds"}  # noqa: E731
    assert strip(world.scan_inc) == strip(world.scan_none)


def test_scanning_the_same_store_again_gives_byte_identical_flags(world: World, tmp_path: Path) -> None:
    """docs/fraud.md: "Scanning the same store again gives the same flags"."""
    for path, scanned in ((world.none, world.scan_none), (world.model, world.scan_model)):
        before = _flags_doc(path)[0]
        again = tmp_path / path.name
        shutil.copyfile(path, again)
        extra = ["--model", "none"] if path == world.none else ["--threshold", "0.05"]
        res = _run("scan", "--db", again, *SCAN, *extra)
        assert res.exit_code == 0, res.output
        doc = orjson.loads(res.stdout)
        assert {k: v for k, v in doc.items() if k != "seconds"} == \
            {k: v for k, v in scanned.items() if k != "seconds"}
        assert _flags_doc(again)[0] == before


# -- --model FILE -----------------------------------------------------------------------------------
def _saved_builtin(path: Path, **change: Any) -> Path:
    from rummyguard.fraud.builtin import builtin_model

    model = builtin_model()
    for k, v in change.items():
        setattr(model, k, v)
    model.save(path)
    return path


def test_a_saved_model_file_scans_like_the_model_it_holds(world: World, tmp_path: Path) -> None:
    """docs/fraud.md: scan `--model` takes "a file"; `model` in scan --json is "the model
    file". The built-in model saved to a file gives the built-in scan's flags, byte for byte."""
    f = _saved_builtin(tmp_path / "m.joblib")
    db = tmp_path / "s.duckdb"
    shutil.copyfile(world.base, db)
    res = _run("scan", "--db", db, *SCAN, "--threshold", "0.05", "--model", f)
    assert res.exit_code == 0, res.output
    doc = orjson.loads(res.stdout)
    assert doc["model"] == str(f)
    assert doc["top_flags"] == world.scan_model["top_flags"]
    assert _flags_doc(db)[0] == _flags_doc(world.model)[0]


def test_a_model_of_another_scikit_learn_is_refused_in_one_line(world: World, tmp_path: Path) -> None:
    """docs/fraud.md: "scan --model refuses a file of another format version, other
    features, another features version ... or another scikit-learn version, with one line
    saying which"."""
    db = tmp_path / "s.duckdb"
    shutil.copyfile(world.base, db)
    for change, word in (({"sklearn_version": "0.0.1"}, "scikit-learn"),
                         ({"features_version": 1}, "features version"),
                         ({"version": 2}, "format")):
        f = _saved_builtin(tmp_path / "bad.joblib", **change)
        res = _run("scan", "--db", db, "--model", f, "--no-progress", "--workers", "1")
        assert res.exit_code == 2, (change, res.output)
        assert len(res.output.strip().splitlines()) == 1 and word in res.output, res.output
    con = duckdb.connect(str(db), read_only=True)
    try:  # refused before anything was written
        assert not con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'fraud'").fetchone()[0]
    finally:
        con.close()


def test_a_saved_model_is_the_format_version_the_docs_name(tmp_path: Path) -> None:
    """docs/fraud.md, Models: "File: joblib pickle of FraudModel (version — now N: ...). A
    file of another format (1 to N-1) is refused: retrain it." A model `eval --save-model`
    writes today is format N (the docs said 3 after the code moved to 4: audit 45), and a
    file of format N-1 is refused."""
    import re

    import joblib

    from rummyguard.fraud.models import MODEL_VERSION, ModelError, load_model

    docs = (Path(__file__).parents[1] / "docs" / "fraud.md").read_text(encoding="utf-8")
    named = re.search(r"`FraudModel` \(`version` — now (\d+):", docs)
    assert named and int(named.group(1)) == MODEL_VERSION
    f = _saved_builtin(tmp_path / "m.joblib")
    model = joblib.load(f)
    assert model.version == MODEL_VERSION
    model.version = MODEL_VERSION - 1
    old = tmp_path / "old.joblib"
    joblib.dump(model, old)
    with pytest.raises(ModelError):
        load_model(old)
