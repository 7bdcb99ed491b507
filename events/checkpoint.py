"""Checkpoints: an append-only RFC 9162 Merkle log of finished games, and its proofs.

A per-game hash chain shows a game's log is internally consistent, not that the
operator did not rewrite the whole game after a complaint. So every finished game
becomes a leaf of one Merkle tree, and a *checkpoint* ``(n, tree_size, root_hash,
created_at)`` is stored (and meant to be published, e.g. sent to a regulator) now and
then. Anyone holding a checkpoint can then check, without our database:

- *inclusion*: this game, ending in this event hash, is leaf ``i`` of that checkpoint;
- *consistency*: a later checkpoint only appended leaves to an earlier one, so no
  checkpointed game was rewritten, removed or reordered in between.

The leaf of a game is the raw 32 bytes of the hash of its ``GameEnded`` event (the hex
string of the store decoded; the first one by seq if the log repeats it), taken once the
game has one: the game from deal to payout. Through the hash chain that one hash commits
to every event before it. Events after it (EVENTS.md: ``PlayerLeft``, ``PlayerConnected``
... "may come at any moment", and ingest stores them) extend the game's chain, which
``verify-log`` checks, but are outside its leaf, so they neither change a checkpointed
leaf nor stop a finished game from being checkpointed.
Leaves are numbered in the order games were first checkpointed (within one checkpoint:
by ingest batch, then game id), recorded in ``store.merkle_leaves``; a later checkpoint's
leaves extend the previous one's, which is what makes consistency proofs exist.

Every :func:`make_checkpoint` re-derives the whole history before adding to it: the
stored leaves must reproduce every earlier checkpoint's root, every stored consistency
proof must verify, and every leaf must still equal its game's GameEnded hash. A
difference is tampering (or corruption) and is refused with a precise report
(:class:`TamperError`), never silently folded into a new root.

The proof document (:meth:`InclusionProof.to_document`) is plain JSON with everything
an offline check needs; :func:`verify_proof_document` is that check.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import duckdb
import orjson

from . import merkle
from .merkle import HASH_SIZE, MerkleError, MerkleTree, ProofError, leaf_hash

__all__ = [
    "PROOF_FORMAT",
    "Checkpoint",
    "CheckpointError",
    "InclusionProof",
    "LeafMismatch",
    "ProofError",
    "TamperError",
    "consistency_proof",
    "ensure_schema",
    "get_checkpoint",
    "inclusion_proof",
    "latest_checkpoint",
    "list_checkpoints",
    "make_checkpoint",
    "verify_consistency",
    "verify_history",
    "verify_inclusion",
    "verify_proof_document",
]

PROOF_FORMAT = "rummyguard.inclusion-proof"
PROOF_VERSION = 1
TREE_ALGORITHM = "RFC9162_SHA256"
"""The tree hashing named in every document: RFC 9162 §2.1 with SHA-256."""

FINISHED_TYPE = "GameEnded"

_HEX64 = re.compile(r"[0-9a-f]{64}")
_TS = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")

SCHEMA = """
CREATE SCHEMA IF NOT EXISTS store;
CREATE TABLE IF NOT EXISTS store.merkle_leaves (
    leaf_index BIGINT PRIMARY KEY,      -- 0-based position in the tree, never reused
    game_id    VARCHAR NOT NULL UNIQUE, -- one leaf per finished game
    leaf_hash  VARCHAR NOT NULL,        -- the leaf: hex of the game's GameEnded hash
    added_at   VARCHAR NOT NULL         -- RFC 3339 UTC, the checkpoint that added it
);
CREATE TABLE IF NOT EXISTS store.checkpoints (
    n                 BIGINT PRIMARY KEY, -- 1, 2, 3, ...
    tree_size         BIGINT NOT NULL,    -- leaves 0 .. tree_size-1 of merkle_leaves
    root_hash         VARCHAR NOT NULL,   -- hex RFC 9162 root over those leaves
    created_at        VARCHAR NOT NULL,   -- RFC 3339 UTC with milliseconds
    consistency_proof VARCHAR             -- JSON hex list proving n-1 -> n; NULL for n = 1
);
"""


class CheckpointError(Exception):
    """A checkpoint operation that cannot be done (nothing to checkpoint, unknown game...)."""


@dataclass(frozen=True, slots=True)
class LeafMismatch:
    """A checkpointed game whose GameEnded is no longer the event it was when checkpointed
    (``current*``: the game's first GameEnded now, or None if it has none)."""

    leaf_index: int
    game_id: str
    recorded: str
    current: str | None
    current_seq: int | None
    current_type: str | None

    def describe(self) -> str:
        """One line for a person: which game, what was recorded, what is there now."""
        head = f"game {self.game_id} (leaf {self.leaf_index})"
        if self.current is None:
            return (f"{head}: checkpointed with GameEnded hash {self.recorded}, now has no "
                    "events, or none of them is a GameEnded")
        return (
            f"{head}: checkpointed with GameEnded hash {self.recorded}, now its GameEnded "
            f"(seq {self.current_seq}) has hash {self.current}"
        )


class TamperError(CheckpointError):
    """The store no longer matches what was checkpointed; ``problems`` says where."""

    def __init__(self, problems: Sequence[str], mismatches: Sequence[LeafMismatch] = ()) -> None:
        self.problems = list(problems)
        self.mismatches = list(mismatches)
        count = len(self.problems)
        first = self.problems[0] if self.problems else ""
        more = f" (and {count - 1} more)" if count > 1 else ""
        super().__init__(f"the store does not match its checkpoints: {first}{more}")


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One stored checkpoint: the tree over the first ``tree_size`` leaves."""

    n: int
    tree_size: int
    root_hash: str
    created_at: str
    consistency_proof: tuple[str, ...] | None
    """Hashes proving checkpoint ``n - 1`` -> ``n`` (RFC 9162 §2.1.4); None for n = 1."""

    def to_document(self) -> dict[str, Any]:
        """What to publish: number, size, root, time (the proof is shipped separately)."""
        return {
            "n": self.n,
            "tree_size": self.tree_size,
            "root_hash": self.root_hash,
            "created_at": self.created_at,
        }


@dataclass(frozen=True, slots=True)
class InclusionProof:
    """That game ``game_id``, ending in ``last_event_hash``, is leaf ``leaf_index``."""

    game_id: str
    last_event_hash: str
    leaf_index: int
    checkpoint: Checkpoint
    inclusion_path: tuple[str, ...]

    def to_document(self) -> dict[str, Any]:
        """The self-contained JSON form, for ``rummyguard prove`` and dispute bundles."""
        return {
            "format": PROOF_FORMAT,
            "version": PROOF_VERSION,
            "tree": TREE_ALGORITHM,
            "game_id": self.game_id,
            "last_event_hash": self.last_event_hash,
            "leaf_index": self.leaf_index,
            "checkpoint": self.checkpoint.to_document(),
            "inclusion_path": list(self.inclusion_path),
        }


# --- schema and reading ------------------------------------------------------------------
def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create ``store.merkle_leaves`` and ``store.checkpoints`` if missing (idempotent).

    They sit in the store's ``store`` schema with the other tables (``main`` holds the
    analyst views), so ``SELECT * FROM store.checkpoints`` lists them.
    """
    con.execute(SCHEMA)


def _has_tables(con: duckdb.DuckDBPyConnection) -> bool:
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables "
        "WHERE table_schema = 'store' AND table_name IN ('merkle_leaves', 'checkpoints')"
    ).fetchone()
    return row is not None and row[0] == 2


