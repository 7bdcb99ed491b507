"""Running the facts map over a whole log, locally, on all cores.

The unit of work is one game (ARCHITECTURE.md "Scale"): the parent reads games' raw
JSON lines from the store (or JSON Lines files) in batches, a process pool runs
:func:`~rummyguard.fraud.facts.batch_facts_raw` on each batch, and the Arrow tables
come back to be concatenated. Raw lines, not parsed dicts, cross the process boundary
because strings pickle far cheaper than nested dicts.

Results are written to the store as tables in the schema ``fraud`` (``fraud.moves``,
``fraud.discards``, ...) plus the analyst views ``moves``, ``chip_flows`` and, when no
other module has defined it, ``player_games``; and optionally as Parquet files.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from ..events.gcpause import paused_gc
from ..events.views import register_view
from .facts import SCHEMAS, TABLES, batch_facts_raw

if TYPE_CHECKING:
    from ..events.store import EventStore

Progress = Callable[[int], None]  # called with the number of games just finished


def store_game_batches(store: EventStore, batch_games: int = 400) -> tuple[int, Iterator[list[list[str]]]]:
    """(number of games, iterator of batches of games as raw JSON lines in seq order).

    One pass over ``store.events`` in storage order (no sort, no per-batch lookup: a
    lookup per batch re-scans the table, quadratic at 100k games): lines are gathered
    per game and a game is released as soon as it holds the number of events its chain
    record says (``games_chain.next_seq``); games with gaps are released at the end.
    Memory holds only the games still being read — with a producer's log, a handful."""
    expected = dict(store.con.execute(
        "SELECT game_id, next_seq FROM store.games_chain").fetchall())

    def gen() -> Iterator[list[list[str]]]:
        pending: dict[str, list[tuple[int, str]]] = {}
        batch: list[list[str]] = []
        reader = store.con.sql("SELECT game_id, seq, raw FROM store.events").to_arrow_reader(65_536)
        for rb in reader:
            for gid, seq, raw in zip(rb.column(0).to_pylist(), rb.column(1).to_pylist(),
                                     rb.column(2).to_pylist(), strict=True):
                lines = pending.get(gid)
                if lines is None:
                    lines = pending[gid] = []
                lines.append((seq, raw))
                if len(lines) == expected.get(gid, -1):
                    del pending[gid]
                    lines.sort()
                    batch.append([r for _, r in lines])
                    if len(batch) == batch_games:
                        yield batch
                        batch = []
        for gid in sorted(pending):
            batch.append([r for _, r in sorted(pending[gid])])
            if len(batch) == batch_games:
                yield batch
                batch = []
        if batch:
            yield batch

    return len(expected), gen()


_GID = b'"game_id":"'


def _line_game(line: bytes) -> str:
    """The game id of one JSON line, found without parsing the whole event (the key is
    written unescaped by every producer we know; anything unusual is parsed)."""
    i = line.find(_GID)
    if i >= 0:
        j = line.find(b'"', i + len(_GID))
        gid = line[i + len(_GID):j]
        if b"\\" not in gid:
            return gid.decode()
    return str(orjson.loads(line)["game_id"])


def jsonl_game_batches(paths: Sequence[str | Path], batch_games: int = 400
                       ) -> tuple[int, Iterator[list[list[str]]]]:
    """Games from JSON Lines files (any order across games, seq order within a game).

    A simulated or exported log holds each game's lines together; then the files are
    streamed twice (count, then batches) and never held in memory — a 30k-game world is
    ~1 GB of text. A log that interleaves games falls back to grouping in memory."""
    seen: set[str] = set()
    contiguous = True
    last = None
    for path in paths:
        with open(path, "rb") as fh:
            for line in fh:
                if not line.strip():
                    continue
                gid = _line_game(line)
                if gid != last:
                    if gid in seen:
                        contiguous = False
                        break
                    seen.add(gid)
                    last = gid
        if not contiguous:
            break
    if contiguous:
        return len(seen), _stream_batches(paths, batch_games)
    games: dict[str, list[tuple[int, str]]] = {}
    for path in paths:
        with open(path, "rb") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                ev = orjson.loads(line)
                games.setdefault(ev["game_id"], []).append((ev["seq"], line.decode()))
    ids = sorted(games)

    def gen() -> Iterator[list[list[str]]]:
        for start in range(0, len(ids), batch_games):
            yield [[raw for _, raw in sorted(games[g])] for g in ids[start:start + batch_games]]

    return len(ids), gen()


def _stream_batches(paths: Sequence[str | Path], batch_games: int) -> Iterator[list[list[str]]]:
    batch: list[list[str]] = []
    last = None
    for path in paths:
        with open(path, "rb") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                gid = _line_game(line)
                if gid != last:
                    if len(batch) == batch_games:
                        yield batch
                        batch = []
                    batch.append([])
                    last = gid
                batch[-1].append(line.decode())
    if batch:
        yield batch


