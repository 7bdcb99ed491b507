"""Session 17: ``replay --at SEQ`` where no event of the game holds SEQ.

A log that lost a line (a gap) or holds a line that is not a valid event at SEQ: the
table shown is the one after the last event before SEQ. It used to be shown under "State
after seq SEQ" with nothing to tell it apart from the table at SEQ; now a note says which
event it follows (text: a line; ``--json``: an ``at_note`` key, present only then), from
the file and from the store alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app

EXAMPLE = Path(__file__).parent / "data" / "spec" / "classic-3p.jsonl"
GAME = "example-classic"


def run(*args: str | Path) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "250"})


def _log(tmp_path: Path, damage: str) -> Path:
    events = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    lines = [json.dumps(e) for e in events]
    if damage == "gap":
        del lines[14]  # seq 14 never reached the log
    else:  # seq 14 is there, but not a valid event
        broken = dict(events[14], payload={"source": "stock", "cards": "5D"})
        lines[14] = json.dumps(broken)
    path = tmp_path / f"{damage}.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("damage", ["gap", "invalid"])
@pytest.mark.parametrize("source", ["file", "store"])
def test_at_a_seq_no_event_holds_says_which_table_is_shown(damage: str, source: str,
                                                          tmp_path: Path) -> None:
    log = _log(tmp_path, damage)
    where: list[str | Path] = [log]
    if source == "store":
        db = tmp_path / "rg.duckdb"
        assert run("ingest", log, "--db", db, "--no-progress").exit_code == 1  # quarantined
        where = ["--db", db]
    out = run("replay", GAME, *where, "--at", "14", "--json")
    assert out.exit_code == 0, out.output
    doc = orjson.loads(out.stdout)
    kind = "(a gap)" if damage == "gap" else "not a valid event"
    assert kind in doc["at_note"] and "after seq 13, the last event before it" in doc["at_note"]
    # the state is the table after seq 13: the same as --at 13 shows
    at13 = orjson.loads(run("replay", GAME, *where, "--at", "13", "--json").stdout)
    assert doc["state"] == at13["state"] and "at_note" not in at13
    text = run("replay", GAME, *where, "--at", "14")
    assert text.exit_code == 0 and "note: " in text.stdout and kind in text.stdout


def test_at_a_seq_an_event_holds_has_no_note(tmp_path: Path) -> None:
    out = run("replay", GAME, EXAMPLE, "--at", "14", "--json")
    assert out.exit_code == 0 and "at_note" not in orjson.loads(out.stdout)
    assert "note: " not in run("replay", GAME, EXAMPLE, "--at", "14").stdout
