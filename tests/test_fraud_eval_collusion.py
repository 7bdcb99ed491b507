"""Pair collusion as one class in the evaluation: a pair labelled for *any* pair
mechanism is a positive, scored as the pair flags rank it (``model``: the best
per-mechanism probability) and by the ``any_pair`` model; the acted view drops labelled pairs that never acted. Frames and labels are built
by hand so the expected figures are exact."""

from __future__ import annotations

import numpy as np
import polars as pl

from rummyguard.fraud.evaluate import collusion_metrics, render_markdown
from rummyguard.fraud.labels import Truth

KEYS = [("a", "b"), ("c", "d"), ("e", "f"), ("g", "h"), ("i", "j"), ("k", "l")]


def _pairs(any_pair: list[float], feeding: list[float], multi: list[float]) -> pl.DataFrame:
    n = len(KEYS)
    return pl.DataFrame({
        "p1": [k[0] for k in KEYS], "p2": [k[1] for k in KEYS],
        "any_pair": any_pair, "card_feeding": feeding, "multi_account": multi,
        "anomaly": [0.5] * n, "base_winrate": [0.1 * i for i in range(n)],
        "base_chipflow": [None] * n,
    })


def _truth() -> Truth:
    # a-b feed, c-d are two accounts of one person, e-f a feeding pair that never acted
    return Truth(pair_pos={"card_feeding": {("a", "b"), ("e", "f")},
                           "multi_account": {("c", "d")}})


def test_union_of_pair_mechanisms_is_the_positive_class() -> None:
    # any_pair ranks the three labelled pairs first; the per-mechanism scores each know
    # only their own pairs, so their maximum ranks them first too
    pairs = _pairs([0.9, 0.8, 0.7, 0.1, 0.2, 0.3], [0.9, 0.0, 0.6, 0.0, 0.1, 0.0],
                   [0.0, 0.95, 0.0, 0.2, 0.0, 0.0])
    acted = {"card_feeding": {("a", "b")}, "multi_account": {("c", "d")}}
    out = collusion_metrics(pairs, KEYS, _truth(), acted, boots=10)
    assert out["model"]["positives"] == 3 and out["model"]["n"] == 6
    assert out["model"]["pr_auc"] == 1.0 and out["any_pair"]["pr_auc"] == 1.0
    # the win-rate baseline ranks them last (0.0, 0.1, 0.2 of 0.0..0.5)
    assert out["baseline_winrate"]["pr_auc"] < 0.6
    # acted view: e-f is left out, the two acting pairs stay positives
    a = out["acted"]
    assert (a["labelled"], a["acted"], a["dropped"]) == (3, 2, 1)
    assert a["model"]["positives"] == 2 and a["model"]["n"] == 5


def test_a_miss_lowers_the_pooled_score() -> None:
    # the multi-account pair scored below two honest pairs by every model: the flags'
    # score (the best mechanism's) ranks P P N N P N, average precision (1 + 1 + 3/5) / 3
    pairs = _pairs([0.9, 0.1, 0.7, 0.5, 0.4, 0.0], [0.9, 0.0, 0.6, 0.5, 0.4, 0.0],
                   [0.0, 0.1, 0.0, 0.2, 0.3, 0.0])
    out = collusion_metrics(pairs, KEYS, _truth(), {}, boots=10)
    assert np.isclose(out["model"]["pr_auc"], (1 + 1 + 3 / 5) / 3)
    assert np.isclose(out["model"]["p_at_10"], 3 / 6)  # k is capped at n
    assert out["acted"]["absent"]


def test_no_pair_positive_is_absent() -> None:
    pairs = _pairs([0.1] * 6, [0.1] * 6, [0.1] * 6)
    assert collusion_metrics(pairs, KEYS, Truth(), {}, boots=10) == {"level": "pair",
                                                                     "absent": True}


def test_markdown_has_the_pooled_table() -> None:
    pairs = _pairs([0.9, 0.8, 0.7, 0.1, 0.2, 0.3], [0.9, 0.0, 0.6, 0.0, 0.1, 0.0],
                   [0.0, 0.95, 0.0, 0.2, 0.0, 0.0])
    col = collusion_metrics(pairs, KEYS, _truth(), {"card_feeding": {("a", "b")}}, boots=10)
    report = {"test_world": {"players": 12, "fraud_players": 6, "fraud_share": 0.5, "pairs": 6,
                             "seed": 1}, "train_world": {"seed": 2}, "mechanisms": {},
              "collusion": col}
    text = render_markdown(report)
    assert "Pair collusion as one class" in text
    assert "| all labelled | 3 / 6 | model | 1.000" in text
    assert "| acted | 1 / 4 | any_pair |" in text


