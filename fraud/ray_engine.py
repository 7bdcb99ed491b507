"""The scan past one machine: replay + facts as Ray Data ``map_batches`` over the Parquet
export, then the same aggregations and scoring as the local engine.

ARCHITECTURE.md "Scale": the unit of work is one game, so the map is the same pure
per-game code the local engine runs (:func:`~rummyguard.fraud.facts.batch_facts_raw` for
the facts, :func:`~rummyguard.replay.engine.replay` for the findings); everything after
the map (loading the facts into DuckDB, features, scoring, rings, flags) *is* the local
code, on the driver, over facts that are small next to the log. Same input, same flags.

Whole games, and why not "one block per file"
---------------------------------------------
The export (:mod:`rummyguard.events.export`) puts each game in exactly one file, sorted
by ``game_id, seq``. It is tempting to map one block per file with ``batch_size=None``,
but Ray Data does not promise that: a read task reads a *group* of files
(``np.array_split`` of the fragments over the read parallelism) and yields Arrow batches
sized from ``DataContext.target_max_block_size`` (128 MiB by default), so one file
becomes many blocks cut at arbitrary rows and one block can hold the tail of one file
and the head of another (ray-project/ray#33179: ``num_blocks != len(input_files)``).
Relying on it would split games silently when a partition grows past a block.

So completeness is *proved*, not assumed. Before the map, the driver counts each
game's events in the export (one DuckDB pass over the ``game_id`` column: the
manifest). The map takes whatever block Ray hands it (``batch_size=None``,
``batch_format="pyarrow"``), groups its rows by game, and processes a game only when
the block holds all of its events (row count == manifest count; ``(game_id, seq)`` is
unique in the store, hence in the export). Rows of games a block boundary cut are
returned untouched (kind ``partial``); the driver gathers them — at most a few games
per block, since files are sorted by game — and runs the very same function on them
once reassembled. No game is ever processed from a fragment, and there is no shuffle.

The map runs in an actor pool (a callable class), not in tasks fused with the read: a
fused read+map runs each read task's group of files in one task, so one big partition
(a busy variant-day) would use one core; separate actors take the blocks of one file in
parallel, and each actor fetches the manifest once. Blocks are sized so each actor gets
about four (:func:`auto_block_bytes`, from the files' footers): Ray's default 128 MiB
would give a few hundred MB of export to one or two actors, and much smaller blocks
would send more cut games to the driver. The export must be on a path every node reads
(a shared filesystem); the results come back to the driver, which holds the facts in
memory as the local engine does.

Ray is optional (``pip install 'rummyguard[ray]'``): it is imported only when a Ray scan
runs, and a missing install is one :class:`RayUnavailable` line.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import duckdb
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..events.export import export_parquet
from ..events.store import event_from_row
from ..replay.engine import GameRecord, Results, replay
from ..replay.findings import Finding
from ..replay.verify import (
    VerifyRun,
    attach_bad_lines,
    check_tables,
    read_store_bad_lines,
    save_run,
)
from .facts import SCHEMAS, TABLES, batch_facts_raw
from .scan import ScanResult, publish_scan

if TYPE_CHECKING:
    from ..events.store import EventStore
    from .models import FraudModel

#: columns the map reads from the export (the raw line is what the local engine maps)
INPUT_COLUMNS = ["game_id", "seq", "raw", "prev_hash", "hash"]
#: kinds of the map's output rows besides the fact tables
GAMES = "games"      # one verification record per game (JSON), for the findings
PARTIAL = "partial"  # input rows of games a block boundary cut, reassembled on the driver
BLOCK = "block"      # one row per block mapped: its row count (statistics)
#: the map's output: one row per kind per block, the kind's table as Arrow IPC bytes
OUT_SCHEMA = pa.schema([("kind", pa.string()), ("data", pa.large_binary())])
_RECORD_SCHEMA = pa.schema([("game_id", pa.string()), ("record", pa.large_binary())])


class RayUnavailable(RuntimeError):
    """Ray (the ``ray`` extra) is not installed, or the cluster asked for cannot be joined."""


class ExportMismatch(RuntimeError):
    """The Parquet export does not hold whole games (it was not written by
    ``rummyguard export``, or was changed after)."""


def require_ray() -> ModuleType:
    """Import Ray (with Ray Data) or raise :class:`RayUnavailable` in one line."""
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise RayUnavailable(
            f"the Ray engine needs Ray Data ({exc.name or exc}): pip install 'rummyguard[ray]'"
        ) from None
    return ray


# --- the per-block function (runs in Ray workers; pure, no Ray import) ---------------------

def _export_pattern(parquet_dir: str | Path) -> str | None:
    """The export's files as a ``read_parquet`` glob (SQL-quoted); None when it has none
    (the export of an empty store)."""
    if not any(Path(parquet_dir).rglob("*.parquet")):
        return None
    return str(Path(parquet_dir).resolve() / "**" / "*.parquet").replace("'", "''")


def game_manifest(con: duckdb.DuckDBPyConnection, parquet_dir: str | Path) -> pa.Table:
    """``(game_id, n)``: each game's event count in the export, sorted by game_id."""
    pattern = _export_pattern(parquet_dir)
    if pattern is None:
        return pa.table({"game_id": pa.array([], pa.string()), "n": pa.array([], pa.int64())})
    return con.sql(
        f"SELECT game_id, count(*) AS n FROM read_parquet('{pattern}', hive_partitioning = false) "
        f"GROUP BY game_id ORDER BY game_id").to_arrow_table()


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _from_ipc(data: bytes) -> pa.Table:
    return pa.ipc.open_stream(pa.py_buffer(data)).read_all()


