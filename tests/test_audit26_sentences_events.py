"""Audit 26: spec/EVENTS.md sentence by sentence against ingest, the store and the readers.

Every normative statement of EVENTS.md (and RULES.md §5 on the log) is listed below with
the test that breaks exactly it and expects the spec's outcome. ``NEW:`` marks a test of
this file (the statement had none, or only its typical case was tested); ``XFAIL:`` marks
a defect found here (a strict xfail with the engine bug it shows; fix proposed in the
audit report). Test files: a4 = test_audit4_events, a8 = test_audit8_log, a10 =
test_audit10_store, a14 = test_audit14_versions, ae = test_audit_events, ei =
test_events_ingest, es = test_events_store, m = test_models, h = test_hashing, vs =
test_verify_stream, pq = test_parquet_input, a23/a24 = the rule-sentence audits.

Files
  F1  JSON Lines, one event object per line -> m test_bad_input_gets_its_reason (array,
      string: not_object), ae test_crlf_gzip_and_a_last_line_without_newline
  F2  UTF-8 -> m test_bad_input_gets_its_reason ("not UTF-8": not_json), ae test_bom_*
  F3  any order across games -> ei test_games_interleave_in_any_order, vs
      test_interleaved_games_and_bad_lines; NEW: test_two_games_interleaved_across_batches
  F4  in seq order within a game -> ei test_tamper_swap_two_events, a10
      test_a_gap_filled_by_a_later_file_of_the_same_command; NEW:
      test_a_game_split_across_files_given_in_reverse_order_is_broken_for_every_reader
  F5  other inputs with the same fields (Parquet) -> pq (all), a14
      test_v1_parquet_input_is_stored_as_the_same_jsonl_is; gzip -> ei test_gzip_input

The envelope
  E1  event_id string 1-64 chars -> m ("oversize event_id"); NEW (boundaries, code points,
      both validators): test_ids_at_their_length_bounds
  E2  event_id globally unique -> a8 (all), a4
      test_a_stored_event_id_with_other_content_is_a_conflict_wherever_it_lands
  E3  event_id is the idempotency key -> ei test_duplicates_conflicts_and_gaps,
      test_reingest_changes_nothing; XFAIL (file readers):
      test_the_same_event_again_is_a_no_op_for_every_reader
  E4  game_id string 1-64 chars -> NEW: test_ids_at_their_length_bounds
  E5  seq int >= 0 -> m (seq as string / boolean / float), vs
      test_a_bad_line_with_a_negative_seq_is_still_reported; NEW: test_seq_bounds
  E6  seq contiguous from 0 -> ei test_tamper_drop_one (sequence_gap), a10; NEW: a game
      starting at seq 1, every reader: test_a_game_that_starts_at_seq_1_is_broken_everywhere
  E7  type one of the catalog -> m (unknown_type), a4 test_an_unknown_type_in_a_file_*
  E8  v int >= 1 -> m ("version 0", no_silent_coercion "v": "1"), a4
      test_a_version_past_2_53_is_invalid_for_pydantic_and_ingest_alike; NEW (every type):
      test_every_type_past_its_version_is_future_and_v0_is_invalid
  E9  ts RFC 3339 UTC with milliseconds, e.g. 2026-11-29T18:00:00.000Z -> m (no T / no
      millis, impossible date, not UTC); NEW (the boundaries): test_ts_format_boundaries,
      test_ts_extreme_years_are_stored_and_replayed
  E10 actor: a player id, or system for platform decisions and claims -> m (bad_actor both
      ways, empty actor), a4 test_a_system_event_by_a_player_fails_its_schema
  E11 payload object, the type's fields -> m test_fast_path_agrees_with_the_models_on_
      mutations (each field removed / mistyped), m ("extra payload field")
  E12 prev_hash optional, hex SHA-256 of the previous event of the game -> ei
      test_tamper_rechained_insertion_breaks_the_link, es test_store_*; lower-case only
      (decision, docs/events.md) -> NEW: test_hash_fields_are_lower_case_hex
  E13 prev_hash is 64 zeros for seq 0 -> h test_chain_links_and_verifies (the builder);
      NEW (every reader): test_a_first_prev_hash_that_is_not_64_zeros_is_a_chain_break
  E14 hash optional, hex SHA-256 of this event -> ei test_tamper_edit_a_hash, es
      test_store_edit_a_producer_hash
  E15 hash = sha256(JCS(event without "hash")) -> h test_golden_hashes_are_pinned,
      test_hash_ignores_only_the_hash_key
  E16 JCS = RFC 8785 (sorted keys, UTF-16 order, no whitespace, UTF-8) -> h
      test_rfc8785_*; NEW (end to end, non-BMP keys): test_jcs_key_order_is_utf16_for_
      every_reader
  E17 all numbers are integers -> h test_floats_and_huge_integers_are_refused, m ("seq
      as a float"), ae test_rule_integers_beyond_2_53_are_invalid
  E18 a producer may leave both hash fields out; the store chains at ingest -> es
      test_append_chains_unchained_events_and_checks_expected_seq, ei
      test_golden_file_is_stored_whole_and_byte_exact; null = absent (decision, models.py)
      -> NEW: test_null_hash_fields_read_as_absent_by_every_reader
  E19 ... and says so per game (chained by producer vs at ingest) -> a10
      test_games_view_equals_an_independent_recomputation (chained_by); NEW (both in one
      test): test_jcs_key_order_is_utf16_for_every_reader, test_null_hash_fields_*
  E20 same event_id + same content again = no-op -> ei test_duplicates_conflicts_and_gaps;
      same content written otherwise (key order) -> NEW + XFAIL for the file readers:
      test_the_same_event_again_is_a_no_op_for_every_reader
  E21 same event_id + other content = conflict -> a4 test_a_stored_event_id_with_other_*,
      a14 test_a_v1_event_sent_again_as_v2_under_its_id_is_a_conflict; NEW (a guard of
      the fix, every reader): test_an_event_id_again_with_other_content_stays_a_finding
  E22 second event at a taken (game_id, seq) = conflict -> ei
      test_duplicates_conflicts_and_gaps (conflict_seq), a4 test_a_gap_with_a_fresh_*
  E23 a line that cannot be read -> quarantined -> m (not_json classes), ae
      test_duplicate_keys_are_quarantined_as_not_json
  E24 unknown type -> quarantined -> m, a4 test_an_unknown_type_in_a_file_is_one_*
  E25 v newer than known -> quarantined -> m ("Discarded v3"), a4
      test_a_future_version_in_a_file_halts_at_its_seq; NEW (every type): see E8
  E26 quarantined whole (raw text + reason), never dropped -> a10
      test_quarantine_rows_are_byte_exact_with_file_and_line, test_ingest_accounting
  E27 the stored original is never rewritten; upcasting when reading -> ei
      test_golden_file_is_stored_whole_and_byte_exact, a14
      test_events_view_is_the_exact_upcast_and_the_hash_covers_the_original

Cards
  K1  2..9 T J Q K A + C D H S, joker JK -> test_cards.py, m ("bad card code",
      "lower-case card code")
  K2  a list of cards is a JSON array -> m mutations (cards as "7", {}, ...)

Catalog
  C1  player events: actor = the player -> m (bad_actor "player event by system")
  C2  PlayerConnected/Disconnected/PlayerLeft/FreshPressed at any moment, the others in
      turn -> a23 (CL-LEAVE, CL-FRESH), a24 (sessions), C-TURN data sets
  C3  each type, version and payload (required fields) -> m test_golden_covers_every_type_
      and_version (26 types/versions), test_fast_path_agrees_with_the_models_on_mutations
  C4  optional fields (Melded/meld ``as``, LaidOff ``end``, RummyCalled ``end?``) -> golden
      (absent and present); present as null -> NEW: test_optional_fields_present_as_null_
      read_as_absent
  C5  AutoPlayed.drew a card or null -> m golden (AutoPlayed with null)
  C6  Drew.cards "1 for stock" -> a23 CL-DRAW (two cards from the stock)
  C7  variants column (an event the variant does not know) -> test_log_oracle (VARIANTS),
      a24
  C8  system events: actor = system -> m (bad_actor "system event by a player")
  C9  GameCreated.rules: missing keys take the defaults -> test_audit11_config
  C10 ChipsTransferred from/to: a player id or a pool (pot, kitty, poker, house,
      pay:<card>) -> NEW: test_a_transfer_party_outside_the_pools_is_a_discrepancy
  C11 every claim is recomputed (C-CLAIM) -> test_engine_claims, test_claims_regroup
  C12 a game's transfers are one multiset of (from, to, amount); reason is free text ->
      test_claims_regroup; NEW (order and reason): test_transfer_order_and_reason_text_
      are_not_claims
  C13 a claim that is not logged is not a finding -> test_engine_claims

Older versions
  O1  Drew v1 / Discarded v1 accepted -> ae test_a_legacy_event_replays_clean_*, a14
  O2  from deck (= stock) / pile (= discard, top card only) -> ae
      test_legacy_joker_and_naturals_are_still_read_and_upcast_exactly, a14
  O3  rank 2-10 J Q K A or joker (suit then absent); suit clubs/diamonds/hearts/spades ->
      ae test_legacy_card_without_its_suit_or_joker_with_one_is_invalid_not_a_crash; the
      v2 words and codes in a v1 event -> NEW: test_v1_cards_in_another_notation_are_
      invalid, test_v1_drew_with_v2_fields_is_invalid
  O4  upcasting v1 -> v2 is exact and loses nothing -> a14
      test_the_v1_writer_is_the_inverse_of_the_upcast, test_every_valid_v1_payload_*

RULES.md §5 (the log-level findings, LOG-* named in replay/findings.py)
  L1  integrity: hash chain (LOG-CHAIN) -> ei/es tamper tests, a14, test_log_oracle
  L2  sequence gap (LOG-SEQ) -> test_log_oracle, a4
  L3  duplicate (LOG-SEQ / LOG-EVENT) -> a8, test_audit4_disputes
      test_a_repeated_seq_finding_sits_on_the_skipped_copy
  L4  an event the variant does not know (LOG-EVENT) -> a4, test_log_oracle
  L5  a card that is not where the event says (C-HOLD) -> C-HOLD data sets
  L6  the same log always gives the same result -> test_audit20_scale, test_audit22_facts

57 statements (F5 + E27 + K2 + C13 + O4 + L6); 21 had no test of their own, or only of
their typical case (F3 F4 E1 E3 E4 E5 E6 E8 E9 E12 E13 E16 E18 E19 E20 E21 E25 C4 C10
C12 O3): the NEW tests below. The engine passes them but for one defect: the file
readers (``verify FILES``, ``replay GAME FILES``) report the same event read again (a
retry, or the same line in two files) as a LOG-SEQ integrity finding, where EVENTS.md
makes it a no-op and ingest (then ``verify --db``) calls the game clean: two verdicts on
one input. Decision (L3 against E20): RULES.md §5's "duplicate" is a duplicate that is
not the same event (a second event at a taken seq, an id reused with other content:
still findings everywhere, test_an_event_id_again_with_other_content_stays_a_finding);
the same event again is the idempotent retry EVENTS.md names the event_id for.

Decisions where the spec is silent are in each test's docstring.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest
import rfc8785
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.fastpath import fast_valid
from rummyguard.events.hashing import chain
from rummyguard.events.ingest import decode_lines
from rummyguard.events.models import CURRENT_VERSION, EventError, validate_event

TESTS = Path(__file__).parent
SAMPLE = TESTS / "data" / "sample" / "classic-3p.jsonl"
LINES = SAMPLE.read_bytes().splitlines()
EVENTS: list[dict[str, Any]] = [orjson.loads(line) for line in LINES]
GAME = EVENTS[0]["game_id"]
GENESIS = "0" * 64
Event = dict[str, Any]


# --- helpers ----------------------------------------------------------------------------------
def _cli(*args: str) -> Any:
    out = CliRunner().invoke(app, list(args))
    assert "Traceback" not in (out.stderr or ""), out.stderr
    assert out.exception is None or isinstance(out.exception, SystemExit), repr(out.exception)
    return out


def _sample() -> list[Event]:
    return copy.deepcopy(EVENTS)


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def _dumps(events: list[Event]) -> list[bytes]:
    return [orjson.dumps(e) for e in events]


def _findings(game: dict[str, Any]) -> list[tuple[int, str]]:
    return [(f["seq"], f["rule"]) for f in game["findings"]]


class Readers:
    """What every reader says about the same files: ``verify FILES``, ``replay GAME FILES``,
    ``ingest`` (then the quarantine), ``verify-log`` and ``verify --db``."""

    def __init__(self, tmp: Path, files: list[list[bytes]], *ingest_args: str,
                 game: str = GAME) -> None:
        tmp.mkdir(parents=True, exist_ok=True)
        self.paths = [str(_write(tmp / f"f{i}.jsonl", lines)) for i, lines in enumerate(files)]
        self.db = str(tmp / "log.duckdb")
        out = _cli("verify", *self.paths, "--json", "--no-progress")
        self.files_exit = out.exit_code
        self.files = {g["game_id"]: _findings(g) for g in orjson.loads(out.stdout)["games"]}
        out = _cli("replay", game, *self.paths, "--json")
        self.replay_files = _findings(orjson.loads(out.stdout)["record"])
        out = _cli("ingest", "--db", self.db, "--json", "--no-progress", *ingest_args,
                   *self.paths)
        self.ingest_exit = out.exit_code
        assert out.stdout.strip(), (out.exit_code, out.stderr, out.output)
        self.summary = orjson.loads(out.stdout)
        con = duckdb.connect(self.db, read_only=True)
        try:
            self.quarantine = con.execute(
                "SELECT seq, reason FROM store.quarantine ORDER BY source, line_no").fetchall()
            self.chained_by = dict(con.execute(
                "SELECT game_id, chained_by FROM store.games_chain").fetchall())
            self.stored = con.execute("SELECT count(*) FROM store.events").fetchall()[0][0]
        finally:
            con.close()
        out = _cli("verify-log", "--db", self.db, "--json", "--no-progress")
        self.log_exit = out.exit_code
        self.log_problems = orjson.loads(out.stdout)["problems"]
        out = _cli("verify", "--db", self.db, "--json", "--no-progress")
        self.db_exit = out.exit_code
        self.db_findings = {g["game_id"]: _findings(g) for g in orjson.loads(out.stdout)["games"]}
        out = _cli("replay", game, "--db", self.db, "--json")
        #: None: the store holds no event of the game (every line quarantined), which
        #: ``replay GAME`` refuses with one line naming the first quarantined one
        self.replay_db: list[tuple[int, str]] | None = None
        if out.exit_code == 2:
            assert "has no valid event" in out.stderr, out.stderr
        else:
            self.replay_db = _findings(orjson.loads(out.stdout)["record"])

    @property
    def balanced(self) -> bool:
        s = self.summary
        return (s["read"] == s["stored"] + s["duplicates"] + s["quarantined"]
                and s["stored"] == self.stored and s["quarantined"] == len(self.quarantine))


def _verdicts(obj: Any) -> tuple[str | None, str | None, bool]:
    """(pydantic's reason, ingest's reason, the fast path's accept) for one object."""
    try:
        validate_event(copy.deepcopy(obj))
        authority = None
    except EventError as exc:
        authority = exc.reason
    dec = decode_lines([json.dumps(obj, ensure_ascii=False).encode()])
    return authority, (dec.errors[0][1] if dec.errors else None), fast_valid(copy.deepcopy(obj))


def _same_verdict(obj: Any) -> str | None:
    authority, ingest, fast = _verdicts(obj)
    assert ingest == authority, (authority, ingest)
    assert not fast or authority is None
    return authority


def _jcs_chain(events: list[Event], genesis: str = GENESIS) -> list[Event]:
    """The chain as EVENTS.md defines it, with the reference RFC 8785 implementation."""
    prev, out = genesis, []
    for e in events:
        linked = {k: v for k, v in e.items() if k not in ("hash", "prev_hash")}
        linked["prev_hash"] = prev
        linked["hash"] = prev = hashlib.sha256(rfc8785.dumps(linked)).hexdigest()
        out.append(linked)
    return out


# --- E3/E20: the same event again is a no-op (the defect) -------------------------------------
def _reordered(event: Event) -> bytes:
    """The same event written otherwise: keys in reverse order, spaces after separators."""
    return json.dumps(dict(reversed(list(event.items()))), separators=(", ", ": ")).encode()


_AGAIN = {
    # the same line at the end of the first file and the start of the second (two exports
    # that overlap by one event)
    "same line in two files": lambda: [LINES[:12], LINES[11:]],
    # a producer's retry inside one file, written with other key order and whitespace
    "same content, other bytes": lambda: [[*LINES[:8], _reordered(EVENTS[7]), *LINES[8:]]],
    # a producer-chained log whose retry repeats the hash fields too
    "chained, in two files": lambda: [
        _dumps(_jcs_chain(EVENTS))[:20], _dumps(_jcs_chain(EVENTS))[19:]],
}


@pytest.mark.parametrize("case", list(_AGAIN))
def test_the_same_event_again_is_a_no_op_at_ingest_and_a_finding_in_a_file(
    tmp_path: Path, case: str
) -> None:
    """EVENTS.md, under "Ingest rules": "the same ``event_id`` with the same content again
    is a no-op"; the event_id is "the idempotency key". Ingest counts the copy a duplicate
    and stores nothing for it, so the stored log has no duplicate and ``verify --db`` calls
    the game clean.

    Decision (lead, ninth session): a log read straight from files is judged as the log it
    is. RULES.md §5 lists "duplicate" among the integrity findings, and the no-op is a rule
    of ingest (the store's idempotency), so ``verify FILES`` / ``replay GAME FILES`` report
    the copy (LOG-SEQ, integrity, at its seq; the copy itself is skipped and the replay
    goes on). A support agent then sees that the files overlap or hold a retry; ingesting
    them is the way to merge them. (The audit proposed the no-op for the file readers too;
    a checker that builds a "duplicate" log by repeating a line would then see it clean.)
    """
    r = Readers(tmp_path, _AGAIN[case]())
    assert r.summary["duplicates"] == 1 and r.summary["quarantined"] == 0 and r.balanced
    assert r.ingest_exit == 0 and r.log_exit == 0 and r.log_problems == []
    assert r.db_findings == {GAME: []} and r.replay_db == []
    copy_seq = {"same line in two files": 11, "same content, other bytes": 7,
                "chained, in two files": 19}[case]
    assert r.files == {GAME: [(copy_seq, "LOG-SEQ")]}, r.files
    assert r.replay_files == [(copy_seq, "LOG-SEQ")]
    assert r.files_exit == 1


def test_the_finding_for_a_repeat_says_it_is_the_same_event() -> None:
    """The LOG-SEQ of a copy names what happened (the same event_id again), so a support
    agent can tell overlapping exports or a retry from a reordered log."""
    from rummyguard.replay.engine import replay

    again = replay([*EVENTS[:8], EVENTS[7], *EVENTS[8:]]).findings
    assert [(f.seq, f.rule) for f in again] == [(7, "LOG-SEQ")]
    assert "the same event_id again" in again[0].message
    moved = copy.deepcopy(EVENTS[3])
    moved["event_id"] = "another-id"
    reordered = replay([*EVENTS[:8], moved, *EVENTS[8:]]).findings
    assert [(f.seq, f.rule) for f in reordered] == [(3, "LOG-SEQ")]
    assert "repeated or out of order" in reordered[0].message


def test_an_event_id_again_with_other_content_stays_a_finding(tmp_path: Path) -> None:
    """EVENTS.md: "the same ``event_id`` with other content ... is rejected as a conflict".
    The guard of the no-op above: a copy of seq 7 whose card differs (same event_id, same
    seq) is a conflict at ingest (quarantined, so ``verify --db`` reports LOG-EVENT at 7)
    and a finding at 7 from the files (LOG-SEQ, the copy skipped): never read as a retry."""
    other = copy.deepcopy(EVENTS[7])
    other["payload"]["card"] = "AS" if other["payload"]["card"] != "AS" else "KS"
    r = Readers(tmp_path, [[*LINES[:8], orjson.dumps(other), *LINES[8:]]])
    assert r.quarantine == [(7, "conflict_event_id")] and r.balanced
    assert r.summary["duplicates"] == 0 and r.ingest_exit == 1
    # audit 35: the store folds the quarantined copy in where ingest read it, so it says
    # what the files say (it said LOG-EVENT at 7)
    assert r.db_findings == r.files == {GAME: [(7, "LOG-SEQ")]}
    assert r.replay_files == r.replay_db == [(7, "LOG-SEQ")]


# --- E1/E4: ids of 1-64 chars -----------------------------------------------------------------
@pytest.mark.parametrize(("value", "want"), [
    ("x" * 64, None), ("\U0001F600" * 64, None), ("\u00e9" * 64, None), ("a", None),
    ("x" * 65, "invalid"), ("\U0001F600" * 65, "invalid"), ("", "invalid"),
])
@pytest.mark.parametrize("field", ["event_id", "game_id"])
def test_ids_at_their_length_bounds(field: str, value: str, want: str | None) -> None:
    """EVENTS.md: ``event_id`` and ``game_id`` are "string, 1-64 chars". Decision (models.py):
    chars are Unicode code points, so 64 emoji (256 UTF-8 bytes, 128 UTF-16 units) are
    still an id and 65 are not, on the compiled fast path and pydantic alike."""
    assert _same_verdict({**EVENTS[3], field: value}) == want


def test_a_game_with_64_char_non_ascii_ids_goes_through_every_reader(tmp_path: Path) -> None:
    """The boundary id end to end: stored, chained at ingest, replayed clean everywhere."""
    gid = "\U0001F600" * 60 + "game"
    prefix = "\u00e9" * 58
    events = _sample()
    for e in events:
        e["game_id"] = gid
        e["event_id"] = f"{prefix}{e['seq']:06d}"
    r = Readers(tmp_path, [_dumps(events)], game=gid)
    assert r.summary["stored"] == len(events) and r.balanced
    assert r.files == r.db_findings == {gid: []} and r.replay_files == r.replay_db == []
    assert r.log_exit == 0 and r.chained_by == {gid: "ingest"}


# --- E5/E6: seq ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("seq", "want"), [(0, None), (10_000_000, None), (-1, "invalid"),
                                           (10_000_001, "invalid")])
