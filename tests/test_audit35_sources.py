"""Audit 35: the same game replayed from its JSONL file and from the store it was ingested
into must say the same thing (RULES.md §5: "Replaying the same log always gives the same
result"), for every kind of bad input EVENTS.md and docs/events.md name.

What was found: ingest stores a game only up to its first bad line and quarantines the
rest (raw text kept), and the store's replay read the quarantine as one ``LOG-EVENT`` per
line. So for a game with a gap, a tampered line, a line that is not a valid event or a
second event at a taken seq, ``replay GAME FILE`` and ``replay GAME --db`` gave other
rules (LOG-SEQ / LOG-CHAIN against LOG-EVENT), other halts (a line the replay cannot
follow halted the file's replay only), other results (the store's game never ended: no
winner, stakes in the pot), and the store's HTML page had no row for a quarantined line
while its JSON did. The HTML page of a *file* also placed a bad line by its seq where
``--json`` placed it where the file had it (an invalid line before the valid event of its
seq halted the JSON replay and not the page). Now the store's replay folds each
quarantined line back in where ingest read it (``store.quarantine.head``), and the page
follows the replay's order; rows the store never stored are marked as such.

What stays different, by the contract itself, is asserted and documented
(docs/events.md): an exact duplicate (a finding in a file, a no-op at ingest), and lines
that name no game (``verify FILES`` exits 2, the store lists them).

Every test runs the real CLI (typer's CliRunner) on real DuckDB files in ``tmp_path``.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.hashing import chain, event_hash
from rummyguard.replay.engine import replay as replay_events
from rummyguard.replay.verify import VerifyRun, attach_bad_lines, read_store_bad_lines

TESTS = Path(__file__).parent
EXAMPLE = TESTS / "data" / "spec" / "classic-3p.jsonl"
DOCS = TESTS.parent / "docs"
EVENTS: list[dict[str, Any]] = [orjson.loads(line) for line in EXAMPLE.read_bytes().splitlines()]
GAME = EVENTS[0]["game_id"]
P1, P2, P3 = EVENTS[0]["payload"]["seats"]
Line = bytes

#: quarantine reasons of a line that is a valid event, kept back only for its place
KEPT_BACK = {"sequence_gap", "conflict_seq", "conflict_event_id", "chain_break", "bad_hash",
             "chain_mixed"}


def _cli(*args: Any) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def _dumps(events: list[dict[str, Any]]) -> list[Line]:
    return [orjson.dumps(e) for e in events]


def _renamed(game: str) -> list[dict[str, Any]]:
    """The example game under another game id (its own event ids)."""
    text = EXAMPLE.read_text(encoding="utf-8").replace(GAME, game)
    return [json.loads(line) for line in text.splitlines()]


# --- the logs: one per kind of bad input --------------------------------------------------------
def _plain() -> list[Line]:
    return _dumps(EVENTS)


def _chained() -> list[dict[str, Any]]:
    return chain(copy.deepcopy(EVENTS))


def _tampered() -> list[Line]:  # seq 13's card edited after hashing: bad_hash
    events = _chained()
    events[13]["payload"]["card"] = "KS"
    return _dumps(events)


def _chain_break() -> list[Line]:  # seq 13 hashed right, over another prev_hash
    events = _chained()
    linked = {k: v for k, v in events[13].items() if k != "hash"} | {"prev_hash": "a" * 64}
    events[13] = {**linked, "hash": event_hash(linked)}
    return _dumps(events)


def _chain_mixed() -> list[Line]:  # one event of a chained game without hash fields
    events = _chained()
    del events[13]["hash"], events[13]["prev_hash"]
    return _dumps(events)


def _upper_hex() -> list[Line]:  # EVENTS.md: hex; upper case is invalid
    events = _chained()
    events[13]["hash"] = events[13]["hash"].upper()
    return _dumps(events)


def _with(at: int, line: Line, *, replace: bool = False, shift: bool = False) -> list[Line]:
    lines = _plain()
    rest = [orjson.dumps({**e, "seq": e["seq"] + 1}) for e in EVENTS[at:]] if shift else \
        lines[at + replace:]
    return [*lines[:at], line, *rest]


def _cross_game() -> list[Line]:
    """Two games; the second reuses the first's event id at its seq 5 (EVENTS.md: ids are
    globally unique): a conflict for ingest and for the file readers alike."""
    other = _renamed("g2")
    other[5]["event_id"] = EVENTS[5]["event_id"]
    return [*_plain(), *_dumps(other)]


CASES: dict[str, Callable[[], list[Line]]] = {
    # EVENTS.md: "a line that cannot be read ... is quarantined whole"
    "invalid JSON in place of seq 13": lambda: _with(13, b'{"event_id": "x", "game_id": "' +
                                                     GAME.encode() + b'", "seq": 13,',
                                                     replace=True),
    "a blank line": lambda: _with(13, b""),
    "JSON that is not an object": lambda: _with(13, b"[1, 2, 3]"),
    "schema-invalid event in place of seq 13": lambda: _with(
        13, orjson.dumps({**EVENTS[13], "payload": {"card": "10C"}}), replace=True),
    "schema-invalid event before the valid seq 13": lambda: _with(
        13, orjson.dumps({**EVENTS[13], "payload": {"card": "10C"}})),
    "schema-invalid event after the valid seq 13": lambda: _with(
        14, orjson.dumps({**EVENTS[13], "payload": {"card": "10C"}})),
    "a player move by system": lambda: _with(
        13, orjson.dumps({**EVENTS[13], "actor": "system"}), replace=True),
    "unknown type": lambda: _with(13, orjson.dumps({**EVENTS[13], "type": "Sneezed",
                                                    "event_id": "sneeze", "payload": {}}),
                                  shift=True),
    "future version": lambda: _with(13, orjson.dumps({**EVENTS[13], "v": 3}), replace=True),
    # EVENTS.md: "the same event_id with other content, or a second event at a taken
    # (game_id, seq), is rejected as a conflict"
    "same event_id, other content": lambda: _with(
        14, orjson.dumps({**EVENTS[13], "ts": "2026-11-29T22:57:09.999Z"})),
    "second event at a taken seq": lambda: _with(
        14, orjson.dumps({**EVENTS[13], "event_id": "other", "payload": {"card": "KS"}})),
    "event_id of another game": _cross_game,
    # EVENTS.md: seq "contiguous from 0", lines "in seq order within a game"
    "gap in seq": lambda: [*_plain()[:13], *_plain()[14:]],
    "two lines swapped": lambda: [*_plain()[:13], _plain()[14], _plain()[13], *_plain()[15:]],
    "a line after GameEnded": lambda: [*_plain(), orjson.dumps(
        {**EVENTS[5], "seq": 27, "event_id": "late", "ts": "2026-11-29T23:59:00.000Z"})],
    # EVENTS.md: the hash chain
    "tampered line": _tampered,
    "broken prev_hash": _chain_break,
    "chained game with an unchained line": _chain_mixed,
    "upper-case hash": _upper_hex,
    "gap in a chained game": lambda: [*_dumps(_chained())[:13], *_dumps(_chained())[14:]],
}


# --- reading both sides ---------------------------------------------------------------------------
def _write(tmp: Path, name: str, lines: list[Line]) -> Path:
    path = (tmp / name).resolve()  # the path ingest records is absolute: the same messages
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def _ingest(db: Path, *files: Path) -> dict[str, Any]:
    out = _cli("ingest", *files, "--db", db, "--json", "--no-progress")
    assert out.exit_code in (0, 1), out.output
    return orjson.loads(out.stdout)


def _replay(game: str, *source: Any) -> dict[str, Any]:
    out = _cli("replay", game, *source, "--json")
    assert out.exit_code == 0, out.output
    return orjson.loads(out.stdout)


#: how a LOG-SEQ names a copy of an earlier event whose content one reader could compare
#: and the other could not: an unchained file's replay cannot (it holds no event, only ids),
#: the store's can (ingest chained the first and quarantined the copy as a conflict)
_COPY = re.compile(r"repeated: (?:the same event_id again \(unchained: content not compared\)"
                   r"|event_id '[^']*' again with other content \([^)]*\))")


def _findings(findings: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Seq, rule, kind, and the message but for LOG-EVENT (which quotes the reader's own
    words for the line, e.g. a conflict of ids as the file readers or ingest put it), and
    with a copy of an earlier event worded alike whether or not its content was compared
    (``_COPY``; test_a_copy_with_other_content_is_named_a_conflict_where_it_can_be pins both)."""
    return [(f["seq"], f["rule"], f["kind"],
             None if f["rule"] == "LOG-EVENT" else _COPY.sub("repeated: <a copy>", f["message"]))
            for f in findings]


