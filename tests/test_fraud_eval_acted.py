"""The evaluation's "acted positives" view: a labelled subject that never acted in the
scored world is left out of that view (neither positive nor negative), one that acted
counts, and everyone else keeps his place as a negative.

The labels and scores are built by hand, so the expected sets and metrics are known
exactly; the last test runs the whole ``evaluate`` on a small played world (real facts)
with fixed scores, to check the wiring into the report and its Markdown.
"""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
import polars as pl

from rummyguard.fraud.evaluate import (
    World,
    acted_metrics,
    acted_positives,
    evaluate,
    metrics,
    render_markdown,
    seating,
)
from rummyguard.fraud.facts import batch_facts
from rummyguard.fraud.labels import parse_labels
from rummyguard.fraud.pipeline import memory_db
from tests.test_fraud import make_world


def _mech(pid: str, mech: str, gid: str, role: str = "member") -> dict[str, Any]:
    return {"player_id": pid, "mechanism": mech, "group_id": gid, "intensity": 0.5, "role": role}


def _plant(game: str, seq: int, pid: str, mech: str, gid: str) -> dict[str, Any]:
    return {"game_id": game, "seq": seq, "player_id": pid, "mechanism": mech, "group_id": gid}


#: who sat where in the scored world ("gX" is a game that is not in it)
SEATS = {
    "g1": {"a", "b", "x"},          # a feeds b
    "g2": {"c", "d"},               # c and d sit together; nothing planted for them
    "g3": {"r1", "r2", "y"},        # ring r: r1 acts with r2 seated, r3 absent
    "g4": {"r3", "y", "z"},         # r3 acts, but no ring partner is seated
    "g5": {"h1", "x", "y"},         # the hidden-card cheater h1 acts
    "g6": {"h2", "x", "y"},         # h2 plays, never acts
    "g7": {"h3", "x"},              # h3 plays; his only planted act is in gX
    "g8": {"c", "x"},               # c without d
}

LABELS: dict[str, Any] = {
    "seed": 7, "args": {}, "version": 1, "players": [], "hard_negatives": [], "faults": [],
    "mechanisms": [
        _mech("a", "card_feeding", "f1", "feeder"), _mech("b", "card_feeding", "f1", "receiver"),
        _mech("c", "card_feeding", "f2", "feeder"), _mech("d", "card_feeding", "f2", "receiver"),
        _mech("r1", "soft_play", "s1"), _mech("r2", "soft_play", "s1"),
        _mech("r3", "soft_play", "s1"),
        _mech("h1", "hidden_card", "h1", "cheater"), _mech("h2", "hidden_card", "h2", "cheater"),
        _mech("h3", "hidden_card", "h3", "cheater"),
    ],
    "planted": [
        _plant("g1", 5, "a", "card_feeding", "f1"),
        _plant("g1", 9, "a", "card_feeding", "f1"),
        # c acts where d is not seated: not an act of the pair (c, d)
        _plant("g8", 2, "c", "card_feeding", "f2"),
        _plant("g3", 4, "r1", "soft_play", "s1"),
        _plant("g4", 6, "r3", "soft_play", "s1"),
        _plant("g5", 3, "h1", "hidden_card", "h1"),
        _plant("gX", 3, "h3", "hidden_card", "h3"),
    ],
}


def test_labels_keep_who_acted_where() -> None:
    truth = parse_labels(LABELS)
    assert truth.acted_games[("card_feeding", "f1", "a")] == {"g1"}
    assert truth.acted_games[("card_feeding", "f2", "c")] == {"g8"}
    assert truth.pair_groups[("card_feeding", ("a", "b"))] == {"f1"}
    assert truth.pair_groups[("soft_play", ("r1", "r3"))] == {"s1"}
    assert ("g1", 9) in truth.planted and truth.planted_by[("g1", 9)] == {"a"}


