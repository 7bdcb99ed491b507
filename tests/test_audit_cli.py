"""Acceptance audit of the CLI of issues #2 and #3 on inputs a checker feeds it: gzip that
is cut short, blank lines and CRLF in one run, a directory, an empty query, integers past
64 bits, a player's view of someone else's stock draw, and a line of a game that is not a
valid event. Each test failed before the fix it pins (see the audit report), except the
summary-balance and re-ingest guards, which pin what already held.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import duckdb
import orjson
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app

DATA = Path(__file__).parent / "data"
CLEAN = DATA / "classic" / "clean.jsonl"  # game sample-clean, players p1 and p2
POT = DATA / "classic" / "CL-POT.jsonl"  # game sample-cl-pot: C-CLAIM at seq 7
BAD = DATA / "events" / "bad.jsonl"


def run(*args: str | Path) -> object:
    return CliRunner().invoke(app, [str(a) for a in args])


def one_error_line(out) -> str:
    """The command failed with exit 2 and exactly one line on stderr, no traceback."""
    assert out.exit_code == 2, (out.exit_code, out.stdout[-400:], out.stderr[-800:])
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    return lines[0]


def first_column(table: str) -> str:
    """The first column of a rich table, its folded lines joined back together."""
    return "".join(line.split("│")[0].strip() for line in table.splitlines() if "│" in line)


@pytest.fixture
def cut_gzip(tmp_path: Path) -> Path:
    """A .jsonl.gz cut off in the middle of its deflate stream (a partial download)."""
    whole = gzip.compress(CLEAN.read_bytes())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(whole[: len(whole) // 2])
    return path


# --- ingest ------------------------------------------------------------------------------
def test_ingest_of_a_cut_gzip_is_refused_whole_with_one_line(tmp_path: Path,
                                                             cut_gzip: Path) -> None:
    db = tmp_path / "s.duckdb"
    line = one_error_line(run("ingest", CLEAN, cut_gzip, "--db", db))
    assert f"cannot read {cut_gzip}" in line and "nothing was done" in line
    assert not db.exists()  # the good file before it was not half-ingested either


def test_ingest_of_a_corrupt_gzip_header_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(b"\x1f\x8b" + b"\x00" * 40)
    assert "cannot read" in one_error_line(run("ingest", bad, "--db", tmp_path / "s.duckdb"))


def test_summary_balances_over_gzip_crlf_blank_lines_and_bad_lines(tmp_path: Path) -> None:
    lines = CLEAN.read_bytes().splitlines()
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes(b"".join(x + b"\r\n" for x in POT.read_bytes().splitlines()))
    blanks = tmp_path / "blanks.jsonl.gz"
    blanks.write_bytes(gzip.compress(b"\n".join([*lines[:3], b"", b"  ", *lines[3:]]) + b"\n"))
    db = tmp_path / "s.duckdb"
    out = run("ingest", blanks, crlf, BAD, "--db", db, "--json")
    assert out.exit_code == 1, out.stderr  # something was quarantined
    s = orjson.loads(out.stdout)
    assert s["read"] == len(lines) + 2 + len(POT.read_bytes().splitlines()) + 27
    assert s["read"] == s["stored"] + s["duplicates"] + s["quarantined"] and s["balanced"]
    assert s["stored"] == len(lines) + 8 and s["quarantined"] == 2 + 27
    for counts in s["files"].values():
        assert counts["read"] == counts["stored"] + counts["duplicates"] + counts["quarantined"]
    assert out.stderr == ""  # no progress bar when stderr is not a terminal
    again = orjson.loads(run("ingest", blanks, crlf, BAD, "--db", db, "--json").stdout)
    assert (again["stored"], again["duplicates"]) == (0, s["stored"])
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM store.quarantine").fetchall() == [(29,)]
        assert con.execute("SELECT count(*) FROM store.events").fetchall() == [(s["stored"],)]


def test_ingest_summary_shows_the_whole_file_name(tmp_path: Path) -> None:
    deep = tmp_path / ("a-rather-long-folder-name-" * 3) / "platform-export-2026-11-29.jsonl"
    deep.parent.mkdir(parents=True)
    deep.write_bytes(CLEAN.read_bytes())
    out = run("ingest", deep, "--db", tmp_path / "s.duckdb")
    assert out.exit_code == 0
    assert "…" not in out.stdout
    assert str(deep) in first_column(out.stdout)


@pytest.mark.parametrize("command", [["ingest", str(CLEAN)], ["verify"], ["verify-log"],
                                     ["sql", "SELECT 1"], ["export", "--parquet", "{tmp}/pq"],
                                     ["replay", "sample-clean"]])
@pytest.mark.parametrize("via_env", [False, True])
def test_a_data_file_given_as_the_store_is_refused(tmp_path: Path, command: list[str],
                                                   via_env: bool) -> None:
    """DuckDB 2.x opens an existing JSONL/CSV "database" in memory: without the check,
    ingest said "stored 10" and kept nothing."""
    victim = tmp_path / "log.jsonl"
    victim.write_bytes(CLEAN.read_bytes())
    args = [a.format(tmp=tmp_path) for a in command]
    if via_env:
        out = CliRunner().invoke(app, args, env={"RUMMYGUARD_DB": str(victim)})
    else:
        out = run(*args, "--db", victim)
    assert "is not a rummyguard store" in one_error_line(out)
    assert victim.read_bytes() == CLEAN.read_bytes()


# --- verify and replay read their files first -----------------------------------------------
@pytest.mark.parametrize("command", [["verify"], ["replay", "sample-clean"]])
def test_verify_and_replay_refuse_a_cut_gzip_with_one_line(command: list[str],
                                                           cut_gzip: Path) -> None:
    line = one_error_line(run(*command, CLEAN, cut_gzip))
    assert f"cannot read {cut_gzip}" in line


def test_verify_names_a_directory_as_not_a_file(tmp_path: Path) -> None:
    assert f"not a file: {tmp_path}" in one_error_line(run("verify", tmp_path))


# --- replay: the player's view and findings next to their move --------------------------------
def test_replay_as_a_player_hides_the_others_stock_draws() -> None:
    # seq 3: p2 drew AH from the stock; seq 5: p1 drew 2D from the stock.
    as_p1 = run("replay", "sample-cl-pot", POT, "--as", "p1", "--json")
    assert as_p1.exit_code == 0, as_p1.stderr
    text = {r["seq"]: r["text"] for r in orjson.loads(as_p1.stdout)["timeline"]}
    assert "A♥" not in text[3] and "??" in text[3] and text[3].startswith("p2 drew")
    assert "2♦" in text[5]  # his own draw he saw
    as_p2 = orjson.loads(run("replay", "sample-cl-pot", POT, "--as", "p2", "--json").stdout)
    text2 = {r["seq"]: r["text"] for r in as_p2["timeline"]}
    assert "A♥" in text2[3] and "2♦" not in text2[5]
    table = run("replay", "sample-cl-pot", POT, "--as", "p1", "--at", "4")
    assert table.exit_code == 0 and "A♥ from" not in table.stdout
    everyone = orjson.loads(run("replay", "sample-cl-pot", POT, "--json").stdout)
    assert "A♥" in {r["seq"]: r["text"] for r in everyone["timeline"]}[3]


@pytest.fixture
def bad_card_log(tmp_path: Path) -> Path:
    """CL-POT with seq 4 carrying a card code that does not exist."""
    lines = POT.read_bytes().splitlines()
    assert b'"seq":4,' in lines[4]
    lines[4] = lines[4].replace(b'"card":"AH"', b'"card":"ZZ"')
    path = tmp_path / "bad-card.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _findings(payload: dict) -> list[tuple[int, str]]:
    return [(f["seq"], f["rule"]) for f in payload["findings"]]


def test_replay_from_files_shows_an_invalid_line_of_the_game_as_verify_does(
        bad_card_log: Path) -> None:
    verified = orjson.loads(run("verify", bad_card_log, "--json").stdout)["games"][0]
    assert (4, "LOG-EVENT") in _findings(verified)
    out = run("replay", "sample-cl-pot", bad_card_log, "--json")
    assert out.exit_code == 0, out.stderr
    body = orjson.loads(out.stdout)
    assert _findings(body["record"]) == _findings(verified)
    rows = body["timeline"]
    assert [r["seq"] for r in rows] == sorted(r["seq"] for r in rows)  # in place, not at the end
    row4 = next(r for r in rows if r["seq"] == 4)
    assert [f["rule"] for f in row4["findings"]] == ["LOG-EVENT"]
    assert "bad-card.jsonl:5" in row4["findings"][0]["message"]
    assert row4["findings"][0]["rule_text"]


def test_replay_from_the_store_shows_findings_past_the_last_stored_event(
        tmp_path: Path, bad_card_log: Path) -> None:
    db = tmp_path / "s.duckdb"
    assert run("ingest", bad_card_log, "--db", db).exit_code == 1  # seq 4.. quarantined
    verified = orjson.loads(run("verify", "--db", db, "--json").stdout)["games"][0]
    body = orjson.loads(run("replay", "sample-cl-pot", "--db", db, "--json").stdout)
    assert _findings(body["record"]) == _findings(verified)
    shown = [(r["seq"], f["rule"]) for r in body["timeline"] for f in r["findings"]]
    # audit 35: the quarantined lines are folded in where ingest read them, as the file's
    # replay takes them: the line that is not a valid event halts the replay (LOG-EVENT),
    # the stored-nowhere lines behind it are rows marked as such (it was 4 LOG-EVENTs)
    assert shown == [(4, "LOG-EVENT")]
    from_file = orjson.loads(run("replay", "sample-cl-pot", bad_card_log, "--json").stdout)
    assert from_file["record"]["findings"] and _findings(from_file["record"]) == shown
    assert {r["seq"]: r.get("quarantined") for r in body["timeline"] if r["seq"] >= 4} == {
        4: "invalid", 5: "sequence_gap", 6: "sequence_gap", 7: "sequence_gap"}
    text = run("replay", "sample-cl-pot", "--db", db)
    assert text.exit_code == 0 and text.stdout.count("LOG-EVENT") == 1


# --- sql -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("sql") / "s.duckdb"
    assert CliRunner().invoke(app, ["ingest", str(CLEAN), "--db", str(db)]).exit_code == 0
    return db


@pytest.mark.parametrize("query", ["", "   ", " ; ", ";;"])
def test_an_empty_query_is_one_line(store: Path, query: str) -> None:
    assert "empty query" in one_error_line(run("sql", query, "--db", store))


def test_integers_past_64_bits_are_exact_in_json_and_csv(store: Path) -> None:
    big = "170141183460469231731687303715884105727"
    query = f"SELECT {big}::HUGEINT AS h, [{big}::HUGEINT] AS l, 7::HUGEINT AS small"
    out = run("sql", query, "--db", store, "--format", "json")
    assert out.exit_code == 0, out.stderr
    assert f'"h": {big}' in out.stdout
    assert orjson.loads(out.stdout.replace(big, "1")) == [{"h": 1, "l": [1], "small": 7}]
    csv_out = run("sql", query, "--db", store, "--format", "csv")
    assert csv_out.stdout.splitlines() == ["h,l,small", f"{big},[{big}],7"]


def test_a_blob_reads_as_duckdb_prints_it(store: Path) -> None:
    out = run("sql", "SELECT '\\xAA'::BLOB || 'ok'::BLOB AS b", "--db", store, "--format", "csv")
    assert out.stdout.splitlines() == ["b", "\\xAAok"]


@pytest.mark.parametrize("query", ["SET threads = 1", "RESET enable_external_access",
                                   "SET lock_configuration = false"])
def test_changing_a_setting_is_refused(store: Path, query: str) -> None:
    line = one_error_line(run("sql", query, "--db", store))
    assert "refused" in line and "locked" in line


# --- schema ----------------------------------------------------------------------------------
def test_schema_out_onto_a_file_is_one_line(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.write_text("x")
    assert "not a folder" in one_error_line(run("schema", "--out", target))
    assert "cannot write" in one_error_line(run("schema", "--out", target / "sub"))


# --- data is printed, never read as rich markup ------------------------------------------------
@pytest.fixture
def markup_log(tmp_path: Path) -> Path:
    """The clean game with player p1 renamed "[/x]" (a closing tag rich cannot match)."""
    path = tmp_path / "[b]markup.jsonl"
    path.write_bytes(CLEAN.read_bytes().replace(b'"p1"', b'"[/x]"'))
    return path


def test_player_ids_and_cells_that_look_like_markup_print_as_they_are(tmp_path: Path,
                                                                      markup_log: Path) -> None:
    out = run("replay", "sample-clean", markup_log)
    assert out.exit_code == 0, out.stderr[-500:]
    assert "[/x] discarded" in out.stdout and "[/x]" in out.stdout.split("Results:")[1]
    db = tmp_path / "s.duckdb"
    ingested = run("ingest", markup_log, "--db", db)
    assert ingested.exit_code == 0 and str(markup_log) in first_column(ingested.stdout)
    table = run("sql", "SELECT DISTINCT actor AS \"[red]who\" FROM events ORDER BY 1",
                "--db", db)
    assert table.exit_code == 0, table.stderr[-500:]
    assert "[red]who" in table.stdout and "[/x]" in table.stdout
    assert "'[/x]' not found" in one_error_line(run("replay", "[/x]", markup_log))


# --- a line stored late is not a broken game ------------------------------------------------
def test_files_ingested_out_of_order_then_completed_verify_clean(tmp_path: Path) -> None:
    """Day 2's file ingested before day 1's: its lines are quarantined as sequence gaps;
    ingesting day 2 again stores them. The store is then complete (verify-log: intact),
    and verify and replay from the store must not report the stale quarantine rows."""
    lines = CLEAN.read_bytes().splitlines(keepends=True)
    day1, day2 = tmp_path / "day1.jsonl", tmp_path / "day2.jsonl"
    day1.write_bytes(b"".join(lines[:4]))
    day2.write_bytes(b"".join(lines[4:]))
    db = tmp_path / "s.duckdb"
    assert run("ingest", day2, day1, "--db", db).exit_code == 1  # day 2 quarantined
    early = orjson.loads(run("verify", "--db", db, "--json").stdout)
    # audit 35: the quarantined day 2 is folded in where ingest read it (before day 1), so
    # the store says what the files read in that order say (it said one LOG-EVENT a line)
    from_files = orjson.loads(run("verify", day2, day1, "--json").stdout)
    assert early["summary"]["findings_by_rule"] == from_files["summary"]["findings_by_rule"]
    assert early["summary"]["findings_by_rule"] == {"LOG-SEQ": 1, "LOG-GAME": 1}
    assert run("ingest", day2, "--db", db).exit_code == 0
    assert run("verify-log", "--db", db).exit_code == 0
    out = run("verify", "--db", db, "--json")
    assert out.exit_code == 0, out.stdout[-800:]
    assert orjson.loads(out.stdout)["summary"] == {"games": 1, "clean": 1,
                                                  "findings_by_rule": {}}
    replayed = orjson.loads(run("replay", "sample-clean", "--db", db, "--json").stdout)
    assert replayed["record"]["findings"] == [] and replayed["record"]["clean"]


def test_another_players_poker_hand_is_five_hidden_cards() -> None:
    log = DATA / "michigan" / "clean-4p-three-in-one.jsonl"
    body = orjson.loads(run("replay", "mi4-230", log, "--as", "p2", "--json").stdout)
    hands = [r["text"] for r in body["timeline"] if r["type"] == "PokerHandDeclared"]
    others = [t for t in hands if not t.startswith("p2 ")]
    assert others and all(t.endswith("poker hand: ?? ?? ?? ?? ??") for t in others)
    assert all("??" not in t for t in hands if t.startswith("p2 "))