def _events_relation(con: duckdb.DuckDBPyConnection) -> str:
    """The stored events: the store's ``store.events`` table, else a plain ``events``.

    :class:`~rummyguard.events.store.EventStore` keeps the originals in
    ``store.events`` (``main.events`` is the analysts' upcast view); a bare connection
    with an ``events`` table of the same columns (game_id, seq, type, hash, batch_id)
    works too, which keeps this module usable over any copy of the log.
    """
    row = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'events' "
        "AND (schema_name = 'store' OR database_name = 'store')"
    ).fetchone()
    return "store.events" if row is not None and row[0] else "events"


def _row_to_checkpoint(row: tuple[Any, ...]) -> Checkpoint:
    n, tree_size, root_hash, created_at, proof_json = row
    proof = None if proof_json is None else tuple(orjson.loads(proof_json))
    return Checkpoint(int(n), int(tree_size), root_hash, created_at, proof)


_CHECKPOINT_COLUMNS = "n, tree_size, root_hash, created_at, consistency_proof"


def list_checkpoints(con: duckdb.DuckDBPyConnection) -> list[Checkpoint]:
    """All checkpoints, oldest first (empty if none was ever made)."""
    if not _has_tables(con):
        return []
    rows = con.execute(f"SELECT {_CHECKPOINT_COLUMNS} FROM store.checkpoints ORDER BY n").fetchall()
    return [_row_to_checkpoint(r) for r in rows]