def test_acted_positives_rule() -> None:
    truth = parse_labels(LABELS)
    acted = acted_positives(truth, SEATS)
    # the pair that acted counts; the labelled pair that sat together but never acted not
    assert acted["card_feeding"] == {("a", "b")}
    assert acted["card_feeding:players"] == {"a", "b"}
    # ring: r1 acted with r2 seated -> (r1, r2); r3 acted alone -> no pair of his
    assert truth.pair_pos["soft_play"] == {("r1", "r2"), ("r1", "r3"), ("r2", "r3")}
    assert acted["soft_play"] == {("r1", "r2")}
    assert acted["soft_play:players"] == {"r1", "r2"}
    # players: an act in a game of the scored world counts; one outside it does not
    assert acted["hidden_card"] == {"h1"}
    assert acted["bot"] == set() and acted["chip_dumping"] == set()
    # a world without g1 (say, its game was not scored): a's acts no longer count
    assert acted_positives(truth, {k: v for k, v in SEATS.items() if k != "g1"})["card_feeding"] \
        == set()


def test_acted_metrics_drop_the_never_acting_pair() -> None:
    truth = parse_labels(LABELS)
    acted = acted_positives(truth, SEATS)
    keys = [("a", "b"), ("c", "d"), ("a", "x"), ("b", "x"), ("x", "y"), ("c", "x")]
    # the never-acting labelled pair (c, d) scores highest, the acting one (a, b) second
    s = np.array([0.8, 0.9, 0.3, 0.2, 0.1, 0.05])
    labelled = truth.pair_pos["card_feeding"]
    full = metrics(np.array([k in labelled for k in keys]), s, boots=0)
    assert full["positives"] == 2 and full["n"] == 6
    assert full["pr_auc"] == 1.0  # both positives on top: (c, d) counts as a hit here

    view = acted_metrics(keys, labelled, acted["card_feeding"], {"model": s, "flat": s * 0},
                         boots=20)
    assert (view["labelled"], view["acted"], view["dropped"]) == (2, 1, 1)
    m = view["model"]
    assert m["positives"] == 1 and m["n"] == 5  # (c, d) is gone, not a negative
    assert m["pr_auc"] == 1.0 and m["p_at_10"] == 0.2 and m["recall_at_1pct_fpr"] == 1.0
    # had (c, d) stayed as a negative, it would outrank the positive
    as_negative = metrics(np.array([k == ("a", "b") for k in keys]), s, boots=0)
    assert as_negative["pr_auc"] == 0.5
    assert view["flat"]["positives"] == 1 and view["flat"]["n"] == 5


def test_acted_metrics_nobody_acted() -> None:
    keys = ["h2", "x", "y"]
    view = acted_metrics(keys, {"h2"}, set(), {"model": np.array([0.9, 0.1, 0.2])})
    assert view == {"labelled": 1, "acted": 0, "dropped": 1, "unscored": 0, "absent": True}


def test_seating_reads_player_games() -> None:
    con = duckdb.connect()
    con.sql("CREATE SCHEMA fraud")
    con.sql("CREATE TABLE fraud.player_games AS SELECT * FROM (VALUES ('g1', 'a'), ('g1', 'b'), "
            "('g2', 'a')) t(game_id, player)")
    assert seating(con) == {"g1": {"a", "b"}, "g2": {"a"}}


