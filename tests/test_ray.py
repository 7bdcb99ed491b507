"""The Ray engine gives the local engine's results: same facts, same findings, same flags.

A real local Ray (2 CPUs, no dashboard) runs the map over a real Parquet export of a
simulated world (every variant, planted fraud, platform faults); the local engine
(``scan_store`` + ``verify_games``) runs over the same store. Once with Ray Data's
default blocks, and once with blocks so small that most games are cut by a block
boundary, so the reassembly path on the driver is what produces the results.

The block-level functions (completeness by the manifest, packing) are tested without
a cluster, so they run even where Ray is not installed.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from polars.testing import assert_frame_equal
from test_engines import WORLD, fraud_tables, simulated_store

from rummyguard.events.export import export_parquet
from rummyguard.events.store import EventStore
from rummyguard.fraud.facts import TABLES
from rummyguard.fraud.ray_engine import (
    GAMES,
    PARTIAL,
    ExportMismatch,
    RayUnavailable,
    game_manifest,
    map_block,
    require_ray,
    scan_parquet_ray,
    scan_store_ray,
    split_block,
)
from rummyguard.fraud.scan import scan_store
from rummyguard.replay.verify import VerifyRun, read_store_bad_lines, verify_games


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The store, its export, and the local engine's results on it."""
    base = tmp_path_factory.mktemp("ray")
    path = simulated_store(base)
    local = base / "local.duckdb"
    local.write_bytes(path.read_bytes())
    with EventStore.open(local) as store:
        scan = scan_store(store, workers=0)
        tables = fraud_tables(store.con)
        view = store.con.sql("SELECT * FROM flags ORDER BY flag_id").pl()
        run = verify_games(store.iter_games())
        # `verify --db`: the export's games plus the lines ingest quarantined (the world's
        # tampered event and the rest of its game), which a scan of the store must keep
        store_run = VerifyRun()
        read_store_bad_lines(store.con, store_run)
        store_run = verify_games(store.iter_games(), store_run)
        export = base / "export"
        export_parquet(store.con, export)
    assert store_run.bad_lines  # the planted tampered event was quarantined
    return {"path": path, "export": export, "scan": scan, "tables": tables, "flags_view": view,
            "run": run, "store_run": store_run}


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'rummyguard[ray]')")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             object_store_memory=256 * 1024 * 1024)
    try:
        yield ray
    finally:
        ray.shutdown()


def _verdicts(run: VerifyRun) -> list[tuple[Any, ...]]:
    return [(r.game_id, r.variant, r.halted, [f.to_dict() for f in r.findings],
             r.results.to_dict(), r.events_read, r.last_seq) for r in run.records]


def _assert_same_as_local(world: dict[str, Any], result: Any, con: duckdb.DuckDBPyConnection,
                          run: VerifyRun | None = None) -> None:
    local = world["scan"]
    assert result.games == local.games == WORLD.games
    assert result.fact_rows == local.fact_rows
    assert (result.players, result.pairs) == (local.players, local.pairs)
    tables = fraud_tables(con)
    for name in TABLES:
        assert tables[name].equals(world["tables"][name]), name
    assert local.flags.height > 0
    assert_frame_equal(result.flags, local.flags)
    assert_frame_equal(con.sql("SELECT * FROM flags ORDER BY flag_id").pl(), world["flags_view"])
    expected = _verdicts(run or world["run"])
    assert any(v[3] for v in expected)  # the planted faults give findings to compare
    assert _verdicts(result.run) == expected


@pytest.mark.ray
def test_ray_scan_of_the_store_equals_the_local_engine(world: dict[str, Any], ray_cluster: Any,
                                                       tmp_path: Path) -> None:
    copy = tmp_path / "ray.duckdb"
    copy.write_bytes(world["path"].read_bytes())
    with EventStore.open(copy) as store:
        result = scan_store_ray(store)  # exports to a temporary directory, maps on Ray
        _assert_same_as_local(world, result, store.con, world["store_run"])
        findings = store.con.sql("SELECT count(*) FROM findings").fetchall()[0][0]
    assert findings == sum(len(r.findings) for r in world["store_run"].records) > 0
    summary = result.summary()
    assert summary["engine"]["name"] == "ray" and summary["engine"]["cpus"] == 2
    assert summary["verify"] == world["store_run"].summary()
    assert ray_cluster.is_initialized()  # a session it did not start is left running


@pytest.mark.ray
def test_games_cut_by_block_boundaries_are_reassembled_whole(world: dict[str, Any],
                                                              ray_cluster: Any) -> None:
    con = duckdb.connect()
    result = scan_parquet_ray(world["export"], con=con, target_block_bytes=96 * 1024)
    files = len(list(world["export"].rglob("*.parquet")))
    assert result.blocks > files  # files really were cut into several blocks
    assert 0 < result.boundary_games < result.games  # both paths produced games
    _assert_same_as_local(world, result, con)


