"""The compiled engine (setup.py, _compiled.py): the same answers as its sources, never a
stale or partial build.

The build compiles the replay engine's modules with mypyc; ``RUMMYGUARD_PURE=1`` runs
the very same sources as plain Python. Both must give byte-identical output for every
rule log of tests/data and for a simulated world (the simulator drives the engine's
legal-move generation), and the guard must fall back to the sources whenever the build
cannot be trusted.
"""

from __future__ import annotations

import importlib.machinery
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

import rummyguard
from rummyguard import _compiled
from rummyguard._compiled import MANIFEST, MODULES, _why_plain, source_hashes

PACKAGE = Path(rummyguard.__file__).resolve().parent
DATA = Path(__file__).parent / "data"
RULE_LOGS = sorted(str(p) for d in ("classic", "r500", "liverpool", "michigan", "sample")
                   for p in (DATA / d).glob("*.jsonl"))
COMPILED = _compiled.STATUS == "compiled"
needs_build = pytest.mark.skipif(
    not COMPILED, reason=f"the engine is not compiled here ({_compiled.STATUS})"
)


def _env(pure: bool) -> dict[str, str]:
    """This environment, with the plain-Python engine forced (pure) or as installed."""
    env = {k: v for k, v in os.environ.items() if k != "RUMMYGUARD_PURE"}
    if pure:
        env["RUMMYGUARD_PURE"] = "1"
    return env


def _run(args: list[str], pure: bool) -> subprocess.CompletedProcess[bytes]:
    env = _env(pure)
    return subprocess.run([sys.executable, "-m", "rummyguard.cli", *args], env=env,
                          capture_output=True, timeout=600)


