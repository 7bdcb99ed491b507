"""Audit 13: the fraud scan's flags as a risk analyst reviews them, on a simulated world.

The issue asks for a flags table of subject (player, pair or ring), score, likely
mechanism, the top signals with their values vs population, and evidence
``(game_id, seq)`` that ``rummyguard replay GAME --at SEQ`` opens; the same flags on
every run and every engine (ARCHITECTURE.md, "Deterministic", "Scale"). docs/fraud.md
("Reading a flag", "Rings") says what each column holds.

One seeded world (every variant, 10 % of the accounts in a planted mechanism, ground-truth
labels) is simulated, ingested and scanned twice per module: with the built-in model and
with ``--model none``. The world is small enough for the file to stay well under its
budget and rich enough to hold every subject kind (a multi-accounting trio makes a ring
in both scans), an ``unusual`` flag and a Michigan-only bot.
"""

from __future__ import annotations

import itertools
import math
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import orjson
import polars as pl
import pytest
from factkit import facts_db
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.fraud.features import PAIR_FEATURES, PLAYER_FEATURES
from rummyguard.fraud.flags import UNUSUAL, build_flags
from rummyguard.fraud.models import MECHANISMS, PAIR_MECHANISMS, PLAYER_MECHANISMS
from rummyguard.replay.engine import GameEngine

#: the world: small, every variant, dense in planted fraud (seed chosen once, not tuned)
WORLD = ["--games", "1500", "--seed", "7707", "--fraud-rate", "0.1", "--workers", "1"]
SCAN = ["--json", "--no-progress", "--top", "1000"]
KIND_SOURCES = {"player": {"model", "anomaly"}, "pair": {"model", "anomaly"}, "ring": {"graph"}}
COUNT = {"player": "n_games", "pair": "co_games", "ring": "internal_links"}


@dataclass(frozen=True)
class World:
    base: Path  # the ingested store, never scanned
    model: Path  # scanned with the built-in model
    none: Path  # scanned with --model none
    scan_model: dict[str, Any]
    scan_none: dict[str, Any]
    labels: dict[str, Any]


def _run(*args: str) -> Any:
    """The CLI in process (stdout and stderr kept apart, as a shell sees them)."""
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    d = tmp_path_factory.mktemp("audit13")
    base, labels = d / "base.duckdb", d / "labels.json"
    res = _run("simulate", *WORLD, "--db", str(base), "--labels", str(labels), "--no-progress")
    assert res.exit_code == 0, res.output
    out = {}
    # the two scans also differ in where the facts are computed (the default pool, in
    # process): the facts must not (test_facts_do_not_depend_on_where_the_scan_runs)
    for name, extra in (("model", []), ("none", ["--model", "none", "--workers", "0"])):
        shutil.copyfile(base, d / f"{name}.duckdb")
        res = _run("scan", "--db", str(d / f"{name}.duckdb"), *SCAN, *extra)
        assert res.exit_code == 0, res.output
        out[name] = orjson.loads(res.stdout)
    return World(base, d / "model.duckdb", d / "none.duckdb", out["model"], out["none"],
                 orjson.loads(labels.read_bytes()))


def _flags(path: Path) -> list[dict[str, Any]]:
    res = _run("flags", "--db", str(path), "--json", "--top", "1000")
    assert res.exit_code == 0, res.output
    doc = orjson.loads(res.stdout)
    assert doc["total"] == len(doc["flags"])
    return doc["flags"]


def _both(world: World) -> list[tuple[Path, list[dict[str, Any]]]]:
    return [(world.model, _flags(world.model)), (world.none, _flags(world.none))]


# -- the shape of every flag -------------------------------------------------------------------
def test_the_world_holds_every_subject_kind(world: World) -> None:
    """Else the checks below could pass on nothing."""
    for _path, flags in _both(world):
        kinds = {f["subject_kind"] for f in flags}
        assert kinds == {"player", "pair", "ring"}, kinds
    assert any(f["mechanism"] == UNUSUAL for f in _flags(world.model))