def _pack(tables: dict[str, pa.Table]) -> pa.Table:
    kinds = [k for k, t in tables.items() if t.num_rows]
    return pa.Table.from_arrays(
        [pa.array(kinds, pa.string()), pa.array([_ipc(tables[k]) for k in kinds], pa.large_binary())],
        schema=OUT_SCHEMA)


def verification_record(events: list[dict[str, Any]]) -> bytes:
    """One game's replay verdict as JSON: what ``verify`` keeps of a
    :class:`~rummyguard.replay.engine.GameRecord`, plus the GameCreated payload the
    cross-game rule (CL-NEXT) needs."""
    record = replay(events)
    first = events[0]
    created = {**first["payload"], "ts": first["ts"]} if first["type"] == "GameCreated" else None
    return orjson.dumps({
        "game_id": record.game_id, "variant": record.variant, "halted": record.halted,
        "findings": [[f.seq, f.rule, f.kind, f.message] for f in record.findings],
        "winners": record.results.winners, "net": record.results.net,
        "scores": record.results.scores, "events_read": record.events_read,
        "last_seq": record.last_seq, "chained": record.chained, "created": created,
        "finished": record.finished,
    })


def process_games(rows: pa.Table, *, verify: bool = True) -> dict[str, pa.Table]:
    """Facts and verification records (empty without ``verify``) of the whole games in
    ``rows``, which must be sorted by ``game_id, seq`` and hold every event of each game."""
    ids = rows.column("game_id").to_pylist()
    raws = rows.column("raw").to_pylist()
    prevs = rows.column("prev_hash").to_pylist()
    hashes = rows.column("hash").to_pylist()
    games: list[list[str]] = []
    bounds: list[tuple[str, int, int]] = []
    start = 0
    for i in range(1, len(ids) + 1):
        if i == len(ids) or ids[i] != ids[start]:
            games.append(raws[start:i])
            bounds.append((ids[start], start, i))
            start = i
    out = batch_facts_raw(games) if games else {t: SCHEMAS[t].empty_table() for t in TABLES}
    # one row per game either way: the driver counts games by it
    records = [verification_record([event_from_row(raws[k], prevs[k], hashes[k]) for k in range(a, b)])
               if verify else b"" for _, a, b in bounds]
    out[GAMES] = pa.Table.from_arrays(
        [pa.array([g for g, _, _ in bounds], pa.string()), pa.array(records, pa.large_binary())],
        schema=_RECORD_SCHEMA)
    return out


