"""Differential test of the log-level checks: mutated clean logs, the independent
:mod:`log_oracle` against ``replay()`` and ``verify FILES --json``.

Each mutation breaks one game at the envelope level (EVENTS.md); the oracle predicts the
first LOG-* finding (seq, rule) and where the replay halts, and the engine must agree.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import log_oracle as lo

from rummyguard.events.hashing import canonical
from rummyguard.replay.engine import replay

DATA = Path(__file__).parent / "data"
Event = dict[str, Any]


def load(path: Path) -> dict[str, list[Event]]:
    games: dict[str, list[Event]] = {}
    for line in path.read_bytes().splitlines():
        if line.strip():
            e = orjson.loads(line)
            games.setdefault(e["game_id"], []).append(e)
    return games


def clean_games() -> list[tuple[str, list[Event]]]:
    """Clean logs of every variant: the spec examples' clean files and small seeded worlds."""
    out = []
    for variant in ("classic", "r500", "liverpool", "michigan"):
        for path in sorted((DATA / variant).glob("clean*.jsonl"))[:1]:
            for gid, events in load(path).items():
                out.append((f"{path.name}:{gid}", events))
    return out


def world_games(variant: str, games: int = 2) -> list[tuple[str, list[Event]]]:
    from rummyguard.sim.world import WorldConfig, build_world, run_world

    chunks: list[bytes] = []
    run_world(build_world(WorldConfig(games=games, seed=5, variants=(variant,),
                                      fraud_rate=0.0)), chunks.append)
    games_: dict[str, list[Event]] = {}
    for line in b"".join(chunks).splitlines():
        e = orjson.loads(line)
        games_.setdefault(e["game_id"], []).append(e)
    return [(f"world-{variant}:{g}", ev) for g, ev in games_.items()]


def _swap_card(payload: dict[str, Any]) -> bool:
    """Change one card code in a payload to another valid one (schema stays valid)."""
    for key, value in payload.items():
        if key == "card" and isinstance(value, str) and len(value) == 2:
            payload[key] = "2C" if value != "2C" else "3C"
            return True
        if key == "cards" and isinstance(value, list) and value and isinstance(value[-1], str):
            value[-1] = "2C" if value[-1] != "2C" else "3C"
            return True
    return False


def mutations(events: list[Event], k: int) -> Iterator[tuple[str, list[Event]]]:
    """Broken copies of one clean, chained game; ``k`` is a middle position."""
    ev = copy.deepcopy(events)
    n = len(ev)
    chained = "hash" in ev[0]

    def c() -> list[Event]:
        return copy.deepcopy(ev)

    if chained:
        m = c()
        m[k]["ts"] = m[k]["ts"][:-2] + ("1Z" if m[k]["ts"][-2] != "1" else "2Z")
        yield "edit-ts", m
        m = c()
        if _swap_card(m[k]["payload"]):
            yield "edit-card", m
            yield "rechain-card", lo.rechain(m)
    m = c()
    m[k], m[k + 1] = m[k + 1], m[k]
    yield "swap", m
    yield "swap-rechain", lo.rechain(m) if chained else m
    m = c()
    del m[k]
    yield "drop", m
    m = c()
    del m[0]
    yield "drop-first", m
    m = c()
    m.insert(k + 1, copy.deepcopy(m[k]))
    yield "dup-same", m
    m = c()
    d = copy.deepcopy(m[k])
    d["event_id"] += "-x"
    m.insert(k + 1, d)
    yield "dup-other-id", m
    m = c()
    m[k + 1]["event_id"] = m[k]["event_id"]
    yield "id-reused", lo.rechain(m) if chained else m
    yield "truncate", c()[: k + 1]
    if chained:
        m = c()
        m[k]["hash"] = "f" * 64
        yield "edit-hash", m
        m = c()
        m[k]["prev_hash"] = "e" * 64
        yield "edit-prev", m
        m = c()
        m[0]["prev_hash"] = "1" * 64
        yield "edit-genesis", m
        m = c()
        del m[k]["hash"], m[k]["prev_hash"]
        yield "strip-one", m
        m = c()
        del m[k]["hash"]
        yield "strip-hash-only", m
    m = c()
    m[k]["seq"] += 3
    yield "seq-ahead", m
    m = c()
    m[k]["seq"] -= 1
    yield "seq-back", m
    m = c()
    m[k]["seq"] += 1
    for e in m[k + 1:]:
        e["seq"] += 1
    yield "seq-shift-rechain", lo.rechain(m) if chained else m
    m = c()
    unk = {**copy.deepcopy(m[k]), "type": "CoffeeBreak", "v": 1, "payload": {}}
    m.insert(k, unk)
    for i, e in enumerate(m):
        e["seq"] = i
    yield "unknown-type", lo.rechain(m) if chained else m
    m = c()
    m[k]["v"] = lo.CATALOG[m[k]["type"]] + 1
    yield "future-version", lo.rechain(m) if chained else m
    m = c()
    m[k]["v"] = 9
    yield "future-version-unchained-edit", m
    m = c()
    created = m[0]
    foreign = {**copy.deepcopy(created), "event_id": created["event_id"] + "-2"}
    m.insert(k, foreign)
    for i, e in enumerate(m):
        e["seq"] = i
    yield "second-created", lo.rechain(m) if chained else m
    m = c()
    other = copy.deepcopy(m[: k + 1])
    for e in other:
        e["game_id"] += "-other"
        e["event_id"] += "-other"
    mixed = [x for pair in zip(m[: k + 1], other, strict=True) for x in pair] + m[k + 1:]
    yield "interleave", mixed
    m = c()
    for e in m:
        e.pop("hash", None)
        e.pop("prev_hash", None)
    yield "strip-all", m
    m = c()
    legacy = [i for i, e in enumerate(m) if _to_v1(e)]
    if legacy:
        yield "legacy-v1", lo.rechain(m) if chained else m
    m = c()
    variant = m[0]["payload"]["variant"]
    alien = ("FreshPressed", {}) if variant != "classic" else ("WidowBought", {"price": 5})
    m.insert(k, {**copy.deepcopy(m[k]), "type": alien[0], "v": 1, "payload": alien[1],
                 "actor": m[0]["payload"]["seats"][0], "event_id": m[k]["event_id"] + "-a"})
    for i, e in enumerate(m):
        e["seq"] = i
    yield "other-variant-type", lo.rechain(m) if chained else m
    if n > k + 2:
        yield "after-end-connect", _after_end(c())