def test_every_flag_is_well_formed(world: World) -> None:
    """Subject = its players joined by ``|`` (a pair ordered, a ring of >= 3); one flag per
    subject; flag_id the rank 1..n; score a probability / percentile / link mean in
    [0, 1]; mechanism from the documented list; source fits the kind; every signal's
    numbers finite and its population reference present; the directional signals
    strongest first (docs/fraud.md, "Reading a flag")."""
    for _path, flags in _both(world):
        assert [f["flag_id"] for f in flags] == list(range(1, len(flags) + 1))
        assert len({f["subject"] for f in flags}) == len(flags)  # no duplicate flag
        for f in flags:
            kind, players = f["subject_kind"], f["players"]
            assert f["subject"] == "|".join(players)
            assert len(set(players)) == len(players)
            if kind == "player":
                assert len(players) == 1
            elif kind == "pair":
                assert len(players) == 2 and players[0] < players[1]
            else:
                assert kind == "ring" and len(players) >= 3 and players == sorted(players)
            assert 0.0 <= f["score"] <= 1.0 and math.isfinite(f["score"])
            assert f["mechanism"] in (*MECHANISMS, UNUSUAL)
            if kind == "player":
                assert f["mechanism"] in (*PLAYER_MECHANISMS, UNUSUAL)
            else:
                assert f["mechanism"] in (*PAIR_MECHANISMS, UNUSUAL)
            assert f["source"] in KIND_SOURCES[kind]
            sig = f["signals"]
            directional = [s for s in sig if s["suspicious_when"] in ("high", "low")]
            counts = [s for s in sig if s["suspicious_when"] == "evidence count"]
            assert len(directional) + len(counts) == len(sig) and len(counts) == 1, sig
            assert counts[0]["signal"] == COUNT[kind]
            assert len(directional) <= 4
            for s in sig:
                assert isinstance(s["value"], int | float) and math.isfinite(s["value"]), s
                if s["signal"] != "internal_links":
                    assert isinstance(s["population_median"], int | float), s
                    assert math.isfinite(s["population_median"]), s
                    assert 0.0 < s["percentile"] < 1.0, s
            pct = [s["percentile"] for s in directional]
            assert pct == sorted(pct, reverse=True), (f["subject"], pct)
            if kind == "ring":
                assert all(s["pair"].count("|") == 1 and set(s["pair"].split("|")) <= set(players)
                           for s in directional)
            links = {s["pair"] for s in directional if "pair" in s}
            if kind == "pair" and links:  # flagged through a common partner (fraud/rings.py)
                partners = {p for k in links for p in k.split("|")} - set(players)
                assert len(partners) == 1 and len(links) <= 2, (f["subject"], links)
                assert all(len(set(k.split("|")) & set(players)) == 1 for k in links), links


def test_flags_are_ranked_strongest_first(world: World) -> None:
    """flag_id 1 = strongest: scores never rise down the list; with a model its flags
    (probabilities, and the rings over them) come first and the unusual players (anomaly
    percentiles, another scale) after them (docs/fraud.md, "Models")."""
    for path, flags in _both(world):
        blocks = ([[f for f in flags if f["source"] != "anomaly"],
                   [f for f in flags if f["source"] == "anomaly"]] if path == world.model
                  else [flags])
        assert [f for b in blocks for f in b] == flags
        for b in blocks:
            scores = [f["score"] for f in b]
            assert scores == sorted(scores, reverse=True), scores


def test_ring_members_are_linked_by_their_pair_flags(world: World) -> None:
    """A ring is a community of suspicious links: each member is in a flagged internal
    pair, the internal links number at least members − 1 (connected), and its evidence is
    between members."""
    for _path, flags in _both(world):
        pairs = {f["subject"]: f for f in flags if f["subject_kind"] == "pair"}
        for ring in (f for f in flags if f["subject_kind"] == "ring"):
            members = ring["players"]
            inner = ["|".join(k) for k in itertools.combinations(members, 2) if "|".join(k) in pairs]
            assert set(members) == {p for k in inner for p in k.split("|")}, (members, inner)
            links = next(s["value"] for s in ring["signals"] if s["signal"] == "internal_links")
            assert links >= len(members) - 1 and links >= len(inner) >= len(members) - 1
            assert min(pairs[k]["score"] for k in inner) <= ring["score"] <= 1.0


