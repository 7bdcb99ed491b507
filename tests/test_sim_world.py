"""The simulator as a whole: deterministic output, clean replays except planted faults
(each with exactly its expected finding), the labels contract, the CLI."""

from __future__ import annotations

import collections
import itertools
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.hashing import verify_chain
from rummyguard.events.models import validate_event
from rummyguard.replay.engine import replay
from rummyguard.sim.world import WorldConfig, available_variants, build_world, run_world

VARIANTS = tuple(v for v in ("classic", "r500", "liverpool", "michigan") if v in available_variants())


def _world(config: WorldConfig, stats: dict | None = None) -> tuple[bytes, dict]:
    out: list[bytes] = []
    labels = run_world(build_world(config), out.append, stats=stats)
    return b"".join(out), labels


def _games(data: bytes) -> dict[str, list[dict]]:
    games: dict[str, list[dict]] = collections.defaultdict(list)
    for line in data.splitlines():
        event = orjson.loads(line)
        games[event["game_id"]].append(event)
    return games


STATS: dict = {}


@pytest.fixture(scope="module")
def world() -> tuple[bytes, dict]:
    return _world(WorldConfig(games=90, seed=21, variants=VARIANTS, fraud_rate=0.25, faults=7,
                              workers=1, players=30), STATS)


def test_games_end_naturally_and_stats_add_up(world: tuple[bytes, dict]) -> None:
    """No game reaches the driver's event cap (Liverpool plays toward its contracts, r500
    tournaments scale their chip ratio); the stats count every game and event."""
    data, _ = world
    games = _games(data)
    assert set(STATS) == set(VARIANTS)
    assert sum(row["games"] for row in STATS.values()) == len(games) == 90
    assert sum(row["events"] for row in STATS.values()) == len(data.splitlines())
    assert all("cap" not in row["abandoned"] for row in STATS.values()), STATS
    left = {g for g, events in games.items() if any(e["type"] == "PlayerLeft" for e in events)}
    blocked = sum(row["abandoned"].get("blocked", 0) for row in STATS.values())
    assert blocked <= 2
    if "liverpool" in VARIANTS:
        lv = [events for events in games.values() if events[0]["payload"]["variant"] == "liverpool"]
        assert len(lv) >= 5
        full = [g for g in lv if sum(e["type"] == "RoundEnded" for e in g) == 6]
        assert len(full) >= len(lv) - blocked - len(left)


def test_same_seed_same_bytes_with_any_number_of_workers(world: tuple[bytes, dict]) -> None:
    data, labels = world
    again, labels2 = _world(WorldConfig(games=90, seed=21, variants=VARIANTS, fraud_rate=0.25,
                                        faults=7, workers=2, players=30))
    assert again == data
    assert orjson.dumps(labels2, option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        labels, option=orjson.OPT_SORT_KEYS)
    other, _ = _world(WorldConfig(games=90, seed=22, variants=VARIANTS, fraud_rate=0.25,
                                  faults=7, workers=1, players=30))
    assert other != data


def test_every_game_replays_clean_except_planted_faults(world: tuple[bytes, dict]) -> None:
    data, labels = world
    games = _games(data)
    assert len(games) == 90
    assert {g[0]["payload"]["variant"] for g in games.values()} == set(VARIANTS)
    expected: dict[str, list[tuple[int, str, str]]] = collections.defaultdict(list)
    for f in labels["faults"]:
        expected[f["game_id"]].append((f["seq"], f["expected_rule"], f["expected_kind"]))
    assert len(labels["faults"]) == 7
    kinds = {f["fault"] for f in labels["faults"]}
    assert {"wrong_payout", "tampered_event"} <= kinds
    if "classic" in VARIANTS:
        assert "early_autoplay" in kinds
    if "michigan" in VARIANTS:
        assert "skipped_holder" in kinds
    for game_id, events in games.items():
        record = replay(events)
        got = sorted((f.seq, f.rule, f.kind) for f in record.findings)
        assert got == sorted(expected.get(game_id, [])), (game_id, record.findings)
        assert events[-1]["type"] == "GameEnded"


