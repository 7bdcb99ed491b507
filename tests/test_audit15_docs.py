"""Audit 15: the docs against the product, for what a newcomer would try.

README.md and docs/*.md name commands, options, views, columns, reason codes and files;
a support agent, a risk analyst and a data analyst learn the product from them. These
tests hold the cheap, mechanical part of that text to the product (the app's commands
and options, ``DESCRIBE`` of the views and tables, ``events.ingest.REASONS``, the repo's
files), so a rename on either side fails here instead of in front of a reader. What
other tests already hold is not repeated: the README's five queries
(test_readme_queries.py), the rule IDs and their text (test_rule_coverage.py), and the
column types of ``moves``, ``chip_flows``, ``flags``, ``findings`` and both
``player_games`` (test_audit4_scan_flags.py).
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
import typer.main
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.ingest import REASONS
from rummyguard.replay.rule_text import RULE_TEXT

ROOT = Path(__file__).parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# typer 0.29 vendors its own click (typer._click): use the command objects duck-typed
COMMANDS: dict[str, Any] = dict(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
# A command line in the docs: at the start of a line (code blocks), after a backtick,
# a `$ ` prompt or `&& `; prose such as "upgrade rummyguard and re-ingest" is not one.
CALL = re.compile(r"(?:^|`|\$ |&& )rummyguard ([a-z][a-z-]*)([^\n`|#]*)", re.M)


def _doc_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _doc_calls() -> Iterator[tuple[str, str, str]]:
    """(doc file name, command, the rest of the line) for every command line shown."""
    for path in DOCS:
        for m in CALL.finditer(_doc_text(path)):
            yield path.name, m.group(1), m.group(2)


def _options(cmd: Any) -> set[str]:
    return {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}


# --- commands and options ------------------------------------------------------------


def test_readme_cli_table_lists_exactly_the_apps_commands() -> None:
    """The README's "CLI at a glance" table is the newcomer's map of the commands: every
    command it names exists, and no command of the app is missing from it."""
    text = _doc_text(ROOT / "README.md")
    table = text.split("## The CLI at a glance", 1)[1].split("\n\n", 2)[1]
    named = set(re.findall(r"`rummyguard ([a-z][a-z-]*)", table))
    named |= set(re.findall(r"/ `([a-z][a-z-]*)", table))  # "`checkpoint` / `prove GAME`"
    assert named == set(COMMANDS), (named ^ set(COMMANDS))


def test_every_command_line_in_the_docs_names_real_commands_and_options() -> None:
    """Each ``rummyguard CMD --opt ...`` shown in README.md or docs/ uses a command and
    options that exist with those names (a renamed option makes the example fail)."""
    calls = list(_doc_calls())
    assert len(calls) >= 40  # the parser still finds the examples
    bad = []
    for doc, cmd, rest in calls:
        if cmd not in COMMANDS:
            bad.append((doc, cmd, "unknown command"))
            continue
        for opt in re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", rest):
            if opt not in _options(COMMANDS[cmd]):
                bad.append((doc, cmd, opt))
    assert not bad, bad


def test_fraud_doc_usage_lines_match_the_help() -> None:
    """docs/fraud.md's usage block lists the choices of ``flags --kind/--source`` and
    the defaults of ``scan``; they are the ones the app applies."""
    text = _doc_text(ROOT / "docs" / "fraud.md")
    from rummyguard.cli.flags_cmd import SOURCES

    assert "[--source " + "|".join(SOURCES) + "]" in text
    scan = {p.name: p.default for p in COMMANDS["scan"].params}
    assert f"[--workers {scan['workers']}]" in text
    assert f"[--threshold {scan['threshold']}]" in text
    assert f"[--top {scan['top']}]" in text
    boots = {p.name: p.default for p in COMMANDS["eval"].params}["boots"]
    assert f"[--boots {boots}]" in text


# --- views and tables against DESCRIBE ------------------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small simulated store after simulate -> verify -> scan (no model: fast)."""
    db = tmp_path_factory.mktemp("docs") / "rg.duckdb"
    runner = CliRunner()
    for args in (
        ["simulate", "--games", "40", "--seed", "5", "--variants", "classic,michigan",
         "--faults", "3", "--db", str(db), "--no-progress", "--workers", "1"],
        ["verify", "--db", str(db), "--no-progress", "--json"],
        ["scan", "--db", str(db), "--no-progress", "--model", "none", "--workers", "0",
         "--json"],
    ):
        res = runner.invoke(app, args)
        assert res.exit_code in (0, 1), (args, res.output[-2000:])
    return db


