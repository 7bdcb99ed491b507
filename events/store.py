"""The store: one DuckDB file holding the event log, append-only and tamper-evident.

Tables live in the schema ``store`` (the analyst views of :mod:`.views` live in
``main``, so ``events`` in a query means the upcast view, never the raw table):

``store.events``
    One row per stored event. ``raw`` is the line exactly as received (byte-exact
    JSON text); ``payload`` the payload as stored (original version); ``up_payload`` /
    ``up_v`` the payload upcast to the current version when the stored one is older
    (NULL otherwise); ``prev_hash`` / ``hash`` the chain links: the producer's when it
    chained the game, else computed at ingest. ``UNIQUE(event_id)``,
    ``UNIQUE(game_id, seq)``.
``store.games_chain``
    Per game: ``chained_by`` (``producer`` or ``ingest``), the next free seq and the
    last hash (the chain head). It is written in the same transaction as the events,
    so it also records how long each game was: a truncated game is caught here.
``store.quarantine``
    Every line that was not stored, with its source file, line number, reason code,
    detail and raw text (and bytes). Unique per (source, line, raw, reason), so
    re-ingesting a file adds nothing. ``head``: the named game's next free seq when the
    line was read (where it stood among the game's events, for the replay of the store;
    NULL in rows of older releases).
``store.ingest_batches``
    One row per committed batch (a transaction): source, line range, counts.

Originals are never rewritten. Reads (:meth:`EventStore.load_game`) upcast.
"""

from __future__ import annotations

import contextlib
import os
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pyarrow as pa

from .hashing import event_hash
from .ingest import (
    IngestSummary,
    Progress,
    Sequencer,
    decode_lines,
    ingest_files,
    ingest_lines,
    write_plan,
)
from .models import CURRENT_VERSION, GENESIS_HASH, IngestLinked
from .timestamps import ts_millis
from .upcast import upcast

SCHEMA_VERSION = 1

_DDL = """
CREATE SCHEMA IF NOT EXISTS store;
CREATE SEQUENCE IF NOT EXISTS store.batch_seq START 1;
CREATE TABLE IF NOT EXISTS store.meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS store.events (
    event_id   VARCHAR NOT NULL UNIQUE,
    game_id    VARCHAR NOT NULL,
    seq        INTEGER NOT NULL,
    type       VARCHAR NOT NULL,
    v          INTEGER NOT NULL,
    ts         TIMESTAMP NOT NULL,
    ts_text    VARCHAR NOT NULL,
    actor      VARCHAR NOT NULL,
    payload    JSON NOT NULL,
    up_payload JSON,
    up_v       INTEGER,
    prev_hash  VARCHAR NOT NULL,
    hash       VARCHAR NOT NULL,
    raw        VARCHAR NOT NULL,
    batch_id   BIGINT NOT NULL,
    UNIQUE (game_id, seq)
);
CREATE TABLE IF NOT EXISTS store.games_chain (
    game_id    VARCHAR PRIMARY KEY,
    chained_by VARCHAR NOT NULL,
    next_seq   INTEGER NOT NULL,
    last_hash  VARCHAR NOT NULL,
    batch_id   BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS store.quarantine (
    source      VARCHAR NOT NULL,
    line_no     BIGINT NOT NULL,
    reason      VARCHAR NOT NULL,
    detail      VARCHAR NOT NULL,
    raw         VARCHAR NOT NULL,
    raw_bytes   BLOB NOT NULL,
    raw_sha256  VARCHAR NOT NULL,
    event_id    VARCHAR,
    game_id     VARCHAR,
    seq         BIGINT,
    batch_id    BIGINT NOT NULL,
    received_at TIMESTAMP NOT NULL,
    head        BIGINT,
    UNIQUE (source, line_no, raw_sha256, reason)
);
-- the game's next free seq when ingest read the line (added after the first release:
-- NULL in rows written before it)
ALTER TABLE store.quarantine ADD COLUMN IF NOT EXISTS head BIGINT;
CREATE TABLE IF NOT EXISTS store.ingest_batches (
    batch_id     BIGINT PRIMARY KEY,
    source       VARCHAR NOT NULL,
    first_line   BIGINT NOT NULL,
    last_line    BIGINT NOT NULL,
    lines_read   BIGINT NOT NULL,
    stored       BIGINT NOT NULL,
    duplicates   BIGINT NOT NULL,
    quarantined  BIGINT NOT NULL,
    started_at   TIMESTAMP NOT NULL,
    committed_at TIMESTAMP NOT NULL
);
"""


