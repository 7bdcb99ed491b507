"""The compiled fast path of ingest gives the same verdict as the pydantic contract.

``fast_valid`` may only say "valid" when ``validate_event`` does; ingest's decode
(fast path, column checks, fallback) must end with exactly the verdict and reason of
``validate_event`` on every line; and a store filled through the fast path must equal
one filled through pydantic alone.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import re
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from rummyguard.events import fastpath, ingest
from rummyguard.events.fastpath import (
    COLUMN_CHECKS,
    FAST_TYPES,
    TS_PATTERN,
    UNSUPPORTED,
    _compile,
    _Unsupported,
    fast_valid,
    finite_language,
)
from rummyguard.events.ingest import decode_lines
from rummyguard.events.models import EVENT_MODELS, EventError, validate_event
from rummyguard.events.store import EventStore

TESTS = Path(__file__).parent
DATA = TESTS / "data" / "events"
SAMPLE = TESTS / "data" / "sample" / "classic-3p.jsonl"
CHAINED = TESTS / "data" / "sample" / "classic-3p.chained.jsonl"
GOLDEN_LINES = (DATA / "golden.jsonl").read_bytes().splitlines()
GOLDEN = [orjson.loads(line) for line in GOLDEN_LINES]
BAD_LINES = (DATA / "bad.jsonl").read_bytes().split(b"\n")[:-1]


def authority(line: bytes) -> str | None:
    """The reason ``validate_event`` gives a line (``not_json`` for unparsable), or None."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return "not_json"
    try:
        validate_event(obj)
    except EventError as exc:
        return exc.reason
    return None


def decoded(lines: list[bytes]) -> list[str | None]:
    """Ingest's verdict per line: the reason, or None for a valid event."""
    dec = decode_lines(lines)
    reasons: list[str | None] = [None] * len(lines)
    for index, reason, _detail in dec.errors:
        reasons[index] = reason
    assert sorted(dec.index + [e[0] for e in dec.errors]) == list(range(len(lines)))
    return reasons


def assert_same_verdicts(events: list[Any]) -> None:
    lines = [orjson.dumps(e) for e in events]
    for event, line in zip(events, lines, strict=True):
        if fast_valid(copy.deepcopy(event)):
            assert authority(line) is None, event
    assert decoded(lines) == [authority(line) for line in lines]


# --- the compiled contract -----------------------------------------------------------------
def test_every_type_and_version_is_compiled() -> None:
    assert set(FAST_TYPES) == set(EVENT_MODELS)
    assert UNSUPPORTED == {}
    assert set(COLUMN_CHECKS) == {"ts", "prev_hash", "hash"}


def test_golden_events_take_the_fast_path() -> None:
    for event in GOLDEN:
        assert fast_valid(copy.deepcopy(event)), event["type"]
    for line in SAMPLE.read_bytes().splitlines() + CHAINED.read_bytes().splitlines():
        assert fast_valid(orjson.loads(line))


def test_bad_fixture_lines_get_the_authoritys_reason() -> None:
    for line in BAD_LINES:
        with contextlib.suppress(orjson.JSONDecodeError):
            assert not fast_valid(orjson.loads(line)), line[:80]
    assert decoded(BAD_LINES) == [authority(line) for line in BAD_LINES]
    assert decoded(GOLDEN_LINES) == [None] * len(GOLDEN_LINES)


def test_card_pattern_compiles_to_its_exact_language() -> None:
    pattern = r"^(?:[2-9TJQKA][CDHS]|JK)$"
    words = finite_language(pattern)
    assert words is not None and len(words) == 53
    printable = [chr(c) for c in range(32, 127)]
    matching = {a + b for a, b in itertools.product(printable, repeat=2)
                if re.fullmatch(r"(?:[2-9TJQKA][CDHS]|JK)", a + b)}
    assert set(words) == matching
    assert finite_language(r"^[0-9a-f]{64}$") is None  # too many: stays a regex
    assert finite_language(r"[ab]") is None  # unanchored: matches inside longer strings
    assert finite_language(r"^\d$") is None  # not in the plain syntax


