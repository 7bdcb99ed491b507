"""Ingest: JSON Lines -> validated, hash-checked rows in the store, or quarantine.

The pipeline has two stages with different needs:

1. **Decode** (:func:`decode_lines`, pure and stateless per line, so it can run in
   worker processes): parse with orjson, validate against the contract, prepare the
   canonical bytes the hash chain needs.
2. **Sequence and write** (:class:`Sequencer`, :func:`ingest_files`; stateful, in the
   process that owns the store): decide per event *stored / duplicate / quarantined*
   against the store's chain heads, then write one batch in one transaction.

Every line read ends in exactly one of three places, so a summary always satisfies
``read = stored + duplicates + quarantined`` (see :class:`IngestSummary`).

Validation has a fast path (:mod:`.fastpath`): msgspec Structs compiled at import from
the pydantic models, plus the envelope regexes run once per chunk over a column. It only
ever *accepts*; anything it does not accept goes to :func:`validate_event`, the
authority, which either accepts it too or names the precise reason. Tests hold the two
to the same verdict (tests/test_fastpath.py).

Reading a file (decisions where EVENTS.md says only "JSON Lines, UTF-8"): a line ends at
``\\n``; a ``\\r`` before it is JSON whitespace (CRLF files read the same); a last line
without a newline counts; gzip is recognised by its magic bytes. A UTF-8 BOM at the very
start of a file is dropped (RFC 8259 §8.1 lets a parser ignore it); anywhere else it
makes its line ``not_json``. A line whose JSON object repeats a key is ``not_json`` too
(:func:`duplicate_key`): its content and JCS hash would depend on the parser. An empty
line is ``not_json`` (a blank line is not a JSON value).

Where the time goes, and why the code is shaped so (benchmarks/RESULTS.md): a decoded
chunk is kept as columns (lists per field) that go to Arrow once per batch; the writer
thread plans and writes each batch while the main thread decodes the next one, so
DuckDB's insert (which releases the GIL) runs on the second core.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import queue
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import duckdb
import orjson
import pyarrow as pa

from .fastpath import failing_rows, fast_valid, fast_valid_struct
from .hashing import canonical
from .models import CURRENT_VERSION, GENESIS_HASH, EventError, validate_event
from .parquet_source import PARQUET_MAGIC, ParquetLines
from .upcast import upcast

if TYPE_CHECKING:
    from .store import EventStore

#: Every quarantine reason code, with what it means (shown by ``ingest`` and in docs/sql.md).
REASONS: dict[str, str] = {
    "not_json": "the line is not valid I-JSON (not JSON, not UTF-8, a BOM, a duplicate key, "
                "or empty)",
    "not_object": "the line is JSON but not an object",
    "unknown_type": "the `type` is not in the catalog",
    "future_version": "the `v` is newer than this project knows",
    "invalid": "a field is missing, extra, mistyped, out of bounds, a bad card or timestamp",
    "bad_actor": "a system event not by `system`, or a player event by `system`",
    "conflict_event_id": "the event_id is already stored with other content",
    "conflict_seq": "the (game_id, seq) is already taken by another event",
    "sequence_gap": "the seq is past the game's next free seq (an earlier event is missing)",
    "chain_mixed": "the game mixes producer-chained and unchained events",
    "chain_break": "prev_hash is not the hash of the game's previous event",
    "bad_hash": "hash does not match the event's content",
}

_PREV_KEY = b'"prev_hash":"'
_BOM = b"\xef\xbb\xbf"
_PREV_LEN = len(_PREV_KEY)
_SORT = orjson.OPT_SORT_KEYS

#: Lines per transaction: exactly DuckDB's row group (122,880 rows). A batch this large
#: is written straight to the file instead of through the WAL, and one that fills whole
#: row groups leaves no partial group for the closing checkpoint to rewrite: measured on
#: 1M events, 122,880 costs 3.7 µs/event of DuckDB CPU against 5.9 for 131,072 and 8.1
#: for 245,760 (benchmarks/RESULTS.md).
DEFAULT_BATCH_LINES = 122_880
CHUNK_LINES = 5_000


# --- stage 1: decode ------------------------------------------------------------------
#: The validator of the hot path: compiled from the pydantic models (:mod:`.fastpath`).
#: It only ever *accepts*; anything else goes to :func:`validate_event` for the verdict.
_fast_valid = fast_valid


def check_event(obj: Any) -> None:
    """Raise :class:`EventError` with the precise reason unless ``obj`` is a valid event."""
    if not fast_valid(obj):
        validate_event(obj)


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_pairs(pairs: list[tuple[str, Any]]) -> None:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen.add(key)


def duplicate_key(line: bytes, obj: Any = None) -> str | None:
    """The first key repeated inside one JSON object of ``line`` (``obj``, if given, is
    what orjson decoded from it), or None.

    Why: JSON parsers keep the last of two equal keys, silently; the event would then be
    whatever this parser happens to pick, and its hash (JCS, RFC 8785, which requires
    I-JSON: no duplicate names) would be undefined. Such a line is quarantined, not read.

    Cheap first: without a backslash in the line every string is written literally, so
    re-serialising ``obj`` gives exactly as many ``"`` as the line unless keys (and their
    values) were dropped; only lines with escapes or a shortfall are parsed again.
    """
    if (obj is not None and b"\\" not in line
            and line.count(b'"') == orjson.dumps(obj).count(b'"')):
        return None
    try:
        json.loads(line, object_pairs_hook=_unique_pairs)
    except _DuplicateKey as exc:
        return exc.key
    except ValueError:  # orjson read it; a disagreement is not ours to report here
        return None
    return None


def _duplicate_detail(key: str) -> str:
    return (f"duplicate key {key!r} in a JSON object: the event is ambiguous "
            "(RFC 8785 / I-JSON forbid duplicate names)")


def parse_line(line: bytes) -> dict[str, Any]:
    """One JSONL line -> a valid event dict, or :class:`EventError` (reason code set)."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        detail = "empty line" if not line.strip() else f"not JSON: {exc}"
        raise EventError("not_json", detail) from None
    key = duplicate_key(line, obj)
    if key is not None:
        raise EventError("not_json", _duplicate_detail(key))
    check_event(obj)
    return obj


def _canonical(value: dict[str, Any]) -> bytes:
    """JCS bytes; orjson's output is already JCS whenever it is pure ASCII (no
    non-ASCII keys to order by UTF-16), and validated events hold no floats."""
    out = orjson.dumps(value, option=_SORT)
    return out if out.isascii() else canonical(value)


