"""Flags: what a risk analyst reviews — subject, score, likely mechanism, the signals
behind it (value vs population), and the evidence moves to open in a replay.

A flag's subject is a player, a pair (``"a|b"``) or a ring (``"a|b|c..."``). Its score is
the calibrated probability of the likeliest mechanism when a trained model is loaded
(``source = 'model'``; for a player no mechanism flags, the ``any`` model's probability:
below), else the anomaly percentile of the unsupervised detector
(``source = 'anomaly'``; the mechanism is then the one whose signature signals are the
most extreme for the subject). ``signals`` lists the subject's strongest signals for that
mechanism: value, population median, and the percentile in the direction that is
suspicious (0.99 = more extreme than 99 % of subjects). ``evidence`` lists
``(game_id, seq)`` moves, each with a sentence; ``replay`` is the command that opens
the first one (``rummyguard replay GAME --at SEQ``).

Decisions (audit 4, "explanations must be true"):

- An anomaly flag names a mechanism only when that mechanism's signature signals are
  really extreme for the subject (the mean of its two strongest directional percentiles
  >= :data:`SIGNATURE_CUT`). Otherwise its mechanism is ``unusual`` and its signals are
  the subject's most extreme features in either direction (``suspicious_when`` is the
  direction it deviates): a player who won his only 2 games is not shown as a
  "timeout_abuse" flag beside four signals at the population median.
- With a trained model, flags come from the mechanism probabilities, and for players
  from the ``any`` model's (session 15): a player whose probability of fraud of *some*
  kind (``any_player``, trained on every mechanism together) reaches the threshold while
  no single mechanism's does is flagged with that probability as its score and the
  likeliest mechanism as its mechanism. Why: a Michigan-only bot (his only timing signal
  ``think_sd_all``) scored 0.97 on ``any_player`` and 0.26 on ``bot``, and no flag showed
  him. On the development world 6363 (built-in model) this adds 5 player flags, all 5
  labelled fraud; the same rule for pairs (``any_pair``) added 21 pair flags of which 8
  were labelled pairs, so pairs keep their mechanism probabilities only. Plus one kind of
  anomaly flag: a player whose evidence tail (models.EvidenceTail) is beyond the training
  world's honest players' 99.9th percentile (``beyond_tail``, models.unseen_cut) while no
  mechanism's probability reaches the threshold: behaviour the model does not score
  high (often a known mechanism below its threshold, sometimes nothing labelled; on
  simulated worlds 0.15-0.3 % of the honest players). They are listed after the model's
  flags (their score is an anomaly percentile, not a probability).
- Every player and pair flag ends its signals with the evidence count (``n_games`` /
  ``co_games``) against the population, so thin evidence is visible.
- A ring's mechanism is the pair mechanism its internal links carry most (summed link
  weight); its signals are ``internal_links`` and, per collusion signal, the value of the
  ring's strongest internal pair against the pair population. A member those signals do
  not name (the graph joins accounts that share a device, whatever their play) gets his
  shared device (else IP) link as a signal naming the pair, and the connection as
  evidence (session 15: a household tablet put an honest account in a ring silently).
- A pair whose score is its *ring link* (the two act with one common partner, not with
  each other: fraud/rings.py, session 20) shows the two links' strongest signals, each
  naming its pair (the partner is the account both name), and the two accounts' own
  moves in those links: the moves between the two show no act.
- Evidence must show the move the signal names: hidden-card stock draws are close calls
  (the visible pile top was of use, ``pile_gain >= 1``), since drawing from the stock over
  a useless pile top is what every honest player does; shared-identifier evidence uses
  the shared IP when no device is shared.
"""

from __future__ import annotations

import contextlib
import itertools
import shlex
from typing import Any

import duckdb
import numpy as np
import orjson
import polars as pl

from ..events.cards import format_card
from ..events.views import register_view
from .features import PAIR_FEATURES, PLAYER_FEATURES
from .models import MECHANISMS, PAIR_MECHANISMS, PLAYER_MECHANISMS
from .rings import Ring