def test_timestamp_pattern_is_exactly_the_real_dates() -> None:
    """Every day 28-31 of every month of every year, against datetime itself."""
    rx = re.compile(f"(?:{TS_PATTERN})\\Z")
    for year in range(0, 10000):
        for month in range(1, 13):
            for day in (28, 29, 30, 31):
                ts = f"{year:04d}-{month:02d}-{day:02d}T12:00:00.000Z"
                try:
                    datetime.fromisoformat(ts)
                    real = True
                except ValueError:
                    real = False
                assert bool(rx.match(ts)) == real, ts
    for bad in ("2026-11-29T24:00:00.000Z", "2026-11-29T23:60:00.000Z",
                "2026-11-29T23:59:60.000Z", "2026-00-10T00:00:00.000Z",
                "2026-11-00T00:00:00.000Z", "2026-11-29T18:00:00.000Z\n",
                "2026-11-29T18:00:00.00Z", "٢٠٢٦-11-29T18:00:00.000Z"):
        assert not rx.match(bad), bad


# --- verdicts: fixtures, mutations, generated events ------------------------------------------
_BAD_VALUES: list[Any] = ["7", 7, -1, 2**53 + 1, 1.0, None, True, [], {}, "", "x" * 300, ["ZZ"],
                          "KD", "kd", "JK", "2026-02-29T00:00:00.000Z", "a" * 64,
                          "a" * 64 + "\n", "A" * 64, "0" * 63]


def _mutations(event: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key in list(event):
        out.append({k: v for k, v in event.items() if k != key})
        out.extend({**event, key: bad} for bad in _BAD_VALUES)
    out.append({**event, "extra": 1})
    out.append({**event, "actor": "system"})
    out.append({**event, "actor": "p1"})
    payload = event["payload"]
    for key in list(payload):
        out.append({**event, "payload": {k: v for k, v in payload.items() if k != key}})
        out.extend({**event, "payload": {**payload, key: bad}} for bad in _BAD_VALUES)
    out.append({**event, "payload": {**payload, "extra": 1}})
    return out


@pytest.mark.parametrize("event", GOLDEN, ids=lambda e: f"{e['type']}.v{e['v']}")
def test_mutations_get_the_same_verdict(event: dict[str, Any]) -> None:
    assert_same_verdicts(_mutations(event))


def test_chained_mutations_get_the_same_verdict() -> None:
    event = orjson.loads(CHAINED.read_bytes().splitlines()[3])
    assert_same_verdicts(_mutations(event))


def test_union_choices_msgspec_cannot_hold_fall_back() -> None:
    """GameCreated rules take ``list[str] | list[int]``; msgspec keeps one list type, so
    a list of ints is left to pydantic, which accepts it."""
    created = next(e for e in GOLDEN if e["type"] == "GameCreated")
    ints = {**created, "payload": {**created["payload"], "rules": {"scores": [1, 2]}}}
    mixed = {**created, "payload": {**created["payload"], "rules": {"scores": [1, "a"]}}}
    assert not fast_valid(copy.deepcopy(ints)) and authority(orjson.dumps(ints)) is None
    assert_same_verdicts([ints, mixed])


json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**60), 2**60),
                      st.text(max_size=70), st.sampled_from(_BAD_VALUES))
json_value = st.recursive(json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=6), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _mutate(value: Any, path: tuple[Any, ...], action: str, new: Any, key: str) -> Any:
    """A deep copy of ``value`` with the node at ``path`` replaced, dropped, or given a
    new sibling key."""
    if not path:
        return new
    value = copy.deepcopy(value)
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    if action == "drop" and isinstance(parent, dict):
        del parent[path[-1]]
    elif action == "add" and isinstance(parent, dict):
        parent[key] = new
    else:
        parent[path[-1]] = new
    return value


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(GOLDEN), st.data())
def test_generated_mutations_get_the_same_verdict(event: dict[str, Any], data: st.DataObject,
                                                   ) -> None:
    mutated = event
    for _ in range(data.draw(st.integers(1, 3))):
        mutated = _mutate(mutated, data.draw(st.sampled_from(_paths(mutated))),
                          data.draw(st.sampled_from(["replace", "drop", "add"])),
                          data.draw(json_value), data.draw(st.text(max_size=6)))
    assert_same_verdicts([mutated])