class _FixedScores:
    """A fitted model's interface (``predict``, ``supervised``, ``trained_on``) with
    scores set by hand: the view must not depend on what a model learned."""

    def __init__(self, players: pl.DataFrame, pairs: pl.DataFrame, top: tuple[str, str]) -> None:
        self.supervised = {"card_feeding": None}
        self.trained_on: dict[str, Any] = {"world": {"seed": 0}}
        is_top = (pl.col("p1") == top[0]) & (pl.col("p2") == top[1])
        is_feed = (pl.col("p1") == "p00") & (pl.col("p2") == "p01")
        self.q = pairs.select(["p1", "p2"]).with_columns(
            pl.when(is_top).then(0.95).when(is_feed).then(0.9).otherwise(0.01)
            .alias("card_feeding"),
            pl.lit(0.0).alias("soft_play"), pl.lit(0.0).alias("chip_dumping"),
            pl.lit(0.0).alias("multi_account"), pl.lit(0.5).alias("anomaly"))
        self.p = players.select("player").with_columns(
            pl.lit(0.0).alias("bot"), pl.lit(0.0).alias("hidden_card"),
            pl.lit(0.0).alias("timeout_abuse"), pl.lit(0.5).alias("anomaly"))

    def predict(self, players: pl.DataFrame, pairs: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        return self.p, self.q


def _world_with_idle_pair() -> tuple[World, str, str]:
    """A small played world where p00 feeds p01 (planted), plus a second labelled feeding
    pair (c, d) that sat together but never acted."""
    games, labels = make_world(6, n_games=40)
    con = memory_db(batch_facts(games))
    seats = seating(con)
    together = next(sorted(s - {"p00", "p01"})[:2] for s in seats.values()
                    if len(s - {"p00", "p01"}) >= 2)
    c, d = together
    feed = [{"game_id": g, "seq": 1, "player_id": "p00", "mechanism": "card_feeding",
             "group_id": "f1"} for g, s in sorted(seats.items()) if {"p00", "p01"} <= s][:3]
    assert feed
    labels = dict(labels, planted=feed, mechanisms=labels["mechanisms"] + [
        _mech(c, "card_feeding", "f9", "feeder"), _mech(d, "card_feeding", "f9", "receiver")])
    return World.from_con(con, parse_labels(labels)), c, d


def test_evaluate_reports_both_views() -> None:
    world, c, d = _world_with_idle_pair()
    model: Any = _FixedScores(world.players, world.pairs, (c, d))
    report = evaluate(None, world, boots=10, lomo=False, model=model)
    cf = report["mechanisms"]["card_feeding"]
    assert cf["model"]["positives"] == 2
    assert cf["model"]["pr_auc"] == 1.0
    acted = cf["acted"]
    assert (acted["labelled"], acted["acted"], acted["dropped"]) == (2, 1, 1)
    assert acted["model"]["positives"] == 1 and acted["model"]["n"] == cf["model"]["n"] - 1
    assert acted["model"]["pr_auc"] == 1.0
    assert acted["player_level"]["acted"] == 2 and acted["player_level"]["dropped"] == 2
    # nothing planted for the bot, the cheater or the multi-accounts: absent from the view
    for m in ("bot", "hidden_card", "multi_account"):
        assert report["mechanisms"][m]["acted"].get("absent"), m
    text = render_markdown(report)
    assert "Acted positives" in text
    assert "| card_feeding | pair | 1 / 2 (1) | 1 / " in text
    assert "| bot | player | 0 / 1 (1) | — | — | no labelled subject acted |" in text


def test_training_drops_labels_that_never_acted() -> None:
    """fit_on_world learns from acted cases only: a labelled feeding pair that sat together
    but never fed is neither a positive nor a negative of any model."""
    from rummyguard.fraud.evaluate import fit_on_world
    from rummyguard.fraud.models import FraudModel

    world, c, d = _world_with_idle_pair()
    assert world.truth.pair_pos["card_feeding"] == {("p00", "p01"), tuple(sorted((c, d)))}
    model = fit_on_world(world)
    plain = FraudModel().fit(world.players, world.pairs, world.truth.player_pos,
                             world.truth.pair_pos)
    fed, all_labels = model.trained_on["card_feeding"], plain.trained_on["card_feeding"]
    assert (all_labels["positives"], fed["positives"]) == (2, 1)
    idle = model.trained_on["ignored_never_acted"]["pairs"]
    assert idle >= 1  # c-d, and any other labelled pair of the world with no planted act
    assert fed["rows"] == all_labels["rows"] - idle  # the idle pairs left the rows
