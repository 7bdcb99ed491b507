"""Parquet export of the log: Hive-partitioned by variant and date, whole games per
partition, rows clustered by ``game_id, seq``.

Layout: ``DIR/variant=<variant>/date=<YYYY-MM-DD>/part-0.parquet``. A game's partition
is decided once per game (its GameCreated's variant and the date of its GameCreated
``ts``), so a game that runs past midnight is never split. A game whose log holds a
second GameCreated (stored, being a valid event; the replay reports it as LOG-GAME) is
placed by its first one, by ``seq``: one partition per game, each event written once. Games without a GameCreated
(a truncated or partial log) go to ``variant=unknown`` and the date of their first event.
Each file is written by its own ``COPY (... ORDER BY game_id, seq)``, so the order inside
a file is guaranteed, and the same store gives the same files.

Any engine reads it with Hive partitioning on: DuckDB ``read_parquet('DIR/**/*.parquet',
hive_partitioning = true)``, Polars ``scan_parquet('DIR/**/*.parquet',
hive_partitioning=True)``, Ray Data, Spark, Trino.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

_SAFE = re.compile(r"[A-Za-z0-9_-]{1,32}")

#: Columns of the exported files (payload is the current version, as in the view).
EXPORT_COLUMNS = """
    e.event_id, e.game_id, e.seq, e.type, e.v, e.stored_v, e.ts, e.ts_text, e.actor,
    CAST(e.payload AS VARCHAR) AS payload, CAST(e.stored_payload AS VARCHAR) AS stored_payload,
    e.prev_hash, e.hash, e.chained_by, e.raw
"""

_PARTS = """
SELECT c.game_id,
       coalesce(g.payload->>'variant', 'unknown') AS variant,
       strftime(coalesce(g.ts, f.first_ts), '%Y-%m-%d') AS date
FROM store.games_chain c
LEFT JOIN (SELECT game_id, payload, ts FROM store.events WHERE type = 'GameCreated'
           QUALIFY row_number() OVER (PARTITION BY game_id ORDER BY seq) = 1) g
       ON g.game_id = c.game_id
LEFT JOIN (SELECT game_id, min(ts) AS first_ts FROM store.events GROUP BY game_id) f
       ON f.game_id = c.game_id
"""


class ExportError(Exception):
    """The export cannot be written (target not empty, bad partition value)."""


@dataclass
class ExportSummary:
    directory: Path
    files: int
    rows: int
    games: int
    partitions: list[dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        return {"directory": str(self.directory), "files": self.files, "rows": self.rows,
                "games": self.games, "partitions": self.partitions}


def _prepare(out: Path, overwrite: bool) -> None:
    if out.exists() and not out.is_dir():
        raise ExportError(f"{out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not overwrite:
            raise ExportError(f"{out} is not empty (use --overwrite to replace an earlier export)")
        for child in out.iterdir():
            if not (child.is_dir() and child.name.startswith("variant=")):
                raise ExportError(f"{out} holds {child.name}, not an export; refusing to clear it")
        for child in out.iterdir():
            shutil.rmtree(child)
    out.mkdir(parents=True, exist_ok=True)


def export_parquet(con: duckdb.DuckDBPyConnection, out: str | Path, *,
                   overwrite: bool = False,
                   progress: Callable[[int, int], None] | None = None) -> ExportSummary:
    """Write the store behind ``con`` (with its views) as partitioned Parquet under ``out``.

    ``progress(games_written, games)`` is called after each partition file."""
    out = Path(out)
    _prepare(out, overwrite)
    con.execute(f"CREATE OR REPLACE TEMP TABLE _rg_parts AS {_PARTS}")
    try:
        partitions = con.execute(
            "SELECT variant, date, count(*) FROM _rg_parts GROUP BY ALL ORDER BY variant, date"
        ).fetchall()
        summary = ExportSummary(out, 0, 0, 0, [])
        total = sum(games for _v, _d, games in partitions)
        for variant, date, games in partitions:
            if not (_SAFE.fullmatch(variant) and _SAFE.fullmatch(date)):
                raise ExportError(f"unsafe partition value {variant!r}/{date!r}")
            folder = out / f"variant={variant}" / f"date={date}"
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / "part-0.parquet"
            con.execute(
                f"COPY (SELECT {EXPORT_COLUMNS} FROM main.events e "
                f"JOIN _rg_parts p USING (game_id) "
                f"WHERE p.variant = '{variant}' AND p.date = '{date}' "
                f"ORDER BY e.game_id, e.seq) "
                f"TO '{_sql_path(target)}' (FORMAT parquet, COMPRESSION zstd)"
            )
            rows = con.execute(
                f"SELECT count(*) FROM read_parquet('{_sql_path(target)}')").fetchall()[0][0]
            summary.files += 1
            summary.rows += rows
            summary.games += games
            summary.partitions.append(
                {"variant": variant, "date": date, "games": games, "rows": rows,
                 "file": str(target.relative_to(out))})
            if progress is not None:
                progress(summary.games, total)
    finally:
        con.execute("DROP TABLE IF EXISTS _rg_parts")
    return summary


def _sql_path(path: Path) -> str:
    return str(path.resolve()).replace("'", "''")
