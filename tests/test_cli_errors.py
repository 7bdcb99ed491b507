"""Every error a user commonly causes is one clear line on stderr (exit 2), never a
traceback — for each command of the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rummyguard.cli", *args], capture_output=True,
                          cwd=cwd, timeout=120, text=True)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A small real store: the classic sample logs, ingested."""
    root = tmp_path_factory.mktemp("store")
    out = run("ingest", str(DATA / "classic" / "clean.jsonl"), "--db", str(root / "rg.duckdb"),
              cwd=root)
    assert out.returncode == 0, out.stderr
    return root / "rg.duckdb"


CASES = {
    "ingest a missing file": (["ingest", "{tmp}/nope.jsonl", "--db", "{tmp}/x.duckdb"], "no such file"),
    "ingest into a folder": (["ingest", "{data}/classic/clean.jsonl", "--db", "{tmp}"], "store"),
    "verify a missing file": (["verify", "{tmp}/nope.jsonl"], "no such file"),
    "verify with no store": (["verify", "--db", "{tmp}/none.duckdb"], "store"),
    "replay an unknown game": (["replay", "nope", "--db", "{store}"], "not found"),
    "replay with no store": (["replay", "g", "--db", "{tmp}/none.duckdb"], "store"),
    "sql with no store": (["sql", "SELECT 1", "--db", "{tmp}/none.duckdb"], "no store"),
    "sql that writes": (["sql", "DELETE FROM events", "--db", "{store}"], ""),
    "sql with a typo": (["sql", "SELEC 1", "--db", "{store}"], ""),
    "verify-log with no store": (["verify-log", "--db", "{tmp}/none.duckdb"], "store"),
    "export with no store": (["export", "--parquet", "{tmp}/pq", "--db", "{tmp}/none.duckdb"], "store"),
    "checkpoint with no store": (["checkpoint", "--db", "{tmp}/none.duckdb"], "store"),
    "prove an unknown game": (["prove", "nope", "--db", "{store}"], ""),
    "dispute an unknown game": (["dispute", "nope", "--bundle", "{tmp}/b.zip", "--db", "{store}"], ""),
    "check a bundle that is not a zip": (["check-bundle", "{data}/classic/clean.jsonl"], ""),
    "scan with no store": (["scan", "--db", "{tmp}/none.duckdb"], "store"),
    "flags with no store": (["flags", "--db", "{tmp}/none.duckdb"], "store"),
    "simulate with nowhere to write": (["simulate", "--games", "2", "--seed", "1"], "--out"),
    "simulate an unknown variant": (["simulate", "--games", "2", "--seed", "1", "--variants", "gin",
                                     "--out", "{tmp}/w.jsonl"], "unknown variant"),
    "a store named after a schema": (["ingest", "{data}/classic/clean.jsonl", "--db", "{tmp}/store.duckdb"],
                                     "may not be called"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_user_error_is_one_clear_line(name, store, tmp_path):
    args, needle = CASES[name]
    args = [a.format(tmp=tmp_path, data=DATA, store=store) for a in args]
    out = run(*args, cwd=tmp_path)
    assert out.returncode == 2, (out.returncode, out.stdout[-500:], out.stderr[-2000:])
    assert "Traceback" not in out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    assert needle.lower() in lines[0].lower()