# --- the compiler errs strict -------------------------------------------------------------------
def _loose(value: str) -> str:
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class _UnknownValidator(_Strict):
    name: Annotated[str, AfterValidator(_loose)]


class _UnicodeClass(_Strict):
    digits: Annotated[str, Field(pattern=r"^\d+$")]


class _Extra(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")
    name: str


@pytest.mark.parametrize("model", [_UnknownValidator, _UnicodeClass, _Extra])
def test_constructs_without_an_equally_strict_form_are_not_compiled(model: type) -> None:
    with pytest.raises(_Unsupported):
        _compile(model, defer=False)


def test_an_unsupported_type_always_takes_the_pydantic_path(monkeypatch: pytest.MonkeyPatch,
                                                            ) -> None:
    discarded = next(e for e in GOLDEN if (e["type"], e["v"]) == ("Discarded", 2))
    monkeypatch.delitem(FAST_TYPES, ("Discarded", 2))
    assert not fast_valid(copy.deepcopy(discarded))
    assert decoded([orjson.dumps(discarded), orjson.dumps({**discarded, "v": "2"})]) == \
        [None, "invalid"]


# --- ingest through the fast path equals ingest through pydantic ----------------------------------
def _snapshot(store: EventStore) -> list[Any]:
    con = store.con
    return [
        con.execute("SELECT event_id, game_id, seq, type, v, ts, ts_text, actor, payload, "
                    "up_payload, up_v, prev_hash, hash, raw, batch_id FROM store.events "
                    "ORDER BY game_id, seq").fetchall(),
        con.execute("SELECT * EXCLUDE (batch_id) FROM store.games_chain ORDER BY game_id"
                    ).fetchall(),
        con.execute("SELECT source, line_no, reason, detail, raw FROM store.quarantine "
                    "ORDER BY line_no, reason").fetchall(),
        con.execute("SELECT batch_id, first_line, last_line, lines_read, stored, duplicates, "
                    "quarantined FROM store.ingest_batches ORDER BY batch_id").fetchall(),
    ]


def test_fast_path_store_equals_pydantic_path_store(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    lines = (GOLDEN_LINES + BAD_LINES + SAMPLE.read_bytes().splitlines()
             + CHAINED.read_bytes().splitlines() + [b'{"a": 1}', b"   "])
    log = tmp_path / "all.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    snaps = []
    for name in ("fast", "pydantic"):
        if name == "pydantic":
            monkeypatch.setattr(ingest, "fast_valid_struct", lambda obj: False)
            monkeypatch.setattr(ingest, "failing_rows", lambda cols: [])
        with EventStore.open(tmp_path / f"{name}.duckdb") as store:
            summary = store.ingest_files([log], batch_lines=17)
            assert summary.balanced and summary.stored == 26 + 27 + 27
            snaps.append(_snapshot(store))
    assert snaps[0] == snaps[1]


def test_event_id_stored_under_another_game_is_a_conflict(tmp_path: Path) -> None:
    """Ingest looks up only ids of rows at seqs their game already has; an id reused by
    another game is caught by UNIQUE(event_id), and the batch is planned again with
    every id looked up: same result as looking up everything, no batch_id gap."""
    lines = SAMPLE.read_bytes().splitlines()
    events = [orjson.loads(x) for x in lines]
    reused = [orjson.dumps({**e, "game_id": "other"}) for e in events]
    fresh = orjson.dumps({**events[0], "game_id": "third", "event_id": "fresh"})
    with EventStore.open(tmp_path / "s.duckdb") as store:
        store.ingest_lines(lines)
        summary = store.ingest_lines([*reused[:5], fresh])
        assert (summary.stored, summary.quarantined) == (1, 5)
        assert summary.reasons == {"conflict_event_id": 5}
        details = [r[0] for r in store.con.execute(
            "SELECT detail FROM store.quarantine ORDER BY line_no").fetchall()]
        assert all("already stored (game 'example-classic'" in d for d in details)
        assert [r[0] for r in store.con.execute(
            "SELECT batch_id FROM store.ingest_batches ORDER BY 1").fetchall()] == [1, 2]
        assert store.verify().ok


def test_fast_module_reexports_for_the_ingest_api() -> None:
    assert ingest._fast_valid is fastpath.fast_valid
