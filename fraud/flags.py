"""Flags: what a risk analyst reviews — subject, score, likely mechanism, the signals
behind it (value vs population), and the evidence moves to open in a replay.

A flag's subject is a player, a pair (``"a|b"``) or a ring (``"a|b|c..."``). Its score is
the calibrated probability of the likeliest mechanism when a trained model is loaded
(``source = 'model'``), else the anomaly percentile of the unsupervised detector
(``source = 'anomaly'``; the mechanism is then the one whose signature signals are the
most extreme for the subject). ``signals`` lists the subject's strongest signals for that
mechanism: value, population median, and the percentile in the direction that is
suspicious (0.99 = more extreme than 99 % of subjects). ``evidence`` lists
``(game_id, seq)`` moves, each with a sentence; ``replay`` is the command that opens
the first one (``rummyguard replay GAME --at SEQ``).
"""

from __future__ import annotations

import itertools
from typing import Any

import duckdb
import numpy as np
import orjson
import polars as pl

from ..events.cards import format_card
from ..events.views import register_view
from .models import MECHANISMS, PAIR_MECHANISMS, PLAYER_MECHANISMS
from .rings import Ring

#: per mechanism, the signals that show it: (feature, +1 if high is suspicious, -1 if low)
MECH_SIGNALS: dict[str, list[tuple[str, int]]] = {
    "card_feeding": [("collude_z", 1), ("tie_z", 1), ("take_z", 1), ("tie_t", 1), ("feed_t", 1),
                     ("take_lift", 1), ("co_lift", 1)],
    "soft_play": [("tie_z", 1), ("tie_z_dir", 1), ("tie_any_t", 1), ("out_t", 1), ("co_lift", 1)],
    "chip_dumping": [("throw_z", 1), ("left_z", 1), ("take_z_dir", 1), ("gain_z", 1),
                     ("lose_z", 1), ("flow_z", 1), ("hu_games", 1)],
    "multi_account": [("shared_devices", 1), ("shared_ips", 1), ("co_share", 1), ("tie_z", 1),
                      ("co_lift", 1)],
    "bot": [("think_sd", -1), ("think_sd_draw", -1), ("think_diff_corr", -1), ("slow_share", -1)],
    "hidden_card": [("hc_z", 1), ("stock_z", 1), ("hc_tie_z", 1), ("mi_tie_z", 1),
                    ("hc_all_z", 1), ("stock_informed", 1), ("hc_tie_t", 1), ("stock_edge", 1)],
    "timeout_abuse": [("auto_disc_share", 1), ("auto_disc_rate", 1), ("auto_rate", 1),
                      ("fresh_rate", 1), ("auto_co_max", 1),
                      ("fresh_co_max", 1), ("disconnect_rate", 1), ("fresh_dist_rel", 1)],
}

FLAG_COLUMNS = ("flag_id", "subject_kind", "subject", "players", "score", "mechanism", "source",
                "signals", "evidence", "replay")


def _percentiles(df: pl.DataFrame, cols: list[str]) -> dict[str, np.ndarray]:
    """Per column, each row's rank percentile (NaN stays NaN); ties share the mean rank."""
    out = {}
    for c in cols:
        if c not in df.columns:
            continue
        v = df.get_column(c).cast(pl.Float64).to_numpy()
        ok = np.isfinite(v)
        p = np.full(len(v), np.nan)
        if ok.sum():
            s = pl.Series(v[ok]).rank("average").to_numpy()
            p[ok] = s / ok.sum()
        out[c] = p
    return out


def _median(df: pl.DataFrame, col: str) -> float:
    v = df.get_column(col).cast(pl.Float64).drop_nulls().drop_nans()
    return float(v.median()) if v.len() else float("nan")  # type: ignore[arg-type]


def _signals(df: pl.DataFrame, row: int, mech: str, pct: dict[str, np.ndarray],
             medians: dict[str, float], top: int = 4) -> list[dict[str, Any]]:
    out = []
    for feat, sign in MECH_SIGNALS[mech]:
        if feat not in pct:
            continue
        p = pct[feat][row]
        if not np.isfinite(p):
            continue
        directional = p if sign > 0 else 1.0 - p
        value = df.get_column(feat)[row]
        out.append({"signal": feat, "value": None if value is None else round(float(value), 4),
                    "population_median": round(medians[feat], 4) if np.isfinite(medians[feat]) else None,
                    "percentile": round(float(directional), 4),
                    "suspicious_when": "high" if sign > 0 else "low"})
    out.sort(key=lambda s: (-s["percentile"], s["signal"]))
    return out[:top]