#: per mechanism, the signals that show it: (feature, +1 if high is suspicious, -1 if low)
MECH_SIGNALS: dict[str, list[tuple[str, int]]] = {
    "card_feeding": [("collude_z", 1), ("tie_z", 1), ("take_z", 1), ("tie_t", 1), ("feed_t", 1),
                     ("take_lift", 1), ("co_lift", 1)],
    "soft_play": [("hold_near_z", 1), ("tie_z", 1), ("tie_z_dir", 1), ("tie_any_t", 1),
                  ("out_t", 1), ("co_lift", 1)],
    "chip_dumping": [("throw_z", 1), ("left_z", 1), ("hold_z", 1), ("take_z_dir", 1), ("gain_z", 1),
                     ("lose_z", 1), ("flow_z", 1), ("hu_games", 1)],
    "multi_account": [("shared_devices", 1), ("shared_ips", 1), ("co_share", 1), ("tie_z", 1),
                      ("co_lift", 1)],
    "bot": [("think_sd", -1), ("think_sd_draw", -1), ("think_diff_corr", -1), ("slow_share", -1),
            ("think_sd_all", -1)],
    "hidden_card": [("hc_z", 1), ("stock_z", 1), ("hc_tie_z", 1), ("mi_tie_z", 1),
                    ("hc_all_z", 1), ("stock_informed", 1), ("hc_tie_t", 1), ("stock_edge", 1)],
    "timeout_abuse": [("auto_disc_z", 1), ("auto_hand_z", 1), ("auto_disc_share", 1),
                      ("auto_disc_rate", 1), ("auto_rate", 1),
                      ("fresh_rate", 1), ("auto_co_max", 1),
                      ("fresh_co_max", 1), ("disconnect_rate", 1), ("fresh_dist_rel", -1)],
}
# ``fresh_dist_rel`` is the hand at a Fresh press minus the average deal: an honest player
# presses on a poor hand (high); an abuser presses for a partner, on a hand that did not
# need it (low).

#: an anomaly flag names a mechanism only if its signature is at least this extreme
SIGNATURE_CUT = 0.9
#: the mechanism of an anomaly flag that no signature explains
UNUSUAL = "unusual"
#: the evidence count shown with every player / pair flag
COUNT_SIGNAL = {"player": "n_games", "pair": "co_games"}

FLAG_COLUMNS = ("flag_id", "subject_kind", "subject", "players", "score", "mechanism", "source",
                "signals", "evidence", "replay")


def _percentiles(df: pl.DataFrame, cols: list[str]) -> dict[str, np.ndarray]:
    """Per column, each row's mid-rank percentile ``(rank - 0.5) / n`` (NaN stays NaN; ties
    share the mean rank): the share of subjects below it, ties counted half. Symmetric, so
    ``p`` (high is suspicious) and ``1 - p`` (low is) are equally extreme: the top and the
    bottom of n subjects both read ``1 - 0.5 / n``."""
    out = {}
    for c in cols:
        if c not in df.columns:
            continue
        v = df.get_column(c).cast(pl.Float64).to_numpy()
        ok = np.isfinite(v)
        p = np.full(len(v), np.nan)
        if ok.sum():
            s = pl.Series(v[ok]).rank("average").to_numpy()
            p[ok] = (s - 0.5) / ok.sum()
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
        out.append(_signal(df, row, feat, p if sign > 0 else 1.0 - p, medians, sign))
    out.sort(key=lambda s: (-s["percentile"], s["signal"]))
    return out[:top]


def _signal(df: pl.DataFrame, row: int, feat: str, directional: float, medians: dict[str, float],
            sign: int) -> dict[str, Any]:
    value = df.get_column(feat)[row]
    med = medians.get(feat, float("nan"))
    return {"signal": feat, "value": None if value is None else round(float(value), 4),
            "population_median": round(med, 4) if np.isfinite(med) else None,
            "percentile": round(float(directional), 4),
            "suspicious_when": "high" if sign > 0 else "low"}


def _unusual_signals(df: pl.DataFrame, row: int, pct: dict[str, np.ndarray],
                     medians: dict[str, float], top: int = 4) -> list[dict[str, Any]]:
    """The subject's most extreme features in either direction (evidence counts left
    out: they are shown separately). Ties on the percentile go to the larger deviation
    from the median in units of the population's interquartile range."""
    scored = []
    for feat, p in pct.items():
        if feat.startswith("n_") or feat.endswith("_n") or feat in COUNT_SIGNAL.values():
            continue
        v = p[row]
        if not np.isfinite(v):
            continue
        sign = 1 if v >= 0.5 else -1
        col = df.get_column(feat).cast(pl.Float64).drop_nulls().drop_nans()
        q1, q3 = (float(col.quantile(0.25) or 0.0), float(col.quantile(0.75) or 0.0))
        x = float(df.get_column(feat)[row])
        dev = abs(x - medians[feat]) / (q3 - q1) if q3 > q1 else (np.inf if x != medians[feat] else 0.0)
        scored.append((max(v, 1.0 - v), dev, feat, sign))
    scored.sort(key=lambda t: (-t[0], -t[1], t[2]))
    return [_signal(df, row, f, p, medians, sign) for p, _, f, sign in scored[:top]]


def _count_signal(df: pl.DataFrame, row: int, kind: str, pct: dict[str, np.ndarray],
                  medians: dict[str, float]) -> list[dict[str, Any]]:
    feat = COUNT_SIGNAL[kind]
    if feat not in pct or not np.isfinite(pct[feat][row]):
        return []
    out = _signal(df, row, feat, pct[feat][row], medians, 1)
    out["suspicious_when"] = "evidence count"
    return [out]


