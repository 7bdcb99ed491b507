"""Audit 25: the analysts' SQL. Questions an analyst really asks, each answered with SQL
over the views docs/sql.md documents (and nothing else), checked against a ground truth
computed here from the JSONL the store was built from (and, for findings and results,
from ``rummyguard.replay.engine.replay`` of the events that reached the store).

The store is awkward on purpose, and built with the real commands (``simulate``,
``ingest``, ``verify``, ``scan``): all four variants; planted platform faults (a wrong
payout, an early auto-play, a skipped Michigan holder, a tampered chained event whose
game's tail is then quarantined); a halted game (a discard of a card not held); a game
cut before its GameEnded; a classic Fresh redeal; players who left and were removed;
Michigan kitty / pay-card pools; Liverpool buys; ``Drew``/``Discarded`` v1 lines that are
upcast; quarantined lines of every common reason; a game ingested in two files (two
batches) and a file ingested in three batches; the same file ingested twice; games
chained by the producer and chained at ingest; a player id with non-ASCII characters
and a stake of 2**53 - 1.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner, Result

from rummyguard.cli.app import app
from rummyguard.events.hashing import GENESIS_HASH, chain, event_hash
from rummyguard.events.upcast import upcast
from rummyguard.events.views import connect_readonly
from rummyguard.replay.engine import GameRecord, replay
from rummyguard.replay.verify import verify_files

Event = dict[str, Any]
DOCS = Path(__file__).resolve().parent.parent / "docs"

UNI = "Zoë_測試😀"  # a player id outside ASCII (4-byte UTF-8 included)
BIG_STAKE = 2**53 - 1  # the largest stake EVENTS.md allows; not exact as a JSON double
BAD_UTF8 = b'{"note": "caf\xe9"}'  # Latin-1, not UTF-8: quarantined, shown with U+FFFD
WEEK = (datetime(2026, 11, 2), datetime(2026, 11, 9))  # "last week" of the questions

# --- building the store ---------------------------------------------------------------------


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code in (0, 1), (args, result.exit_code, result.output)
    return result.stdout


def _read(path: Path) -> list[Event]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _by_game(events: list[Event]) -> dict[str, list[Event]]:
    out: dict[str, list[Event]] = {}
    for e in events:
        out.setdefault(e["game_id"], []).append(e)
    return out


def _renamed(events: list[Event], prefix: str) -> list[Event]:
    """The game under another id (and no hash fields: the caller chains it again or not)."""
    return [{**{k: v for k, v in e.items() if k not in ("hash", "prev_hash")},
             "game_id": prefix + e["game_id"], "event_id": prefix + e["event_id"]}
            for e in events]


def _swap_player(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return new if value == old else value
    if isinstance(value, list):
        return [_swap_player(v, old, new) for v in value]
    if isinstance(value, dict):
        return {(new if k == old else k): _swap_player(v, old, new) for k, v in value.items()}
    return value


_RANK = {"T": "10"}
_SUIT = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}


def _v1_card(code: str) -> dict[str, str]:
    if code == "JK":
        return {"rank": "joker"}
    return {"rank": _RANK.get(code[0], code[0]), "suit": _SUIT[code[1]]}


def _downcast(e: Event) -> Event:
    """A v2 ``Drew``/``Discarded`` as the older export wrote it (EVENTS.md v1)."""
    if e["type"] == "Discarded" and e["v"] == 2:
        return {**e, "v": 1, "payload": {"card": _v1_card(e["payload"]["card"])}}
    if e["type"] == "Drew" and e["v"] == 2 and len(e["payload"]["cards"]) == 1:
        source = "deck" if e["payload"]["source"] == "stock" else "pile"
        return {**e, "v": 1,
                "payload": {"from": source, "card": _v1_card(e["payload"]["cards"][0])}}
    return e


def _dump(path: Path, events: list[Event]) -> None:
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events),
                    encoding="utf-8")


@dataclass
class World:
    db: Path
    #: the events the store must hold, per game, in seq order (as written to the files)
    stored: dict[str, list[Event]]
    #: (source name, 1-based line, reason, game_id, seq) of every line ingest must refuse
    quarantined: list[tuple[str, int, str, str | None, int | None]]
    records: dict[str, GameRecord]
    halted: str
    split: str
    unfinished: str
    big: str
    uni_game: str
    v1_games: list[str]
    chained: dict[str, str]
    ingests: list[tuple[str, int]] = field(default_factory=list)  # (file, batches)
    #: audit 35: the verification of the ingested files themselves, which the store's
    #: (``verify --db``: the views ``findings`` and ``player_games``) equals, the
    #: quarantined lines folded in where ingest read them; ``records`` replays the stored
    #: events alone, as the scan's facts do
    verified: dict[str, GameRecord] = field(default_factory=dict)


def _valid_prefix(events: list[Event]) -> int:
    """How many leading events of a chained game the store keeps: up to the first event
    whose hash or prev_hash is wrong (the rest is quarantined behind it)."""
    prev = GENESIS_HASH
    for i, e in enumerate(events):
        if e.get("prev_hash") != prev or e.get("hash") != event_hash(e):
            return i
        prev = e["hash"]
    return len(events)


def _build(d: Path) -> World:
    sims: dict[str, dict[str, list[Event]]] = {}
    for name, args in {
        # seed 45 since session 24 (accounts renumbered): seed 16 now plants no early
        # auto-play and plays no Michigan poker pot; 45 has all four variants, the four
        # fault kinds and a poker pot
        "main": ["--games", "30", "--seed", "45", "--faults", "4", "--players", "10",
                 "--fraud-rate", "0.3"],
        "liv": ["--games", "6", "--seed", "5", "--variants", "liverpool", "--players", "6",
                "--no-chain"],
        # seed 21 since session 24 (accounts renumbered): seed 17 now has no Fresh redeal
        "cls": ["--games", "30", "--seed", "21", "--players", "10", "--fraud-rate", "0.3",
                "--variants", "classic"],
    }.items():
        out = d / f"sim_{name}.jsonl"
        _cli("simulate", *args, "--out", str(out), "--workers", "1", "--no-progress")
        sims[name] = _by_game(_read(out))

    files: dict[str, list[Event]] = {"main": [e for g in sims["main"].values() for e in g]}
    chained = {g: "producer" for g in sims["main"]}
    # Liverpool: chained at ingest; a non-ASCII player; a halted game; one game in 2 files
    liv = {"L" + k: _renamed(v, "L") for k, v in sims["liv"].items()}
    liv_ids = sorted(liv)
    uni_game, halted, split = liv_ids[0], liv_ids[1], liv_ids[2]
    liv[uni_game] = _swap_player(liv[uni_game], liv[uni_game][0]["payload"]["seats"][0], UNI)
    evs = liv[halted]
    at = next(i for i, e in enumerate(evs) if i > 30 and e["type"] == "Discarded")
    evs[at] = {**evs[at], "payload": {"card": "2C" if evs[at]["payload"]["card"] == "JK" else "JK"}}
    half = len(liv[split]) // 2
    files["liv_a"] = [e for k in liv_ids for e in (liv[k][:half] if k == split else liv[k])]
    files["liv_b"] = liv[split][half:]
    chained.update({g: "ingest" for g in liv})
    # classic: re-chained by the producer; a Fresh redeal and a leaver among them; two
    # with v1 lines; one cut before its end; one with a stake of 2**53 - 1
    cls_all = sims["cls"]
    redeal = [k for k, v in cls_all.items()
              if any(e["type"] == "RoundStarted" and e["payload"]["redeal"] for e in v)]
    left = [k for k, v in cls_all.items() if any(e["type"] == "PlayerLeft" for e in v)]
    assert redeal and left
    cls: dict[str, list[Event]] = {}
    for k in sorted({*redeal, *left, *sorted(cls_all)[:6]}):
        evs = _renamed(cls_all[k], "C")
        p = evs[0]["payload"]
        evs[0] = {**evs[0], "payload": {**p, "table_id": "C" + p["table_id"]}}
        cls["C" + k] = evs
    ids = sorted(cls)
    v1_games = ids[:2]
    for k in v1_games:
        cls[k] = [_downcast(e) for e in cls[k]]
    unfinished, big = ids[2], ids[3]
    cls[unfinished] = cls[unfinished][:-6]
    cls[big][0] = {**cls[big][0], "payload": {**cls[big][0]["payload"], "stake": BIG_STAKE}}
    cls = {k: chain(v) for k, v in cls.items()}
    files["cls"] = [e for k in ids for e in cls[k]]
    chained.update({g: "producer" for g in cls})
    for name, evs in files.items():
        _dump(d / f"{name}.jsonl", evs)
    # a byte-order mark at the very start of a file is ignored (docs/sql.md)
    liv_b = d / "liv_b.jsonl"
    liv_b.write_bytes(b"\xef\xbb\xbf" + liv_b.read_bytes())

    # lines every ingest must refuse, and a game with a gap (its first two lines stored)
    main = files["main"]
    first = main[0]["game_id"]
    gap = [{"event_id": f"GAP-{i}", "game_id": "GAP", "seq": s, "type": "PlayerConnected",
            "v": 1, "ts": f"2026-11-20T10:00:0{i}.000Z", "actor": "pz",
            "payload": {"ip_hash": "", "device_hash": "", "client": "web"}}
           for i, s in enumerate([0, 1, 3, 4])]
    bad = [
        ("this is not json", "not_json", None, None),
        (json.dumps({**main[5], "event_id": "X-unknown", "type": "Teleported"}),
         "unknown_type", first, 5),
        (json.dumps({**main[5], "event_id": "X-future", "v": 9}), "future_version", first, 5),
        (json.dumps({**main[5], "event_id": "X-invalid", "ts": "yesterday"}), "invalid", first, 5),
        (json.dumps({**main[2], "actor": "system"}), "bad_actor", first, 2),
        (json.dumps({**main[7], "ts": "2026-01-01T00:00:00.000Z"}), "conflict_event_id", first, 7),
        (json.dumps(gap[0]), None, None, None),
        (json.dumps(gap[1]), None, None, None),
        (json.dumps(gap[2]), "sequence_gap", "GAP", 3),
        (json.dumps(gap[3]), "sequence_gap", "GAP", 4),
        ('{"ünïcode": 1, ', "not_json", None, None),
        (BAD_UTF8, "not_json", None, None),
    ]
    mix = _simple_game("MIX", 2)  # chained at ingest, then a line carrying hash fields
    mix[1] = {**mix[1], "prev_hash": "0" * 64, "hash": "0" * 64}
    brk = chain(_simple_game("BRK", 2))  # chained by the producer, then a broken link
    brk[1] = {**brk[1], "prev_hash": "f" * 64}
    brk[1]["hash"] = event_hash(brk[1])
    bad += [
        ("", "not_json", None, None),
        ('{"a": 1, "a": 2}', "not_json", None, None),
        ("\ufeff" + json.dumps(_simple_game("ZZZ", 1)[0]), "not_json", None, None),
        ("[1, 2]", "not_object", None, None),
        (json.dumps({**gap[0], "event_id": "GAP-0b"}), "conflict_seq", "GAP", 0),
        (json.dumps(mix[0]), None, None, None),
        (json.dumps(mix[1]), "chain_mixed", "MIX", 1),
        (json.dumps(brk[0]), None, None, None),
        (json.dumps(brk[1]), "chain_break", "BRK", 1),
    ]
    (d / "bad.jsonl").write_bytes(b"".join(
        (line if isinstance(line, bytes) else line.encode()) + b"\n" for line, *_ in bad))

    stored: dict[str, list[Event]] = {}
    quarantined: list[tuple[str, int, str, str | None, int | None]] = []
    for name in ("main", "liv_a", "liv_b", "cls"):
        for game, evs in _by_game(files[name]).items():
            stored.setdefault(game, []).extend(evs)
    for game, evs in list(stored.items()):
        if chained[game] == "producer":
            keep = _valid_prefix(evs)
            for e in evs[keep:]:
                line = files["main"].index(e) + 1
                reason = "bad_hash" if e is evs[keep] else "sequence_gap"
                quarantined.append(("main", line, reason, game, e["seq"]))
            stored[game] = evs[:keep]
    stored.update({"GAP": gap[:2], "MIX": mix[:1], "BRK": brk[:1]})
    chained.update({"GAP": "ingest", "MIX": "ingest", "BRK": "producer"})
    quarantined += [("bad", i + 1, r, g, s) for i, (_, r, g, s) in enumerate(bad) if r]

    db = d / "audit.duckdb"
    ingests = [("main", 1), ("main", 1), ("liv_a", 3), ("liv_b", 1), ("cls", 1), ("bad", 1)]
    for name, _ in ingests:
        extra = ["--batch-lines", "1000"] if name == "liv_a" else []
        _cli("ingest", str(d / f"{name}.jsonl"), "--db", str(db), "--no-progress", *extra)
    _cli("verify", "--db", str(db), "--no-progress")
    _cli("verify", "--db", str(db), "--no-progress")  # again: results replaced, not added
    _cli("scan", "--db", str(db), "--no-progress", "--model", "none", "--workers", "0")
    records = {g: replay(evs) for g, evs in stored.items()}
    verified = {r.game_id: r for r in verify_files(
        [d / f"{name}.jsonl" for name in ("main", "liv_a", "liv_b", "cls", "bad")]).records}
    return World(db, stored, quarantined, records, halted, split, unfinished, big, uni_game,
                 v1_games, chained, ingests, verified)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return _build(tmp_path_factory.mktemp("audit25"))


@pytest.fixture(scope="module")
def con(world: World):
    c = connect_readonly(world.db)
    yield c
    c.close()


def q(con: Any, sql: str) -> list[tuple]:
    return con.execute(sql).fetchall()


def _ms(ts: str) -> int:
    return int(datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC).timestamp()
               * 1000)


def _dt(ts: str) -> datetime:
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ")


def _created(world: World, game: str) -> dict[str, Any] | None:
    for e in world.stored[game]:
        if e["type"] == "GameCreated":
            return {**e["payload"], "ts": e["ts"]}
    return None


def _truth_findings(world: World) -> Counter[tuple[str, str, str]]:
    """(game, rule, kind) of every finding: the replay of the ingested files (audit 35: the
    store's quarantined lines are folded in where ingest read them, docs/sql.md
    `quarantine`; it was the stored events' replay plus one LOG-EVENT per such line)."""
    out: Counter[tuple[str, str, str]] = Counter()
    for game, rec in world.verified.items():
        out.update((game, f.rule, f.kind) for f in rec.findings)
    return out


# --- the store as a whole -------------------------------------------------------------------


def test_q01_events_view_holds_exactly_the_stored_log(world: World, con: Any) -> None:
    """"How many events per game, and are any missing?" — every event that reached the
    store, once, at its seq, the raw line byte for byte."""
    rows = q(con, "SELECT game_id, seq, event_id, raw, type, stored_v, ts_text, actor, payload, "
                  "stored_payload, hash, prev_hash, chained_by FROM events ORDER BY game_id, seq")
    truth = sorted((g, e["seq"], e["event_id"]) for g, evs in world.stored.items() for e in evs)
    assert [r[:3] for r in rows] == truth
    for _, _, event_id, raw, type_, v, ts_text, actor, payload, stored, h, prev, by in rows:
        line = json.loads(raw)
        assert (line["event_id"], line["type"], line["v"], line["ts"], line["actor"]) == (
            event_id, type_, v, ts_text, actor)
        assert json.loads(stored) == line["payload"]
        assert json.loads(payload) == upcast(line)["payload"]
        if by == "producer":  # the producer's own hash fields, as received
            assert (h, prev) == (line["hash"], line["prev_hash"])


def test_q02_one_row_per_game_with_its_setup(world: World, con: Any) -> None:
    """"Every game with its variant, table, seats, stake, start and end" — one row per game,
    each column what the game's GameCreated / GameEnded / events say."""
    rows = q(con, "SELECT game_id, variant, table_id, seats, dealer, stake, started_at, ended_at,"
                  " event_count, first_ts, last_ts, last_seq, chained_by FROM games ORDER BY 1")
    assert [r[0] for r in rows] == sorted(world.stored)
    for r in rows:
        evs = world.stored[r[0]]
        c = _created(world, r[0])
        ended = next((e["ts"] for e in evs if e["type"] == "GameEnded"), None)
        want = (
            r[0],
            c and c["variant"], c and c["table_id"], c and c["seats"], c and c["dealer"],
            c and c["stake"], c and _dt(c["ts"]), ended and _dt(ended), len(evs),
            min(_dt(e["ts"]) for e in evs), max(_dt(e["ts"]) for e in evs), evs[-1]["seq"],
            world.chained[r[0]],
        )
        assert tuple(r) == want
    assert q(con, f"SELECT stake FROM games WHERE game_id = '{world.big}'") == [(BIG_STAKE,)]
    assert q(con, f"SELECT seats[1] FROM games WHERE game_id = '{world.uni_game}'") == [(UNI,)]


def test_q03_games_per_variant_with_findings_and_unfinished(world: World, con: Any) -> None:
    """"Games per variant, how many had a finding, how many never ended." """
    rows = q(con, """
        SELECT g.variant, count(*) AS games,
               count(*) FILTER (WHERE g.game_id IN (SELECT game_id FROM findings)) AS with_finding,
               count(*) FILTER (WHERE g.ended_at IS NULL) AS unfinished
        FROM games g GROUP BY g.variant ORDER BY g.variant NULLS LAST""")
    truth: dict[str | None, list[int]] = defaultdict(lambda: [0, 0, 0])
    found = {g for g, _, _ in _truth_findings(world)}
    for game, evs in world.stored.items():
        c = _created(world, game)
        t = truth[c["variant"] if c else None]
        t[0] += 1
        t[1] += game in found
        t[2] += not any(e["type"] == "GameEnded" for e in evs)
    assert {r[0]: list(r[1:]) for r in rows} == dict(truth)
    assert set(truth) == {"classic", "r500", "liverpool", "michigan", None}


def test_q04_unfinished_games_are_those_without_a_stored_gameended(world: World,
                                                                   con: Any) -> None:
    """"Which games never ended?" — the cut game, the tampered games' stored prefixes, the
    gap game."""
    got = {r[0] for r in q(con, "SELECT game_id FROM games WHERE ended_at IS NULL")}
    truth = {g for g, evs in world.stored.items()
             if not any(e["type"] == "GameEnded" for e in evs)}
    assert got == truth
    assert world.unfinished in got and "GAP" in got
    assert any(w[0] == "main" and w[2] == "bad_hash" and w[3] in got for w in world.quarantined)


def test_q05_chained_by_per_game(world: World, con: Any) -> None:
    """"Which games carried the producer's hash chain?" (also on every event row)."""
    assert dict(q(con, "SELECT game_id, chained_by FROM games")) == world.chained
    per_event = q(con, "SELECT game_id, count(DISTINCT chained_by) FROM events GROUP BY 1 "
                       "HAVING count(DISTINCT chained_by) <> 1")
    assert per_event == []
    hashes = q(con, "SELECT count(*) FROM events WHERE hash IS NULL OR prev_hash IS NULL "
                    "OR length(hash) <> 64")
    assert hashes == [(0,)]


def test_q06_the_ingest_built_chain_links_up(world: World, con: Any) -> None:
    """"Is the prev_hash of each event the hash of the one before it?" (both kinds of chain)."""
    rows = q(con, """
        SELECT game_id, seq, prev_hash,
               lag(hash) OVER (PARTITION BY game_id ORDER BY seq) AS before
        FROM events QUALIFY prev_hash IS DISTINCT FROM coalesce(before, repeat('0', 64))""")
    assert rows == []


def test_q07_upcast_payloads_read_as_the_current_version(world: World, con: Any) -> None:
    """"Draws per source" over a log with v1 lines: `payload` is the v2 form, `stored_payload`
    the line's, `v` the current version and `stored_v` the received one."""
    rows = q(con, "SELECT game_id, seq, type, v, stored_v, payload, stored_payload FROM events "
                  "WHERE stored_v <> v ORDER BY game_id, seq")
    truth = [(g, e) for g in world.v1_games for e in world.stored[g] if e["v"] == 1
             and e["type"] in ("Drew", "Discarded")]
    assert [(r[0], r[1]) for r in rows] == [(g, e["seq"]) for g, e in truth]
    for r, (_, e) in zip(rows, truth, strict=True):
        up = upcast(e)
        assert (r[2], r[3], r[4]) == (e["type"], 2, 1)
        assert json.loads(r[5]) == up["payload"]
        assert json.loads(r[6]) == e["payload"]


def test_q08_draws_per_source_and_player_docs_example(world: World, con: Any) -> None:
    """The docs/sql.md example, v1 lines included (`from: deck` counts as `stock`)."""
    rows = q(con, "SELECT actor, payload->>'source' AS source, count(*) AS draws "
                  "FROM events WHERE type = 'Drew' GROUP BY ALL")
    truth: Counter[tuple[str, str]] = Counter()
    for evs in world.stored.values():
        for e in evs:
            if e["type"] == "Drew":
                truth[(e["actor"], upcast(e)["payload"]["source"])] += 1
    assert {(a, s): n for a, s, n in rows} == dict(truth)
    assert {s for _, s, _ in rows} == {"stock", "discard"}


def test_q09_timestamps_are_utc_timestamps_of_ts_text(world: World, con: Any) -> None:
    """Types: `ts` a TIMESTAMP equal to `ts_text` read as UTC, to the millisecond."""
    types = dict(q(con, "SELECT column_name, column_type FROM (DESCRIBE events)"))
    assert types["ts"] == "TIMESTAMP"
    rows = q(con, "SELECT ts_text, ts, epoch_ms(ts) FROM events")
    for text, ts, ms in rows:
        assert ts == _dt(text) and ms == _ms(text)


def test_q10_events_per_batch_and_what_was_quarantined(world: World, con: Any) -> None:
    """"Events per ingest batch, and what was quarantined and why." Every batch balances;
    the stored counts are the rows of `events` with that batch_id; the same file
    ingested again stores nothing and adds no quarantine row."""
    batches = q(con, "SELECT batch_id, source, lines_read, stored, duplicates, quarantined "
                     "FROM ingest_batches ORDER BY batch_id")
    per_batch = dict(q(con, "SELECT batch_id, count(*) FROM events GROUP BY 1"))
    names = [Path(b[1]).stem for b in batches]
    assert names == [n for n, k in world.ingests for _ in range(k)]
    for b in batches:
        assert b[2] == b[3] + b[4] + b[5]
        assert per_batch.get(b[0], 0) == b[3]
    assert batches[1][3:] == (0, batches[0][3], batches[0][5])  # main.jsonl again
    lines = q(con, "SELECT first_line, last_line FROM ingest_batches WHERE source LIKE "
                   "'%liv_a.jsonl' ORDER BY batch_id")
    n_liv_a = len((world.db.parent / "liv_a.jsonl").read_bytes().splitlines())
    assert lines == [(1, 1000), (1001, 2000), (2001, n_liv_a)]
    reasons = q(con, "SELECT source, line_no, reason, game_id, seq FROM quarantine "
                     "ORDER BY source, line_no")
    truth = sorted((str(world.db.parent / f"{n}.jsonl"), line, r, g, s)
                   for n, line, r, g, s in world.quarantined)
    assert reasons == truth
    dup = q(con, "SELECT source, line_no, reason, count(*) FROM quarantine GROUP BY ALL "
                 "HAVING count(*) > 1")
    assert dup == []


def test_q11_game_ingested_in_two_batches_is_one_game(world: World, con: Any) -> None:
    """"Which games arrived over several batches?" — the split game, whole in `games`."""
    rows = q(con, "SELECT game_id, count(DISTINCT batch_id) FROM events GROUP BY 1 "
                  "HAVING count(DISTINCT batch_id) > 1")
    assert world.split in {r[0] for r in rows}
    row = q(con, f"SELECT event_count, last_seq, ended_at IS NOT NULL FROM games "
                 f"WHERE game_id = '{world.split}'")
    assert row == [(len(world.stored[world.split]), len(world.stored[world.split]) - 1, True)]


# --- findings ------------------------------------------------------------------------------


def test_q12_rule_ids_that_fire_most_per_variant(world: World, con: Any) -> None:
    """"Which rule IDs fire most, per variant?" (findings joined to nothing: it has `variant`)."""
    rows = q(con, "SELECT variant, rule, kind, count(*) FROM findings GROUP BY ALL")
    truth: Counter[tuple[str | None, str, str]] = Counter()
    for (game, rule, kind), n in _truth_findings(world).items():
        c = _created(world, game)
        truth[(c["variant"] if c else None, rule, kind)] += n
    assert {r[:3]: r[3] for r in rows} == dict(truth)
    rules = {r[1] for r in rows}
    assert {"C-CLAIM", "C-HOLD", "CL-AUTOPLAY", "MI-FOLLOW", "LOG-EVENT"} <= rules


def test_q13_findings_per_game_match_the_replay(world: World, con: Any) -> None:
    """"The findings of game X, in order" — rule, kind and seq as the replay gives them."""
    rows = q(con, "SELECT game_id, seq, rule, kind FROM findings")
    got = Counter(rows)
    truth = Counter((g, f.seq, f.rule, f.kind) for g, rec in world.verified.items()
                    for f in rec.findings)
    assert got == truth


def test_q14_each_quarantined_line_is_a_log_event_finding_at_its_seq(world: World,
                                                                      con: Any) -> None:
    """docs/sql.md `quarantine`: every row naming a game is reported as a replay of the file
    reports it (audit 35; it was one LOG-EVENT per row): a line that is not a valid event
    is a LOG-EVENT finding at its seq, and only such lines are."""
    got = Counter(q(con, "SELECT game_id, seq FROM findings WHERE rule = 'LOG-EVENT'"))
    want = Counter((g, f.seq) for g, rec in world.verified.items() for f in rec.findings
                   if f.rule == "LOG-EVENT")
    assert got == want and got
    unread = Counter(q(con, "SELECT game_id, seq FROM quarantine WHERE game_id IS NOT NULL "
                            "AND reason NOT IN ('sequence_gap', 'conflict_seq', "
                            "'conflict_event_id', 'chain_break', 'bad_hash', 'chain_mixed')"))
    assert unread and not unread - got  # each one is reported (a seq it cannot read: at the end)


def test_q15_findings_variant_is_the_games_variant(con: Any) -> None:
    """Joining findings to games on game_id neither drops nor repeats a finding."""
    assert q(con, "SELECT count(*) FROM findings f JOIN games g USING (game_id) "
                  "WHERE f.variant IS DISTINCT FROM g.variant") == [(0,)]
    assert q(con, "SELECT (SELECT count(*) FROM findings), (SELECT count(*) FROM findings f "
                  "JOIN games g USING (game_id))") == [(q(con, "SELECT count(*) FROM findings")
                                                        [0][0],) * 2]


# --- results: player_games -----------------------------------------------------------------


def test_q16_player_games_one_row_per_seated_player(world: World, con: Any) -> None:
    """One row per (game, seated player), seat in seat order; joins without duplicates."""
    rows = q(con, "SELECT game_id, player, seat FROM player_games ORDER BY 1, 3")
    truth = sorted(((g, p, s) for g in world.stored if (c := _created(world, g))
                    for s, p in enumerate(c["seats"])), key=lambda r: (r[0], r[2]))
    assert rows == truth
    n = q(con, "SELECT count(*) FROM player_games p JOIN games g USING (game_id)")[0][0]
    assert n == len(truth)


def test_q17_each_players_games_wins_and_net(world: World, con: Any) -> None:
    """"Each player's games, wins and net" over finished games, as docs/sql.md tells the
    analyst to filter (`finished`)."""
    rows = q(con, """
        SELECT player, count(*) AS games, count(*) FILTER (WHERE won) AS wins, sum(net) AS net
        FROM player_games WHERE finished GROUP BY player""")
    truth: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for g, rec in world.verified.items():
        c = _created(world, g)
        if not c or not rec.finished:
            continue
        for p in c["seats"]:
            t = truth[p]
            t[0] += 1
            t[1] += p in rec.results.winners
            t[2] += rec.results.net.get(p, 0)
    assert {r[0]: list(r[1:]) for r in rows} == dict(truth)


def test_q18_player_games_flags_per_game(world: World, con: Any) -> None:
    """`clean`, `halted`, `finished`, `won`, `score` of each row as the replay says."""
    rows = q(con, "SELECT game_id, player, net, score, won, clean, halted, finished "
                  "FROM player_games")
    found = {g for g, _, _ in _truth_findings(world)}
    for g, p, net, score, won, clean, halted, finished in rows:
        rec = world.verified[g]
        assert (net, score, won) == (rec.results.net.get(p, 0), rec.results.scores.get(p),
                                     p in rec.results.winners), (g, p)
        assert (clean, halted, finished) == (g not in found, rec.halted, rec.finished), (g, p)
    assert q(con, f"SELECT DISTINCT halted, finished FROM player_games "
                  f"WHERE game_id = '{world.halted}'") == [(True, False)]


def test_q19_net_per_player_last_week_matches_the_logged_gameended(world: World,
                                                                   con: Any) -> None:
    """"Net chips per player last week", from the results, against each clean game's
    logged GameEnded `net` (a claim the replay found right)."""
    rows = q(con, f"""
        SELECT p.player, sum(p.net) FROM player_games p JOIN games g USING (game_id)
        WHERE p.finished AND p.clean
          AND g.started_at >= TIMESTAMP '{WEEK[0]}' AND g.started_at < TIMESTAMP '{WEEK[1]}'
        GROUP BY 1""")
    truth: Counter[str] = Counter()
    found = {g for g, _, _ in _truth_findings(world)}
    for g, evs in world.stored.items():
        c = _created(world, g)
        end = next((e for e in evs if e["type"] == "GameEnded"), None)
        if not c or end is None or g in found or not WEEK[0] <= _dt(c["ts"]) < WEEK[1]:
            continue
        for p in c["seats"]:
            truth[p] += end["payload"]["net"].get(p, 0)
    assert dict(rows) == dict(truth)


def test_q20_net_from_the_logged_transfers_per_player(world: World, con: Any) -> None:
    """"Chips in and out per player from the ChipsTransferred events" — SQL over `events`
    unnesting the transfers, against the JSONL."""
    rows = q(con, """
        WITH t AS (
          SELECT game_id, unnest(CAST(payload->'transfers' AS JSON[])) AS t
          FROM events WHERE type = 'ChipsTransferred')
        SELECT who, sum(amount) FROM (
          SELECT t->>'from' AS who, -CAST(t->>'amount' AS BIGINT) AS amount FROM t
          UNION ALL
          SELECT t->>'to', CAST(t->>'amount' AS BIGINT) FROM t) GROUP BY who""")
    truth: Counter[str] = Counter()
    for evs in world.stored.values():
        for e in evs:
            if e["type"] == "ChipsTransferred":
                for t in e["payload"]["transfers"]:
                    truth[t["from"]] -= t["amount"]
                    truth[t["to"]] += t["amount"]
    assert {k: v for k, v in rows} == {k: v for k, v in truth.items()}


def test_q21_rake_collected_per_day(world: World, con: Any) -> None:
    """"Rake collected per day": transfers to `house`, by the UTC date of the event."""
    rows = q(con, """
        SELECT CAST(ts AS DATE) AS day, sum(CAST(t->>'amount' AS BIGINT)) AS rake
        FROM events, unnest(CAST(payload->'transfers' AS JSON[])) AS u(t)
        WHERE type = 'ChipsTransferred' AND t->>'to' = 'house' GROUP BY day""")
    truth: Counter[date] = Counter()
    for evs in world.stored.values():
        for e in evs:
            if e["type"] == "ChipsTransferred":
                for t in e["payload"]["transfers"]:
                    if t["to"] == "house":
                        truth[_dt(e["ts"]).date()] += t["amount"]
    assert truth and dict(rows) == dict(truth)


def test_q22_michigan_pools_in_and_out(world: World, con: Any) -> None:
    """"How much went into the kitty and the pay-card pools, and how much came out?" """
    rows = q(con, """
        SELECT split_part(t->>'to', ':', 1) AS pool, sum(CAST(t->>'amount' AS BIGINT))
        FROM events e JOIN games g USING (game_id),
             unnest(CAST(e.payload->'transfers' AS JSON[])) AS u(t)
        WHERE g.variant = 'michigan' AND e.type = 'ChipsTransferred'
          AND t->>'to' NOT IN (SELECT unnest(g.seats)) GROUP BY 1""")
    truth: Counter[str] = Counter()
    for g, evs in world.stored.items():
        c = _created(world, g)
        if not c or c["variant"] != "michigan":
            continue
        for e in evs:
            if e["type"] == "ChipsTransferred":
                for t in e["payload"]["transfers"]:
                    if t["to"] not in c["seats"]:
                        truth[t["to"].split(":")[0]] += t["amount"]
    assert dict(rows) == dict(truth)
    assert {"kitty", "pay", "poker"} <= set(truth)


# --- moves and chip flows -------------------------------------------------------------------

_NOT_MOVES = {"PlayerConnected", "PlayerDisconnected"}


def _truth_moves(world: World) -> dict[tuple[str, int], tuple[str, str, int, int]]:
    """(game, seq) -> (player, type, ts_ms, think_ms) of every player move or auto-play of
    the games with a GameCreated, up to a halt; think = ts - previous event's ts."""
    out = {}
    for g, evs in world.stored.items():
        rec = world.records[g]
        if _created(world, g) is None:
            continue
        halt = min((f.seq for f in rec.findings if rec.halted and f.kind == "integrity"),
                   default=None)
        for prev, e in pairwise(evs):
            if halt is not None and e["seq"] >= halt:
                break
            if e["type"] == "AutoPlayed":
                player = e["payload"]["player"]
            elif e["actor"] != "system" and e["type"] not in _NOT_MOVES:
                player = e["actor"]
            else:
                continue
            out[(g, e["seq"])] = (player, e["type"], _ms(e["ts"]), _ms(e["ts"]) - _ms(prev["ts"]))
    return out


def test_q23_moves_of_a_game_in_order_with_think_time(world: World, con: Any) -> None:
    """"The moves of game X in order with think time" — for every game."""
    rows = q(con, "SELECT game_id, seq, player, type, ts_ms, think_ms FROM moves")
    got = {(r[0], r[1]): r[2:] for r in rows}
    truth = _truth_moves(world)
    assert len(rows) == len(got)
    assert got == truth


def test_q24_moves_turn_seat_auto_and_variant(world: World, con: Any) -> None:
    """`turn` is the player's n-th move of the game, `seat` his seat, `auto` an AutoPlayed."""
    rows = q(con, "SELECT game_id, seq, player, seat, variant, type, turn, auto FROM moves "
                  "ORDER BY game_id, seq")
    turns: Counter[tuple[str, str]] = Counter()
    for g, seq, player, seat, variant, type_, turn, auto in rows:
        c = _created(world, g)
        turns[(g, player)] += 1
        assert (seat, variant, turn, auto) == (c["seats"].index(player), c["variant"],
                                               turns[(g, player)], type_ == "AutoPlayed"), (g, seq)


def test_q25_liverpool_buys_and_fresh_presses_per_player(world: World, con: Any) -> None:
    """"Who buys the most in Liverpool, who presses Fresh in classic?" from `moves`."""
    rows = q(con, "SELECT variant, type, player, count(*) FROM moves "
                  "WHERE type IN ('Bought', 'FreshPressed') GROUP BY ALL")
    truth: Counter[tuple[str, str, str]] = Counter()
    for (g, _), (player, type_, _, _) in _truth_moves(world).items():
        if type_ in ("Bought", "FreshPressed"):
            truth[(_created(world, g)["variant"], type_, player)] += 1
    assert {r[:3]: r[3] for r in rows} == dict(truth)
    assert {("liverpool", "Bought"), ("classic", "FreshPressed")} <= {k[:2] for k in truth}


def test_q26_fresh_redeals_per_game(world: World, con: Any) -> None:
    """"Which classic games were redealt after a Fresh press, and how often?" """
    rows = q(con, "SELECT game_id, max(CAST(payload->>'redeal' AS INTEGER)) FROM events "
                  "WHERE type = 'RoundStarted' AND CAST(payload->>'redeal' AS INTEGER) > 0 "
                  "GROUP BY 1")
    truth = {g: max(e["payload"]["redeal"] for e in evs
                    if e["type"] == "RoundStarted" and e["payload"]["redeal"] > 0)
             for g, evs in world.stored.items()
             if any(e["type"] == "RoundStarted" and e["payload"]["redeal"] > 0 for e in evs)}
    assert truth and dict(rows) == truth


def test_q27_players_who_left_or_were_removed_keep_their_row(world: World, con: Any) -> None:
    """"Players who left or were removed, and what they lost" — their player_games row is
    there, with the replay's net."""
    rows = q(con, """
        SELECT e.game_id, e.payload->>'player' AS player, e.payload->>'reason' AS reason, p.net
        FROM events e JOIN player_games p
          ON p.game_id = e.game_id AND p.player = e.payload->>'player'
        WHERE e.type = 'PlayerRemoved'""")
    truth = [(g, e["payload"]["player"], e["payload"]["reason"],
              world.verified[g].results.net.get(e["payload"]["player"], 0))
             for g, evs in world.stored.items() for e in evs if e["type"] == "PlayerRemoved"]
    assert truth and sorted(rows) == sorted(truth)


def test_q28_players_who_shared_a_device(world: World, con: Any) -> None:
    """"Which players connected from the same device?" (a blank hash is no identifier)."""
    rows = q(con, """
        SELECT payload->>'device_hash' AS device, list(DISTINCT actor ORDER BY actor)
        FROM events WHERE type = 'PlayerConnected' AND payload->>'device_hash' <> ''
        GROUP BY 1 HAVING count(DISTINCT actor) > 1""")
    by_device: dict[str, set[str]] = defaultdict(set)
    for evs in world.stored.values():
        for e in evs:
            if e["type"] == "PlayerConnected" and e["payload"]["device_hash"]:
                by_device[e["payload"]["device_hash"]].add(e["actor"])
    truth = {d: sorted(p) for d, p in by_device.items() if len(p) > 1}
    assert truth and dict(rows) == truth


def _truth_flows(world: World) -> dict[tuple[str, str, str, str], float]:
    """(game, src, dst, kind) -> amount, from each finished clean game's logged transfers:
    `direct` = player-to-player; `pot` = each loser's remaining loss split over the
    winners in proportion to their remaining gains (docs/fraud.md)."""
    found = {g for g, _, _ in _truth_findings(world)}
    out: dict[tuple[str, str, str, str], float] = {}
    for g, evs in world.stored.items():
        c = _created(world, g)
        if not c or g in found or not world.records[g].finished:
            continue
        seats = c["seats"]
        net: Counter[str] = Counter()
        direct: Counter[tuple[str, str]] = Counter()
        for e in evs:
            if e["type"] == "ChipsTransferred":
                for t in e["payload"]["transfers"]:
                    net[t["from"]] -= t["amount"]
                    net[t["to"]] += t["amount"]
                    if t["from"] in seats and t["to"] in seats:
                        direct[(t["from"], t["to"])] += t["amount"]
        for (s, d), a in direct.items():
            out[(g, s, d, "direct")] = float(a)
            net[s] += a
            net[d] -= a
        gains = {p: net[p] for p in seats if net[p] > 0}
        total = sum(gains.values())
        for loser in seats:
            if net[loser] < 0 and total:
                for w, gain in gains.items():
                    out[(g, loser, w, "pot")] = -net[loser] * gain / total
    return out


def test_q29_chip_flow_between_two_players_both_ways(world: World, con: Any) -> None:
    """"Chip flow between two players in both directions" (clean finished games)."""
    rows = q(con, "SELECT game_id, src, dst, kind, amount FROM chip_flows")
    truth = _truth_flows(world)
    got = {r[:4]: r[4] for r in rows if r[0] in {k[0] for k in truth}}
    assert got.keys() == truth.keys()
    for k, v in truth.items():
        assert got[k] == pytest.approx(v), k


def _doc_row(doc: str, starts: str) -> str:
    """The one line of docs/<doc> that starts with ``starts`` (a table row)."""
    rows = [x for x in (DOCS / doc).read_text(encoding="utf-8").splitlines()
            if x.startswith(starts)]
    assert len(rows) == 1, (doc, starts)
    return rows[0]


def test_q30_chip_flows_seq_is_documented_as_what_it_is(world: World, con: Any) -> None:
    """"Open the payout of each chip flow": joining chip_flows to events on (game_id, seq)."""
    rows = q(con, "SELECT f.game_id, f.seq, e.type, e.actor FROM chip_flows f "
                  "JOIN events e USING (game_id, seq)")
    assert rows and "ChipsTransferred" not in {r[2] for r in rows}
    claims = {(g, e["seq"]) for g, evs in world.stored.items() for e in evs
              if e["type"] == "ChipsTransferred"}
    for g, seq, _, _ in rows:  # the claim, when logged, comes after the move
        assert any(cg == g and cs > seq for cg, cs in claims), (g, seq)
    row = _doc_row("fraud.md", "| `fraud.chip_flows`")
    assert "(last transfer)" not in row and "ChipsTransferred" in row


# --- flags ---------------------------------------------------------------------------------


def test_q31_flags_with_their_evidence_moves(world: World, con: Any) -> None:
    """The docs/sql.md example: each evidence row names a stored event of the game, and
    `replay` opens the first one."""
    flags = q(con, "SELECT flag_id, players, replay, json_array_length(evidence) FROM flags")
    assert flags, "the scan wrote no flag"
    rows = q(con, """
        SELECT f.flag_id, i + 1 AS n, f.evidence->i->>'game_id' AS game_id,
               (f.evidence->i->>'seq')::INTEGER AS seq, f.evidence->i->>'what' AS what
        FROM flags f, range(json_array_length(f.evidence)::BIGINT) AS t(i) ORDER BY f.flag_id, n""")
    assert len(rows) == sum(f[3] for f in flags)
    seqs = {(g, e["seq"]): e for g, evs in world.stored.items() for e in evs}
    for _, _, game, seq, what in rows:  # "the move the sentence names, by the player it names"
        e = seqs[(game, seq)]
        actor = e["payload"]["player"] if e["type"] == "AutoPlayed" else e["actor"]
        assert what.startswith(f"{actor} "), (game, seq, what)
    first = {r[0]: r for r in rows if r[1] == 1}
    for flag_id, players, replay_cmd, n in flags:
        assert players and q(con, f"SELECT subject, subject_kind FROM flags "
                                  f"WHERE flag_id = {flag_id}") == [
            ("|".join(players), {1: "player", 2: "pair"}.get(len(players), "ring"))]
        want = f"rummyguard replay {first[flag_id][2]} --at {first[flag_id][3]}" if n else ""
        assert replay_cmd == want


# --- documented columns and types -----------------------------------------------------------

DOC_COLUMNS: dict[str, dict[str, str]] = {
    "events": {"event_id": "VARCHAR", "game_id": "VARCHAR", "seq": "INTEGER", "type": "VARCHAR",
               "v": "INTEGER", "stored_v": "INTEGER", "ts": "TIMESTAMP", "ts_text": "VARCHAR",
               "actor": "VARCHAR", "payload": "JSON", "stored_payload": "JSON",
               "prev_hash": "VARCHAR", "hash": "VARCHAR", "chained_by": "VARCHAR",
               "batch_id": "BIGINT", "raw": "VARCHAR"},
    "games": {"game_id": "VARCHAR", "variant": "VARCHAR", "table_id": "VARCHAR",
              "seats": "VARCHAR[]", "dealer": "INTEGER", "stake": "BIGINT",
              "started_at": "TIMESTAMP", "ended_at": "TIMESTAMP", "event_count": "BIGINT",
              "first_ts": "TIMESTAMP", "last_ts": "TIMESTAMP", "last_seq": "INTEGER",
              "chained_by": "VARCHAR"},
    "quarantine": {"source": "VARCHAR", "line_no": "BIGINT", "reason": "VARCHAR",
                   "detail": "VARCHAR", "raw": "VARCHAR", "event_id": "VARCHAR",
                   "game_id": "VARCHAR", "seq": "BIGINT", "batch_id": "BIGINT",
                   "received_at": "TIMESTAMP"},
    "findings": {"game_id": "VARCHAR", "seq": "BIGINT", "rule": "VARCHAR", "kind": "VARCHAR",
                 "message": "VARCHAR", "variant": "VARCHAR"},
    "player_games": {"game_id": "VARCHAR", "player": "VARCHAR", "seat": "INTEGER",
                     "variant": "VARCHAR", "net": "BIGINT", "score": "BIGINT", "won": "BOOLEAN",
                     "clean": "BOOLEAN", "halted": "BOOLEAN", "finished": "BOOLEAN"},
    "moves": {"game_id": "VARCHAR", "seq": "INTEGER", "player": "VARCHAR", "seat": "TINYINT",
              "variant": "VARCHAR", "type": "VARCHAR", "ts_ms": "BIGINT", "think_ms": "BIGINT",
              "turn": "INTEGER", "hand_size": "SMALLINT", "dist": "SMALLINT",
              "difficulty": "SMALLINT", "auto": "BOOLEAN"},
    "chip_flows": {"game_id": "VARCHAR", "seq": "INTEGER", "src": "VARCHAR", "dst": "VARCHAR",
                   "amount": "DOUBLE", "kind": "VARCHAR"},
    "fraud.player_games": {
        "game_id": "VARCHAR", "player": "VARCHAR", "seat": "TINYINT", "n_seats": "TINYINT",
        "variant": "VARCHAR", "table_id": "VARCHAR", "stake": "BIGINT", "start_ms": "BIGINT",
        "end_ms": "BIGINT", "won": "BOOLEAN", "net": "BIGINT", "deal_dist": "FLOAT",
        "left_game": "BOOLEAN", "removed": "BOOLEAN", "autoplays": "SMALLINT",
        "fresh": "SMALLINT", "moves": "INTEGER", "halted": "BOOLEAN", "findings": "INTEGER"},
    "flags": {"flag_id": "BIGINT", "subject_kind": "VARCHAR", "subject": "VARCHAR",
              "players": "VARCHAR[]", "score": "DOUBLE", "mechanism": "VARCHAR",
              "source": "VARCHAR", "signals": "JSON", "evidence": "JSON", "replay": "VARCHAR"},
}
BATCH_COLUMNS = ["batch_id", "source", "first_line", "last_line", "lines_read", "stored",
                 "duplicates", "quarantined", "started_at", "committed_at"]


@pytest.mark.parametrize("view", sorted(DOC_COLUMNS))
def test_q32_every_documented_column_with_its_type(con: Any, view: str) -> None:
    got = dict(q(con, f"SELECT column_name, column_type FROM (DESCRIBE {view})"))
    assert got == DOC_COLUMNS[view]


def test_q33_ingest_batches_columns(con: Any) -> None:
    got = [r[0] for r in q(con, "SELECT column_name FROM (DESCRIBE ingest_batches)")]
    assert got == BATCH_COLUMNS


def test_q34_no_silent_nulls_where_values_are_promised(world: World, con: Any) -> None:
    """Columns the doc gives a value for every row are never NULL (games: only a game
    without GameCreated has NULL setup; `ended_at` NULL only for unfinished games)."""
    for view, cols in {
        "events": ["event_id", "game_id", "seq", "type", "v", "stored_v", "ts", "ts_text",
                   "actor", "payload", "stored_payload", "prev_hash", "hash", "chained_by",
                   "batch_id", "raw"],
        "findings": ["game_id", "seq", "rule", "kind", "message"],
        "moves": ["game_id", "seq", "player", "seat", "variant", "type", "ts_ms", "think_ms",
                  "turn", "hand_size", "auto"],
        "chip_flows": ["game_id", "seq", "src", "dst", "amount", "kind"],
        "player_games": ["game_id", "player", "seat", "net", "won", "clean", "halted",
                         "finished"],
        "ingest_batches": BATCH_COLUMNS,
        "quarantine": ["source", "line_no", "reason", "detail", "raw", "batch_id",
                       "received_at"],
    }.items():
        nulls = " + ".join(f"count(*) FILTER (WHERE {c} IS NULL)" for c in cols)
        assert q(con, f"SELECT {nulls} FROM {view}") == [(0,)], view
    nulls = q(con, "SELECT game_id FROM games WHERE variant IS NULL OR seats IS NULL "
                   "OR stake IS NULL OR started_at IS NULL OR dealer IS NULL")
    assert sorted(nulls) == [("BRK",), ("GAP",), ("MIX",)]


# --- the `rummyguard sql` command -----------------------------------------------------------


def _sql(world: World, query: str, *extra: str) -> Result:
    return CliRunner().invoke(app, ["sql", query, "--db", str(world.db), *extra])


def test_q35_sql_json_exact_big_ints_nulls_unicode_nested(world: World) -> None:
    out = _sql(world, f"""
        SELECT g.game_id, g.stake, g.seats, g.ended_at, g.started_at,
               170141183460469231731687303715884105727::HUGEINT AS huge,
               sum(g.stake) OVER () AS total, {{'s': g.seats, 'n': NULL}} AS nested,
               e.payload
        FROM games g JOIN events e ON e.game_id = g.game_id AND e.seq = 0
        WHERE g.game_id IN ('{world.big}', '{world.uni_game}', '{world.unfinished}')
        ORDER BY g.game_id""", "--format", "json")
    assert out.exit_code == 0, out.output
    assert "9007199254740991," in out.stdout  # the number as written, not 9.007e15
    rows = json.loads(out.stdout)  # not orjson: it reads integers past 64 bits as floats
    by_id = {r["game_id"]: r for r in rows}
    total = sum(_created(world, g)["stake"] for g in (world.big, world.uni_game, world.unfinished))
    assert total > 2**53
    assert all(r["total"] == total and r["huge"] == 2**127 - 1 for r in rows)
    assert by_id[world.big]["stake"] == BIG_STAKE
    assert by_id[world.uni_game]["seats"][0] == UNI
    assert by_id[world.uni_game]["nested"] == {"s": by_id[world.uni_game]["seats"], "n": None}
    assert by_id[world.unfinished]["ended_at"] is None
    assert by_id[world.big]["started_at"] == (
        _dt(_created(world, world.big)["ts"]).replace(tzinfo=UTC).isoformat())
    assert json.loads(by_id[world.uni_game]["payload"])["seats"][0] == UNI


def test_q36_sql_csv_exact(world: World) -> None:
    out = _sql(world, f"SELECT game_id, stake, seats, ended_at, 2::HUGEINT << 100 AS p "
                      f"FROM games WHERE game_id IN ('{world.big}', '{world.uni_game}', "
                      f"'{world.unfinished}') ORDER BY game_id", "--format", "csv")
    assert out.exit_code == 0, out.output
    rows = list(csv.reader(io.StringIO(out.stdout)))
    assert rows[0] == ["game_id", "stake", "seats", "ended_at", "p"]
    body = {r[0]: r for r in rows[1:]}
    assert body[world.big][1] == str(BIG_STAKE)
    assert json.loads(body[world.uni_game][2])[0] == UNI
    assert body[world.unfinished][3] == ""
    assert {r[4] for r in body.values()} == {str(2**101)}


def test_q37_sql_refuses_writes_with_one_line(world: World) -> None:
    for query in ("INSERT INTO store.events (event_id) VALUES ('x')",
                  "CREATE TABLE main.t AS SELECT 1", "DELETE FROM store.quarantine",
                  "DROP VIEW games", "UPDATE store.events SET actor = 'x'",
                  f"COPY games TO '{world.db.parent / 'x.csv'}'",
                  f"ATTACH '{world.db.parent / 'y.duckdb'}' AS y",
                  "SET enable_external_access = true", "SELECT * FROM read_text('/etc/hosts')"):
        out = _sql(world, query)
        assert out.exit_code == 2, (query, out.output)
        assert out.stdout == ""
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: refused"), (query, out.stderr)


def test_q38_sql_bad_query_exit_code(world: World) -> None:
    for query in ("SELEC 1", "SELECT nope FROM games", "SELECT 1; SELECT 2", ""):
        out = _sql(world, query, "--format", "json")
        assert out.exit_code == 2, (query, out.output)
        assert out.stdout == "" and len(out.stderr.strip().splitlines()) == 1


def test_q39_sql_repeated_names_temp_tables_blobs_and_non_stores(world: World,
                                                                 tmp_path: Path) -> None:
    """The doc's promises about `rummyguard sql`: a repeated column name gets `_1`; a TEMP
    table is allowed; a BLOB prints as DuckDB prints it; a `.jsonl` as --db is refused."""
    out = _sql(world, "SELECT g.game_id, p.game_id, p.player FROM games g JOIN player_games p "
                      "ON p.game_id = g.game_id ORDER BY 1, 3 LIMIT 1", "-f", "json")
    assert list(orjson.loads(out.stdout)[0]) == ["game_id", "game_id_1", "player"]
    out = CliRunner().invoke(app, ["sql", "-f", "csv", "--db", str(world.db), "--",
                                   "-- why: the number of games\nSELECT count(*) AS n FROM games"])
    assert out.exit_code == 0 and out.stdout == f"n\n{len(world.stored)}\n", out.output
    out = _sql(world, "CREATE TEMP TABLE t AS SELECT 1 AS x")
    assert out.exit_code == 0, out.output
    out = _sql(world, "SELECT raw_bytes FROM store.quarantine WHERE reason = 'not_json' "
                      "AND line_no IN (11, 12) ORDER BY line_no", "-f", "json")
    assert orjson.loads(out.stdout) == [{"raw_bytes": '{"\\xC3\\xBCn\\xC3\\xAFcode": 1, '},
                                        {"raw_bytes": '{"note": "caf\\xE9"}'}]
    out = CliRunner().invoke(app, ["sql", "SELECT 1", "--db", str(world.db.parent / "bad.jsonl")])
    assert out.exit_code == 2 and len(out.stderr.strip().splitlines()) == 1


def _simple_game(game: str, n: int) -> list[Event]:
    """``n`` events of a game without GameCreated (connections only): enough for ingest."""
    return [{"event_id": f"{game}-{i}", "game_id": game, "seq": i, "type": "PlayerConnected",
             "v": 1, "ts": f"2026-11-21T10:00:{i:02d}.000Z", "actor": "pq",
             "payload": {"ip_hash": "", "device_hash": "", "client": "web"}} for i in range(n)]


def test_q40_quarantined_lines_a_later_ingest_stored_are_no_findings(tmp_path: Path) -> None:
    """docs/sql.md: a quarantined line that a later ingest stored at that very game and seq
    (files ingested out of order) is not a LOG-EVENT finding; the quarantine keeps it."""
    evs = _simple_game("OOO", 8)
    _dump(tmp_path / "tail.jsonl", evs[3:])
    _dump(tmp_path / "head.jsonl", evs[:3])
    db = tmp_path / "o.duckdb"
    for name in ("tail", "head", "tail"):
        _cli("ingest", str(tmp_path / f"{name}.jsonl"), "--db", str(db), "--no-progress")
    _cli("verify", "--db", str(db), "--no-progress")
    c = connect_readonly(db)
    try:
        assert q(c, "SELECT reason, count(*) FROM quarantine GROUP BY 1") == [("sequence_gap", 5)]
        assert q(c, "SELECT count(*) FROM events") == [(8,)]
        rules = Counter(r[0] for r in q(c, "SELECT rule FROM findings"))
        assert rules == Counter(f.rule for f in replay(evs).findings)
        assert "LOG-EVENT" not in rules
    finally:
        c.close()


def test_q41_ingest_times_are_utc_whatever_the_machine_zone(tmp_path: Path) -> None:
    """"How long did each batch take, and when was each line quarantined?" on a store
    ingested on a machine whose zone is not UTC (docs/sql.md: timestamps in UTC)."""
    import os
    import subprocess
    import sys

    _dump(tmp_path / "g.jsonl", [*_simple_game("TZ", 2), {**_simple_game("TZ", 4)[3]}])
    db = tmp_path / "tz.duckdb"
    before = datetime.now(UTC).replace(tzinfo=None)
    done = subprocess.run([sys.executable, "-m", "rummyguard.cli", "ingest",
                           str(tmp_path / "g.jsonl"), "--db", str(db), "--no-progress"],
                          env={**os.environ, "TZ": "Asia/Kolkata"}, capture_output=True,
                          check=False, text=True)
    assert done.returncode == 1, done.stderr  # 1: a line was quarantined
    after = datetime.now(UTC).replace(tzinfo=None)
    c = connect_readonly(db)
    try:
        (started, committed), = q(c, "SELECT started_at, committed_at FROM ingest_batches")
        (received,), = q(c, "SELECT received_at FROM quarantine")
    finally:
        c.close()
    for when in (started, committed, received):
        assert before <= when <= after, (started, committed, received)


def test_q41b_verified_at_is_utc_whatever_the_machine_zone(tmp_path: Path) -> None:
    """The time `verify --db` records for each game (store.replay_games.verified_at) is UTC
    like every other timestamp of the store, also on a machine whose zone is not."""
    import os
    import subprocess
    import sys

    _dump(tmp_path / "g.jsonl", _simple_game("TZV", 2))
    db = tmp_path / "tzv.duckdb"
    env = {**os.environ, "TZ": "Asia/Kolkata"}
    before = datetime.now(UTC).replace(tzinfo=None)
    for args in (["ingest", str(tmp_path / "g.jsonl")], ["verify"]):
        done = subprocess.run([sys.executable, "-m", "rummyguard.cli", *args, "--db", str(db)],
                              env=env, capture_output=True, check=False, text=True)
        assert done.returncode in (0, 1), done.stderr
    after = datetime.now(UTC).replace(tzinfo=None)
    c = connect_readonly(db)
    try:
        stamps = [row[0] for row in q(c, "SELECT verified_at FROM store.replay_games")]
    finally:
        c.close()
    assert stamps and all(before <= when <= after for when in stamps), (before, stamps, after)


def test_q42_quarantined_line_not_utf8_raw_and_bytes(world: World, con: Any) -> None:
    """"Show me the raw text of each unreadable line": invalid UTF-8 reads with U+FFFD in
    `raw`; `store.quarantine.raw_bytes` keeps the bytes (docs/sql.md)."""
    rows = q(con, "SELECT q.raw, s.raw_bytes FROM quarantine q JOIN store.quarantine s "
                  "USING (source, line_no, reason) WHERE q.raw LIKE '%note%caf%'")
    assert rows == [(BAD_UTF8.decode("utf-8", errors="replace"), BAD_UTF8)]


def _sizes_after(events: list[Event]) -> dict[int, list[int]]:
    """seq -> every seat's hand size after that event, from the replay's state."""
    out: dict[int, list[int]] = {}

    def observe(engine: Any, event: Event) -> None:
        st = engine.variant
        sizes = st.hand_size if isinstance(getattr(st, "hand_size", None), list) else [
            sum(h) for h in st.hands]
        out[event["seq"]] = list(sizes)

    replay(events, observer=observe)
    return out


def test_q43_hand_size_before_each_move(world: World, con: Any) -> None:
    """"Average hand size when players lay down / meld / buy, per variant" — `hand_size`
    against the replay's hand before the move, for every move type the doc covers."""
    rows = q(con, "SELECT game_id, seq, seat, type, hand_size, variant FROM moves")
    sizes = {g: _sizes_after(evs) for g, evs in world.stored.items() if _created(world, g)}
    wrong: Counter[tuple[str, str]] = Counter()
    for g, seq, seat, type_, hand_size, variant in rows:
        before = max(s for s in sizes[g] if s < seq)
        if hand_size != sizes[g][before][seat]:
            wrong[(variant, type_)] += 1
    assert not wrong or all(_documented_hand_size(v, t) for v, t in wrong), wrong


def _documented_hand_size(variant: str, type_: str) -> bool:
    """The moves row of docs/fraud.md names this exception to "before the move"."""
    row = _doc_row("fraud.md", "| `fraud.moves`")
    return (variant == "michigan" and "Michigan" in row) or f"`{type_}`" in row


def test_q44_halted_game_in_the_scan_facts(world: World, con: Any) -> None:
    """"The moves of the halted game" and "when did it end" from the scan's tables."""
    g = world.halted
    halt = next(f.seq for f in world.records[g].findings if f.kind == "integrity")
    last_move = q(con, f"SELECT max(seq) FROM moves WHERE game_id = '{g}'")[0][0]
    moves_after = [e for e in world.stored[g] if e["seq"] >= halt and e["actor"] != "system"
                   and e["type"] not in _NOT_MOVES]
    assert last_move < halt and moves_after  # the facts stop at the halt
    end_ms, last_ts = q(con, f"SELECT max(p.end_ms), epoch_ms(max(g.last_ts)) FROM "
                             f"fraud.player_games p JOIN games g USING (game_id) "
                             f"WHERE game_id = '{g}'")[0]
    assert end_ms < last_ts
    doc_pg = _doc_row("sql.md", "| `start_ms`, `end_ms` |")
    limits = (DOCS / "fraud.md").read_text(encoding="utf-8").split("### Known limits")[1]
    assert "halt" in doc_pg and "halted" in limits.split("##")[0]


def test_q45_sql_json_decimals_exact(world: World) -> None:
    """"Each game's stake with a 5 % fee" — DuckDB's answer is an exact DECIMAL; the JSON
    and CSV outputs must say the same number."""
    want = Decimal(BIG_STAKE) * Decimal("1.05")
    query = (f"SELECT stake * 1.05 AS with_fee, [stake * 1.05] AS fees FROM games "
             f"WHERE game_id = '{world.big}'")
    out = _sql(world, query, "-f", "json")
    assert out.exit_code == 0, out.output
    rows = json.loads(out.stdout, parse_float=Decimal)
    assert rows == [{"with_fee": want, "fees": [want]}]
    out = _sql(world, query, "-f", "csv")
    assert list(csv.reader(io.StringIO(out.stdout)))[1] == [str(want), f"[{want}]"]


def test_q46_player_games_net_is_the_replays_not_the_payout(world: World, con: Any) -> None:
    """"Net chips per player" over games whose payout the platform got wrong: `net` is the
    replay's due amount, not the logged GameEnded; the doc must say so."""
    rows = q(con, """
        SELECT p.game_id, p.player, p.net, CAST(e.payload->'net'->>p.player AS BIGINT)
        FROM player_games p JOIN events e ON e.game_id = p.game_id AND e.type = 'GameEnded'
        WHERE p.finished AND p.game_id IN (SELECT game_id FROM findings WHERE rule = 'C-CLAIM')""")
    assert rows
    for g, player, net, _ in rows:
        assert net == world.verified[g].results.net.get(player, 0)
    assert any(net != logged for *_, net, logged in rows)
    row = _doc_row("sql.md", "| `net` | BIGINT | chips won")
    assert "C-CLAIM" in row and "replay" in row


def test_q47_scan_player_games_per_seated_player(world: World, con: Any) -> None:
    """"Each player's games with leaves, removals, auto-plays, Fresh presses and moves" from
    the scan's rows (`fraud.player_games`, docs/sql.md): `won`/`net` NULL while the game has
    no result; the counts as the log says."""
    rows = q(con, "SELECT game_id, player, seat, n_seats, variant, table_id, stake, start_ms, "
                  "won, net, left_game, removed, autoplays, fresh, moves, halted, findings "
                  "FROM fraud.player_games")
    moves = Counter((g, m[0]) for (g, _), m in _truth_moves(world).items())
    truth = {}
    for g, evs in world.stored.items():
        c, rec = _created(world, g), world.records[g]
        if c is None:
            continue
        done = rec.finished and not rec.halted
        for seat, p in enumerate(c["seats"]):
            truth[(g, p)] = (
                seat, len(c["seats"]), c["variant"], c["table_id"], c["stake"], _ms(c["ts"]),
                (p in rec.results.winners) if done else None,
                rec.results.net.get(p, 0) if done else None,
                any(e["type"] == "PlayerLeft" and e["actor"] == p for e in evs),
                any(e["type"] == "PlayerRemoved" and e["payload"]["player"] == p for e in evs),
                sum(e["type"] == "AutoPlayed" and e["payload"]["player"] == p for e in evs),
                sum(e["type"] == "FreshPressed" and e["actor"] == p for e in evs),
                moves[(g, p)], rec.halted, len(rec.findings))
    assert {(r[0], r[1]): tuple(r[2:]) for r in rows} == truth


def test_q48_sql_json_names_repeated_columns_as_duckdb_df(world: World, con: Any) -> None:
    """"Each finding with its game and the player rows": three views joined, three
    `game_id` columns; the JSON keys are the names DuckDB's `.df()` gives them."""
    for query in (
        "SELECT g.game_id, p.game_id, f.game_id, f.rule FROM games g "
        "JOIN player_games p ON p.game_id = g.game_id JOIN findings f ON f.game_id = g.game_id "
        "ORDER BY ALL LIMIT 1",
        'SELECT 1 AS a, 2 AS "A", 3 AS a, 4 AS a_2, 5 AS a',
    ):
        out = _sql(world, query, "-f", "json")
        assert out.exit_code == 0, out.output
        assert list(orjson.loads(out.stdout)[0]) == list(con.sql(query).df().columns), query


def test_q49_timestamptz_answers_in_utc_on_any_machine(world: World) -> None:
    """"Moves per UTC day from ts_ms" and "event time as a TIMESTAMPTZ" asked on a machine
    whose zone is not UTC: the same instants, printed in UTC (docs/sql.md)."""
    import os
    import subprocess
    import sys

    # a move late in its UTC day: already the next day at UTC+14
    (game, seq), (*_, ts_ms, _) = next((k, m) for k, m in sorted(_truth_moves(world).items())
                                       if datetime.fromtimestamp(m[2] / 1000, UTC).hour >= 12)
    query = (f"SELECT epoch_ms(ts::TIMESTAMPTZ) - epoch_ms(ts) AS shift, to_timestamp(0) AS t, "
             f"CAST(to_timestamp(ts_ms / 1000) AS DATE) AS day FROM events JOIN moves "
             f"USING (game_id, seq) WHERE game_id = '{game}' AND seq = {seq}")
    done = subprocess.run([sys.executable, "-m", "rummyguard.cli", "sql", query, "-f", "json",
                           "--db", str(world.db)], env={**os.environ, "TZ": "Pacific/Kiritimati"},
                          capture_output=True, check=False, text=True)
    assert done.returncode == 0, done.stderr
    day = datetime.fromtimestamp(ts_ms / 1000, UTC).date().isoformat()
    assert json.loads(done.stdout) == [{"shift": 0, "t": "1970-01-01T00:00:00+00:00",
                                        "day": day}]