def likely_mechanism(row: int, pct: dict[str, np.ndarray], mechs: tuple[str, ...]) -> str:
    """The mechanism whose signature signals are, on average, the most extreme."""
    best, best_v = mechs[0], -1.0
    for m in mechs:
        vals = []
        for feat, sign in MECH_SIGNALS[m]:
            if feat in pct and np.isfinite(pct[feat][row]):
                p = pct[feat][row]
                vals.append(p if sign > 0 else 1.0 - p)
        v = float(np.mean(sorted(vals)[-2:])) if vals else 0.0
        if v > best_v:
            best, best_v = m, v
    return best


# -- evidence ------------------------------------------------------------------------------
def _discard_evidence(con: duckdb.DuckDBPyConnection, a: str, b: str, limit: int,
                      any_offset: bool = False) -> list[dict[str, Any]]:
    """The discards between a and b that helped the other most beyond a free choice:
    options worth the same to the discarder (``tie_n`` >= 2), the chosen card the one
    the partner's hidden hand needed."""
    if limit <= 0:
        return []
    offset = "" if any_offset else 'AND "offset" = 1'
    rows = con.execute(
        "SELECT game_id, seq, player, target, card, gain, tie_alt, tie_n, taken FROM fraud.discards "
        f"WHERE ((player = ? AND target = ?) OR (player = ? AND target = ?)) {offset} "
        "AND tie_n >= 2 AND gain > tie_alt "
        "ORDER BY gain - tie_alt DESC, taken DESC, game_id, seq LIMIT ?", [a, b, b, a, limit]
    ).fetchall()
    return [{"game_id": g, "seq": s,
             "what": f"{p} discarded {format_card(c)}: meld gain {gn} to {t}'s hidden hand, where "
                     f"{n} cards equally useless to {p} averaged {alt:.2f}"
                     f"{'; ' + t + ' took it' if tk else ''}"}
            for g, s, p, t, c, gn, alt, n, tk in rows]


def _round_end_evidence(con: duckdb.DuckDBPyConnection, a: str, b: str,
                        limit: int) -> list[dict[str, Any]]:
    """Rounds one of the pair ended while the other held the fewest points at the table."""
    if limit <= 0:
        return []
    rows = con.execute(
        "WITH r AS (SELECT game_id, seq, ender, player, points_left, "
        "  min(points_left) FILTER (WHERE player <> ender) OVER (PARTITION BY game_id, seq) AS lo, "
        "  count(*) OVER (PARTITION BY game_id, seq) AS k "
        "  FROM fraud.round_ends WHERE ender IN (?, ?)) "
        "SELECT game_id, seq, ender, player, points_left FROM r "
        "WHERE player IN (?, ?) AND player <> ender AND points_left = lo AND k >= 3 "
        "ORDER BY game_id, seq LIMIT ?", [a, b, a, b, limit]).fetchall()
    return [{"game_id": g, "seq": s,
             "what": f"{e} ended the round while {p} held only {pts} points, the least at the table"}
            for g, s, e, p, pts in rows]


