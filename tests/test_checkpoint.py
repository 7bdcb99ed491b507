"""Checkpoints over a real store: append-only leaves, proofs, tampering refused.

The store is the real :class:`EventStore` (a DuckDB file); tampering is done the way an
operator with database access would, by SQL on ``store.events`` behind its back.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.checkpoint import (
    Checkpoint,
    CheckpointError,
    ProofError,
    TamperError,
    consistency_proof,
    get_checkpoint,
    inclusion_proof,
    list_checkpoints,
    make_checkpoint,
    verify_consistency,
    verify_history,
    verify_inclusion,
    verify_proof_document,
)
from rummyguard.events.hashing import chain
from rummyguard.events.merkle import root_hash
from rummyguard.events.store import EventStore

T0 = datetime(2026, 11, 29, 18, 0, 0, 123000, tzinfo=UTC)
T1 = datetime(2026, 11, 30, 9, 30, 0, tzinfo=UTC)

EVENTS_DDL = """
CREATE TABLE events (
    event_id VARCHAR PRIMARY KEY, game_id VARCHAR NOT NULL, seq INTEGER NOT NULL,
    type VARCHAR NOT NULL, v INTEGER NOT NULL, ts VARCHAR NOT NULL, actor VARCHAR NOT NULL,
    raw VARCHAR NOT NULL, payload VARCHAR NOT NULL, prev_hash VARCHAR, hash VARCHAR,
    batch_id BIGINT, UNIQUE (game_id, seq)
)
"""


def game_events(game_id: str, finished: bool = True) -> list[dict[str, Any]]:
    """A short chained classic game (its content does not matter to checkpoints)."""
    base = {"game_id": game_id, "ts": "2026-11-29T18:00:00.000Z"}
    events: list[dict[str, Any]] = [
        {
            **base,
            "type": "GameCreated",
            "v": 1,
            "actor": "system",
            "payload": {
                "variant": "classic",
                "table_id": "t1",
                "seats": ["p1", "p2"],
                "dealer": 0,
                "stake": 10,
                "rules": {},
            },
        },
        {**base, "type": "Discarded", "v": 2, "actor": "p1", "payload": {"card": "KD"}},
    ]
    if finished:
        events.append(
            {
                **base,
                "type": "GameEnded",
                "v": 1,
                "actor": "system",
                "payload": {"winners": ["p1"], "net": {"p1": 10, "p2": -10}},
            }
        )
    for seq, event in enumerate(events):
        event["seq"] = seq
        event["event_id"] = f"{game_id}-e{seq}"
    return chain(events)


def add(store: EventStore, *games: list[dict[str, Any]]) -> None:
    """Ingest whole games (or game tails) through the store: one batch per call."""
    summary = store.ingest_lines([orjson.dumps(e) for game in games for e in game])
    assert summary.stored == sum(len(g) for g in games), summary


def last_hash(con: duckdb.DuckDBPyConnection, game_id: str) -> str:
    row = con.execute(
        "SELECT hash FROM store.events WHERE game_id = ? ORDER BY seq DESC LIMIT 1", [game_id]
    ).fetchone()
    assert row is not None
    return row[0]


def rewrite_last_event(con: duckdb.DuckDBPyConnection, event: dict[str, Any]) -> None:
    """What an operator with SQL access does: edit a stored event, hash recomputed."""
    con.execute(
        "UPDATE store.events SET payload = ?, raw = ?, hash = ? WHERE game_id = ? AND seq = ?",
        [
            orjson.dumps(event["payload"]).decode(),
            orjson.dumps(event).decode(),
            event["hash"],
            event["game_id"],
            event["seq"],
        ],
    )


@pytest.fixture
def store(tmp_path: Path) -> Any:
    opened = EventStore.open(tmp_path / "log.duckdb")
    # Batch 1: g-b and g-a finished, g-open still running; batch 2: g-0 finished.
    add(opened, game_events("g-b"), game_events("g-a"), game_events("g-open", finished=False))
    add(opened, game_events("g-0"))
    yield opened
    opened.close()


@pytest.fixture
def con(store: EventStore) -> duckdb.DuckDBPyConnection:
    return store.con


def test_first_checkpoint_covers_finished_games_in_ingest_order(
    con: duckdb.DuckDBPyConnection,
) -> None:
    cp = make_checkpoint(con, now=T0)
    assert cp == Checkpoint(1, 3, cp.root_hash, "2026-11-29T18:00:00.123Z", None)
    leaves = con.execute(
        "SELECT leaf_index, game_id, leaf_hash, added_at FROM store.merkle_leaves ORDER BY 1"
    ).fetchall()
    # Batch order first (g-0 came in batch 2), then game id; the unfinished game is out.
    assert [(i, g) for i, g, _, _ in leaves] == [(0, "g-a"), (1, "g-b"), (2, "g-0")]
    assert all(h == last_hash(con, g) for _, g, h, _ in leaves)
    assert {a for *_, a in leaves} == {"2026-11-29T18:00:00.123Z"}
    # The root is the RFC tree over the raw 32 bytes of each game's last event hash.
    assert cp.root_hash == root_hash(bytes.fromhex(h) for _, _, h, _ in leaves).hex()


def test_no_finished_game_no_checkpoint(tmp_path: Path) -> None:
    with EventStore.open(tmp_path / "s.duckdb") as fresh:
        add(fresh, game_events("g-open", finished=False))
        with pytest.raises(CheckpointError, match="no finished game"):
            make_checkpoint(fresh.con, now=T0)
        assert list_checkpoints(fresh.con) == []


def test_nothing_new_returns_the_latest_without_adding(con: duckdb.DuckDBPyConnection) -> None:
    first = make_checkpoint(con, now=T0)
    again = make_checkpoint(con, now=T1)
    assert again == first
    assert len(list_checkpoints(con)) == 1


def test_later_checkpoint_extends_and_proves_consistency(store: EventStore) -> None:
    con = store.con
    first = make_checkpoint(con, now=T0)
    # g-open finishes (a GameEnded appended to its chain) and a new game arrives.
    add(store, game_events("g-open")[-1:], game_events("g-new"))
    second = make_checkpoint(con, now=T1)
    assert (second.n, second.tree_size) == (2, 5)
    assert second.consistency_proof is not None
    verify_consistency(first, second, second.consistency_proof)
    assert consistency_proof(con, 1, 2) == second.consistency_proof
    assert consistency_proof(con, 1) == second.consistency_proof
    assert consistency_proof(con, 2, 2) == ()
    rows = con.execute("SELECT game_id FROM store.merkle_leaves ORDER BY leaf_index").fetchall()
    assert [g for (g,) in rows] == ["g-a", "g-b", "g-0", "g-new", "g-open"]
    # Earlier leaves kept their positions: the old root is the root of the prefix.
    assert get_checkpoint(con, 1).root_hash == first.root_hash
    verify_history(con)
    # A forged "previous" checkpoint is not consistent with the new one.
    forged = Checkpoint(1, 3, "0" * 64, first.created_at, None)
    with pytest.raises(ProofError):
        verify_consistency(forged, second, second.consistency_proof)
    with pytest.raises(ProofError, match="newer"):
        verify_consistency(second, first, second.consistency_proof)
    with pytest.raises(CheckpointError, match="newer"):
        consistency_proof(con, 2, 1)


def test_inclusion_proofs_for_every_game_and_checkpoint(store: EventStore) -> None:
    con = store.con
    make_checkpoint(con, now=T0)
    add(store, game_events("g-new"))
    make_checkpoint(con, now=T1)
    for game in ["g-a", "g-b", "g-0", "g-new"]:
        proof = inclusion_proof(con, game)
        assert proof.checkpoint.n == 2
        assert proof.last_event_hash == last_hash(con, game)
        verify_inclusion(proof)
        verify_proof_document(
            orjson.loads(orjson.dumps(proof.to_document())),  # as it travels: JSON
            game_id=game,
            last_event_hash=last_hash(con, game),
            trusted_checkpoint=get_checkpoint(con, 2).to_document(),
        )
    old = inclusion_proof(con, "g-b", 1)
    assert (old.checkpoint.n, old.checkpoint.tree_size, old.leaf_index) == (1, 3, 1)
    verify_inclusion(old)
    with pytest.raises(CheckpointError, match="added after checkpoint 1"):
        inclusion_proof(con, "g-new", 1)
    with pytest.raises(CheckpointError, match="in no checkpoint"):
        inclusion_proof(con, "g-open")
    with pytest.raises(CheckpointError, match="no checkpoint 7"):
        inclusion_proof(con, "g-a", 7)


def test_no_checkpoint_yet(con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(CheckpointError, match="no checkpoint yet"):
        inclusion_proof(con, "g-a")


def test_same_input_same_bytes(tmp_path: Path) -> None:
    docs = []
    for name in ["one", "two"]:
        with EventStore.open(tmp_path / f"{name}.duckdb") as fresh:
            add(fresh, game_events("g-0"), game_events("g-1"))
            add(fresh, game_events("g-2"))
            cp = make_checkpoint(fresh.con, now=T0)
            proof = inclusion_proof(fresh.con, "g-1")
            docs.append(orjson.dumps([cp.to_document(), proof.to_document()]))
    assert docs[0] == docs[1]


def test_plain_connection_with_an_events_table(tmp_path: Path) -> None:
    """Any copy of the log with the envelope columns can be checkpointed, not only a store."""
    con = duckdb.connect(str(tmp_path / "plain.duckdb"))
    con.execute(EVENTS_DDL)
    rows = [
        (e["event_id"], e["game_id"], e["seq"], e["type"], e["v"], e["ts"], e["actor"],
         orjson.dumps(e).decode(), orjson.dumps(e["payload"]).decode(), e["prev_hash"],
         e["hash"], batch)
        for batch, game in [(2, "g-1"), (1, "g-2")]
        for e in game_events(game)
    ]
    con.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    cp = make_checkpoint(con, now=T0)
    order = con.execute("SELECT game_id FROM store.merkle_leaves ORDER BY leaf_index").fetchall()
    assert order == [("g-2",), ("g-1",)]  # batch order, not id order
    verify_inclusion(inclusion_proof(con, "g-1"))
    con.execute("UPDATE events SET hash = ? WHERE game_id = 'g-2' AND seq = 2", ["c" * 64])
    with pytest.raises(TamperError, match="g-2"):
        verify_history(con)
    assert get_checkpoint(con) == cp


# --- tampering ---------------------------------------------------------------------------
def _state(con: duckdb.DuckDBPyConnection) -> tuple[Any, ...]:
    return (
        con.execute("SELECT * FROM store.checkpoints ORDER BY n").fetchall(),
        con.execute("SELECT * FROM store.merkle_leaves ORDER BY leaf_index").fetchall(),
    )


def _refused(store: EventStore, match: str) -> TamperError:
    add(store, game_events("g-late"))  # something new to checkpoint
    before = _state(store.con)
    with pytest.raises(TamperError) as info:
        make_checkpoint(store.con, now=T1)
    assert any(match in p for p in info.value.problems), info.value.problems
    assert _state(store.con) == before  # nothing written
    return info.value


def test_rewritten_game_is_refused_and_reported(store: EventStore) -> None:
    con = store.con
    make_checkpoint(con, now=T0)
    recorded = last_hash(con, "g-b")
    # The operator rewrites g-b's payout and recomputes the hash: the chain is valid.
    rewritten = game_events("g-b")
    rewritten[-1]["payload"]["net"] = {"p1": -10, "p2": 10}
    rewritten = chain(rewritten)
    rewrite_last_event(con, rewritten[-1])
    error = _refused(store, "game g-b (leaf 1)")
    [mismatch] = error.mismatches
    assert (mismatch.game_id, mismatch.recorded) == ("g-b", recorded)
    assert mismatch.current == rewritten[-1]["hash"] and mismatch.current_seq == 2
    with pytest.raises(TamperError, match="g-b"):
        inclusion_proof(con, "g-b")
    inclusion_proof(con, "g-a")  # untouched games still prove


def test_event_appended_after_the_end_keeps_the_leaf(store: EventStore) -> None:
    """Audit 4: an event the platform logs after GameEnded (EVENTS.md: PlayerLeft "may
    come at any moment"), stored through the store's own API, is no tampering: the leaf
    is the game's GameEnded hash, which does not change. (Before, every later checkpoint
    of the whole store was refused as tampering, for good.)"""
    con = store.con
    first = make_checkpoint(con, now=T0)
    recorded = last_hash(con, "g-a")
    tail = chain(
        [
            *game_events("g-a"),
            {"event_id": "g-a-e3", "game_id": "g-a", "seq": 3, "type": "PlayerLeft", "v": 1,
             "ts": "2026-11-29T18:00:00.000Z", "actor": "p1", "payload": {}},
        ]
    )[-1:]
    store.append("g-a", tail, 3)
    add(store, game_events("g-late"))
    second = make_checkpoint(con, now=T1)
    assert second.tree_size == first.tree_size + 1
    assert inclusion_proof(con, "g-a").last_event_hash == recorded
    # Rewriting the GameEnded itself is still refused.
    rewritten = game_events("g-a")
    rewritten[-1]["payload"]["winners"] = ["p2"]
    rewrite_last_event(con, chain(rewritten)[-1])
    with pytest.raises(TamperError, match="game g-a"):
        verify_history(con)


def test_deleted_game_is_refused(store: EventStore) -> None:
    make_checkpoint(store.con, now=T0)
    store.con.execute("DELETE FROM store.events WHERE game_id = 'g-0'")
    error = _refused(store, "now has no events")
    assert [m.game_id for m in error.mismatches] == ["g-0"]


def test_edited_leaf_table_is_refused(store: EventStore) -> None:
    con = store.con
    make_checkpoint(con, now=T0)
    # Rewrite the game and its leaf together: the checkpoint root no longer matches.
    rewritten = game_events("g-a")
    rewritten[-1]["payload"]["winners"] = ["p2"]
    rewritten = chain(rewritten)
    rewrite_last_event(con, rewritten[-1])
    con.execute(
        "UPDATE store.merkle_leaves SET leaf_hash = ? WHERE game_id = 'g-a'",
        [rewritten[-1]["hash"]],
    )
    _refused(store, "no longer give checkpoint 1's root")


def test_reordered_leaves_are_refused(store: EventStore) -> None:
    con = store.con
    make_checkpoint(con, now=T0)
    con.execute("UPDATE store.merkle_leaves SET leaf_index = 99 WHERE leaf_index = 0")
    con.execute("UPDATE store.merkle_leaves SET leaf_index = 0 WHERE leaf_index = 1")
    con.execute("UPDATE store.merkle_leaves SET leaf_index = 1 WHERE leaf_index = 99")
    _refused(store, "no longer give checkpoint 1's root")


def test_removed_leaf_is_refused(store: EventStore) -> None:
    make_checkpoint(store.con, now=T0)
    store.con.execute("DELETE FROM store.merkle_leaves WHERE leaf_index = 1")
    _refused(store, "not numbered")


def test_deleted_latest_checkpoint_is_refused(store: EventStore) -> None:
    make_checkpoint(store.con, now=T0)
    add(store, game_events("g-new"))
    make_checkpoint(store.con, now=T1)
    store.con.execute("DELETE FROM store.checkpoints WHERE n = 2")
    _refused(store, "4 leaves are stored, but the latest checkpoint covers 3")


def test_edited_consistency_proof_is_refused(store: EventStore) -> None:
    con = store.con
    make_checkpoint(con, now=T0)
    add(store, game_events("g-new"))
    make_checkpoint(con, now=T1)
    row = con.execute("SELECT consistency_proof FROM store.checkpoints WHERE n = 2").fetchone()
    assert row is not None
    forged = orjson.loads(row[0])
    forged[0] = "f" * 64
    con.execute(
        "UPDATE store.checkpoints SET consistency_proof = ? WHERE n = 2",
        [orjson.dumps(forged).decode()],
    )
    _refused(store, "not consistent with checkpoint 1")


def test_edited_checkpoint_root_is_refused(store: EventStore) -> None:
    make_checkpoint(store.con, now=T0)
    store.con.execute("UPDATE store.checkpoints SET root_hash = ? WHERE n = 1", ["a" * 64])
    _refused(store, "no longer give checkpoint 1's root")
    with pytest.raises(TamperError):
        inclusion_proof(store.con, "g-a")


# --- the proof document, attacked -------------------------------------------------------
@pytest.fixture
def doc(store: EventStore) -> dict[str, Any]:
    make_checkpoint(store.con, now=T0)
    add(store, game_events("g-new"), game_events("g-x"))
    make_checkpoint(store.con, now=T1)
    document = inclusion_proof(store.con, "g-b").to_document()
    verify_proof_document(document)
    return document


def _mutants(doc: dict[str, Any], other: dict[str, Any]) -> list[tuple[str, Any]]:
    def with_(**changes: Any) -> dict[str, Any]:
        d = copy.deepcopy(doc)
        for key, value in changes.items():
            if key.startswith("cp_"):
                d["checkpoint"][key[3:]] = value
            else:
                d[key] = value
        return d

    path = doc["inclusion_path"]
    extra = copy.deepcopy(doc)
    extra["note"] = "trust me"
    missing = copy.deepcopy(doc)
    del missing["tree"]
    flipped = [path[0][:-1] + ("0" if path[0][-1] != "0" else "1"), *path[1:]]
    return [
        ("proof for another leaf", with_(last_event_hash=other["last_event_hash"])),
        ("another leaf's path", with_(inclusion_path=other["inclusion_path"])),
        ("another leaf's index", with_(leaf_index=other["leaf_index"])),
        ("index past the end", with_(leaf_index=doc["checkpoint"]["tree_size"])),
        ("negative index", with_(leaf_index=-1)),
        ("bool index", with_(leaf_index=True)),
        ("string index", with_(leaf_index="1")),
        # (A size with the same path shape is caught by the trusted checkpoint instead:
        # see test_proof_document_bound_to_the_verifiers_facts.)
        ("double tree size", with_(cp_tree_size=doc["checkpoint"]["tree_size"] * 2)),
        ("half tree size", with_(cp_tree_size=doc["checkpoint"]["tree_size"] // 2)),
        ("size zero", with_(cp_tree_size=0)),
        ("truncated path", with_(inclusion_path=path[:-1])),
        ("extended path", with_(inclusion_path=[*path, path[0]])),
        ("empty path", with_(inclusion_path=[])),
        ("flipped hash", with_(inclusion_path=flipped)),
        ("uppercase hex", with_(inclusion_path=[path[0].upper(), *path[1:]])),
        ("path not a list", with_(inclusion_path=path[0])),
        ("other root", with_(cp_root_hash=other["checkpoint"]["root_hash"][::-1])),
        ("bad time", with_(cp_created_at="yesterday")),
        ("checkpoint zero", with_(cp_n=0)),
        ("unknown format", with_(format="something-else")),
        ("future version", with_(version=2)),
        ("other tree", with_(tree="RFC6962_SHA1")),
        ("extra field", extra),
        ("missing field", missing),
        ("not an object", [doc]),
    ]


def test_proof_document_mutants_are_rejected(
    con: duckdb.DuckDBPyConnection, doc: dict[str, Any]
) -> None:
    other = inclusion_proof(con, "g-new").to_document()
    accepted = []
    for desc, mutant in _mutants(doc, other):
        try:
            verify_proof_document(mutant)
        except ProofError:
            continue
        accepted.append(desc)
    assert accepted == []


def test_proof_document_bound_to_the_verifiers_facts(
    con: duckdb.DuckDBPyConnection, doc: dict[str, Any]
) -> None:
    with pytest.raises(ProofError, match="not 'g-a'"):
        verify_proof_document(doc, game_id="g-a")
    with pytest.raises(ProofError, match="events end in"):
        verify_proof_document(doc, last_event_hash=last_hash(con, "g-a"))
    with pytest.raises(ProofError, match="not the trusted one"):
        verify_proof_document(doc, trusted_checkpoint=get_checkpoint(con, 1).to_document())
    # Leaf 1's path in a tree of 6 has the shape it has in a tree of 7: only the
    # published (size, root) pair tells them apart.
    resized = copy.deepcopy(doc)
    resized["checkpoint"]["tree_size"] = 7
    verify_proof_document(resized)
    with pytest.raises(ProofError, match="not the trusted one"):
        verify_proof_document(resized, trusted_checkpoint=get_checkpoint(con, 2).to_document())
    # A proof made against checkpoint 1 is not one for checkpoint 2 either.
    old = inclusion_proof(con, "g-b", 1).to_document()
    verify_proof_document(old, trusted_checkpoint=get_checkpoint(con, 1).to_document())
    with pytest.raises(ProofError, match="not the trusted one"):
        verify_proof_document(old, trusted_checkpoint=get_checkpoint(con, 2).to_document())


# --- the commands ------------------------------------------------------------------------
def test_cli_checkpoint_and_prove(tmp_path: Path) -> None:
    db = tmp_path / "cli.duckdb"
    with EventStore.open(db) as fresh:
        add(fresh, game_events("g-1"), game_events("g-2"))
    runner = CliRunner()

    result = runner.invoke(app, ["checkpoint", "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    out = orjson.loads(result.stdout)
    assert out["created"] is True and out["added_games"] == 2
    assert out["checkpoint"]["n"] == 1 and out["consistency_proof"] is None

    result = runner.invoke(app, ["checkpoint", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "no newly finished game; checkpoint 1 (2 games) still stands" in result.stdout

    result = runner.invoke(app, ["prove", "g-2", "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    proof = orjson.loads(result.stdout)
    verify_proof_document(proof, trusted_checkpoint=out["checkpoint"])
    assert proof["game_id"] == "g-2" and proof["leaf_index"] == 1

    result = runner.invoke(app, ["prove", "g-1", "--db", str(db), "--checkpoint", "1"])
    assert result.exit_code == 0, result.output
    assert "game g-1 is leaf 0 of checkpoint 1 (2 games" in result.stdout

    with EventStore.open(db) as fresh:
        add(fresh, game_events("g-3"))
    result = runner.invoke(app, ["checkpoint", "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    out2 = orjson.loads(result.stdout)
    assert (out2["checkpoint"]["n"], out2["added_games"]) == (2, 1)
    assert out2["consistency_proof"]["from_checkpoint"] == 1
    old = get_checkpoint_doc(out["checkpoint"])
    verify_consistency(old, get_checkpoint_doc(out2["checkpoint"]),
                       out2["consistency_proof"]["hashes"])

    with EventStore.open(db) as fresh:
        add(fresh, game_events("g-4"))
    result = runner.invoke(app, ["checkpoint", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "checkpoint 3: 4 games (+1 since checkpoint 2)" in result.stdout
    assert "consistent with checkpoint 2: 3-hash proof, verified" in result.stdout

    result = runner.invoke(app, ["prove", "nope", "--db", str(db)])
    assert result.exit_code == 2
    assert "game nope is in no checkpoint" in result.stderr

    with EventStore.open(db) as fresh:
        fresh.con.execute(
            "UPDATE store.events SET hash = ? WHERE game_id = 'g-1' AND seq = 2", ["b" * 64]
        )
    result = runner.invoke(app, ["checkpoint", "--db", str(db)])
    assert result.exit_code == 1
    assert "game g-1 (leaf 0)" in result.stderr and "refused" in result.stderr
    result = runner.invoke(app, ["prove", "g-1", "--db", str(db)])
    assert result.exit_code == 1

    result = runner.invoke(app, ["checkpoint", "--db", str(tmp_path / "missing.duckdb")])
    assert result.exit_code == 2 and "no store at" in result.stderr
    assert not (tmp_path / "missing.duckdb").exists()


def get_checkpoint_doc(doc: dict[str, Any]) -> Checkpoint:
    return Checkpoint(doc["n"], doc["tree_size"], doc["root_hash"], doc["created_at"], None)