def test_ring_signals_end_with_their_evidence_count(world: World) -> None:
    """docs/fraud.md, "Reading a flag": ``signals`` = the mechanism's strongest signature
    signals (at most 4), *then* the evidence count (``n_games`` for a player, ``co_games``
    for a pair, ``internal_links`` for a ring). Players and pairs follow it; a consumer
    reading ``signals[-1]`` as the evidence count gets a ring's weakest signal."""
    rings = [f for _p, flags in _both(world) for f in flags if f["subject_kind"] == "ring"]
    assert rings
    for f in rings:
        assert f["signals"][-1]["signal"] == "internal_links", [s["signal"] for s in f["signals"]]
        assert f["signals"][0]["suspicious_when"] in ("high", "low")


# -- evidence: it exists, is the subject's, and shows the mechanism ---------------------------
_FEED = re.compile(r"^(\S+) discarded (\S+): meld gain (\d) to (\S+)'s hidden hand, where (\d+) "
                   r"cards (?:equally useless to \1|worth as much to \1 \(meld value (?P<keep>\d) to "
                   r"his own hand\)) averaged ([\d.]+)(?:; (\S+) took it)?$")
_HIDE = re.compile(r"^(\S+) discarded (\S+): gain (\d) to (\S+)'s hidden hand where (\d+) cards "
                   r"(?:equally useless to \1|worth as much to \1 \(meld value (?P<keep>\d) to his "
                   r"own hand\)), and alike on the public record, averaged ([\d.]+)$")
_STOCK = re.compile(r"^(\S+) drew from the stock although the visible pile top was of use "
                    r"\(meld gain (\d)\): the hidden stock top was worth (\d)$")
_PILE = re.compile(r"^(\S+) took the pile top of little use \(meld gain (\d)\) over the stock: "
                   r"the hidden stock top was worth (\d)$")
_CONNECT = re.compile(r"^(\S+) connected from (device|IP) (\S+), also used by (.+?)"
                      r"(?: \(seated at this game\))?$")
_ROUND = re.compile(r"^(\S+) ended the round while (\S+) held the least at the table")
_LEFT = re.compile(r"^(\S+) left the game, handing the pot on$")
_BOT = re.compile(r"^(\S+) discarded at difficulty (\d+) in (\d+) ms$")
_TIMEOUT = re.compile(r"^(\S+) (pressed Fresh|was auto-played \(timed out\))")
_CHIPS = re.compile(r"^(\S+) received ([\d.]+) chips from (\S+)")
_START = re.compile(r"^(\S+) started the suit that played")
_HELD = re.compile(r"^(\S+) could have declared Rummy and discarded instead, with (\S+) at meld "
                   r"distance (\d+)$")

#: which evidence sentences show which mechanism (docs/fraud.md, "Reading a flag")
FITS = {"card_feeding": {"feed"}, "soft_play": {"feed", "round", "held"},
        "chip_dumping": {"feed", "left", "held"},
        "multi_account": {"feed", "connect"}, "hidden_card": {"hide", "stock", "pile", "start"},
        "bot": {"bot", None}, "timeout_abuse": {"timeout"}}
# a bot's evidence is its own moves: any sentence whose event the player made (None: a sentence
# this audit does not parse, checked to be a move of the subject)


class Store:
    """The stored events and scan facts a reviewer would look at."""

    def __init__(self, path: Path) -> None:
        self.con = duckdb.connect(str(path), read_only=True)

    def event(self, game: str, seq: int) -> tuple[str, str, dict[str, Any], Any] | None:
        row = self.con.execute("SELECT actor, type, payload::VARCHAR, ts FROM events "
                               "WHERE game_id = ? AND seq = ?", [game, seq]).fetchone()
        return None if row is None else (row[0], row[1], orjson.loads(row[2] or "{}"), row[3])

    def keep_gain(self, game: str, seq: int, player: str) -> int:
        """What the discarded card was worth to its discarder (the facts' ``keep_gain``)."""
        row = self.con.execute("SELECT any_value(keep_gain) FROM fraud.discards WHERE game_id = ? "
                               "AND seq = ? AND player = ?", [game, seq, player]).fetchone()
        assert row is not None and row[0] is not None, (game, seq, player)
        return int(row[0])

    def seated(self, game: str) -> set[str]:
        return {r[0] for r in self.con.execute(
            "SELECT player FROM fraud.player_games WHERE game_id = ?", [game]).fetchall()}

    def next_draw(self, game: str, seq: int, player: str) -> dict[str, Any] | None:
        row = self.con.execute(
            "SELECT type, payload::VARCHAR FROM events WHERE game_id = ? AND seq > ? AND actor = ? "
            "AND type IN ('Drew', 'Discarded', 'Melded', 'LaidOff') ORDER BY seq LIMIT 1",
            [game, seq, player]).fetchone()
        return None if row is None or row[0] != "Drew" else orjson.loads(row[1])

    def could_declare(self, game: str, seq: int, player: str) -> bool:
        """Whether the engine's own search finds a Rummy declaration in ``player``'s hand
        just before ``seq`` (the game replayed from its stored lines)."""
        engine = GameEngine(verify_hashes=False)
        for (raw,) in self.con.execute("SELECT raw FROM events WHERE game_id = ? AND seq < ? "
                                       "ORDER BY seq", [game, seq]).fetchall():
            engine.apply(orjson.loads(raw))
        st = engine.variant
        seat = st.seat(player)
        return seat is not None and st.find_declaration(seat) is not None

    def prev_ts(self, game: str, seq: int) -> Any:
        return self.con.execute("SELECT ts FROM events WHERE game_id = ? AND seq < ? "
                                "ORDER BY seq DESC LIMIT 1", [game, seq]).fetchone()[0]


