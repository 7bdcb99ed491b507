"""The local engine on both cores gives exactly what it gives in one process.

The scan's map (replay + facts per game) runs in a process pool over batches of games
(``fraud.pipeline.run_facts(workers=N)``); batches come back in any order of completion
but are gathered in submission order, so the facts, the ``fraud.*`` tables and the flags
must not depend on the number of workers. The world is a real simulated one (every
variant the simulator plays, planted fraud and platform faults), ingested into a store.

``simulated_store`` is shared with tests/test_ray.py (the Ray engine against this one).
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from polars.testing import assert_frame_equal

from rummyguard.events.store import EventStore
from rummyguard.fraud.facts import TABLES
from rummyguard.fraud.pipeline import run_facts, store_game_batches
from rummyguard.fraud.scan import scan_store
from rummyguard.sim.world import WorldConfig, available_variants, build_world, run_world

#: a world small enough for a test, big enough for several batches of every kind
WORLD = WorldConfig(games=72, seed=909, variants=tuple(available_variants()), fraud_rate=0.25,
                    faults=6, workers=1, players=24)


def simulated_store(directory: Path, config: WorldConfig = WORLD) -> Path:
    """A store at ``directory/world.duckdb`` holding the simulated world of ``config``."""
    out: list[bytes] = []
    run_world(build_world(config), out.append)
    log = directory / "world.jsonl"
    log.write_bytes(b"".join(out))
    path = directory / "world.duckdb"
    with EventStore.open(path) as store:
        summary = store.ingest_files([log])
        assert summary.balanced
    return path


def fraud_tables(con: duckdb.DuckDBPyConnection) -> dict[str, pa.Table]:
    """Every ``fraud.*`` fact table, as stored (load_facts sorts them)."""
    return {name: con.sql(f"SELECT * FROM fraud.{name}").to_arrow_table() for name in TABLES}


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return simulated_store(tmp_path_factory.mktemp("engines"))


def test_process_pool_facts_equal_in_process_facts(store_path: Path) -> None:
    with EventStore.open(store_path, read_only=True) as store:
        total, batches = store_game_batches(store, batch_games=10)
        serial = run_facts(batches, workers=0)
        _, batches = store_game_batches(store, batch_games=10)
        done: list[int] = []
        pooled = run_facts(batches, workers=2, progress=done.append)
    assert total == WORLD.games
    assert sum(done) == total and len(done) == -(-total // 10)  # every batch came back once
    assert serial["player_games"].num_rows >= 2 * total
    for name in TABLES:
        assert pooled[name].equals(serial[name]), name  # same rows, same order, same types


def test_scan_with_two_workers_writes_the_same_tables_and_flags(store_path: Path,
                                                                tmp_path: Path) -> None:
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(store_path.read_bytes())
    with EventStore.open(store_path) as store:
        serial = scan_store(store, workers=0)
        serial_tables = fraud_tables(store.con)
        serial_view = store.con.sql("SELECT * FROM flags ORDER BY flag_id").pl()
    with EventStore.open(copy) as store:
        # batches smaller than the world: the pool really runs (scan_store keeps small
        # worlds in process)
        pooled = scan_store(store, workers=2, batch_games=16)
        pooled_tables = fraud_tables(store.con)
        pooled_view = store.con.sql("SELECT * FROM flags ORDER BY flag_id").pl()
    assert pooled.games == serial.games == WORLD.games
    assert pooled.fact_rows == serial.fact_rows
    assert (pooled.players, pooled.pairs) == (serial.players, serial.pairs)
    for name in TABLES:
        assert pooled_tables[name].equals(serial_tables[name]), name
    assert serial.flags.height > 0  # planted fraud at 25 %: something is flagged
    assert_frame_equal(pooled.flags, serial.flags)
    assert_frame_equal(pooled_view, serial_view)