def _judged(body: dict[str, Any]) -> dict[str, Any]:
    """What ``replay --json`` says, less the marks of rows the store did not store."""
    record = body["record"]
    return {
        "findings": _findings(record["findings"]), "clean": record["clean"],
        "halted": record["halted"], "halted_at": body["halted_at"],
        "finished": body["finished"], "results": record["results"], "state": body["state"],
        "rows": [(r["seq"], r["ts"], r["type"], r["text"], _findings(r["findings"]))
                 for r in body["timeline"]],
    }


_DATA = re.compile(r'<script type="application/json" id="rg-data">(.*?)</script>', re.S)
_KEPT = re.compile(r" — not stored: quarantined by ingest \((\w+)\)$")


def _page(game: str, *source: Any) -> tuple[dict[str, Any], dict[int, str]]:
    """The HTML page's data (rows, findings, verdict), and its "not stored" marks by row."""
    page = source[-1].parent / f"page-{len(source)}-{source[0] if len(source) > 1 else 'f'}.html"
    out = _cli("replay", game, *source, "--html", page)
    assert out.exit_code == 0, out.output
    data = json.loads(_DATA.search(page.read_text(encoding="utf-8")).group(1))  # type: ignore[union-attr]
    marks: dict[int, str] = {}
    rows = []
    for e in data["events"]:
        desc = list(e["desc"])
        if desc and isinstance(desc[-1], str) and (kept := _KEPT.search(desc[-1])):
            marks[e["i"]] = kept.group(1)
            desc = desc[:-1]
        text = "".join(d if isinstance(d, str) else d["c"] for d in desc)
        rows.append((e["seq"], e["type"], None if " is not a valid event: " in text else text))
    meta = data["meta"]
    return {"rows": rows, "findings": [(f["i"], f["seq"], f["rule"], f["kind"])
                                       for f in data["findings"]],
            "halted": meta["halted"], "halt_index": meta["halt_index"],
            "results": meta["results"], "clean": meta["clean"]}, marks