def _check_evidence(st: Store, flag: dict[str, Any], e: dict[str, Any]) -> str | None:
    """Check one evidence move against the store; the sentence's kind, or None when the
    sentence is of no kind this audit knows (then only the generic checks apply)."""
    players, game, seq, what = flag["players"], e["game_id"], e["seq"], e["what"]
    # the account a move was *toward*: one of the subject's, or for a pair flagged through a
    # common partner (fraud/rings.py, session 20) that partner, whom its signals name; the
    # mover is always one of the subject's own
    linked = list(players)
    if flag["subject_kind"] == "pair":
        named = {p for s in flag["signals"] for p in str(s.get("pair", "")).split("|") if p}
        linked += sorted(named - set(players))
    ev = st.event(game, seq)
    assert ev is not None, ("evidence move not in the store", flag["subject"], e)
    actor, etype, payload, ts = ev
    seated = st.seated(game)
    assert set(players) & seated, ("evidence from a game no subject sat in", flag["subject"], e)
    who = what.split()[0]
    assert who in players and who in seated, (flag["subject"], e)
    pair_like = flag["subject_kind"] != "player"
    if m := _FEED.match(what):
        _p, card, gain, target, _n, keep, alt, took = m.groups()
        assert (actor, etype) == (who, "Discarded") and payload["card"] == card, (e, ev)
        assert st.keep_gain(game, seq, who) == int(keep or 0), e  # "useless" only when it was
        assert target in seated and target != who and int(gain) > float(alt), e
        if pair_like:
            assert target in linked, (flag["subject"], e)
        if took:
            assert took == target
            draw = st.next_draw(game, seq, target)
            assert draw is not None and draw["source"] == "discard" and card in draw["cards"], e
        return "feed"
    if m := _HIDE.match(what):
        _p, card, gain, target, _n, keep, alt = m.groups()
        assert (actor, etype) == (who, "Discarded") and payload["card"] == card, (e, ev)
        assert st.keep_gain(game, seq, who) == int(keep or 0), e
        assert target in seated and int(gain) < float(alt), e
        return "hide"
    if m := _STOCK.match(what):
        _p, pile, stock = m.groups()
        assert (actor, etype, payload["source"]) == (who, "Drew", "stock"), (e, ev)
        assert int(pile) >= 1 and int(stock) > int(pile), e  # a close call
        return "stock"
    if m := _PILE.match(what):
        _p, pile, stock = m.groups()
        assert (actor, etype, payload["source"]) == (who, "Drew", "discard"), (e, ev)
        assert int(stock) < int(pile), e
        return "pile"
    if m := _CONNECT.match(what):
        assert (actor, etype) == (who, "PlayerConnected"), (e, ev)
        others = m.group(4).split(", ")
        if pair_like:
            assert set(others) & set(linked), e
        return "connect"
    if m := _ROUND.match(what):
        assert actor == who and m.group(2) in seated and m.group(2) != who, (e, ev)
        if pair_like:
            assert m.group(2) in linked, e
        return "round"
    if _LEFT.match(what):
        assert (actor, etype) == (who, "PlayerLeft"), (e, ev)
        assert len(set(players) & seated) >= 2, e  # the partner sat there
        return "left"
    if m := _BOT.match(what):
        assert (actor, etype) == (who, "Discarded"), (e, ev)
        think = (ts - st.prev_ts(game, seq)).total_seconds() * 1000
        assert abs(think - int(m.group(3))) < 1, (e, think)
        return "bot"
    if m := _TIMEOUT.match(what):
        assert etype == ("FreshPressed" if m.group(2) == "pressed Fresh" else "AutoPlayed"), (e, ev)
        return "timeout"
    if _CHIPS.match(what):
        return "chips"
    if m := _HELD.match(what):
        target = m.group(2)
        assert (actor, etype) == (who, "Discarded"), (e, ev)
        assert target in seated and target != who, e
        if pair_like:
            assert target in linked, (flag["subject"], e)
        assert st.could_declare(game, seq, who), ("no Rummy in hand before the discard", e)
        return "held"
    if _START.match(what):
        assert actor == who, (e, ev)
        return "start"
    assert actor in players, ("an evidence move by someone outside the subject", e, ev)
    return None


