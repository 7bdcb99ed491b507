"""Audit of the event contract (spec/EVENTS.md) against events/: the corners an
independent checker feeds a consumer — legacy cards, rule values, big integers, unicode
and escapes, duplicate keys, BOM, CRLF, gzip, a last line without newline — and the
verdict of the compiled fast path against the pydantic authority on each of them.

Every test here failed before the fix it names (see the audit report), except the
parity and no-regression guards, which pin what was already right.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from rummyguard.events.fastpath import fast_valid
from rummyguard.events.hashing import chain, event_hash
from rummyguard.events.ingest import decode_lines, duplicate_key, parse_line, read_jsonl_events
from rummyguard.events.models import EventError, validate_event
from rummyguard.events.store import EventStore
from rummyguard.events.upcast import upcast
from rummyguard.replay.engine import replay

SAMPLE = Path(__file__).parent / "data" / "sample" / "classic-3p.jsonl"
LINES = SAMPLE.read_bytes().splitlines()
EVENTS = [orjson.loads(line) for line in LINES]
GAME = EVENTS[0]["game_id"]
ENV = {"event_id": "e1", "game_id": "g1", "seq": 0, "ts": "2026-11-29T18:00:00.000Z"}


def event(type_: str, payload: dict[str, Any], *, v: int = 1, actor: str = "p1") -> dict:
    return {**ENV, "type": type_, "v": v, "actor": actor, "payload": payload}


def created(rules: dict[str, Any]) -> dict:
    return event("GameCreated", {"variant": "michigan", "table_id": "t", "seats": ["a", "b", "c"],
                                 "dealer": 0, "stake": 1, "rules": rules}, actor="system")


def authority(obj: Any) -> str | None:
    try:
        validate_event(obj)
    except EventError as exc:
        return exc.reason
    return None


def verdict(line: bytes) -> str | None:
    """Ingest's verdict on one line: None (stored) or the quarantine reason."""
    dec = decode_lines([line])
    return dec.errors[0][1] if dec.errors else None


def same_verdict(obj: dict) -> str | None:
    """Fast path, pydantic and ingest agree on ``obj``; returns the verdict."""
    want = authority(copy.deepcopy(obj))
    if fast_valid(copy.deepcopy(obj)):
        assert want is None, obj
    # json, not orjson: the line may hold an integer beyond 64 bits
    assert verdict(json.dumps(obj, ensure_ascii=False).encode()) == want
    return want


# --- Drew v1 / Discarded v1: "rank ... or joker (suit then absent)" ---------------------------
@pytest.mark.parametrize("card", [
    {"rank": "10"},                      # a natural card needs its suit
    {"rank": "10", "suit": None},
    {"rank": "joker", "suit": "hearts"},  # a joker has none
    {"rank": "joker", "suit": None},
])
def test_legacy_card_without_its_suit_or_joker_with_one_is_invalid_not_a_crash(
        card: dict) -> None:
    """Before: the model took ``suit`` as optional for every rank, so ``{"rank": "10"}``
    passed validation and the v1 -> v2 upcaster raised CardError inside decode_lines:
    one such line crashed the whole ingest."""
    for obj in (event("Drew", {"from": "pile", "card": card}),
                event("Discarded", {"card": card})):
        assert same_verdict(obj) == "invalid"
        with pytest.raises(EventError):
            parse_line(orjson.dumps(obj))


def test_legacy_joker_and_naturals_are_still_read_and_upcast_exactly() -> None:
    joker = event("Drew", {"from": "pile", "card": {"rank": "joker"}})
    ten = event("Discarded", {"card": {"rank": "10", "suit": "hearts"}})
    assert same_verdict(joker) is None and same_verdict(ten) is None
    assert upcast(joker)["payload"] == {"source": "discard", "cards": ["JK"]}
    assert upcast(ten)["payload"] == {"card": "TH"}


# --- `as` keys: card positions "0", "1", ... -----------------------------------------------------
@pytest.mark.parametrize("key", ["\u0661", "\u00b2", "\uff11", "01", "-1", " 1"])
def test_as_keys_are_ascii_positions_on_both_paths(key: str) -> None:
    """Before: ``str.isdigit`` let pydantic accept "١" (Arabic-Indic one) and "²" while the
    fast path rejected them: two verdicts for one line."""
    obj = event("Melded", {"kind": "run", "cards": ["AH", "JK", "3H"], "as": {key: "2H"}})
    assert same_verdict(obj) == "invalid"
    assert same_verdict(event("Melded", {"kind": "run", "cards": ["AH", "JK", "3H"],
                                         "as": {"1": "2H"}})) is None