def latest_checkpoint(con: duckdb.DuckDBPyConnection) -> Checkpoint | None:
    """The newest checkpoint, or None."""
    if not _has_tables(con):
        return None
    row = con.execute(
        f"SELECT {_CHECKPOINT_COLUMNS} FROM store.checkpoints ORDER BY n DESC LIMIT 1"
    ).fetchone()
    return None if row is None else _row_to_checkpoint(row)


def get_checkpoint(con: duckdb.DuckDBPyConnection, n: int | None = None) -> Checkpoint:
    """Checkpoint ``n`` (default: the latest); :class:`CheckpointError` if there is none."""
    if n is None:
        latest = latest_checkpoint(con)
        if latest is None:
            raise CheckpointError("no checkpoint yet (run `rummyguard checkpoint` first)")
        return latest
    row = None
    if _has_tables(con):
        row = con.execute(
            f"SELECT {_CHECKPOINT_COLUMNS} FROM store.checkpoints WHERE n = ?", [n]
        ).fetchone()
    if row is None:
        raise CheckpointError(f"there is no checkpoint {n}")
    return _row_to_checkpoint(row)


def _load_tree(con: duckdb.DuckDBPyConnection, size: int | None = None) -> MerkleTree:
    """The tree over ``merkle_leaves`` (the first ``size`` leaves, default all).

    Checks that the stored leaves are well formed and numbered 0..count-1 without a
    hole: a hole or a malformed leaf is itself tampering with the leaf table.
    """
    where = "" if size is None else f"WHERE leaf_index < {int(size)}"
    count, low, high, bad, joined = con.execute(
        f"""
        SELECT count(*), min(leaf_index), max(leaf_index),
               count(*) FILTER (WHERE NOT regexp_full_match(leaf_hash, '[0-9a-f]{{64}}')),
               string_agg(leaf_hash, '' ORDER BY leaf_index)
        FROM store.merkle_leaves {where}
        """
    ).fetchone()  # type: ignore[misc]
    if bad:
        raise TamperError([f"{bad} stored leaves are not 64 lowercase hex digits"])
    if count and (low != 0 or high != count - 1):
        raise TamperError(
            [f"stored leaves are not numbered 0..{count - 1} (found {low}..{high})"]
        )
    if size is not None and count != size:
        raise TamperError([f"a tree of {size} leaves was checkpointed; {count} are stored"])
    raw = bytes.fromhex(joined) if joined else b""
    view = memoryview(raw)
    return MerkleTree(
        leaf_hash(view[i : i + HASH_SIZE]) for i in range(0, len(raw), HASH_SIZE)
    )