def mechanism_strength(row: int, pct: dict[str, np.ndarray], mech: str) -> float:
    """Mean of the two most extreme directional percentiles of the mechanism's signature
    signals for this subject (0 when none is known)."""
    vals = []
    for feat, sign in MECH_SIGNALS[mech]:
        if feat in pct and np.isfinite(pct[feat][row]):
            p = pct[feat][row]
            vals.append(p if sign > 0 else 1.0 - p)
    return float(np.mean(sorted(vals)[-2:])) if vals else 0.0


def likely_mechanism(row: int, pct: dict[str, np.ndarray], mechs: tuple[str, ...]) -> str:
    """The mechanism whose signature signals are, on average, the most extreme."""
    best, best_v = mechs[0], -1.0
    for m in mechs:
        v = mechanism_strength(row, pct, m)
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
        "SELECT game_id, seq, player, target, card, gain, tie_alt, tie_n, taken, keep_gain "
        f"FROM fraud.discards WHERE ((player = ? AND target = ?) OR (player = ? AND target = ?)) {offset} "
        "AND tie_n >= 2 AND gain > tie_alt "
        "ORDER BY gain - tie_alt DESC, taken DESC, game_id, seq LIMIT ?", [a, b, b, a, limit]
    ).fetchall()
    return [{"game_id": g, "seq": s,
             "what": f"{p} discarded {format_card(c)}: meld gain {gn} to {t}'s hidden hand, where "
                     f"{_alike(n, p, kg)} averaged {alt:.2f}"
                     f"{'; ' + t + ' took it' if tk else ''}"}
            for g, s, p, t, c, gn, alt, n, tk, kg in rows]


def _alike(n: int, player: str, keep: int) -> str:
    """The options a free-choice sentence compares with (``tie_n`` cards, the discard among
    them), worded by what they were worth to the discarder (``keep_gain``): "useless" only
    when they were; a card of his own melds is worth as much as the others of them."""
    if not keep:
        return f"{n} cards equally useless to {player}"
    return f"{n} cards worth as much to {player} (meld value {keep} to his own hand)"


def _round_end_evidence(con: duckdb.DuckDBPyConnection, a: str, b: str,
                        limit: int) -> list[dict[str, Any]]:
    """Rounds one of the pair ended while the other held the fewest points at the table."""
    if limit <= 0:
        return []
    rows = con.execute(
        "WITH r AS (SELECT game_id, seq, ender, player, points_left, cards_left, "
        "  min(points_left) FILTER (WHERE player <> ender) OVER (PARTITION BY game_id, seq) AS lo, "
        "  count(*) OVER (PARTITION BY game_id, seq) AS k "
        "  FROM fraud.round_ends WHERE ender IN (?, ?)) "
        "SELECT game_id, seq, ender, player, points_left, cards_left FROM r "
        "WHERE player IN (?, ?) AND player <> ender AND points_left = lo AND k >= 3 "
        "ORDER BY game_id, seq LIMIT ?", [a, b, a, b, limit]).fetchall()
    return [{"game_id": g, "seq": s,
             "what": f"{e} ended the round while {p} held the least at the table: {n} "
                     f"card{'' if n == 1 else 's'} ({pts} points at 5/10/15 a card)"}
            for g, s, e, p, pts, n in rows]


def _shared_id_evidence(con: duckdb.DuckDBPyConnection, a: str, b: str,
                        limit: int) -> list[dict[str, Any]]:
    """a's connections from a device b also used (else an IP b also used), games where
    both sat first."""
    out: list[dict[str, Any]] = []
    for col, what in (("device_hash", "device"), ("ip_hash", "IP")):
        rows = con.execute(
            f"SELECT s1.game_id, s1.seq, s1.player, s1.{col}, "
            "bool_or(s1.game_id = s2.game_id) AS together FROM fraud.sessions s1 "
            f"JOIN fraud.sessions s2 ON s1.{col} = s2.{col} AND s2.player = ? "
            f"WHERE s1.player = ? AND s1.event = 'connect' AND s1.{col} IS NOT NULL "
            "GROUP BY ALL ORDER BY together DESC, s1.game_id, s1.seq LIMIT ?", [b, a, limit]).fetchall()
        out += [{"game_id": g, "seq": s,
                 "what": f"{p} connected from {what} {d}, also used by {b}"
                         + (" (seated at this game)" if tg else "")}
                for g, s, p, d, tg in rows]
        if out:
            break
    return out


def _player_feed_evidence(con: duckdb.DuckDBPyConnection, p: str, limit: int) -> list[dict[str, Any]]:
    """p's free-choice discards that helped the next player's hidden hand more than the
    equal options would (the opposite of hidden-card avoidance: feeding him)."""
    rows = con.execute(
        "SELECT game_id, seq, target, card, gain, tie_alt, tie_n, taken, keep_gain FROM fraud.discards "
        "WHERE player = ? AND \"offset\" = 1 AND tie_n >= 2 AND gain > tie_alt "
        "ORDER BY gain - tie_alt DESC, taken DESC, game_id, seq LIMIT ?", [p, limit]).fetchall()
    return [{"game_id": g, "seq": s,
             "what": f"{p} discarded {format_card(c)}: meld gain {gn} to {t}'s hidden hand, where "
                     f"{_alike(n, p, kg)} averaged {alt:.2f}"
                     f"{'; ' + t + ' took it' if tk else ''}"}
            for g, s, t, c, gn, alt, n, tk, kg in rows]