_RANKS = {"T": "10", "J": "J", "Q": "Q", "K": "K", "A": "A"}
_SUITS = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}


def _legacy_card(code: str) -> dict[str, str]:
    if code == "JK":
        return {"rank": "joker"}
    return {"rank": _RANKS.get(code[0], code[0]), "suit": _SUITS[code[1]]}


def _to_v1(e: Event) -> bool:
    """Rewrite a one-card ``Drew`` or a ``Discarded`` v2 as the v1 export (EVENTS.md
    "Older versions still accepted"); False if it has no v1 form."""
    p = e["payload"]
    if e["type"] == "Drew" and e["v"] == 2 and len(p["cards"]) == 1:
        e["v"], e["payload"] = 1, {"from": {"stock": "deck", "discard": "pile"}[p["source"]],
                                   "card": _legacy_card(p["cards"][0])}
        return True
    if e["type"] == "Discarded" and e["v"] == 2:
        e["v"], e["payload"] = 1, {"card": _legacy_card(p["card"])}
        return True
    return False


def _after_end(m: list[Event]) -> list[Event]:
    """A PlayerConnected after GameEnded (sessions may come at any moment)."""
    last = m[-1]
    actor = m[0]["payload"]["seats"][0]
    m.append({"event_id": last["event_id"] + "-late", "game_id": last["game_id"],
              "seq": last["seq"] + 1, "type": "PlayerConnected", "v": 1, "ts": last["ts"],
              "actor": actor, "payload": {"ip_hash": "a", "device_hash": "b", "client": "c"}})
    return lo.rechain(m) if "hash" in m[0] else m


def engine_view(events: list[Event]) -> tuple[list[tuple[int, str]], int | None, int | None]:
    """(LOG-* findings in the record's order, seq of a halt at a LOG-* finding, seq of a
    halt at a rules finding such as C-HOLD)."""
    rec = replay(copy.deepcopy(events))
    logs = [(f.seq, f.rule) for f in rec.findings if f.rule.startswith("LOG-")]
    halt = rules_halt = None
    if rec.halted and rec.findings:
        if rec.findings[-1].rule.startswith("LOG-"):
            halt = rec.findings[-1].seq
        else:
            rules_halt = rec.findings[-1].seq
    return logs, halt, rules_halt


def compare(name: str, events: list[Event]) -> list[str]:
    """Disagreements between the oracle and replay() on one log (empty: they agree).

    A replay halted by the rules (C-HOLD: the state cannot follow) reads nothing after
    the halting event (RULES.md §0 "the replay halts"), so the oracle is then asked
    about the events up to that one only."""
    logs, halt, rules_halt = engine_view(events)
    if rules_halt is not None:
        game = events[0]["game_id"]
        cut = next(i for i, e in enumerate(events)
                   if e["seq"] == rules_halt and e["game_id"] == game)
        events = events[: cut + 1]
    pred = lo.predict(events)
    out = []
    first = logs[0] if logs else None
    if first != pred.first:
        out.append(f"{name}: first finding engine {first} oracle {pred.first}")
    elif first is not None and sorted(r for s, r in logs if s == first[0]) != sorted(
            pred.rules_at(first[0])):
        out.append(f"{name}: rules at seq {first[0]}: engine "
                   f"{[r for s, r in logs if s == first[0]]} oracle {pred.rules_at(first[0])}")
    if halt != pred.halt_seq:
        out.append(f"{name}: halt engine {halt} oracle {pred.halt_seq}")
    return out


