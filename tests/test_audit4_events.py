"""Audit 4 (second pass over EVENTS.md, the log and its documented commands): the corners
an independent checker reaches with complete logs, clean and broken — a game whose log
repeats GameCreated or GameEnded (valid events, so ingest stores them), an event_id
already stored turning up behind a gap, the JSON Schemas producers validate against,
``v`` past the exact integer range, repeated column names or several statements in
``sql``, output files that cannot be written, a ``.gz`` log written by ``simulate``, a
game with an event after its GameEnded (checkpoints), and lines of a game that are not
valid events (an unknown type, a newer version) replayed in their place.

Every test here failed before the fix it names (see the audit report), except those
marked as guards, which pin what already held.

Decisions (ambiguities of EVENTS.md, taken as a careful reader would):

- A log that repeats GameCreated or GameEnded is one game: the ``games`` view, the export
  partition and ``game_ids(variant)`` take the first of each by seq.
- An event_id already stored is a ``conflict_event_id`` wherever the new line lands
  (behind a gap, at a chain-mode change): the id is checked before the seq.
- A checkpoint's leaf is a game's (first) GameEnded hash: the game "from deal to payout";
  events logged after it (a late PlayerLeft) stay in its chain but outside its leaf.
- ``rummyguard sql`` runs one statement: several, or comments only, are one-line errors.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.export import export_parquet
from rummyguard.events.ingest import Sequencer, decode_lines
from rummyguard.events.models import EventError, event_json_schemas, validate_event
from rummyguard.events.store import EventStore

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "sample" / "classic-3p.jsonl"
GOLDEN = DATA / "events" / "golden.jsonl"
EVENTS = [orjson.loads(line) for line in SAMPLE.read_bytes().splitlines()]
GAME = EVENTS[0]["game_id"]


def unchained(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k not in ("hash", "prev_hash")} for e in events]


def run(*args: str | Path) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture
def twice_created(tmp_path: Path) -> EventStore:
    """The sample game, then a second GameCreated (another day, another variant) and a
    second GameEnded at its end: valid events, stored as the log has them."""
    events = unchained(EVENTS)
    ended = next(e for e in events if e["type"] == "GameEnded")
    n = len(events)
    extra = [
        {**events[0], "event_id": "again-created", "seq": n, "ts": "2026-12-05T10:00:00.000Z",
         "payload": {**events[0]["payload"], "variant": "r500"}},
        {**ended, "event_id": "again-ended", "seq": n + 1, "ts": "2026-12-05T10:00:01.000Z"},
    ]
    store = EventStore.open(tmp_path / "s.duckdb")
    summary = store.ingest_lines([orjson.dumps(e) for e in events + extra])
    assert summary.stored == n + 2
    yield store
    store.close()


# --- one game, one row: a repeated GameCreated / GameEnded -----------------------------
def test_games_view_has_one_row_per_game_when_the_log_repeats_created_or_ended(
        twice_created: EventStore) -> None:
    """docs/sql.md: ``games`` is "one row per game". Before: the view joined every
    GameCreated with every GameEnded, so this game had four rows (and the second
    GameCreated's variant). Now: the first of each, by seq."""
    rows = twice_created.con.execute(
        "SELECT game_id, variant, started_at, ended_at, event_count FROM games").fetchall()
    first_end = next(e for e in EVENTS if e["type"] == "GameEnded")["ts"]
    assert len(rows) == 1
    game_id, variant, started, ended, count = rows[0]
    assert (game_id, variant, count) == (GAME, "classic", len(EVENTS) + 2)
    assert started.isoformat(timespec="milliseconds") + "Z" == EVENTS[0]["ts"]
    assert ended.isoformat(timespec="milliseconds") + "Z" == first_end


def test_export_writes_a_game_with_two_game_created_once(twice_created: EventStore,
                                                         tmp_path: Path) -> None:
    """"a partition holds whole games", "a game never split". Before: the game went to
    two partitions (one per GameCreated), every event written twice. Now: the game is
    placed by its first GameCreated, each event once."""
    out = tmp_path / "pq"
    summary = export_parquet(twice_created.con, out)
    assert (summary.files, summary.games, summary.rows) == (1, 1, len(EVENTS) + 2)
    rows = duckdb.sql(
        f"SELECT variant, CAST(date AS VARCHAR), count(*), count(DISTINCT event_id) "
        f"FROM read_parquet('{out}/**/*.parquet', hive_partitioning = true) GROUP BY ALL"
    ).fetchall()
    assert rows == [("classic", EVENTS[0]["ts"][:10], len(EVENTS) + 2, len(EVENTS) + 2)]


def test_game_ids_by_variant_lists_a_game_once_under_its_first_variant(
        twice_created: EventStore) -> None:
    """Before: one id per GameCreated, so the game came twice (and under r500 too)."""
    assert twice_created.game_ids("classic") == [GAME]
    assert twice_created.game_ids("r500") == []
    assert [len(g) for g in twice_created.iter_games(variant="classic")] == [len(EVENTS) + 2]


# --- checkpoints: a finished game is one with a GameEnded, whatever follows it ----------
def test_a_game_with_an_event_after_game_ended_is_checkpointed_at_its_game_ended(
        tmp_path: Path) -> None:
    """EVENTS.md: PlayerLeft / PlayerDisconnected "may come at any moment"; ingest stores
    one logged after GameEnded. Before: such a game was never "finished" (its last event
    is not GameEnded) so never checkpointed, and one checkpointed before the late event
    made every later checkpoint of the store fail as tampering. Now the leaf is the
    game's GameEnded hash (tests/test_checkpoint.py pins the second half)."""
    from rummyguard.events.checkpoint import inclusion_proof, make_checkpoint

    events = unchained(EVENTS)
    ended = next(e for e in events if e["type"] == "GameEnded")
    seats = events[0]["payload"]["seats"]
    late = {**ended, "event_id": "late-left", "seq": len(events), "type": "PlayerLeft",
            "actor": seats[0], "payload": {}, "ts": "2026-11-29T23:59:00.000Z"}
    with EventStore.open(tmp_path / "s.duckdb") as store:
        assert store.ingest_lines([orjson.dumps(e) for e in [*events, late]]).stored == len(
            events) + 1
        checkpoint = make_checkpoint(store.con)
        assert checkpoint.tree_size == 1
        game_ended_hash = store.con.execute(
            "SELECT hash FROM store.events WHERE type = 'GameEnded'").fetchall()[0][0]
        assert inclusion_proof(store.con, GAME).last_event_hash == game_ended_hash


# --- the same event_id with other content is a conflict, wherever it lands ----------------
def _verdicts(store: EventStore, line: bytes) -> tuple[str, str]:
    """The quarantine reason of ``line`` as ingest decides it (lookup of few ids) and as
    a full lookup decides it (the append path); both in a transaction rolled back."""
    out = []
    for lookup_all in (False, True):
        dec = decode_lines([line])
        store.con.execute("BEGIN TRANSACTION")
        try:
            plan = Sequencer().plan(store.con, dec, [line], lookup_all=lookup_all)
        finally:
            store.con.execute("ROLLBACK")
        assert len(plan.quarantined) == 1 and not plan.keep
        out.append(plan.quarantined[0].reason)
    return out[0], out[1]


@pytest.mark.parametrize("where", ["behind a gap of its game", "behind a gap of a new game",
                                   "where the chain mode changes"])
def test_a_stored_event_id_with_other_content_is_a_conflict_wherever_it_lands(
        tmp_path: Path, where: str) -> None:
    """EVENTS.md: "the same event_id with other content ... is rejected as a conflict".
    Before: ingest looked up only the ids of rows at a seq their game already had, so an
    id reused behind a gap (or where the chain mode changes) was quarantined as
    ``sequence_gap`` (``chain_mixed``) while the append path, looking every id up, said
    ``conflict_event_id``. Now both say conflict_event_id."""
    events = unchained(EVENTS)
    with EventStore.open(tmp_path / "s.duckdb") as store:
        store.ingest_lines([orjson.dumps(e) for e in events[:5]])
        if where == "behind a gap of its game":
            reused, line = 0, {**events[8], "event_id": events[0]["event_id"]}
        elif where == "behind a gap of a new game":
            reused, line = 1, {**events[3], "game_id": "other", "event_id": events[1]["event_id"]}
        else:  # a producer-chained line on an unchained game: chain_mixed at the next seq
            reused, line = 2, {**events[5], "event_id": events[2]["event_id"],
                               "prev_hash": "0" * 64, "hash": "1" * 64}
        raw = orjson.dumps(line)
        assert _verdicts(store, raw) == ("conflict_event_id", "conflict_event_id")
        summary = store.ingest_lines([raw])
        assert summary.reasons == {"conflict_event_id": 1} and summary.balanced
        detail = store.con.execute("SELECT detail FROM quarantine").fetchall()[0][0]
        assert f"(game {GAME!r} seq {reused}) with other content" in detail, detail


def test_a_gap_with_a_fresh_event_id_stays_a_gap(tmp_path: Path) -> None:
    """Guard: the new look-up changes only rows whose id is stored."""
    events = unchained(EVENTS)
    with EventStore.open(tmp_path / "s.duckdb") as store:
        store.ingest_lines([orjson.dumps(e) for e in events[:5]])
        raw = orjson.dumps(events[8])
        assert _verdicts(store, raw) == ("sequence_gap", "sequence_gap")


# --- the JSON Schemas state what ingest checks ------------------------------------------
def _schema_ok(event: dict[str, Any]) -> bool:
    jsonschema = pytest.importorskip("jsonschema")
    schema = event_json_schemas()[f"{event['type']}.v{event['v']}"]
    return jsonschema.Draft202012Validator(schema).is_valid(event)


def test_every_golden_event_passes_its_schema() -> None:
    """Guard: the schemas accept every valid event of the catalog."""
    for line in GOLDEN.read_bytes().splitlines():
        event = orjson.loads(line)
        validate_event(copy.deepcopy(event))
        assert _schema_ok(event), event


@pytest.mark.parametrize("change", [
    {"ts": "2026-11-29T18:00:00Z"},            # no milliseconds
    {"ts": "2026-11-29T18:00:00.000+00:00"},   # an offset, not Z
    {"actor": "system"},                        # a player move by the system
    {"payload": {"kind": "run", "cards": ["JK", "5H", "6H"], "as": {"00": "4H"}}},
])
def test_schemas_refuse_what_ingest_quarantines(change: dict[str, Any]) -> None:
    """docs/events.md tells producers to validate against ``rummyguard schema``. Before:
    the schemas said nothing of the ts format, the actor rule or ``as`` keys, so a
    producer passing them still had lines quarantined. Now they state those rules."""
    event = {"event_id": "e1", "game_id": "g1", "seq": 0, "type": "Melded", "v": 1,
             "ts": "2026-11-29T18:00:00.000Z", "actor": "p1",
             "payload": {"kind": "run", "cards": ["JK", "5H", "6H"], "as": {"0": "4H"}}}
    assert _schema_ok(event)
    bad = {**event, **change}
    with pytest.raises(EventError):
        validate_event(copy.deepcopy(bad))
    assert not _schema_ok(bad)


def test_a_system_event_by_a_player_fails_its_schema() -> None:
    event = orjson.loads(SAMPLE.read_bytes().splitlines()[0])
    event = {k: v for k, v in event.items() if k not in ("hash", "prev_hash")}
    assert _schema_ok(event)
    assert not _schema_ok({**event, "actor": "p1"})


# --- v past the exact integer range -------------------------------------------------------
def test_a_version_past_2_53_is_invalid_for_pydantic_and_ingest_alike() -> None:
    """Before: the authority called ``"v": 2**70`` a future_version while ingest (orjson
    reads that number as a float) called it invalid. Now both: invalid, as every other
    integer of an event beyond ±(2**53 - 1)."""
    event = {"event_id": "e1", "game_id": "g1", "seq": 0, "type": "PlayerLeft", "v": 2**70,
             "ts": "2026-11-29T18:00:00.000Z", "actor": "p1", "payload": {}}
    with pytest.raises(EventError) as info:
        validate_event(event)
    assert info.value.reason == "invalid"
    assert decode_lines([json.dumps(event).encode()]).errors[0][1] == "invalid"
    with pytest.raises(EventError) as info:  # guard: a plain newer version stays one
        validate_event({**event, "v": 2})
    assert info.value.reason == "future_version"


# --- sql -f json ---------------------------------------------------------------------------
def test_sql_json_keeps_every_column_of_a_repeated_name(tmp_path: Path) -> None:
    """``SELECT g.*, e.*`` repeats ``game_id``: before, the JSON object kept only the last
    of the equal keys and the first column's values were lost. Now repeated names get
    ``_1`` as DuckDB's own ``.df()`` names them."""
    db = tmp_path / "s.duckdb"
    with EventStore.open(db) as store:
        store.ingest_files([SAMPLE])
    out = run("sql", "-f", "json", "--db", db,
              "SELECT 1 AS a, 2 AS a, 3 AS a_1, g.game_id, e.game_id FROM games g "
              "JOIN events e USING (game_id) WHERE e.seq = 0")
    assert out.exit_code == 0, out.stderr
    assert orjson.loads(out.stdout) == [
        {"a": 1, "a_1": 2, "a_1_1": 3, "game_id": GAME, "game_id_1": GAME}]


@pytest.mark.parametrize(("query", "needle"), [
    ("SELECT 1; SELECT 2", "one statement at a time"),
    ("SELECT count(*) FROM events; DROP VIEW games", "one statement at a time"),
    ("-- only a comment", "empty query"),
])
def test_sql_is_one_statement(tmp_path: Path, query: str, needle: str) -> None:
    """docs/sql.md: "runs one query". Before: several statements all ran and only the
    last one's rows showed (exit 0); a comment alone printed "0 row(s)". Now each is
    one line, exit 2."""
    db = tmp_path / "s.duckdb"
    with EventStore.open(db) as store:
        store.ingest_files([SAMPLE])
    out = run("sql", "--db", db, "--", query)
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.exit_code == 2 and len(lines) == 1 and needle in lines[0], out.stderr
    ok = run("sql", "-f", "json", "--db", db, "SELECT 1 AS x;  -- a trailing comment")
    assert ok.exit_code == 0 and orjson.loads(ok.stdout) == [{"x": 1}]


@pytest.mark.parametrize("command", [
    ["simulate", "--games", "1", "--seed", "1", "--no-progress", "--out", "{missing}/w.jsonl"],
    ["simulate", "--games", "1", "--seed", "1", "--no-progress", "--out", "{tmp}/w.jsonl",
     "--labels", "{missing}/labels.json"],
    ["simulate", "--games", "1", "--seed", "1", "--no-progress", "--out", "{tmp}"],
    ["replay", "example-classic", str(SAMPLE), "--html", "{missing}/page.html"],
    ["replay", "example-classic", str(SAMPLE), "--html", "{tmp}"],
])
def test_an_output_file_that_cannot_be_written_is_one_line(tmp_path: Path,
                                                           command: list[str]) -> None:
    """README: errors a user can cause are one line, exit 2, never a traceback. Before:
    a traceback (for --labels only after the whole simulation had run)."""
    args = [a.format(tmp=tmp_path, missing=tmp_path / "no" / "such") for a in command]
    out = run(*args)
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.exit_code == 2 and len(lines) == 1, (out.exit_code, out.stderr[-600:])
    assert "Traceback" not in out.stderr and lines[0].startswith("error:")
    assert not (tmp_path / "w.jsonl").exists() or "--labels" not in args


# --- simulate --out FILE.gz ----------------------------------------------------------------
def test_simulate_writes_gzip_to_a_gz_name_and_the_same_bytes_again(tmp_path: Path) -> None:
    """Before: ``--out log.jsonl.gz`` wrote plain JSON Lines under a gzip name (gunzip
    failed on it). Now it is gzip, with no time in the header: same seed, same bytes."""
    a, b = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    for path in (a, b):
        out = run("simulate", "--games", "2", "--seed", "5", "--variants", "classic",
                  "--workers", "1", "--no-progress", "--out", path)
        assert out.exit_code == 0, out.stdout + out.stderr
    assert a.read_bytes()[:2] == b"\x1f\x8b" and a.read_bytes() == b.read_bytes()
    lines = gzip.decompress(a.read_bytes()).splitlines()
    assert lines and all(orjson.loads(line)["type"] for line in lines)
    db = tmp_path / "s.duckdb"
    out = run("ingest", a, "--db", db, "--json", "--no-progress")
    assert out.exit_code == 0 and orjson.loads(out.stdout)["stored"] == len(lines)


# --- a line of a game that is not a valid event, replayed in its place --------------------
# These pin the change of the audit-4 report to replay/engine.py, replay/verify.py and
# replay/bundle.py: such a line takes its place in the game (seq and chain links checked),
# so it is one LOG-EVENT finding, not a false gap and chain break after it.


def _with_extra(extra: dict[str, Any], *, chained: bool) -> list[dict[str, Any]]:
    """The sample game with ``extra`` inserted at seq 6 (the rest renumbered), chained by
    the producer over the whole log if ``chained``: the log itself is intact."""
    from rummyguard.events.hashing import chain

    events = unchained(EVENTS)
    events.insert(6, {**events[5], "event_id": "extra", "actor": "p1", **extra})
    events = [{**e, "seq": i} for i, e in enumerate(events)]
    return chain(events) if chained else events


_CHAT = {"type": "ChatSent", "v": 1, "payload": {"text": "gl hf"}}       # not in the catalog
_FUTURE = {"type": "Discarded", "v": 3, "payload": {"card": "KD", "why": "x"}}  # newer than v2


def _file_findings(tmp_path: Path, events: list[dict[str, Any]]) -> tuple[list, bool]:
    from rummyguard.replay.verify import verify_files

    path = tmp_path / "log.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events))
    run = verify_files([path])
    (record,) = run.records
    return [(f.seq, f.rule, f.kind) for f in record.findings], record.halted


@pytest.mark.parametrize("chained", [True, False])
def test_an_unknown_type_in_a_file_is_one_log_event_and_no_gap(tmp_path: Path,
                                                                chained: bool) -> None:
    """RULES.md §5: "an event the variant does not know" is an integrity finding. Today
    `verify FILE` also reports seq 6 as missing at seq 7 (LOG-SEQ) and, in a chained
    log, seq 7's prev_hash as broken (LOG-CHAIN): the line is there and the chain
    holds. Expected: one LOG-EVENT at 6, the replay going on."""
    findings, halted = _file_findings(tmp_path, _with_extra(_CHAT, chained=chained))
    assert (findings, halted) == ([(6, "LOG-EVENT", "integrity")], False)


@pytest.mark.parametrize("chained", [True, False])
def test_a_future_version_in_a_file_halts_at_its_seq(tmp_path: Path, chained: bool) -> None:
    """A version newer than ours is "never guessed at": one LOG-EVENT at its seq and the
    replay halts there (the state cannot follow a move it cannot read), with no LOG-SEQ
    or LOG-CHAIN after it."""
    findings, halted = _file_findings(tmp_path, _with_extra(_FUTURE, chained=chained))
    assert (findings, halted) == ([(6, "LOG-EVENT", "integrity")], True)


@pytest.mark.parametrize(("extra", "halted"), [(_CHAT, False), (_FUTURE, True)])
def test_replay_of_a_log_with_an_unknown_or_future_event_reports_it(
        extra: dict[str, Any], halted: bool) -> None:
    """``replay(events)`` fed the parsed lines of such a log: today a KeyError for the
    unknown type, and a newer version read silently as the current one."""
    from rummyguard.replay.engine import replay

    record = replay(_with_extra(extra, chained=True))
    assert [(f.seq, f.rule, f.kind) for f in record.findings] == [(6, "LOG-EVENT", "integrity")]
    assert record.halted is halted


def test_a_dispute_bundle_of_a_game_with_an_event_after_game_ended(tmp_path: Path) -> None:
    """The checkpoint's leaf is the game's GameEnded (events/checkpoint.py, audit 4); the
    bundle (replay/bundle.py, the lead's) still takes every stored event and calls the
    game unfinished when its last one is a late PlayerLeft. Proposed: the bundle holds
    the game up to its GameEnded."""
    from rummyguard.events.checkpoint import make_checkpoint
    from rummyguard.replay.bundle import build_bundle, check_bundle

    events = unchained(EVENTS)
    late = {**events[-1], "event_id": "late-left", "seq": len(events), "type": "PlayerLeft",
            "actor": events[0]["payload"]["seats"][0], "payload": {},
            "ts": "2026-11-29T23:59:00.000Z"}
    with EventStore.open(tmp_path / "s.duckdb") as store:
        store.ingest_lines([orjson.dumps(e) for e in [*events, late]])
        make_checkpoint(store.con)
        assert check_bundle(build_bundle(store, GAME)).ok
