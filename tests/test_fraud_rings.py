"""Rings (fraud/rings.py): a shared device links two accounts; with a trained model the
link weighs what the model scores that pair, so an honest household sharing a tablet is
no ring flag, while one person's accounts (scored high by the model) still are; without
a model a shared device weighs 0.9, as before."""

from __future__ import annotations

import polars as pl

from rummyguard.fraud.rings import (
    RING_LINK_FLOOR,
    SHARED_DEVICE_WEIGHT,
    build_graph,
    close_pair_scores,
    find_rings,
)

TRIO = [("a", "b"), ("a", "c"), ("b", "c")]


def _scores(pairs: list[tuple[str, str]], score: float) -> pl.DataFrame:
    return pl.DataFrame({"p1": [a for a, _ in pairs], "p2": [b for _, b in pairs],
                         "link": [score] * len(pairs)})


def _shared(pairs: list[tuple[str, str]]) -> pl.DataFrame:
    return pl.DataFrame({"p1": [a for a, _ in pairs], "p2": [b for _, b in pairs],
                         "shared_devices": [1] * len(pairs)})


def test_a_household_the_model_clears_is_no_ring_but_one_persons_accounts_are() -> None:
    household = find_rings(build_graph(_scores(TRIO, 0.08), "link", 0.5, _shared(TRIO),
                                       shared_weight=None), min_score=0.5)
    assert household == []
    # below the threshold the community is still found, with the model's weight as score
    (weak,) = find_rings(build_graph(_scores(TRIO, 0.08), "link", 0.5, _shared(TRIO),
                                     shared_weight=None))
    assert weak.members == ("a", "b", "c") and abs(weak.score - 0.08) < 1e-9
    (ring,) = find_rings(build_graph(_scores(TRIO, 0.95), "link", 0.5, _shared(TRIO),
                                     shared_weight=None), min_score=0.5)
    assert ring.members == ("a", "b", "c") and abs(ring.score - 0.95) < 1e-9 and ring.edges == 3


def test_without_a_model_a_shared_device_weighs_point_nine() -> None:
    (ring,) = find_rings(build_graph(_scores(TRIO, 0.08), "link", 0.995, _shared(TRIO)))
    assert ring.members == ("a", "b", "c")
    assert abs(ring.score - SHARED_DEVICE_WEIGHT) < 1e-9


def test_a_shared_device_closes_a_ring_the_model_links_and_counts_at_its_weight() -> None:
    """a-b and b-c linked by the model (0.9), a and c sharing a device that the model
    scores 0.3: one ring of three, scored by all three links."""
    links = pl.DataFrame({"p1": ["a", "b", "a"], "p2": ["b", "c", "c"], "link": [0.9, 0.9, 0.3]})
    (ring,) = find_rings(build_graph(links, "link", 0.5, _shared([("a", "c")]),
                                     shared_weight=None), min_score=0.5)
    assert ring.members == ("a", "b", "c") and ring.edges == 3
    assert abs(ring.score - (0.9 + 0.9 + 0.3) / 3) < 1e-9
    # without the model's judgement the same device link weighs 0.9
    (fixed,) = find_rings(build_graph(links, "link", 0.5, _shared([("a", "c")])))
    assert abs(fixed.score - 0.9) < 1e-9


def test_a_shared_pair_without_a_model_score_still_links_at_the_smallest_weight() -> None:
    (ring,) = find_rings(build_graph(_scores([("a", "b")], 0.9), "link", 0.5,
                                     _shared([("b", "c"), ("a", "c")]), shared_weight=None))
    assert ring.members == ("a", "b", "c") and ring.edges == 3
    assert ring.score < 0.31  # (0.9 + two links of weight ~0) / 3


# -- a common partner (close_pair_scores, session 20) -----------------------------------------
def _pair_scores(rows: list[tuple[str, str, float, float]]) -> pl.DataFrame:
    """(p1, p2, card_feeding, soft_play) rows, p1 < p2, as FraudModel.predict gives them."""
    return pl.DataFrame({"p1": [r[0] for r in rows], "p2": [r[1] for r in rows],
                         "card_feeding": [r[2] for r in rows], "soft_play": [r[3] for r in rows],
                         "anomaly": [0.5] * len(rows)})


def _row(df: pl.DataFrame, p1: str, p2: str) -> dict[str, object]:
    return df.filter((pl.col("p1") == p1) & (pl.col("p2") == p2)).row(0, named=True)