# -- the JCS check the oracle's hashing relies on ----------------------------------------
def test_oracle_jcs_matches_canonical_on_inputs() -> None:
    tricky = {"b": "é\u2028\x01\x1f\"\\", "a": [1, -2, True, None], "\u00e9": 0,
              "\U0001f600": 1, "\uff61": 2, "z": {"y": "\t\n\r\b\f"}}
    assert lo.jcs(tricky) == canonical(tricky)
    # keys ordered by UTF-16 units: U+1F600 (D83D..) sorts before U+FF61
    assert lo.jcs(tricky).index("\U0001f600".encode()) < lo.jcs(tricky).index("\uff61".encode())
    hashed = 0
    for _, events in clean_games() + world_games("r500", 1):
        for e in events:
            assert lo.jcs({k: v for k, v in e.items() if k != "hash"}) == canonical(
                {k: v for k, v in e.items() if k != "hash"})
            if "hash" in e:
                assert lo.sha(e) == e["hash"]
                hashed += 1
    assert hashed > 50


def test_oracle_clean_logs_have_no_log_findings() -> None:
    for name, events in clean_games():
        assert lo.predict(events).findings == [], name
        assert engine_view(events)[:2] == ([], None), name


def test_oracle_catches_what_it_should() -> None:
    """The oracle itself is not vacuous: known breaks give known predictions."""
    _, events = clean_games()[0]
    m = copy.deepcopy(events)
    del m[3]
    assert lo.predict(m).first == (4, "LOG-SEQ")
    assert lo.predict(m).rules_at(4) == ["LOG-SEQ", "LOG-CHAIN"]
    m = copy.deepcopy(events)
    m[2]["v"] = 7
    p = lo.predict(lo.rechain(m))
    assert p.first == (2, "LOG-EVENT") and p.halt_seq == 2


KNOWN_ENGINE_BUGS: set[str] = set()  # tests/test_audit8_log.py


@pytest.mark.parametrize("variant", ["classic", "r500", "liverpool", "michigan"])
def test_differential_replay(variant: str) -> None:
    games = [g for g in clean_games() if g[0].startswith("clean")
             and g[1][0]["payload"]["variant"] == variant] + world_games(variant, 1)
    disagreements: list[str] = []
    compared = 0
    for name, events in games:
        for mname, mutated in mutations(events, k=min(5, len(events) - 3)):
            if mname in KNOWN_ENGINE_BUGS:
                continue
            compared += 1
            disagreements += compare(f"{name}/{mname}", mutated)
    assert compared >= 20
    assert disagreements == [], "\n".join(disagreements)


def test_differential_verify_files(tmp_path: Path) -> None:
    """``verify FILES --json`` says what replay() says, per game, on a few mutations."""
    from typer.testing import CliRunner

    from rummyguard.cli.app import app

    _, events = world_games("classic", 1)[0]
    picked = dict(mutations(events, k=5))
    for mname in ("swap", "drop", "dup-same", "edit-hash", "unknown-type", "future-version",
                  "strip-all", "interleave"):
        path = tmp_path / f"{mname}.jsonl"
        path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in picked[mname]))
        res = CliRunner().invoke(app, ["verify", str(path), "--json", "--no-progress"])
        out = json.loads(res.stdout)
        by_game: dict[str, list[Event]] = {}
        for e in picked[mname]:
            by_game.setdefault(e["game_id"], []).append(e)
        for g in out["games"]:
            pred = lo.predict(by_game[g["game_id"]])
            logs = [(f["seq"], f["rule"]) for f in g["findings"] if f["rule"].startswith("LOG-")]
            assert (logs[0] if logs else None) == pred.first, (mname, g["game_id"], logs)


def test_legacy_v1_replays_as_v2() -> None:
    """EVENTS.md: "Upcasting v1 -> v2 is exact and loses nothing": a game whose every
    one-card Drew and Discarded is rewritten as the v1 export (and re-chained over the
    v1 bytes) replays to the same findings and results."""
    for name, events in world_games("classic", 1) + world_games("liverpool", 1):
        legacy = dict(mutations(events, 5))["legacy-v1"]
        assert sum(e["v"] == 1 and e["type"] in ("Drew", "Discarded") for e in legacy) > 5
        assert lo.predict(legacy).findings == []
        a, b = replay(copy.deepcopy(events)), replay(legacy)
        assert [f.to_dict() for f in a.findings] == [f.to_dict() for f in b.findings], name
        assert a.results.to_dict() == b.results.to_dict()