def test_events_are_spec_valid_and_producer_chained(world: tuple[bytes, dict]) -> None:
    data, labels = world
    tampered = {f["game_id"] for f in labels["faults"] if f["fault"] == "tampered_event"}
    for game_id, events in _games(data).items():
        for event in events:
            validate_event(event)
        assert [e["seq"] for e in events] == list(range(len(events)))
        problems = verify_chain(events)
        assert bool(problems) == (game_id in tampered)


def test_each_game_connects_every_seat_and_honours_cl_next(world: tuple[bytes, dict]) -> None:
    data, _ = world
    by_table: dict[str, list[list[dict]]] = collections.defaultdict(list)
    for events in _games(data).values():
        created = events[0]["payload"]
        seats = created["seats"]
        connected = [e["actor"] for e in events[1:1 + len(seats)]]
        assert connected == seats and all(e["type"] == "PlayerConnected"
                                          for e in events[1:1 + len(seats)])
        by_table[created["table_id"]].append(events)
    chained = 0
    for games in by_table.values():
        games.sort(key=lambda g: g[0]["ts"])
        for prev, nxt in itertools.pairwise(games):
            winners = prev[-1]["payload"]["winners"]
            p = nxt[0]["payload"]
            if p["variant"] == "classic" and len(winners) == 1:
                first = p["seats"][(p["dealer"] + 1) % len(p["seats"])]
                assert first == winners[0]
                chained += 1
    if "classic" in VARIANTS:
        assert chained > 0


def test_labels_follow_the_contract(world: tuple[bytes, dict]) -> None:
    data, labels = world
    assert set(labels) == {"seed", "args", "version", "players", "mechanisms", "hard_negatives",
                           "planted", "faults"}
    assert labels["seed"] == 21 and labels["version"] == 1
    players = {p["player_id"] for p in labels["players"]}
    for p in labels["players"]:
        assert set(p) == {"player_id", "person_id", "skill", "style", "household", "is_bot"}
        assert 0.0 <= p["skill"] <= 1.0
    mechs = {"card_feeding", "soft_play", "chip_dumping", "bot", "hidden_card", "multi_account",
             "timeout_abuse"}
    for m in labels["mechanisms"]:
        assert set(m) == {"player_id", "mechanism", "group_id", "intensity", "role"}
        assert m["player_id"] in players and m["mechanism"] in mechs
        assert 0.0 <= m["intensity"] <= 1.0 and isinstance(m["group_id"], str)
    rows = {(m["player_id"], m["mechanism"], m["group_id"]) for m in labels["mechanisms"]}
    assert len(rows) == len(labels["mechanisms"])
    for h in labels["hard_negatives"]:
        assert h["kind"] in {"friends", "strong", "tilt", "household"}
        assert h["player_id"] in players
    games = _games(data)
    assert labels["planted"]
    for row in labels["planted"]:
        events = games[row["game_id"]]
        assert 0 <= row["seq"] < len(events)
        assert (row["player_id"], row["mechanism"], row["group_id"]) in rows
        event = events[row["seq"]]
        assert row["player_id"] in (event["actor"], event["payload"].get("player"))


def test_unavailable_or_unknown_variants_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not available"):
        build_world(WorldConfig(games=5, seed=1, variants=("canasta",)))
    runner = CliRunner()
    result = runner.invoke(app, ["simulate", "--games", "3", "--seed", "1", "--variants",
                                 "classic,canasta", "--out", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2
    assert "unknown variant" in result.output


def test_cli_writes_log_and_labels_and_ingests_into_the_store(tmp_path: Path) -> None:
    runner = CliRunner()
    out, labels = tmp_path / "w.jsonl", tmp_path / "w.labels.json"
    args = ["simulate", "--games", "12", "--seed", "4", "--faults", "2", "--fraud-rate", "0.2",
            "--labels", str(labels), "--no-progress", "--workers", "1"]
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    doc = orjson.loads(labels.read_bytes())
    assert doc["args"]["games"] == 12 and len(doc["faults"]) == 2
    assert len(_games(out.read_bytes())) == 12
    db = tmp_path / "w.duckdb"
    result = runner.invoke(app, [*args, "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "stored" in result.output
    from rummyguard.events.store import EventStore

    with EventStore.open(db, read_only=True) as store:
        assert len(store.game_ids()) == 12
