"""Facts: what each replayed game says about its players, as rows (data flow step 4).

:func:`game_facts` replays one game through :class:`~rummyguard.replay.engine.GameEngine`
with an observer that sees the *hidden* state after every event (all hands, the stock
order) — exactly what a fraud analyst needs and a player never sees. It emits these
tables (columns are documented in docs/fraud.md):

``moves``         one row per player decision (and per auto-play): think time, hand
                  size, meld distance before the move, a decision-difficulty proxy.
``discards``      one row per (discard, other active seat): the card's meld gain to
                  that seat's hidden hand, the mean gain of the discarder's other options
                  to the same seat (the comparable situation), whether that seat took it.
``pickups``       one row per draw: the gain of what was taken, of the visible pile top,
                  and of the hidden stock top (the option no honest player can see).
``player_games``  one row per seated player: seat, result, net chips, deal strength,
                  leave / auto-play / Fresh counts.
``chip_flows``    pot-mediated flows attributed from each loser to each winner
                  (in proportion to the winners' gains), plus direct player transfers.
``sessions``      PlayerConnected/Disconnected with device and IP hashes.

The per-game function is pure and picklable (a module-level function of plain data),
so it runs unchanged under a process pool or Ray ``map_batches``: :func:`batch_facts`
maps a list of games to one Arrow table per kind.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import orjson
import pyarrow as pa

from ..events.cards import JOKER, NCARDS, parse_card
from ..events.timestamps import ts_millis
from ..replay.engine import GameEngine
from .handeval import Family, family_of, gain_vector, is_wild, meld_distance

Event = dict[str, Any]

#: Arrow schema of each fact table (the order of columns is the order written).
SCHEMAS: dict[str, pa.Schema] = {
    "moves": pa.schema([
        ("game_id", pa.string()), ("seq", pa.int32()), ("player", pa.string()),
        ("seat", pa.int8()), ("variant", pa.string()), ("type", pa.string()),
        ("ts_ms", pa.int64()), ("think_ms", pa.int64()), ("turn", pa.int32()),
        ("hand_size", pa.int16()), ("dist", pa.int16()), ("difficulty", pa.int16()),
        ("auto", pa.bool_()),
    ]),
    "discards": pa.schema([
        ("game_id", pa.string()), ("seq", pa.int32()), ("player", pa.string()),
        ("target", pa.string()), ("offset", pa.int8()), ("card", pa.int8()),
        ("gain", pa.int8()), ("alt_gain", pa.float32()), ("keep_gain", pa.int8()),
        ("taken", pa.bool_()),
    ]),
    "pickups": pa.schema([
        ("game_id", pa.string()), ("seq", pa.int32()), ("player", pa.string()),
        ("source", pa.string()), ("ncards", pa.int8()), ("gain", pa.int8()),
        ("pile_gain", pa.int8()), ("stock_gain", pa.int8()),
        ("from_player", pa.string()),  # who discarded the pile top (None: the turned-up card)
    ]),
    "player_games": pa.schema([
        ("game_id", pa.string()), ("player", pa.string()), ("seat", pa.int8()),
        ("n_seats", pa.int8()), ("variant", pa.string()), ("table_id", pa.string()),
        ("stake", pa.int64()), ("start_ms", pa.int64()), ("end_ms", pa.int64()),
        ("won", pa.bool_()), ("net", pa.int64()), ("deal_dist", pa.float32()),
        ("left_game", pa.bool_()), ("removed", pa.bool_()), ("autoplays", pa.int16()),
        ("fresh", pa.int16()), ("moves", pa.int32()), ("halted", pa.bool_()),
        ("findings", pa.int32()),
    ]),
    "chip_flows": pa.schema([
        ("game_id", pa.string()), ("seq", pa.int32()), ("src", pa.string()),
        ("dst", pa.string()), ("amount", pa.float64()), ("kind", pa.string()),
    ]),
    "sessions": pa.schema([
        ("game_id", pa.string()), ("seq", pa.int32()), ("player", pa.string()),
        ("event", pa.string()), ("ts_ms", pa.int64()), ("ip_hash", pa.string()),
        ("device_hash", pa.string()), ("client", pa.string()),
    ]),
}

TABLES = tuple(SCHEMAS)

#: moves worth timing: a player's own decisions
_MOVE_TYPES = frozenset({
    "Drew", "Discarded", "Melded", "LaidDown", "LaidOff", "JokerSwapped", "DeclaredRummy",
    "FreshPressed", "Bought", "RummyCalled", "WidowBought", "CardPlayed", "PokerHandDeclared",
    "PlayerLeft",
})
_HAND_CHANGERS = frozenset({"Drew", "Discarded", "Melded", "LaidDown", "LaidOff",
                            "JokerSwapped", "DeclaredRummy", "Bought", "RummyCalled"})


class Sink:
    """Row buffers, one list of tuples per table (one append per row is the cheapest
    build); columns are formed once, in :meth:`tables`."""

    def __init__(self) -> None:
        self.rows: dict[str, list[tuple[Any, ...]]] = {t: [] for t in SCHEMAS}

    def add(self, table: str, *values: Any) -> None:
        self.rows[table].append(values)

    def tables(self) -> dict[str, pa.Table]:
        out = {}
        for t, rows in self.rows.items():
            schema = SCHEMAS[t]
            cols = list(zip(*rows, strict=True)) if rows else [() for _ in schema]
            out[t] = pa.Table.from_arrays(
                [pa.array(c, type=f.type) for c, f in zip(cols, schema, strict=True)], schema=schema)
        return out


class _Observer:
    """Folds the hidden state after each event into fact rows for one game."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.game_id = ""
        self.variant = ""
        self.fam: Family | None = None
        self.seats: list[str] = []
        self.prev_ts = 0
        self.pile_top: int | None = None
        self.pile_from: str = ""
        self.stock_top: int | None = None
        self.turns: dict[str, int] = {}
        self.gain_cache: dict[tuple[int, ...], np.ndarray] = {}
        self.dist_cache: dict[tuple[int, ...], int] = {}
        self.last_discard_rows: dict[str, int] = {}  # target -> row index of the last discard
        self.last_discard_seq = -1
        self.deal_dists: dict[str, list[int]] = {}
        self.autoplays: dict[str, int] = {}
        self.fresh: dict[str, int] = {}
        self.left: set[str] = set()
        self.removed: set[str] = set()
        self.n_moves: dict[str, int] = {}
        self.start_ms = 0
        self.table_id = ""
        self.stake = 0

    # -- helpers --------------------------------------------------------------------------
    def gains(self, hand: list[int]) -> np.ndarray:
        key = tuple(hand)
        g = self.gain_cache.get(key)
        if g is None:
            assert self.fam is not None
            g = gain_vector(hand, self.fam)
            if len(self.gain_cache) > 256:
                self.gain_cache.clear()
            self.gain_cache[key] = g
        return g

    def dist(self, hand: list[int]) -> int:
        key = tuple(hand)
        d = self.dist_cache.get(key)
        if d is None:
            assert self.fam is not None
            d = meld_distance(hand, self.fam)
            if len(self.dist_cache) > 256:
                self.dist_cache.clear()
            self.dist_cache[key] = d
        return d

    def _remember_table(self, st: Any) -> None:
        pile = getattr(st, "pile", None)
        stock = getattr(st, "stock", None)
        self.pile_top = pile[-1] if pile else None
        self.stock_top = stock[-1] if stock else None

    # -- the observer -----------------------------------------------------------------------
    def __call__(self, engine: GameEngine, event: Event) -> None:
        etype = event["type"]
        seq = event["seq"]
        ctx = engine.ctx
        ts = ctx.ts_ms if ctx is not None else ts_millis(event["ts"])
        think = ts - self.prev_ts if self.prev_ts else 0
        self.prev_ts = ts
        st = engine.variant
        if etype == "GameCreated":
            p = event["payload"]
            self.game_id = event["game_id"]
            self.variant = p["variant"]
            self.fam = family_of(self.variant)
            self.seats = list(p["seats"])
            self.start_ms = ts
            self.table_id = str(p.get("table_id", ""))
            self.stake = int(p.get("stake", 0))
            self._remember_table(st)
            return
        if st is None:
            return
        hands: list[list[int]] | None = getattr(st, "hands", None) if self.fam else None
        actor = event["actor"]
        if etype in ("PlayerConnected", "PlayerDisconnected"):
            p = event["payload"]
            self.sink.add("sessions", self.game_id, seq, actor,
                          "connect" if etype == "PlayerConnected" else "disconnect", ts,
                          p.get("ip_hash"), p.get("device_hash"), p.get("client"))
        elif etype == "RoundStarted" and hands is not None:
            self.pile_from = ""  # the turned-up card: nobody discarded it
            for s, pid in enumerate(self.seats):
                if sum(hands[s]):
                    self.deal_dists.setdefault(pid, []).append(self.dist(hands[s]))
        elif etype == "AutoPlayed":
            player = event["payload"]["player"]
            self.autoplays[player] = self.autoplays.get(player, 0) + 1
            self._move(event, player, ts, think, hands, auto=True)
            self.pile_from = player  # the auto-discard is not a decision: no discard rows
            self.last_discard_rows = {}
        elif etype == "PlayerRemoved":
            self.removed.add(event["payload"]["player"])
        elif actor != "system" and etype in _MOVE_TYPES:
            if etype == "FreshPressed":
                self.fresh[actor] = self.fresh.get(actor, 0) + 1
            if etype == "PlayerLeft":
                self.left.add(actor)
            self._move(event, actor, ts, think, hands, auto=False)
            if hands is not None:
                if etype == "Drew":
                    self._pickup(event, actor, hands)
                elif etype == "Discarded":
                    self._discard(event, actor, parse_card(event["payload"]["card"]), hands)
                elif etype == "DeclaredRummy":
                    self._discard(event, actor, parse_card(event["payload"]["discard"]), hands)
        self._remember_table(st)

    def _move(self, event: Event, player: str, ts: int, think: int,
              hands: list[list[int]] | None, *, auto: bool) -> None:
        seat = self.seats.index(player) if player in self.seats else -1
        turn = self.turns.get(player, 0) + 1
        self.turns[player] = turn
        self.n_moves[player] = self.n_moves.get(player, 0) + 1
        etype = event["type"]
        size = dist = diff = -1
        if hands is not None and seat >= 0 and self.fam is not None:
            hand = list(hands[seat])
            p = event["payload"]
            # the hand *before* the move, rebuilt from the hand after it
            if etype == "Drew":
                for c in p.get("cards", []):
                    hand[parse_card(c)] -= 1
            elif etype == "Discarded":
                hand[parse_card(p["card"])] += 1
            elif etype == "AutoPlayed":
                hand[parse_card(p["discarded"])] += 1
                if p.get("drew"):
                    hand[parse_card(p["drew"])] -= 1
            if min(hand) >= 0:
                size = sum(hand)
                if etype == "Drew":  # two options; a close call when the pile top helps
                    top = self.pile_top
                    diff = 1 + (top is not None and int(self.gains(hand)[top]) > 0)
                elif etype in ("Discarded", "FreshPressed", "DeclaredRummy"):
                    dist = self.dist(hand)
                    diff = dist
        self.sink.add("moves", self.game_id, event["seq"], player, seat, self.variant, etype,
                      ts, think, turn, size, dist, diff, auto)

    def _pickup(self, event: Event, player: str, hands: list[list[int]]) -> None:
        seat = self.seats.index(player)
        p = event["payload"]
        cards = [parse_card(c) for c in p["cards"]]
        hand = list(hands[seat])
        for c in cards:
            hand[c] -= 1
        if min(hand) < 0:
            return
        g = self.gains(hand)
        gain = max(int(g[c]) for c in cards) if cards else 0
        pile_gain = int(g[self.pile_top]) if self.pile_top is not None else -1
        stock_gain = int(g[self.stock_top]) if self.stock_top is not None else -1
        source = p["source"]
        from_player = self.pile_from if self.pile_top is not None and self.pile_from else None
        self.sink.add("pickups", self.game_id, event["seq"], player, source, len(cards), gain,
                      pile_gain, stock_gain, from_player)
        if source == "discard" and self.last_discard_seq >= 0:
            rows = self.sink.rows["discards"]
            row = self.last_discard_rows.get(player)
            if row is not None and row < len(rows):
                rows[row] = (*rows[row][:-1], True)

    def _discard(self, event: Event, player: str, card: int, hands: list[list[int]]) -> None:
        """Rows for one discard: the card's gain to every other active seat's hidden hand."""
        assert self.fam is not None
        seat = self.seats.index(player)
        n = len(self.seats)
        own = list(hands[seat])
        own[card] += 1  # the hand before the discard
        options = [c for c in range(NCARDS) if own[c] > 0 and c != JOKER and not is_wild(c, self.fam)]
        n_opt = len(options)
        keep_hand = list(own)
        keep_hand[card] -= 1
        keep_gain = int(self.gains(keep_hand)[card])
        self.last_discard_rows = {}
        self.last_discard_seq = event["seq"]
        self.pile_from = player
        for off in range(1, n):
            t = (seat + off) % n
            target = self.seats[t]
            th = hands[t]
            if not sum(th):
                continue  # out of the game (removed / left): nobody to feed
            g = self.gains(th)
            alt = float(g[options].sum()) / n_opt if n_opt else 0.0
            self.last_discard_rows[target] = len(self.sink.rows["discards"])
            self.sink.add("discards", self.game_id, event["seq"], player, target, off, card,
                          int(g[card]), alt, keep_gain, False)

    def finish(self, engine: GameEngine) -> None:
        record = engine.record()
        if not self.seats:
            return
        winners = set(record.results.winners)
        net = record.results.net
        end_ms = self.prev_ts
        n = len(self.seats)
        for s, pid in enumerate(self.seats):
            dd = self.deal_dists.get(pid)
            self.sink.add(
                "player_games", self.game_id, pid, s, n, self.variant, self.table_id, self.stake,
                self.start_ms, end_ms, pid in winners, int(net.get(pid, 0)),
                float(np.mean(dd)) if dd else None, pid in self.left, pid in self.removed,
                self.autoplays.get(pid, 0), self.fresh.get(pid, 0), self.n_moves.get(pid, 0),
                record.halted, len(record.findings),
            )
        self._flows(record.transfers, net)

    def _flows(self, transfers: list[Any], net: dict[str, int]) -> None:
        """Pot-mediated flows: each loser's loss split over winners by their gain."""
        seats = set(self.seats)
        last_seq = max((t.seq for t in transfers), default=0)
        direct: dict[tuple[str, str], tuple[int, int]] = {}
        for t in transfers:
            if t.src in seats and t.dst in seats:
                amt, _ = direct.get((t.src, t.dst), (0, t.seq))
                direct[(t.src, t.dst)] = (amt + t.amount, t.seq)
        for (src, dst), (amt, seq) in sorted(direct.items()):
            self.sink.add("chip_flows", self.game_id, seq, src, dst, float(amt), "direct")
        # pot-mediated part: the net not explained by direct transfers
        resid = dict(net)
        for (src, dst), (amt, _) in direct.items():
            resid[src] = resid.get(src, 0) + amt
            resid[dst] = resid.get(dst, 0) - amt
        gainers = {p: v for p, v in resid.items() if v > 0 and p in seats}
        total = sum(gainers.values())
        if not total:
            return
        for loser in self.seats:
            loss = -resid.get(loser, 0)
            if loss <= 0:
                continue
            for winner in sorted(gainers):
                self.sink.add("chip_flows", self.game_id, last_seq, loser, winner,
                              loss * gainers[winner] / total, "pot")


def collect(events: Iterable[Event], sink: Sink) -> None:
    """Replay one game and append its fact rows to ``sink``."""
    obs = _Observer(sink)
    engine = GameEngine(verify_hashes=False, observer=obs)
    for event in events:
        engine.apply(event)
    obs.finish(engine)


def game_facts(events: list[Event]) -> dict[str, pa.Table]:
    """The fact tables of one game (events in seq order, dicts as in EVENTS.md)."""
    sink = Sink()
    collect(events, sink)
    return sink.tables()


def batch_facts(games: list[list[Event]]) -> dict[str, pa.Table]:
    """The fact tables of many games at once (one Arrow table per kind)."""
    sink = Sink()
    for events in games:
        collect(events, sink)
    return sink.tables()


def batch_facts_raw(games: list[list[str]]) -> dict[str, pa.Table]:
    """Like :func:`batch_facts` from raw JSON lines (cheap to ship to a worker process)."""
    sink = Sink()
    for lines in games:
        collect([orjson.loads(line) for line in lines], sink)
    return sink.tables()


__all__ = ["SCHEMAS", "TABLES", "Sink", "batch_facts", "batch_facts_raw", "collect", "game_facts"]