def _winnings_evidence(con: duckdb.DuckDBPyConnection, players: list[str],
                       limit: int) -> list[dict[str, Any]]:
    """The largest chip flows into the subject (from a pair's partner first)."""
    rows = con.execute(
        "SELECT game_id, seq, src, dst, amount, kind FROM fraud.chip_flows "
        "WHERE dst IN (SELECT unnest(?::VARCHAR[])) "
        "ORDER BY (src IN (SELECT unnest(?::VARCHAR[]))) DESC, amount DESC, game_id, seq LIMIT ?",
        [players, players, limit]).fetchall()
    return [{"game_id": g, "seq": s,
             "what": f"{d} received {a:g} chips from {sr} ({'through the pot' if k == 'pot' else 'directly'})"}
            for g, s, sr, d, a, k in rows]


def _family(signal: str, direction: str, kind: str) -> str | None:
    """For an ``unusual`` flag: which evidence shows this signal in this direction
    (None: no move shows it — e.g. a slow player's timing, a low rate)."""
    high = direction == "high"
    if signal.startswith(("shared_", "device_", "n_devices", "n_ips")):
        return "multi_account" if high else None
    if signal.startswith(("win_", "net_", "flow_", "lose_", "left_", "hu_", "throw_")):
        return ("winnings" if kind == "player" else "chip_dumping") if high else None
    if signal.startswith("disconnect_"):  # his drops, in every variant (Michigan has no clock)
        return "disconnects" if high else None
    if signal.startswith(("auto_", "fresh_")):
        return "timeout_abuse" if high or signal == "fresh_dist_rel" else None
    if signal.startswith(("think_", "slow_", "extra_clock")):
        return "bot" if not high else None
    if signal.startswith(("out_", "hold_")):  # going-out timing, Rummies held back
        return "soft_play" if high else None
    if signal.startswith(("hc_", "stock_", "mi_")):
        return "hidden_card" if high else "feeding"
    if kind == "pair" and high:
        return "card_feeding"
    return None


def unusual_evidence(con: duckdb.DuckDBPyConnection, players: list[str],
                     signals: list[dict[str, Any]], limit: int = 5) -> list[dict[str, Any]]:
    """Evidence for an anomaly no mechanism explains: the moves behind its most extreme
    signals, in their order."""
    kind = "pair" if len(players) >= 2 else "player"
    ev: list[dict[str, Any]] = []
    done: set[str] = set()
    for sig in signals:
        if sig.get("suspicious_when") not in ("high", "low"):
            continue
        fam = _family(sig["signal"], sig["suspicious_when"], kind)
        if fam is None or fam in done:
            continue
        done.add(fam)
        room = limit - len(ev)
        if fam == "winnings":
            got = _winnings_evidence(con, players, min(room, 3))
        elif fam == "feeding":
            got = _player_feed_evidence(con, players[0], min(room, 3))
        elif fam == "multi_account" and kind == "player":
            got = _device_evidence(con, players[0], min(room, 2))
        elif fam == "disconnects":
            got = _disconnect_evidence(con, players, min(room, 3))
        elif fam in PAIR_MECHANISMS and kind == "player":
            continue
        elif fam in PLAYER_MECHANISMS and kind == "pair":
            got = [e for p in players for e in evidence_for(con, fam, [p], limit=1)]
        else:
            got = evidence_for(con, fam, players, limit=min(room, 3))
        _add_new_moves(ev, got)
        if len(ev) >= limit:
            break
    return ev[:limit]


def _add_new_moves(ev: list[dict[str, Any]], got: list[dict[str, Any]]) -> None:
    """Append to ``ev`` the evidence of ``got`` at moves ``ev`` does not show yet: one row
    per move (game_id, seq). Two links of a ring can name the same move in other words
    (a connection from a family device "also used by" each of two members), and a
    reviewer opens a move once."""
    shown = {(e["game_id"], e["seq"]) for e in ev}
    for e in got:
        if (e["game_id"], e["seq"]) not in shown:
            shown.add((e["game_id"], e["seq"]))
            ev.append(e)


def _disconnect_evidence(con: duckdb.DuckDBPyConnection, players: list[str],
                         limit: int) -> list[dict[str, Any]]:
    """The subject's dropped connections (``PlayerDisconnected``), the moves behind
    ``disconnect_rate``: in a variant without a clock they are not auto-plays, so the
    timeout evidence holds none of them."""
    rows = con.execute(
        "SELECT game_id, seq, player FROM fraud.sessions WHERE event = 'disconnect' "
        "AND player IN (SELECT unnest(?::VARCHAR[])) ORDER BY game_id, seq LIMIT ?",
        [players, limit]).fetchall()
    return [{"game_id": g, "seq": s, "what": f"{p} disconnected from the game"} for g, s, p in rows]