def test_seq_bounds(seq: int, want: str | None) -> None:
    """EVENTS.md: ``seq`` is "int >= 0". Decision (models.py): the project bounds it at
    10,000,000 (far above any game; the store's column is a 32-bit integer)."""
    assert _same_verdict({**EVENTS[3], "seq": seq}) == want


def test_a_game_that_starts_at_seq_1_is_broken_everywhere(tmp_path: Path) -> None:
    """EVENTS.md: ``seq`` is "contiguous from 0". A game whose first event is seq 1 is a
    gap for every reader: ingest quarantines the whole game (sequence_gap, nothing lost),
    ``verify --db`` reports each line, the files a LOG-SEQ gap at seq 1."""
    events = _sample()
    for e in events:
        e["seq"] += 1
    r = Readers(tmp_path, [_dumps(events)])
    assert r.stored == 0 and r.balanced
    assert {reason for _, reason in r.quarantine} == {"sequence_gap"}
    # audit 35: the store folds the quarantined lines in where ingest read them, so it says
    # what the files say (it said LOG-EVENT for each line)
    assert r.files[GAME][0] == (1, "LOG-SEQ") and r.replay_files[0] == (1, "LOG-SEQ")
    assert r.db_findings == r.files and r.replay_db == r.replay_files
    assert r.files_exit == r.db_exit == r.ingest_exit == 1
    # (audit 35: nothing stored, but `replay --db` replays the quarantined lines as the
    # file's replay does; it refused, naming the first quarantined line)