class StoreError(Exception):
    """A store that cannot be opened or used (missing, locked, not a store)."""


class ConcurrencyError(StoreError):
    """``append`` lost an optimistic-concurrency race: the game's next seq is not the
    one the caller expected (another writer got there first). Reload and retry."""


class AppendRejected(StoreError):
    """``append`` refused an event (invalid, conflicting, or breaking the chain);
    ``reason`` is one of the quarantine reason codes of :data:`.ingest.REASONS`."""

    def __init__(self, reason: str, detail: str, seq: int | None = None) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail
        self.seq = seq


@dataclass(frozen=True, slots=True)
class Problem:
    """One integrity problem found by :meth:`EventStore.verify`."""

    game_id: str
    seq: int | None
    kind: str  # bad_hash | chain_break | gap | reorder | head_mismatch | envelope_mismatch
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"game_id": self.game_id, "seq": self.seq, "kind": self.kind,
                "detail": self.detail}


@dataclass
class VerifyReport:
    games: int
    events: int
    problems: list[Problem]

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "games_checked": self.games, "events_checked": self.events,
                "problems": [p.as_dict() for p in self.problems]}


#: schemas of the store; DuckDB names a database after its file, so a file called
#: ``store.duckdb`` would make ``store.events`` ambiguous (catalog or schema?)
RESERVED_STEMS = frozenset({"store", "fraud", "main", "system", "temp",
                            # DuckDB's own schemas: a catalog of that name makes every
                            # query of them ambiguous (audit 50)
                            "information_schema", "pg_catalog"})


def check_store_name(path: Path) -> None:
    """Refuse file names DuckDB would turn into a catalog clashing with our schemas."""
    stem = path.name.split(".", 1)[0]
    if stem.lower() in RESERVED_STEMS:
        raise StoreError(
            f"a store may not be called {path.name!r}: DuckDB names the database after the "
            f"file, which would clash with the schema {stem!r}; choose another name"
        )


def is_duckdb_file(path: Path) -> bool:
    """Whether ``path`` starts like a DuckDB database file (bytes 8..12 are ``DUCK``)."""
    with path.open("rb") as f:
        return f.read(12)[8:12] == b"DUCK"


def _connect(path: Path, read_only: bool, config: dict[str, Any], wait: float
             ) -> duckdb.DuckDBPyConnection:
    """Open the file, waiting up to ``wait`` seconds for another process's lock.

    An existing file that is not a DuckDB database is refused: DuckDB 2.x opens a JSON,
    CSV or Parquet file given as a database as an in-memory database with a view over
    it, so writes would be reported and lost."""
    check_store_name(path)
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:  # DuckDB takes UTF-8 paths only (it fails with bad_cast)
        raise StoreError(f"cannot open store {os.fsencode(path)!r}: DuckDB needs a path that "
                         "is valid UTF-8; rename the file or its folder") from None
    if path.is_file() and path.stat().st_size > 0 and not is_duckdb_file(path):
        raise StoreError(f"cannot open store {path}: not a DuckDB database file")
    deadline = time.monotonic() + wait
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only, config=config)
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower() or time.monotonic() >= deadline:
                raise StoreError(f"cannot open store {path}: {_one_line(exc)}") from None
            time.sleep(0.05)
        except duckdb.Error as exc:
            raise StoreError(f"cannot open store {path}: {_one_line(exc)}") from None


_EXPECTED_COLUMNS: dict[str, frozenset[str]] = {}