def _held_evidence(con: duckdb.DuckDBPyConnection, a: str, b: str, limit: int) -> list[dict[str, Any]]:
    """Rummies one of the pair held back with the other seated (classic: he could have
    declared and discarded instead), the other closest to going out first."""
    rows = con.execute(
        "SELECT game_id, seq, player, target, target_dist FROM fraud.discards "
        "WHERE out_held = 1 AND ((player = ? AND target = ?) OR (player = ? AND target = ?)) "
        "ORDER BY target_dist, game_id, seq LIMIT ?", [a, b, b, a, limit]).fetchall()
    return [{"game_id": g, "seq": s,
             "what": f"{p} could have declared Rummy and discarded instead, with {t} at meld "
                     f"distance {d}"} for g, s, p, t, d in rows]


def _device_evidence(con: duckdb.DuckDBPyConnection, p: str, limit: int) -> list[dict[str, Any]]:
    """p's connections from a device another account also used."""
    rows = con.execute(
        "SELECT s1.game_id, s1.seq, s1.device_hash, string_agg(DISTINCT s2.player, ', ' "
        "ORDER BY s2.player) FROM fraud.sessions s1 "
        "JOIN fraud.sessions s2 ON s1.device_hash = s2.device_hash AND s2.player <> s1.player "
        "WHERE s1.player = ? AND s1.event = 'connect' "
        "GROUP BY ALL ORDER BY s1.game_id, s1.seq LIMIT ?", [p, limit]).fetchall()
    return [{"game_id": g, "seq": s, "what": f"{p} connected from device {d}, also used by {o}"}
            for g, s, d, o in rows]


def evidence_for(con: duckdb.DuckDBPyConnection, mech: str, players: list[str],
                 limit: int = 5) -> list[dict[str, Any]]:
    """The moves a reviewer should open for this subject and mechanism."""
    if mech in PAIR_MECHANISMS and len(players) >= 2:
        a, b = players[0], players[1]
        ev = []
        if mech == "multi_account":
            ev += _shared_id_evidence(con, a, b, 2)
        if mech == "chip_dumping":
            rows = con.execute(
                "SELECT m.game_id, m.seq, m.player FROM fraud.moves m "
                "JOIN fraud.player_games o ON o.game_id = m.game_id AND o.player IN (?, ?) "
                "AND o.player <> m.player WHERE m.type = 'PlayerLeft' AND m.player IN (?, ?) "
                "ORDER BY m.game_id, m.seq LIMIT 2", [a, b, a, b]).fetchall()
            ev += [{"game_id": g, "seq": s, "what": f"{p} left the game, handing the pot on"}
                   for g, s, p in rows]
            ev += _held_evidence(con, a, b, 2)
        if mech == "soft_play":
            ev += _held_evidence(con, a, b, 2)
            ev += _round_end_evidence(con, a, b, 2)
        ev += _discard_evidence(con, a, b, limit - len(ev), any_offset=mech == "soft_play")
        return ev[:limit]
    (p,) = players[:1]
    if mech == "hidden_card":
        rows = con.execute(
            "SELECT game_id, seq, source, pile_gain, stock_gain FROM fraud.pickups WHERE player = ? "
            "AND ((source = 'stock' AND stock_gain > pile_gain AND pile_gain >= 1) OR "
            "(source = 'discard' AND stock_gain < pile_gain AND pile_gain <= 1)) "
            "ORDER BY abs(stock_gain - pile_gain) DESC, game_id, seq LIMIT 3", [p]).fetchall()
        ev = [{"game_id": g, "seq": s,
               "what": (f"{p} drew from the stock although the visible pile top was of use "
                        f"(meld gain {pg}): the hidden stock top was worth {sg}")
               if src == "stock" else
               (f"{p} took the pile top of little use (meld gain {pg}) over the stock: "
                f"the hidden stock top was worth {sg}")}
              for g, s, src, pg, sg in rows]
        rows = con.execute(
            "SELECT game_id, seq, target, card, gain, tie_alt, tie_n, keep_gain FROM fraud.discards "
            "WHERE player = ? AND \"offset\" = 1 AND tie_n >= 2 AND pub_flat AND gain < tie_alt "
            "ORDER BY tie_alt - gain DESC, game_id, seq LIMIT 2", [p]).fetchall()
        ev += [{"game_id": g, "seq": s,
                "what": f"{p} discarded {format_card(c)}: gain {gn} to {t}'s hidden hand where "
                        f"{_alike(n, p, kg)}, and alike on the public record, "
                        f"averaged {alt:.2f}"} for g, s, t, c, gn, alt, n, kg in rows]
        rows = con.execute(  # Michigan: starts that reached further than they looked
            "SELECT game_id, seq, run, reach, tie_reach, tie_n FROM fraud.starts "
            "WHERE player = ? AND tie_n >= 2 AND reach > tie_reach "
            "ORDER BY reach - tie_reach DESC, game_id, seq LIMIT 2", [p]).fetchall()
        ev += [{"game_id": g, "seq": s,
                "what": f"{p} started the suit that played {r} of his cards before the stop, "
                        f"where {n} starts that looked the same (a visible run of {u}, as many of his "
                        f"cards in the suit) "
                        f"averaged {tr:.2f}"} for g, s, u, r, tr, n in rows]
        ev.sort(key=lambda e: (e["game_id"], e["seq"]))
        return ev[:limit]
    if mech == "timeout_abuse":
        rows = con.execute(
            "SELECT game_id, seq, type, dist FROM fraud.moves WHERE player = ? AND "
            "(auto OR type = 'FreshPressed') ORDER BY game_id, seq LIMIT ?", [p, limit]).fetchall()
        return [{"game_id": g, "seq": s,
                 "what": f"{p} {'was auto-played (timed out)' if t == 'AutoPlayed' else 'pressed Fresh'}"
                         + (f" with meld distance {d}" if d is not None and d >= 0 else "")}
                for g, s, t, d in rows]
    rows = con.execute(  # bot: hard decisions made as fast as easy ones
        "SELECT game_id, seq, think_ms, difficulty FROM fraud.moves WHERE player = ? AND "
        "type = 'Discarded' AND NOT auto ORDER BY difficulty DESC, think_ms, game_id, seq LIMIT ?",
        [p, limit]).fetchall()
    ev = [{"game_id": g, "seq": s, "what": f"{p} discarded at difficulty {d} in {t} ms"}
          for g, s, t, d in rows]
    if not ev:  # Michigan has no discards: the timed moves think_sd_all is made of
        rows = con.execute(
            "SELECT game_id, seq, type, think_ms FROM fraud.moves WHERE player = ? AND seat >= 0 "
            "AND NOT auto AND think_ms < 30000 AND type NOT IN ('PlayerLeft', 'FreshPressed', "
            "'AutoPlayed') ORDER BY game_id, seq LIMIT ?", [p, limit]).fetchall()
        ev = [{"game_id": g, "seq": s, "what": f"{p} made a {t} move in {ms} ms"}
              for g, s, t, ms in rows]
    return ev


