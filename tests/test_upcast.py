"""Upcasting: pure v -> v+1 steps, exact for Drew/Discarded v1 (EVENTS.md), gap-free."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from rummyguard.events import upcast as upcast_mod
from rummyguard.events.cards import CardError
from rummyguard.events.models import CURRENT_VERSION, validate_event
from rummyguard.events.upcast import UPCASTERS, check_chains, upcast

DATA = Path(__file__).parent / "data" / "events"
GOLDEN = [orjson.loads(line) for line in (DATA / "golden.jsonl").read_bytes().splitlines()]
EXPECTED = orjson.loads((DATA / "golden.expected.json").read_bytes())


@pytest.mark.parametrize("event", GOLDEN, ids=lambda e: f"{e['type']}.v{e['v']}")
def test_golden_upcast_is_pinned_and_valid_at_the_current_version(event: dict) -> None:
    lifted = upcast(event)
    assert lifted == EXPECTED[event["event_id"]]["upcast"]
    assert lifted["v"] == CURRENT_VERSION[event["type"]]
    check = {k: v for k, v in lifted.items() if k != "upcast_from"}
    validate_event(check)


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"from": "deck", "card": {"rank": "10", "suit": "hearts"}},
         {"source": "stock", "cards": ["TH"]}),
        ({"from": "pile", "card": {"rank": "Q", "suit": "spades"}},
         {"source": "discard", "cards": ["QS"]}),
        ({"from": "pile", "card": {"rank": "joker"}}, {"source": "discard", "cards": ["JK"]}),
    ],
)
def test_drew_v1_to_v2_exactly_as_the_spec_says(payload: dict, expected: dict) -> None:
    event = {"type": "Drew", "v": 1, "event_id": "e", "payload": payload}
    lifted = upcast(event)
    assert lifted["payload"] == expected
    assert lifted["v"] == 2 and lifted["upcast_from"] == 1
    assert event["payload"] is payload and event["v"] == 1  # the original is untouched


def test_discarded_v1_to_v2() -> None:
    lifted = upcast({"type": "Discarded", "v": 1,
                     "payload": {"card": {"rank": "2", "suit": "diamonds"}}})
    assert lifted["payload"] == {"card": "2D"} and lifted["v"] == 2


def test_current_version_is_returned_as_is() -> None:
    event = {"type": "Discarded", "v": 2, "payload": {"card": "KD"}}
    assert upcast(event) is event


def test_upcast_keeps_the_envelope_and_hash() -> None:
    event = {"type": "Drew", "v": 1, "event_id": "e1", "hash": "ab" * 32, "prev_hash": "0" * 64,
             "payload": {"from": "deck", "card": {"rank": "A", "suit": "clubs"}}}
    lifted = upcast(event)
    assert lifted["hash"] == event["hash"] and lifted["prev_hash"] == event["prev_hash"]


def test_v1_to_v2_loses_nothing() -> None:
    """Every legacy card maps to a distinct code, and both draw sources are kept apart."""
    ranks = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
    suits = ["clubs", "diamonds", "hearts", "spades"]
    seen = set()
    for source in ("deck", "pile"):
        for rank in ranks:
            for suit in suits:
                p = upcast({"type": "Drew", "v": 1,
                            "payload": {"from": source, "card": {"rank": rank, "suit": suit}}})
                seen.add(orjson.dumps(p["payload"]))
    assert len(seen) == 2 * 52


def test_bad_legacy_card_fails_loudly() -> None:
    with pytest.raises(CardError):
        upcast({"type": "Discarded", "v": 1, "payload": {"card": {"rank": "1", "suit": "clubs"}}})


def test_chain_gap_is_detected(monkeypatch: pytest.MonkeyPatch) -> None:
    check_chains()
    monkeypatch.setitem(upcast_mod.CURRENT_VERSION, "Drew", 3)
    with pytest.raises(RuntimeError, match="gap: Drew v2 -> v3"):
        check_chains()


def test_upcaster_past_current_version_is_detected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(UPCASTERS, ("Discarded", 2), lambda p: p)
    with pytest.raises(RuntimeError, match="beyond the current version"):
        check_chains()