def _describe(db: Path, name: str) -> list[tuple[str, str]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [(r[0], r[1]) for r in con.execute(f"DESCRIBE {name}").fetchall()]
    finally:
        con.close()


def _sql_doc_table(heading: str) -> list[tuple[str, str]]:
    """(column, type) of docs/sql.md's table under ``### `heading```; a row naming
    several columns gives each the type in its cell, or the n-th of n types."""
    text = _doc_text(ROOT / "docs" / "sql.md")
    part = text.split(f"### `{heading}`", 1)[1]
    table = part.split("| column | type |", 1)[1].split("\n\n", 1)[0]
    out = []
    for line in table.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        cols = re.findall(r"`([^`]+)`", cells[0])
        types = [t.strip() for t in cells[1].split(",")]
        for i, col in enumerate(cols):
            out.append((col, types[i] if len(types) == len(cols) else types[0]))
    return out


@pytest.mark.parametrize("view", ["events", "games", "quarantine"])
def test_sql_doc_tables_match_describe(store: Path, view: str) -> None:
    """docs/sql.md's tables for the store's own views: every column, in order, with its
    type; no column the docs do not list."""
    assert _describe(store, view) == _sql_doc_table(view)


def test_ingest_batches_doc_lists_its_columns(store: Path) -> None:
    text = _doc_text(ROOT / "docs" / "sql.md")
    para = text.split("### `ingest_batches`", 1)[1].split("\n\n", 2)[1]
    named = re.findall(r"`([a-z_]+)`", para.split(". Per batch", 1)[0])
    assert [c for c, _ in _describe(store, "ingest_batches")] == named


def test_readme_view_table_main_columns_exist(store: Path) -> None:
    """The README's view table names "main columns": each exists in that view (and the
    table names every view the docs document)."""
    text = _doc_text(ROOT / "README.md")
    block = text.split("| view | one row per | main columns |", 1)[1].split("\n\n", 1)[0]
    views = {}
    for line in block.strip().splitlines()[1:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        view = cells[0].strip("`")
        cols = re.sub(r"\([^)]*\)", "", cells[2])
        views[view] = [c.strip() for c in cols.split(",")]
    assert set(views) == {"events", "games", "findings", "player_games", "moves",
                          "chip_flows", "sessions", "flags", "quarantine"}
    for view, cols in views.items():
        have = {c for c, _ in _describe(store, view)}
        assert set(cols) <= have, (view, set(cols) - have)


def _fact_table_columns() -> dict[str, list[str]]:
    """docs/fraud.md's fact tables: table -> the column names its row lists (the
    explanations in parentheses and the meanings of values left out)."""
    text = _doc_text(ROOT / "docs" / "fraud.md")
    block = text.split("| table | one row per | columns |", 1)[1].split("\n\n", 1)[0]
    out = {}
    for line in block.strip().splitlines()[1:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        table = re.match(r"`(fraud\.\w+)`", cells[0])
        assert table, cells[0]
        cols = cells[-1]
        if cols == "see below":
            continue
        while re.search(r"\([^()]*\)", cols):  # nested explanations, innermost first
            cols = re.sub(r"\([^()]*\)", "", cols)
        cols = re.sub(r"`[^`]+` =", "", cols)  # a value's meaning: `pot` = ...
        names = [n.strip() for seg in re.findall(r"`([^`]+)`", cols) for n in seg.split(",")]
        out[table.group(1)] = names
    return out


def test_fraud_doc_fact_tables_match_describe(store: Path) -> None:
    """Every fact table of docs/fraud.md lists exactly its columns (order aside)."""
    tables = _fact_table_columns()
    assert len(tables) == 8, sorted(tables)
    for table, cols in tables.items():
        have = [c for c, _ in _describe(store, table)]
        assert sorted(cols) == sorted(have), (table, set(cols) ^ set(have))


def test_raw_store_tables_are_all_named(store: Path) -> None:
    """docs/sql.md's "raw tables" list names every table of the ``store`` schema (the
    scan's are in docs/fraud.md), once a checkpoint exists too."""
    res = CliRunner().invoke(app, ["checkpoint", "--db", str(store)])
    assert res.exit_code == 0, res.output
    con = duckdb.connect(str(store), read_only=True)
    try:
        tables = {r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'store'"
        ).fetchall()}
    finally:
        con.close()
    section = _doc_text(ROOT / "docs" / "sql.md").split("## The raw tables", 1)[1]
    section = section.split("\n## ", 1)[0]
    named = set(re.findall(r"`store\.(\w+)", section))
    assert tables == named, tables ^ named


def test_scan_json_keys_are_documented(store: Path) -> None:
    """docs/fraud.md lists the keys of ``scan --json``; a key the scan adds is listed."""
    import orjson

    res = CliRunner().invoke(app, ["scan", "--db", str(store), "--no-progress", "--model",
                                   "none", "--workers", "0", "--json", "--top", "1"])
    assert res.exit_code == 0, res.output
    keys = set(orjson.loads(res.stdout))
    text = _doc_text(ROOT / "docs" / "fraud.md")
    para = text.split("`scan --json` prints exactly one JSON object:", 1)[1].split("\n\n")[0]
    named = {n.strip() for seg in re.findall(r"`([^`]+)`", para) for n in seg.split(",")}
    assert keys <= named, keys - named


DOC_QUERIES = [(doc, q.strip()) for doc in ("sql.md", "fraud.md")
               for q in re.findall(r"```sql\n(.*?)```", _doc_text(ROOT / "docs" / doc), re.S)]


@pytest.mark.parametrize("doc,query", DOC_QUERIES, ids=[f"{d}-{i}" for i, (d, _) in
                                                         enumerate(DOC_QUERIES)])
def test_doc_sql_examples_run(store: Path, doc: str, query: str) -> None:
    """The SQL examples of docs/sql.md and docs/fraud.md run as written through
    ``rummyguard sql`` (the README's own five are test_readme_queries.py's)."""
    res = CliRunner().invoke(app, ["sql", "--db", str(store), "-f", "json", "--", query])
    assert res.exit_code == 0, res.output
    assert res.stdout.lstrip().startswith("[")


def test_doc_sql_examples_were_found() -> None:
    assert len(DOC_QUERIES) >= 4


# --- reason codes, rule text, files ---------------------------------------------------


def test_quarantine_reason_codes_match_ingest() -> None:
    """docs/sql.md's reason list is ``events.ingest.REASONS``: every code documented,
    and no documented code that ingest never gives (the other backticked words in that
    paragraph are field and actor names)."""
    text = _doc_text(ROOT / "docs" / "sql.md")
    para = text.split("Reason codes:", 1)[1].split("\n\n", 1)[0]
    words = set(re.findall(r"`([a-z_]+)`", para))
    assert set(REASONS) <= words, set(REASONS) - words
    assert words - set(REASONS) <= {"system", "prev_hash", "hash"}, words - set(REASONS)
    arrows = re.findall(r"→ `([a-z_]+)`", _doc_text(ROOT / "docs" / "events.md"))
    assert arrows and set(arrows) <= set(REASONS)


def test_replay_shows_the_rule_text_of_a_finding(store: Path) -> None:
    """The README and docs/disputes.md: ``replay`` prints each finding with the rule's
    text (replay/rule_text.py, generated from RULES.md)."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        row = con.execute("SELECT game_id, rule FROM findings WHERE rule NOT LIKE 'LOG-%' "
                          "ORDER BY game_id, seq LIMIT 1").fetchone()
    finally:
        con.close()
    assert row is not None, "the simulated faults produce a rules finding"
    game, rule = row
    res = CliRunner().invoke(app, ["replay", game, "--db", str(store), "--json"])
    assert res.exit_code == 0, res.output
    head = RULE_TEXT[rule][:60]
    assert head in res.output, (rule, head)


def test_repo_paths_the_docs_name_exist() -> None:
    """Every repository path in backticks in README.md and docs/ (a module, a folder, a
    top-level page) exists."""
    tops = ("events/", "replay/", "sim/", "fraud/", "cli/", "tests/", "benchmarks/", "docs/")
    missing = []
    for path in DOCS:
        for tok in re.findall(r"`([^`\s]+)`", _doc_text(path)):
            is_repo = tok.startswith(tops) or re.fullmatch(r"[A-Z]+\.md", tok)
            if is_repo and tok not in ("EVENTS.md", "RULES.md"):  # the spec, beside the repo
                tok = re.sub(r"[.,;:]$", "", tok)
                if not (ROOT / tok).exists():
                    missing.append((path.name, tok))
    assert not missing, missing


# --- product defects the docs are right about -----------------------------------------


class _Parsed(Exception):
    """Raised instead of running a benchmark once its arguments were parsed."""


def test_make_bench_harnesses_run_without_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    """README: "`make bench` runs every harness". The Makefile runs each harness of
    BENCHES as ``python -m benchmarks.<harness>`` with no arguments, so each must accept
    an empty command line. Only argument parsing is exercised: the parse is intercepted
    before any benchmark runs."""
    make = _doc_text(ROOT / "Makefile")
    benches = re.search(r"^BENCHES := (.+)$", make, re.M)
    assert benches and "$(BIN)/python -m benchmarks.$$b ||" in make
    real_parse = argparse.ArgumentParser.parse_args

    def parse_then_stop(self: argparse.ArgumentParser, args: object = None,
                        namespace: object = None) -> argparse.Namespace:
        real_parse(self, [])  # what `make bench` passes: nothing
        raise _Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    monkeypatch.setattr(sys, "argv", ["harness"])
    monkeypatch.syspath_prepend(str(ROOT))  # benchmarks/ is not part of the package
    refused = []
    for name in benches.group(1).split():
        module = importlib.import_module(f"benchmarks.{name}")
        try:
            module.main()
        except _Parsed:
            continue
        except SystemExit as exc:
            refused.append((name, exc.code))
    assert not refused, refused


def test_each_command_has_a_one_line_summary_in_the_command_list() -> None:
    """``rummyguard --help`` lists each command with the first paragraph of its help
    (rich keeps its line breaks): a newcomer's first view of the app. Each such
    paragraph is one line, as every other command's is."""
    broken = [name for name, cmd in COMMANDS.items()
              if not cmd.short_help and "\n" in (cmd.help or "").strip().split("\n\n")[0]]
    assert not broken, broken