# -- building the flags -------------------------------------------------------------------------
def build_flags(con: duckdb.DuckDBPyConnection, players: pl.DataFrame, pairs: pl.DataFrame,
                player_scores: pl.DataFrame, pair_scores: pl.DataFrame, rings: list[Ring],
                *, supervised: bool, threshold: float = 0.5, anomaly_cut: float = 0.99,
                min_pair_games: int = 3) -> pl.DataFrame:
    """All flags, strongest first. ``players``/``pairs``: features; ``*_scores``: model
    output (a column per mechanism, and ``anomaly``)."""
    flags: list[dict[str, Any]] = []
    p_pct = _percentiles(players, list(dict.fromkeys(
        [f for m in PLAYER_MECHANISMS for f, _ in MECH_SIGNALS[m]] + list(PLAYER_FEATURES))))
    q_pct = _percentiles(pairs, list(dict.fromkeys(
        [f for m in PAIR_MECHANISMS for f, _ in MECH_SIGNALS[m]] + list(PAIR_FEATURES))))
    p_med = {c: _median(players, c) for c in p_pct}
    q_med = {c: _median(pairs, c) for c in q_pct}
    pindex = {p: i for i, p in enumerate(players.get_column("player").to_list())}
    qindex = {k: i for i, k in enumerate(zip(pairs.get_column("p1").to_list(),
                                              pairs.get_column("p2").to_list(), strict=True))}
    qrows = {(r["p1"], r["p2"]): r for r in pair_scores.iter_rows(named=True)}

    def pick(row: dict[str, Any], mechs: tuple[str, ...]) -> tuple[str | None, float]:
        avail = [(row[m], m) for m in mechs if m in row and row[m] is not None]
        if not avail:
            return None, 0.0
        s, m = max(avail)
        return m, float(s)

    def anomaly_mechanism(i: int, pct: dict[str, np.ndarray], mechs: tuple[str, ...]) -> str:
        mech = likely_mechanism(i, pct, mechs)
        return mech if mechanism_strength(i, pct, mech) >= SIGNATURE_CUT else UNUSUAL

    def explain(df: pl.DataFrame, kind: str, i: int, mech: str, pct: dict[str, np.ndarray],
                med: dict[str, float]) -> list[dict[str, Any]]:
        sig = (_unusual_signals(df, i, pct, med) if mech == UNUSUAL
               else _signals(df, i, mech, pct, med))
        return sig + _count_signal(df, i, kind, pct, med)

    for row in player_scores.iter_rows(named=True):
        i = pindex[row["player"]]
        mech, score = pick(row, PLAYER_MECHANISMS) if supervised else (None, 0.0)
        source = "model"
        if mech is not None and score < threshold and (row.get("any_player") or 0.0) >= threshold:
            score = float(row["any_player"])  # fraud of some kind: the likeliest one named
        if mech is None or score < threshold:
            # with a model: only a player beyond the training world's honest tail
            # (models.unseen_cut); without: the scored population's top percentile
            if (not row.get("beyond_tail")) if supervised else row["anomaly"] < anomaly_cut:
                continue
            mech, score, source = anomaly_mechanism(i, p_pct, PLAYER_MECHANISMS), row["anomaly"], "anomaly"
        flags.append(_flag("player", [row["player"]], score, mech, source,
                           explain(players, "player", i, mech, p_pct, p_med), con))
    pair_mech: dict[tuple[str, str], tuple[str, float]] = {}
    for row in pair_scores.iter_rows(named=True):
        key = (row["p1"], row["p2"])
        i = qindex[key]
        mech, score = pick(row, PAIR_MECHANISMS) if supervised else (None, 0.0)
        source = "model"
        if mech is not None:
            pair_mech[key] = (mech, score)
        if mech is None or score < threshold:
            if supervised or row["anomaly"] < anomaly_cut:
                continue
            co = pairs.get_column("co_games")[i]
            shared = pairs.get_column("shared_devices")[i]
            if (co or 0) < min_pair_games and not shared:
                continue
            mech, score, source = anomaly_mechanism(i, q_pct, PAIR_MECHANISMS), row["anomaly"], "anomaly"
        via = row.get("ring_via") if source == "model" else None
        if via is not None and mech is not None:
            signals, ev = _ring_link_explanation(con, pairs, qindex, key, str(via), mech, q_pct, q_med)
            flags.append(_flag("pair", list(key), score, mech, source, signals, con, evidence=ev))
            continue
        flags.append(_flag("pair", list(key), score, mech, source,
                           explain(pairs, "pair", i, mech, q_pct, q_med), con))
    for ring in rings:
        inner = [k for k in itertools.combinations(ring.members, 2) if k in qindex and k in qrows]

        def carried(m: str, ks: list[tuple[str, str]] = inner) -> float:
            """How strongly the ring's pairs carry mechanism m, on average: the model's
            probability, or (no model) the signature's strength."""
            vals = [float(qrows[k].get(m) or 0.0) if supervised
                    else mechanism_strength(qindex[k], q_pct, m) for k in ks]
            return float(np.mean(vals)) if vals else 0.0

        mech = min(PAIR_MECHANISMS, key=lambda m: (-carried(m), m))
        links = []
        for k in inner:
            m, w = pair_mech.get(k) or (likely_mechanism(qindex[k], q_pct, PAIR_MECHANISMS),
                                        float(qrows[k]["anomaly"]))
            links.append((w, k, m))
        links.sort(key=lambda t: (-t[0], t[1]))
        signals = _ring_signals(pairs, [k for _, k, _ in links], qindex, mech, q_pct, q_med)
        # a member whose link shows in none of those signals (the graph joins accounts that
        # share a device, whatever the pair's play): his shared identifier, and its evidence
        named = {m for sig in signals for m in str(sig.get("pair", "")).split("|")}
        id_links = [x for x in (_shared_id_link(pairs, qindex, k, q_pct, q_med) for k in inner)
                    if x is not None]
        id_ev: list[dict[str, Any]] = []
        for member in ring.members:
            if member in named:
                continue
            own = [(sig, k) for sig, k in id_links if member in k]
            if own:
                sig, k = max(own, key=lambda t: (t[0]["signal"] == "shared_devices",
                                                 t[0]["value"], t[1]))
                signals.append(sig)
                named |= set(k)
                other = k[1] if k[0] == member else k[0]
                _add_new_moves(id_ev, _shared_id_evidence(con, member, other, limit=1))
        signals.append({"signal": "internal_links", "value": ring.edges, "population_median": None,
                        "percentile": None, "suspicious_when": "evidence count"})
        ev: list[dict[str, Any]] = []
        for _, (a, b), _m in links:
            _add_new_moves(ev, evidence_for(con, mech, [a, b], limit=2))
            if len(ev) >= 5:
                break
        ev = ev[: 5 - min(len(id_ev), 5)]  # room for each unnamed member's link
        _add_new_moves(ev, id_ev)
        flags.append(_flag("ring", list(ring.members), ring.score, mech, "graph", signals, con,
                           evidence=ev[:5]))
    # with a model, its flags (probabilities) come first and the unusual players (anomaly
    # percentiles, another scale) after them
    flags.sort(key=lambda f: (supervised and f["source"] == "anomaly", -f["score"],
                              f["subject_kind"], f["subject"]))
    for n, f in enumerate(flags, 1):
        f["flag_id"] = n
    return pl.DataFrame(flags, schema={
        "flag_id": pl.Int64, "subject_kind": pl.Utf8, "subject": pl.Utf8,
        "players": pl.List(pl.Utf8), "score": pl.Float64, "mechanism": pl.Utf8, "source": pl.Utf8,
        "signals": pl.Utf8, "evidence": pl.Utf8, "replay": pl.Utf8,
    }).select(FLAG_COLUMNS)


