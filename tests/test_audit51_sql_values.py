"""Audit 51: the VALUES of the analyst views (docs/sql.md) against an independent
computation (events, games, player_games, findings, moves, chip_flows, sessions,
quarantine, ingest_batches and flags on five stores of all four variants): one defect,
fixed and pinned here. ``ingest_batches.committed_at`` was DuckDB's ``now()``, the time
the batch's transaction *began* (within 0.3 ms of ``started_at`` however long the batch
took); it is now the wall-clock time of the batch's last write before its COMMIT, and
``quarantine.received_at`` the time the batch wrote the line (it was ``now()`` too)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import rummyguard.events.ingest as ingest_mod
from rummyguard.events.store import EventStore
from rummyguard.events.views import connect_readonly

SAMPLE = Path(__file__).parent / "data" / "sample" / "classic-3p.jsonl"
DELAY = 0.5


def test_ingest_batches_committed_at_is_the_commit_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = ingest_mod.write_plan

    def slow_write_plan(*args: object, **kwargs: object) -> object:
        time.sleep(DELAY)  # the batch's work inside its transaction takes DELAY seconds
        return real(*args, **kwargs)

    monkeypatch.setattr(ingest_mod, "write_plan", slow_write_plan)
    db = tmp_path / "s.duckdb"
    store = EventStore.open(db)
    try:
        # the sample, and one line that is not JSON: quarantine.received_at is a time too
        store.ingest_lines([*SAMPLE.read_bytes().splitlines(), b"not json"],
                           source=str(SAMPLE))
    finally:
        store.close()
    con = connect_readonly(db)
    try:
        (started, committed), = con.execute(
            "SELECT started_at, committed_at FROM ingest_batches").fetchall()
        (received,), = con.execute("SELECT received_at FROM quarantine").fetchall()
    finally:
        con.close()
    # the batch committed after its DELAY seconds of work, so at least that long after it
    # started
    assert (committed - started).total_seconds() >= DELAY * 0.8, (started, committed)
    # the quarantined line was written by the same batch, after its work
    assert (received - started).total_seconds() >= DELAY * 0.8, (started, received)
