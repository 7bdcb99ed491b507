"""Analyst views over the store, and the read-only connection analysts get.

Views live in DuckDB's ``main`` schema (the raw tables are in ``store``), so an analyst
writes ``SELECT ... FROM events`` and gets current-version payloads. This module creates
the base views ``events``, ``games``, ``quarantine`` and ``ingest_batches`` (documented
in docs/sql.md); other modules add theirs (``moves``, ``player_games``, ``chip_flows``,
``findings``, ``flags``) with :func:`register_view` on a writable store, e.g.::

    with EventStore.open(path) as store:
        register_view(store.con, "moves", "SELECT ... FROM events WHERE ...")

:func:`connect_readonly` opens the file read-only with external access disabled and the
configuration locked: queries cannot write, ATTACH, COPY TO, read or list files,
install or load extensions, or turn any of that back on.
"""

from __future__ import annotations

import contextlib
import re
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb

from .interrupts import watch_sigint

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")

EVENTS_VIEW = """
SELECT e.event_id, e.game_id, e.seq, e.type,
       coalesce(e.up_v, e.v) AS v,
       e.v AS stored_v,
       e.ts, e.ts_text, e.actor,
       coalesce(e.up_payload, e.payload) AS payload,
       e.payload AS stored_payload,
       e.prev_hash, e.hash, c.chained_by, e.batch_id, e.raw
FROM store.events e JOIN store.games_chain c USING (game_id)
"""

#: One row per game, whatever the log holds: a second ``GameCreated`` or ``GameEnded``
#: (which ingest stores, being valid events, and the replay reports as LOG-GAME /
#: C-CLAIM) must not duplicate the game's row, so each is the game's first by ``seq``:
#: the game is what its first GameCreated set up, and it ended at its first GameEnded.
GAMES_VIEW = """
WITH agg AS (
    SELECT game_id, count(*) AS event_count, min(ts) AS first_ts, max(ts) AS last_ts,
           max(seq) AS last_seq
    FROM store.events GROUP BY game_id
)
SELECT c.game_id,
       g.payload->>'variant' AS variant,
       g.payload->>'table_id' AS table_id,
       CAST(g.payload->'seats' AS VARCHAR[]) AS seats,
       CAST(g.payload->>'dealer' AS INTEGER) AS dealer,
       CAST(g.payload->>'stake' AS BIGINT) AS stake,
       g.ts AS started_at,
       x.ts AS ended_at,
       coalesce(a.event_count, 0) AS event_count,
       a.first_ts, a.last_ts, a.last_seq,
       c.chained_by
FROM store.games_chain c
LEFT JOIN agg a USING (game_id)
LEFT JOIN (SELECT * FROM store.events WHERE type = 'GameCreated'
           QUALIFY row_number() OVER (PARTITION BY game_id ORDER BY seq) = 1) g
       ON g.game_id = c.game_id
LEFT JOIN (SELECT * FROM store.events WHERE type = 'GameEnded'
           QUALIFY row_number() OVER (PARTITION BY game_id ORDER BY seq) = 1) x
       ON x.game_id = c.game_id
"""

QUARANTINE_VIEW = """
SELECT source, line_no, reason, detail, raw, event_id, game_id, seq, batch_id, received_at
FROM store.quarantine
"""

BATCHES_VIEW = "SELECT * FROM store.ingest_batches"

BASE_VIEWS: dict[str, str] = {
    "events": EVENTS_VIEW,
    "games": GAMES_VIEW,
    "quarantine": QUARANTINE_VIEW,
    "ingest_batches": BATCHES_VIEW,
}


class QueryError(Exception):
    """A query the analyst connection refused or DuckDB could not run (one line)."""


def register_view(con: duckdb.DuckDBPyConnection, name: str, sql: str) -> None:
    """Create or replace the view ``main.<name>`` as ``sql`` (needs a writable store).

    Views are how analysis tables are exposed: they stay in the store file, so the
    read-only ``rummyguard sql`` connection sees them.
    """
    if not _NAME.fullmatch(name):
        raise ValueError(f"bad view name {name!r}: letters, digits and _ only")
    con.execute(f'CREATE OR REPLACE VIEW main."{name}" AS {sql}')


def create_base_views(con: duckdb.DuckDBPyConnection) -> None:
    for name, sql in BASE_VIEWS.items():
        register_view(con, name, sql)


#: The settings of the analyst connection (DuckDB 2.x names).
READONLY_CONFIG: dict[str, Any] = {
    "enable_external_access": False,
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "allow_community_extensions": False,
    # No temp directory: DuckDB adds its default one (``<store>.tmp/``) to the allowed
    # directories even with external access off, so a query could COPY TO it and read
    # files in it whenever it exists (a killed spill, a concurrent writer). A query that
    # would spill to disk fails with DuckDB's out-of-memory error instead.
    "temp_directory": "",
    "lock_configuration": True,
}


