"""C-CLAIM and splits the rules fix only in total (Michigan's pay cards after the last
deal, MI-END): any routing of the chips from the pay cards to the players with the right
totals per card and per player is a right claim; any other is C-CLAIM."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from rummyguard.events.hashing import chain
from rummyguard.replay.engine import replay

CLEAN = Path(__file__).parent / "data" / "michigan" / "clean-3p.jsonl"


def _with_split(transfers: list[tuple[str, str, int]]) -> list[dict[str, Any]]:
    """The clean 3-player game with its final pay-card split logged as ``transfers``."""
    events = [orjson.loads(line) for line in CLEAN.read_bytes().splitlines()]
    for event in events:
        if event["type"] == "ChipsTransferred" and any(
            t["reason"] == "pay cards split" for t in event["payload"]["transfers"]
        ):
            others = [t for t in event["payload"]["transfers"] if t["reason"] != "pay cards split"]
            event["payload"]["transfers"] = others + [
                {"from": src, "to": dst, "amount": n, "reason": "pay cards split"}
                for src, dst, n in transfers
            ]
            break
    else:
        raise AssertionError("the sample has no pay-card split")
    return chain(events)


def test_the_sample_split_is_what_the_replay_computes() -> None:
    record = replay(_with_split([("pay:QD", "p1", 3), ("pay:KC", "p2", 3), ("pay:KC", "p3", 3)]))
    assert record.clean, record.findings


def test_another_routing_with_the_same_totals_is_a_right_claim() -> None:
    routing = [("pay:QD", "p1", 2), ("pay:KC", "p1", 1), ("pay:QD", "p2", 1),
               ("pay:KC", "p2", 2), ("pay:KC", "p3", 3)]
    record = replay(_with_split(routing))
    assert record.clean, record.findings


def test_one_transfer_per_player_and_card_in_any_order_is_right() -> None:
    routing = [("pay:KC", "p3", 3), ("pay:KC", "p2", 2), ("pay:QD", "p2", 1),
               ("pay:QD", "p1", 2), ("pay:KC", "p1", 1)]
    assert replay(_with_split(routing)).clean


def test_wrong_shares_are_C_CLAIM() -> None:
    routing = [("pay:QD", "p1", 3), ("pay:KC", "p1", 1), ("pay:KC", "p2", 2), ("pay:KC", "p3", 3)]
    record = replay(_with_split(routing))
    rules = [f.rule for f in record.findings]
    assert "C-CLAIM" in rules
    assert any("chip transfers differ" in f.message for f in record.findings)


def test_a_card_drained_twice_is_C_CLAIM() -> None:
    # right shares per player, but pay:QD pays 6 chips it never held and pay:KC keeps 3
    routing = [("pay:QD", "p1", 3), ("pay:QD", "p2", 3), ("pay:KC", "p3", 3)]
    record = replay(_with_split(routing))
    assert [f.rule for f in record.findings].count("C-CLAIM") >= 1


def test_a_pool_outside_the_split_is_C_CLAIM() -> None:
    routing = [("pay:QD", "p1", 3), ("pay:AH", "p2", 3), ("pay:KC", "p3", 6)]
    assert "C-CLAIM" in [f.rule for f in replay(_with_split(routing)).findings]
