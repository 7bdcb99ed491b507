"""Audit of ``rummyguard simulate`` as a product (session 8): options, determinism,
validity of the worlds, tells, labels.

Each defect the audit found is pinned by a test that failed before its fix (all fixed).
The other tests guard what the audit found working, at a size that keeps the file fast
(planning a world deals no cards: ~0.1 s for 3,000 games).
"""

from __future__ import annotations

import collections
import traceback
from pathlib import Path

import orjson
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.replay.engine import replay
from rummyguard.sim.population import build_population
from rummyguard.sim.world import WorldConfig, build_world, dumps_labels, run_world

ALL = ("classic", "r500", "liverpool", "michigan")


def _simulate(tmp_path: Path, *args: str) -> tuple[int, str, BaseException | None, Path, Path]:
    """Run the CLI in-process; returns (exit code, output, exception, log, labels)."""
    out, labels = tmp_path / "w.jsonl", tmp_path / "w.labels.json"
    result = CliRunner().invoke(app, ["simulate", "--no-progress", "--workers", "1",
                                      "--out", str(out), "--labels", str(labels), *args])
    exc = result.exception if not isinstance(result.exception, SystemExit) else None
    return result.exit_code, result.output, exc, out, labels


def _auc(pos: list[float], neg: list[float]) -> float:
    """ROC AUC of ``pos`` over ``neg`` (ties count half): 0.5 = no tell."""
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


# -- defects --------------------------------------------------------------------------------


def test_a_seed_beyond_64_bits_is_refused_with_one_line(tmp_path: Path) -> None:
    code, output, exc, out, _labels = _simulate(tmp_path, "--games", "1", "--seed", str(2**70))
    assert exc is None, "".join(traceback.format_exception(exc)) if exc else ""
    assert code == 2
    assert "--seed" in output
    assert not out.exists()  # refused before any work


def test_the_largest_64_bit_seed_is_recorded_in_the_labels(tmp_path: Path) -> None:
    """The seed is recorded in the labels only (``seed`` and ``args.seed``)."""
    code, _output, exc, out, labels = _simulate(tmp_path, "--games", "1", "--seed", str(2**63 - 1))
    assert exc is None and code == 0
    doc = orjson.loads(labels.read_bytes())
    assert doc["seed"] == doc["args"]["seed"] == 2**63 - 1
    assert out.stat().st_size > 0


def test_fraud_rate_one_with_three_players_does_not_crash() -> None:
    # `rummyguard simulate --games 30 --seed 3 --players 3 --fraud-rate 1` -> traceback
    pop = build_population(3, 3, ALL, 1.0)
    ids = {p.player_id for p in pop.players}
    assert len(ids) == 3
    assert all(set(g.members) <= ids for g in pop.groups)
    # no account is in two fraud groups of the same mechanism
    seen = collections.Counter((p.player_id, m[0]) for p in pop.players for m in p.mechanisms)
    assert max(seen.values(), default=1) == 1


def test_too_few_players_for_the_variants_is_refused(tmp_path: Path) -> None:
    code, output, exc, _out, _labels = _simulate(
        tmp_path, "--games", "5", "--seed", "1", "--players", "2", "--variants", "michigan")
    assert exc is None
    assert code == 2, output
    assert "error:" in output and "players" in output


def test_a_world_plays_the_games_asked_for_or_refuses() -> None:
    config = WorldConfig(games=50, seed=1, variants=("michigan",), players=3)
    try:
        world = build_world(config)
    except ValueError as exc:
        assert "50" in str(exc)
        return
    assert world.games == 50


def test_r500_house_rules_do_not_tell_chip_dumpers() -> None:
    """Share of a player's Rummy 500 games played in tournament mode (GameCreated.rules,
    visible to any analyst), chip dumpers against honest players, over 20 planned worlds."""
    dumpers: list[float] = []
    honest: list[float] = []
    for seed in range(1, 21):
        world = build_world(WorldConfig(games=3000, seed=seed, variants=("classic", "r500"),
                                        fraud_rate=0.1))
        share: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
        for s in world.sittings:
            if s.variant == "r500":
                for pid in s.seats:
                    share[pid][0] += s.n_games * (s.rules.get("mode") == "tournament")
                    share[pid][1] += s.n_games
        for p in world.population.players:
            tour, games = share[p.player_id]
            if games < 5:
                continue
            mechanisms = {m[0] for m in p.mechanisms}
            if "chip_dumping" in mechanisms:
                dumpers.append(tour / games)
            elif not mechanisms:
                honest.append(tour / games)
    assert len(dumpers) >= 25 and len(honest) >= 1000
    assert _auc(dumpers, honest) < 0.7, (_auc(dumpers, honest), sorted(dumpers))


def test_the_faults_asked_for_are_all_planted() -> None:
    world = build_world(WorldConfig(games=400, seed=0, variants=("classic",), faults=40))
    doc = run_world(world, lambda _data: None)
    assert len(doc["faults"]) == 40, collections.Counter(f["fault"] for f in doc["faults"])


