"""`rummyguard demo` (the README's main job) end to end on a small world: it simulates,
ingests, verifies, scans and reports, and says plainly how its flags compare with the
planted fraud."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from rummyguard.cli.app import app


def test_demo_runs_the_pipeline_and_reports_against_the_truth(tmp_path: Path) -> None:
    db, out = tmp_path / "demo.duckdb", tmp_path / "out"
    result = CliRunner().invoke(app, ["demo", "--games", "40", "--seed", "3", "--db", str(db),
                                      "--out", str(out)], terminal_width=200)
    assert result.exit_code == 0, result.output
    text = result.output
    assert "rummyguard demo" in text and "games clean:" in text
    # scored by the built-in model (fitted once per test session, tests/conftest.py)
    assert "planted fraud in this world:" in text and "flags of the built-in model" in text
    assert (out / "world.jsonl").stat().st_size > 0 and (out / "labels.json").exists()
    assert db.exists()
    assert list(out.glob("replay-*.html")) or "most interesting dispute" not in text


def test_truth_line_counts_found_and_other_accounts() -> None:
    from rummyguard.cli.demo_cmd import _truth_line

    truth = {"a": {("soft_play", "g1")}, "b": {("soft_play", "g1")}, "c": {("bot", "b1")}}
    flags = [{"players": ["a", "x"]}, {"players": ["c"]}]
    line = _truth_line(flags, truth)
    assert "3 account(s) (bot, soft_play)" in line
    assert "flagged: 2 of them, 1 other account(s)" in line and "built-in model" in line
    assert "none" in _truth_line([], {})
    assert "unsupervised detector's flags alone" in _truth_line(flags, truth, "unsupervised only")


def test_flags_table_shows_source_and_truth_as_plain_text() -> None:
    from rich.console import Console

    from rummyguard.cli.demo_cmd import _flags_table

    flags = [{"subject": "a|b", "players": ["a", "b"], "score": 0.97, "mechanism": "card_feeding",
              "source": "model", "evidence": [("g1", 5)]},
             {"subject": "[c]", "players": ["[c]"], "score": 0.99, "mechanism": "unusual",
              "source": "anomaly", "evidence": []}]
    truth = {"a": {("card_feeding", "g")}, "b": {("card_feeding", "g")}}
    console = Console(width=200, record=True)
    console.print(_flags_table(flags, truth))
    text = console.export_text()
    assert "card_feeding (model)" in text and "unusual (anomaly)" in text
    assert "[c]" in text and "g1@5" in text  # brackets are text, not markup
