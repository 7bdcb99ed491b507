"""Audit 4: the risk analyst's and data analyst's flow on fraud results.

Issue 8 names what a flag must hold: subject (player, pair or ring), score, likely
mechanism, the top signals with their values vs population, and evidence
``(game_id, seq)`` that ``rummyguard replay GAME --at SEQ`` opens on the move the
signal names. These tests hold each part to the text on small, hand-built fact tables
(so the expected flag is known) and on a small simulated store (the CLI, the views and
docs/sql.md's column types).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import duckdb
import orjson
import polars as pl
import pytest
from factkit import facts_db
from test_fraud import make_world
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.store import EventStore
from rummyguard.fraud.features import PAIR_FEATURES, PLAYER_FEATURES
from rummyguard.fraud.flags import MECH_SIGNALS, UNUSUAL, build_flags, evidence_for
from rummyguard.fraud.rings import Ring

DOCS = Path(__file__).resolve().parents[1] / "docs"




def _players(n: int = 40, **target: float) -> pl.DataFrame:
    """n ordinary players (every feature a small spread around its median) and ``p00``
    whose features are the median except ``target``."""
    cols: dict[str, list[Any]] = {"player": [f"p{i:02d}" for i in range(n)]}
    for j, f in enumerate(PLAYER_FEATURES):
        vals = [float((i * (j + 3)) % 7) for i in range(n)]
        vals[0] = sorted(vals[1:])[(n - 1) // 2]
        cols[f] = vals
    for f, v in target.items():
        cols[f][0] = v
    return pl.DataFrame(cols)


def _empty_pairs() -> tuple[pl.DataFrame, pl.DataFrame]:
    pairs = pl.DataFrame(schema={"p1": pl.Utf8, "p2": pl.Utf8,
                                 **{f: pl.Float64 for f in PAIR_FEATURES}})
    return pairs, pl.DataFrame(schema={"p1": pl.Utf8, "p2": pl.Utf8, "anomaly": pl.Float64})


def _anomaly_scores(players: pl.DataFrame, top: str = "p00") -> pl.DataFrame:
    ids = players.get_column("player").to_list()
    return pl.DataFrame({"player": ids, "anomaly": [1.0 if p == top else 0.5 for p in ids]})


# -- explanations ------------------------------------------------------------------------------
def test_anomaly_flag_no_signature_explains_is_unusual_with_its_real_signals() -> None:
    """A player who is unusual only in his results (won every game) was flagged as a
    player mechanism (bot / timeout_abuse / hidden_card) beside signals at the population
    median. Now: mechanism ``unusual``, the extreme signal first, the count last."""
    players = _players(win_rate=9.0, n_games=2.0)
    pairs, qscore = _empty_pairs()
    con = facts_db(chip_flows=[{"game_id": "g1", "seq": 40, "src": "p05", "dst": "p00",
                              "amount": 50.0, "kind": "pot"}])
    flags = build_flags(con, players, pairs, _anomaly_scores(players), qscore, [],
                        supervised=False)
    (row,) = flags.iter_rows(named=True)
    assert row["subject"] == "p00" and row["source"] == "anomaly"
    assert row["mechanism"] == UNUSUAL
    sig = orjson.loads(row["signals"])
    assert sig[0]["signal"] == "win_rate" and sig[0]["value"] == 9.0
    assert sig[0]["suspicious_when"] == "high" and sig[0]["percentile"] == 1 - 0.5 / 40
    assert sig[0]["population_median"] == 3.0
    assert sig[-1]["signal"] == "n_games" and sig[-1]["suspicious_when"] == "evidence count"
    ev = orjson.loads(row["evidence"])
    assert ev == [{"game_id": "g1", "seq": 40, "what": "p00 received 50 chips from p05 (through the pot)"}]
    assert row["replay"] == "rummyguard replay g1 --at 40"


def test_anomaly_flag_keeps_a_mechanism_whose_signature_is_extreme() -> None:
    players = _players(think_sd=-5.0, think_sd_draw=-5.0)
    pairs, qscore = _empty_pairs()
    flags = build_flags(facts_db(), players, pairs, _anomaly_scores(players), qscore, [],
                        supervised=False)
    (row,) = flags.iter_rows(named=True)
    assert row["mechanism"] == "bot"
    sig = orjson.loads(row["signals"])
    assert [s["signal"] for s in sig[:2]] == ["think_sd", "think_sd_draw"]
    # the bottom of 40 is as extreme as the top would be: 1 - 0.5/40 both ways
    assert all(s["suspicious_when"] == "low" and s["percentile"] == 1 - 0.5 / 40 for s in sig[:2])


def test_fresh_pressed_on_a_good_hand_is_the_suspicious_direction() -> None:
    """``fresh_dist_rel`` (hand at a Fresh press minus the average deal) is high for an
    honest press on a poor hand; the abuser presses on a hand that did not need it."""
    assert ("fresh_dist_rel", -1) in MECH_SIGNALS["timeout_abuse"]


def test_ring_flag_names_its_mechanism_and_signals_against_the_pair_population() -> None:
    members = ("a", "b", "c")
    others = [f"x{i:02d}" for i in range(12)]
    keys = [("a", "b"), ("a", "c"), ("b", "c"), *zip(others[::2], others[1::2], strict=True)]
    cols: dict[str, list[Any]] = {"p1": [k[0] for k in keys], "p2": [k[1] for k in keys]}
    for j, f in enumerate(PAIR_FEATURES):
        cols[f] = [float((i * (j + 2)) % 5) for i in range(len(keys))]
    for f in ("collude_z", "take_z", "tie_z", "tie_t"):
        cols[f][:3] = [20.0, 18.0, 16.0]
    pairs = pl.DataFrame(cols)
    qscore = pairs.select(["p1", "p2"]).with_columns(pl.lit(0.5).alias("anomaly"))
    players = _players()
    con = facts_db(discards=[{"game_id": "g7", "seq": 12, "player": "a", "target": "b", "offset": 1,
                            "card": 24, "gain": 2, "alt_gain": 0.2, "keep_gain": 0, "tie_alt": 0.25,
                            "tie_n": 4, "pub_gain": 0, "pub_tie_alt": 0.0, "pub_flat": True,
                            "taken": True}])
    flags = build_flags(con, players, pairs, players.select("player").with_columns(
        pl.lit(0.5).alias("anomaly")), qscore, [Ring(members, 0.95, 3)], supervised=False)
    (row,) = flags.iter_rows(named=True)
    assert row["subject_kind"] == "ring" and row["subject"] == "a|b|c"
    assert row["mechanism"] == "card_feeding"  # was "ring": no mechanism at all
    sig = orjson.loads(row["signals"])
    assert sig[-1] == {"signal": "internal_links", "value": 3, "population_median": None,
                       "percentile": None, "suspicious_when": "evidence count"}
    assert sig[0]["signal"] == "collude_z" and sig[0]["value"] == 20.0 and sig[0]["pair"] == "a|b"
    assert sig[0]["percentile"] == round(1 - 0.5 / 9, 4) and sig[0]["population_median"] is not None
    ev = orjson.loads(row["evidence"])
    assert [(e["game_id"], e["seq"]) for e in ev] == [("g7", 12)]
    assert ev[0]["what"].startswith("a discarded 8C: meld gain 2 to b's hidden hand")


def test_a_ring_member_linked_by_a_shared_device_only_gets_its_signal_and_evidence() -> None:
    """Session 15 (persona test): a ring of two colluders and a third account joined only
    by a device it shares with one of them listed signals and evidence of the colluding
    pair alone; nothing said why the third account was in the ring. Its shared device is
    now a signal naming the pair, with the connection as evidence."""
    members = ("a", "b", "c")
    others = [f"x{i:02d}" for i in range(12)]
    keys = [("a", "b"), ("b", "c"), *zip(others[::2], others[1::2], strict=True)]
    cols: dict[str, list[Any]] = {"p1": [k[0] for k in keys], "p2": [k[1] for k in keys]}
    for f in PAIR_FEATURES:
        cols[f] = [0.0] * len(keys)
    for f in ("collude_z", "take_z", "tie_z", "tie_t"):
        cols[f][0] = 20.0  # a|b: the colluding pair
    cols["shared_devices"][1] = 1.0  # b|c: a household tablet, nothing else
    pairs = pl.DataFrame(cols)
    qscore = pairs.select(["p1", "p2"]).with_columns(pl.lit(0.5).alias("anomaly"))
    players = _players()
    session = {"event": "connect", "ts_ms": 0, "ip_hash": None, "client": "web"}
    con = facts_db(sessions=[{**session, "game_id": "g1", "seq": 1, "player": "b", "device_hash": "dev9"},
                             {**session, "game_id": "g2", "seq": 2, "player": "c", "device_hash": "dev9"}])
    flags = build_flags(con, players, pairs, players.select("player").with_columns(
        pl.lit(0.5).alias("anomaly")), qscore, [Ring(members, 0.9, 2)], supervised=False)
    (row,) = flags.iter_rows(named=True)
    sig = orjson.loads(row["signals"])
    assert sig[-1]["signal"] == "internal_links"
    shared = [x for x in sig if x["signal"] == "shared_devices"]
    assert shared and shared[0]["pair"] == "b|c" and shared[0]["value"] == 1.0, sig
    ev = orjson.loads(row["evidence"])
    assert {"game_id": "g2", "seq": 2, "what": "c connected from device dev9, also used by b"} in ev, ev


# -- evidence: the move the signal names -------------------------------------------------------
def test_hidden_card_stock_evidence_is_a_close_call() -> None:
    """Drawing from the stock over a useless pile top is what everyone does: only a stock
    draw over a pile top of use shows hidden-card knowledge."""
    base = {"player": "p", "ncards": 1, "gain": 2, "from_player": "q"}
    con = facts_db(pickups=[
        {**base, "game_id": "g1", "seq": 5, "source": "stock", "pile_gain": 0, "stock_gain": 2},
        {**base, "game_id": "g1", "seq": 9, "source": "stock", "pile_gain": 1, "stock_gain": 2},
    ])
    ev = evidence_for(con, "hidden_card", ["p"])
    assert [(e["game_id"], e["seq"]) for e in ev] == [("g1", 9)]
    assert ev[0]["what"] == ("p drew from the stock although the visible pile top was of use "
                             "(meld gain 1): the hidden stock top was worth 2")


def test_multi_account_evidence_falls_back_to_a_shared_ip() -> None:
    row = {"event": "connect", "ts_ms": 0, "client": "web"}
    con = facts_db(sessions=[
        {**row, "game_id": "g1", "seq": 1, "player": "a", "ip_hash": "ip1", "device_hash": "d1"},
        {**row, "game_id": "g1", "seq": 2, "player": "b", "ip_hash": "ip1", "device_hash": "d2"},
        {**row, "game_id": "g2", "seq": 1, "player": "b", "ip_hash": "ip1", "device_hash": "d2"},
    ])
    ev = evidence_for(con, "multi_account", ["a", "b"])
    # one row per move of a (b's other connection from that IP does not repeat it)
    assert ev == [{"game_id": "g1", "seq": 1,
                   "what": "a connected from IP ip1, also used by b (seated at this game)"}]


def test_player_evidence_names_the_player_who_moved() -> None:
    row = {"seat": 0, "variant": "classic", "ts_ms": 0, "turn": 1, "hand_size": 10,
           "difficulty": 1, "player": "p"}
    con = facts_db(moves=[
        {**row, "game_id": "g1", "seq": 4, "type": "FreshPressed", "think_ms": 900, "dist": 3,
         "auto": False},
        {**row, "game_id": "g1", "seq": 9, "type": "AutoPlayed", "think_ms": 30000, "dist": -1,
         "auto": True},
        {**row, "game_id": "g1", "seq": 11, "type": "Discarded", "think_ms": 800, "dist": 5,
         "auto": False, "difficulty": 5},
    ])
    assert [e["what"] for e in evidence_for(con, "timeout_abuse", ["p"])] == [
        "p pressed Fresh with meld distance 3", "p was auto-played (timed out)"]
    assert [e["what"] for e in evidence_for(con, "bot", ["p"])] == [
        "p discarded at difficulty 5 in 800 ms"]


# -- the CLI and the views on a scanned store -------------------------------------------------
@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    games, _ = make_world(3, n_games=24)
    path = tmp_path_factory.mktemp("scan") / "s.duckdb"
    with EventStore.open(path) as store:
        store.ingest_lines([orjson.dumps(e) for g in games for e in g])
    res = CliRunner().invoke(app, ["scan", "--db", str(path), "--json", "--no-progress",
                                   "--workers", "0"])
    assert res.exit_code == 0, res.output
    return path


def _doc_types(view: str, header: str) -> list[tuple[str, str]]:
    """The (column, type) rows of docs/sql.md's table for ``view`` whose header's third
    cell is ``header`` (the first table after the view's paragraph)."""
    text = (DOCS / "sql.md").read_text()
    start = text.index(f"`{view}` (")
    table = text[start:].split(f"| column | type |{header}\n", 1)[1].split("\n\n", 1)[0]
    out = []
    for line in table.splitlines()[1:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        for col in re.findall(r"`([^`]+)`", cells[0]):
            out.append((col, cells[1]))
    return out


def _describe(path: Path, view: str) -> list[tuple[str, str]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return [(r[0], r[1]) for r in con.execute(f"DESCRIBE {view}").fetchall()]
    finally:
        con.close()


def test_sql_doc_types_match_the_views(scanned: Path, tmp_path: Path) -> None:
    assert _describe(scanned, "moves") == _doc_types("moves", "")
    assert _describe(scanned, "chip_flows") == _doc_types("chip_flows", "")
    assert _describe(scanned, "sessions") == _doc_types("sessions", "")
    assert _describe(scanned, "flags") == _doc_types("flags", "")
    assert _describe(scanned, "player_games") == _doc_types("player_games",
                                                            " from `scan` (= `fraud.player_games`) |")
    copy = tmp_path / "v.duckdb"
    copy.write_bytes(scanned.read_bytes())
    res = CliRunner().invoke(app, ["verify", "--db", str(copy), "--json"])
    assert res.exit_code in (0, 1), res.output
    assert _describe(copy, "findings") == _doc_types("findings", " meaning |")
    assert _describe(copy, "player_games") == _doc_types("player_games", " from `verify` |")


def test_flags_cli_filters_and_bad_values(scanned: Path) -> None:
    runner = CliRunner()
    db = ["--db", str(scanned)]
    res = runner.invoke(app, ["flags", *db, "--json", "--top", "100"])
    assert res.exit_code == 0, res.output
    every = orjson.loads(res.stdout)
    assert every["total"] == len(every["flags"]) >= 1
    first = every["flags"][0]
    player = first["players"][0]
    res = runner.invoke(app, ["flags", *db, "--json", "--player", player,
                              "--kind", first["subject_kind"], "--mechanism", first["mechanism"]])
    assert res.exit_code == 0, res.output
    got = orjson.loads(res.stdout)
    want = [f for f in every["flags"] if player in f["players"]
            and f["subject_kind"] == first["subject_kind"] and f["mechanism"] == first["mechanism"]]
    assert got == {"total": len(want), "flags": want}
    # every source, present or not: with flags of one source only, asking for another
    # must give none, so a filter that kept everything would still fail here
    for src in ("model", "anomaly", "graph"):  # --source keeps exactly that source
        res = runner.invoke(app, ["flags", *db, "--json", "--top", "100", "--source", src])
        assert res.exit_code == 0, res.output
        got = orjson.loads(res.stdout)
        assert got["flags"] == [f for f in every["flags"] if f["source"] == src]
    for args, msg in ((["--top", "-1"], "--top"), (["--mechanism", "nope"], "unknown mechanism"),
                      (["--kind", "team"], "--kind"), (["--source", "rumour"], "--source")):
        res = runner.invoke(app, ["flags", *db, *args])
        assert res.exit_code == 2 and msg in res.output, (args, res.output)
    res = runner.invoke(app, ["scan", *db, "--top", "-1"])
    assert res.exit_code == 2
    # the table shows each flag's source in brackets (escaped, not read as rich markup)
    res = runner.invoke(app, ["flags", *db, "--top", "3"])
    assert res.exit_code == 0 and f"[{first['source']}]" in res.output, res.output


def test_every_evidence_move_is_the_named_players_move(scanned: Path) -> None:
    """Each evidence (game_id, seq) exists, and the sentence's first word is the player
    who made that event (connect, discard, draw, round-ending move, Fresh)."""
    con = duckdb.connect(str(scanned), read_only=True)
    try:
        rows = con.execute("SELECT subject_kind, players, evidence::VARCHAR, replay FROM flags").fetchall()
        n = 0
        for _kind, players, ev, replay in rows:
            ev = orjson.loads(ev)
            assert replay == (f"rummyguard replay {ev[0]['game_id']} --at {ev[0]['seq']}" if ev else "")
            for e in ev:
                actor, etype = con.execute("SELECT actor, type FROM events WHERE game_id = ? AND seq = ?",
                                           [e["game_id"], e["seq"]]).fetchone()
                who = e["what"].split()[0]
                assert who in players, e
                if " received " not in e["what"]:
                    assert actor == who, (e, actor)
                verb = e["what"].split()[1]
                expect = {"discarded": "Discarded", "drew": "Drew", "took": "Drew",
                          "connected": "PlayerConnected", "pressed": "FreshPressed",
                          "left": "PlayerLeft"}.get(verb)
                assert expect is None or etype == expect, (e, etype)
                n += 1
        assert n >= 1
    finally:
        con.close()
    opened = [r[3] for r in rows if r[3]]
    assert opened
    _, _, game, _, seq = opened[0].split()
    res = CliRunner().invoke(app, ["replay", game, "--at", seq, "--db", str(scanned)])
    assert res.exit_code == 0, res.output
    assert re.search(rf"^\S*\s*{seq}\b", res.output, re.M), res.output[-500:]


def test_scan_again_and_empty_store(scanned: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    copy = tmp_path / "again.duckdb"
    copy.write_bytes(scanned.read_bytes())
    before = duckdb.connect(str(copy), read_only=True)
    flags_before = before.execute("SELECT * FROM fraud.flags ORDER BY flag_id").fetchall()
    moves_before = before.execute("SELECT count(*) FROM fraud.moves").fetchone()
    before.close()
    res = runner.invoke(app, ["scan", "--db", str(copy), "--json", "--no-progress", "--workers", "0"])
    assert res.exit_code == 0, res.output
    after = duckdb.connect(str(copy), read_only=True)
    assert after.execute("SELECT * FROM fraud.flags ORDER BY flag_id").fetchall() == flags_before
    assert after.execute("SELECT count(*) FROM fraud.moves").fetchone() == moves_before
    after.close()
    empty = tmp_path / "empty.duckdb"
    EventStore.open(empty).close()
    res = runner.invoke(app, ["scan", "--db", str(empty), "--json", "--no-progress", "--workers", "0"])
    assert res.exit_code == 0, res.output
    out = orjson.loads(res.stdout)
    assert out["games"] == 0 and out["flags"] == 0 and out["top_flags"] == []
    res = runner.invoke(app, ["flags", "--db", str(empty), "--json"])
    assert res.exit_code == 0 and orjson.loads(res.stdout) == {"total": 0, "flags": []}