def evidence_for(con: duckdb.DuckDBPyConnection, mech: str, players: list[str],
                 limit: int = 5) -> list[dict[str, Any]]:
    """The moves a reviewer should open for this subject and mechanism."""
    if mech in PAIR_MECHANISMS and len(players) >= 2:
        a, b = players[0], players[1]
        ev = []
        if mech == "multi_account":
            rows = con.execute(
                "SELECT DISTINCT s1.game_id, s1.seq, s1.player, s1.device_hash, "
                "s1.game_id = s2.game_id AS together FROM fraud.sessions s1 "
                "JOIN fraud.sessions s2 ON s1.device_hash = s2.device_hash AND s2.player = ? "
                "WHERE s1.player = ? AND s1.event = 'connect' "
                "ORDER BY together DESC, s1.game_id, s1.seq LIMIT 2",
                [b, a]).fetchall()
            ev += [{"game_id": g, "seq": s,
                    "what": f"{p} connected from device {d}, also used by {b}"
                            + (" (seated at this game)" if tg else "")}
                   for g, s, p, d, tg in rows]
        if mech == "chip_dumping":
            rows = con.execute(
                "SELECT m.game_id, m.seq, m.player FROM fraud.moves m "
                "JOIN fraud.player_games o ON o.game_id = m.game_id AND o.player IN (?, ?) "
                "AND o.player <> m.player WHERE m.type = 'PlayerLeft' AND m.player IN (?, ?) "
                "ORDER BY m.game_id, m.seq LIMIT 2", [a, b, a, b]).fetchall()
            ev += [{"game_id": g, "seq": s, "what": f"{p} left the game, handing the pot on"}
                   for g, s, p in rows]
        if mech == "soft_play":
            ev += _round_end_evidence(con, a, b, 2)
        ev += _discard_evidence(con, a, b, limit - len(ev), any_offset=mech == "soft_play")
        return ev[:limit]
    (p,) = players[:1]
    if mech == "hidden_card":
        rows = con.execute(
            "SELECT game_id, seq, source, pile_gain, stock_gain FROM fraud.pickups WHERE player = ? "
            "AND ((source = 'stock' AND stock_gain > pile_gain) OR "
            "(source = 'discard' AND stock_gain < pile_gain AND pile_gain <= 1)) "
            "ORDER BY abs(stock_gain - pile_gain) DESC, game_id, seq LIMIT 3", [p]).fetchall()
        ev = [{"game_id": g, "seq": s,
               "what": f"{p} drew from the {src}: hidden stock top worth {sg}, visible pile top {pg}"}
              for g, s, src, pg, sg in rows]
        rows = con.execute(
            "SELECT game_id, seq, target, card, gain, tie_alt, tie_n FROM fraud.discards "
            "WHERE player = ? AND \"offset\" = 1 AND tie_n >= 2 AND pub_flat AND gain < tie_alt "
            "ORDER BY tie_alt - gain DESC, game_id, seq LIMIT 2", [p]).fetchall()
        ev += [{"game_id": g, "seq": s,
                "what": f"{p} discarded {format_card(c)}: gain {gn} to {t}'s hidden hand where "
                        f"{n} cards equally useless to {p}, and alike on the public record, "
                        f"averaged {alt:.2f}"} for g, s, t, c, gn, alt, n in rows]
        rows = con.execute(  # Michigan: starts that reached further than they looked
            "SELECT game_id, seq, run, reach, tie_reach, tie_n FROM fraud.starts "
            "WHERE player = ? AND tie_n >= 2 AND reach > tie_reach "
            "ORDER BY reach - tie_reach DESC, game_id, seq LIMIT 2", [p]).fetchall()
        ev += [{"game_id": g, "seq": s,
                "what": f"{p} started the suit that played {r} of his cards before the stop, "
                        f"where {n} starts that looked the same (a visible run of {u}) "
                        f"averaged {tr:.2f}"} for g, s, u, r, tr, n in rows]
        ev.sort(key=lambda e: (e["game_id"], e["seq"]))
        return ev[:limit]
    if mech == "timeout_abuse":
        rows = con.execute(
            "SELECT game_id, seq, type, dist FROM fraud.moves WHERE player = ? AND "
            "(auto OR type = 'FreshPressed') ORDER BY game_id, seq LIMIT ?", [p, limit]).fetchall()
        return [{"game_id": g, "seq": s,
                 "what": f"{'auto-played (timed out)' if t == 'AutoPlayed' else 'pressed Fresh'} "
                         f"with meld distance {d}"} for g, s, t, d in rows]
    rows = con.execute(  # bot: hard decisions made as fast as easy ones
        "SELECT game_id, seq, think_ms, difficulty FROM fraud.moves WHERE player = ? AND "
        "type = 'Discarded' AND NOT auto ORDER BY difficulty DESC, think_ms, game_id, seq LIMIT ?",
        [p, limit]).fetchall()
    return [{"game_id": g, "seq": s, "what": f"discard at difficulty {d} decided in {t} ms"}
            for g, s, t, d in rows]