#: The columns of :class:`Decoded`, one list each, one entry per valid line.
COLUMNS = ("index", "event_id", "game_id", "seq", "type", "v", "ts", "actor", "payload",
           "up_payload", "up_v", "prev", "declared", "mode", "hash_ok", "head", "tail")


@dataclass(slots=True)
class Decoded:
    """The result of decoding a chunk of lines (cheap to pickle between processes).

    ``errors`` holds ``(index, reason, detail)`` for bad lines; the other fields are
    columns with one entry per valid line, in line order (columns, not row tuples: the
    batch goes to Arrow column by column, and plain lists of strings cost the garbage
    collector nothing). ``index`` is the line's index in the chunk; ``prev`` /
    ``declared`` the ``prev_hash`` / ``hash`` as written (or None); ``mode`` is
    ``producer`` (both hash fields), ``ingest`` (neither) or ``half`` (one of them). For
    producer events ``hash_ok`` says whether the declared hash matches the content; for
    unchained ones ``head`` / ``tail`` are the canonical bytes around the ``prev_hash``
    value, so the chain hash is ``sha256(head + prev + tail)`` once the previous hash
    is known.
    """

    n: int = 0
    errors: list[tuple[int, str, str]] = field(default_factory=list)
    index: list[int] = field(default_factory=list)
    event_id: list[str] = field(default_factory=list)
    game_id: list[str] = field(default_factory=list)
    seq: list[int] = field(default_factory=list)
    type: list[str] = field(default_factory=list)
    v: list[int] = field(default_factory=list)
    ts: list[str] = field(default_factory=list)
    actor: list[str] = field(default_factory=list)
    payload: list[str] = field(default_factory=list)
    up_payload: list[str | None] = field(default_factory=list)
    up_v: list[int | None] = field(default_factory=list)
    prev: list[str | None] = field(default_factory=list)
    declared: list[str | None] = field(default_factory=list)
    mode: list[str] = field(default_factory=list)
    hash_ok: list[bool] = field(default_factory=list)
    head: list[bytes] = field(default_factory=list)
    tail: list[bytes] = field(default_factory=list)

    @property
    def rows(self) -> int:
        """How many lines decoded to valid events."""
        return len(self.index)

    def drop(self, positions: Iterable[int]) -> None:
        """Remove the rows at ``positions`` from every column."""
        gone = set(positions)
        if not gone:
            return
        for name in COLUMNS:
            column = getattr(self, name)
            column[:] = [x for k, x in enumerate(column) if k not in gone]


def decode_lines(lines: Sequence[bytes]) -> Decoded:
    """Parse, validate and prepare hashing for a chunk of lines (no store access).

    Each line is parsed by orjson and checked by the compiled fast path; a line it does
    not accept goes to :func:`validate_event` for the verdict and the reason. The
    envelope regexes (:data:`.fastpath.COLUMN_CHECKS`) are checked once for the whole
    chunk at the end; a row that fails them is re-judged by :func:`validate_event`.
    A valid event's dict is consumed (its hash fields are popped).
    """
    out = Decoded(n=len(lines))
    errors = out.errors
    loads = orjson.loads
    dumps = orjson.dumps
    decode_error = orjson.JSONDecodeError
    fast = fast_valid_struct
    sha256 = hashlib.sha256
    current = CURRENT_VERSION
    # One bound ``append`` per column: this loop runs once per event.
    (a_index, a_event_id, a_game_id, a_seq, a_type, a_v, a_ts, a_actor, a_payload,
     a_up_payload, a_up_v, a_prev, a_declared, a_mode, a_hash_ok, a_head,
     a_tail) = (getattr(out, name).append for name in COLUMNS)
    for i, line in enumerate(lines):
        try:
            obj = loads(line)
        except decode_error as exc:
            detail = "empty line" if not line.strip() else f"not JSON: {exc}"
            errors.append((i, "not_json", detail))
            continue
        escaped = b"\\" in line
        if escaped and (dup := duplicate_key(line, obj)) is not None:
            errors.append((i, "not_json", _duplicate_detail(dup)))
            continue
        if not fast(obj):
            try:
                validate_event(obj)
            except EventError as exc:
                dup = duplicate_key(line, obj)
                if dup is not None:  # the cause: the line is not one unambiguous object
                    errors.append((i, "not_json", _duplicate_detail(dup)))
                else:
                    errors.append((i, exc.reason, exc.detail))
                continue
        had_hash_keys = ("prev_hash" in obj) + ("hash" in obj)
        declared = obj.pop("hash", None)
        prev = obj.get("prev_hash")
        if prev is None and declared is None:
            mode = "ingest"
            obj["prev_hash"] = GENESIS_HASH
            canon = _canonical(obj)
            # The line held the null/absent hash keys, the canonical form a prev_hash string.
            quotes = canon.count(b'"') - 4 + 2 * had_hash_keys
        elif prev is not None and declared is not None:
            mode = "producer"
            canon = _canonical(obj)
            quotes = canon.count(b'"') + 4  # the line also held "hash":"..."
        else:
            mode = "half"  # rare, and quarantined: the exact check below
            canon = b""
            quotes = -1
        # Duplicate keys (see :func:`duplicate_key`), checked on the canonical bytes the
        # hash needs anyway: without escapes, a quote count short of the line's means a
        # key was dropped by the parser.
        if not escaped and line.count(b'"') != quotes and (
                dup := duplicate_key(line)) is not None:
            errors.append((i, "not_json", _duplicate_detail(dup)))
            continue
        type_name = obj["type"]
        version = obj["v"]
        if version < current[type_name]:
            lifted = upcast(obj)
            a_up_payload(dumps(lifted["payload"]).decode())
            a_up_v(lifted["v"])
        else:
            a_up_payload(None)
            a_up_v(None)
        a_mode(mode)
        if mode == "ingest":
            a_hash_ok(True)
            # The top-level prev_hash is the last such key: only seq/ts/type/v follow it.
            at = canon.rfind(_PREV_KEY) + _PREV_LEN
            a_head(canon[:at])
            a_tail(canon[at + 64 :])
        else:
            a_hash_ok(mode == "producer" and sha256(canon).hexdigest() == declared)
            a_head(b"")
            a_tail(b"")
        a_index(i)
        a_event_id(obj["event_id"])
        a_game_id(obj["game_id"])
        a_seq(obj["seq"])
        a_type(type_name)
        a_v(version)
        a_ts(obj["ts"])
        a_actor(obj["actor"])
        a_payload(dumps(obj["payload"]).decode())
        a_prev(prev)
        a_declared(declared)
    if out.index:
        _column_checks(out, lines)
    return out


