"""The engine's claim checks shared by every variant (RULES.md C-CLAIM) and the
GameCreated.rules reading (EVENTS.md: a null value means "not set")."""

from __future__ import annotations

import copy
from pathlib import Path

import orjson
import pytest
from spec_paths import EXAMPLES

from rummyguard.replay.engine import replay

DATA = Path(__file__).parent / "data"
EXAMPLE = EXAMPLES / "classic-3p.jsonl"


def _load(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _rules(events: list[dict]) -> list[tuple[int, str, str]]:
    record = replay(events, verify_hashes=False)
    return [(f.seq, f.rule, f.kind) for f in record.findings]


def _round_with_zero_and_nonzero(events: list[dict]) -> tuple[int, str, str]:
    """A RoundEnded whose recomputed scores hold a 0 and a non-zero value."""
    for i, e in enumerate(events):
        if e["type"] == "RoundEnded":
            scores = e["payload"]["scores"]
            zero = [p for p, v in scores.items() if v == 0]
            other = [p for p, v in scores.items() if v != 0]
            if zero and other:
                return i, zero[0], other[0]
    raise AssertionError("no RoundEnded with a zero and a non-zero score")


@pytest.mark.parametrize("name", ["liverpool/clean-2p.jsonl", "liverpool/clean-5p.jsonl"])
def test_round_scores_claim_may_leave_out_a_zero(name: str) -> None:
    path = DATA / name
    if not path.exists():
        pytest.skip(f"{name} not in tests/data")
    events = _load(path)
    assert _rules(events) == []
    i, zero, other = _round_with_zero_and_nonzero(events)

    left_out_zero = copy.deepcopy(events)
    del left_out_zero[i]["payload"]["scores"][zero]
    assert _rules(left_out_zero) == []  # a claim not logged is not a finding

    left_out_other = copy.deepcopy(events)
    del left_out_other[i]["payload"]["scores"][other]
    assert (i, "C-CLAIM", "discrepancy") in _rules(left_out_other)

    wrong = copy.deepcopy(events)
    wrong[i]["payload"]["scores"][zero] = 5
    found = replay(wrong, verify_hashes=False).findings
    assert [(f.seq, f.rule) for f in found] == [(i, "C-CLAIM")]
    assert "claimed 5, recomputed 0" in found[0].message


def test_null_rules_value_takes_the_default() -> None:
    events = _load(EXAMPLE)
    assert _rules(events) == []
    events[0]["payload"]["rules"] = {**events[0]["payload"]["rules"], "rake_bps": None, "decks": None}
    assert _rules(events) == []
    events[0]["payload"]["rules"]["rake_bps"] = "none"  # a wrong type is still reported
    assert (0, "LOG-RULES", "integrity") in _rules(events)


def test_zero_entries_in_claims_are_not_findings() -> None:
    events = _load(EXAMPLE)
    end = next(i for i, e in enumerate(events) if e["type"] == "GameEnded")
    transfers = next(e for e in events if e["type"] == "ChipsTransferred")
    transfers["payload"]["transfers"].append(
        {"from": "pot", "to": "house", "amount": 0, "reason": "rake"})  # a zero rake, logged
    events[end]["payload"]["net"]["house"] = 0  # an id the replay has no value for, at 0
    assert _rules(events) == []
    events[end]["payload"]["net"]["house"] = 7
    assert _rules(events) == [(end, "C-CLAIM", "discrepancy")]