def _concat(parts: list[dict[str, pa.Table]]) -> dict[str, pa.Table]:
    out = {}
    for name in TABLES:
        tables = [p[name] for p in parts if p[name].num_rows]
        out[name] = pa.concat_tables(tables) if tables else SCHEMAS[name].empty_table()
    return out


def _batch_facts(batch: list[list[str]]) -> dict[str, pa.Table]:
    """One batch's facts with the cyclic GC paused (events/gcpause.py): a batch is
    tens of thousands of event dicts and fact rows, none in a reference cycle, and the
    collector's scans over them cost ~10 % of the map."""
    with paused_gc():
        return batch_facts_raw(batch)


def run_facts(batches: Iterable[list[list[str]]], *, workers: int = 0,
              progress: Progress | None = None) -> dict[str, pa.Table]:
    """Map the facts over batches of games; ``workers`` 0 = in this process."""
    parts: list[dict[str, pa.Table]] = []
    if workers <= 0:
        for batch in batches:
            parts.append(_batch_facts(batch))
            if progress:
                progress(len(batch))
        return _concat(parts)
    ctx = mp.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        pending: deque[tuple[Future[dict[str, pa.Table]], int]] = deque()
        for batch in batches:
            pending.append((pool.submit(_batch_facts, batch), len(batch)))
            while len(pending) > 2 * workers:
                fut, n = pending.popleft()
                parts.append(fut.result())
                if progress:
                    progress(n)
        while pending:
            fut, n = pending.popleft()
            parts.append(fut.result())
            if progress:
                progress(n)
    return _concat(parts)


MOVES_VIEW = "SELECT * FROM fraud.moves"
CHIP_FLOWS_VIEW = "SELECT * FROM fraud.chip_flows"
SESSIONS_VIEW = "SELECT * FROM fraud.sessions"
PLAYER_GAMES_VIEW = "SELECT * FROM fraud.player_games"


def load_facts(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table]) -> None:
    """(Re)create ``fraud.<table>`` from the Arrow tables (sorted: byte-stable output)."""
    con.execute("CREATE SCHEMA IF NOT EXISTS fraud")
    for name, tbl in tables.items():
        con.register("_rg_fact", tbl)
        try:
            # game_id, seq first (the clustering analysts query by), then every other
            # column: a total order, so rows that share (game_id, seq) — one per player
            # in round_ends, per target in discards — cannot come out in the order
            # DuckDB's threads happen to finish in.
            first = ["game_id", "seq"] if "seq" in tbl.column_names else ["game_id", "player"]
            keys = first + [c for c in tbl.column_names if c not in first]
            order = ", ".join(f'"{c}"' for c in keys)
            con.execute(f"CREATE OR REPLACE TABLE fraud.{name} AS SELECT * FROM _rg_fact "
                        f"ORDER BY {order}")
        finally:
            # in an aborted transaction (fraud.scan.publish_scan) DuckDB refuses this too:
            # the first error is the one to report
            with contextlib.suppress(duckdb.TransactionException):
                con.unregister("_rg_fact")


def publish_views(con: duckdb.DuckDBPyConnection) -> None:
    """The analyst views over the facts: ``moves``, ``chip_flows``, ``sessions``, ``player_games`` (the
    last only if nobody else defined it — the replay's verify may own that name)."""
    register_view(con, "moves", MOVES_VIEW)
    register_view(con, "chip_flows", CHIP_FLOWS_VIEW)
    register_view(con, "sessions", SESSIONS_VIEW)
    row = con.execute(
        "SELECT sql FROM duckdb_views() WHERE schema_name = 'main' AND view_name = 'player_games'"
    ).fetchall()
    if not row or "fraud.player_games" in (row[0][0] or ""):
        register_view(con, "player_games", PLAYER_GAMES_VIEW)


def write_parquet(tables: dict[str, pa.Table], directory: str | Path) -> list[Path]:
    """One Parquet file per fact table (``DIR/<table>.parquet``), each written whole.

    A file goes to a temporary name beside it and is renamed once complete: a disk that
    fills up midway leaves the earlier file (or none), never a truncated Parquet file a
    reader would fail on later."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for name, tbl in tables.items():
        path = out / f"{name}.parquet"
        part = out / f".{name}.parquet.{os.getpid()}.part"
        try:
            pq.write_table(tbl, part, compression="zstd")
            part.replace(path)
        finally:
            part.unlink(missing_ok=True)
        files.append(path)
    return files


def memory_db(tables: dict[str, pa.Table]) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB holding the facts as ``fraud.*`` (evaluation, tests)."""
    con = duckdb.connect()
    load_facts(con, tables)
    return con


__all__ = [
    "jsonl_game_batches",
    "load_facts",
    "memory_db",
    "publish_views",
    "run_facts",
    "store_game_batches",
    "write_parquet",
]
