"""The nightly scan, end to end: replay + facts -> features -> scores -> rings -> flags.

:func:`scan_store` runs it over a store and writes everything back (``fraud.*`` tables,
the ``moves``/``chip_flows``/``player_games``/``flags`` views, optional Parquet);
:func:`score_facts` is the part after the facts, shared with the evaluation.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import polars as pl

from .features import pair_features, player_features
from .flags import build_flags, write_flags
from .models import PAIR_MECHANISMS, FraudModel, unsupervised_scores
from .pipeline import Progress, load_facts, publish_views, run_facts, store_game_batches, write_parquet
from .rings import SHARED_DEVICE_WEIGHT, build_graph, find_rings

if TYPE_CHECKING:
    from ..events.store import EventStore


@dataclass
class ScanResult:
    games: int
    players: int
    pairs: int
    flags: pl.DataFrame
    timings: dict[str, float] = field(default_factory=dict)
    fact_rows: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        by_kind: dict[str, int] = {}
        for k in self.flags.get_column("subject_kind").to_list():
            by_kind[k] = by_kind.get(k, 0) + 1
        return {"games": self.games, "players": self.players, "pairs": self.pairs,
                "flags": self.flags.height, "flags_by_kind": by_kind,
                "fact_rows": self.fact_rows,
                "seconds": {k: round(v, 3) for k, v in self.timings.items()}}


def score_facts(con: duckdb.DuckDBPyConnection, model: FraudModel | None, *,
                threshold: float = 0.5) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame,
                                                 pl.DataFrame]:
    """(players, pairs, player_scores, pair_scores, flags) from the ``fraud.*`` facts.

    Both score frames carry ``anomaly`` and ``unseen`` (fraud/models.py). Without a
    model, "anything suspicious" is ranked by ``anomaly``, which for players is the
    evidence tail (the largest robust z of the evidence signals; session 5: it ranks
    bots and hidden-card cheaters far above the isolation forest it replaced), and
    ``unseen`` equals it. With a model, flags come from the mechanism probabilities and,
    after them, from the players ``beyond_tail`` (the training world's honest evidence
    tail, models.unseen_cut) that no mechanism flags; ``unseen`` (the larger of the
    ``any`` and anomaly percentiles) is returned for the analyst's own ranking and is what
    the evaluation's leave-one-mechanism-out scores (fraud/flags.py decides flags)."""
    players = player_features(con)
    pairs = pair_features(con)
    if model is not None:
        pscore, qscore = model.predict(players, pairs)
        mechs = [m for m in PAIR_MECHANISMS if m in qscore.columns]
        link = qscore.select(["p1", "p2", pl.max_horizontal(mechs).alias("link")]) if mechs else \
            qscore.select(["p1", "p2", pl.col("anomaly").alias("link")])
        link_cut = threshold
    else:
        pscore, qscore = unsupervised_scores(players, pairs)
        link = qscore.select(["p1", "p2", pl.col("anomaly").alias("link")])
        link_cut = 0.995
    shared = pairs.select(["p1", "p2", "shared_devices"]).filter(pl.col("shared_devices") > 0)
    # with a model, a shared device's link weighs what the model scores the pair, and a
    # ring is flagged when its links reach the flag threshold (fraud/rings.py)
    rings = find_rings(build_graph(link, "link", link_cut, shared,
                                   shared_weight=None if model is not None else SHARED_DEVICE_WEIGHT),
                       min_score=threshold if model is not None else 0.0)
    flags = build_flags(con, players, pairs, pscore, qscore, rings, supervised=model is not None,
                        threshold=threshold)
    return players, pairs, pscore, qscore, flags


def scan_store(store: EventStore, *, model: FraudModel | None = None, workers: int = 2,
               parquet_dir: str | Path | None = None, progress: Progress | None = None,
               on_total: Any = None, threshold: float = 0.5, batch_games: int = 400) -> ScanResult:
    """Scan every game of the store and write facts, features' flags and views back."""
    t0 = time.perf_counter()
    total, batches = store_game_batches(store, batch_games)
    if on_total is not None:
        on_total(total)
    tables = run_facts(batches, workers=workers if total > batch_games else 0, progress=progress)
    t1 = time.perf_counter()
    players, pairs, flags, timings = publish_scan(store.con, tables, model, threshold=threshold,
                                                  parquet_dir=parquet_dir)
    t2 = time.perf_counter()
    return ScanResult(
        games=total, players=players.height, pairs=pairs.height, flags=flags,
        timings={"replay_facts": t1 - t0, **timings, "total": t2 - t0},
        fact_rows={k: v.num_rows for k, v in tables.items()},
    )


def publish_scan(con: duckdb.DuckDBPyConnection, tables: dict[str, Any], model: FraudModel | None,
                 *, threshold: float = 0.5, parquet_dir: str | Path | None = None
                 ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, dict[str, float]]:
    """Replace the scan's output in the store — the ``fraud.*`` facts, their views and the
    flags scored from them — in **one transaction**; then write the Parquet copy (facts
    and ``flags.parquet``). Returns (players, pairs, flags, timings).

    Why one transaction (audit 38): the nightly scan replaces last night's output. Written
    table by table, a scan stopped while it scored (Ctrl-C, a crash, a full disk) left
    tonight's facts and views beside last night's flags, which ``rummyguard flags`` listed
    as current. Now a scan that does not finish leaves the previous run's output whole."""
    t0 = time.perf_counter()
    (threads,) = con.execute("SELECT current_setting('threads')").fetchone()  # type: ignore[misc]
    con.execute("BEGIN TRANSACTION")
    try:
        load_facts(con, tables)
        publish_views(con)
        t1 = time.perf_counter()
        players, pairs, _ps, _qs, flags = score_facts(con, model, threshold=threshold)
        t2 = time.perf_counter()
        write_flags(con, flags)
        con.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.Error):  # DuckDB aborted it itself: nothing was kept
            con.execute("ROLLBACK")
        with contextlib.suppress(duckdb.Error):  # the features' one thread (features._one_thread)
            con.execute(f"SET threads = {int(threads)}")
        raise
    t3 = time.perf_counter()
    if parquet_dir is not None:
        write_parquet({**tables, "flags": flags.to_arrow()}, parquet_dir)
    t4 = time.perf_counter()
    return players, pairs, flags, {"write_facts": t1 - t0, "features_scoring": t2 - t1,
                                   "write_flags": t3 - t2, "write_parquet": t4 - t3}


__all__ = ["ScanResult", "publish_scan", "scan_store", "score_facts"]
