"""A game with no result yet (in progress at scan time, cut short, halted) counts in no
result-based fact: its ``player_games`` rows carry NULL ``won`` and ``net``, not a loss of
the stake for everyone, and the player features over it stay those of the ended games."""

from __future__ import annotations

from pathlib import Path

import duckdb
import orjson

from rummyguard.fraud.facts import batch_facts, game_facts
from rummyguard.fraud.features import player_features

CLASSIC = Path(__file__).parent / "data" / "classic"


def _clean_game() -> list[dict]:
    path = next(p for p in sorted(CLASSIC.glob("clean*.jsonl")))
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def test_a_cut_game_has_no_result() -> None:
    events = _clean_game()
    ended = game_facts(events)["player_games"].to_pylist()
    assert all(r["won"] is not None and r["net"] is not None for r in ended)
    assert any(r["won"] for r in ended)
    cut = game_facts(events[: len(events) // 2])["player_games"].to_pylist()
    assert [r["player"] for r in cut] == [r["player"] for r in ended]
    assert all(r["won"] is None and r["net"] is None for r in cut)


def test_player_features_ignore_games_without_a_result() -> None:
    events = _clean_game()
    cut = [{**e, "game_id": "cut-1"} for e in events[: len(events) // 2]]

    def features(games: list[list[dict]]) -> dict[str, dict]:
        con = duckdb.connect()
        con.execute("CREATE SCHEMA fraud")
        for name, table in batch_facts(games).items():
            con.register(f"t_{name}", table)
            con.execute(f"CREATE TABLE fraud.{name} AS SELECT * FROM t_{name}")
        df = player_features(con)
        return {r["player"]: r for r in df.to_dicts()}

    alone = features([events])
    with_cut = features([events, cut])
    for player, row in alone.items():
        assert with_cut[player]["n_games"] == row["n_games"] + 1  # the game was played
        for col in ("win_rate", "net_per_stake"):
            assert with_cut[player][col] == row[col], (player, col)