def _column_checks(out: Decoded, lines: Sequence[bytes]) -> None:
    """Run the envelope regexes left out of the compiled Structs over the chunk (RE2 in
    Arrow, once per column); rows that fail are re-judged by :func:`validate_event`."""
    failing = failing_rows({
        "ts": pa.array(out.ts, pa.string()),
        "prev_hash": pa.array(out.prev, pa.string()),
        "hash": pa.array(out.declared, pa.string()),
    })
    rejected = []
    for k in failing:
        try:
            validate_event(orjson.loads(lines[out.index[k]]))
        except EventError as exc:
            out.errors.append((out.index[k], exc.reason, exc.detail))
            rejected.append(k)
    if rejected:
        out.drop(rejected)
        out.errors.sort()


# --- reading files --------------------------------------------------------------------
class SourceError(OSError):
    """A file that cannot be read to its end (a cut or corrupt gzip stream). The lines
    before the damage were read; batches already committed stay (re-ingesting the
    repaired file completes the store exactly)."""


class _Source:
    """A JSONL file (plain or gzip) read as raw lines, with the bytes consumed so far
    (of the file on disk, so a progress bar works for .gz too). A Parquet file (known by
    its magic bytes) gives one line per row (:mod:`.parquet_source`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.size = path.stat().st_size
        self._raw: IO[bytes] = open(path, "rb")  # noqa: SIM115 - closed in close()
        magic = self._raw.read(4)
        self._raw.seek(0)
        self._rows: ParquetLines | None = None
        if magic == PARQUET_MAGIC:
            self._rows = ParquetLines(path)
        self._stream: IO[bytes] = (
            gzip.GzipFile(fileobj=self._raw, mode="rb")  # type: ignore[assignment]
            if magic[:2] == b"\x1f\x8b" else self._raw
        )

    def position(self) -> int:
        return self._raw.tell() if self._rows is None else self._rows.position()

    def lines(self) -> Iterator[bytes]:
        """Each line without its ``\\n`` terminator (a final line without one counts; a
        ``\\r`` before it stays and is JSON whitespace, so CRLF files read the same).

        A UTF-8 byte order mark at the very start of the file is dropped: it marks the
        file's encoding, it is not part of the first line's JSON text, and RFC 8259 §8.1
        lets a parser ignore it (jsonlines.org asks writers not to write one). A BOM
        anywhere else is inside a line, which is then not JSON and is quarantined.
        """
        if self._rows is not None:
            yield from self._rows.lines()
            return
        first = True
        n = 0
        try:
            for line in self._stream:
                if first:
                    first = False
                    if line.startswith(_BOM):
                        line = line[len(_BOM):]
                n += 1
                yield line[:-1] if line.endswith(b"\n") else line
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise SourceError(
                f"{self.path}: the gzip stream is cut or corrupt ({type(exc).__name__}: "
                f"{exc}); {n} line(s) were read before the damage"
            ) from None

    def close(self) -> None:
        if self._rows is not None:
            self._rows.close()
        self._stream.close()
        self._raw.close()

    def __enter__(self) -> _Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_jsonl_events(
    path: str | Path,
) -> Iterator[tuple[int, str, dict[str, Any] | EventError]]:
    """Read a JSONL file (plain or gzip) or a Parquet file without a store.

    Yields ``(line_no, raw_text, event)`` per line, 1-based; ``event`` is the validated
    event dict as written (not upcast), or the :class:`EventError` that says why the
    line is not one (``not_json``, ``not_object``, ``unknown_type``, ...).
    """
    with _Source(Path(path)) as src:
        for line_no, line in enumerate(src.lines(), start=1):
            raw = line.decode("utf-8", errors="replace")
            try:
                yield line_no, raw, parse_line(line)
            except EventError as exc:
                yield line_no, raw, exc


# --- stage 2: sequence ------------------------------------------------------------------
@dataclass(slots=True)
class Head:
    """A game's chain head: the next free seq, the last hash, who chained it."""

    next_seq: int = 0
    last_hash: str = GENESIS_HASH
    chained_by: str | None = None  # "producer" | "ingest" | None (no event yet)


@dataclass(slots=True)
class Quarantined:
    index: int  # the line's index in the batch
    reason: str
    detail: str
    event_id: str | None = None
    game_id: str | None = None
    seq: int | None = None
    #: the game's next free seq (its stored events end just before it) when the line was
    #: read: where the line stood among the game's events in the input, so a replay of
    #: the store folds it in where a replay of the file meets it (replay/verify.py)
    head: int | None = None


@dataclass(slots=True)
class Plan:
    """What one batch does: rows to store (with their chain links), duplicates,
    quarantine, and the chain heads it moves."""

    dec: Decoded
    keep: list[int]  # positions of the stored rows in ``dec``'s columns, ascending
    prev_hashes: list[str]
    hashes: list[str]
    duplicates: int
    quarantined: list[Quarantined]
    changed: dict[str, Head]