def test_collusion_by_intensity_bins_pairs_by_their_strongest_mechanism() -> None:
    # a-b feed at low intensity (0.2), c-d at moderate (0.5), e-f labelled for two
    # mechanisms: its intensity is the higher one (0.9, high). The any_pair model ranks
    # c-d below two honest pairs and the other two first; the flags' score (the best
    # mechanism's) ranks all three first.
    pairs = _pairs([0.9, 0.25, 0.7, 0.3, 0.4, 0.1], [0.9, 0.0, 0.6, 0.0, 0.1, 0.0],
                   [0.0, 0.95, 0.0, 0.2, 0.0, 0.0])
    truth = Truth(pair_pos={"card_feeding": {("a", "b"), ("e", "f")},
                            "multi_account": {("c", "d"), ("e", "f")}},
                  pair_intensity={("card_feeding", ("a", "b")): 0.2,
                                  ("multi_account", ("c", "d")): 0.5,
                                  ("card_feeding", ("e", "f")): 0.4,
                                  ("multi_account", ("e", "f")): 0.9})
    out = collusion_metrics(pairs, KEYS, truth, {}, boots=10)["by_intensity"]
    assert {lab: x["positives"] for lab, x in out.items()} == {"low": 1, "moderate": 1, "high": 1}
    assert out["low"]["any_pair"]["pr_auc"] == 1.0 and out["high"]["any_pair"]["pr_auc"] == 1.0
    # moderate: c-d (0.25) below the honest g-h (0.3) and i-j (0.4): third of four
    assert np.isclose(out["moderate"]["any_pair"]["pr_auc"], 1 / 3)
    # the flags' score, the best per-mechanism one, puts c-d first (0.95)
    assert out["moderate"]["model"]["pr_auc"] == 1.0
    text = render_markdown({"test_world": {"players": 12, "fraud_players": 6, "fraud_share": 0.5,
                                           "pairs": 6, "seed": 1}, "train_world": {"seed": 2},
                            "mechanisms": {}, "collusion": collusion_metrics(pairs, KEYS, truth, {},
                                                                             boots=10)})
    assert "| moderate | 1 | 1.000 | 0.25 | 0.333 | 0.25 |" in text  # P@50 capped at n = 4


def test_strangers_drop_the_multi_account_pairs_from_both_classes() -> None:
    """Session 21: the one class again without the pairs labelled multi-account. Here the
    multi-account pair c-d ranks first (0.95) and the feeding pair e-f below two honest
    pairs: with c-d the ranking is P P N N P N, without it P N N P N."""
    pairs = _pairs([0.0] * 6, [0.9, 0.0, 0.3, 0.5, 0.4, 0.0], [0.0, 0.95, 0.0, 0.0, 0.0, 0.0])
    pairs = pairs.with_columns(pl.Series("card_feeding", [0.6, 0.0, 0.3, 0.5, 0.4, 0.0]))
    truth = Truth(pair_pos={"card_feeding": {("a", "b"), ("c", "d"), ("e", "f")},
                            "multi_account": {("c", "d")}},
                  pair_intensity={("card_feeding", ("a", "b")): 0.5,
                                  ("card_feeding", ("c", "d")): 0.5,
                                  ("multi_account", ("c", "d")): 0.5,
                                  ("card_feeding", ("e", "f")): 0.9})
    out = collusion_metrics(pairs, KEYS, truth, {}, boots=10)
    assert np.isclose(out["model"]["pr_auc"], (1 + 1 + 3 / 5) / 3)
    s = out["strangers"]
    assert (s["removed"], s["positives"], s["n"]) == (1, 2, 5)
    assert np.isclose(s["pr_auc"], (1 + 2 / 4) / 2)
    # moderate intensity: a-b is the only moderate stranger (e-f is high), ranked first
    assert (s["moderate"]["positives"], s["moderate"]["n"]) == (1, 4)
    assert s["moderate"]["pr_auc"] == 1.0
    text = render_markdown({"test_world": {"players": 12, "fraud_players": 6, "fraud_share": 0.5,
                                           "pairs": 6, "seed": 1}, "train_world": {"seed": 2},
                            "mechanisms": {}, "collusion": out})
    assert "Pairs of strangers" in text
    assert "| collusion, one class | 2 / 5 | 1 | 0.750" in text
    assert "| collusion, one class, moderate intensity | 1 / 4 | 1 | 1.000" in text


def test_no_stranger_positive_is_absent() -> None:
    pairs = _pairs([0.1] * 6, [0.1] * 6, [0.9, 0.1, 0.1, 0.1, 0.1, 0.1])
    truth = Truth(pair_pos={"card_feeding": {("a", "b")}, "multi_account": {("a", "b")}})
    s = collusion_metrics(pairs, KEYS, truth, {}, boots=10)["strangers"]
    assert s == {"absent": True, "removed": 1}
    text = render_markdown({"test_world": {"players": 12, "fraud_players": 2, "fraud_share": 0.2,
                                           "pairs": 6, "seed": 1}, "train_world": {"seed": 2},
                            "mechanisms": {}, "collusion": collusion_metrics(pairs, KEYS, truth,
                                                                             {}, boots=10)})
    assert "| collusion, one class | 0 | 1 | no positive left |" in text