def test_every_evidence_move_is_the_subjects_and_shows_the_mechanism(world: World) -> None:
    """Each (game_id, seq) is in the store, in a game the subject sat in, made by the
    player the sentence names (one of the subject's); the sentence is true of the event
    (the card discarded, the pile or stock drawn, the think time) and its kind fits the
    flag's mechanism: feeding evidence is a discard to the partner's hidden hand (taken
    when it says so), hidden-card evidence a close-call draw or a discard that avoids the
    next hand, a bot's its own discards, etc."""
    n = 0
    for path, flags in _both(world):
        st = Store(path)
        try:
            for f in flags:
                kinds = {_check_evidence(st, f, e) for e in f["evidence"]}
                n += len(f["evidence"])
                if f["mechanism"] in FITS:
                    assert kinds <= FITS[f["mechanism"]], (f["subject"], f["mechanism"], kinds)
                ev = f["evidence"]
                assert len(ev) <= 5
                assert len({(e["game_id"], e["seq"]) for e in ev}) == len(ev), ev  # no repeats
                assert f["replay"] == (f"rummyguard replay {ev[0]['game_id']} --at {ev[0]['seq']}"
                                       if ev else "")
        finally:
            st.con.close()
    assert n >= 40


def test_every_evidence_move_opens_in_replay_at_that_seq(world: World) -> None:
    """``rummyguard replay GAME --at SEQ`` for every evidence move, and the ``replay``
    column run as written (its words as the CLI's arguments)."""
    flags = _flags(world.model)
    moves = {(e["game_id"], e["seq"]) for f in flags for e in f["evidence"]}
    assert moves
    for game, seq in sorted(moves):
        res = _run("replay", game, "--at", str(seq), "--db", str(world.model), "--json")
        assert res.exit_code == 0, (game, seq, res.output[-300:])
        assert orjson.loads(res.stdout)["at"] == seq
    for f in flags:
        if f["replay"]:
            words = f["replay"].split()
            assert words[:2] == ["rummyguard", "replay"]
            res = _run(*words[1:], "--db", str(world.model))
            assert res.exit_code == 0, (f["replay"], res.output[-300:])
            assert re.search(rf"^\S\s*{words[-1]}\s", res.output, re.M), res.output[-300:]


def test_every_model_flag_shows_a_signal_and_evidence(world: World) -> None:
    """The issue: "the top signals with their values vs population" and "explains every
    flag with the evidence moves". On this world the model flags a labelled Michigan-only
    bot whose signals are the evidence count alone (think_sd & co. are NULL: Michigan has
    no Drew / Discarded; the model saw ``think_sd_all``, docs/fraud.md) and whose evidence
    is empty, though its 1,600 timed card plays are in ``fraud.moves``."""
    for f in _flags(world.model):
        if f["source"] != "model":
            continue
        assert any(s["suspicious_when"] in ("high", "low") for s in f["signals"]), f
        assert f["evidence"] and f["replay"], f


def _player_frame(n: int = 40) -> pl.DataFrame:
    cols: dict[str, list[Any]] = {"player": [f"p{i:02d}" for i in range(n)]}
    for j, feat in enumerate(PLAYER_FEATURES):
        cols[feat] = [float((i * (j + 3)) % 7) + 1.0 for i in range(n)]
    for feat in ("think_sd", "think_sd_draw", "think_diff_corr", "slow_share", "think_median_log"):
        cols[feat][0] = None  # p00 played only Michigan: no Drew / Discarded to time
    cols["think_sd_all"][0] = 0.05  # the most regular timing of all
    return pl.DataFrame(cols)