class Sequencer:
    """Decides, in input order, what happens to each decoded event, against the chain
    heads of the store (cached for the run) and the event_ids already stored."""

    def __init__(self) -> None:
        self.heads: dict[str, Head] = {}
        self._before: dict[str, Head] = {}

    def _load_heads(self, con: duckdb.DuckDBPyConnection, game_ids: Iterable[str]) -> None:
        missing = sorted({g for g in game_ids if g not in self.heads})
        if not missing:
            return
        con.register("_rg_ids", pa.table({"game_id": pa.array(missing, pa.string())}))
        try:
            rows = con.execute(
                "SELECT c.game_id, c.next_seq, c.last_hash, c.chained_by "
                "FROM store.games_chain c SEMI JOIN _rg_ids i ON c.game_id = i.game_id"
            ).fetchall()
        finally:
            con.unregister("_rg_ids")
        for game_id in missing:
            self.heads[game_id] = Head()
        for game_id, next_seq, last_hash, chained_by in rows:
            self.heads[game_id] = Head(next_seq, last_hash, chained_by)

    @staticmethod
    def _stored_by_id(
        con: duckdb.DuckDBPyConnection, event_ids: list[str]
    ) -> dict[str, tuple[str, int, str]]:
        if not event_ids:
            return {}
        con.register("_rg_ids", pa.table({"event_id": pa.array(event_ids, pa.string())}))
        try:
            rows = con.execute(
                "SELECT e.event_id, e.game_id, e.seq, e.raw FROM store.events e "
                "SEMI JOIN _rg_ids i ON e.event_id = i.event_id"
            ).fetchall()
        finally:
            con.unregister("_rg_ids")
        return {eid: (gid, seq, raw) for eid, gid, seq, raw in rows}

    def plan(
        self,
        con: duckdb.DuckDBPyConnection,
        dec: Decoded,
        lines: Sequence[bytes],
        *,
        lookup_all: bool = True,
    ) -> Plan:
        """Decide every line of a decoded batch (``lines`` are its raw bytes). Reads the
        store, so call it inside the batch's transaction.

        ``lookup_all=False`` looks up in the store only the event_ids of rows at a seq
        their game already has (the only rows that can be duplicates of stored events):
        a fresh log then costs no scan of ``store.events`` per batch, a scan that grows
        with the store. The one conflict it cannot see, an event_id already stored under
        another game, makes the insert fail on ``UNIQUE(event_id)``; the caller must
        then roll back and plan again with ``lookup_all=True`` (:func:`commit_batch`).
        A row quarantined for its seq or chain (a gap, say) is never inserted, so that
        failure cannot catch it: the event_ids of those few rows are looked up after
        the pass, and one already stored makes the row a ``conflict_event_id``, the
        verdict ``lookup_all=True`` gives (the event_id is checked before the seq).
        """
        quarantined = [Quarantined(i, r, d, *salvage_ids(lines[i])) for i, r, d in dec.errors]
        # a line that is not a valid event still names its game, most of the time: its
        # place among that game's events (``head``) is recorded as for any quarantined line
        game_ids = set(dec.game_id) | {q.game_id for q in quarantined if q.game_id is not None}
        self._load_heads(con, game_ids)
        heads = self.heads
        if lookup_all:
            stored = self._stored_by_id(con, dec.event_id)
        else:
            stored = self._stored_by_id(con, [
                e for e, g, q in zip(dec.event_id, dec.game_id, dec.seq, strict=True)
                if q < heads[g].next_seq])
        self._before = before = {
            g: Head(h.next_seq, h.last_hash, h.chained_by) for g in game_ids for h in (heads[g],)
        }
        # the decode errors in line order, each given its game's head when the pass
        # below reaches its line
        unplaced = sorted((q for q in quarantined if q.game_id is not None),
                          key=lambda q: q.index, reverse=True)
        accepted: dict[str, int] = {}  # event_id -> line index, for in-batch duplicates
        keep: list[int] = []
        row_prev: list[str] = []
        row_hash: list[str] = []
        duplicates = 0
        sha256 = hashlib.sha256
        hash_ok, prevs, declared, heads_b, tails = (
            dec.hash_ok, dec.prev, dec.declared, dec.head, dec.tail)
        for k, (index, event_id, game_id, seq, mode) in enumerate(
            zip(dec.index, dec.event_id, dec.game_id, dec.seq, dec.mode, strict=True)
        ):
            while unplaced and unplaced[-1].index < index:
                q = unplaced.pop()
                q.head = heads[q.game_id].next_seq  # type: ignore[index]
            if event_id in accepted or event_id in stored:
                other = stored.get(event_id)
                other_raw = other[2].encode() if other is not None else lines[accepted[event_id]]
                if _same_content(other_raw, lines[index]):
                    duplicates += 1
                else:
                    where = (f"game {other[0]!r} seq {other[1]}" if other is not None
                             else "earlier in this batch")
                    quarantined.append(Quarantined(
                        index, "conflict_event_id",
                        f"event_id {event_id!r} is already stored ({where}) with other content",
                        event_id, game_id, seq, heads[game_id].next_seq))
                continue
            head = heads[game_id]
            next_seq = head.next_seq
            if seq == next_seq and mode == "ingest" and head.chained_by != "producer":
                # The common case of an unchained log, decided with the fewest steps.
                last = head.last_hash
                head.last_hash = new_hash = sha256(
                    heads_b[k] + last.encode() + tails[k]).hexdigest()
                row_prev.append(last)
                row_hash.append(new_hash)
                head.next_seq = seq + 1
                head.chained_by = mode
                accepted[event_id] = index
                keep.append(k)
                continue
            reason = None
            detail = ""
            if seq < next_seq:
                reason = "conflict_seq"
                detail = f"game {game_id!r} already has an event at seq {seq}"
            elif seq > next_seq:
                reason = "sequence_gap"
                detail = f"game {game_id!r}: expected seq {next_seq}, got {seq}"
            elif mode == "half":
                reason = "chain_mixed"
                detail = f"seq {seq}: only one of prev_hash/hash is present"
            elif head.chained_by is not None and mode != head.chained_by:
                reason = "chain_mixed"
                detail = (f"game {game_id!r} is chained by {head.chained_by} but seq {seq} "
                          + ("has hash fields" if mode == "producer" else "has none"))
            elif mode == "producer":
                if not hash_ok[k]:
                    reason = "bad_hash"
                    detail = f"seq {seq}: hash does not match the event's content"
                elif prevs[k] != head.last_hash:
                    reason = "chain_break"
                    detail = (f"seq {seq}: prev_hash {prevs[k][:12]}… is not the hash of "
                              f"seq {seq - 1} ({head.last_hash[:12]}…)" if seq > 0 else
                              f"seq 0: prev_hash {prevs[k][:12]}… is not the genesis "
                              f"(64 zeros)")
            if reason is not None:
                quarantined.append(Quarantined(index, reason, detail, event_id, game_id, seq,
                                               next_seq))
                continue
            if mode == "producer":
                new_hash = declared[k]
                row_prev.append(prevs[k])
            else:
                new_hash = sha256(heads_b[k] + head.last_hash.encode() + tails[k]).hexdigest()
                row_prev.append(head.last_hash)
            row_hash.append(new_hash)
            head.next_seq = seq + 1
            head.last_hash = new_hash
            head.chained_by = mode
            accepted[event_id] = index
            keep.append(k)
        for q in unplaced:  # decode errors after the last valid line
            q.head = heads[q.game_id].next_seq  # type: ignore[index]
        if not lookup_all:
            self._recheck_ids(con, quarantined, stored)
        changed = {g: heads[g] for g, h in before.items() if h.next_seq != heads[g].next_seq}
        quarantined.sort(key=lambda q: q.index)
        return Plan(dec, keep, row_prev, row_hash, duplicates, quarantined, changed)

    def _recheck_ids(self, con: duckdb.DuckDBPyConnection, quarantined: list[Quarantined],
                     looked_up: dict[str, tuple[str, int, str]]) -> None:
        """Rows quarantined for their seq or chain whose event_id was not looked up: if
        it is stored (in this game at another seq, or in another game), the row is a
        conflict of event_id, as :meth:`plan` with ``lookup_all=True`` would say."""
        suspects = [q for q in quarantined
                    if q.reason in _SEQ_OR_CHAIN and q.event_id not in looked_up]
        if not suspects:
            return
        found = self._stored_by_id(con, [q.event_id for q in suspects if q.event_id])
        for q in suspects:
            other = found.get(q.event_id or "")
            if other is not None:
                q.reason = "conflict_event_id"
                q.detail = (f"event_id {q.event_id!r} is already stored (game {other[0]!r} "
                            f"seq {other[1]}) with other content")

    def rollback(self) -> None:
        """Restore the heads moved by the last :meth:`plan` (its batch did not commit)."""
        self.heads.update(self._before)
        self._before = {}