# --- GameCreated.rules values ------------------------------------------------------------------
@pytest.mark.parametrize("value", [2**53, -(2**53), 2**60 + 1, [1, 2**53]])
def test_rule_integers_beyond_2_53_are_invalid(value: Any) -> None:
    """Before: rule values were unbounded ints, so the hash we computed (exact digits)
    differed from JCS's (ECMAScript number: 2**60+1 prints as 2**60) and a non-ASCII
    event with one raised CanonicalError inside ingest."""
    assert same_verdict(created({"deals": value})) == "invalid"


@pytest.mark.parametrize("value", [2**53 - 1, -(2**53 - 1), 0, True, "x", ["JS"], [1, 2], None])
def test_rule_values_within_the_contract_are_accepted(value: Any) -> None:
    """``null`` is "not set" (the default applies), as a missing key; before it
    quarantined the GameCreated and with it the whole game."""
    assert same_verdict(created({"k": value})) is None


def test_empty_chips_transferred_is_accepted() -> None:
    """A claim that no chips moved; before, ``min_length=1`` quarantined it, and every
    later event of its game then fell into quarantine as a sequence gap."""
    obj = event("ChipsTransferred", {"transfers": []}, actor="system")
    assert same_verdict(obj) is None


# --- integers, booleans, null, unicode, escapes: one verdict ------------------------------------
BASE = orjson.loads(LINES[1])  # a PlayerConnected


def _with(path: tuple[str, ...], value: Any) -> dict:
    obj = copy.deepcopy(BASE)
    node = obj
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return obj


@pytest.mark.parametrize(("path", "value", "want"), [
    (("seq",), True, "invalid"),
    (("seq",), None, "invalid"),
    (("seq",), -1, "invalid"),
    (("seq",), 2**64, "invalid"),
    (("v",), True, "invalid"),
    (("v",), 2, "future_version"),
    (("v",), 0, "invalid"),
    (("event_id",), "\U0001F600" * 64, None),      # 64 characters (code points)
    (("event_id",), "\U0001F600" * 65, "invalid"),
    (("event_id",), "", "invalid"),
    (("actor",), "p\u00e9\u0000\u2028", None),
    (("payload", "client"), "\ud7ff\ue000\U0010ffff", None),
    (("payload", "client"), 1, "invalid"),
    (("payload", "client"), None, "invalid"),
    (("prev_hash",), None, None),
    (("prev_hash",), "A" * 64, "invalid"),
    (("ts",), "2026-11-29T18:00:00.000+00:00", "invalid"),
    (("ts",), "2026-11-29t18:00:00.000z", "invalid"),
    (("ts",), "\uff12026-11-29T18:00:00.000Z", "invalid"),
])
def test_fast_path_and_pydantic_agree(path: tuple[str, ...], value: Any, want: str | None,
                                      ) -> None:
    assert same_verdict(_with(path, value)) == want


def test_escaped_and_raw_unicode_lines_are_the_same_event() -> None:
    raw = orjson.dumps(_with(("payload", "client"), "caf\u00e9 \U0001F600 \u2028"))
    escaped = raw.replace("\u00e9".encode(), b"\\u00e9").replace(
        "\U0001F600".encode(), b"\\ud83d\\ude00").replace("\u2028".encode(), b"\\u2028")
    assert escaped != raw and escaped.isascii()
    assert verdict(raw) is None and verdict(escaped) is None
    assert event_hash(parse_line(raw)) == event_hash(parse_line(escaped))
    assert verdict(raw.replace(b'"client":"', b'"client":"\\ud83d')) == "not_json"  # lone


# --- duplicate keys ------------------------------------------------------------------------------
@pytest.mark.parametrize(("old", "new", "key"), [
    (b'"seq":1', b'"seq":1,"seq":5', "seq"),
    (b'"seq":1', b'"seq":1,"s\\u0065q":5', "seq"),         # the same key, escaped
    (b'"client":"', b'"client":"x","client":"', "client"),  # inside the payload
    (b'"seq":1', b'"seq":1,"hash":null,"hash":null', "hash"),
])
def test_duplicate_keys_are_quarantined_as_not_json(old: bytes, new: bytes, key: str) -> None:
    """Before: orjson kept the last value silently, both paths then judged that dict, and
    the line was stored as an event whose content and hash (JCS requires I-JSON: no
    duplicate names) depend on the parser."""
    line = LINES[1].replace(old, new, 1)
    assert line != LINES[1]
    dec = decode_lines([line])
    assert [(r, key in d) for _, r, d in dec.errors] == [("not_json", True)]
    assert duplicate_key(line) == key
    with pytest.raises(EventError) as info:
        parse_line(line)
    assert info.value.reason == "not_json"


def test_duplicate_key_in_an_otherwise_invalid_event_says_duplicate() -> None:
    line = LINES[0].replace(b'"rules":{}', b'"rules":{"decks":1,"decks":1.5}', 1)
    assert verdict(line) == "not_json"


