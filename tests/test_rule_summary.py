"""The one-cell rule text of `rummyguard verify`'s table (replay/rule_text.rule_summary).

It used to be ``rule_text(rule)[:90]``: cut mid-word ("the player: dr", "(EV"), which reads
as a typo in a report a support agent forwards.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.replay.rule_text import LOG_RULE_TEXT, RULE_TEXT, rule_summary, rule_text

ALL_RULES = sorted({*RULE_TEXT, *LOG_RULE_TEXT})


@pytest.mark.parametrize("rule", ALL_RULES)
def test_summary_is_a_prefix_cut_at_a_word_boundary(rule: str) -> None:
    full, short = rule_text(rule), rule_summary(rule)
    assert short and len(short) <= 90
    if short.endswith("…"):
        body = short[:-1]
        assert full.startswith(body)
        # the cut falls between words: the next character of the full text is a space
        # or the punctuation stripped before it
        rest = full[len(body):]
        assert rest[:1] in (" ", ",", ";", ":", "("), (rule, body[-20:], rest[:10])
        assert not body.endswith((" 1.", " -")), short
    else:
        assert full.startswith(short)
        assert short.endswith((".", ")")) or short == full


def test_first_sentence_when_it_fits() -> None:
    assert rule_summary("C-SET") == "Sets (C-SET): cards of one rank."
    assert rule_summary("R5-CHIPS") == (
        "R5-CHIPS (seed): the round winner is the player with the highest round score."
    )
    # "1. two sets" is a list item, not a sentence end
    assert "1." not in rule_summary("LV-CONTRACT")
    assert rule_summary("NO-SUCH-RULE") == ""


def test_verify_table_shows_whole_words(tmp_path) -> None:
    """End to end: a simulated log with faults, verified; no rule-text cell ends mid-word."""
    log = tmp_path / "w.jsonl"
    res = CliRunner().invoke(app, ["simulate", "--games", "40", "--seed", "77", "--faults", "6",
                                   "--out", str(log), "--no-progress"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["verify", str(log)], terminal_width=200,
                             env={"COLUMNS": "200"})
    assert res.exit_code == 1, res.output
    # a cell may wrap over several lines (the console's width is not ours to fix here):
    # a row starts where the rule column is filled, and its text cell goes on below
    cells: list[str] = []
    for line in res.output.splitlines():
        if not line.startswith("│"):
            continue
        parts = line.split("│")
        if parts[1].strip():
            cells.append(parts[-2].strip())
        elif cells:
            cells[-1] += " " + parts[-2].strip()
    assert cells, res.output
    for cell in cells:
        assert cell.endswith((".", ")", "…")), cell
