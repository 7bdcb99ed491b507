"""The event contract: golden fixtures for every type/version, every bad-input class,
strictness (no coercion), bounds, and the ingest fast path agreeing with the models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from rummyguard.events.ingest import _fast_valid, parse_line
from rummyguard.events.models import (
    CURRENT_VERSION,
    PAYLOADS,
    EventError,
    event_json_schemas,
    validate_event,
)

DATA = Path(__file__).parent / "data" / "events"
GOLDEN = [orjson.loads(line) for line in (DATA / "golden.jsonl").read_bytes().splitlines()]
BAD_LINES = (DATA / "bad.jsonl").read_bytes().split(b"\n")[:-1]
BAD_REASONS = orjson.loads((DATA / "bad.reasons.json").read_bytes())


def test_golden_covers_every_type_and_version() -> None:
    assert {(e["type"], e["v"]) for e in GOLDEN} == set(PAYLOADS)
    assert len(GOLDEN) == len(PAYLOADS) == 26


@pytest.mark.parametrize("event", GOLDEN, ids=lambda e: f"{e['type']}.v{e['v']}")
def test_golden_event_is_valid(event: dict[str, Any]) -> None:
    model = validate_event(event)
    assert (model.type, model.v) == (event["type"], event["v"])  # type: ignore[attr-defined]
    dumped = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    assert dumped["payload"] == {k: v for k, v in event["payload"].items() if v is not None} or \
        event["type"] == "AutoPlayed"
    assert _fast_valid(event)


def test_bad_fixture_has_every_required_class() -> None:
    whats = " ".join(r["what"] for r in BAD_REASONS)
    for needed in ("truncated JSON", "a JSON array", "type not in the catalog", "Discarded v3",
                   "missing ts", "extra envelope field", "seq as a string", "oversize event_id",
                   "bad card code", "impossible date"):
        assert needed in whats
    assert len(BAD_LINES) == len(BAD_REASONS)


@pytest.mark.parametrize("case", BAD_REASONS, ids=lambda r: r["what"])
def test_bad_input_gets_its_reason(case: dict[str, Any]) -> None:
    line = BAD_LINES[case["line"] - 1]
    with pytest.raises(EventError) as info:
        parse_line(line)
    assert info.value.reason == case["reason"], info.value.detail
    assert info.value.detail


def test_fast_path_never_accepts_what_the_models_reject() -> None:
    for line in BAD_LINES:
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        assert not _fast_valid(obj), line[:80]


def _mutations(event: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key in list(event):
        out.append({k: v for k, v in event.items() if k != key})
        for bad in ("7", 7, None, True, [], {}, "x" * 300):
            out.append({**event, key: bad})
    for key in list(event["payload"]):
        out.append({**event, "payload": {k: v for k, v in event["payload"].items() if k != key}})
        for bad in ("7", 7, None, True, ["ZZ"], {}):
            out.append({**event, "payload": {**event["payload"], key: bad}})
    return out


@pytest.mark.parametrize("event", GOLDEN, ids=lambda e: f"{e['type']}.v{e['v']}")
def test_fast_path_agrees_with_the_models_on_mutations(event: dict[str, Any]) -> None:
    """The fast path may only say valid when validate_event does."""
    for mutated in _mutations(event):
        try:
            validate_event(mutated)
            ok = True
        except EventError:
            ok = False
        if _fast_valid(mutated):
            assert ok, mutated


def test_no_silent_coercion() -> None:
    event = dict(GOLDEN[[e["type"] for e in GOLDEN].index("WidowBought")])
    with pytest.raises(EventError, match="price"):
        validate_event({**event, "payload": {"price": "25"}})
    with pytest.raises(EventError, match="price"):
        validate_event({**event, "payload": {"price": 25.0}})
    with pytest.raises(EventError, match="v"):
        validate_event({**event, "v": "1"})


def test_as_keys_are_card_positions() -> None:
    melded = next(e for e in GOLDEN if e["type"] == "Melded")
    bad = {**melded, "payload": {**melded["payload"], "as": {"one": "6H"}}}
    with pytest.raises(EventError, match="invalid"):
        validate_event(bad)


def test_json_schema_for_every_type_and_version() -> None:
    schemas = event_json_schemas()
    assert set(schemas) == {f"{t}.v{v}" for t, v in PAYLOADS}
    drew1 = schemas["Drew.v1"]
    assert "from" in str(drew1)  # aliases, not python names
    assert CURRENT_VERSION["Drew"] == 2 and CURRENT_VERSION["Discarded"] == 2