#: Quarantine reasons :meth:`Sequencer.plan` decides after the event_id check, for rows
#: whose event_id ``lookup_all=False`` did not look up (a ``conflict_seq`` row's was).
_SEQ_OR_CHAIN = frozenset({"sequence_gap", "chain_mixed", "chain_break", "bad_hash"})


def source_name(path: Path) -> str:
    """The name a file's lines are kept under (``quarantine.source``,
    ``ingest_batches.source``): its absolute path, as text DuckDB can hold. A name that is
    not UTF-8 (a Latin-1 file system, an old export) keeps its odd bytes as ``\\xff``
    escapes (audit 50: the raw name ended ingest with an encoding error)."""
    name = str(path.resolve())
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(name).decode("utf-8", "backslashreplace")
    return name


def salvage_ids(line: bytes | str) -> tuple[str | None, str | None, int | None]:
    """``(event_id, game_id, seq)`` of a line that failed decoding, where they can be read,
    so its quarantine row names the game it breaks (a replay of the stored game can then
    say that an event of it was quarantined, instead of looking at a shorter game). The
    readers of files (``replay/verify.py``) read a bad line's ids here too, so a line is
    placed alike from the file and from the store: a game id of 1-256 chars, a seq in
    0..2**63-1 (what the quarantine's columns hold)."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        # a line that is not UTF-8: its ids as the readers of files read them (the text
        # decoded with U+FFFD for the bad bytes), so the store and the file place it alike
        if isinstance(line, str):
            return None, None, None
        try:
            obj = orjson.loads(line.decode("utf-8", "replace"))
        except orjson.JSONDecodeError:
            return None, None, None
    if not isinstance(obj, dict):
        return None, None, None

    def text(key: str) -> str | None:
        value = obj.get(key)
        return value if isinstance(value, str) and 0 < len(value) <= 256 else None

    seq = obj.get("seq")
    return (text("event_id"), text("game_id"),
            seq if type(seq) is int and 0 <= seq < 2**63 else None)


def _same_content(a: bytes, b: bytes) -> bool:
    """Same event? Compares canonical forms, so whitespace and key order do not matter,
    nor a hash field written as ``null`` rather than left out (models.py: ``null`` =
    absent; such a line is chained at ingest to the very hash of the line without it)."""
    if a == b:
        return True
    try:
        return canonical(_without_null_links(orjson.loads(a))) == canonical(
            _without_null_links(orjson.loads(b)))
    except (orjson.JSONDecodeError, ValueError):
        return False


def _without_null_links(obj: Any) -> Any:
    """``obj`` less a top-level ``prev_hash`` / ``hash`` whose value is ``null``."""
    if isinstance(obj, dict) and (obj.get("prev_hash", 0) is None or obj.get("hash", 0) is None):
        return {k: v for k, v in obj.items() if not (k in ("prev_hash", "hash") and v is None)}
    return obj


# --- writing a batch --------------------------------------------------------------------
def write_plan(
    con: duckdb.DuckDBPyConnection,
    plan: Plan,
    lines: Sequence[bytes],
    *,
    source: str,
    first_line: int,
    started: float,
    batch_id: int | None = None,
) -> int:
    """Write one planned batch (inside the caller's transaction); returns its batch_id
    (a new one unless given)."""
    if batch_id is None:
        batch_id = _next_batch_id(con)
    n_stored = len(plan.keep)
    if n_stored:
        rows = _event_rows(plan, lines)
        con.register("_rg_rows", rows)
        try:
            con.execute(
                "INSERT INTO store.events (event_id, game_id, seq, type, v, ts, ts_text, actor, "
                "payload, up_payload, up_v, prev_hash, hash, raw, batch_id) "
                "SELECT event_id, game_id, seq, type, v, CAST(ts_text AS TIMESTAMP), ts_text, "
                "actor, payload, up_payload, up_v, prev_hash, hash, raw, ? FROM _rg_rows",
                [batch_id],
            )
        finally:
            _unregister(con, "_rg_rows")
    if plan.changed:
        heads = pa.table({
            "game_id": pa.array(list(plan.changed), pa.string()),
            "chained_by": pa.array([h.chained_by for h in plan.changed.values()], pa.string()),
            "next_seq": pa.array([h.next_seq for h in plan.changed.values()], pa.int32()),
            "last_hash": pa.array([h.last_hash for h in plan.changed.values()], pa.string()),
        })
        con.register("_rg_heads", heads)
        try:
            con.execute(
                "INSERT INTO store.games_chain (game_id, chained_by, next_seq, last_hash, batch_id) "
                "SELECT game_id, chained_by, next_seq, last_hash, ? FROM _rg_heads "
                "ON CONFLICT (game_id) DO UPDATE SET next_seq = excluded.next_seq, "
                "last_hash = excluded.last_hash, batch_id = excluded.batch_id",
                [batch_id],
            )
        finally:
            _unregister(con, "_rg_heads")
    if plan.quarantined:
        raws = [lines[q.index] for q in plan.quarantined]
        qt = pa.table({
            "source": pa.array([source] * len(raws), pa.string()),
            "line_no": pa.array([first_line + q.index for q in plan.quarantined], pa.int64()),
            "reason": pa.array([q.reason for q in plan.quarantined], pa.string()),
            "detail": pa.array([q.detail for q in plan.quarantined], pa.string()),
            "raw": pa.array([r.decode("utf-8", errors="replace") for r in raws], pa.string()),
            "raw_bytes": pa.array(raws, pa.binary()),
            "raw_sha256": pa.array([hashlib.sha256(r).hexdigest() for r in raws], pa.string()),
            "event_id": pa.array([q.event_id for q in plan.quarantined], pa.string()),
            "game_id": pa.array([q.game_id for q in plan.quarantined], pa.string()),
            "seq": pa.array([q.seq for q in plan.quarantined], pa.int64()),
            "head": pa.array([q.head for q in plan.quarantined], pa.int64()),
        })
        con.register("_rg_quarantine", qt)
        try:
            con.execute(
                "INSERT INTO store.quarantine (source, line_no, reason, detail, raw, raw_bytes, "
                "raw_sha256, event_id, game_id, seq, head, batch_id, received_at) "
                "SELECT source, line_no, reason, detail, raw, raw_bytes, raw_sha256, event_id, "
                # the wall-clock time of the write (DuckDB's now() is the transaction's
                # start, before the batch's work: audit 51, as committed_at below)
                "game_id, seq, head, ?, make_timestamp(?::BIGINT) FROM _rg_quarantine "
                "ON CONFLICT DO NOTHING",
                [batch_id, int(time.time() * 1_000_000)],
            )
        finally:
            _unregister(con, "_rg_quarantine")
    con.execute(
        "INSERT INTO store.ingest_batches (batch_id, source, first_line, last_line, lines_read, "
        "stored, duplicates, quarantined, started_at, committed_at) "
        # both UTC wall-clock times from Python: DuckDB's now() is the time the transaction
        # *began*, before the batch's work (audit 51), and a plain now()::TIMESTAMP is the
        # machine zone's wall clock; this row is the batch's last write before COMMIT
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, make_timestamp(?::BIGINT), make_timestamp(?::BIGINT))",
        [batch_id, source, first_line, first_line + len(lines) - 1, len(lines), n_stored,
         plan.duplicates, len(plan.quarantined), int(started * 1_000_000),
         int(time.time() * 1_000_000)],
    )
    return batch_id


def _next_batch_id(con: duckdb.DuckDBPyConnection) -> int:
    return int(con.execute("SELECT nextval('store.batch_seq')").fetchall()[0][0])


def _unregister(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Drop a registered Arrow table; after a failed statement the transaction is
    aborted and the ROLLBACK that follows drops it, so do not mask that error."""
    with contextlib.suppress(duckdb.TransactionException):
        con.unregister(name)


def _event_rows(plan: Plan, lines: Sequence[bytes]) -> pa.Table:
    """The stored rows of a plan as one Arrow table: each column converted once from its
    list; when some rows are not stored (duplicates, quarantine), a ``take`` keeps the
    rest."""
    dec = plan.dec
    every = len(plan.keep) == dec.rows
    keep = None if every else pa.array(plan.keep, pa.int64())

    def col(values: list[Any], typ: pa.DataType) -> pa.Array:
        arr = pa.array(values, typ)
        return arr if keep is None else arr.take(keep)

    if every and dec.rows == len(lines):
        raw = pa.array(lines, pa.binary())
    else:
        raw = pa.array(lines, pa.binary()).take(
            pa.array([dec.index[k] for k in plan.keep], pa.int64()))
    return pa.table({
        "event_id": col(dec.event_id, pa.string()),
        "game_id": col(dec.game_id, pa.string()),
        "seq": col(dec.seq, pa.int32()),
        "type": col(dec.type, pa.string()),
        "v": col(dec.v, pa.int32()),
        "ts_text": col(dec.ts, pa.string()),
        "actor": col(dec.actor, pa.string()),
        "payload": col(dec.payload, pa.string()),
        "up_payload": col(dec.up_payload, pa.string()),
        "up_v": col(dec.up_v, pa.int32()),
        "prev_hash": pa.array(plan.prev_hashes, pa.string()),
        "hash": pa.array(plan.hashes, pa.string()),
        "raw": raw.cast(pa.string()),
    })


# --- the driver --------------------------------------------------------------------------
@dataclass
class IngestSummary:
    """Counts of one ingest run; ``read == stored + duplicates + quarantined`` always."""

    read: int = 0
    stored: int = 0
    duplicates: int = 0
    quarantined: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    files: dict[str, dict[str, int]] = field(default_factory=dict)
    batches: int = 0
    seconds: float = 0.0

    def open_file(self, source: str) -> dict[str, int]:
        """The counts of ``source``, listed from the start (an empty file shows too)."""
        return self.files.setdefault(
            source, {"read": 0, "stored": 0, "duplicates": 0, "quarantined": 0})

    def add(self, source: str, lines: int, plan: Plan) -> None:
        per = self.open_file(source)
        for target in (self, per):
            if isinstance(target, IngestSummary):
                target.read += lines
                target.stored += len(plan.keep)
                target.duplicates += plan.duplicates
                target.quarantined += len(plan.quarantined)
            else:
                target["read"] += lines
                target["stored"] += len(plan.keep)
                target["duplicates"] += plan.duplicates
                target["quarantined"] += len(plan.quarantined)
        for q in plan.quarantined:
            self.reasons[q.reason] = self.reasons.get(q.reason, 0) + 1
        self.batches += 1

    @property
    def balanced(self) -> bool:
        return self.read == self.stored + self.duplicates + self.quarantined

    def as_dict(self) -> dict[str, Any]:
        return {
            "read": self.read, "stored": self.stored, "duplicates": self.duplicates,
            "quarantined": self.quarantined, "reasons": dict(sorted(self.reasons.items())),
            "files": self.files, "batches": self.batches, "seconds": round(self.seconds, 3),
            "balanced": self.balanced,
        }


#: ``progress(source, bytes_done, bytes_total, summary)`` after every committed batch.
Progress = Callable[[str, int, int, IngestSummary], None]


def commit_batch(
    store: EventStore,
    seqr: Sequencer,
    dec: Decoded,
    lines: Sequence[bytes],
    *,
    source: str,
    first_line: int,
    summary: IngestSummary,
    sticky: bool = False,
) -> None:
    """Plan and write one batch in one transaction; on any failure nothing of it stays.

    ``sticky``: a line this file already has in the quarantine (same source, line
    number and bytes) keeps that verdict, unread (:func:`_known_bad`)."""
    started = time.time()
    con = store.con
    con.execute("BEGIN TRANSACTION")
    try:
        # Sequences are not transactional: take the id once, so a retry leaves no gap.
        batch_id = _next_batch_id(con)
        known = _known_bad(con, source, first_line, lines) if sticky else {}
        if known:
            dec.drop([k for k, i in enumerate(dec.index) if i in known])
            dec.errors = [e for e in dec.errors if e[0] not in known]
        try:
            plan = _with_known(seqr.plan(con, dec, lines, lookup_all=False), known)
            write_plan(con, plan, lines, source=source, first_line=first_line, started=started,
                       batch_id=batch_id)
        except duckdb.ConstraintException:
            # An event_id stored under another game: redo the batch, every id looked up.
            con.execute("ROLLBACK")
            seqr.rollback()
            con.execute("BEGIN TRANSACTION")
            plan = _with_known(seqr.plan(con, dec, lines, lookup_all=True), known)
            write_plan(con, plan, lines, source=source, first_line=first_line, started=started,
                       batch_id=batch_id)
        con.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(Exception):
            con.execute("ROLLBACK")
        seqr.rollback()
        raise
    summary.add(source, len(lines), plan)


def _with_known(plan: Plan, known: dict[int, Quarantined]) -> Plan:
    """The plan with the lines :func:`_known_bad` kept back added to its quarantine
    (their rows are already stored: writing them again adds nothing; the batch counts them)."""
    if known:
        plan.quarantined = sorted(plan.quarantined + list(known.values()), key=lambda q: q.index)
    return plan


def _known_bad(con: duckdb.DuckDBPyConnection, source: str, first_line: int,
               lines: Sequence[bytes]) -> dict[int, Quarantined]:
    """Lines of this stretch of ``source`` that an earlier ingest of the same file
    quarantined, byte for byte, with that verdict (the first one given).

    Why: the verdict on a line past a gap (``sequence_gap``) or at a taken seq depends
    on what the store held when it was read, so reading it again after the rest of its
    own file was stored could store it (a game written out of order in the file: a swap
    is tampering, EVENTS.md wants a game's lines in seq order) or quarantine it again
    under another reason, and the issue says "re-ingesting the same file changes
    nothing". The quarantine keeps the line, so nothing is lost.

    One exception keeps the way out for files ingested out of order (docs/events.md:
    day 2 before day 1): a ``sequence_gap`` line whose gap was filled later *from
    another source* (an event of its game below its seq, stored by a later batch of
    another file or by ``append``) is read afresh, and stored if it now fits. The
    same line in another file is always read afresh.

    And one for upgrades (docs/events.md: "upgrade rummyguard and re-ingest the same
    file"): a line kept back for what this release did not know (``future_version``,
    ``unknown_type``) that this release reads as an event is read afresh, with the lines of
    its game after it in this file (the ``sequence_gap`` and release verdicts behind it)."""
    revived = _revived_games(con, source, first_line, first_line + len(lines) - 1)
    rows = con.execute(
        "SELECT q.line_no, q.raw_sha256, q.reason, q.detail, q.event_id, q.game_id, q.seq, "
        "       q.reason = 'sequence_gap' AND EXISTS ("
        "         SELECT 1 FROM store.events e JOIN store.ingest_batches b "
        "           ON b.batch_id = e.batch_id "
        "         WHERE e.game_id = q.game_id AND e.seq < q.seq AND e.batch_id > q.batch_id "
        "           AND b.source <> q.source) AS filled_elsewhere "
        "FROM store.quarantine q "
        "WHERE q.source = ? AND q.line_no BETWEEN ? AND ? ORDER BY q.line_no, q.batch_id",
        [source, first_line, first_line + len(lines) - 1]).fetchall()
    out: dict[int, Quarantined] = {}
    seen: set[int] = set()
    for line_no, sha, reason, detail, event_id, game_id, seq, filled_elsewhere in rows:
        i = line_no - first_line
        if i in seen or hashlib.sha256(lines[i]).hexdigest() != sha:
            continue
        seen.add(i)  # the first verdict on this very line decides
        if filled_elsewhere or (game_id in revived and line_no >= revived[game_id]
                                and reason in (*_RELEASE_REASONS, "sequence_gap")):
            continue
        out[i] = Quarantined(i, reason, detail, event_id, game_id, seq)
    return out


#: quarantine verdicts that depend on the release, not on the line or the store: an
#: upgrade that knows the type or version turns them (:func:`_known_bad`)
_RELEASE_REASONS = ("future_version", "unknown_type")


def _revived_games(con: duckdb.DuckDBPyConnection, source: str, first: int,
                   last: int) -> dict[str, int]:
    """Games with a quarantined line in lines ``first..last`` of ``source`` whose first
    line there quarantined for a release reason this release reads as a valid event:
    game_id -> that line's number. (Only the first matters: while it stays unread, the
    game's later lines in the file are behind a gap anyway.)"""
    out: dict[str, int] = {}
    rows = con.execute(
        "SELECT line_no, raw_bytes, game_id FROM store.quarantine WHERE source = $s AND "
        "reason IN ('future_version', 'unknown_type') AND game_id IN (SELECT game_id FROM "
        "store.quarantine WHERE source = $s AND line_no BETWEEN $a AND $b) "
        "QUALIFY row_number() OVER (PARTITION BY game_id ORDER BY line_no) = 1",
        {"s": source, "a": first, "b": last}).fetchall()
    for line_no, raw, game_id in rows:
        try:
            check_event(orjson.loads(raw))
        except (EventError, orjson.JSONDecodeError, ValueError):
            continue
        out[game_id] = line_no
    return out


def _watch_parent(parent: int) -> None:
    """Worker initializer: exit when the ingesting process dies (even by SIGKILL), so no
    orphan keeps a core busy."""

    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(0)
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True).start()


