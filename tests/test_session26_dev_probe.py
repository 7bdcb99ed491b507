"""benchmarks/detection/dev_probe.py, the development-world probe of DETECTION.md
session 26, on a small simulated world: it prints issue 8's figures as one JSON line, the
same figures on every run (cached feature tables or not), a mechanism without a model as
``null`` rather than a crash (it crashed on such a world before), and with ``--misses`` one
row per labelled, seated subject of the mechanism with its rank among unlabelled ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rummyguard.fraud.labels import read_labels
from rummyguard.fraud.pipeline import jsonl_game_batches, run_facts, write_parquet
from rummyguard.sim.world import WorldConfig, build_world, dumps_labels, run_world

PROBE = Path(__file__).resolve().parents[1] / "benchmarks" / "detection" / "dev_probe.py"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("probe")
    log, labels = root / "w.jsonl", root / "w.labels.json"
    config = WorldConfig(games=400, seed=4242, fraud_rate=0.1, players=200,
                         variants=("classic", "r500", "michigan"), workers=0)
    with log.open("wb") as out:
        doc = run_world(build_world(config), out.write)
    labels.write_bytes(dumps_labels(doc))
    _total, batches = jsonl_game_batches([log])
    write_parquet(run_facts(batches, workers=0), root / "facts")
    return root / "facts", labels


def _probe(*args: str) -> dict:
    run = subprocess.run([sys.executable, str(PROBE), *args], capture_output=True, text=True,
                         timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.strip().splitlines()
    assert len(lines) == 1
    out = json.loads(lines[0])
    out.pop("fit_s")
    return out


def test_probe_prints_the_same_figures_each_run(world: tuple[Path, Path], tmp_path: Path) -> None:
    facts, labels = world
    spec = f"{facts}:{labels}"
    plain = _probe("--train", spec, "--dev", spec)
    cached = [_probe("--train", spec, "--dev", spec, "--cache", str(tmp_path)) for _ in (1, 2)]
    assert plain == cached[0] == cached[1]
    for key in ("one_class", "one_class_moderate", "p_at_50", "card_feeding", "soft_play",
                "chip_dumping", "multi_account", "bot", "hidden_card_moderate"):
        assert key in plain
    # a mechanism the fit gave no model (under 2 positives) is null or scored 0, not a crash
    no_model = [m for m, n in plain["positives"].items() if n < 2 and m in plain]
    assert no_model, "the small world should leave some mechanism without a model"
    assert all(plain[m] is None or 0.0 <= plain[m] <= 1.0 for m in no_model)


def test_misses_lists_each_labelled_seated_pair(world: tuple[Path, Path]) -> None:
    facts, labels = world
    spec = f"{facts}:{labels}"
    out = _probe("--train", spec, "--dev", spec, "--misses", "chip_dumping",
                 "--force", "chip_dumping=pooled")
    truth = read_labels(labels)
    rows = out["misses"]
    assert 0 < len(rows) <= len(truth.pair_pos["chip_dumping"])
    assert [r["unlabelled_above"] for r in rows] == sorted(r["unlabelled_above"] for r in rows)
    assert all("dump_z" in r and 0 <= r["score"] <= 1 for r in rows)
    assert out["learners"]["chip_dumping"] == "pooled (forced)"
