"""JCS (RFC 8785) canonical form and the per-game SHA-256 chain."""

from __future__ import annotations

import hashlib
import itertools
from pathlib import Path
from typing import Any

import orjson
import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from rummyguard.events.hashing import (
    GENESIS_HASH,
    CanonicalError,
    canonical,
    chain,
    event_hash,
    verify_chain,
)
from rummyguard.events.ingest import _canonical

DATA = Path(__file__).parent / "data" / "events"
GOLDEN = [orjson.loads(line) for line in (DATA / "golden.jsonl").read_bytes().splitlines()]
EXPECTED = orjson.loads((DATA / "golden.expected.json").read_bytes())
SAMPLE = Path(__file__).parent / "data" / "sample" / "classic-3p.jsonl"


def test_rfc8785_string_and_literal_example() -> None:
    """RFC 8785 section 3.2.2 example, without its floats (events hold integers only)."""
    value = {
        "string": "\u20ac$\u000f\u000aA'\u0042\u0022\u005c\\\"/",
        "literals": [None, True, False],
    }
    expected = '{"literals":[null,true,false],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    assert canonical(value) == expected.encode()
    assert canonical(value) == rfc8785.dumps(value)


def test_rfc8785_key_sorting_example_with_unicode_keys() -> None:
    """RFC 8785 section 3.2.3: keys sort by UTF-16 code units, so the emoji (a
    surrogate pair, D83D...) sorts before U+FB33 although its code point is larger."""
    value = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    out = canonical(value).decode()
    order = ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]
    positions = [out.index(orjson.dumps(k).decode() + ":") for k in order]
    assert positions == sorted(positions)
    assert canonical(value) == rfc8785.dumps(value)


def test_control_characters_and_non_ascii_values() -> None:
    value = {"a": "\b\t\n\f\r\x00\x1f\x7f\u2028é漢😀", "b": [-(2**53 - 1), 2**53 - 1, 0]}
    assert canonical(value) == rfc8785.dumps(value)


def test_floats_and_huge_integers_are_refused() -> None:
    with pytest.raises(CanonicalError):
        canonical({"a": 1.5})
    with pytest.raises(CanonicalError):
        canonical({"a": 2**53 + 1})


json_scalars = (st.none() | st.booleans() | st.integers(-(2**53 - 1), 2**53 - 1)
                | st.text(max_size=12))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                  max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_canonical_matches_the_reference_implementation(value: Any) -> None:
    assert canonical(value) == rfc8785.dumps(value)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=6), json_values, max_size=5))
def test_ingest_fast_canonical_matches_the_reference(value: dict[str, Any]) -> None:
    assert _canonical(value) == rfc8785.dumps(value)


@pytest.mark.parametrize("event", GOLDEN, ids=lambda e: f"{e['type']}.v{e['v']}")
def test_golden_hashes_are_pinned(event: dict[str, Any]) -> None:
    assert event_hash(event) == EXPECTED[event["event_id"]]["hash_unchained"]
    assert event_hash(event) == hashlib.sha256(rfc8785.dumps(event)).hexdigest()
    assert chain([event])[0]["hash"] == EXPECTED[event["event_id"]]["chained"]


def test_hash_ignores_only_the_hash_key() -> None:
    event = dict(GOLDEN[0])
    assert event_hash({**event, "hash": "f" * 64}) == event_hash(event)
    assert event_hash({**event, "prev_hash": GENESIS_HASH}) != event_hash(event)


def _sample() -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in SAMPLE.read_bytes().splitlines()]


def test_chain_links_and_verifies() -> None:
    events = chain(_sample())
    assert events[0]["prev_hash"] == GENESIS_HASH
    for a, b in itertools.pairwise(events):
        assert b["prev_hash"] == a["hash"]
    assert verify_chain(events) == []


def test_verify_chain_finds_each_tampering_at_the_right_seq() -> None:
    events = chain(_sample())
    flipped = [dict(e) for e in events]
    flipped[7] = {**flipped[7], "payload": {"card": "5C"}}
    assert verify_chain(flipped) == [(7, "hash does not match the event's content")]

    swapped = [*events[:5], events[6], events[5], *events[7:]]
    problems = verify_chain(swapped)
    assert problems[0][0] == 6 and "gap" in problems[0][1]

    dropped = events[:10] + events[11:]
    assert verify_chain(dropped)[0] == (11, "sequence gap: expected seq 10, got 11")

    edited = [dict(e) for e in events]
    edited[3] = {**edited[3], "hash": "0" * 64}
    seqs = [s for s, _ in verify_chain(edited)]
    assert seqs == [3, 4]  # its own hash check, then the next event's link

    unchained = [dict(e) for e in events]
    del unchained[4]["hash"]
    assert (4, "event is not chained (hash or prev_hash missing)") in verify_chain(unchained)
