"""The README's analyst queries run, read-only, on a real store built by the pipeline:
simulate -> ingest -> verify -> scan (so the README cannot drift from the views)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).parents[1] / "README.md"


def readme_queries() -> list[str]:
    text = README.read_text()
    block = text.split("<!-- analyst-queries -->", 1)[1].split("<!-- /analyst-queries -->", 1)[0]
    return [q.strip() for q in re.findall(r"```sql\n(.*?)```", block, re.S)]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rummyguard.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("readme")
    db = root / "rg.duckdb"
    steps = [
        ("simulate", "--games", "120", "--seed", "5", "--variants", "classic,michigan",
         "--fraud-rate", "0.08", "--out", str(root / "w.jsonl"), "--no-progress"),
        ("ingest", str(root / "w.jsonl"), "--db", str(db)),
        ("verify", "--db", str(db), "--no-progress"),
        ("scan", "--db", str(db)),
    ]
    for args in steps:
        out = cli(*args, cwd=root)
        assert out.returncode in (0, 1), (args, out.stderr[-2000:])
    return db


def test_readme_has_five_queries():
    assert len(readme_queries()) == 5


@pytest.mark.parametrize("index", range(5))
def test_readme_query_runs(store, index):
    query = readme_queries()[index]
    out = cli("sql", "--db", str(store), "--format", "json", "--", query, cwd=store.parent)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().startswith("[")
    if index in (1, 2, 3):  # results, chip flows and timing exist in any simulated world
        assert out.stdout.strip() != "[]"