def default_workers(total_bytes: int) -> int:
    """Decode in worker processes only with cores to spare and input big enough to pay
    their start-up. Measured on 2 cores: decoding inline while the writer thread runs
    DuckDB (which releases the GIL) is faster than a worker process, because DuckDB
    needs the second core (benchmarks/RESULTS.md)."""
    cores = os.cpu_count() or 1
    if total_bytes < 64 * 1024 * 1024 or cores < 4:
        return 0
    return min(4, cores - 2)


def _chunks(src: _Source, size: int) -> Iterator[list[bytes]]:
    chunk: list[bytes] = []
    for line in src.lines():
        chunk.append(line)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _merge(parts: list[Decoded]) -> Decoded:
    """Chunks -> one batch (indexes shifted to the batch)."""
    if len(parts) == 1:
        return parts[0]
    out = Decoded()
    for part in parts:
        base = out.n
        out.errors.extend((base + i, r, d) for i, r, d in part.errors)
        out.index.extend([base + i for i in part.index] if base else part.index)
        for name in COLUMNS[1:]:
            getattr(out, name).extend(getattr(part, name))
        out.n += part.n
    return out


class _Writer(threading.Thread):
    """Plans and commits batches in order on a thread of its own, so DuckDB's work
    (which releases the GIL) overlaps with decoding the next batch."""

    def __init__(self, store: EventStore, seqr: Sequencer, summary: IngestSummary,
                 progress: Progress | None) -> None:
        super().__init__(name="rummyguard-ingest-writer", daemon=True)
        self.store = store
        self.seqr = seqr
        self.summary = summary
        self.progress = progress
        self.queue: queue.Queue[tuple[Any, ...] | None] = queue.Queue(maxsize=1)
        self.error: BaseException | None = None
        #: set when run() returns. Waited on instead of join()/is_alive(): a join that a
        #: Ctrl-C interrupts makes CPython 3.11 (threading._wait_for_tstate_lock, the
        #: bpo-45274 branch) mark a thread that is still running as stopped, and the store
        #: would then close under the batch in hand (a traceback, then an abort)
        self.done = threading.Event()

    def run(self) -> None:
        try:
            self._run()
        finally:
            self.done.set()

    def _run(self) -> None:
        while True:
            item = self.queue.get()
            if item is None:
                return
            if self.error is not None:
                continue  # drain after a failure; the caller re-raises
            dec, lines, source, first_line, pos, size = item
            try:
                commit_batch(self.store, self.seqr, dec, lines, source=source,
                             first_line=first_line, summary=self.summary, sticky=True)
                if self.progress is not None:
                    self.progress(source, pos, size, self.summary)
            except BaseException as exc:
                self.error = exc

    def put(self, item: tuple[Any, ...]) -> None:
        if self.error is not None:
            raise self.error
        self.queue.put(item)

    def finish(self) -> None:
        try:
            self.queue.put(None)
            while not self.done.wait(0.1):
                pass
        except KeyboardInterrupt:  # Ctrl-C while the last batch commits: let it end first
            self.stop()
            raise
        if self.error is not None:
            raise self.error

    def stop(self) -> None:
        """End the thread after the batch in hand (committed or rolled back as a whole),
        skipping what is queued: the store may close only once no DuckDB call is running.
        Waits through further Ctrl-Cs: a batch is never cut off in the middle."""
        if self.error is None:
            self.error = KeyboardInterrupt()
        while not self.done.is_set():
            try:
                with contextlib.suppress(queue.Full):
                    self.queue.put_nowait(None)
                self.done.wait(0.1)
            except KeyboardInterrupt:
                continue


