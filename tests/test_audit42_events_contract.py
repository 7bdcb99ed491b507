"""Audit 42: EVENTS.md against ingest, the store replay and the file readers, in corners
the earlier audits leave open: Parquet columns of types JSON has no form for, a
duplicate key hidden in a Parquet payload text, a game whose chain mode changes midway
or whose seq is claimed by an unknown-type line (replay of the store against replay of
the file), the chain_break detail at seq 0, and the v1 -> v2 upcast on a whole game.

Each test quotes the EVENTS.md (or RULES.md) sentence it holds the code to.
"""

from __future__ import annotations

import decimal
import json
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from log_oracle import rechain

# the spec example and the helpers of audit 33 (the same contract, the same fixtures)
from test_audit33_events_contract import (
    EVENTS,
    EXAMPLE,
    GAME,
    LINES,
    Event,
    _cli,
    _write,
)

from rummyguard.events.models import EventError, validate_event


def _ingest_json(db: Path, *files: Path) -> tuple[Any, dict[str, Any] | None]:
    out = _cli("ingest", *map(str, files), "--db", str(db), "--no-progress", "--json")
    try:
        return out, json.loads(out.stdout)
    except ValueError:
        return out, None


def _sql(db: Path, query: str) -> list[dict[str, Any]]:
    out = _cli("sql", query, "--db", str(db), "-f", "json")
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def _replay_findings(*args: str) -> list[tuple[int, str, str]]:
    out = _cli("replay", GAME, *args, "--json")
    assert out.exit_code == 0, out.output
    record = json.loads(out.stdout)["record"]
    return [(f["seq"], f["rule"], f["kind"]) for f in record["findings"]]


def _parquet(path: Path, events: list[Event], **override: Any) -> Path:
    cols: dict[str, Any] = {k: [e[k] for e in events]
                            for k in ("event_id", "game_id", "seq", "type", "v", "ts", "actor")}
    cols["payload"] = [orjson.dumps(e["payload"]).decode() for e in events]
    cols.update(override)
    pq.write_table(pa.table(cols), path)
    return path


# --- Parquet inputs: nothing may be lost -----------------------------------------------------
@pytest.mark.parametrize("column", ["binary event_id", "decimal seq"])
def test_a_parquet_column_json_cannot_hold_is_quarantined_or_read_never_a_crash(
        tmp_path: Path, column: str) -> None:
    # EVENTS.md "Files": "(The project may add other inputs, e.g. Parquet, with the same
    # fields.)" and "Ingest rules": "A line that cannot be read ... is quarantined whole
    # (raw text + reason), never dropped."; "`seq` | int ≥ 0" with "All numbers in events
    # are integers". A string column written without the UTF8 annotation reads as binary;
    # a decimal128 seq is no JSON integer. Either way the rows must end stored or
    # quarantined and the summary balance (read = stored + duplicates + quarantined), not
    # end the run with a TypeError traceback and nothing accounted for.
    events = EVENTS[:3]
    kind = {"binary event_id": {"event_id": pa.array([e["event_id"].encode() for e in events],
                                                     pa.binary())},
            "decimal seq": {"seq": pa.array([decimal.Decimal(e["seq"]) for e in events],
                                            pa.decimal128(10, 0))}}[column]
    src = _parquet(tmp_path / "log.parquet", events, **kind)
    out, summary = _ingest_json(tmp_path / "s.duckdb", src)
    assert out.exception is None or isinstance(out.exception, SystemExit), repr(out.exception)
    assert summary is not None, out.output
    assert summary["read"] == 3
    assert summary["read"] == summary["stored"] + summary["duplicates"] + summary["quarantined"]


def test_a_parquet_payload_text_with_a_repeated_key_is_not_stored(tmp_path: Path) -> None:
    # EVENTS.md "Files": Parquet "with the same fields" as the JSON Lines; a JSONL line
    # whose object repeats a key is quarantined `not_json` (the event is ambiguous, and
    # "JCS ... RFC 8785" needs I-JSON). The same payload text in a Parquet payload column
    # must not be silently resolved to its last value and stored.
    events = EVENTS[:3]
    dup = ('{"ip_hash":"ipAAAA","ip_hash":"ipBBBB","device_hash":"dv42842deb5a",'
           '"client":"web"}')
    payloads = [orjson.dumps(e["payload"]).decode() for e in events]
    payloads[1] = dup
    # the JSONL form of the same event is quarantined as not_json
    line = orjson.dumps({**events[1], "payload": {}}).replace(b'"payload":{}',
                                                                b'"payload":' + dup.encode())
    jsonl = _write(tmp_path / "log.jsonl", [LINES[0], line, LINES[2]])
    _, s1 = _ingest_json(tmp_path / "a.duckdb", jsonl)
    assert s1 is not None and s1["reasons"] == {"not_json": 1, "sequence_gap": 1}
    src = _parquet(tmp_path / "log.parquet", events, payload=payloads)
    _, s2 = _ingest_json(tmp_path / "b.duckdb", src)
    assert s2 is not None
    assert s2["reasons"].get("not_json") == 1, s2