def _expected_columns() -> dict[str, frozenset[str]]:
    """The columns of each ``store.*`` table as this version creates them (read once from
    :data:`_DDL` run in memory, so the check cannot drift from the schema)."""
    if not _EXPECTED_COLUMNS:
        mem = duckdb.connect()
        try:
            mem.execute(_DDL)
            for table, column in mem.execute(
                "SELECT table_name, column_name FROM duckdb_columns() "
                "WHERE schema_name = 'store' AND database_name = current_database()"
            ).fetchall():
                _EXPECTED_COLUMNS[table] = _EXPECTED_COLUMNS.get(table, frozenset()) | {column}
        finally:
            mem.close()
    return _EXPECTED_COLUMNS


def _schema_mismatch(con: duckdb.DuckDBPyConnection) -> str | None:
    """What stops this version from using the file's ``store`` schema: a table of ours
    without a column this version reads or writes (audit 50: a store of an older schema,
    or another program's tables under our names, ended commands with a traceback, and
    write mode first added our other tables to the file). None: fine, or no store yet."""
    have: dict[str, set[str]] = {}
    for table, column in con.execute(
        "SELECT table_name, column_name FROM duckdb_columns() "
        "WHERE schema_name = 'store' AND database_name = current_database()"
    ).fetchall():
        have.setdefault(table, set()).add(column)
    for table, columns in sorted(_expected_columns().items()):
        if table in have:
            missing = sorted(columns - have[table])
            if table == "quarantine":  # added by a migration of _DDL itself
                missing = [c for c in missing if c != "head"]
            if missing:
                return f"its table store.{table} has no column {', '.join(missing)}"
    return None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


#: the stores this process has open, for :func:`interrupt_open_stores` (weak: a closed,
#: dropped store leaves by itself)
_OPEN_STORES: weakref.WeakSet[EventStore] = weakref.WeakSet()


def interrupt_open_stores() -> None:
    """Cancel the query each open store's connection is running (Ctrl-C: the CLI calls
    this from a thread, since DuckDB's own polling of Python signals sometimes misses
    one and a query would then run on)."""
    for store in list(_OPEN_STORES):
        with contextlib.suppress(Exception):  # closed, or nothing running: nothing to do
            store.con.interrupt()