def _verify(*source: Any) -> tuple[int, dict[str, Any]]:
    out = _cli("verify", *source, "--json", "--no-progress")
    assert out.exit_code in (0, 1, 2), out.output
    return out.exit_code, {g["game_id"]: (_findings(g["findings"]), g["results"], g["halted"])
                           for g in orjson.loads(out.stdout)["games"]}


def _store_rows(db: Path) -> tuple[list[bytes], list[tuple[int, bytes, str, str | None, int | None]]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        stored = [r[0].encode() for r in con.execute("SELECT raw FROM store.events").fetchall()]
        quarantined = con.execute("SELECT line_no, raw_bytes, reason, game_id, seq "
                                  "FROM store.quarantine ORDER BY line_no").fetchall()
    finally:
        con.close()
    return stored, quarantined


# --- every kind of bad input -----------------------------------------------------------------------
@pytest.mark.parametrize("case", list(CASES))
def test_the_file_and_the_store_replay_the_game_alike(tmp_path: Path, case: str) -> None:
    lines = CASES[case]()
    log = _write(tmp_path, "log.jsonl", lines)
    db = tmp_path / "s.duckdb"
    summary = _ingest(db, log)

    # nothing lost: every line is stored, a duplicate, or quarantined whole with a reason
    stored, quarantined = _store_rows(db)
    assert summary["read"] == len(lines) == len(stored) + summary["duplicates"] + len(quarantined)
    for line_no, raw, reason, _game, _seq in quarantined:
        assert bytes(raw) == lines[line_no - 1] and reason, (line_no, reason)
    assert not Counter(stored) - Counter(lines)

    games = sorted({orjson.loads(line)["game_id"] for line in lines
                    if line.startswith(b"{") and line.endswith(b"}")})
    for game in games:
        from_file, from_store = _replay(game, log), _replay(game, "--db", db)
        assert _judged(from_store) == _judged(from_file), (case, game)
        # the rows the store holds only in its quarantine say so; the file's rows do not
        assert not any("quarantined" in r for r in from_file["timeline"])
        marked = {r["seq"]: r["quarantined"] for r in from_store["timeline"]
                  if "quarantined" in r}
        kept = {seq: reason for _, raw, reason, g, seq in quarantined
                if g == game and reason in KEPT_BACK and orjson.loads(bytes(raw))["seq"] == seq}
        assert kept.items() <= marked.items(), (marked, kept)
        assert set(marked) <= {seq for *_, g, seq in quarantined if g == game}
        if kept and kept.keys() - {r["seq"] for r in from_store["timeline"] if r["type"] == ""}:
            assert marked, "a kept-back event is replayed but not marked"

        page_file, no_marks = _page(game, log)
        page_store, marks = _page(game, "--db", db)
        assert page_store == page_file, (case, game)
        assert not no_marks and set(marks.values()) <= {q[2] for q in quarantined}
        assert len(marks) >= len(kept)
        # the page says what --json says: the same findings (by row there, by seq in the
        # record), halt and results
        assert sorted(f[1:] for f in page_file["findings"]) == sorted(
            (f["seq"], f["rule"], f["kind"]) for f in from_file["record"]["findings"])
        assert (page_file["halted"], page_file["results"]) == (
            from_file["record"]["halted"], from_file["record"]["results"])

    code_file, in_file = _verify(log)
    code_store, in_store = _verify("--db", db)
    assert in_store == in_file
    named_nothing = any(game is None for *_, game, _seq in quarantined)
    assert code_file == (2 if named_nothing else code_store)


def test_what_the_fixes_changed_reads_as_the_spec_wants(tmp_path: Path) -> None:
    """The verdicts the parametrized test above holds equal, pinned for three cases as the
    spec names them: a gap is LOG-SEQ at the first seq after it, the game behind it is
    replayed to its end (p1 wins, as the platform claimed); a tampered line is LOG-CHAIN at
    its seq and nothing else; a line the project cannot read (a future ``v``) halts there."""
    gap = _write(tmp_path, "gap.jsonl", CASES["gap in seq"]())
    db = tmp_path / "gap.duckdb"
    _ingest(db, gap)
    body = _replay(GAME, "--db", db)
    assert [(f["seq"], f["rule"]) for f in body["record"]["findings"]][:1] == [(14, "LOG-SEQ")]
    assert body["finished"] and body["record"]["results"]["winners"] == [P1]
    text = _cli("replay", GAME, "--db", db)
    assert "not stored: quarantined by ingest (sequence_gap)" in text.stdout

    tampered = _write(tmp_path, "t.jsonl", _tampered())
    db = tmp_path / "t.duckdb"
    _ingest(db, tampered)
    body = _replay(GAME, "--db", db)
    assert [(f["seq"], f["rule"]) for f in body["record"]["findings"]] == [(13, "LOG-CHAIN")]
    assert body["finished"] and not body["record"]["halted"]

    future = _write(tmp_path, "v.jsonl", CASES["future version"]())
    db = tmp_path / "v.duckdb"
    _ingest(db, future)
    body = _replay(GAME, "--db", db)
    assert [(f["seq"], f["rule"]) for f in body["record"]["findings"]] == [(13, "LOG-EVENT")]
    assert body["halted_at"] == 13 and not body["finished"]


def test_at_and_as_agree_from_the_file_and_from_the_store(tmp_path: Path) -> None:
    """``--at`` inside the quarantined stretch of a tampered game, and a player's view:
    the same table, rows and findings from both; another player's stock draw kept back by
    ingest stays hidden in the store's replay too."""
    log = _write(tmp_path, "t.jsonl", _tampered())
    db = tmp_path / "t.duckdb"
    _ingest(db, log)
    assert EVENTS[14]["type"] == "Drew" and EVENTS[14]["actor"] == P3
    for extra in (("--at", "18"), ("--as", P1), ("--at", "18", "--as", P1), ("--as", P3)):
        from_file, from_store = _replay(GAME, log, *extra), _replay(GAME, "--db", db, *extra)
        assert _judged(from_store) == _judged(from_file), extra
        row = next(r for r in from_store["timeline"] if r["seq"] == 14)
        assert row["quarantined"] == "sequence_gap"
        if P1 in extra:
            assert "drew ?? from the stock" in row["text"] and "5♦" not in row["text"]
        if P3 in extra:
            assert "drew 5♦ from the stock" in row["text"]


def test_a_retry_in_a_later_file_reads_as_both_files(tmp_path: Path) -> None:
    """A conflicting retry of seq 13 (other card), sent in a second file after the whole
    game: the store replays it where ingest read it (after the game), as a replay of the
    two files does."""
    day = _write(tmp_path, "day.jsonl", _plain())
    retry = _write(tmp_path, "retry.jsonl", [orjson.dumps(
        {**EVENTS[13], "payload": {"card": "KS"}})])
    db = tmp_path / "s.duckdb"
    _ingest(db, day)
    assert _ingest(db, retry)["reasons"] == {"conflict_event_id": 1}
    from_files, from_store = _replay(GAME, day, retry), _replay(GAME, "--db", db)
    assert _judged(from_store) == _judged(from_files)
    assert [(f["seq"], f["rule"]) for f in from_store["record"]["findings"]] == [(13, "LOG-SEQ")]
    assert _verify("--db", db)[1] == _verify(day, retry)[1]


def test_a_copy_with_other_content_is_named_a_conflict_where_it_can_be(tmp_path: Path) -> None:
    """EVENTS.md: the same event_id with other content is a conflict, the same content again
    a harmless retry. A chained log lets every reader tell them apart (the hash of the
    first's content against the copy's); an unchained file's replay holds no events, so it
    says it did not compare; the store, whose ingest compared and quarantined the copy, says
    conflict."""
    other = {**EVENTS[13], "payload": {"card": "KS"}}
    day = _write(tmp_path, "day.jsonl", _plain())
    retry = _write(tmp_path, "retry.jsonl", [orjson.dumps(other)])
    db = tmp_path / "s.duckdb"
    _ingest(db, day)
    _ingest(db, retry)

    def copy_message(body: dict[str, Any]) -> str:
        (f,) = [f for f in body["record"]["findings"] if f["rule"] == "LOG-SEQ"]
        return f["message"]

    assert "(unchained: content not compared)" in copy_message(_replay(GAME, day, retry))
    assert "again with other content (a conflict" in copy_message(_replay(GAME, "--db", db))
    # producer-chained: the copy of seq 13 with its original hash fields and another card
    chained = chain([dict(e) for e in EVENTS if e["game_id"] == GAME])
    lines = [orjson.dumps(e) for e in chained]
    assert "again with other content (a conflict" in copy_message(_replay(GAME, _write(
        tmp_path, "c1.jsonl", [*lines, orjson.dumps({**chained[13], "payload": {"card": "KS"}})])))
    assert ", with the same content (a retry" in copy_message(_replay(GAME, _write(
        tmp_path, "c2.jsonl", [*lines, lines[13]])))


def test_the_same_export_ingested_twice_under_two_names_is_replayed_once(tmp_path: Path) -> None:
    """A game with a gap, its file ingested again under another name: every line behind the
    gap is quarantined twice (once per source, nothing lost), but the store replays each
    line once, as the one file: the same line again is a no-op (EVENTS.md)."""
    lines = CASES["gap in seq"]()
    first, second = _write(tmp_path, "a.jsonl", lines), _write(tmp_path, "b.jsonl", lines)
    db = tmp_path / "s.duckdb"
    _ingest(db, first)
    _ingest(db, second)
    _, quarantined = _store_rows(db)
    assert len(quarantined) == 2 * (len(lines) - 13)
    assert _judged(_replay(GAME, "--db", db)) == _judged(_replay(GAME, first))


# --- what cannot agree, said by both and documented ---------------------------------------------
def test_an_exact_duplicate_is_a_finding_in_a_file_and_a_no_op_in_the_store(
        tmp_path: Path) -> None:
    """EVENTS.md: "the same event_id with the same content again is a no-op" at ingest;
    RULES.md §5 counts a duplicate in a log among the integrity findings. So the file says
    LOG-SEQ ("the same event_id again") and the store, which holds the event once, is clean;
    ingest counted the copy. docs/events.md says so."""
    lines = _plain()
    log = _write(tmp_path, "dup.jsonl", [*lines[:14], lines[13], *lines[14:]])
    db = tmp_path / "s.duckdb"
    summary = _ingest(db, log)
    assert summary["duplicates"] == 1 and summary["quarantined"] == 0
    in_file = _replay(GAME, log)["record"]["findings"]
    assert [(f["seq"], f["rule"]) for f in in_file] == [(13, "LOG-SEQ")]
    assert "the same event_id again" in in_file[0]["message"]
    assert _replay(GAME, "--db", db)["record"]["findings"] == []
    docs = " ".join((DOCS / "events.md").read_text(encoding="utf-8").split())
    assert "an exact copy of a line (same `event_id`, same content) is a `LOG-SEQ` finding" in docs
    assert "a no-op at ingest (EVENTS.md), so the store holds it once" in docs


def test_lines_that_name_no_game_are_listed_by_both(tmp_path: Path) -> None:
    """A line that names no game (not JSON, a blank line): ``verify FILE`` lists it and
    exits 2; ``verify --db`` lists the same lines (it listed none) with a note, and its exit
    code is the games' (ingest already reported the line, exit 1). docs/events.md says so."""
    lines = _plain()
    log = _write(tmp_path, "junk.jsonl", [*lines[:5], b"not json", b"", *lines[5:]])
    db = tmp_path / "s.duckdb"
    assert _ingest(db, log)["quarantined"] == 2
    file_out = _cli("verify", log, "--json", "--no-progress")
    store_out = _cli("verify", "--db", db, "--json", "--no-progress")
    assert (file_out.exit_code, store_out.exit_code) == (2, 0)
    listed = [orjson.loads(o.stdout)["unreadable_lines"] for o in (file_out, store_out)]
    assert listed[0] == listed[1] and [u["line"] for u in listed[0]] == [6, 7]
    text = _cli("verify", "--db", db, "--no-progress")
    assert text.exit_code == 0 and "2 quarantined line(s) name no game" in text.stderr
    docs = " ".join((DOCS / "events.md").read_text(encoding="utf-8").split())
    assert "a line that names no game" in docs and "`unreadable_lines`" in docs


# --- the store's other readers ---------------------------------------------------------------------
def test_the_views_of_verify_db_hold_the_files_results(tmp_path: Path) -> None:
    """``verify --db`` saves what it reports: ``player_games`` of a game with a gap holds
    the file's results (p1 won 200), not a cut-short game's (everyone -100, unfinished)."""
    log = _write(tmp_path, "gap.jsonl", CASES["gap in seq"]())
    db = tmp_path / "s.duckdb"
    _ingest(db, log)
    assert _cli("verify", "--db", db, "--no-progress").exit_code == 1
    out = _cli("sql", "SELECT player, net, won, finished FROM player_games ORDER BY seat",
               "--db", db, "-f", "json")
    rows = json.loads(out.stdout)
    net = _replay(GAME, log)["record"]["results"]["net"]
    assert [(r["player"], r["net"], r["won"], r["finished"]) for r in rows] == [
        (p, net[p], p == P1, True) for p in (P1, P2, P3)]


def _views(db: Path) -> tuple[list[Any], list[Any]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return (con.execute("SELECT game_id, seq, rule, kind FROM findings ORDER BY ALL").fetchall(),
                con.execute("SELECT game_id, player, seat, net, won, clean, halted, finished "
                            "FROM player_games ORDER BY ALL").fetchall())
    finally:
        con.close()


def test_the_saved_views_are_those_of_the_files(tmp_path: Path) -> None:
    """``findings`` and ``player_games`` after ``verify --db`` equal what ``verify FILES
    --db`` saves for the same files: a game with a gap, a game none of whose lines was
    stored (chained from another genesis: its seq 0 is a chain break), and a game whose
    second half was ingested before its first (it starts, as read, with seq 4)."""
    prev, events = "1" * 64, []  # a valid chain, but from another genesis than 64 zeros
    for e in _renamed("genesis"):
        linked = {**e, "prev_hash": prev}
        linked["hash"] = prev = event_hash(linked)
        events.append(linked)
    lines = _dumps(_renamed("halves"))
    files = [_write(tmp_path, "gap.jsonl", CASES["gap in seq"]()),
             _write(tmp_path, "day2.jsonl", lines[4:]), _write(tmp_path, "day1.jsonl", lines[:4]),
             _write(tmp_path, "genesis.jsonl", _dumps(events))]
    db, fresh = tmp_path / "s.duckdb", tmp_path / "fresh.duckdb"
    _ingest(db, *files)
    assert not [raw for raw in _store_rows(db)[0] if b'"genesis"' in raw]  # all quarantined
    assert _cli("verify", "--db", db, "--no-progress").exit_code == 1
    assert _cli("verify", *files, "--db", fresh, "--no-progress").exit_code == 1
    findings, players = _views(db)
    assert (findings, players) == _views(fresh)
    assert {g for g, *_ in findings} == {GAME, "halves", "genesis"}
    assert {g for g, *_ in players} == {GAME, "genesis"}  # "halves" starts with seq 4


def test_a_store_replayed_elsewhere_gets_the_quarantine_folded_in_too(tmp_path: Path) -> None:
    """The Ray scan replays the stored events on the cluster and adds the quarantine on the
    driver (``read_store_bad_lines`` + ``attach_bad_lines``): the records must be those of
    ``verify --db``, not a cut-short game's."""
    log = _write(tmp_path, "two.jsonl", [*_tampered(), *_dumps(_renamed("g2"))[:13],
                                         *_dumps(_renamed("g2"))[14:]])
    db = tmp_path / "s.duckdb"
    _ingest(db, log)
    _, want = _verify("--db", db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        run = VerifyRun()
        for game in ("g2", GAME):
            rows = con.execute("SELECT raw, prev_hash, hash FROM store.events WHERE game_id = ? "
                               "ORDER BY seq", [game]).fetchall()
            from rummyguard.events.store import event_from_row
            record = replay_events([event_from_row(*r) for r in rows])
            record.state = None
            run.records.append(record)
        read_store_bad_lines(con, run)
        attach_bad_lines(run)
    finally:
        con.close()
    got = {r.game_id: ([(f.seq, f.rule, f.kind, None if f.rule == "LOG-EVENT" else f.message)
                        for f in r.findings], r.results.to_dict(), r.halted) for r in run.records}
    assert got == want
    assert want[GAME][0][0][:2] == (13, "LOG-CHAIN") and want["g2"][0][0][:2] == (14, "LOG-SEQ")


def test_rows_of_an_older_release_without_head_are_placed_by_seq(tmp_path: Path) -> None:
    """Quarantine rows written before ``head`` existed (NULL) are placed as their reason
    says: a gap's at the seq ingest expected (its detail), so a gap and a swap still read
    as in the file; a line that is not a valid event at its own seq, so one read after the
    valid event of its seq reads as if before it (docs/events.md)."""
    for case, same in (("gap in seq", True), ("two lines swapped", True),
                       ("schema-invalid event after the valid seq 13", False),
                       ("schema-invalid event before the valid seq 13", True)):
        log = _write(tmp_path, f"{case}.jsonl", CASES[case]())
        db = tmp_path / f"{case}.duckdb"
        _ingest(db, log)
        con = duckdb.connect(str(db))
        try:
            assert con.execute("SELECT count(*) FROM store.quarantine WHERE head IS NULL"
                               ).fetchall() == [(0,)]
            con.execute("UPDATE store.quarantine SET head = NULL")
        finally:
            con.close()
        assert (_judged(_replay(GAME, "--db", db)) == _judged(_replay(GAME, log))) is same, case
    docs = " ".join((DOCS / "events.md").read_text(encoding="utf-8").split())
    assert "rows of the quarantine written before its `head` column" in docs


def test_a_version_an_older_release_kept_back_is_replayed_by_this_one(tmp_path: Path) -> None:
    """docs/events.md: a line an older release quarantined as ``future_version`` that this
    release reads is replayed as the event it is (and marked), as a replay of the file by
    this release reads it, until the file is ingested again. The older release's row is
    made by hand: the future line of this release's store given the bytes of the plain
    line (the ``v`` an older release did not know)."""
    log = _write(tmp_path, "v.jsonl", CASES["future version"]())
    db = tmp_path / "v.duckdb"
    _ingest(db, log)
    plain = _plain()[13]
    con = duckdb.connect(str(db))
    try:
        assert con.execute("UPDATE store.quarantine SET raw = ?, raw_bytes = ?, raw_sha256 = "
                           "sha256(?) WHERE reason = 'future_version' RETURNING seq",
                           [plain.decode(), plain, plain.decode()]).fetchall() == [(13,)]
    finally:
        con.close()
    as_read_now = _write(tmp_path, "plain.jsonl", _plain())
    body = _replay(GAME, "--db", db)
    assert _judged(body) == _judged(_replay(GAME, as_read_now))
    assert body["record"]["clean"] and body["finished"]
    assert next(r for r in body["timeline"] if r["seq"] == 13)["quarantined"] == "future_version"

