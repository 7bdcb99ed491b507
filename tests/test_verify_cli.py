"""`rummyguard verify` / `replay` end to end, on the committed sample logs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import orjson
import pytest
from spec_paths import COPY, EXAMPLES, SHARED_EXAMPLES

from rummyguard.replay.verify import VerifyRun, read_games_from_files, verify_games

DATA = Path(__file__).parent / "data"
CLASSIC = DATA / "classic"
SPEC = EXAMPLES
MANIFEST = orjson.loads((CLASSIC / "manifest.json").read_bytes())


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rummyguard.cli", *args], capture_output=True,
                          cwd=cwd, timeout=120)


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_each_sample_log_gives_exactly_its_declared_findings(name):
    run = VerifyRun()
    games = read_games_from_files([CLASSIC / name], run)
    verify_games(games.values(), run)
    got = sorted((r.game_id, f.seq, f.rule, f.kind) for r in run.records for f in r.findings)
    assert got == sorted(tuple(e) for e in MANIFEST[name])


def test_every_classic_rule_id_has_a_sample_log():
    from rummyguard.replay.rule_text import RULE_TEXT

    classic_ids = {r for r in RULE_TEXT if r.startswith(("C-", "CL-"))}
    assert classic_ids <= set(n.removesuffix(".jsonl") for n in MANIFEST)


def test_spec_example_matches_its_expected_replay():
    out = run_cli("verify", str(SPEC / "classic-3p.jsonl"), "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    expected = json.loads((SPEC / "classic-3p.expected.json").read_text())
    game = doc["games"][0]
    assert {k: game[k] for k in expected} == expected


def test_verify_json_shape_and_exit_codes(tmp_path):
    out = run_cli("verify", str(CLASSIC / "clean.jsonl"), "--json")
    assert out.returncode == 0
    doc = json.loads(out.stdout)
    assert set(doc) == {"games", "summary"}
    assert set(doc["games"][0]) == {"game_id", "variant", "clean", "halted", "findings", "results"}
    assert doc["summary"] == {"games": 1, "clean": 1, "findings_by_rule": {}}
    bad = run_cli("verify", str(CLASSIC / "CL-TIMER.jsonl"), str(CLASSIC / "clean.jsonl"), "--json")
    assert bad.returncode == 1
    assert json.loads(bad.stdout)["summary"]["findings_by_rule"] == {"CL-TIMER": 1}
    missing = run_cli("verify", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2
    assert missing.stderr.decode().count("\n") == 1 and "no such file" in missing.stderr.decode()


def test_unreadable_line_is_reported_not_lost(tmp_path):
    path = tmp_path / "mixed.jsonl"
    lines = (CLASSIC / "clean.jsonl").read_bytes().splitlines()
    broken = json.loads(lines[3])
    broken["payload"]["card"] = "ZZ"
    path.write_bytes(b"\n".join([*lines[:3], json.dumps(broken).encode(), *lines[4:], b"{not json"]) + b"\n")
    out = run_cli("verify", str(path), "--json")
    assert out.returncode == 2
    doc = json.loads(out.stdout)
    rules = [(f["seq"], f["rule"]) for f in doc["games"][0]["findings"]]
    assert (3, "LOG-EVENT") in rules  # the bad line, attributed to its game and seq
    assert doc["unreadable_lines"][0]["line"] == len(lines) + 1


def test_verify_output_is_byte_identical_across_processes():
    files = [str(p) for p in sorted(CLASSIC.glob("*.jsonl"))]
    a = run_cli("verify", *files, "--json")
    b = run_cli("verify", *files, "--json")
    assert a.stdout == b.stdout and len(a.stdout) > 1000


def test_verify_with_db_writes_findings_and_player_games(tmp_path):
    db = tmp_path / "rg.duckdb"
    out = run_cli("verify", str(CLASSIC / "CL-TIMER.jsonl"), str(CLASSIC / "clean.jsonl"),
                  "--db", str(db))
    assert out.returncode == 1, out.stderr
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT game_id, seq, rule, kind FROM findings").fetchall() == [
        ("sample-cl-timer", 2, "CL-TIMER", "violation")]
    rows = con.execute("SELECT game_id, player, net, won FROM player_games ORDER BY 1, 2").fetchall()
    assert ("sample-clean", "p1", 100, True) in rows and ("sample-clean", "p2", -100, False) in rows


def test_player_games_says_which_games_finished(tmp_path):
    """`finished`: the game reached its end by the rules. A log cut short has only the
    stakes in the pot so far (net -stake for everyone), which a sum of `net` must leave
    out. A store written before the column existed gets it on the next verify."""
    lines = (CLASSIC / "clean.jsonl").read_bytes().splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"\n".join(x.replace(b"sample-clean", b"sample-cut") for x in lines[:5])
                    + b"\n")
    db = tmp_path / "rg.duckdb"
    out = run_cli("verify", str(CLASSIC / "clean.jsonl"), str(cut), "--db", str(db))
    assert out.returncode == 0, out.stderr
    with duckdb.connect(str(db)) as con:
        rows = con.execute("SELECT DISTINCT game_id, finished FROM player_games ORDER BY 1"
                           ).fetchall()
        assert rows == [("sample-clean", True), ("sample-cut", False)]
        con.execute("DROP VIEW player_games")
        con.execute("ALTER TABLE store.replay_games DROP COLUMN finished")  # an older store
    out = run_cli("verify", str(CLASSIC / "clean.jsonl"), "--db", str(db))
    assert out.returncode == 0, out.stderr
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT DISTINCT finished FROM player_games WHERE game_id = "
                           "'sample-clean'").fetchall() == [(True,)]


def test_verify_db_gives_a_game_without_gamecreated_a_null_variant(tmp_path):
    """The `findings` view says NULL for a game whose variant nobody logged, as the
    `games` view does (an empty string would read as a variant named '')."""
    lines = (CLASSIC / "clean.jsonl").read_bytes().splitlines()[1:]  # no GameCreated
    path = tmp_path / "headless.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    db = tmp_path / "rg.duckdb"
    out = run_cli("verify", str(path), "--db", str(db))
    assert out.returncode == 1, out.stderr
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT DISTINCT variant FROM findings").fetchall() == [(None,)]
    assert con.execute("SELECT count(*) FROM player_games WHERE variant = ''").fetchone() == (0,)


def test_replay_timeline_state_and_player_view():
    path = str(CLASSIC / "CL-NODISCARD-TAKEN.jsonl")
    out = run_cli("replay", "sample-cl-nodiscard-taken", path, "--json", "--at", "3", "--as", "p2")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["at"] == 3 and set(doc["state"]["hands"]) == {"p2"}
    assert "2C" in doc["state"]["hands"]["p2"] and "stock" not in doc["state"]
    assert [r["seq"] for r in doc["timeline"]] == [0, 1, 2, 3]
    whole = json.loads(run_cli("replay", "sample-cl-nodiscard-taken", path, "--json").stdout)
    marked = [f for r in whole["timeline"] for f in r["findings"]]
    assert [(f["seq"], f["rule"]) for f in marked] == [(4, "CL-NODISCARD-TAKEN")]
    assert "may not be discarded in the same turn" in marked[0]["rule_text"]
    full = run_cli("replay", "sample-cl-nodiscard-taken", path)
    text = full.stdout.decode()
    assert "CL-NODISCARD-TAKEN" in text and "2♣" in text
    flat = " ".join(text.replace("│", " ").split())
    assert "may not be discarded in the same turn" in flat  # the rule's own text


def test_replay_errors_are_one_line():
    path = str(CLASSIC / "clean.jsonl")
    for args, needle in ((["nope", path], "not found"), (["sample-clean", path, "--at", "999"], "outside"),
                         (["sample-clean", path, "--as", "zed"], "not a player")):
        out = run_cli("replay", *args)
        assert out.returncode == 2 and needle in out.stderr.decode()
        assert "Traceback" not in out.stderr.decode()


def test_replay_html_writes_a_self_contained_page(tmp_path):
    page = tmp_path / "dispute.html"
    out = run_cli("replay", "sample-c-claim", str(CLASSIC / "C-CLAIM.jsonl"), "--html", str(page))
    assert out.returncode == 0, out.stderr
    html = page.read_text()
    assert "C-CLAIM" in html and "sample-c-claim" in html
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html


def test_verify_from_the_store_reports_what_ingest_quarantined(tmp_path):
    """A log with one line deleted: ingest stores the game up to the gap and quarantines
    the rest, so the stored game alone would replay clean. `verify --db` reads the
    quarantine and reports each of those lines at its seq, as a replay of the file does."""
    lines = (CLASSIC / "clean.jsonl").read_bytes().splitlines()
    path = tmp_path / "gap.jsonl"
    path.write_bytes(b"\n".join(lines[:5] + lines[6:]) + b"\n")  # seq 5 deleted
    db = tmp_path / "rg.duckdb"
    ingest = run_cli("ingest", str(path), "--db", str(db))
    assert ingest.returncode != 0  # something was quarantined
    out = run_cli("verify", "--db", str(db), "--json")
    assert out.returncode == 1, out.stderr
    game = json.loads(out.stdout)["games"][0]
    assert not game["clean"]
    # audit 35: the quarantined lines are folded in where ingest read them, so the store
    # says what the file says: the gap is LOG-SEQ at seq 6 (it was one LOG-EVENT per
    # quarantined line), and the game behind it is replayed
    from_file = json.loads(run_cli("verify", str(path), "--json").stdout)["games"][0]
    assert (6, "LOG-SEQ") in [(f["seq"], f["rule"]) for f in game["findings"]]
    assert game["findings"] == from_file["findings"] and game["results"] == from_file["results"]


def test_committed_spec_example_is_the_shared_one():
    if not SHARED_EXAMPLES.exists():
        pytest.skip("shared/spec is not beside the checkout: only the copy is available")
    for name in ("classic-3p.jsonl", "classic-3p.expected.json"):
        assert (COPY / name).read_bytes() == (SHARED_EXAMPLES / name).read_bytes()