class EventStore:
    """The event log in one DuckDB file. Use :meth:`open`; close it (or use ``with``).

    ``con`` is the DuckDB connection; other modules may create their own tables and
    views with it (see :func:`rummyguard.events.views.register_view`).
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path, read_only: bool) -> None:
        self.con = con
        self.path = path
        self.read_only = read_only
        _OPEN_STORES.add(self)

    # --- life cycle -----------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: str | Path,
        read_only: bool = False,
        *,
        wait: float = 30.0,
        config: dict[str, Any] | None = None,
    ) -> EventStore:
        """Open (and in write mode create) the store at ``path``.

        DuckDB lets one process write a file at a time; ``wait`` is how long to wait
        for another process to let go of it. A read-only open of a missing file, or
        of a file that is not a store, raises :class:`StoreError`.
        """
        path = Path(path)
        if read_only and not path.exists():
            raise StoreError(f"no store at {path} (ingest something first)")
        con = _connect(path, read_only, dict(config or {}), wait)
        store = cls(con, path, read_only)
        mismatch = _schema_mismatch(con)
        if mismatch is not None:  # before anything is written to it
            con.close()
            raise StoreError(f"{path} is not a store this version of rummyguard can use: "
                             f"{mismatch} (another program's file, or a store of another "
                             "version: ingest the logs into a new store)")
        if read_only:
            if not store._has_schema():
                con.close()
                raise StoreError(f"{path} is not a rummyguard store")
        else:
            store.ensure_schema()
        return store

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> EventStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _has_schema(self) -> bool:
        row = self.con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'store' "
            "AND table_name = 'events'"
        ).fetchall()
        return bool(row and row[0][0])

    def ensure_schema(self) -> None:
        """Create the base tables and the analyst views (idempotent), and bring the
        materialised upcasts up to the current catalog."""
        from .views import create_base_views

        self.con.execute(_DDL)
        self.con.execute(
            "INSERT INTO store.meta VALUES ('schema_version', ?) ON CONFLICT DO NOTHING",
            [str(SCHEMA_VERSION)],
        )
        create_base_views(self.con)
        self._refresh_upcasts()

    def _refresh_upcasts(self) -> None:
        """Re-upcast stored rows older than the current version whose materialised
        upcast is stale (a new upcaster was added since they were ingested)."""
        case = " ".join(f"WHEN '{t}' THEN {v}" for t, v in sorted(CURRENT_VERSION.items()))
        stale = self.con.execute(
            f"SELECT event_id, raw FROM store.events WHERE v < (CASE type {case} ELSE v END) "
            f"AND coalesce(up_v, v) < (CASE type {case} ELSE v END)"
        ).fetchall()
        for event_id, raw in stale:
            lifted = upcast(orjson.loads(raw))
            self.con.execute(
                "UPDATE store.events SET up_payload = ?, up_v = ? WHERE event_id = ?",
                [orjson.dumps(lifted["payload"]).decode(), lifted["v"], event_id],
            )

    # --- writing ----------------------------------------------------------------------------
    def ingest_files(
        self,
        paths: Sequence[str | Path],
        *,
        batch_lines: int | None = None,
        workers: int | None = None,
        progress: Progress | None = None,
    ) -> IngestSummary:
        """Ingest JSONL (or .gz) files; see :func:`rummyguard.events.ingest.ingest_files`."""
        kwargs: dict[str, Any] = {"workers": workers, "progress": progress}
        if batch_lines is not None:
            kwargs["batch_lines"] = batch_lines
        return ingest_files(self, paths, **kwargs)

    def ingest_lines(self, lines: Sequence[bytes], *, source: str = "<lines>") -> IngestSummary:
        """Ingest raw JSONL lines held in memory."""
        return ingest_lines(self, lines, source=source)

    def append(self, game_id: str, events: list[dict[str, Any]], expected_seq: int) -> int:
        """Append events of one game atomically, with optimistic concurrency.

        ``expected_seq`` is the seq the caller believes is the game's next free one
        (0 for a new game); if another writer moved the head, :class:`ConcurrencyError`
        is raised and nothing is written. Events must be valid, of ``game_id``, numbered
        ``expected_seq, expected_seq+1, ...`` and follow the game's chain mode (all with
        ``prev_hash``/``hash``, or none; unchained ones are chained here). Anything else
        raises :class:`AppendRejected` and writes nothing. Returns the new next seq.
        """
        if not events:
            return self._next_seq(game_id)
        lines = [orjson.dumps(e) for e in events]
        dec = decode_lines(lines)
        if dec.errors:
            index, reason, detail = dec.errors[0]
            raise AppendRejected(reason, detail, events[index].get("seq")
                                 if isinstance(events[index], dict) else None)
        for k, (gid, seq) in enumerate(zip(dec.game_id, dec.seq, strict=True)):
            if gid != game_id:
                raise AppendRejected("invalid", f"event {k} belongs to game {gid!r}", seq)
            if seq != expected_seq + k:
                raise AppendRejected(
                    "sequence_gap", f"event {k} has seq {seq}, expected {expected_seq + k}", seq)
        started = time.time()
        con = self.con
        seqr = Sequencer()
        try:
            con.execute("BEGIN TRANSACTION")
            try:
                head = self._next_seq(game_id)
                if head != expected_seq:
                    raise ConcurrencyError(
                        f"game {game_id!r}: next seq is {head}, not {expected_seq}")
                plan = seqr.plan(con, dec, lines)
                if plan.quarantined or plan.duplicates:
                    q = plan.quarantined[0] if plan.quarantined else None
                    if q is None:
                        raise AppendRejected("conflict_event_id", "an event_id is already stored")
                    raise AppendRejected(q.reason, q.detail, q.seq)
                write_plan(con, plan, lines, source="append", first_line=1, started=started)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        except (duckdb.TransactionException, duckdb.ConstraintException) as exc:
            # Another connection committed the same seq (or head) first.
            raise ConcurrencyError(f"game {game_id!r}: lost the race: {_one_line(exc)}") from None
        return expected_seq + len(events)

    def _next_seq(self, game_id: str) -> int:
        row = self.con.execute(
            "SELECT next_seq FROM store.games_chain WHERE game_id = ?", [game_id]
        ).fetchall()
        return int(row[0][0]) if row else 0

    # --- reading ----------------------------------------------------------------------------
    def game_ids(self, variant: str | None = None) -> list[str]:
        """Every stored game id, sorted, once; only games of ``variant`` if given (by
        their first GameCreated event: a second one, which the replay reports, neither
        lists the game twice nor under a second variant)."""
        if variant is None:
            rows = self.con.execute(
                "SELECT game_id FROM store.games_chain ORDER BY game_id").fetchall()
        else:
            rows = self.con.execute(
                "SELECT game_id FROM (SELECT game_id, payload FROM store.events "
                "WHERE type = 'GameCreated' "
                "QUALIFY row_number() OVER (PARTITION BY game_id ORDER BY seq) = 1) "
                "WHERE payload->>'variant' = ? ORDER BY game_id", [variant]).fetchall()
        return [r[0] for r in rows]

    def chained_by(self, game_id: str) -> str | None:
        """Who chained the game's stored events: ``producer``, ``ingest`` (the producer
        sent no hash fields), or None for a game the store does not hold."""
        row = self.con.execute(
            "SELECT chained_by FROM store.games_chain WHERE game_id = ?", [game_id]
        ).fetchone()
        return None if row is None else str(row[0])

    def load_game_for_replay(self, game_id: str) -> list[dict[str, Any]]:
        """:meth:`load_game` for a replay of the game: in a game the store chained itself
        each event is :class:`~rummyguard.events.models.IngestLinked`, so the replay
        checks those links as the store's own and judges the producer's chain as a replay
        of his file does (there the events have none)."""
        events = self.load_game(game_id)
        if events and self.chained_by(game_id) == "ingest":
            return [IngestLinked(e) for e in events]
        return events

    def load_game(self, game_id: str) -> list[dict[str, Any]]:
        """One game's events in seq order, upcast to the current versions, each a plain
        dict as in EVENTS.md with ``prev_hash`` and ``hash`` set (the producer's, or the
        ones computed at ingest). An unknown game gives ``[]``."""
        rows = self.con.execute(
            "SELECT raw, prev_hash, hash FROM store.events WHERE game_id = ? ORDER BY seq",
            [game_id],
        ).fetchall()
        return [event_from_row(raw, prev, h) for raw, prev, h in rows]

    def iter_games(
        self, batch_size: int = 500, *, variant: str | None = None,
        game_ids: Sequence[str] | None = None,
    ) -> Iterator[list[dict[str, Any]]]:
        """Yield whole games (each a list like :meth:`load_game`), in game_id order,
        fetching ``batch_size`` games per query so memory stays bounded."""
        ids = list(game_ids) if game_ids is not None else self.game_ids(variant)
        for start in range(0, len(ids), batch_size):
            chunk = ids[start : start + batch_size]
            self.con.register("_rg_ids", pa.table({"game_id": pa.array(chunk, pa.string())}))
            try:
                rows = self.con.execute(
                    "SELECT e.game_id, e.raw, e.prev_hash, e.hash FROM store.events e "
                    "SEMI JOIN _rg_ids i ON e.game_id = i.game_id ORDER BY e.game_id, e.seq"
                ).fetchall()
            finally:
                self.con.unregister("_rg_ids")
            by_game: dict[str, list[dict[str, Any]]] = {}
            for game_id, raw, prev, h in rows:
                by_game.setdefault(game_id, []).append(event_from_row(raw, prev, h))
            for game_id in chunk:
                if game_id in by_game:
                    yield by_game[game_id]

    def stream_games(self) -> Iterator[list[dict[str, Any]]]:
        """Yield every stored game (each a list like :meth:`load_game`) in one streamed
        pass over the log as it lies in the file, in no particular game order.

        Why: :meth:`iter_games` fetches 500 games per query, and each query scans the
        log wherever those games' rows lie; unless games lie in game_id order in the file
        (the simulator's stores), every query reads every row group: a whole-store reader
        that is quadratic in the store. Here each game is released as soon as all its rows
        (counted first, by one aggregate over ``game_id``) have been read, so memory holds
        only the games still being read. Callers that need an order sort what they keep
        (``verify`` sorts its records by game_id)."""
        counts = dict(self.con.execute(
            "SELECT game_id, count(*) FROM store.events GROUP BY game_id").fetchall())
        reader = self.con.sql(
            "SELECT game_id, seq, raw, prev_hash, hash FROM store.events").to_arrow_reader(65_536)
        pending: dict[str, list[tuple[int, str, str, str]]] = {}
        for batch in reader:
            columns = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
            for game_id, seq, raw, prev, h in zip(*columns, strict=True):
                rows = pending.setdefault(game_id, [])
                rows.append((seq, raw, prev, h))
                if len(rows) == counts.get(game_id):
                    del pending[game_id]
                    rows.sort(key=lambda r: r[0])
                    yield [event_from_row(raw, prev, h) for _seq, raw, prev, h in rows]
        # a game whose rows changed between the count and the pass (a writer on this very
        # connection; no other process writes while one holds the store): as it was read
        for game_id in sorted(pending):
            rows = sorted(pending[game_id], key=lambda r: r[0])
            yield [event_from_row(raw, prev, h) for _seq, raw, prev, h in rows]

    def quarantined(self, game_id: str) -> list[dict[str, Any]]:
        """The quarantined lines that name ``game_id``, by seq then source line.

        Why: ingest stores a game only up to its first unreadable, chain-breaking or
        missing event (what follows a gap is quarantined too, ``sequence_gap``), so the
        stored game alone can look like a clean, shorter game. A replay of the store
        reports these rows as the integrity findings a replay of the file would give
        (RULES.md §5: hash chain, sequence gap, duplicate...). Each row: ``seq`` (None if
        the line did not say), ``reason``, ``detail``, ``source``, ``line_no``.
        """
        rows = self.con.execute(
            "SELECT seq, reason, detail, source, line_no FROM store.quarantine "
            "WHERE game_id = ? ORDER BY seq NULLS FIRST, source, line_no", [game_id]
        ).fetchall()
        return [{"seq": seq, "reason": reason, "detail": detail, "source": source,
                 "line_no": line_no} for seq, reason, detail, source, line_no in rows]

    def counts(self) -> dict[str, int]:
        """Rows per table (for summaries and tests)."""
        out = {}
        for table in ("events", "games_chain", "quarantine", "ingest_batches"):
            row = self.con.execute(f"SELECT count(*) FROM store.{table}").fetchall()
            out[table] = int(row[0][0]) if row else 0
        return out

    # --- integrity ----------------------------------------------------------------------------
    def verify(self, game_id: str | None = None, *,
               progress: Callable[[int, int], None] | None = None) -> VerifyReport:
        """Re-hash every stored event and walk each game's chain.

        Reports, with game and seq: an event whose hash does not match its stored
        content (``bad_hash``), a ``prev_hash`` that is not the previous event's hash
        (``chain_break``), a missing seq (``gap``), an event stored at a seq other than
        the one it carries (``reorder``), envelope columns that disagree with the raw
        line (``envelope_mismatch``), and a chain head that disagrees with the events
        (``head_mismatch``: events dropped from the end, or added behind ingest's back).

        ``progress(done, total)`` is called after each block of rows read (events read,
        events the chain heads record): the command draws its bar from it.
        """
        where = "WHERE e.game_id = ?" if game_id is not None else ""
        params = [game_id] if game_id is not None else []
        heads = {
            g: (n, h, c) for g, n, h, c in self.con.execute(
                "SELECT game_id, next_seq, last_hash, chained_by FROM store.games_chain"
                + (" WHERE game_id = ?" if game_id is not None else ""), params
            ).fetchall()
        }
        # Read in storage order and streamed (no ORDER BY: sorting the whole log, raw lines
        # included, held it all in memory, 2.8 GB for 2.6M events): rows are gathered per
        # game and a game is checked as soon as it holds as many rows as its chain head
        # records, so memory holds only the games still being read. Rows of a game that
        # arrive after it was checked (rows added behind ingest's back) send it to a
        # second, ordered read of that game alone.
        reader = self.con.sql(
            f"SELECT {_VERIFY_COLUMNS} FROM store.events e {where}", params=params
        ).to_arrow_reader(65_536)
        pending: dict[str, list[tuple[Any, ...]]] = {}
        checked: dict[str, list[Problem]] = {}
        late: set[str] = set()
        events = 0
        total = sum(head[0] for head in heads.values())
        for batch in reader:
            columns = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
            if progress is not None:
                progress(events + batch.num_rows, max(total, events + batch.num_rows))
            for gid, *row in zip(*columns, strict=True):
                events += 1
                if gid in checked:
                    late.add(gid)
                    continue
                rows = pending.setdefault(gid, [])
                rows.append(tuple(row))
                head = heads.get(gid)
                if head is not None and len(rows) == head[0]:
                    checked[gid] = _verify_game(gid, pending.pop(gid), head)
        for gid, rows in pending.items():
            checked[gid] = _verify_game(gid, rows, heads.get(gid))
        for gid in late:
            rows = [tuple(r) for r in self.con.execute(
                f"SELECT {_VERIFY_COLUMNS} FROM store.events e WHERE e.game_id = ?", [gid]
            ).fetchall()]
            checked[gid] = _verify_game(gid, [r[1:] for r in rows], heads.get(gid))
        problems = [p for gid in sorted(checked) for p in checked[gid]]
        missing = sorted(set(heads) - set(checked))
        for g in missing:
            problems.append(Problem(g, 0, "head_mismatch",
                                    f"chain head records {heads[g][0]} events, the store holds none"))
        return VerifyReport(len(checked), events, problems)


#: the columns :meth:`EventStore.verify` reads, game_id first
_VERIFY_COLUMNS = (
    "e.game_id, e.seq, e.event_id, e.type, e.v, e.raw, e.prev_hash, e.hash, "
    "e.ts_text, epoch_ms(e.ts), e.actor, e.payload, e.up_payload, e.up_v"
)


def _verify_game(gid: str, rows: list[tuple[Any, ...]],
                 head: tuple[int, str, str] | None) -> list[Problem]:
    """Walk one game's chain over its stored ``rows`` (in any order: sorted by seq here,
    as ``UNIQUE(game_id, seq)`` makes seq a total order) and compare the end with the
    chain head ``head`` (next seq, last hash, chained_by), or report a missing head."""
    rows.sort(key=lambda r: r[0])
    state: dict[str, Any] = {"game": gid, "expected": 0, "prev": GENESIS_HASH,
                             "count": len(rows),
                             "chained_by": head[2] if head is not None else "ingest"}
    out: list[Problem] = []
    for seq, event_id, type_name, v, raw, prev, stored_hash, *columns in rows:
        out.extend(_check_row(state, gid, seq, event_id, type_name, v, raw, prev, stored_hash,
                              columns))
    if head is None:
        out.append(Problem(gid, None, "head_mismatch", "events stored without a chain head"))
    elif (head[0], head[1]) != (state["expected"], state["prev"]):
        out.append(Problem(
            gid, state["expected"], "head_mismatch",
            f"chain head records {head[0]} events ending in {head[1]:.12}…, the "
            f"store holds {state['count']} ending at seq {state['expected'] - 1} "
            f"({state['prev']:.12}…): events were dropped or added"))
    return out


def event_from_row(raw: str, prev: str, h: str) -> dict[str, Any]:
    event = orjson.loads(raw)
    event["prev_hash"] = prev
    event["hash"] = h
    try:
        lifted = upcast(event)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        # a raw line edited behind ingest's back into something the upcasters cannot
        # read: handed over as stored, so the replay reports it (LOG-CHAIN, LOG-EVENT)
        # exactly as it reports the same edit of a current-version line, not a crash
        return event
    if lifted is not event:
        # The replay cannot re-hash an upcast event (its hash covers the original), so
        # the original is re-hashed here; if it no longer matches, the `upcast_from`
        # mark goes and the replay's chain check reports the edit (LOG-CHAIN), as it
        # does for the same edit of a current-version line.
        try:
            intact = event_hash(event) == h
        except ValueError:
            intact = False
        if not intact:
            del lifted["upcast_from"]
    return lifted


def _check_columns(gid: str, seq: int, event: dict[str, Any], columns: list[Any]
                   ) -> list[Problem]:
    """The derived columns analysts query (``ts``, ``actor``, ``payload`` and the upcast
    ``up_payload``/``up_v`` behind the ``events`` view) must say what the raw line says:
    an edit of a column alone leaves the hashes intact but changes every SQL answer."""
    ts_text, ts_ms, actor, payload, up_payload, up_v = columns
    try:
        lifted = upcast(event) if event.get("v") != CURRENT_VERSION.get(event.get("type")) else None
        ok = (
            event.get("ts") == ts_text
            and ts_millis(ts_text) == ts_ms
            and event.get("actor") == actor
            and orjson.loads(payload) == event.get("payload")
            and (up_payload is None if lifted is None else
                 (orjson.loads(up_payload), up_v) == (lifted["payload"], lifted["v"]))
        )
    except Exception:  # a raw line edited into something upcast or parsing rejects
        ok = False
    if ok:
        return []
    return [Problem(gid, seq, "envelope_mismatch",
                    "ts, actor or payload columns differ from the stored raw line")]


def _check_row(
    state: dict[str, Any], gid: str, seq: int, event_id: str, type_name: str, v: int,
    raw: str, prev: str, stored_hash: str, columns: list[Any],
) -> list[Problem]:
    """Check one stored row against the chain walked so far (``state``) and its raw;
    ``columns`` are the derived columns :func:`_check_columns` compares with it."""
    out: list[Problem] = []
    expected = state["expected"]
    if seq > expected:  # reported at the first missing seq: where the log was cut
        missing = f"seq {expected}" if seq == expected + 1 else f"seqs {expected}..{seq - 1}"
        out.append(Problem(gid, expected, "gap",
                           f"{missing} missing ({seq - expected} event(s)); the next stored "
                           f"event is seq {seq}"))
    elif seq != expected:
        out.append(Problem(gid, seq, "gap",
                           f"expected seq {expected}, found seq {seq}: stored out of order"))
    try:
        event = orjson.loads(raw)
    except orjson.JSONDecodeError:
        out.append(Problem(gid, seq, "bad_hash", "stored raw line is no longer JSON"))
        state.update(expected=seq + 1, prev=stored_hash)
        return out
    if not isinstance(event, dict):
        out.append(Problem(gid, seq, "bad_hash", "stored raw line is no longer an object"))
        state.update(expected=seq + 1, prev=stored_hash)
        return out
    if event.get("seq") != seq:
        out.append(Problem(gid, seq, "reorder",
                           f"the event stored at seq {seq} says seq {event.get('seq')!r}"))
    if (event.get("game_id"), event.get("event_id"), event.get("type"), event.get("v")) != (
        gid, event_id, type_name, v
    ):
        out.append(Problem(gid, seq, "envelope_mismatch",
                           "envelope columns differ from the stored raw line"))
    if state["chained_by"] == "producer":
        if event.get("hash") != stored_hash or event.get("prev_hash") != prev:
            out.append(Problem(gid, seq, "envelope_mismatch",
                               "hash columns differ from the producer's hash fields"))
        body = event
    else:
        body = {**event, "prev_hash": prev}
    try:
        actual = event_hash(body)
    except ValueError as exc:
        actual = f"<{exc}>"
    if actual != stored_hash:
        out.append(Problem(gid, seq, "bad_hash",
                           f"hash does not match the stored content (stored {stored_hash:.12}…, "
                           f"recomputed {actual:.12}…)"))
    if prev != state["prev"]:
        out.append(Problem(gid, seq, "chain_break",
                           f"prev_hash {prev:.12}… is not the hash of the previous stored "
                           f"event ({state['prev']:.12}…)"))
    out.extend(_check_columns(gid, seq, event, columns))
    state.update(expected=seq + 1, prev=stored_hash)
    return out
