"""An analyst's session on real stores built through the CLI (simulate -> ingest ->
verify -> scan), checking what docs/sql.md and the README promise about the views."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"
SQL_DOC = ROOT / "docs" / "sql.md"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rummyguard.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=600)


def ok(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    out = cli(*args, cwd=cwd)
    assert out.returncode in (0, 1), (args, out.stderr[-2000:])
    return out


def rows(db: Path, query: str) -> list[dict]:
    out = cli("sql", "--db", str(db), "--format", "json", "--", query, cwd=db.parent)
    assert out.returncode == 0, out.stderr
    return orjson.loads(out.stdout)


def readme_query(n: int) -> str:
    block = README.read_text().split("<!-- analyst-queries -->", 1)[1]
    block = block.split("<!-- /analyst-queries -->", 1)[0]
    return [q.strip() for q in re.findall(r"```sql\n(.*?)```", block, re.S)][n - 1]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small simulated world with rake (classic) and scores (r500)."""
    root = tmp_path_factory.mktemp("analyst_s16")
    ok("simulate", "--games", "60", "--seed", "4242", "--variants", "classic,r500",
       "--fraud-rate", "0.05", "--out", str(root / "w.jsonl"), "--no-progress", cwd=root)
    return root / "w.jsonl"


@pytest.fixture(scope="module")
def scanned(world: Path) -> Path:
    """The whole world ingested, verified and scanned."""
    db = world.parent / "full.duckdb"
    ok("ingest", str(world), "--db", str(db), "--no-progress", cwd=world.parent)
    ok("verify", "--db", str(db), "--no-progress", cwd=world.parent)
    ok("scan", "--db", str(db), "--model", "none", "--no-progress", cwd=world.parent)
    return db


# --- 1. a view another command creates, queried before that command ran ----------------


@pytest.mark.parametrize(("view", "command"), [
    ("findings", "rummyguard verify"), ("player_games", "rummyguard verify"),
    ("moves", "rummyguard scan"), ("chip_flows", "rummyguard scan"),
    ("flags", "rummyguard scan"),
])
def test_missing_command_view_names_the_command(world: Path, view: str, command: str) -> None:
    """Before verify/scan the store has no `findings` / `moves` ...: DuckDB's own error
    suggested an unrelated catalog table ("Did you mean pg_indexes?"); the analyst should
    be told which command creates the view."""
    db = world.parent / "ingested-only.duckdb"
    if not db.exists():
        ok("ingest", str(world), "--db", str(db), "--no-progress", cwd=world.parent)
    out = cli("sql", "--db", str(db), f"SELECT count(*) FROM {view}", cwd=world.parent)
    assert out.returncode == 2
    err = " ".join(out.stderr.split())
    assert command in err, err
    assert "pg_" not in err and "duckdb_" not in err, err
    assert "Traceback" not in out.stderr


# --- 2. README query 2 sums the net of games that are not over -------------------------