def test_simulate_refuses_a_store_that_already_holds_a_world(tmp_path: Path) -> None:
    from rummyguard.events.store import EventStore

    db = tmp_path / "w.duckdb"
    runner = CliRunner()
    base = ["simulate", "--no-progress", "--workers", "1", "--games", "3", "--db", str(db)]
    first = runner.invoke(app, [*base, "--seed", "1"])
    assert first.exit_code == 0, first.output
    with EventStore.open(db, read_only=True) as store:
        before = store.counts()
    second = runner.invoke(app, [*base, "--seed", "2"])
    assert second.exception is None or isinstance(second.exception, SystemExit)
    assert second.exit_code == 2, second.output
    assert "--db" in second.output
    with EventStore.open(db, read_only=True) as store:
        assert store.counts()["quarantine"] == before["quarantine"] == 0


def test_a_shared_device_is_not_proof_of_multi_accounting() -> None:
    """Pairs of accounts with a device in common, over 10 populations of 300 accounts:
    honest pairs (a family device) must be a fair share of them, as households are of
    the pairs sharing an IP."""
    multi = honest = 0
    for seed in range(1, 11):
        pop = build_population(seed, 300, ALL, 0.06)
        person_groups = {(p.player_id, g) for p in pop.players for m, g, _i, _r in p.mechanisms
                         if m == "multi_account"}
        group_of = dict(person_groups)
        by_device: dict[str, set[str]] = collections.defaultdict(set)
        for p in pop.players:
            for device in p.devices:
                by_device[device].add(p.player_id)
        pairs = {(a, b) for users in by_device.values() for a in users for b in users if a < b}
        for a, b in pairs:
            if a in group_of and group_of.get(a) == group_of.get(b):
                multi += 1
            else:
                honest += 1
    assert multi >= 10
    assert honest >= 0.3 * (honest + multi), (honest, multi)


def test_a_simulated_store_records_its_seed(tmp_path: Path) -> None:
    from rummyguard.events.store import EventStore

    db = tmp_path / "w.duckdb"
    res = CliRunner().invoke(app, ["simulate", "--no-progress", "--workers", "1", "--games", "2",
                                   "--seed", "424242", "--db", str(db)])
    assert res.exit_code == 0, res.output
    with EventStore.open(db, read_only=True) as store:
        sources = [row[0] for row in store.con.execute(
            "SELECT DISTINCT source FROM store.ingest_batches").fetchall()]
    assert sources and all("424242" in s for s in sources), sources


def test_the_labels_file_is_documented_in_the_repository() -> None:
    import re

    from rummyguard.fraud import labels as labels_module
    from rummyguard.sim import world as world_module

    repo = Path(__file__).resolve().parents[1]
    for module in (world_module, labels_module):
        source = Path(module.__file__ or "").read_text(encoding="utf-8")
        for ref in re.findall(r"[\w./-]*labels[\w./-]*\.md|docs/[\w.-]+\.md", source):
            assert (repo / ref).is_file(), f"{module.__name__} points at {ref}, not in the repository"
    docs = {p: p.read_text(encoding="utf-8") for p in [*(repo / "docs").glob("*.md"), repo / "README.md"]}
    documented = [p for p, text in docs.items() if "hard_negatives" in text and "expected_rule" in text]
    assert documented, "no doc describes the labels file"
    doc = orjson.loads(dumps_labels(run_world(build_world(WorldConfig(
        games=8, seed=2, variants=("classic",), fraud_rate=0.5, faults=2)), lambda _d: None)))
    fields = set(doc) | {k for key in ("players", "mechanisms", "hard_negatives", "planted", "faults")
                         for row in doc[key] for k in row}
    text = docs[documented[0]]
    missing = sorted(f for f in fields if not re.search(rf"\b{f}\b", text))
    assert not missing, missing


# -- what the audit found working --------------------------------------------------------------


def test_faults_are_exactly_the_findings_and_the_world_is_reproducible() -> None:
    """Every finding of a replay is a labelled fault at its seq and rule, and nothing else;
    the same config gives the same bytes (log and labels)."""
    config = WorldConfig(games=40, seed=5, variants=ALL, faults=12, fraud_rate=0.3)
    chunks: list[bytes] = []
    doc = run_world(build_world(config), chunks.append)
    again: list[bytes] = []
    doc2 = run_world(build_world(config), again.append)
    assert b"".join(chunks) == b"".join(again)
    assert dumps_labels(doc) == dumps_labels(doc2)
    games: dict[str, list[dict]] = collections.defaultdict(list)
    for line in b"".join(chunks).splitlines():
        event = orjson.loads(line)
        games[event["game_id"]].append(event)
    found = sorted((g, f.seq, f.rule, f.kind) for g, events in games.items()
                   for f in replay(events).findings)
    labelled = sorted((f["game_id"], f["seq"], f["expected_rule"], f["expected_kind"])
                      for f in doc["faults"])
    assert found == labelled
    assert len(labelled) == 12
    seated = {p for events in games.values() for p in events[0]["payload"]["seats"]}
    assert {row["player_id"] for row in doc["planted"]} <= seated
    assert {row["player_id"] for row in doc["players"]} >= seated
