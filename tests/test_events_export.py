"""Parquet export: Hive partitions by variant/date, whole games, sorted, and read back
identically by DuckDB and Polars."""

from __future__ import annotations

from pathlib import Path

import duckdb
import orjson
import polars as pl
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.store import EventStore

TESTS = Path(__file__).parent
SAMPLE = TESTS / "data" / "sample" / "classic-3p.jsonl"
CHAINED = TESTS / "data" / "sample" / "classic-3p.chained.jsonl"
GOLDEN = TESTS / "data" / "events" / "golden.jsonl"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "x.duckdb"
    late = []
    for e in (orjson.loads(x) for x in SAMPLE.read_bytes().splitlines()):
        # a game that starts before midnight and ends after it: never split
        e = {**e, "game_id": "late", "event_id": f"late-{e['seq']}",
             "ts": ("2026-11-30T00:00:01.000Z" if e["seq"] > 20 else
                    "2026-11-29T23:59:59.000Z")}
        late.append(orjson.dumps(e))
    (tmp_path / "late.jsonl").write_bytes(b"\n".join(late) + b"\n")
    with EventStore.open(path) as s:
        s.ingest_files([SAMPLE, CHAINED, GOLDEN, tmp_path / "late.jsonl"])
    return path


def test_export_reads_back_identically(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    result = CliRunner().invoke(app, ["export", "--parquet", str(out), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.stderr
    summary = orjson.loads(result.stdout)
    with EventStore.open(db, read_only=True) as s:
        total = s.counts()["events"]
    assert summary["rows"] == total == 27 * 3 + 26
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.parquet"))
    assert "variant=classic/date=2026-11-29/part-0.parquet" in files
    assert "variant=r500/date=2026-11-29/part-0.parquet" in files
    assert any(f.startswith("variant=unknown/") for f in files)

    glob = str(out / "**" / "*.parquet")
    con = duckdb.connect()
    d = con.execute(
        f"SELECT count(*), count(DISTINCT game_id) FROM read_parquet('{glob}', "
        "hive_partitioning = true)").fetchall()[0]
    frame = pl.scan_parquet(glob, hive_partitioning=True).collect()
    assert d == (total, 29) and frame.height == total
    assert frame["game_id"].n_unique() == 29
    split = (frame.group_by("game_id").agg(pl.struct("variant", "date").n_unique().alias("n"))
             .filter(pl.col("n") > 1))
    assert split.height == 0
    late = frame.filter(pl.col("game_id") == "late")
    assert late.height == 27 and set(late["date"].cast(pl.String)) == {"2026-11-29"}
    for path in out.rglob("*.parquet"):
        part = pl.read_parquet(path)
        keys = list(zip(part["game_id"], part["seq"], strict=True))
        assert keys == sorted(keys)
    drew = frame.filter(pl.col("event_id") == "golden-Drew-v1").row(0, named=True)
    assert orjson.loads(drew["payload"]) == {"source": "stock", "cards": ["TH"]}
    assert drew["v"] == 2 and drew["stored_v"] == 1


def test_export_refuses_a_non_empty_directory(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    runner = CliRunner()
    assert runner.invoke(app, ["export", "--parquet", str(out), "--db", str(db)]).exit_code == 0
    again = runner.invoke(app, ["export", "--parquet", str(out), "--db", str(db)])
    assert again.exit_code == 2 and "not empty" in again.stderr
    over = runner.invoke(app, ["export", "--parquet", str(out), "--db", str(db), "--overwrite"])
    assert over.exit_code == 0
    (out / "notes.txt").write_text("mine")
    guarded = runner.invoke(app, ["export", "--parquet", str(out), "--db", str(db),
                                  "--overwrite"])
    assert guarded.exit_code == 2 and "notes.txt" in guarded.stderr
    assert (out / "notes.txt").exists()


def test_export_is_deterministic(db: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    for name in ("a", "b"):
        assert runner.invoke(app, ["export", "--parquet", str(tmp_path / name), "--db",
                                   str(db)]).exit_code == 0
    for path in (tmp_path / "a").rglob("*.parquet"):
        twin = tmp_path / "b" / path.relative_to(tmp_path / "a")
        assert pl.read_parquet(path).equals(pl.read_parquet(twin))