def test_readme_net_query_counts_only_finished_games(world: Path) -> None:
    """docs/sql.md: when `finished` is false, `net` and `won` are the state so far, stakes
    still in the pot: "filter on it before summing". README query 2 ("who wins the most
    chips") sums every row, so a store holding games still in progress (here: a prefix of
    the log) charges their players the stakes they have not lost."""
    lines = world.read_bytes().splitlines(keepends=True)
    games: dict[str, list[bytes]] = {}
    for line in lines:
        games.setdefault(orjson.loads(line)["game_id"], []).append(line)
    cut = sorted(games)[:3]  # three games still in progress: the first half of each
    prefix = world.parent / "prefix.jsonl"
    prefix.write_bytes(b"".join(
        line for g, ls in games.items() for line in (ls[: len(ls) // 2] if g in cut else ls)))
    db = world.parent / "prefix.duckdb"
    ok("ingest", str(prefix), "--db", str(db), "--no-progress", cwd=world.parent)
    ok("verify", "--db", str(db), "--no-progress", cwd=world.parent)
    assert rows(db, "SELECT count(*) AS n FROM player_games WHERE NOT finished")[0]["n"] > 0
    readme = {r["player"]: r["net"] for r in rows(db, readme_query(2).rstrip(";")
                                                   .replace("LIMIT 10", ""))}
    finished = {r["player"]: r["net"] for r in rows(
        db, "SELECT player, sum(net) AS net FROM player_games WHERE finished GROUP BY player")}
    assert {p: readme[p] for p in finished} == finished


# --- 3. `verify FILES --db` stores results that contradict the stored games -------------


def test_verify_files_into_store_keeps_views_consistent(scanned: Path, tmp_path: Path) -> None:
    """`rummyguard verify OTHER.jsonl --db STORE` stored OTHER's results by game_id: a game
    of the file that shared an id with a stored game had its `player_games` rows replaced
    with other players and another variant. Such a game is no longer saved over the
    stored one (stderr says how many); a game the store does not hold is still saved
    (verifying files into a store of results is a documented use)."""
    db = tmp_path / "copy.duckdb"
    db.write_bytes(scanned.read_bytes())
    other = tmp_path / "other.jsonl"
    ok("simulate", "--games", "30", "--seed", "77", "--variants", "r500",
       "--out", str(other), "--no-progress", cwd=tmp_path)
    stored = {r["game_id"] for r in rows(db, "SELECT game_id FROM games")}
    theirs = {orjson.loads(line)["game_id"] for line in other.read_bytes().splitlines()}
    assert stored & theirs and theirs - stored  # ids that clash, and new ones
    out = ok("verify", str(other), "--db", str(db), "--no-progress", cwd=tmp_path)
    assert "differ from the stored game of the same id" in out.stderr, out.stderr
    bad = rows(db, """
        SELECT p.game_id, p.player, p.variant, g.variant AS stored_variant, g.seats
        FROM player_games p JOIN games g USING (game_id)
        WHERE g.seats[p.seat + 1] IS DISTINCT FROM p.player
           OR p.variant IS DISTINCT FROM g.variant""")
    assert bad == [], bad[:3]
    saved = {r["game_id"] for r in rows(db, "SELECT DISTINCT game_id FROM player_games")}
    assert theirs - stored <= saved


# --- 4. chip_flows carry the rake -------------------------------------------------------


def test_chip_flows_rake_is_documented_and_holds(scanned: Path) -> None:
    """A raked game's pot flows are the loser's whole loss, rake included, so a winner's
    flows in minus out exceed his `net` by the house's take: summing chip_flows is not a
    player's net chips. docs/sql.md must say so, and the statement must hold."""
    section = SQL_DOC.read_text().split("`chip_flows` (`rummyguard scan`", 1)[1]
    section = section.split("`flags` (`rummyguard scan`", 1)[0]
    assert "rake" in section and "player_games.net" in section
    diff = rows(scanned, """
        WITH flow AS (
            SELECT game_id, p, sum(a) AS flow FROM (
                SELECT game_id, dst AS p, amount AS a FROM chip_flows
                UNION ALL SELECT game_id, src, -amount FROM chip_flows) GROUP BY ALL),
        rake AS (
            SELECT e.game_id, sum((x->>'amount')::BIGINT) AS rake
            FROM events e, unnest(CAST(e.payload->'transfers' AS JSON[])) AS u(x)
            WHERE e.type = 'ChipsTransferred' AND x->>'to' = 'house' GROUP BY ALL)
        SELECT p.game_id, sum(coalesce(f.flow, 0) - p.net) AS excess,
               any_value(coalesce(r.rake, 0)) AS rake
        FROM player_games p LEFT JOIN flow f ON f.game_id = p.game_id AND f.p = p.player
        LEFT JOIN rake r ON r.game_id = p.game_id
        WHERE p.finished GROUP BY p.game_id""")
    assert any(r["rake"] for r in diff)  # the world has raked games
    assert [r for r in diff if r["excess"] != r["rake"]] == []