def split_block(block: pa.Table, expected: dict[str, int]) -> tuple[pa.Table, pa.Table]:
    """(rows of the games ``block`` holds whole, rows of the games it holds in part), each
    sorted by ``game_id, seq``; ``expected`` maps a game to its event count in the export."""
    block = block.select(INPUT_COLUMNS).sort_by([("game_id", "ascending"), ("seq", "ascending")])
    counts = block.group_by("game_id").aggregate([("seq", "count")])
    whole = []
    for gid, n in zip(counts.column("game_id").to_pylist(), counts.column("seq_count").to_pylist(),
                      strict=True):
        want = expected.get(gid)
        if want is None or n > want:
            raise ExportMismatch(f"game {gid!r}: {n} rows in one block, the export's count is {want}")
        if n == want:
            whole.append(gid)
    mask = pc.is_in(block.column("game_id"), value_set=pa.array(whole, pa.string()))
    return block.filter(mask), block.filter(pc.invert(mask))


def expected_counts(manifest: pa.Table, game_ids: pa.Array | pa.ChunkedArray) -> dict[str, int]:
    """The manifest's event count of each of ``game_ids`` (absent: not in the export)."""
    mine = manifest.filter(pc.is_in(manifest.column("game_id"), value_set=pc.unique(game_ids)))
    return dict(zip(mine.column("game_id").to_pylist(), mine.column("n").to_pylist(), strict=True))


def map_block(block: pa.Table, manifest: pa.Table, *, verify: bool = True) -> pa.Table:
    """The map: whole games of ``block`` -> packed fact tables and verification
    records; the rest -> packed ``partial`` rows for the driver."""
    whole, partial = split_block(block, expected_counts(manifest, block.column("game_id")))
    out = process_games(whole, verify=verify)
    out[PARTIAL] = partial
    out[BLOCK] = pa.table({"rows": pa.array([block.num_rows], pa.int64())})
    return _pack(out)


class GameMapper:
    """The ``map_batches`` callable class: one per actor, holding the manifest."""

    def __init__(self, manifest: pa.Table | list[Any], verify: bool) -> None:
        if isinstance(manifest, list):  # [ObjectRef]: fetched once per actor
            import ray

            manifest = ray.get(manifest[0])
        assert isinstance(manifest, pa.Table)
        self.manifest = manifest
        self.verify = verify

    def __call__(self, block: pa.Table) -> pa.Table:
        return map_block(block, self.manifest, verify=self.verify)


# --- the driver ----------------------------------------------------------------------------

@dataclass
class MapOutput:
    """What the distributed map returns to the driver."""

    tables: dict[str, pa.Table]
    run: VerifyRun | None
    games: int
    blocks: int
    boundary_games: int


def records_to_run(records: pa.Table) -> VerifyRun:
    """A :class:`VerifyRun` from the map's verification records, with the cross-game
    rule (CL-NEXT) applied on the driver, exactly as ``verify_games`` does."""
    run = VerifyRun()
    for data in records.column("record").to_pylist():
        d = orjson.loads(data)
        findings = [Finding(seq, rule, kind, message) for seq, rule, kind, message in d["findings"]]
        run.records.append(GameRecord(
            d["game_id"], d["variant"], findings, d["halted"],
            Results(d["winners"], d["net"], d["scores"]), [], d["events_read"], d["last_seq"],
            None, d["chained"], d["finished"]))
        if d["created"] is not None:
            run.created[d["game_id"]] = d["created"]
    check_tables(run)
    run.records.sort(key=lambda r: r.game_id)
    return run


def add_store_bad_lines(con: duckdb.DuckDBPyConnection, run: VerifyRun) -> None:
    """Add the store's quarantined lines to ``run`` as LOG-EVENT findings, exactly as
    ``rummyguard verify --db`` reports them.

    The export holds the stored events only, and ingest stores a game up to its first
    bad line: without this, a game with a tampered event replays as a clean, shorter
    game, and saving the run would overwrite the LOG-EVENT findings ``verify`` saved."""
    read_store_bad_lines(con, run)
    attach_bad_lines(run)