def test_michigan_only_bot_flag_names_its_timing_signal_and_moves() -> None:
    """The hand-built case of the test above: the model calls p00 a bot (0.9); his only
    timing feature is ``think_sd_all`` (the lowest of 40) and his moves are card plays."""
    players = _player_frame()
    pairs = pl.DataFrame(schema={"p1": pl.Utf8, "p2": pl.Utf8, **{f: pl.Float64 for f in PAIR_FEATURES}})
    ids = players.get_column("player").to_list()
    pscore = pl.DataFrame({"player": ids, "bot": [0.9] + [0.01] * (len(ids) - 1),
                           "hidden_card": [0.0] * len(ids), "timeout_abuse": [0.0] * len(ids),
                           "anomaly": [0.5] * len(ids), "beyond_tail": [False] * len(ids)})
    qscore = pl.DataFrame(schema={"p1": pl.Utf8, "p2": pl.Utf8, "anomaly": pl.Float64})
    row = {"player": "p00", "seat": 0, "variant": "michigan", "type": "CardPlayed", "turn": 1,
           "hand_size": 10, "dist": -1, "difficulty": -1, "auto": False}
    con = facts_db(moves=[{**row, "game_id": "m1", "seq": s, "ts_ms": 1000 * s, "think_ms": 1500 + s}
                          for s in range(5, 15)])
    flags = build_flags(con, players, pairs, pscore, qscore, [], supervised=True)
    (flag,) = flags.iter_rows(named=True)
    assert (flag["subject"], flag["mechanism"], flag["source"]) == ("p00", "bot", "model")
    sig = orjson.loads(flag["signals"])
    assert any(s["signal"] == "think_sd_all" and s["suspicious_when"] == "low" for s in sig), sig
    ev = orjson.loads(flag["evidence"])
    assert ev and all(e["game_id"] == "m1" and 5 <= e["seq"] < 15 for e in ev), ev


# -- labels: a smell test, not a target ---------------------------------------------------------
def test_flags_against_the_labels(world: World) -> None:
    """Most model-flagged subjects hold a labelled fraudster; no flag names an account that
    never sat at a table."""
    labelled = {m["player_id"] for m in world.labels["mechanisms"]}
    con = duckdb.connect(str(world.model), read_only=True)
    try:
        played = {r[0] for r in con.execute("SELECT DISTINCT player FROM fraud.player_games").fetchall()}
    finally:
        con.close()
    flags = _flags(world.model)
    hits = [bool(set(f["players"]) & labelled) for f in flags if f["source"] == "model"]
    assert hits and sum(hits) / len(hits) >= 0.6, hits
    for _path, fl in _both(world):
        assert {p for f in fl for p in f["players"]} <= played


# -- determinism: the facts, whichever workers computed them ---------------------------------------
def test_facts_do_not_depend_on_where_the_scan_runs(world: World) -> None:
    """The module's two scans of the same store, one on the default pool and one in process
    (``--workers 0``), write the same ``fraud.*`` fact tables, row for row in their stored
    order, and the same counts in ``scan --json``. (The flags then follow from the facts
    and the model alone; the same scan with both worker settings giving byte-identical
    flags is pinned by tests/test_audit28_determinism.py and tests/test_engines.py.)"""
    con = duckdb.connect(str(world.model), read_only=True)
    try:
        con.execute(f"ATTACH '{world.none}' AS other (READ_ONLY)")
        tables = [r[0] for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'model' "
            "AND schema_name = 'fraud' AND table_name NOT IN ('flags') ORDER BY 1").fetchall()]
        assert {"moves", "discards", "pickups", "chip_flows", "player_games"} <= set(tables)
        for t in tables:
            mine = con.execute(f"SELECT * FROM model.fraud.{t}").fetchall()
            theirs = con.execute(f"SELECT * FROM other.fraud.{t}").fetchall()
            assert mine == theirs, t
            assert mine, t
    finally:
        con.close()
    for key in ("games", "players", "pairs", "fact_rows"):
        assert world.scan_model[key] == world.scan_none[key], key


