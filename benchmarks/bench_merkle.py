"""Merkle checkpoint benchmark: tree over 1M games, a checkpoint in a real store, proofs.

Measures, on one core (the tree is sequential hashing):

- ``root_streaming_s``: the RFC 9162 root of N leaves with O(log N) memory
  (leaf hashing included), the floor of any checkpoint;
- ``tree_build_s``: :class:`MerkleTree` over N leaves (all perfect subtrees kept, the
  structure proofs are cut from);
- ``checkpoint_first_s`` / ``checkpoint_next_s``: :func:`make_checkpoint` end to end in
  a DuckDB store of N finished games (``--events-per-game`` events each, written straight
  into ``store.events``; ingest speed is the Ingest section's business): history check,
  tamper check of every leaf against its game's last event, new leaves, root, proof;
  the second run after 1,000 more games, with a consistency proof from the first;
- ``prove_s``: :func:`inclusion_proof` end to end (reload leaves, rebuild, cut, verify);
- ``verify_inclusion_us`` / ``verify_consistency_us`` / ``verify_document_us``: median
  time to verify one proof (of ``--samples`` random leaves), the cost a regulator pays.

Prints one JSON document. Usage: ``python benchmarks/bench_merkle.py [--leaves N]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rummyguard.events.checkpoint import inclusion_proof, make_checkpoint, verify_proof_document
from rummyguard.events.merkle import (
    MerkleTree,
    leaf_hash,
    root_hash_of_leaf_hashes,
    verify_consistency,
    verify_inclusion,
)
from rummyguard.events.store import EventStore


def _timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start


def _median_us(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1e6, 2)


def bench_tree(n: int, samples: int, rng: random.Random) -> dict[str, Any]:
    leaves = [hashlib.sha256(i.to_bytes(8, "big")).digest() for i in range(n)]
    root, streaming = _timed(root_hash_of_leaf_hashes, (leaf_hash(x) for x in leaves))
    tree, build = _timed(MerkleTree, (leaf_hash(x) for x in leaves))
    assert tree.root() == root

    path_times, verify_times = [], []
    for index in (rng.randrange(n) for _ in range(samples)):
        path, t = _timed(tree.inclusion_path, index)
        path_times.append(t)
        lh = leaf_hash(leaves[index])
        _, t = _timed(verify_inclusion, lh, index, n, path, root)
        verify_times.append(t)

    cons_times = []
    for old in (rng.randrange(1, n) for _ in range(samples)):
        proof = tree.consistency_proof(old)
        old_root = tree.root(old)
        _, t = _timed(verify_consistency, old, n, old_root, root, proof)
        cons_times.append(t)
    return {
        "root_streaming_s": round(streaming, 3),
        "tree_build_s": round(build, 3),
        "inclusion_path_us": _median_us(path_times),
        "verify_inclusion_us": _median_us(verify_times),
        "verify_consistency_us": _median_us(cons_times),
        "inclusion_path_len": len(tree.inclusion_path(n // 3)),
    }


def _fill(store: EventStore, first: int, count: int, per_game: int, batch: int) -> None:
    """Write ``count`` finished games straight into store.events (one batch id)."""
    store.con.execute(
        f"""
        INSERT INTO store.events (event_id, game_id, seq, type, v, ts, ts_text, actor,
                                  payload, prev_hash, hash, raw, batch_id)
        SELECT 'e' || g || '-' || s, 'g' || g, s,
               CASE WHEN s = {per_game - 1} THEN 'GameEnded' ELSE 'Discarded' END, 1,
               TIMESTAMP '2026-11-29 18:00:00', '2026-11-29T18:00:00.000Z', 'system', '{{}}',
               CASE WHEN s = 0 THEN repeat('0', 64) ELSE sha256('g' || g || '-' || (s - 1)) END,
               sha256('g' || g || '-' || s), '{{}}', {batch}
        FROM range({first}, {first + count}) t(g), range({per_game}) u(s)
        """
    )


def bench_store(n: int, per_game: int, samples: int, rng: random.Random) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, EventStore.open(Path(tmp) / "bench.duckdb") as st:
        _, fill = _timed(_fill, st, 0, n, per_game, 1)
        first, t_first = _timed(make_checkpoint, st.con)
        _fill(st, n, 1000, per_game, 2)
        second, t_next = _timed(make_checkpoint, st.con)
        assert second.tree_size == n + 1000 and second.consistency_proof is not None
        game = f"g{rng.randrange(n)}"
        proof, t_prove = _timed(inclusion_proof, st.con, game)
        doc = proof.to_document()
        doc_times = [_timed(verify_proof_document, doc)[1] for _ in range(samples)]
        size = Path(tmp, "bench.duckdb").stat().st_size
    return {
        "games": n,
        "events_per_game": per_game,
        "fill_events_s": round(fill, 2),
        "checkpoint_first_s": round(t_first, 2),
        "checkpoint_next_s": round(t_next, 2),
        "prove_s": round(t_prove, 2),
        "verify_document_us": _median_us(doc_times),
        "consistency_proof_len": len(second.consistency_proof),
        "first_checkpoint_tree_size": first.tree_size,
        "store_mb": round(size / 2**20, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leaves", type=int, default=1_000_000)
    parser.add_argument("--events-per-game", type=int, default=3)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--skip-store", action="store_true", help="Only the in-memory tree.")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    result: dict[str, Any] = {
        "benchmark": "merkle",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "leaves": args.leaves,
        "samples": args.samples,
        "tree": bench_tree(args.leaves, args.samples, rng),
    }
    if not args.skip_store:
        result["store"] = bench_store(args.leaves, args.events_per_game, args.samples, rng)
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