# --- E8/E25: versions of every type --------------------------------------------------------------
def _golden() -> dict[str, Event]:
    golden = [orjson.loads(line)
              for line in (TESTS / "data" / "events" / "golden.jsonl").read_bytes().splitlines()]
    return {e["type"]: e for e in golden if e["v"] == CURRENT_VERSION[e["type"]]}


@pytest.mark.parametrize("type_name", sorted(CURRENT_VERSION))
def test_every_type_past_its_version_is_future_and_v0_is_invalid(type_name: str) -> None:
    """EVENTS.md: "a ``v`` newer than the project knows is quarantined" (future_version,
    for every type, not only the one of the fixture), and ``v`` is "int >= 1"."""
    event = _golden()[type_name]
    assert _same_verdict(event) is None
    assert _same_verdict({**event, "v": CURRENT_VERSION[type_name] + 1}) == "future_version"
    assert _same_verdict({**event, "v": 0}) == "invalid"


# --- E9: ts ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("ts", "want"), [
    ("2024-02-29T23:59:59.999Z", None),      # a leap day
    ("1969-12-31T23:59:59.999Z", None),      # before the epoch
    ("0001-01-01T00:00:00.000Z", None),
    ("9999-12-31T23:59:59.999Z", None),
    ("2026-02-29T00:00:00.000Z", "invalid"),  # not a leap year
    ("0000-01-01T00:00:00.000Z", "invalid"),  # no year 0 in RFC 3339's calendar
    ("2026-11-29T24:00:00.000Z", "invalid"),
    ("2026-11-29T23:59:60.000Z", "invalid"),  # leap second
    ("2026-11-29t18:00:00.000Z", "invalid"),
    ("2026-11-29T18:00:00.000z", "invalid"),
    ("2026-11-29 18:00:00.000Z", "invalid"),
    ("2026-11-29T18:00:00,000Z", "invalid"),
    ("2026-11-29T18:00:00.00Z", "invalid"),
    ("2026-11-29T18:00:00.0000Z", "invalid"),
    ("2026-11-29T18:00:00.000+00:00", "invalid"),
    ("2026-11-29T18:00:00.000Z\n", "invalid"),
    ("\uff12\uff10\uff12\uff16-11-29T18:00:00.000Z", "invalid"),  # full-width digits
    ("2026-11-29T18:00:0\u0660.000Z", "invalid"),                # an Arabic-Indic zero
])
def test_ts_format_boundaries(ts: str, want: str | None) -> None:
    """EVENTS.md: ``ts`` is "RFC 3339 UTC with milliseconds, e.g.
    ``2026-11-29T18:00:00.000Z``". Decision (models.py): exactly that shape, upper-case
    ``T`` and ``Z``, three digits of milliseconds, ASCII digits, a real date and time (no
    leap second, no hour 24); the two validators agree on every boundary."""
    assert _same_verdict({**EVENTS[3], "ts": ts}) == want