def ingest_files(
    store: EventStore,
    paths: Sequence[str | Path],
    *,
    batch_lines: int = DEFAULT_BATCH_LINES,
    workers: int | None = None,
    progress: Progress | None = None,
) -> IngestSummary:
    """Ingest JSONL files (plain or gzip) or Parquet files (one event per row,
    :mod:`.parquet_source`) into ``store``: one transaction per batch.

    ``workers`` decode processes (``None``: chosen by input size, 0: decode in this
    process). A crash between batches leaves every committed batch whole and nothing
    of the others; ingesting the same files again completes the store exactly
    (committed events come back as duplicates, quarantine rows are not repeated).
    """
    files = [Path(p) for p in paths]
    summary = IngestSummary()
    t0 = time.perf_counter()
    if workers is None:
        workers = default_workers(sum(p.stat().st_size for p in files))
    # Inline, a whole batch is decoded at once (no merge); workers get smaller chunks so
    # several are in flight.
    chunk = max(1, min(CHUNK_LINES, batch_lines)) if workers > 0 else max(1, batch_lines)
    pool = None
    if workers > 0:
        pool = ProcessPoolExecutor(
            workers, mp_context=get_context("spawn"),
            initializer=_watch_parent, initargs=(os.getpid(),),
        )
    writer = _Writer(store, Sequencer(), summary, progress)
    writer.start()
    try:
        for path in files:
            with _Source(path) as src:
                name = source_name(path)
                summary.open_file(name)
                _read_source(src, name, batch_lines, chunk, pool, workers, writer)
    except KeyboardInterrupt:
        writer.stop()  # the batch in hand ends whole; the queued ones are left for a re-run
        raise
    except BaseException:
        with contextlib.suppress(Exception):
            writer.finish()  # what was read before the failure is committed
        raise
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    writer.finish()
    summary.seconds = time.perf_counter() - t0
    return summary