def test_two_feeders_of_one_receiver_score_their_weaker_link() -> None:
    """A feeding ring of three: f1 and f2 feed r, not each other (their own pair 0.02).
    Their pair scores the weaker of the two links (0.6), names r, and the links keep
    their own scores; a pair of accounts with no common partner is left as it was."""
    scores = _pair_scores([("f1", "r", 0.9, 0.0), ("f2", "r", 0.6, 0.0), ("f1", "f2", 0.02, 0.0),
                           ("x", "y", 0.3, 0.1)])
    out = close_pair_scores(scores, ["card_feeding", "soft_play"])
    assert out.height == scores.height and out.select("p1", "p2").equals(scores.select("p1", "p2"))
    feeders = _row(out, "f1", "f2")
    assert feeders["card_feeding"] == 0.6 and feeders["ring_via"] == "r"
    assert feeders["ring_link"] == 0.6 and feeders["soft_play"] == 0.0
    for p1, p2, s in (("f1", "r", 0.9), ("f2", "r", 0.6), ("x", "y", 0.3)):
        row = _row(out, p1, p2)
        assert row["card_feeding"] == s and row["ring_via"] is None and row["ring_link"] is None
    assert out.get_column("anomaly").to_list() == scores.get_column("anomaly").to_list()


def test_a_ring_link_is_per_mechanism_and_never_lowers_a_score() -> None:
    """Links of two different mechanisms through one partner make no ring: a feeds r, r
    soft-plays with b. A pair scored above its ring link keeps its own score and names no
    partner."""
    mixed = close_pair_scores(_pair_scores([("a", "r", 0.9, 0.0), ("b", "r", 0.0, 0.9),
                                            ("a", "b", 0.05, 0.05)]), ["card_feeding", "soft_play"])
    row = _row(mixed, "a", "b")
    assert (row["card_feeding"], row["soft_play"], row["ring_via"]) == (0.05, 0.05, None)
    own = close_pair_scores(_pair_scores([("a", "r", 0.9, 0.0), ("b", "r", 0.7, 0.0),
                                          ("a", "b", 0.8, 0.0)]), ["card_feeding"])
    row = _row(own, "a", "b")
    assert (row["card_feeding"], row["ring_via"]) == (0.8, None)


def test_the_best_common_partner_wins_and_ties_go_to_the_smallest_id() -> None:
    rows = [("a", "r1", 0.9, 0.0), ("b", "r1", 0.4, 0.0), ("a", "r2", 0.5, 0.0), ("b", "r2", 0.5, 0.0),
            ("a", "r3", 0.5, 0.0), ("b", "r3", 0.5, 0.0), ("a", "b", 0.0, 0.0)]
    out = close_pair_scores(_pair_scores(rows), ["card_feeding"])
    row = _row(out, "a", "b")
    assert (row["card_feeding"], row["ring_via"]) == (0.5, "r2")
    # the same input in another row order gives the same rows
    again = close_pair_scores(_pair_scores(rows[::-1]), ["card_feeding"]).sort(["p1", "p2"])
    assert again.equals(out.sort(["p1", "p2"]))


def test_no_pair_is_added_and_weak_links_are_left_out() -> None:
    """Only pairs already scored (they sat together or share an identifier) get a ring link:
    a and b share a partner but are no row, and stay none. Links below RING_LINK_FLOOR make
    no ring link."""
    out = close_pair_scores(_pair_scores([("a", "r", 0.9, 0.0), ("b", "r", 0.9, 0.0)]),
                            ["card_feeding"])
    assert out.height == 2 and out.get_column("ring_via").null_count() == 2
    weak = RING_LINK_FLOOR / 2
    out = close_pair_scores(_pair_scores([("a", "r", weak, 0.0), ("b", "r", 0.9, 0.0),
                                          ("a", "b", 0.0, 0.0)]), ["card_feeding"])
    assert _row(out, "a", "b")["card_feeding"] == 0.0


def test_empty_scores_and_no_mechanism_columns_pass_through() -> None:
    empty = _pair_scores([])
    out = close_pair_scores(empty, ["card_feeding"])
    assert out.height == 0 and {"ring_via", "ring_link"} <= set(out.columns)
    plain = pl.DataFrame({"p1": ["a"], "p2": ["b"], "anomaly": [0.9]})
    out = close_pair_scores(plain, ["card_feeding"])
    assert out.get_column("anomaly").to_list() == [0.9] and out.get_column("ring_via").to_list() == [None]
