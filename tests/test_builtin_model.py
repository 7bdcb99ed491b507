"""The built-in model (fraud/builtin.py): the shipped training data matches this code, the
model is fitted once and cached, a stale or damaged file is refused or replaced, and
``scan`` / ``demo`` use it by default.

The mechanics (cache, lock, damaged file) run on a small bundle cut from the shipped one
(all its positives and 300 other players, the pairs among them), which fits in seconds;
one test fits the real bundle, once per session (the cache is shared, tests/conftest.py).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import polars as pl
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.fraud.builtin import (
    BUNDLE,
    BundleError,
    builtin_model,
    bundle_key,
    read_bundle,
    resolve_model,
)
from rummyguard.fraud.features import FEATURES_VERSION, PAIR_FEATURES, PLAYER_FEATURES
from rummyguard.fraud.models import MECHANISMS, FraudModel, ModelError, level_of


# -- the shipped data ---------------------------------------------------------------------------
def test_shipped_bundle_matches_this_code() -> None:
    players, pairs, meta = read_bundle()
    assert meta["features_version"] == FEATURES_VERSION
    assert {"player", *PLAYER_FEATURES} <= set(players.columns)
    assert {"p1", "p2", *PAIR_FEATURES} <= set(pairs.columns)
    assert players.get_column("player").is_unique().all()
    assert pairs.filter(pl.col("p1") >= pl.col("p2")).height == 0
    ids = set(players.get_column("player").to_list())
    keys = set(zip(pairs.get_column("p1").to_list(), pairs.get_column("p2").to_list(), strict=True))
    for m in MECHANISMS:  # every mechanism has acted cases to learn from, all in the tables
        cases = meta["pair_pos"][m] if level_of(m) == "pair" else meta["player_pos"][m]
        assert cases, m
        if level_of(m) == "pair":
            assert {tuple(k) for k in cases} <= keys
        else:
            assert set(cases) <= ids
    positives = {p for v in meta["player_pos"].values() for p in v}
    assert not positives & set(meta["ignore_players"])
    assert meta["world"]["simulated"]["seed"] == 1101


def test_a_bundle_of_another_feature_version_is_refused(tmp_path: Path) -> None:
    bundle = _copy_bundle(tmp_path)
    meta = orjson.loads((bundle / "training.json").read_bytes())
    meta["features_version"] = FEATURES_VERSION - 1
    (bundle / "training.json").write_bytes(orjson.dumps(meta))
    with pytest.raises(BundleError, match="features version"):
        read_bundle(bundle)


def test_a_missing_bundle_file_is_a_clear_error(tmp_path: Path) -> None:
    bundle = _copy_bundle(tmp_path)
    (bundle / "pairs.parquet").unlink()
    with pytest.raises(BundleError, match="incomplete"):
        bundle_key(bundle)


# -- fitting and the cache ----------------------------------------------------------------------
def test_fitted_once_then_read_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = _small_bundle(tmp_path)
    monkeypatch.setenv("RUMMYGUARD_CACHE", str(tmp_path / "cache"))
    notes: list[str] = []
    first = builtin_model(note=notes.append, bundle=bundle)
    assert len(notes) == 1 and "fitting the built-in model" in notes[0]
    cached = list((tmp_path / "cache").glob("builtin-model-*.joblib"))
    assert len(cached) == 1 and bundle_key(bundle) in cached[0].name
    assert set(MECHANISMS) <= set(first.supervised)
    assert first.trained_on["world"]["simulated"]["seed"] == 1101
    second = builtin_model(note=notes.append, bundle=bundle)
    assert len(notes) == 1  # no second fit
    assert second.trained_on == first.trained_on


def test_a_damaged_cache_file_is_fitted_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = _small_bundle(tmp_path)
    monkeypatch.setenv("RUMMYGUARD_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "cache" / f"builtin-model-{bundle_key(bundle)}.joblib"
    path.parent.mkdir()
    path.write_bytes(b"not a model")
    notes: list[str] = []
    model = builtin_model(note=notes.append, bundle=bundle)
    assert isinstance(model, FraudModel) and len(notes) == 1
    assert path.read_bytes()[:11] != b"not a model"


def test_another_bundle_gets_another_cache_file(tmp_path: Path) -> None:
    bundle = _small_bundle(tmp_path)
    before = bundle_key(bundle)
    meta = orjson.loads((bundle / "training.json").read_bytes())
    meta["ignore_players"] = [*meta["ignore_players"], "p999999"]
    (bundle / "training.json").write_bytes(orjson.dumps(meta))
    assert bundle_key(bundle) != before


def test_an_unwritable_cache_still_gives_a_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = _small_bundle(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("RUMMYGUARD_CACHE", str(blocker / "cache"))
    notes: list[str] = []
    model = builtin_model(note=notes.append, bundle=bundle)
    assert isinstance(model, FraudModel)
    assert len(notes) == 1 and "cannot cache" in notes[0]


def test_no_home_directory_still_gives_a_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A container user with no HOME and no passwd entry: Path.home() raises RuntimeError."""
    bundle = _small_bundle(tmp_path)
    for var in ("RUMMYGUARD_CACHE", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(var, raising=False)

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    notes: list[str] = []
    assert isinstance(builtin_model(note=notes.append, bundle=bundle), FraudModel)
    assert len(notes) == 1 and "cannot cache" in notes[0] and "home directory" in notes[0]


def test_two_processes_fit_it_once(tmp_path: Path) -> None:
    bundle = _small_bundle(tmp_path)
    code = ("import sys; from pathlib import Path; from rummyguard.fraud.builtin import builtin_model; "
            "builtin_model(note=lambda t: print('WAIT' if t.startswith('waiting') else 'FIT', flush=True), "
            "bundle=Path(sys.argv[1]))")
    env = {"RUMMYGUARD_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    procs = [subprocess.Popen([sys.executable, "-c", code, str(bundle)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    notes = [line for out, _err in outs for line in out.splitlines()]
    assert notes.count("FIT") == 1


# -- choosing the model -------------------------------------------------------------------------
def test_resolve_model_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_model("none") == (None, "none", "unsupervised only")
    with pytest.raises(ModelError, match="no model file"):
        resolve_model(str(tmp_path / "missing.joblib"))
    monkeypatch.setenv("RUMMYGUARD_MODEL", "none")
    assert resolve_model(None) == (None, "none", "unsupervised only")


def test_scan_uses_the_builtin_model_by_default(tmp_path: Path) -> None:
    """The real bundle, fitted once per session (shared cache); the scan says which model
    scored, and `--model none` is the unsupervised detector alone."""
    from rummyguard.events.store import EventStore
    from rummyguard.sim.world import WorldConfig, build_world, run_world

    log, db = tmp_path / "w.jsonl", tmp_path / "w.duckdb"
    with log.open("wb") as out:
        run_world(build_world(WorldConfig(games=60, seed=5, variants=("classic",))), out.write)
    with EventStore.open(db) as store:
        store.ingest_files([log])
    runner = CliRunner()
    res = runner.invoke(app, ["scan", "--db", str(db), "--json", "--no-progress", "--workers", "0"])
    assert res.exit_code == 0, res.output
    out = orjson.loads(res.stdout)
    assert (out["model"], out["model_label"]) == ("builtin", "built-in model")
    res = runner.invoke(app, ["scan", "--db", str(db), "--json", "--no-progress", "--workers", "0",
                              "--model", "none"])
    assert res.exit_code == 0, res.output
    assert orjson.loads(res.stdout)["model"] == "none"
    res = runner.invoke(app, ["scan", "--db", str(db), "--model", str(tmp_path / "nope.joblib")])
    assert res.exit_code == 2 and "no model file" in res.output


# -- helpers ------------------------------------------------------------------------------------
def _copy_bundle(tmp_path: Path) -> Path:
    out = tmp_path / "bundle"
    out.mkdir()
    for f in BUNDLE.iterdir():
        (out / f.name).write_bytes(f.read_bytes())
    return out


def _small_bundle(tmp_path: Path) -> Path:
    """The shipped bundle cut down: every positive and ignored subject, 60 other players,
    and the pairs among the kept players (a fit of about ten seconds: these tests check
    the cache's mechanics, not the model)."""
    players, pairs, meta = read_bundle()
    keep = set(meta["ignore_players"]) | {p for v in meta["player_pos"].values() for p in v}
    for v in (*meta["pair_pos"].values(), meta["ignore_pairs"]):
        keep |= {p for pair in v for p in pair}
    others = sorted(set(players.get_column("player").to_list()) - keep)[:60]
    keep |= set(others)
    out = tmp_path / "small"
    out.mkdir()
    players.filter(pl.col("player").is_in(sorted(keep))).write_parquet(out / "players.parquet")
    pairs.filter(pl.col("p1").is_in(sorted(keep)) & pl.col("p2").is_in(sorted(keep))).write_parquet(
        out / "pairs.parquet")
    (out / "training.json").write_bytes(orjson.dumps(meta))
    return out


def test_eval_scores_a_world_with_the_builtin_model(tmp_path: Path) -> None:
    """`rummyguard eval --model builtin`: how the shipped model does on your own world."""
    from rummyguard.sim.world import WorldConfig, build_world, dumps_labels, run_world

    log, labels = tmp_path / "w.jsonl", tmp_path / "w.labels.json"
    with log.open("wb") as out:
        doc = run_world(build_world(WorldConfig(games=80, seed=9, variants=("classic",),
                                                fraud_rate=0.1)), out.write)
    labels.write_bytes(dumps_labels(doc))
    res = CliRunner().invoke(app, ["eval", "--model", "builtin", "--test", str(log), "--test-labels",
                                   str(labels), "--json", "--boots", "5", "--workers", "0"])
    assert res.exit_code == 0, res.output
    report = orjson.loads(res.stdout)
    assert report["train_world"]["seed"] == 1101  # the report's "Training world seed 1101"
    assert "leave_one_out" not in report  # no training world given: no refits


#: the feature SQL each FEATURES_VERSION stands for (sha256 of fraud/features.py's player
#: and pair SQL). A change of the SQL fails here until the version is bumped, the bundle
#: rebuilt (benchmarks/detection/build_builtin.py) and the new hash added.
#: versions 8 and 11 changed the facts the SQL reads (the facts audit; Michigan look-alike
#: starts), not the SQL itself
FEATURE_SQL_SHA256 = {7: "158a533b4264b0d8ef17f414fb09bc7bb4cf5c05abd22598b20de4f063977d71",
                      8: "158a533b4264b0d8ef17f414fb09bc7bb4cf5c05abd22598b20de4f063977d71",
                      9: "e746b6e58729b3b99998385f74f2f120b9c242e5c16ba457873b45f11882691a",
                      10: "c16648b01a237b3eb7c02effd76539ec12f414dc586575f5b838b7e08b07a07e",
                      11: "c16648b01a237b3eb7c02effd76539ec12f414dc586575f5b838b7e08b07a07e",
                      12: "160b70cd54fcff77a46eeee13255f8361e63717413342870036e9322f42421f2",
                      13: "260b9c962e96263b0846eb12de2ec7b8fc39f07a5d50eb219be2600f1d951071",
                      14: "db1b6b45051b693cd4a978d7521e9e758847558b2e99d7b94cfe412e12e80bcf"}


def test_a_feature_sql_change_needs_a_new_version_and_bundle() -> None:
    import hashlib

    import rummyguard.fraud.features as features

    got = hashlib.sha256((features._PLAYER_SQL + features._PAIR_SQL).encode()).hexdigest()
    assert FEATURE_SQL_SHA256.get(FEATURES_VERSION) == got, (
        "the feature SQL changed: bump FEATURES_VERSION, rebuild fraud/builtin/ and pin the hash")
