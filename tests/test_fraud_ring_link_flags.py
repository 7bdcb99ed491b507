"""A pair flagged through a common partner (fraud/rings.py, close_pair_scores; fraud/flags.py,
session 20): the two feeders of one receiver feed the receiver, not each other. Their pair
flag must say so: it shows the two links' signals, each naming its pair (the partner is
the account both name), and the links' moves, not the pair's own (there are none to show)."""

from __future__ import annotations

from typing import Any

import orjson
import polars as pl

from rummyguard.fraud.features import PAIR_FEATURES, PLAYER_FEATURES
from rummyguard.fraud.flags import build_flags
from rummyguard.fraud.rings import close_pair_scores

from .factkit import facts_db

PLAYERS = ["f1", "f2", "r"] + [f"h{i}" for i in range(20)]


def _players() -> pl.DataFrame:
    cols: dict[str, Any] = {"player": PLAYERS}
    for j, feat in enumerate(PLAYER_FEATURES):
        cols[feat] = [float((i * (j + 3)) % 7) for i in range(len(PLAYERS))]
    return pl.DataFrame(cols)


def _pairs() -> pl.DataFrame:
    """The three pairs of the ring and 20 honest pairs; the feeding links stand out on
    take_z and collude_z, the feeders' own pair does not."""
    keys = [("f1", "r"), ("f2", "r"), ("f1", "f2")] + [(f"h{i}", f"h{(i + 1) % 20}") for i in range(20)]
    keys = [tuple(sorted(k)) for k in keys]
    cols: dict[str, Any] = {"p1": [k[0] for k in keys], "p2": [k[1] for k in keys]}
    for j, feat in enumerate(PAIR_FEATURES):
        cols[feat] = [float((i * (j + 5)) % 3) for i in range(len(keys))]
    for feat in ("take_z", "collude_z"):
        cols[feat][0], cols[feat][1], cols[feat][2] = 9.0, 7.0, 0.0
    cols["co_games"] = [12.0, 9.0, 6.0] + [3.0] * 20
    return pl.DataFrame(cols)


def _discard(game: str, seq: int, player: str, target: str) -> dict[str, Any]:
    return {"game_id": game, "seq": seq, "player": player, "target": target, "offset": 1,
            "card": 5, "gain": 2, "alt_gain": 0.4, "keep_gain": 0, "tie_alt": 0.3, "tie_n": 3,
            "pub_gain": 0, "pub_tie_alt": 0.0, "pub_flat": True, "taken": True}


def test_a_ring_link_pair_flag_names_the_partner_and_shows_the_links() -> None:
    players, pairs = _players(), _pairs()
    keys = list(zip(pairs.get_column("p1").to_list(), pairs.get_column("p2").to_list(), strict=True))
    feed = {("f1", "r"): 0.92, ("f2", "r"): 0.81, ("f1", "f2"): 0.03}
    raw = pl.DataFrame({"p1": [k[0] for k in keys], "p2": [k[1] for k in keys],
                        "card_feeding": [feed.get(k, 0.001) for k in keys],
                        "soft_play": [0.001] * len(keys), "chip_dumping": [0.001] * len(keys),
                        "multi_account": [0.001] * len(keys), "anomaly": [0.5] * len(keys)})
    qscore = close_pair_scores(raw, ["card_feeding", "soft_play", "chip_dumping", "multi_account"])
    pscore = pl.DataFrame({"player": PLAYERS, "bot": [0.0] * len(PLAYERS),
                           "hidden_card": [0.0] * len(PLAYERS), "timeout_abuse": [0.0] * len(PLAYERS),
                           "anomaly": [0.5] * len(PLAYERS), "beyond_tail": [False] * len(PLAYERS)})
    # the feeders' discards to the receiver; none between the two feeders
    con = facts_db(discards=[_discard("g1", 10, "f1", "r"), _discard("g1", 14, "f1", "r"),
                             _discard("g2", 8, "f2", "r"), _discard("g2", 12, "f2", "r")])
    flags = build_flags(con, players, pairs, pscore, qscore, [], supervised=True)
    by_subject = {f["subject"]: f for f in flags.iter_rows(named=True)}
    assert set(by_subject) == {"f1|r", "f2|r", "f1|f2"}, set(by_subject)
    ring_pair = by_subject["f1|f2"]
    assert (ring_pair["mechanism"], ring_pair["source"], ring_pair["score"]) == ("card_feeding", "model", 0.81)
    sig = orjson.loads(ring_pair["signals"])
    directional = [s for s in sig if s["suspicious_when"] in ("high", "low")]
    assert {s["pair"] for s in directional} == {"f1|r", "f2|r"}, sig  # r: the common partner
    assert len(directional) <= 4
    pct = [s["percentile"] for s in directional]
    assert pct == sorted(pct, reverse=True)
    assert sig[-1]["signal"] == "co_games" and sig[-1]["value"] == 6.0 and "pair" not in sig[-1]
    ev = orjson.loads(ring_pair["evidence"])
    assert {(e["game_id"], e["seq"]) for e in ev} == {("g1", 10), ("g1", 14), ("g2", 8), ("g2", 12)}
    assert all(e["what"].split()[0] in ("f1", "f2") and "to r's hidden hand" in e["what"] for e in ev)
    assert ring_pair["replay"].startswith("rummyguard replay g")
    # the direct links are explained by their own signals, with no partner named
    for subject in ("f1|r", "f2|r"):
        own = orjson.loads(by_subject[subject]["signals"])
        assert all("pair" not in s for s in own), own
