"""Audit of RULES.md §4 (Michigan) against replay/rules/michigan.py: what an independent
checker, reading the spec alone, expects at the corners the main suite does not pin.

Scripted games reuse the stacked deal of tests/test_michigan_kit.py: seats a, b, c,
dealer c; a starts; the widow holds 5H TH 6C JC 3D 7D QD 5S-9S KS.
"""

from __future__ import annotations

from typing import Any

import pytest
from logkit import Log
from test_michigan_kit import STACKED, record, triples

from rummyguard.replay.rules.michigan import Michigan

SEATS = ["a", "b", "c"]
PAY = ["pay:JS", "pay:QD", "pay:KC", "pay:AH"]


def opening(**rules: Any) -> Log:
    log = Log()
    log.created("michigan", SEATS, dealer=2, rules=rules)
    log.round(STACKED, dealer=2)
    return log


def plays(log: Log, script: str) -> int:
    seq = -1
    for step in script.split():
        who, card = step.split(":")
        seq = log.add("CardPlayed", who, {"card": card})
    return seq


@pytest.mark.parametrize("key", ["deals", "pay_ante", "widow_price", "three_in_one", "pay_cards"])
def test_a_null_rule_value_takes_the_default_without_a_finding(key: str) -> None:
    """RULES.md: "missing keys take the defaults"; ``null`` is a key not set (``deals``
    has no number a producer could write for "one per player"). Before: LOG-RULES."""
    rec = record(opening(**{key: None}).events)
    assert triples(rec) == []
    st = rec.state
    assert isinstance(st, Michigan)
    assert st.config[key] == Michigan.config_defaults[key]
    assert st.total_deals == 3


def test_antes_as_a_reader_of_MI_ANTE_claims_them_are_exactly_due() -> None:
    """MI-ANTE: 1 chip each to the kitty, the dealer 2; ``pay_ante`` from every player
    (the dealer too) on every pay card. One transfer per payer and pool."""
    log = opening(pay_ante=3)
    transfers = [{"from": p, "to": "kitty", "amount": 2 if p == "c" else 1, "reason": "ante"}
                 for p in SEATS]
    transfers += [{"from": p, "to": pool, "amount": 3, "reason": "pay ante"}
                  for p in SEATS for pool in PAY]
    log.sys("ChipsTransferred", {"transfers": transfers})
    assert triples(record(log.events)) == []
    log.sys("ChipsTransferred", {"transfers": [
        {"from": "c", "to": "kitty", "amount": 1, "reason": "a second dealer chip"}]})
    assert triples(record(log.events)) == [(len(log.events) - 1, "C-CLAIM", "discrepancy")]


def test_penalty_goes_to_every_other_player_on_a_restart_too() -> None:
    """MI-PENALTY prices every start of a sequence, the restart after a stop included."""
    log = opening()
    plays(log, "a:2H a:3H b:4H")  # 5H in the widow: b restarts, not in hearts
    plays(log, "b:9C")  # his lowest club is 2C
    rec = record(log.events)
    assert triples(rec) == []
    assert [t.key() for t in rec.transfers if t.reason == "penalty"] == [("b", "a", 1),
                                                                        ("b", "c", 1)]


def test_widow_price_goes_to_the_kitty_and_the_kitty_to_the_first_out() -> None:
    log = opening(widow_price=4)
    log.add("WidowBought", "b", {"price": 4})
    rec = record(log.events)
    assert triples(rec) == []
    st = rec.state
    assert isinstance(st, Michigan)
    assert st.pools["kitty"] == 1 + 1 + 2 + 4
    assert ("b", "kitty", 4) in [t.key() for t in rec.transfers]