def _read_source(
    src: _Source,
    source: str,
    batch_lines: int,
    chunk: int,
    pool: ProcessPoolExecutor | None,
    workers: int,
    writer: _Writer,
) -> None:
    """Read one file in chunks, decode them (inline or in the pool, at most a few in
    flight so memory stays bounded), and hand whole batches to the writer in order."""
    pending: deque[tuple[list[bytes], Future[Decoded] | Decoded, int]] = deque()
    parts: list[Decoded] = []
    acc: list[bytes] = []
    first_line = 1
    in_flight = 2 * workers + 1 if pool is not None else 0

    def take() -> None:
        nonlocal parts, acc, first_line
        lines, work, pos = pending.popleft()
        parts.append(work.result() if isinstance(work, Future) else work)
        acc.extend(lines)
        if len(acc) >= batch_lines:
            writer.put((_merge(parts), acc, source, first_line, pos, src.size))
            first_line += len(acc)
            parts, acc = [], []

    for lines in _chunks(src, chunk):
        work: Future[Decoded] | Decoded = (
            pool.submit(decode_lines, lines) if pool is not None else decode_lines(lines)
        )
        pending.append((lines, work, src.position()))
        while len(pending) > in_flight:
            take()
    while pending:
        take()
    if acc:
        writer.put((_merge(parts), acc, source, first_line, src.size, src.size))
    elif writer.progress is not None and first_line == 1:
        writer.progress(source, src.size, src.size, writer.summary)


def ingest_lines(
    store: EventStore,
    lines: Sequence[bytes],
    *,
    source: str = "<lines>",
    batch_lines: int = DEFAULT_BATCH_LINES,
) -> IngestSummary:
    """Ingest raw JSONL lines already in memory (tests, small feeds), in this thread."""
    summary = IngestSummary()
    t0 = time.perf_counter()
    seqr = Sequencer()
    for start in range(0, len(lines), batch_lines):
        part = list(lines[start : start + batch_lines])
        commit_batch(store, seqr, decode_lines(part), part, source=source,
                     first_line=start + 1, summary=summary)
    summary.seconds = time.perf_counter() - t0
    return summary