# -- building the flags -------------------------------------------------------------------------
def build_flags(con: duckdb.DuckDBPyConnection, players: pl.DataFrame, pairs: pl.DataFrame,
                player_scores: pl.DataFrame, pair_scores: pl.DataFrame, rings: list[Ring],
                *, supervised: bool, threshold: float = 0.5, anomaly_cut: float = 0.99,
                min_pair_games: int = 3) -> pl.DataFrame:
    """All flags, strongest first. ``players``/``pairs``: features; ``*_scores``: model
    output (a column per mechanism, and ``anomaly``)."""
    flags: list[dict[str, Any]] = []
    p_pct = _percentiles(players, [f for m in PLAYER_MECHANISMS for f, _ in MECH_SIGNALS[m]])
    q_pct = _percentiles(pairs, [f for m in PAIR_MECHANISMS for f, _ in MECH_SIGNALS[m]])
    p_med = {c: _median(players, c) for c in p_pct}
    q_med = {c: _median(pairs, c) for c in q_pct}
    pindex = {p: i for i, p in enumerate(players.get_column("player").to_list())}
    qindex = {k: i for i, k in enumerate(zip(pairs.get_column("p1").to_list(),
                                              pairs.get_column("p2").to_list(), strict=True))}

    def pick(row: dict[str, Any], mechs: tuple[str, ...]) -> tuple[str | None, float]:
        avail = [(row[m], m) for m in mechs if m in row and row[m] is not None]
        if not avail:
            return None, 0.0
        s, m = max(avail)
        return m, float(s)

    for row in player_scores.iter_rows(named=True):
        i = pindex[row["player"]]
        mech, score = pick(row, PLAYER_MECHANISMS) if supervised else (None, 0.0)
        source = "model"
        if mech is None or score < threshold:
            if row["anomaly"] < anomaly_cut or supervised:
                continue
            mech, score, source = likely_mechanism(i, p_pct, PLAYER_MECHANISMS), row["anomaly"], "anomaly"
        flags.append(_flag("player", [row["player"]], score, mech, source,
                           _signals(players, i, mech, p_pct, p_med), con))
    for row in pair_scores.iter_rows(named=True):
        key = (row["p1"], row["p2"])
        i = qindex[key]
        mech, score = pick(row, PAIR_MECHANISMS) if supervised else (None, 0.0)
        source = "model"
        if mech is None or score < threshold:
            if supervised or row["anomaly"] < anomaly_cut:
                continue
            co = pairs.get_column("co_games")[i]
            shared = pairs.get_column("shared_devices")[i]
            if (co or 0) < min_pair_games and not shared:
                continue
            mech, score, source = likely_mechanism(i, q_pct, PAIR_MECHANISMS), row["anomaly"], "anomaly"
        flags.append(_flag("pair", list(key), score, mech, source,
                           _signals(pairs, i, mech, q_pct, q_med), con))
    for ring in rings:
        flags.append(_flag("ring", list(ring.members), ring.score, "ring", "graph",
                           [{"signal": "internal_links", "value": ring.edges, "population_median": None,
                             "percentile": None, "suspicious_when": "high"}], con, ring=ring))
    flags.sort(key=lambda f: (-f["score"], f["subject_kind"], f["subject"]))
    for n, f in enumerate(flags, 1):
        f["flag_id"] = n
    return pl.DataFrame(flags, schema={
        "flag_id": pl.Int64, "subject_kind": pl.Utf8, "subject": pl.Utf8,
        "players": pl.List(pl.Utf8), "score": pl.Float64, "mechanism": pl.Utf8, "source": pl.Utf8,
        "signals": pl.Utf8, "evidence": pl.Utf8, "replay": pl.Utf8,
    }).select(FLAG_COLUMNS)


def _flag(kind: str, players: list[str], score: float, mech: str, source: str,
          signals: list[dict[str, Any]], con: duckdb.DuckDBPyConnection,
          ring: Ring | None = None) -> dict[str, Any]:
    if ring is not None:
        ev: list[dict[str, Any]] = []
        for a, b in itertools.pairwise(players):
            ev += _discard_evidence(con, a, b, 1)
        ev = ev[:5]
    else:
        ev = evidence_for(con, mech, players)
    replay = f"rummyguard replay {ev[0]['game_id']} --at {ev[0]['seq']}" if ev else ""
    return {"flag_id": 0, "subject_kind": kind, "subject": "|".join(players), "players": players,
            "score": round(float(score), 6), "mechanism": mech, "source": source,
            "signals": orjson.dumps(signals).decode(), "evidence": orjson.dumps(ev).decode(),
            "replay": replay}


FLAGS_VIEW = """
SELECT flag_id, subject_kind, subject, players, score, mechanism, source,
       CAST(signals AS JSON) AS signals, CAST(evidence AS JSON) AS evidence, replay
FROM fraud.flags
"""


def write_flags(con: duckdb.DuckDBPyConnection, flags: pl.DataFrame) -> None:
    """Replace ``fraud.flags`` and (re)create the analyst view ``flags``."""
    con.execute("CREATE SCHEMA IF NOT EXISTS fraud")
    con.register("_rg_flags", flags.to_arrow())
    try:
        con.execute("CREATE OR REPLACE TABLE fraud.flags AS SELECT * FROM _rg_flags ORDER BY flag_id")
    finally:
        con.unregister("_rg_flags")
    register_view(con, "flags", FLAGS_VIEW)


__all__ = ["FLAG_COLUMNS", "MECHANISMS", "MECH_SIGNALS", "build_flags", "evidence_for",
           "likely_mechanism", "write_flags"]