def connect_readonly(path: str | Path) -> duckdb.DuckDBPyConnection:
    """Open the store for analysts: read-only, no file or network access, locked.

    Raises :class:`QueryError` (one line) if the file is missing, locked by a writer,
    or not a store.
    """
    path = Path(path)
    if not path.is_file():
        raise QueryError(f"no store at {path} (run `rummyguard ingest` first)")
    from .store import StoreError, check_store_name

    try:
        check_store_name(path)
    except StoreError as exc:
        raise QueryError(str(exc)) from None
    # The session's time zone is UTC, whatever the machine's: the store's TIMESTAMPs are
    # UTC, and a TIMESTAMPTZ (`ts::TIMESTAMPTZ`, `to_timestamp(...)`, `now()`) would
    # otherwise be read, printed and bucketed by day in the machine's zone. DuckDB takes
    # `TimeZone` only once ICU is loaded, after connect: so set it, then lock. GLOBAL, as
    # a second connection to the file in this process shares the (then locked) instance.
    try:
        con = duckdb.connect(str(path), read_only=True,
                             config={**READONLY_CONFIG, "lock_configuration": False})
    except duckdb.Error as exc:
        raise QueryError(f"cannot open store {path}: {one_line(exc)}") from None
    try:
        with contextlib.suppress(duckdb.CatalogException):  # no ICU: no zone but UTC anyway
            if con.execute("SELECT current_setting('TimeZone')").fetchall() != [("UTC",)]:
                con.execute("SET GLOBAL TimeZone = 'UTC'")
        if con.execute("SELECT current_setting('lock_configuration')").fetchall() != [(True,)]:
            con.execute("SET GLOBAL lock_configuration = true")
    except duckdb.Error as exc:
        con.close()
        raise QueryError(f"cannot open store {path}: {one_line(exc)}") from None
    row = con.execute(
        "SELECT count(*) FROM duckdb_views() WHERE schema_name = 'main' AND view_name = 'events'"
    ).fetchall()
    if not row or not row[0][0]:
        con.close()
        raise QueryError(f"{path} is not a rummyguard store")
    return con


def one_line(exc: BaseException) -> str:
    """DuckDB messages span lines (caret diagrams); analysts get the first sentence."""
    text = str(exc).strip()
    first = text.split("\n\n", 1)[0]
    return " ".join(first.split())


def run_query(con: duckdb.DuckDBPyConnection, query: str) -> tuple[list[str], list[tuple]]:
    """Run ``query``; return column names and rows, or raise :class:`QueryError` with a
    clear one-line reason (a refused write / ATTACH / COPY / file read says so)."""
    with query_errors(con):
        columns, cursor = open_query(con, query)
        return columns, cursor.fetchall() if columns else []


#: statements that change the store: refused as a write whatever DuckDB's own error says
_WRITES = frozenset({duckdb.StatementType.INSERT, duckdb.StatementType.UPDATE,
                     duckdb.StatementType.DELETE})


def open_query(con: duckdb.DuckDBPyConnection, query: str) -> tuple[list[str], Any]:
    """Check that ``query`` is one statement and start it: its column names (none for a
    statement that returns no rows) and the cursor to fetch its rows from, in batches
    (``fetchmany``: DuckDB streams them, so a big result is never held whole). Call it,
    and fetch, inside :func:`query_errors`."""
    if not query.strip().strip(";").strip():
        raise QueryError("empty query: give one SQL statement, e.g. \"SELECT * FROM games\"")
    try:
        # Several statements would all run and only the last one's rows would show.
        statements = con.extract_statements(query)
    except duckdb.Error:
        statements = None  # a syntax error: executing says where, in DuckDB's words
    count = 1 if statements is None else len(statements)
    if count == 0:
        raise QueryError("empty query: it holds only comments; give one SQL statement")
    if count > 1:
        raise QueryError(f"one statement at a time: the query holds {count} statements "
                         "separated by ';' and only the last one's rows would show")
    kind = statements[0].type if statements else None
    try:
        rel = con.execute(query)
    except duckdb.Error as exc:
        if kind in _WRITES:
            # a write to a view fails on DuckDB's "Can only delete from base table" or "is
            # not an table": the refusal a write to a table gets, said the same way
            raise QueryError(f"refused: the store is opened read-only; {kind.name} changes "
                             f"nothing here ({one_line(exc)})") from None
        raise
    if rel is None or rel.description is None:  # a statement that returns no rows
        return [], rel
    return [d[0] for d in rel.description], rel


@contextlib.contextmanager
def query_errors(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Run a query and fetch its rows with Ctrl-C cancelling it and every DuckDB error
    turned into a one-line :class:`QueryError` (a refusal says why)."""
    try:
        with _interrupt_on_ctrl_c(con):
            yield
    except duckdb.InterruptException:
        raise QueryError("interrupted: the query was cancelled (Ctrl-C)") from None
    except RuntimeError as exc:  # DuckDB's own SIGINT polling raises this, no duckdb.Error
        if "interrupted" not in str(exc).lower():
            raise
        raise QueryError("interrupted: the query was cancelled (Ctrl-C)") from None
    except duckdb.PermissionException as exc:
        raise QueryError(
            f"refused: the analyst connection has no file or network access ({one_line(exc)})"
        ) from None
    except duckdb.Error as exc:
        message = one_line(exc)
        if "read-only" in message:
            raise QueryError(f"refused: the store is opened read-only ({message})") from None
        if "configuration has been locked" in message:
            raise QueryError(
                f"refused: the analyst connection's settings are locked ({message})") from None
        raise QueryError(message) from None


@contextlib.contextmanager
def _interrupt_on_ctrl_c(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Ctrl-C cancels the running query, every time (:func:`.interrupts.watch_sigint`
    calls ``con.interrupt()``), and the query ends in DuckDB's InterruptException, which
    :func:`run_query` turns into one line: Python's own SIGINT handler is set aside for
    the query, so no KeyboardInterrupt lands in the middle of the fetch."""
    stop = watch_sigint(con.interrupt)
    if stop is None:
        yield
        return
    old_handler = signal.signal(signal.SIGINT, lambda *_: None)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old_handler)
        stop()