def test_scan_json_is_one_document_whose_top_flags_are_the_flags(world: World) -> None:
    """``scan --json``: one object; ``flags`` and ``flags_by_kind`` count the stored flags;
    ``top_flags`` are ``flags --json``'s (signals and evidence as JSON, not text)."""
    for path, out in ((world.model, world.scan_model), (world.none, world.scan_none)):
        flags = _flags(path)
        assert out["flags"] == len(flags) == sum(out["flags_by_kind"].values())
        assert out["top_flags"] == flags
        assert out["games"] == 1500 and out["model"] == ("builtin" if path == world.model else "none")


# -- the flags command --------------------------------------------------------------------------
def test_flags_filters_do_what_help_says(world: World) -> None:
    """Each --kind / --source / --mechanism value present, --player (a ring member's rings
    and pairs too), combined filters, and --top counting after them with ``total`` the
    number that match."""
    db = ["--db", str(world.none)]
    every = _flags(world.none)

    def got(*args: str) -> dict[str, Any]:
        res = _run("flags", *db, "--json", *args)
        assert res.exit_code == 0, res.output
        return orjson.loads(res.stdout)

    for opt, col in (("--kind", "subject_kind"), ("--source", "source"), ("--mechanism", "mechanism")):
        for value in sorted({f[col] for f in every}):
            want = [f for f in every if f[col] == value]
            assert got(opt, value, "--top", "1000") == {"total": len(want), "flags": want}
    ring = next(f for f in every if f["subject_kind"] == "ring")
    member = ring["players"][1]
    want = [f for f in every if member in f["players"]]
    assert ring in want and len(want) >= 2
    assert got("--player", member) == {"total": len(want), "flags": want}
    assert got("--player", member, "--top", "1") == {"total": len(want), "flags": want[:1]}
    pairs = [f for f in want if f["subject_kind"] == "pair"]
    assert got("--player", member, "--kind", "pair") == {"total": len(pairs), "flags": pairs}
    assert got("--top", "0") == {"total": len(every), "flags": []}


def test_flags_empty_results_and_errors_are_plain(world: World, tmp_path: Path) -> None:
    """An empty selection says so (exit 0); a store without a scan, a missing store and a
    bad value are one ``error:`` line with exit 2."""
    res = _run("flags", "--db", str(world.none), "--player", "nobody")
    assert res.exit_code == 0 and res.output.strip() == "no flags", res.output
    res = _run("flags", "--db", str(world.none), "--player", "nobody", "--json")
    assert res.exit_code == 0 and orjson.loads(res.stdout) == {"total": 0, "flags": []}
    unscanned = tmp_path / "unscanned.duckdb"
    shutil.copyfile(world.base, unscanned)
    for args, msg in (
        (["flags", "--db", str(unscanned)], "no flags in this store: run `rummyguard scan` first"),
        (["flags", "--db", str(unscanned), "--json"], "run `rummyguard scan` first"),
        (["flags", "--db", str(tmp_path / "none.duckdb")], "no store at"),
        (["scan", "--db", str(tmp_path / "none.duckdb")], "no store at"),
        (["flags", "--db", str(world.none), "--mechanism", "collusion"], "unknown mechanism"),
        (["flags", "--db", str(world.none), "--kind", "team"], "--kind must be one of"),
        (["flags", "--db", str(world.none), "--source", "rumour"], "--source must be one of"),
        (["scan", "--db", str(unscanned), "--engine", "spark"], "--engine must be local or ray"),
        (["scan", "--db", str(unscanned), "--address", "auto"], "go with --engine ray"),
    ):
        res = _run(*args)
        assert res.exit_code == 2, (args, res.output)
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and msg in lines[0], (args, lines)
    assert not (tmp_path / "none.duckdb").exists()  # a failed command creates no store


def test_flags_table_shows_each_flag_with_its_replay_command(world: World) -> None:
    """The text table: the top rows only, each with its mechanism, its source in brackets
    and the words of its replay command (rich may wrap them)."""
    every = _flags(world.model)
    res = _run("flags", "--db", str(world.model), "--top", "3")
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    for f in every[:3]:
        assert f"[{f['source']}]" in text and f["mechanism"] in text
        for word in f["replay"].split():
            assert word in text
    assert not any(f"│ {f['flag_id']} │" in res.output for f in every[3:])