@pytest.mark.parametrize("mname", ["swap", "dup-same", "dup-other-id", "edit-prev",
                                   "unknown-type", "future-version", "strip-one",
                                   "strip-all", "legacy-v1"])
def test_differential_ingest(tmp_path: Path, mname: str) -> None:
    """``ingest`` of a mutated log: the summary balances, each line is stored,
    a duplicate or quarantined as the oracle says (with one of the reasons that apply),
    and ``verify-log`` finds the store's own chains intact."""
    import duckdb
    from typer.testing import CliRunner

    from rummyguard.cli.app import app

    _, events = world_games("r500", 1)[0]
    m = dict(mutations(events, 5))[mname]
    path = tmp_path / "m.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in m))
    db = tmp_path / "s.duckdb"
    runner = CliRunner()
    s = json.loads(runner.invoke(app, ["ingest", str(path), "--db", str(db), "--json",
                                       "--no-progress"]).stdout)
    assert s["read"] == len(m) == s["stored"] + s["duplicates"] + s["quarantined"]
    pred = lo.predict_ingest(m)
    assert [s["stored"], s["duplicates"], s["quarantined"]] == [
        sum(a == what for a, _ in pred) for what in ("stored", "duplicate", "quarantined")]
    con = duckdb.connect(str(db), read_only=True)
    try:
        (cat,), = con.execute(  # the store's table (a view of the same name is in main)
            "SELECT table_catalog FROM information_schema.tables "
            "WHERE table_name = 'quarantine' AND table_type = 'BASE TABLE'").fetchall()
        got = dict(con.execute(f'SELECT line_no, reason FROM "{cat}".store.quarantine')
                   .fetchall())
    finally:
        con.close()
    for line_no, (status, reasons) in enumerate(pred, 1):
        if status == "quarantined":
            assert got.get(line_no) in reasons, (line_no, got.get(line_no), reasons)
        else:
            assert line_no not in got, (line_no, got[line_no])
    report = json.loads(runner.invoke(app, ["verify-log", "--json", "--db", str(db)]).stdout)
    assert report["problems"] == []


@pytest.mark.parametrize(("tamper", "expected"), [
    # the stored original edited: its hash no longer covers it (and the columns differ)
    ("raw", [(5, "bad_hash"), (5, "envelope_mismatch")]),
    # an event deleted behind ingest's back: the gap at the missing seq, the link after it
    ("delete", [(5, "gap"), (6, "chain_break")]),
    # two events' seqs exchanged: each is stored at a seq other than the one it carries
    ("swap", [(5, "reorder"), (5, "chain_break"), (6, "reorder"), (6, "chain_break"),
              (7, "chain_break")]),
])
def test_verify_log_finds_store_tampering(tmp_path: Path, tamper: str,
                                          expected: list[tuple[int, str]]) -> None:
    """``verify-log --json`` re-hashes what the store holds: edits made to the store
    after ingest are each reported with game and seq (the oracle's hash confirms the
    edited line no longer matches its hash)."""
    import duckdb
    from typer.testing import CliRunner

    from rummyguard.cli.app import app

    _, events = world_games("classic", 1)[0]
    path = tmp_path / "g.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events))
    db = tmp_path / "s.duckdb"
    runner = CliRunner()
    runner.invoke(app, ["ingest", str(path), "--db", str(db), "--no-progress"])
    edited = {**copy.deepcopy(events[5]), "actor": "someone-else"}
    assert lo.sha(edited) != edited["hash"]
    sql = {"raw": [("UPDATE store.events SET raw = ? WHERE seq = 5",
                    [orjson.dumps(edited).decode()])],
           "delete": [("DELETE FROM store.events WHERE seq = 5", [])],
           "swap": [("UPDATE store.events SET seq = -1 WHERE seq = 5", []),
                    ("UPDATE store.events SET seq = 5 WHERE seq = 6", []),
                    ("UPDATE store.events SET seq = 6 WHERE seq = -1", [])]}[tamper]
    con = duckdb.connect(str(db))
    try:
        for statement, params in sql:
            con.execute(statement.replace("store.", f'"{db.stem}".store.'), params)
    finally:
        con.close()
    res = runner.invoke(app, ["verify-log", "--json", "--db", str(db)])
    problems = json.loads(res.stdout)["problems"]
    assert {p["game_id"] for p in problems} == {events[0]["game_id"]}
    assert [(p["seq"], p["kind"]) for p in problems] == expected
    assert res.exit_code == 1
