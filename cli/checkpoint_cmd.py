"""``rummyguard checkpoint`` and ``rummyguard prove``: Merkle checkpoints and their proofs."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import typer

from ..events.checkpoint import (
    CheckpointError,
    ProofError,
    TamperError,
    inclusion_proof,
    latest_checkpoint,
    make_checkpoint,
)
from ..events.store import EventStore, StoreError
from .common import DbOption, console, db_path, err_console, fail, print_json

JsonOption = typer.Option(False, "--json", help="Print one JSON document instead of text.")


@contextmanager
def _open(db: Path | None, *, write: bool) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open an existing store; a missing file is a user error, not a new empty store."""
    path = db_path(db)
    if not path.exists():
        fail(f"no store at {path} (ingest a log first, or pass --db)")
    try:
        store = EventStore.open(path, read_only=not write)
    except StoreError as exc:
        fail(str(exc))
    try:
        yield store.con
    finally:
        store.close()


def _tampered(exc: TamperError) -> None:
    """List every problem, then exit 1: tampering is a finding, not a usage error."""
    for problem in exc.problems:
        err_console.print(f"  {problem}", highlight=False, soft_wrap=True)
    fail(
        f"refused: the store does not match its checkpoints ({len(exc.problems)} problems)",
        code=1,
    )


def checkpoint(db: Path | None = DbOption, as_json: bool = JsonOption) -> None:
    """Add newly finished games to the Merkle log and store a checkpoint.

    A game is finished once it has a GameEnded; its leaf is that event's hash, which the
    hash chain ties to every event before it. Events logged after it (a late PlayerLeft)
    stay in its chain (`verify-log`) and do not change its leaf.

    A checkpoint is (number, tree size, root hash, time) over every finished game so
    far, with a consistency proof from the previous one. Publish it: anyone holding it
    can later check a game's inclusion proof (`rummyguard prove`) without the store.
    Refuses, exit 1, if any checkpointed game changed since it was checkpointed.
    """
    with _open(db, write=True) as con:
        try:
            before = latest_checkpoint(con)
            cp = make_checkpoint(con)
        except TamperError as exc:
            _tampered(exc)
        except (CheckpointError, duckdb.Error) as exc:
            fail(str(exc))
    created = before is None or cp.n != before.n
    previous_size = 0 if before is None else before.tree_size
    added = cp.tree_size - previous_size if created else 0
    if as_json:
        print_json(
            {
                "created": created,
                "added_games": added,
                "checkpoint": cp.to_document(),
                "consistency_proof": None
                if cp.consistency_proof is None
                else {"from_checkpoint": cp.n - 1, "hashes": list(cp.consistency_proof)},
            }
        )
        return
    if not created:
        console.print(
            f"no newly finished game; checkpoint {cp.n} ({cp.tree_size} games) still stands",
            highlight=False,
        )
    else:
        since = "" if cp.n == 1 else f" (+{added} since checkpoint {cp.n - 1})"
        console.print(f"checkpoint {cp.n}: {cp.tree_size} games{since}", highlight=False)
    console.print(f"root  {cp.root_hash}", highlight=False)
    console.print(f"time  {cp.created_at}", highlight=False)
    if created and cp.consistency_proof is not None:
        console.print(
            f"consistent with checkpoint {cp.n - 1}: "
            f"{len(cp.consistency_proof)}-hash proof, verified",
            highlight=False,
        )


def prove(
    game_id: str = typer.Argument(..., help="The game to prove."),
    checkpoint_n: int = typer.Option(
        None, "--checkpoint", "-c", min=1, help="Checkpoint number (default: the latest)."
    ),
    db: Path | None = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Print the inclusion proof of a finished game in a checkpoint (verified first).

    The JSON form is self-contained: with the checkpoint's published size and root,
    it verifies offline (rummyguard.events.checkpoint.verify_proof_document).
    """
    with _open(db, write=False) as con:
        try:
            proof = inclusion_proof(con, game_id, checkpoint_n)
        except TamperError as exc:
            _tampered(exc)
        except (CheckpointError, ProofError, duckdb.Error) as exc:
            fail(str(exc))
    if as_json:
        print_json(proof.to_document())
        return
    cp = proof.checkpoint
    console.print(
        f"game {proof.game_id} is leaf {proof.leaf_index} of checkpoint {cp.n} "
        f"({cp.tree_size} games, {cp.created_at})",
        highlight=False,
    )
    console.print(f"root             {cp.root_hash}", highlight=False)
    console.print(f"GameEnded hash   {proof.last_event_hash}", highlight=False)
    console.print(f"inclusion path   {len(proof.inclusion_path)} hashes, verified", highlight=False)
    for h in proof.inclusion_path:
        console.print(f"  {h}", highlight=False)
