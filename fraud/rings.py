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
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
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


__all__ = ["SHARED_DEVICE_WEIGHT", "Ring", "build_graph", "find_rings"]