# --- the chain: store replay against file replay -------------------------------------------
def test_a_game_that_turns_producer_chained_midway_is_not_clean_from_the_store(
        tmp_path: Path) -> None:
    # EVENTS.md: "A producer may leave both hash fields out; the store then chains the
    # events itself at ingest, and says so for each game (chained by producer vs chained
    # at ingest)." Ingest quarantines the switch (chain_mixed) and everything behind it;
    # RULES.md §5: "Replaying the same log always gives the same result." The file
    # replay reports LOG-CHAIN at seq 5; the replay of the store must not call the game
    # clean.
    chained = rechain(EVENTS)
    src = _write(tmp_path / "log.jsonl", [*EVENTS[:5], *chained[5:]])
    db = tmp_path / "s.duckdb"
    _, summary = _ingest_json(db, src)
    assert summary is not None
    assert summary["reasons"] == {"chain_mixed": 1, "sequence_gap": 21}
    from_file = _replay_findings(str(src))
    assert (5, "LOG-CHAIN", "integrity") in from_file
    from_store = _replay_findings("--db", str(db))
    assert from_store == from_file


def test_an_unknown_type_line_at_a_stored_seq_gives_the_same_replay_from_store_and_file(
        tmp_path: Path) -> None:
    # EVENTS.md: "A producer may leave both hash fields out; the store then chains the
    # events itself at ingest" / "a line ... has an unknown `type` ... is quarantined
    # whole"; RULES.md §5: "Replaying the same log always gives the same result."
    # An unchained log with an unknown-type line claiming seq 5 before the real seq 5:
    # ingest stores all 27 events (its chain is intact: verify-log says so); the file's
    # replay has no LOG-CHAIN finding (no hash fields), so neither may the store's.
    unknown = {**EVENTS[5], "event_id": "x-unknown", "type": "TableChat"}
    src = _write(tmp_path / "log.jsonl", [*LINES[:5], unknown, *LINES[5:]])
    db = tmp_path / "s.duckdb"
    _, summary = _ingest_json(db, src)
    assert summary is not None
    assert (summary["stored"], summary["reasons"]) == (27, {"unknown_type": 1})
    assert _cli("verify-log", "--db", str(db), "--no-progress").exit_code == 0
    from_file = _replay_findings(str(src))
    from_store = _replay_findings("--db", str(db))
    assert not [f for f in from_store if f[1] == "LOG-CHAIN"], from_store
    assert from_store == from_file


@pytest.mark.parametrize("edit", ["stored before the line", "stored after the line"])
def test_the_store_chain_of_an_ingest_chained_game_with_kept_back_lines_is_still_checked(
        tmp_path: Path, edit: str) -> None:
    # The two tests above make the replay of the store judge the producer's chain as the
    # file's replay does (the store's links set apart). The store's own chain must still
    # be checked: EVENTS.md "stores that log append-only and tamper-evident". A stored line
    # edited in the store is a LOG-CHAIN finding at its seq, before the kept-back line
    # (an unknown type at seq 5) and after it.
    unknown = {**EVENTS[5], "event_id": "x-unknown", "type": "TableChat"}
    src = _write(tmp_path / "log.jsonl", [*LINES[:5], unknown, *LINES[5:]])
    db = tmp_path / "s.duckdb"
    _ingest_json(db, src)
    clean = _replay_findings("--db", str(db))
    assert clean == _replay_findings(str(src))
    seq = 3 if edit == "stored before the line" else 8
    con = duckdb.connect(str(db))
    (raw,) = con.execute("SELECT raw FROM store.events WHERE game_id = ? AND seq = ?",
                         [GAME, seq]).fetchone()
    edited = orjson.dumps({**orjson.loads(raw), "actor": "example-classic-p9"}).decode()
    con.execute("UPDATE store.events SET raw = ? WHERE game_id = ? AND seq = ?",
                [edited, GAME, seq])
    con.close()
    tampered = _replay_findings("--db", str(db))
    assert (seq, "LOG-CHAIN", "integrity") in tampered
    assert (seq, "LOG-CHAIN", "integrity") not in clean