def _module_files(pure: bool) -> dict[str, str]:
    env = _env(pure)
    code = ("import importlib, json, rummyguard, rummyguard._compiled as c; "
            "print(json.dumps({m: importlib.import_module('rummyguard.' + m).__file__ "
            "for m in c.MODULES} | {'status': c.STATUS}))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True)
    return orjson.loads(out.stdout)


@needs_build
def test_the_build_is_used_and_pure_runs_the_sources() -> None:
    compiled, pure = _module_files(False), _module_files(True)
    assert compiled.pop("status") == "compiled"
    assert pure.pop("status") == "plain Python: RUMMYGUARD_PURE is set"
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    assert all(f.endswith(suffixes) for f in compiled.values()), compiled
    assert all(f.endswith(".py") for f in pure.values()), pure
    assert set(compiled) == set(MODULES)


@needs_build
def test_version_says_which_engine_runs() -> None:
    compiled, pure = _run(["--version"], pure=False), _run(["--version"], pure=True)
    assert compiled.stdout.decode().strip() == f"rummyguard {rummyguard.__version__} (engine: compiled)"
    assert pure.stdout.decode().strip().endswith("(engine: plain Python: RUMMYGUARD_PURE is set)")


@needs_build
def test_verify_of_every_rule_log_is_byte_identical_to_the_sources() -> None:
    """The rule logs of every variant: the findings, messages and results."""
    assert len(RULE_LOGS) >= 85
    compiled = _run(["verify", *RULE_LOGS, "--json"], pure=False)
    pure = _run(["verify", *RULE_LOGS, "--json"], pure=True)
    assert compiled.returncode == pure.returncode == 1, compiled.stderr
    assert compiled.stdout == pure.stdout
    # the files share game ids, so this is one stream of games, not one game per file
    assert len(orjson.loads(compiled.stdout)["summary"]["findings_by_rule"]) >= 30


@needs_build
def test_replay_at_and_as_is_byte_identical_to_the_sources() -> None:
    log = DATA / "sample" / "classic-3p.chained.jsonl"
    first = orjson.loads(log.read_bytes().splitlines()[0])  # GameCreated
    seat = first["payload"]["seats"][0]
    args = ["replay", first["game_id"], str(log), "--at", "20", "--as", seat, "--json"]
    compiled, pure = _run(args, pure=False), _run(args, pure=True)
    assert compiled.returncode == pure.returncode == 0, compiled.stderr
    assert compiled.stdout == pure.stdout and len(compiled.stdout) > 500


@needs_build
def test_a_simulated_world_is_byte_identical_to_the_sources(tmp_path: Path) -> None:
    """The simulator chooses among the engine's legal moves: the same seed must give the
    same log, labels and replay, compiled or not."""
    outs = {}
    for pure in (False, True):
        out, labels = tmp_path / f"world-{pure}.jsonl", tmp_path / f"labels-{pure}.json"
        done = _run(["simulate", "--games", "40", "--seed", "7421", "--faults", "3",
                     "--out", str(out), "--labels", str(labels)], pure=pure)
        assert done.returncode == 0, done.stderr
        outs[pure] = (out.read_bytes(), labels.read_bytes())
    assert outs[False] == outs[True] and outs[False][0].count(b"\n") > 1000


@needs_build
def test_compiled_states_copy_and_pickle() -> None:
    """``Variant.can`` probes a deep copy of the state; records may cross processes."""
    import copy
    import pickle

    from rummyguard.replay.engine import replay
    from rummyguard.sim.driver import play

    for variant in ("classic", "r500", "liverpool", "michigan"):
        state = replay(play(variant, ["ann", "bob", "cy"], seed=4, game_id=f"c-{variant}")).state
        assert state is not None
        for other in (copy.deepcopy(state), pickle.loads(pickle.dumps(state))):
            assert type(other) is type(state) and other.snapshot() == state.snapshot()


_GARBAGE = """
import copy, json, sys
from rummyguard.events.hashing import chain
from rummyguard.replay.engine import replay
from rummyguard.sim.driver import play
base = chain(play("classic", ["ann", "bob"], seed=3, game_id="g3"))
raised, halted = [], 0
for i in (0, 1, 7, 20):
    for key in ("seq", "hash", "prev_hash", "event_id", "ts", "game_id", "type", "v", "actor",
                "payload"):
        for value in (None, 1, "x", 2.5, True, [], {}, -1, 2**60):
            events = copy.deepcopy(base)
            events[i][key] = value
            for verify_hashes in (True, False):
                try:
                    record = replay(events, verify_hashes=verify_hashes)
                except Exception as exc:
                    raised.append(f"{i} {key}={value!r}: {exc!r}")
                else:
                    halted += record.halted
print(json.dumps({"raised": raised, "halted": halted}))
"""


@pytest.mark.parametrize("pure", [False, True], ids=["as-installed", "sources"])
def test_an_envelope_that_breaks_the_contract_never_raises(pure: bool) -> None:
    """A direct caller of replay() may pass events no reader would (wrong types in any
    envelope field): each build reports them as findings and never raises. The two
    builds may word such a breach differently (a compiled build checks the types its
    code names, so it halts with LOG-EVENT where the plain one may read on): events that
    keep the contract, everything the readers pass on, give identical output (above)."""
    env = _env(pure)
    out = subprocess.run([sys.executable, "-c", _GARBAGE], env=env, capture_output=True,
                         check=True, timeout=600)
    result = orjson.loads(out.stdout)
    assert result["raised"] == [] and result["halted"] > 50


# -- the guard, on a package tree of empty files (only names and hashes matter to it) ----
def _tree(tmp_path: Path, built: tuple[str, ...] = MODULES, manifest: bool = True) -> Path:
    root = tmp_path / "pkg"
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for name in MODULES:
        source = root / (name.replace(".", "/") + ".py")
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(f"# {name}\n")
        if name in built:
            Path(str(root / name.replace(".", "/")) + suffix).write_bytes(b"")
    if manifest:
        (root / MANIFEST).write_bytes(orjson.dumps(source_hashes(root)))
    return root


def test_guard_uses_a_complete_fresh_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RUMMYGUARD_PURE", raising=False)
    assert _why_plain(_tree(tmp_path)) is None


def test_guard_with_nothing_built_is_plain_python(tmp_path: Path) -> None:
    assert _why_plain(_tree(tmp_path, built=(), manifest=False)) == ""


def test_guard_refuses_a_stale_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RUMMYGUARD_PURE", raising=False)
    root = _tree(tmp_path)
    (root / "replay" / "engine.py").write_text("# edited after the build\n")
    why = _why_plain(root)
    assert why is not None and "changed since the build: replay.engine" in why


def test_guard_refuses_a_partial_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RUMMYGUARD_PURE", raising=False)
    why = _why_plain(_tree(tmp_path, built=MODULES[1:]))
    assert why is not None and "partial" in why and MODULES[0] in why


def test_guard_refuses_a_build_without_its_manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RUMMYGUARD_PURE", raising=False)
    why = _why_plain(_tree(tmp_path, manifest=False))
    assert why is not None and MANIFEST in why


def test_guard_honours_pure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUMMYGUARD_PURE", "1")
    assert _why_plain(_tree(tmp_path)) == "RUMMYGUARD_PURE is set"


@needs_build
def test_the_scans_facts_are_byte_identical_to_the_sources(tmp_path: Path) -> None:
    """The scan's facts (fraud/handeval.py is compiled: meld distances, card gains) over
    a world of every variant, as Parquet files: the same bytes, compiled or not."""
    world = tmp_path / "world.jsonl"
    done = _run(["simulate", "--games", "80", "--seed", "7423", "--fraud-rate", "0.2",
                 "--variants", "classic,r500,liverpool,michigan", "--out", str(world),
                 "--labels", str(tmp_path / "labels.json"), "--no-progress"], pure=False)
    assert done.returncode == 0, done.stderr
    trees = {}
    for pure in (False, True):
        db, facts = tmp_path / f"s-{pure}.duckdb", tmp_path / f"facts-{pure}"
        for args in (["ingest", str(world), "--db", str(db), "--no-progress"],
                     ["scan", "--db", str(db), "--model", "none", "--workers", "0",
                      "--no-progress", "--parquet", str(facts)]):
            done = _run(args, pure=pure)
            assert done.returncode == 0, done.stderr
        trees[pure] = {str(p.relative_to(facts)): p.read_bytes()
                       for p in sorted(facts.rglob("*.parquet"))}
    assert trees[False] == trees[True]
    assert {"discards.parquet", "moves.parquet"} <= {Path(k).name for k in trees[False]}