def _check_history(tree: MerkleTree, checkpoints: Sequence[Checkpoint]) -> list[str]:
    """Every checkpoint's root from the stored leaves, and every stored proof verified."""
    problems: list[str] = []
    previous: Checkpoint | None = None
    for cp in checkpoints:
        if cp.tree_size < 1 or cp.tree_size > tree.size:
            problems.append(
                f"checkpoint {cp.n} has tree size {cp.tree_size}, "
                f"but {tree.size} leaves are stored"
            )
            previous = cp
            continue
        if tree.root(cp.tree_size).hex() != cp.root_hash:
            problems.append(
                f"the stored leaves no longer give checkpoint {cp.n}'s root {cp.root_hash}"
            )
        if previous is not None:
            try:
                verify_consistency(previous, cp, cp.consistency_proof or ())
            except ProofError as exc:
                problems.append(
                    f"checkpoint {cp.n} is not consistent with checkpoint {previous.n}: {exc}"
                )
        elif cp.consistency_proof is not None:
            problems.append(f"checkpoint {cp.n} is the first but carries a consistency proof")
        previous = cp
    numbers = [cp.n for cp in checkpoints]
    if numbers != list(range(1, len(numbers) + 1)):
        problems.append(f"checkpoints are not numbered 1..{len(numbers)}: {numbers}")
    return problems


def _mismatched_leaves(
    con: duckdb.DuckDBPyConnection, game_id: str | None = None
) -> list[LeafMismatch]:
    """Checkpointed games whose GameEnded is not their leaf any more (or is gone)."""
    events = _events_relation(con)
    only = "" if game_id is None else "AND l.game_id = $game"
    params = {} if game_id is None else {"game": game_id}
    rows = con.execute(
        f"""
        WITH leaves AS (
            SELECT l.* FROM store.merkle_leaves l WHERE true {only}
        ), ended AS (
            SELECT e.game_id, min(e.seq) AS seq
            FROM {events} e
            WHERE e.type = '{FINISHED_TYPE}' AND e.game_id IN (SELECT game_id FROM leaves)
            GROUP BY e.game_id
        )
        SELECT l.leaf_index, l.game_id, l.leaf_hash, e.hash, e.seq, e.type
        FROM leaves l
        LEFT JOIN ended ON ended.game_id = l.game_id
        LEFT JOIN {events} e ON e.game_id = ended.game_id AND e.seq = ended.seq
        WHERE e.hash IS DISTINCT FROM l.leaf_hash
        ORDER BY l.leaf_index
        """,
        params,
    ).fetchall()
    return [LeafMismatch(int(r[0]), r[1], r[2], r[3], r[4], r[5]) for r in rows]


def verify_history(con: duckdb.DuckDBPyConnection) -> MerkleTree:
    """Check the whole checkpoint log against the store; return the tree of all leaves.

    Raises :class:`TamperError` listing every problem: leaves that do not reproduce a
    checkpoint root, consistency proofs that fail, games changed since checkpointed.
    """
    if not _has_tables(con):
        return MerkleTree()  # nothing was ever checkpointed (works on a read-only store)
    tree = _load_tree(con)
    problems = _check_history(tree, list_checkpoints(con))
    mismatches = _mismatched_leaves(con)
    problems += [m.describe() for m in mismatches]
    if problems:
        raise TamperError(problems, mismatches)
    return tree