def test_ts_extreme_years_are_stored_and_replayed(tmp_path: Path) -> None:
    """The valid extremes are stored (DuckDB TIMESTAMP) and replayed by every reader."""
    events = _sample()
    for e in events:
        e["ts"] = f"0001-01-01T00:00:{e['seq']:02d}.000Z"
    r = Readers(tmp_path, [_dumps(events)])
    assert r.summary["stored"] == len(events) and r.balanced
    assert r.files == r.db_findings == {GAME: []} and r.log_exit == 0


# --- E12-E19: the hash chain -----------------------------------------------------------------
def test_hash_fields_are_lower_case_hex() -> None:
    """EVENTS.md: "hex SHA-256". Decision (docs/events.md): lower-case, as ``hexdigest()``
    writes it; upper-case hex, a short or a non-hex string is invalid."""
    chained = _jcs_chain(EVENTS)[3]
    assert _same_verdict(chained) is None
    for key in ("prev_hash", "hash"):
        for bad in (chained[key].upper(), chained[key][:63], "g" * 64, chained[key] + "0"):
            assert _same_verdict({**chained, key: bad}) == "invalid", (key, bad)


def test_a_first_prev_hash_that_is_not_64_zeros_is_a_chain_break(tmp_path: Path) -> None:
    """EVENTS.md: ``prev_hash`` is "64 zeros for seq 0". A log chained from another
    genesis (every link and hash otherwise right) is broken at seq 0 for every reader:
    ingest quarantines seq 0 as chain_break (the rest is then past a gap: nothing stored,
    nothing lost), the files report LOG-CHAIN at 0, ``verify --db`` LOG-EVENT at 0."""
    r = Readers(tmp_path, [_dumps(_jcs_chain(EVENTS, genesis="1" * 64))])
    assert r.quarantine[0] == (0, "chain_break") and r.stored == 0 and r.balanced
    assert r.files[GAME] == [(0, "LOG-CHAIN")] and r.replay_files == [(0, "LOG-CHAIN")]
    # audit 35: the store folds the quarantined lines in where ingest read them, so it says
    # what the files say (it said LOG-EVENT at 0, and `replay --db` had no event to show)
    assert r.db_findings == r.files and r.replay_db == r.replay_files
    assert r.files_exit == r.db_exit == 1


