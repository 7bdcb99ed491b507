"""Every command's ``--help`` reads well in an 80-column terminal.

Typer keeps the single line breaks of a docstring's later paragraphs, so help wrapped in
the source at ~90 columns used to come out ragged at 80 (a full line, then a line of one
or two words, over and over). cli/app.py joins the lines of each paragraph; these tests
render the real help through the real app at 80 and 120 columns.
"""

from __future__ import annotations

import itertools
import re

import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import _flowing, app

COMMANDS = sorted(c.name for c in app.registered_commands if c.name)
runner = CliRunner()


def _description(name: str, width: int) -> list[str]:
    """The help's prose: the lines between the usage line and the first box."""
    result = runner.invoke(app, [name, "--help"], terminal_width=width,
                           env={"COLUMNS": str(width), "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    text = result.output.split("╭", 1)[0]
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "Usage:" in line) + 1
    return [line.rstrip() for line in lines[start:]]


def test_flowing_joins_paragraph_lines_and_keeps_example_blocks() -> None:
    doc = "First line\nwraps.\n\nA paragraph\nwrapped in\nthe source.\n\nExamples:\n  a  b\n  c  d"
    assert _flowing(doc) == (
        "First line wraps.\n\nA paragraph wrapped in the source.\n\nExamples:\n  a  b\n  c  d"
    )


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("name", COMMANDS)
def test_help_prose_has_no_orphan_lines(name: str, width: int) -> None:
    """No line of a paragraph but its last is short: each is filled to near the width.
    (Example lines, indented in the docstring, keep their own breaks and are skipped.)"""
    lines = _description(name, width)
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            paragraphs[-1].append(line.strip())
        elif paragraphs[-1]:
            paragraphs.append([])
    for para in paragraphs:
        if not para or para[0].startswith("Examples"):
            continue
        for line, following in itertools.pairwise(para):
            # the next line's first word would have fitted on this one: a ragged break
            first_word = following.split()[0]
            assert len(line) + 1 + len(first_word) > width - 4, (name, width, line, following)


def test_replay_examples_fit_80_columns() -> None:
    lines = _description("replay", 80)
    examples = [line for line in lines if re.search(r"rummyguard replay g-000123", line)]
    assert len(examples) == 3
    assert all(len(line) <= 80 for line in lines)