def _gather(parts: dict[str, list[pa.Table]], kind: str, schema: pa.Schema) -> pa.Table:
    tables = [t for t in parts.get(kind, []) if t.num_rows]
    if not tables:
        return schema.empty_table()
    # Blocks finish in any order: a stable sort by game restores the local engine's row
    # order (games in id order, each game's rows as its replay emitted them).
    return pa.concat_tables(tables).sort_by("game_id")


def auto_block_bytes(parquet_dir: str | Path, actors: int) -> int:
    """A block size giving each map actor about four blocks (1 MiB .. 128 MiB): Ray Data's
    default 128 MiB would hand a nightly export of a few hundred MB to one or two actors.
    Estimated from the files' footers (uncompressed size of the columns read)."""
    total = 0
    for path in Path(parquet_dir).rglob("*.parquet"):
        meta = pq.ParquetFile(path).metadata
        for g in range(meta.num_row_groups):
            rg = meta.row_group(g)
            total += sum(rg.column(c).total_uncompressed_size for c in range(rg.num_columns)
                         if rg.column(c).path_in_schema in INPUT_COLUMNS)
    return int(min(128 * 2**20, max(2**20, total // (4 * actors))))


def run_map(ray: ModuleType, parquet_dir: str | Path, manifest: pa.Table, *, verify: bool = True,
            concurrency: int | None = None, target_block_bytes: int | None = None,
            progress: bool = False) -> MapOutput:
    """Run the map over the export on the connected Ray cluster."""
    ctx = ray.data.DataContext.get_current()
    saved = (ctx.enable_progress_bars, ctx.target_max_block_size)
    cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
    actors = max(1, min(concurrency or cpus, cpus))
    ctx.enable_progress_bars = progress
    ctx.target_max_block_size = target_block_bytes or auto_block_bytes(parquet_dir, actors)
    try:
        ds = ray.data.read_parquet(
            str(Path(parquet_dir).resolve()),
            num_cpus=0.1,  # reading is light next to the replay
        ).select_columns(INPUT_COLUMNS).map_batches(
            GameMapper,
            # the ref inside a list: fetched by each actor, not pinned as a constructor argument
            fn_constructor_kwargs={"manifest": [ray.put(manifest)], "verify": verify},
            batch_size=None, batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(min_size=1, max_size=actors),
            # one logical CPU stays free for Ray Data's own file listing and read tasks,
            # or they could wait forever behind the actors
            num_cpus=max(0.0, (cpus - 1) / actors),
        )
        parts: dict[str, list[pa.Table]] = {}
        for out in ds.iter_batches(batch_size=None, batch_format="pyarrow", prefetch_batches=0):
            for kind, data in zip(out.column("kind").to_pylist(), out.column("data").to_pylist(),
                                  strict=True):
                parts.setdefault(kind, []).append(_from_ipc(data))
        blocks = len(parts.get(BLOCK, []))
    finally:
        ctx.enable_progress_bars, ctx.target_max_block_size = saved
    # games cut by block boundaries: reassembled here, then the same function
    boundary = 0
    if parts.get(PARTIAL):
        partial = _gather(parts, PARTIAL, parts[PARTIAL][0].schema)
        expected = expected_counts(manifest, partial.column("game_id"))
        boundary = len(expected)
        whole, rest = split_block(partial, expected)
        if rest.num_rows:
            missing = rest.column("game_id")[0].as_py()
            raise ExportMismatch(f"game {missing!r}: the export holds fewer events than it counted")
        for kind, table in process_games(whole, verify=verify).items():
            parts.setdefault(kind, []).append(table)
    tables = {name: _gather(parts, name, SCHEMAS[name]) for name in TABLES}
    records = _gather(parts, GAMES, _RECORD_SCHEMA)
    run = records_to_run(records) if verify else None
    games = pc.count_distinct(records.column("game_id")).as_py()
    if games != records.num_rows:
        raise ExportMismatch("a game was processed twice: the export repeats a game across files")
    return MapOutput(tables, run, games, blocks, boundary)


@contextlib.contextmanager
def ray_session(address: str | None = None, num_cpus: int | None = None,
                object_store_memory: int | None = None) -> Iterator[ModuleType]:
    """Ray, connected: to ``address`` (a running cluster, or ``"auto"``), to the session
    this process already has, or to a local one started here (and shut down after)."""
    ray = require_ray()
    started = False
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                  "configure_logging": False}
        if address is None:
            kwargs.update(num_cpus=num_cpus, object_store_memory=object_store_memory)
        try:
            ray.init(address=address, **kwargs)
        except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
            # no cluster at the address, a malformed address, a refused handshake: the
            # user's to fix, said in one line (README: user errors are one line, exit 2)
            where = f"the Ray cluster at {address!r}" if address else "a local Ray"
            raise RayUnavailable(f"cannot start or join {where}: {' '.join(str(exc).split())}"
                                 ) from None
        started = True
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


@dataclass
class RayScanResult(ScanResult):
    """A :class:`~rummyguard.fraud.scan.ScanResult` plus what the map's replay verified."""

    run: VerifyRun | None = None
    blocks: int = 0
    boundary_games: int = 0
    engine: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        out = super().summary()
        if self.run is not None:
            out["verify"] = self.run.summary()
        out["engine"] = {"name": "ray", "blocks": self.blocks, "boundary_games": self.boundary_games,
                         **self.engine}
        return out


def scan_parquet_ray(
    parquet_dir: str | Path, *, con: duckdb.DuckDBPyConnection | None = None,
    address: str | None = None, num_cpus: int | None = None, model: FraudModel | None = None,
    threshold: float = 0.5, verify: bool = True, parquet_out: str | Path | None = None,
    concurrency: int | None = None, target_block_bytes: int | None = None,
    object_store_memory: int | None = None, progress: bool = False,
    store_quarantine: bool = False,
) -> RayScanResult:
    """Scan a ``rummyguard export --parquet`` directory on Ray.

    The facts, the ``fraud.*`` tables, the views and the flags are written to ``con``
    exactly as :func:`~rummyguard.fraud.scan.scan_store` writes them (an in-memory
    DuckDB when ``con`` is None); with ``verify`` the replay's findings are saved too
    (``store.replay_*``, views ``findings`` and ``player_games``, as ``rummyguard verify``
    does; ``store_quarantine``: ``con`` is the store the export was taken from, and its
    quarantined lines are LOG-EVENT findings, as ``verify --db`` reports them). ``address`` connects to a running cluster (each node needs
    ``pip install 'rummyguard[ray]'``); without it a local Ray with ``num_cpus`` starts and
    stops here, unless this process is already connected.
    """
    t0 = time.perf_counter()
    if not Path(parquet_dir).is_dir():
        raise FileNotFoundError(f"no Parquet export at {parquet_dir}")
    con = con if con is not None else duckdb.connect()
    manifest = game_manifest(con, parquet_dir)
    t1 = time.perf_counter()
    if manifest.num_rows == 0:  # an empty store's export: 0 games, 0 flags, as the local scan
        t2 = t1
        mapped = _empty_map(verify)
        cpus = 0.0
    else:
        with ray_session(address, num_cpus, object_store_memory) as ray:
            t2 = time.perf_counter()
            mapped = run_map(ray, parquet_dir, manifest, verify=verify, concurrency=concurrency,
                             target_block_bytes=target_block_bytes, progress=progress)
            cpus = ray.cluster_resources().get("CPU", 0)
    t3 = time.perf_counter()
    if mapped.games != manifest.num_rows:
        raise ExportMismatch(f"the map returned {mapped.games} games, the export holds "
                             f"{manifest.num_rows}")
    tables = mapped.tables
    if mapped.run is not None:  # the verify results: their own transaction (save_run)
        if store_quarantine:
            add_store_bad_lines(con, mapped.run)
        save_run(con, mapped.run)
    # the facts, views and flags: one transaction, as the local scan's (publish_scan)
    players, pairs, flags, timings = publish_scan(con, tables, model, threshold=threshold,
                                                  parquet_dir=parquet_out)
    t4 = time.perf_counter()
    return RayScanResult(
        games=mapped.games, players=players.height, pairs=pairs.height, flags=flags,
        timings={"manifest": t1 - t0, "ray_start": t2 - t1, "replay_facts": t3 - t2,
                 **timings, "total": t4 - t0},
        fact_rows={k: v.num_rows for k, v in tables.items()},
        run=mapped.run, blocks=mapped.blocks, boundary_games=mapped.boundary_games,
        engine={"cpus": cpus, "address": address or "local"},
    )


def _empty_map(verify: bool) -> MapOutput:
    """What the map returns for an export with no games."""
    tables = {name: SCHEMAS[name].empty_table() for name in TABLES}
    run = records_to_run(_RECORD_SCHEMA.empty_table()) if verify else None
    return MapOutput(tables, run, 0, 0, 0)


def check_export_matches(con: duckdb.DuckDBPyConnection, parquet_dir: str | Path) -> None:
    """Raise :class:`ExportMismatch` unless the export holds exactly the store's events.

    ``--from-parquet`` publishes the export's scan as the store's: an export taken before
    the last ingest, or another store's, would put other games' facts, flags and findings
    in this store. Compared row by row on (game_id, seq, event_id, hash): every stored event
    has a hash (the producer's chain, or the one the store built at ingest) over its content."""
    pattern = _export_pattern(parquet_dir)
    source = (f"SELECT game_id, seq, event_id, hash FROM read_parquet('{pattern}', "
              "hive_partitioning = false)" if pattern is not None else
              "SELECT game_id, seq, event_id, hash FROM main.events WHERE false")
    stored = "SELECT game_id, seq, event_id, hash FROM main.events"
    try:
        only_store, only_export = con.execute(
            f"SELECT (SELECT count(*) FROM ({stored} EXCEPT ALL {source})), "
            f"(SELECT count(*) FROM ({source} EXCEPT ALL {stored}))").fetchone()  # type: ignore[misc]
    except duckdb.Error as exc:
        raise ExportMismatch(f"{parquet_dir} is not a `rummyguard export --parquet` export "
                             f"({' '.join(str(exc).split())[:200]})") from None
    if only_store or only_export:
        raise ExportMismatch(
            f"the export at {parquet_dir} is not this store's events as they are now "
            f"({only_store} stored events are not in it, {only_export} of its rows are not "
            "in the store: an older export, or another store's); export again with "
            f"`rummyguard export --parquet {parquet_dir} --overwrite`")


def scan_store_ray(store: EventStore, *, parquet_in: str | Path | None = None,
                   **kwargs: Any) -> RayScanResult:
    """``rummyguard scan --engine ray``: scan the store's games on Ray, writing the
    results into the store. The map reads ``parquet_in`` (an existing export of this
    store, e.g. on storage the cluster sees) or, without it, a fresh export into a
    temporary directory (fine for a local Ray; a remote cluster needs a shared path)."""
    if parquet_in is not None:
        if Path(parquet_in).is_dir():
            check_export_matches(store.con, parquet_in)
        return scan_parquet_ray(parquet_in, con=store.con, store_quarantine=True, **kwargs)
    with tempfile.TemporaryDirectory(prefix="rummyguard-export-") as tmp:
        export_parquet(store.con, tmp, overwrite=True)
        return scan_parquet_ray(tmp, con=store.con, store_quarantine=True, **kwargs)


__all__ = [
    "ExportMismatch",
    "GameMapper",
    "RayScanResult",
    "RayUnavailable",
    "add_store_bad_lines",
    "auto_block_bytes",
    "check_export_matches",
    "expected_counts",
    "game_manifest",
    "map_block",
    "process_games",
    "ray_session",
    "records_to_run",
    "require_ray",
    "run_map",
    "scan_parquet_ray",
    "scan_store_ray",
    "split_block",
    "verification_record",
]