def _rename(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, list):
        return [_rename(v, names) for v in value]
    if isinstance(value, dict):
        return {_rename(k, names): _rename(v, names) for k, v in value.items()}
    return value


def test_jcs_key_order_is_utf16_for_every_reader(tmp_path: Path) -> None:
    """EVENTS.md: the hash is over JCS (RFC 8785), whose keys sort by UTF-16 code units.
    Player ids that are keys (``GameEnded.net``) from outside the BMP (U+1F600, which is
    D83D DE00 in UTF-16) and from the private use area (U+E000) sort one way in UTF-16 and
    the other by code point: a producer chain made with the reference implementation is
    intact for ingest, ``verify-log`` and every replay, and the game says "chained by
    producer". The same log hashed in code-point order is a bad hash at that event for
    every reader (the test can fail)."""
    seats = EVENTS[0]["payload"]["seats"]
    names = {seats[0]: "\U0001F600p1", seats[1]: "\ue000p2", seats[2]: "p3"}
    events = [_rename(e, names) for e in EVENTS]
    good = Readers(tmp_path / "utf16", [_dumps(_jcs_chain(events))])
    assert good.summary["stored"] == len(events) and good.balanced
    assert good.chained_by == {GAME: "producer"} and good.log_problems == []
    assert good.files == good.db_findings == {GAME: []} and good.replay_files == []

    prev, wrong = GENESIS, []
    for e in events:
        linked = {**e, "prev_hash": prev}
        body = json.dumps(linked, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        linked["hash"] = prev = hashlib.sha256(body.encode()).hexdigest()
        wrong.append(linked)
    ended = next(e["seq"] for e in events if e["type"] == "GameEnded")
    bad = Readers(tmp_path / "codepoint", [_dumps(wrong)])
    assert bad.quarantine == [(ended, "bad_hash")] and bad.balanced
    assert (ended, "LOG-CHAIN") in bad.files[GAME]
    # audit 35: the store folds the quarantined line in (it said LOG-EVENT at `ended`)
    assert bad.db_findings == bad.files and bad.replay_db == bad.replay_files


def test_null_hash_fields_read_as_absent_by_every_reader(tmp_path: Path) -> None:
    """EVENTS.md: "A producer may leave both hash fields out; the store then chains the
    events itself at ingest, and says so for each game". Decision (models.py): a hash
    field given as ``null`` is left out: the game is chained at ingest, intact for
    ``verify-log`` and clean for every replay. One field null and the other set is a half
    chain (chain_mixed), as one field absent is."""
    nulls = [{**e, "prev_hash": None, "hash": None} for e in EVENTS]
    r = Readers(tmp_path / "nulls", [_dumps(nulls)])
    assert r.summary["stored"] == len(nulls) and r.balanced
    assert r.chained_by == {GAME: "ingest"} and r.log_exit == 0
    assert r.files == r.db_findings == {GAME: []} and r.replay_files == r.replay_db == []

    half = [dict(e) for e in _jcs_chain(EVENTS)]
    half[5]["hash"] = None
    h = Readers(tmp_path / "half", [_dumps(half)])
    assert h.quarantine[0] == (5, "chain_mixed") and h.balanced
    assert (5, "LOG-CHAIN") in h.files[GAME]


# --- F3/F4: order across games and within a game ------------------------------------------------
def test_a_game_split_across_files_given_in_reverse_order_is_broken_for_every_reader(
        tmp_path: Path) -> None:
    """EVENTS.md: "in ``seq`` order within a game". The second half of a game given
    before its first: the files report it at the first line read (LOG-SEQ: seq 0..9
    missing), ingest quarantines the early-read half as sequence_gap (stored: the half
    that starts at 0; nothing lost) and ``verify --db`` reports each quarantined line."""
    r = Readers(tmp_path, [LINES[10:], LINES[:10]])
    assert r.stored == 10 and r.balanced
    assert r.quarantine == [(seq, "sequence_gap") for seq in range(10, len(LINES))]
    assert r.files[GAME][0] == (10, "LOG-SEQ") and r.replay_files[0] == (10, "LOG-SEQ")
    # audit 35: the store folds the quarantined half in where ingest read it (before the
    # stored half), so it says what the files say (it said LOG-EVENT for each line)
    assert r.db_findings == r.files and r.replay_db == r.replay_files
    assert r.files_exit == r.db_exit == r.ingest_exit == 1


def test_two_games_interleaved_across_batches(tmp_path: Path) -> None:
    """EVENTS.md: "any order across games". Two games line by line, in batches of 7 lines
    (so each game is cut across four batches, at odd places): all stored, both clean."""
    other = [{**e, "game_id": "g2", "event_id": f"g2-{e['seq']}"} for e in EVENTS]
    lines = [line for pair in zip(LINES, _dumps(other), strict=True) for line in pair]
    r = Readers(tmp_path, [lines], "--batch-lines", "7")
    assert r.summary["stored"] == len(lines) and r.summary["batches"] == -(-len(lines) // 7)
    assert r.files == r.db_findings == {GAME: [], "g2": []} and r.log_exit == 0


# --- C4: optional fields present as null -----------------------------------------------------
_OPTIONAL = {"Melded": ("as",), "LaidOff": ("end",), "RummyCalled": ("end",)}
_MELD_LISTS = {"LaidDown": "melds", "DeclaredRummy": "melds"}


def _with_nulls(events: list[Event]) -> tuple[list[Event], int]:
    out, added = copy.deepcopy(events), 0
    for e in out:
        p = e["payload"]
        for key in _OPTIONAL.get(e["type"], ()):
            if key not in p:
                p[key] = None
                added += 1
        for meld in p.get(_MELD_LISTS.get(e["type"], ""), ()):
            if "as" not in meld:
                meld["as"] = None
                added += 1
    return out, added


@pytest.mark.parametrize("log", ["r500/clean-rounds.jsonl", "liverpool/clean-2p.jsonl",
                                 "liverpool/rummy_card_does_not_fit.jsonl"])
def test_optional_fields_present_as_null_read_as_absent(tmp_path: Path, log: str) -> None:
    """EVENTS.md marks ``as`` (Melded, every meld of LaidDown/DeclaredRummy) and ``end``
    (LaidOff "for runs", RummyCalled ``end?``) optional. Decision: ``null`` is the field
    left out (pydantic's default None): every such field written as ``null`` (the log
    re-chained) is stored and replayed with exactly the findings of the original log."""
    path = TESTS / "data" / log
    original = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    nulled, added = _with_nulls(original)
    assert added
    if "hash" in original[0]:
        nulled = chain(nulled)
    game = original[0]["game_id"]
    want = Readers(tmp_path / "original", [_dumps(original)], game=game)
    got = Readers(tmp_path / "nulled", [_dumps(nulled)], game=game)
    assert got.summary["stored"] == len(nulled) and got.balanced
    assert got.files == want.files and got.db_findings == want.db_findings
    assert got.replay_files == want.replay_files
    assert got.files[game] == got.db_findings[game]


# --- C10/C12: ChipsTransferred parties, order and reason -----------------------------------
_TRANSFERS = next(e["seq"] for e in EVENTS if e["type"] == "ChipsTransferred")


@pytest.mark.parametrize("party", ["bank", "pay:ZZ", "POT", "pay:"])
def test_a_transfer_party_outside_the_pools_is_a_discrepancy(tmp_path: Path, party: str) -> None:
    """EVENTS.md: ``from``/``to`` is "a player id or a pool: ``pot``, ``kitty``, ``poker``,
    ``house``, ``pay:<card>``". Decision: a party that is neither cannot be told at ingest
    (the players are in GameCreated), so the line is stored and the claim is judged: a
    transfer no rule computes is a C-CLAIM discrepancy at that event for every reader."""
    events = _sample()
    events[_TRANSFERS]["payload"]["transfers"][0]["to"] = party
    r = Readers(tmp_path, [_dumps(events)])
    assert r.summary["stored"] == len(events) and r.balanced
    assert r.files == r.db_findings == {GAME: [(_TRANSFERS, "C-CLAIM")]}


def test_transfer_order_and_reason_text_are_not_claims(tmp_path: Path) -> None:
    """EVENTS.md: the transfers "are compared together as one multiset of (from, to,
    amount); ``reason`` is free text for people": reversed and re-worded, still clean."""
    events = _sample()
    transfers = events[_TRANSFERS]["payload"]["transfers"]
    transfers.reverse()
    for t in transfers:
        t["reason"] = "anything at all, \u00e9 included"
    r = Readers(tmp_path, [_dumps(events)])
    assert r.files == r.db_findings == {GAME: []}


# --- O3: v1 in the v1 notation only -------------------------------------------------------------
_V1_CARDS = [
    "TH",                                   # a v2 card code
    {"rank": "T", "suit": "hearts"},
    {"rank": "1", "suit": "hearts"},
    {"rank": "11", "suit": "hearts"},
    {"rank": "q", "suit": "spades"},
    {"rank": "Q", "suit": "S"},
    {"rank": "Q", "suit": "Spades"},
    {"rank": "JK"},
    {"rank": "Joker"},
]


@pytest.mark.parametrize("card", _V1_CARDS)
def test_v1_cards_in_another_notation_are_invalid(card: Any) -> None:
    """EVENTS.md: a v1 card has rank ``2``-``10``, ``J``, ``Q``, ``K``, ``A`` or ``joker``
    and suit ``clubs``/``diamonds``/``hearts``/``spades``. The right JSON types in another
    notation (v2 codes, ``T``, ``S``, case) are invalid on both validators, in Drew v1 and
    Discarded v1, never guessed at (and never reach the upcaster)."""
    assert _same_verdict({**EVENTS[6], "v": 1, "payload": {"from": "deck", "card": card}}) \
        == "invalid"
    assert _same_verdict({**EVENTS[5], "v": 1, "payload": {"card": card}}) == "invalid"


@pytest.mark.parametrize("payload", [
    {"from": "stock", "card": {"rank": "10", "suit": "hearts"}},   # the v2 words
    {"from": "discard", "card": {"rank": "10", "suit": "hearts"}},
    {"from": "deck", "cards": [{"rank": "Q", "suit": "spades"}]},
    {"source": "stock", "cards": ["TH"]},                           # a v2 payload as v1
])
def test_v1_drew_with_v2_fields_is_invalid(payload: dict[str, Any]) -> None:
    """EVENTS.md: in ``Drew`` v1, ``from`` is ``deck`` (= stock) or ``pile`` (= discard)
    and ``card`` one card: a v2 word or field under ``v: 1`` is invalid, not upcast."""
    assert _same_verdict({**EVENTS[6], "v": 1, "payload": payload}) == "invalid"
    ok = {"from": "pile", "card": {"rank": "10", "suit": "hearts"}}
    assert _same_verdict({**EVENTS[6], "v": 1, "payload": ok}) is None
