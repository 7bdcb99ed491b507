"""Rings (fraud/rings.py): a shared device links two accounts; with a trained model the
link weighs what the model scores that pair, so an honest household sharing a tablet is
no ring flag, while one person's accounts (scored high by the model) still are; without
a model a shared device weighs 0.9, as before."""

from __future__ import annotations

import polars as pl

from rummyguard.fraud.rings import SHARED_DEVICE_WEIGHT, build_graph, find_rings

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
