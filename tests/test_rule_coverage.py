"""Every rule ID of RULES.md is checked in the code (one grep finds it) and named by a
test; the committed copy of the spec matches the shared one when that is present."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from spec_paths import COPY, RULES, SHARED_EXAMPLES

ROOT = Path(__file__).parents[1]
RULE_ID = re.compile(r"\b(?:C|CL|R5|LV|MI)-[A-Z0-9]+(?:-[A-Z0-9]+)*\b")
IDS = sorted(set(RULE_ID.findall(RULES.read_text(encoding="utf-8"))))
CODE = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "replay").rglob("*.py"))
TESTS = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").glob("test_*.py")
                  if p.name != Path(__file__).name)
DATA = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests" / "data").rglob("*.json"))


def test_the_spec_has_the_rule_ids_we_expect() -> None:
    assert len(IDS) >= 60 and {"C-CLAIM", "CL-TIMER", "R5-SWAP", "LV-BUY", "MI-WIDOW"} <= set(IDS)


@pytest.mark.parametrize("rule", IDS)
def test_rule_id_is_checked_in_the_code(rule: str) -> None:
    assert re.search(rf"\b{re.escape(rule)}\b", CODE), f"{rule} appears nowhere in replay/"


@pytest.mark.parametrize("rule", IDS)
def test_rule_id_is_named_by_a_test_or_its_expected_data(rule: str) -> None:
    named = (re.search(rf"\b{re.escape(rule)}\b", TESTS)
             or rule.replace("-", "_") in TESTS or re.search(rf"\b{re.escape(rule)}\b", DATA))
    assert named, f"no test or expected-findings file names {rule}"


@pytest.mark.parametrize("name", ["RULES.md", "EVENTS.md"])
def test_committed_spec_copy_is_the_shared_one(name: str) -> None:
    """A clone carries a copy of the spec (tests/data/spec/) for readers without the shared
    folder; it must be the shared text, byte for byte."""
    shared = SHARED_EXAMPLES.parent / name
    if not shared.exists():
        pytest.skip("shared/spec is not beside the checkout: only the copy is available")
    assert (COPY / name).read_bytes() == shared.read_bytes()


@pytest.mark.parametrize("rule", IDS)
def test_rule_id_has_its_rulebook_text(rule: str) -> None:
    from rummyguard.replay.rule_text import rule_text

    assert rule in rule_text(rule), f"replay and the HTML page show no text for {rule}"


def test_our_log_ids_have_text() -> None:
    from rummyguard.replay.rule_text import rule_text

    for rule in ("LOG-SEQ", "LOG-CHAIN", "LOG-EVENT", "LOG-GAME", "LOG-RULES"):
        assert len(rule_text(rule)) > 20
