"""Rings: groups of accounts that act together, found on a graph of suspicious links.

Nodes are players; an edge joins two players whose pair score (the highest collusion
probability of the pair, or the pair's anomaly percentile when no model is loaded)
reaches ``threshold``, or who share a device hash. Edge weight = the pair score. A
shared device always links the two accounts (the ring's structure), but how much the
link weighs depends on who judges it: with a trained model, the model's own pair score
(it has seen the shared device among its signals, and knows a household's shared tablet
from one person's accounts: honest families sharing a device otherwise made rings of
score 0.9 that the model scored 0.07-0.11 pair by pair); without one, at least 0.9.
Groups are Louvain communities (:func:`networkx.community.louvain_communities`, fixed
seed: the same input gives the same rings) of the suspicious subgraph; a ring is a
community of >= ``min_size`` players whose score (mean internal link weight) reaches
``min_score``. Two-player communities are already pair flags, so the default is 3.

**A common partner** (:func:`close_pair_scores`, session 20): two accounts that both act
with one third account are in one ring even when nothing passes between the two
themselves. A card-feeding ring of three is a receiver and two feeders: the feeders feed
the receiver, not each other, so the feeders' own pair has no feeding to show, yet it is
a labelled colluding pair and a reviewer wants it. Per pair mechanism ``m``, a pair's
score becomes the larger of its own probability and its *ring link*: the best, over
common partners ``r``, of the weaker of its two links, ``min(s_m(a, r), s_m(b, r))``.
The weaker link, because the chain is only as sure as its weakest part; a product of the
two was not used, since the two links' probabilities are not independent evidence of one
ring (the common partner is in both). Only pairs that are already subjects (they sat
together or share an identifier) get a ring link: a pair with no shared game or
identifier has nothing for a reviewer to open. Decided on the development world 7401
(built-in model, never a test world): the one-class collusion average precision went from
0.513 to 0.550 and card feeding's from 0.524 to 0.589; chip dumping's moved by -0.006.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
import polars as pl


@dataclass(frozen=True, slots=True)
class Ring:
    members: tuple[str, ...]
    score: float  # mean weight of the ring's internal edges
    edges: int


#: edge weights are scaled to integers for Louvain (6 decimals: the scores are rounded
#: finer than any threshold)
WEIGHT_SCALE = 10**6
#: the weight of a shared-device link when no model judges it (module docstring)
SHARED_DEVICE_WEIGHT = 0.9


def build_graph(pair_scores: pl.DataFrame, score_col: str, threshold: float,
                shared: pl.DataFrame | None = None,
                shared_weight: float | None = SHARED_DEVICE_WEIGHT) -> nx.Graph:
    """The suspicious-link graph. ``shared``: pairs (p1, p2, shared_devices), each linked
    with weight ``shared_weight`` at least, or (``None``: a model's scores) the pair's own
    score in ``pair_scores`` (0 if it has none; kept as the smallest weight, so the link
    still joins the two accounts)."""
    g = nx.Graph()
    strong = pair_scores.filter(pl.col(score_col) >= threshold).sort(["p1", "p2"])
    for p1, p2, s in strong.select(["p1", "p2", score_col]).iter_rows():
        g.add_edge(p1, p2, weight=float(s))
    if shared is not None and shared.height:
        own: dict[tuple[str, str], float] = {}
        if shared_weight is None:
            own = {(a, b): float(s) for a, b, s in pair_scores.join(
                shared.select(["p1", "p2"]), on=["p1", "p2"]).select(
                ["p1", "p2", score_col]).iter_rows() if s is not None}
        for p1, p2, n in shared.sort(["p1", "p2"]).iter_rows():
            if n and n > 0:
                floor = own.get((p1, p2), 0.0) if shared_weight is None else shared_weight
                floor = max(floor, 1 / WEIGHT_SCALE)
                w = max(g[p1][p2]["weight"], floor) if g.has_edge(p1, p2) else floor
                g.add_edge(p1, p2, weight=w)
    return g


#: links weaker than this are left out of the common-partner join: a ring link below it
#: cannot change a flag, and leaving them out keeps the join to a few thousand rows
RING_LINK_FLOOR = 0.01


def close_pair_scores(pair_scores: pl.DataFrame, mechanisms: list[str] | tuple[str, ...],
                      floor: float = RING_LINK_FLOOR) -> pl.DataFrame:
    """``pair_scores`` with each mechanism column raised to the pair's ring link through a
    common partner (module docstring), plus ``ring_via``: the common partner behind the
    pair's likeliest mechanism when the ring link, not the pair's own probability, gives
    that mechanism its score (else null), and ``ring_link``: that link's score. Rows and
    their order are kept; the same input gives the same output (ties between partners go
    to the smallest player id).

    >>> s = pl.DataFrame({"p1": ["a", "a", "b"], "p2": ["r", "b", "r"],
    ...                   "card_feeding": [0.9, 0.02, 0.7]})
    >>> out = close_pair_scores(s, ["card_feeding"])
    >>> out.filter(pl.col("p2") == "b").select("card_feeding", "ring_via").row(0)
    (0.7, 'r')
    >>> out.filter(pl.col("p2") == "r").get_column("ring_via").to_list()
    [None, None]
    """
    mechs = [m for m in mechanisms if m in pair_scores.columns]
    out = pair_scores.with_row_index("_row")
    if not mechs or not out.height:
        return out.drop("_row").with_columns(pl.lit(None, pl.Utf8).alias("ring_via"),
                                             pl.lit(None, pl.Float64).alias("ring_link"))
    direct = {m: out.get_column(m).fill_null(0.0).to_numpy() for m in mechs}
    links: dict[str, pl.DataFrame] = {}
    for m in mechs:
        e = out.filter(pl.col(m) >= floor).select("p1", "p2", pl.col(m).cast(pl.Float64).alias("s"))
        both = pl.concat([e, e.select(pl.col("p2").alias("p1"), pl.col("p1").alias("p2"), "s")])
        tri = (both.join(both, on="p2", suffix="_b")
               .filter(pl.col("p1") < pl.col("p1_b"))
               .select(pl.col("p1").alias("a"), pl.col("p1_b").alias("b"), pl.col("p2").alias("via"),
                       pl.min_horizontal("s", "s_b").alias("t"))
               .sort(["a", "b", "t", "via"], descending=[False, False, True, False])
               .unique(subset=["a", "b"], keep="first", maintain_order=True))
        links[m] = (out.select("_row", "p1", "p2")
                    .join(tri, left_on=["p1", "p2"], right_on=["a", "b"], how="left")
                    .sort("_row"))
    raised = {m: np.maximum(direct[m], links[m].get_column("t").fill_null(0.0).to_numpy())
              for m in mechs}
    # the likeliest mechanism as the flags pick it (fraud/flags.py: the highest score, ties
    # to the later name), and whether its score is the ring link's
    by_name = sorted(mechs, reverse=True)  # argmax keeps the first of equals: the last name
    best = [by_name[j] for j in np.argmax(np.vstack([raised[m] for m in by_name]), axis=0)]
    via = [None] * out.height
    link = [None] * out.height
    vias = {m: links[m].get_column("via").to_list() for m in mechs}
    for i, m in enumerate(best):
        if raised[m][i] > direct[m][i]:
            via[i], link[i] = vias[m][i], float(raised[m][i])
    return out.drop("_row").with_columns(
        [pl.Series(m, raised[m], dtype=pl.Float64) for m in mechs]
        + [pl.Series("ring_via", via, dtype=pl.Utf8), pl.Series("ring_link", link, dtype=pl.Float64)])


def _integer_weights(g: nx.Graph) -> nx.Graph:
    """``g`` with integer edge weights, for Louvain. With float weights networkx's
    Louvain can move a node back and forth between two communities for ever on a
    round-off "gain" (networkx issues #6751, #8739; a shared-device graph of seven
    accounts at weight 0.9 never returns); the maintainers' advice is integer weights.
    Scaling all weights by one factor leaves the modularity ranking unchanged; a copy
    keeps the node and neighbour order (Louvain's visiting order, so its ties)."""
    h = g.copy()
    for _, _, d in h.edges(data=True):
        d["weight"] = round(d["weight"] * WEIGHT_SCALE)
    return h


def find_rings(g: nx.Graph, min_size: int = 3, min_score: float = 0.0) -> list[Ring]:
    """Louvain communities of ``g`` with at least ``min_size`` members and a score of at
    least ``min_score``, strongest first."""
    if g.number_of_edges() == 0:
        return []
    rings = []
    for comp in nx.community.louvain_communities(_integer_weights(g), weight="weight", seed=0):
        if len(comp) < min_size:
            continue
        sub = g.subgraph(comp)
        weights = [d["weight"] for _, _, d in sub.edges(data=True)]
        if not weights:
            continue
        score = sum(weights) / len(weights)
        if score >= min_score:
            rings.append(Ring(tuple(sorted(comp)), score, len(weights)))
    rings.sort(key=lambda r: (-r.score, r.members))
    return rings


__all__ = ["RING_LINK_FLOOR", "SHARED_DEVICE_WEIGHT", "Ring", "build_graph", "close_pair_scores",
           "find_rings"]