def _ring_link_explanation(con: duckdb.DuckDBPyConnection, pairs: pl.DataFrame,
                           qindex: dict[tuple[str, str], int], key: tuple[str, str], via: str,
                           mech: str, pct: dict[str, np.ndarray], medians: dict[str, float],
                           top: int = 4) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Signals and evidence of a pair whose score is its ring link through ``via``
    (fraud/rings.py, close_pair_scores): the two links' strongest signals, each naming its
    pair (as a ring's do: the partner is the account both name), strongest first, then
    the pair's own evidence count; and the two accounts' own moves in their links, where
    the mechanism shows (the moves between the two show no act)."""
    links = [(member, via) if member < via else (via, member) for member in key]
    signals: list[dict[str, Any]] = []
    ev: list[dict[str, Any]] = []
    for member, k in zip(key, links, strict=True):
        i = qindex.get(k)
        if i is None:
            continue
        for sig in _signals(pairs, i, mech, pct, medians, top=top):
            sig["pair"] = "|".join(k)
            signals.append(sig)
        # the subject's own moves only (member first: a shared identifier's evidence is the
        # first account's connections): each sentence names its mover first, and the
        # partner's moves belong to his links' own flags
        _add_new_moves(ev, [e for e in evidence_for(con, mech, [member, via], limit=5)
                            if e["what"].split()[0] == member])
    if not ev:  # none of their own in the links: the pair's own moves, as any pair flag's
        ev = evidence_for(con, mech, list(key))
    signals.sort(key=lambda sig: (-sig["percentile"], sig["signal"], sig["pair"]))
    return signals[:top] + _count_signal(pairs, qindex[key], "pair", pct, medians), ev[:5]


def _ring_signals(pairs: pl.DataFrame, inner: list[tuple[str, str]], qindex: dict[tuple[str, str], int],
                  mech: str, pct: dict[str, np.ndarray], medians: dict[str, float],
                  top: int = 4) -> list[dict[str, Any]]:
    """Per signature signal of the ring's mechanism, its strongest internal pair: value
    and directional percentile against the pair population, and which pair."""
    out = []
    for feat, sign in MECH_SIGNALS[mech]:
        if feat not in pct:
            continue
        best: tuple[float, tuple[str, str]] | None = None
        for k in inner:
            p = pct[feat][qindex[k]]
            if np.isfinite(p):
                d = p if sign > 0 else 1.0 - p
                if best is None or d > best[0]:
                    best = (d, k)
        if best is not None:
            sig = _signal(pairs, qindex[best[1]], feat, best[0], medians, sign)
            sig["pair"] = "|".join(best[1])
            out.append(sig)
    out.sort(key=lambda s: (-s["percentile"], s["signal"]))
    return out[:top]


def _shared_id_link(pairs: pl.DataFrame, qindex: dict[tuple[str, str], int], key: tuple[str, str],
                    pct: dict[str, np.ndarray], medians: dict[str, float],
                    ) -> tuple[dict[str, Any], tuple[str, str]] | None:
    """The shared device (else IP) count of a ring's internal pair as a signal naming the
    pair, or None when the two share neither."""
    i = qindex[key]
    for feat in ("shared_devices", "shared_ips"):
        value = pairs.get_column(feat)[i] if feat in pairs.columns else None
        if value and value > 0 and feat in pct:
            p = pct[feat][i]
            sig = _signal(pairs, i, feat, float(p) if np.isfinite(p) else 1.0, medians, 1)
            sig["pair"] = "|".join(key)
            return sig, key
    return None


def replay_command(game_id: str, seq: int) -> str:
    """The shell command that opens ``game_id`` at ``seq``. A game id is any 1-64 chars
    (EVENTS.md): quoted for the shell, and behind ``--`` when it starts with ``-`` (typer
    would read ``-g1`` as an option); a plain id keeps the documented form."""
    if game_id.startswith("-"):
        return f"rummyguard replay --at {seq} -- {shlex.quote(game_id)}"
    return f"rummyguard replay {shlex.quote(game_id)} --at {seq}"


def _flag(kind: str, players: list[str], score: float, mech: str, source: str,
          signals: list[dict[str, Any]], con: duckdb.DuckDBPyConnection,
          evidence: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    if evidence is not None:
        ev = evidence
    elif mech == UNUSUAL:
        ev = unusual_evidence(con, players, signals)
    else:
        ev = evidence_for(con, mech, players)
    replay = replay_command(ev[0]["game_id"], ev[0]["seq"]) if ev else ""
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
        with contextlib.suppress(duckdb.TransactionException):  # aborted: keep the first error
            con.unregister("_rg_flags")
    register_view(con, "flags", FLAGS_VIEW)


__all__ = ["FLAG_COLUMNS", "MECHANISMS", "MECH_SIGNALS", "build_flags", "evidence_for",
           "likely_mechanism", "write_flags"]