# --- making checkpoints ------------------------------------------------------------------
def _now_text(now: datetime | None) -> str:
    now = datetime.now(UTC) if now is None else now.astimezone(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _append_new_leaves(con: duckdb.DuckDBPyConnection, start: int, created_at: str) -> bytes:
    """Add finished games that are not leaves yet, as leaves ``start, start+1, ...``.

    Order: ingest batch, then game id for games finished in the same batch. Done in
    SQL (a million rows never pass through Python one by one); returns the new leaves'
    data (32 bytes each, in leaf order). A game is finished once it has a GameEnded
    (events after it do not matter); one whose GameEnded has no valid hash is refused:
    the store always hashes, so that is damage, not a leaf.
    """
    events = _events_relation(con)
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE _rg_new_leaves AS
        WITH ended AS (
            SELECT game_id, min(seq) AS seq FROM {events}
            WHERE type = '{FINISHED_TYPE}'
              AND game_id NOT IN (SELECT game_id FROM store.merkle_leaves)
            GROUP BY game_id
        )
        SELECT e.game_id, e.hash, e.batch_id
        FROM ended JOIN {events} e ON e.game_id = ended.game_id AND e.seq = ended.seq
        """
    )
    try:
        bad = con.execute(
            "SELECT count(*), list(game_id ORDER BY game_id)[1:5] FROM _rg_new_leaves "
            "WHERE hash IS NULL OR NOT regexp_full_match(hash, '[0-9a-f]{64}')"
        ).fetchone()
        if bad is not None and bad[0]:
            raise CheckpointError(
                f"{bad[0]} finished games have a GameEnded without a valid hash: "
                + ", ".join(bad[1])
                + (" ..." if bad[0] > 5 else "")
            )
        con.execute(
            """
            INSERT INTO store.merkle_leaves
            SELECT $start - 1 + row_number() OVER (ORDER BY batch_id NULLS LAST, game_id),
                   game_id, hash, $created
            FROM _rg_new_leaves
            """,
            {"start": start, "created": created_at},
        )
    finally:
        con.execute("DROP TABLE IF EXISTS _rg_new_leaves")
    row = con.execute(
        "SELECT string_agg(leaf_hash, '' ORDER BY leaf_index) FROM store.merkle_leaves "
        "WHERE leaf_index >= ?",
        [start],
    ).fetchone()
    return b"" if row is None or row[0] is None else bytes.fromhex(row[0])


def make_checkpoint(
    con: duckdb.DuckDBPyConnection, *, now: datetime | None = None
) -> Checkpoint:
    """Append newly finished games as leaves and store a checkpoint over all leaves.

    One transaction: either the leaves and the checkpoint (with its consistency proof
    from the previous checkpoint, verified before it is stored) are both written, or
    nothing is. Refuses with :class:`TamperError` if the history does not verify
    (see :func:`verify_history`). With no newly finished game, no checkpoint is added
    and the latest is returned; with no finished game at all, :class:`CheckpointError`.
    """
    ensure_schema(con)
    con.execute("BEGIN TRANSACTION")
    try:
        result = _make_checkpoint(con, _now_text(now))
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return result


def _make_checkpoint(con: duckdb.DuckDBPyConnection, created_at: str) -> Checkpoint:
    tree = verify_history(con)
    previous = latest_checkpoint(con)
    checkpointed = 0 if previous is None else previous.tree_size
    if checkpointed != tree.size:
        # Leaves are only ever written with their checkpoint, in one transaction.
        raise TamperError(
            [f"{tree.size} leaves are stored, but the latest checkpoint covers {checkpointed}"]
        )
    start = tree.size
    new = _append_new_leaves(con, start, created_at)
    if not new:
        if previous is None:
            raise CheckpointError("no finished game to checkpoint yet")
        return previous
    view = memoryview(new)
    tree.extend(leaf_hash(view[i : i + HASH_SIZE]) for i in range(0, len(new), HASH_SIZE))
    proof: tuple[str, ...] | None = None
    if previous is not None:
        proof = tuple(h.hex() for h in tree.consistency_proof(previous.tree_size))
    checkpoint = Checkpoint(
        n=1 if previous is None else previous.n + 1,
        tree_size=tree.size,
        root_hash=tree.root().hex(),
        created_at=created_at,
        consistency_proof=proof,
    )
    if previous is not None:
        verify_consistency(previous, checkpoint, proof or ())  # never store a bad proof
    con.execute(
        "INSERT INTO store.checkpoints VALUES (?, ?, ?, ?, ?)",
        [
            checkpoint.n,
            checkpoint.tree_size,
            checkpoint.root_hash,
            checkpoint.created_at,
            None if proof is None else orjson.dumps(list(proof)).decode(),
        ],
    )
    return checkpoint


# --- proofs ------------------------------------------------------------------------------
def inclusion_proof(
    con: duckdb.DuckDBPyConnection, game_id: str, checkpoint: int | None = None
) -> InclusionProof:
    """The proof that ``game_id`` is in checkpoint ``checkpoint`` (default: the latest).

    Refuses (:class:`TamperError`) when the stored leaves do not give that checkpoint's
    root, or when the game's log no longer ends in its leaf: such a proof would not
    match the events a dispute bundle ships. The proof is verified before it is returned.
    """
    cp = get_checkpoint(con, checkpoint)
    row = con.execute(
        "SELECT leaf_index, leaf_hash FROM store.merkle_leaves WHERE game_id = ?", [game_id]
    ).fetchone()
    if row is None:
        raise CheckpointError(
            f"game {game_id} is in no checkpoint (unknown, unfinished, or finished after the "
            "latest checkpoint)"
        )
    index, last_hash = int(row[0]), row[1]
    if index >= cp.tree_size:
        raise CheckpointError(
            f"game {game_id} is leaf {index}, added after checkpoint {cp.n} "
            f"({cp.tree_size} leaves); use a later checkpoint"
        )
    mismatches = _mismatched_leaves(con, game_id)
    if mismatches:
        raise TamperError([m.describe() for m in mismatches], mismatches)
    tree = _load_tree(con, cp.tree_size)
    if tree.root().hex() != cp.root_hash:
        raise TamperError([f"the stored leaves no longer give checkpoint {cp.n}'s root"])
    path = tuple(h.hex() for h in tree.inclusion_path(index))
    proof = InclusionProof(game_id, last_hash, index, cp, path)
    verify_inclusion(proof)
    return proof


def consistency_proof(
    con: duckdb.DuckDBPyConnection, old: int, new: int | None = None
) -> tuple[str, ...]:
    """The hashes proving checkpoint ``new`` (default latest) extends checkpoint ``old``."""
    old_cp, new_cp = get_checkpoint(con, old), get_checkpoint(con, new)
    if old_cp.n > new_cp.n:
        raise CheckpointError(f"checkpoint {old_cp.n} is newer than checkpoint {new_cp.n}")
    tree = _load_tree(con, new_cp.tree_size)
    try:
        proof = tuple(h.hex() for h in tree.consistency_proof(old_cp.tree_size))
    except MerkleError as exc:
        raise CheckpointError(str(exc)) from None
    verify_consistency(old_cp, new_cp, proof)
    return proof


def _hex_hashes(name: str, values: object) -> list[bytes]:
    if not isinstance(values, list | tuple):
        raise ProofError(f"{name} must be a list of hex hashes")
    out = []
    for i, value in enumerate(values):
        if not isinstance(value, str) or not _HEX64.fullmatch(value):
            raise ProofError(f"{name}[{i}] is not 64 lowercase hex digits")
        out.append(bytes.fromhex(value))
    return out


def verify_inclusion(proof: InclusionProof) -> None:
    """Offline check of an :class:`InclusionProof`; raises :class:`ProofError`."""
    verify_proof_document(proof.to_document())


def verify_consistency(old: Checkpoint, new: Checkpoint, proof: Sequence[str]) -> None:
    """Offline check that checkpoint ``new`` only appended to ``old``; raises ProofError.

    Checkpoint numbers must not go backwards; the sizes and roots are what the RFC 9162
    algorithm checks, and equal sizes need equal roots and an empty proof.
    """
    if old.n > new.n:
        raise ProofError(f"checkpoint {old.n} is newer than checkpoint {new.n}")
    for cp in (old, new):
        if not _HEX64.fullmatch(cp.root_hash):
            raise ProofError(f"checkpoint {cp.n}'s root is not 64 lowercase hex digits")
    merkle.verify_consistency(
        old.tree_size,
        new.tree_size,
        bytes.fromhex(old.root_hash),
        bytes.fromhex(new.root_hash),
        _hex_hashes("consistency proof", list(proof)),
    )


def _field(doc: Mapping[str, Any], key: str, kind: type, where: str = "") -> Any:
    value = doc.get(key)
    # bool is an int; a JSON true is never a valid count or index.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ProofError(f"{where}{key} must be a {kind.__name__}")
    return value


_DOC_KEYS = {
    "format",
    "version",
    "tree",
    "game_id",
    "last_event_hash",
    "leaf_index",
    "checkpoint",
    "inclusion_path",
}
_CHECKPOINT_KEYS = {"n", "tree_size", "root_hash", "created_at"}


def verify_proof_document(
    doc: Any,
    *,
    game_id: str | None = None,
    last_event_hash: str | None = None,
    trusted_checkpoint: Mapping[str, Any] | None = None,
) -> None:
    """Check an inclusion proof document offline; raise :class:`ProofError` on any flaw.

    The document must have exactly the fields of :meth:`InclusionProof.to_document`,
    well formed. The leaf hash is recomputed here from ``last_event_hash`` (never
    taken from the document), and the path must lead to the checkpoint's root at the
    checkpoint's size.

    On its own this proves the game is in *the checkpoint the document names*. A
    verifier binds it to the world with the keyword arguments: ``game_id`` and
    ``last_event_hash`` as recomputed from the events it holds (e.g. a bundle's JSONL),
    and ``trusted_checkpoint`` as published (``tree_size`` and ``root_hash`` must
    match; the size matters as much as the root, since different sizes can share a
    path shape).
    """
    if not isinstance(doc, Mapping):
        raise ProofError("a proof document is a JSON object")
    if set(doc) != _DOC_KEYS:
        missing, extra = sorted(_DOC_KEYS - set(doc)), sorted(set(doc) - _DOC_KEYS)
        raise ProofError(f"proof document fields: missing {missing}, unexpected {extra}")
    if doc["format"] != PROOF_FORMAT or doc["version"] != PROOF_VERSION:
        raise ProofError(
            f"not a {PROOF_FORMAT} version {PROOF_VERSION} document "
            f"(got {doc['format']!r} version {doc['version']!r})"
        )
    if doc["tree"] != TREE_ALGORITHM:
        raise ProofError(f"unsupported tree algorithm {doc['tree']!r}")
    doc_game = _field(doc, "game_id", str)
    doc_hash = _field(doc, "last_event_hash", str)
    if not _HEX64.fullmatch(doc_hash):
        raise ProofError("last_event_hash is not 64 lowercase hex digits")
    index = _field(doc, "leaf_index", int)
    cp = _field(doc, "checkpoint", Mapping)
    if set(cp) != _CHECKPOINT_KEYS:
        raise ProofError(f"checkpoint fields must be {sorted(_CHECKPOINT_KEYS)}")
    n = _field(cp, "n", int, "checkpoint.")
    size = _field(cp, "tree_size", int, "checkpoint.")
    root = _field(cp, "root_hash", str, "checkpoint.")
    created = _field(cp, "created_at", str, "checkpoint.")
    if n < 1:
        raise ProofError("checkpoint.n must be >= 1")
    if not _HEX64.fullmatch(root):
        raise ProofError("checkpoint.root_hash is not 64 lowercase hex digits")
    if not _TS.fullmatch(created):
        raise ProofError("checkpoint.created_at is not RFC 3339 UTC with milliseconds")
    path = _hex_hashes("inclusion_path", doc["inclusion_path"])

    if game_id is not None and doc_game != game_id:
        raise ProofError(f"the proof is for game {doc_game!r}, not {game_id!r}")
    if last_event_hash is not None and doc_hash != last_event_hash:
        raise ProofError(
            f"the proof is for last event hash {doc_hash}, but the events end in {last_event_hash}"
        )
    if trusted_checkpoint is not None and (
        trusted_checkpoint.get("tree_size") != size or trusted_checkpoint.get("root_hash") != root
    ):
        raise ProofError(
            f"the proof's checkpoint (size {size}, root {root}) is not the trusted one "
            f"(size {trusted_checkpoint.get('tree_size')}, "
            f"root {trusted_checkpoint.get('root_hash')})"
        )
    leaf = leaf_hash(bytes.fromhex(doc_hash))
    merkle.verify_inclusion(leaf, index, size, path, bytes.fromhex(root))