def test_no_false_duplicates() -> None:
    """Equal keys in different objects, escapes, null hash keys and producer chains are
    not duplicates."""
    lines = [
        LINES[1].replace(b'"seq":1', b'"seq":1,"prev_hash":null,"hash":null'),
        LINES[1].replace(b'"seq":1', b'"seq":1,"prev_hash":null'),
        LINES[1].replace(b'"client":"', b'"client":"q\\"uote\\u0022 \\\\ \\/ '),
        *[orjson.dumps(e) for e in chain(EVENTS)],
        *LINES,
    ]
    dec = decode_lines(lines)
    assert dec.errors == []


# --- files: BOM, CRLF, last line, gzip ------------------------------------------------------------
def _ingest(tmp_path: Path, name: str, data: bytes) -> tuple[dict[str, Any], list[dict]]:
    path = tmp_path / name
    path.write_bytes(data)
    with EventStore.open(tmp_path / (name.split(".")[0] + ".duckdb")) as store:
        summary = store.ingest_files([path], workers=0).as_dict()
        return summary, store.load_game(GAME)


def test_bom_at_the_start_of_a_file_is_ignored(tmp_path: Path) -> None:
    """Before: orjson refused the BOM, the GameCreated line went to quarantine and every
    other event of its game followed as a sequence gap. RFC 8259 §8.1 lets a parser
    ignore a leading BOM; it belongs to the file, not to the first line's JSON."""
    data = b"\xef\xbb\xbf" + SAMPLE.read_bytes()
    summary, game = _ingest(tmp_path, "bom.jsonl", data)
    assert (summary["stored"], summary["quarantined"]) == (len(LINES), 0)
    assert replay(game).clean
    read = list(read_jsonl_events(tmp_path / "bom.jsonl"))
    assert not isinstance(read[0][2], EventError) and not read[0][1].startswith("\ufeff")


def test_bom_inside_the_file_is_a_line_that_is_not_json(tmp_path: Path) -> None:
    data = LINES[0] + b"\n\xef\xbb\xbf" + b"\n".join(LINES[1:]) + b"\n"
    summary, _ = _ingest(tmp_path, "midbom.jsonl", data)
    assert summary["reasons"]["not_json"] == 1


@pytest.mark.parametrize("name", ["crlf.jsonl", "crlf.jsonl.gz"])
def test_crlf_gzip_and_a_last_line_without_newline(tmp_path: Path, name: str) -> None:
    data = b"\r\n".join(LINES)  # CRLF, and no terminator after the last line
    if name.endswith(".gz"):
        data = gzip.compress(data)
    summary, game = _ingest(tmp_path, name, data)
    assert (summary["read"], summary["stored"], summary["quarantined"]) == (len(LINES),) * 2 + (0,)
    assert replay(game).clean and game[-1]["type"] == EVENTS[-1]["type"]


# --- replay of stored games that hold an older version ----------------------------------------------
def _legacy_game() -> list[dict]:
    events = copy.deepcopy(EVENTS)
    drew = next(e for e in events if e["type"] == "Drew" and e["payload"]["source"] == "stock")
    code = drew["payload"]["cards"][0]
    suit = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}[code[1]]
    drew["v"], drew["payload"] = 1, {"from": "deck", "card": {
        "rank": {"T": "10"}.get(code[0], code[0]), "suit": suit}}
    return events


def test_a_legacy_event_replays_clean_from_a_file() -> None:
    assert replay(chain(_legacy_game())).clean


@pytest.mark.parametrize("chained", [True, False])
def test_a_legacy_event_replays_clean_from_the_store(tmp_path: Path, chained: bool) -> None:
    events = chain(_legacy_game()) if chained else _legacy_game()
    with EventStore.open(tmp_path / "s.duckdb") as store:
        store.ingest_lines([orjson.dumps(e) for e in events])
        assert store.verify().ok
        record = replay(store.load_game(GAME))
    assert [(f.seq, f.rule) for f in record.findings] == []


# --- what the store holds of a broken game ---------------------------------------------------------
def test_quarantine_rows_name_their_game_so_a_store_replay_can_report_them(
        tmp_path: Path) -> None:
    """Ingest stores a game only up to its first break; the rest is quarantined. Before,
    rows quarantined at decode (bad JSON content, future version, ...) carried no game id
    or seq, so nothing tied them to the stored, shorter game that replays clean."""
    lines = [line for i, line in enumerate(LINES) if i != 10]  # seq 10 is missing
    lines[11] = lines[11].replace(b'"v":2', b'"v":9', 1).replace(b'"v":1', b'"v":9', 1)
    with EventStore.open(tmp_path / "s.duckdb") as store:
        store.ingest_lines(lines)
        rows = store.quarantined(GAME)
        assert replay(store.load_game(GAME)).clean  # what a replay of the store alone sees
    assert [r["seq"] for r in rows] == list(range(11, len(LINES)))
    assert rows[0]["reason"] == "sequence_gap" and rows[1]["reason"] == "future_version"
    assert {r["reason"] for r in rows[2:]} == {"sequence_gap"}