# --- the block functions, no cluster -------------------------------------------------------

def _rows(games: dict[str, int], order: list[tuple[str, int]] | None = None) -> pa.Table:
    pairs = order or [(g, s) for g, n in games.items() for s in range(n)]
    return pa.table({
        "game_id": [g for g, _ in pairs], "seq": pa.array([s for _, s in pairs], pa.int64()),
        "raw": [f"{g}:{s}" for g, s in pairs], "prev_hash": ["p"] * len(pairs),
        "hash": ["h"] * len(pairs), "variant": ["classic"] * len(pairs)})


def test_a_block_keeps_only_the_games_it_holds_whole() -> None:
    # a block holding the tail of g1, all of g2 (shuffled) and the head of g3
    order = [("g2", 2), ("g1", 3), ("g3", 0), ("g2", 0), ("g1", 4), ("g2", 1)]
    whole, partial = split_block(_rows({}, order), {"g1": 5, "g2": 3, "g3": 2})
    assert whole.column_names == ["game_id", "seq", "raw", "prev_hash", "hash"]
    assert whole.column("raw").to_pylist() == ["g2:0", "g2:1", "g2:2"]
    assert partial.column("raw").to_pylist() == ["g1:3", "g1:4", "g3:0"]


def test_a_block_that_contradicts_the_manifest_is_refused() -> None:
    with pytest.raises(ExportMismatch, match="'g1': 3 rows in one block"):
        split_block(_rows({"g1": 3}), {"g1": 2})
    with pytest.raises(ExportMismatch, match="'g9'"):
        split_block(_rows({"g9": 1}), {"g1": 2})


def test_map_block_sends_cut_games_back_untouched(world: dict[str, Any]) -> None:
    con = duckdb.connect()
    manifest = game_manifest(con, world["export"])
    assert manifest.num_rows == WORLD.games
    assert manifest.column("n").to_pylist() == [
        n for _, n in sorted(con.execute(
            "SELECT game_id, count(*) FROM read_parquet(?) GROUP BY game_id",
            [str(world["export"] / "**" / "*.parquet")]).fetchall())]
    rows = con.sql(f"SELECT * FROM read_parquet('{world['export']}/**/*.parquet') "
                   f"ORDER BY game_id, seq").to_arrow_table()
    cut = rows.slice(0, int(manifest.column("n")[0].as_py()) + 3)  # game 1 whole, 3 rows of game 2
    out = map_block(cut, manifest)
    kinds = dict(zip(out.column("kind").to_pylist(), out.column("data").to_pylist(), strict=True))
    games = pa.ipc.open_stream(pa.py_buffer(kinds[GAMES])).read_all()
    assert games.column("game_id").to_pylist() == [manifest.column("game_id")[0].as_py()]
    partial = pa.ipc.open_stream(pa.py_buffer(kinds[PARTIAL])).read_all()
    assert partial.num_rows == 3
    assert partial.column("seq").to_pylist() == [0, 1, 2]
    assert set(partial.column("game_id").to_pylist()) == {manifest.column("game_id")[1].as_py()}


def test_missing_ray_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` raise ImportError
    with pytest.raises(RayUnavailable, match=r"pip install 'rummyguard\[ray\]'"):
        require_ray()


@pytest.mark.ray
def test_scan_cli_engine_ray_gives_the_local_flags(world: dict[str, Any], tmp_path: Path) -> None:
    """`rummyguard scan --engine ray` through the real CLI, compared with the local scan."""
    import json
    import subprocess

    pytest.importorskip("ray", reason="Ray is not installed (pip install 'rummyguard[ray]')")
    db = tmp_path / "cli.duckdb"
    db.write_bytes(world["path"].read_bytes())
    out = subprocess.run([sys.executable, "-m", "rummyguard.cli", "scan", "--db", str(db),
                          "--engine", "ray", "--workers", "2", "--json", "--model", "none"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    summary = json.loads(out.stdout)
    assert summary["flags"] == world["scan"].flags.height
    con = duckdb.connect(str(db), read_only=True)
    got = con.sql("SELECT * FROM flags ORDER BY flag_id").pl()
    assert_frame_equal(got, world["flags_view"])


def test_scan_cli_rejects_an_unknown_engine(tmp_path: Path) -> None:
    import subprocess

    out = subprocess.run([sys.executable, "-m", "rummyguard.cli", "scan", "--engine", "spark",
                          "--db", str(tmp_path / "x.duckdb")], capture_output=True, text=True)
    assert out.returncode == 2 and "--engine must be local or ray" in out.stderr