def test_a_chain_break_at_seq_0_names_the_genesis_not_seq_minus_1(tmp_path: Path) -> None:
    # EVENTS.md: "`prev_hash` ... hex SHA-256 of the previous event of the game; 64 zeros
    # for seq 0". The quarantine reason must be precise: at seq 0 there is no seq -1; the
    # expected value is the 64 zeros.
    first = {k: v for k, v in EVENTS[0].items()}
    bad = rechain([first])[0]
    bad = {**bad, "prev_hash": "1" * 64}
    bad = {k: v for k, v in bad.items() if k != "hash"}
    from log_oracle import sha
    bad["hash"] = sha(bad)
    src = _write(tmp_path / "log.jsonl", [bad])
    db = tmp_path / "s.duckdb"
    _ingest_json(db, src)
    rows = _sql(db, "SELECT reason, detail FROM quarantine")
    assert [r["reason"] for r in rows] == ["chain_break"]
    assert "seq -1" not in rows[0]["detail"], rows[0]["detail"]


# --- pins (passing) --------------------------------------------------------------------------
_RANK = {"T": "10"}
_SUIT = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}


def _legacy(code: str) -> dict[str, str]:
    return {"rank": "joker"} if code == "JK" else {"rank": _RANK.get(code[0], code[0]),
                                                    "suit": _SUIT[code[1]]}


def test_a_whole_game_in_v1_replays_and_stores_exactly_as_in_v2(tmp_path: Path) -> None:
    # EVENTS.md: "Upcasting v1 → v2 is exact and loses nothing." and "The stored original
    # is never rewritten: upgrades happen when reading (upcasting)."
    v1: list[Event] = []
    for e in EVENTS:
        e = dict(e)
        if e["type"] == "Drew":
            assert len(e["payload"]["cards"]) == 1
            e["v"] = 1
            e["payload"] = {"from": {"stock": "deck", "discard": "pile"}[e["payload"]["source"]],
                            "card": _legacy(e["payload"]["cards"][0])}
        elif e["type"] == "Discarded":
            e["v"] = 1
            e["payload"] = {"card": _legacy(e["payload"]["card"])}
        v1.append(e)
    assert any(e["v"] == 1 and e["type"] == "Drew" for e in v1)
    src = _write(tmp_path / "v1.jsonl", v1)
    assert _replay_findings(str(src)) == _replay_findings(str(EXAMPLE))
    db = tmp_path / "s.duckdb"
    _, summary = _ingest_json(db, src)
    assert summary is not None and summary["stored"] == 27
    rows = _sql(db, "SELECT seq, v, payload FROM events ORDER BY seq")
    for r in rows:
        payload = json.loads(r["payload"]) if isinstance(r["payload"], str) else r["payload"]
        assert (r["v"], payload) == (EVENTS[r["seq"]]["v"], EVENTS[r["seq"]]["payload"])
    raws = [r["raw"] for r in _sql(db, "SELECT raw FROM store.events ORDER BY seq")]
    assert [orjson.loads(r) for r in raws] == v1


def test_timestamps_with_non_ascii_digits_are_invalid_everywhere() -> None:
    # EVENTS.md: "`ts` | string | RFC 3339 UTC with milliseconds, e.g.
    # `2026-11-29T18:00:00.000Z`": RFC 3339 digits are ASCII DIGIT (ABNF %x30-39).
    base = "2026-11-29T18:00:00.000Z"
    for digit in ("٣", "３", "३"):
        for pos in (i for i, c in enumerate(base) if c.isdigit()):
            ts = base[:pos] + digit + base[pos + 1:]
            try:
                validate_event({**EVENTS[1], "ts": ts})
            except EventError as exc:
                assert exc.reason == "invalid"
            else:
                raise AssertionError(f"accepted {ts!r}")


def test_a_producer_chained_game_cut_at_its_first_event_is_one_chain_break(
        tmp_path: Path) -> None:
    # EVENTS.md: "64 zeros for seq 0" and the ingest rules: every line ends stored,
    # duplicate or quarantined (read = stored + duplicates + quarantined).
    chained = rechain(EVENTS)
    first = {**chained[0], "prev_hash": "1" * 64}
    from log_oracle import sha
    first["hash"] = sha({k: v for k, v in first.items() if k != "hash"})
    src = _write(tmp_path / "log.jsonl", [first, *chained[1:]])
    _, summary = _ingest_json(tmp_path / "s.duckdb", src)
    assert summary is not None
    assert summary["reasons"] == {"chain_break": 1, "sequence_gap": 26}
    assert summary["read"] == 27 == summary["quarantined"]
