"""Facts: what each replayed game says about its players, as rows (data flow step 4).

:func:`game_facts` replays one game through :class:`~rummyguard.replay.engine.GameEngine`
with an observer that sees the *hidden* state after every event (all hands, the stock
order) — exactly what a fraud analyst needs and a player never sees. It emits these
tables (columns are documented in docs/fraud.md):

``moves``         one row per player decision (and per auto-play): think time, hand
                  size, meld distance before the move (draws and auto-plays included), a
                  decision-difficulty proxy.
``discards``      one row per (discard, other active seat): the card's meld gain to
                  that seat's hidden hand; the mean gain to the same seat of all the
                  discarder's options (``alt_gain``) and of the options that were worth
                  exactly as much to the discarder himself (``tie_alt``, ``tie_n``: the
                  comparable situation — a free choice between equally useless cards);
                  the same two measured against what the seat is *publicly* known to hold
                  (the pile cards he took and still holds: ``pub_gain``, ``pub_tie_alt``,
                  ``pub_flat``); whether that seat took it. Classic only (session 12): at a
                  decision where the discarder could have declared Rummy instead,
                  ``out_held`` is 1 when he discarded (he held his Rummy back) and 0 on the
                  declaration's own discard, with ``target_dist``, the seat's hidden meld
                  distance then (soft play holds back while a partner is about to go out;
                  a dumper throws the game). Null at every other decision.
``pickups``       one row per draw: the gain of what was taken, of the visible pile top,
                  and of the hidden stock top (the option no honest player can see).
``player_games``  one row per seated player: seat, result, net chips, deal strength,
                  leave / auto-play / Fresh counts.
``chip_flows``    pot-mediated flows attributed from each loser to each winner
                  (in proportion to the winners' gains), plus direct player transfers.
``sessions``      PlayerConnected/Disconnected with device and IP hashes.
``round_ends``    one row per (round end, seated player): who ended the round (the
                  player whose move ended it), and every player's cards and points left
                  — the going-out timing of soft play (ending a round while a partner
                  holds many points is what a colluder avoids).
``starts``        Michigan: one row per start after a stop with a choice of suits — the
                  own cards each start would visibly chain (``run``: his consecutive cards)
                  and would really play before it stops (``reach``: counted through the
                  hidden owners of the cards in between). An honest player can only go by
                  the run; a player who sees every hand picks the start that reaches
                  furthest (``reach - tie_reach``: against the starts that looked the same —
                  the same visible run and as many of his cards in the suit from the start up;
                  ``reach - run``, the hidden part of the reach, against the population's
                  for starts with as many of his cards above the visible run,
                  ``held - run``, at tables of as many seats; ``held``: his cards of the chosen suit from the start up,
                  session 18). Round 4: ``hb`` — he chose *the* start a seeing
                  player picks (among the clean starts, his lowest card of each allowed
                  suit: the most reach, the lowest card among equals) — and how that start
                  looked to him against his other clean starts (``hb_run``: its run minus
                  the best other run; ``hb_pay``: whether its suit's pay card is still ahead
                  of it, minus the best other's; ``hb_same``: other starts that looked
                  exactly alike), ``n_clean`` clean starts. The look is all the null needs:
                  an honest choice depends on it and not on the hidden reach.

The per-game function is pure and picklable (a module-level function of plain data),
so it runs unchanged under a process pool or Ray ``map_batches``: :func:`batch_facts`
maps a list of games to one Arrow table per kind.

Cost: the hand measures are integer bit masks (:mod:`.handeval`), cached per hand
content, so each seat's gain masks are computed once per change of his hand; the
per-discard work is a few popcounts per seat, not a pass over 53 cards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa

from ..events.cards import parse_card
from ..events.timestamps import ts_millis
from ..replay.engine import GameEngine
from ..replay.rules.michigan import PLAYED as MI_PLAYED
from ..replay.rules.michigan import START as MI_START
from .handeval import Family, family_of, gain_of, gain_sum, hand_masks, masks_gain, meld_distance, own_values

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
        ("tie_alt", pa.float32()), ("tie_n", pa.int8()), ("pub_gain", pa.int8()),
        ("pub_tie_alt", pa.float32()), ("pub_flat", pa.bool_()), ("taken", pa.bool_()),
        ("out_held", pa.int8()), ("target_dist", pa.int8()),
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
    "round_ends": pa.schema([
        ("game_id", pa.string()), ("seq", pa.int32()), ("round", pa.int16()),
        ("variant", pa.string()), ("ender", pa.string()), ("player", pa.string()),
        ("cards_left", pa.int16()), ("points_left", pa.int16()),
    ]),
    "starts": pa.schema([
        ("game_id", pa.string()), ("seq", pa.int32()), ("player", pa.string()),
        ("n_opt", pa.int8()), ("run", pa.int8()), ("reach", pa.int8()),
        ("reach_mean", pa.float32()), ("reach_max", pa.int8()), ("run_mean", pa.float32()),
        ("tie_n", pa.int8()), ("tie_reach", pa.float32()), ("n_clean", pa.int8()),
        ("hb", pa.bool_()), ("hb_run", pa.int8()), ("hb_pay", pa.int8()), ("hb_same", pa.int8()),
        ("held", pa.int8()),
    ]),
}

#: classic: the approximate meld distance (handeval.meld_distance) above which a hand is
#: not searched for a Rummy declaration (see ``_Observer._declarable``)
DECLARABLE_DIST = 5

#: points a card left in hand costs, the same for every meld variant (2-9: 5, T-K: 10,
#: aces and wild cards: 15) — a variant-neutral "how much is he holding"
_POINTS = [5 if c // 4 < 8 else (10 if c // 4 < 12 else 15) for c in range(52)] + [15]

TABLES = tuple(SCHEMAS)


class FactsFolderError(ValueError):
    """A facts folder that cannot be read as this version's facts (a table missing, or a
    column an older rummyguard did not write)."""


def read_facts_folder(folder: Path) -> dict[str, pa.Table]:
    """The fact tables of a folder ``scan --parquet`` (or ``eval --save-facts``) wrote.

    Refuses, naming what is wrong, a folder without every table or one written by an
    older rummyguard: features read the columns later versions added, and a missing one
    would fail deep in the SQL, or (for a column read with a default) score wrongly.
    """
    import pyarrow.parquet as pq

    missing = [t for t in TABLES if not (folder / f"{t}.parquet").exists()]
    if missing:
        raise FactsFolderError(f"{folder} holds no fact table(s) {', '.join(missing)} (.parquet)")
    tables = {t: pq.read_table(folder / f"{t}.parquet") for t in TABLES}
    stale = [f"{t}.{c}" for t in TABLES for c in SCHEMAS[t].names
             if c not in tables[t].column_names]
    if stale:
        raise FactsFolderError(
            f"{folder} holds facts from an older rummyguard (no column "
            f"{', '.join(stale[:3])}{', ...' if len(stale) > 3 else ''}): recompute them "
            "from the event log")
    return tables

#: the place of ``taken`` in a discards row (set when the target draws the card)
_TAKEN = SCHEMAS["discards"].names.index("taken")

#: moves worth timing: a player's own decisions
_MOVE_TYPES = frozenset({
    "Drew", "Discarded", "Melded", "LaidDown", "LaidOff", "JokerSwapped", "DeclaredRummy",
    "FreshPressed", "Bought", "RummyCalled", "WidowBought", "CardPlayed", "PokerHandDeclared",
    "PlayerLeft",
})
#: moves whose "hand before" is rebuilt and measured (the others: hand size only)
_REBUILD = frozenset({"Drew", "Discarded", "AutoPlayed", "FreshPressed", "DeclaredRummy"})


#: moves that show cards leaving the mover's hand, besides a discard: type -> the cards
_SHOWN_OUT: dict[str, Callable[[dict[str, Any]], list[int]]] = {
    "Melded": lambda p: [parse_card(c) for c in p["cards"]],
    "LaidDown": lambda p: [parse_card(c) for m in p["melds"] for c in m["cards"]],
    "LaidOff": lambda p: [parse_card(p["card"])],
    "JokerSwapped": lambda p: [parse_card(p["card"])],
    "RummyCalled": lambda p: [parse_card(p["discard"])],
}


def _identifier(value: str | None) -> str | None:
    """A device / IP hash as an identifier: a blank one (``""``, spaces: the platform had
    none) is NULL, not one value every such account would "share" (features.py joins
    accounts on equal hashes, rings.py links them)."""
    return value if value is not None and value.strip() else None


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


Masks = tuple[tuple[int, ...], tuple[int, ...]]


class _HandInfo:
    """What the facts need of one hand content, computed once: natural rank masks,
    wild count, gain masks (what each card would add), own card values (lazily)."""

    __slots__ = ("fam", "gain", "nat", "own", "wild")

    def __init__(self, hand: list[int], fam: Family) -> None:
        self.fam = fam
        self.nat, self.wild = hand_masks(hand, fam)
        self.gain: Masks = masks_gain(self.nat, fam)
        self.own: dict[int, int] | None = None

    def values(self) -> dict[int, int]:
        if self.own is None:
            self.own = own_values(self.nat, self.fam)
        return self.own


class _Observer:
    """Folds the hidden state after each event into fact rows for one game."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.game_id = ""
        self.variant = ""
        self.fam: Family | None = None
        self.seats: list[str] = []
        self.seat_index: dict[str, int] = {}
        self.prev_ts = 0
        self.pile_top: int | None = None
        self.pile_from: str = ""
        self.stock_top: int | None = None
        self.turns: dict[str, int] = {}
        self.info_cache: dict[tuple[int, ...], _HandInfo] = {}
        self.dist_cache: dict[tuple[int, ...], int] = {}
        self.public: list[dict[int, int]] = []  # per seat: cards he took from the pile
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
        self.in_round = False
        #: classic: the player in turn whose hand (after his draw, or his 15 dealt cards)
        #: could be declared as a Rummy; his next discard is then a Rummy held back
        self.could_out: str | None = None
        #: Michigan: what was due after the previous event (a start or a follow), i.e.
        #: before the current one — the engine shows the state after each event only
        self.mi_due: tuple[int, int, int] | None = None

    # -- helpers --------------------------------------------------------------------------
    def info(self, hand: list[int]) -> _HandInfo:
        key = tuple(hand)
        h = self.info_cache.get(key)
        if h is None:
            assert self.fam is not None
            h = _HandInfo(hand, self.fam)
            if len(self.info_cache) > 512:
                self.info_cache.clear()
            self.info_cache[key] = h
        return h

    def dist(self, hand: list[int]) -> int:
        key = tuple(hand)
        d = self.dist_cache.get(key)
        if d is None:
            assert self.fam is not None
            d = meld_distance(hand, self.fam)
            if len(self.dist_cache) > 512:
                self.dist_cache.clear()
            self.dist_cache[key] = d
        return d

    def public_masks(self, seat: int) -> Masks | None:
        """Gain masks of what the table knows ``seat`` holds (pile cards he took and
        has not been seen to part with), or None when nothing is known. From the public
        record alone: his hidden hand would tell a twin copy (two decks) of a card he
        took and then discarded or melded from the card itself."""
        known = self.public[seat]
        if not known:
            return None
        assert self.fam is not None
        nat = [0, 0, 0, 0]
        wr = self.fam.wild_rank
        for c in known:
            if c < 52 and c >> 2 != wr:
                nat[c & 3] |= 1 << (c >> 2)
        if not any(nat):
            return None
        return masks_gain(nat, self.fam)

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
            self.seat_index = {pid: s for s, pid in enumerate(self.seats)}
            self.public = [{} for _ in self.seats]
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
                          _identifier(p.get("ip_hash")), _identifier(p.get("device_hash")),
                          p.get("client"))
        elif etype == "RoundStarted" and hands is not None:
            self.pile_from = ""  # the turned-up card: nobody discarded it
            self.last_discard_rows = {}  # last round's discards can no longer be taken
            self.public = [{} for _ in self.seats]
            for s, pid in enumerate(self.seats):
                if any(hands[s]):
                    self.deal_dists.setdefault(pid, []).append(self.dist(hands[s]))
        elif etype == "AutoPlayed":
            player = event["payload"]["player"]
            self.autoplays[player] = self.autoplays.get(player, 0) + 1
            self._move(event, player, ts, think, hands, auto=True)
            self.pile_from = player  # the auto-discard is not a decision: no discard rows
            self.last_discard_rows = {}
            if player in self.seat_index:  # discarded in view of the table
                self._forget(self.seat_index[player], [parse_card(event["payload"]["discarded"])])
        elif etype == "PlayerRemoved":
            self.removed.add(event["payload"]["player"])
        elif actor != "system" and etype in _MOVE_TYPES:
            if etype == "FreshPressed":
                self.fresh[actor] = self.fresh.get(actor, 0) + 1
            if etype == "PlayerLeft":
                self.left.add(actor)
            if hands is not None and actor in self.seat_index:
                if etype == "Bought":  # the discard is bought in view of the table
                    bought = parse_card(event["payload"]["card"])
                    known = self.public[self.seat_index[actor]]
                    known[bought] = known.get(bought, 0) + 1
                elif etype in _SHOWN_OUT:
                    self._forget(self.seat_index[actor], _SHOWN_OUT[etype](event["payload"]))
            self._move(event, actor, ts, think, hands, auto=False)
            could = self.could_out == actor
            self.could_out = None
            if hands is not None:
                classic = self.variant == "classic"
                if etype == "Drew":
                    self._pickup(event, actor, hands)
                elif etype == "Discarded":
                    self._discard(event, actor, parse_card(event["payload"]["card"]), hands,
                                  out_held=1 if classic and could else None)
                elif etype == "DeclaredRummy":
                    # the declared melds left the hand with the discard: they were his
                    # options too (the hand after a declaration is empty)
                    self._discard(event, actor, parse_card(event["payload"]["discard"]), hands,
                                  _meld_cards(event["payload"]), out_held=0 if classic else None)
            elif etype == "CardPlayed" and self.variant == "michigan":
                self._start(event, actor, st)
        if self.variant == "michigan":
            self.mi_due = st.due() if st.in_deal and not st.over else None
        elif etype in ("Drew", "RoundStarted") and self.variant == "classic" and hands is not None:
            self.could_out = self._declarable(st, hands)
        elif etype == "AutoPlayed":
            self.could_out = None
        if hands is not None:
            now = bool(getattr(st, "in_round", False))
            if self.in_round and not now:
                self._round_end(event, hands, st)
            self.in_round = now
        if etype == "RummyCalled":  # Liverpool: the called discard left the pile to the
            self.pile_from = actor  # caller, whose own discard now tops it
            self.last_discard_rows = {}
        self._remember_table(st)

    def _move(self, event: Event, player: str, ts: int, think: int,
              hands: list[list[int]] | None, *, auto: bool) -> None:
        seat = self.seat_index.get(player, -1)
        turn = self.turns.get(player, 0) + 1
        self.turns[player] = turn
        self.n_moves[player] = self.n_moves.get(player, 0) + 1
        etype = event["type"]
        size = dist = diff = -1
        if hands is not None and seat >= 0 and self.fam is not None:
            if etype not in _REBUILD:
                size = sum(hands[seat])
            else:
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
                elif etype == "DeclaredRummy":
                    hand[parse_card(p["discard"])] += 1
                    for c in _meld_cards(p):
                        hand[c] += 1
                if min(hand) >= 0:
                    size = sum(hand)
                    # the meld distance of every hand a turn can stand at, the auto-played
                    # one included: the hand at a timeout against the population's hands at
                    # the same point (features: ``auto_hand_z``) needs both
                    dist = self.dist(hand)
                    if etype == "Drew":  # two options; a close call when the pile top helps
                        top = self.pile_top
                        diff = 1 + (top is not None
                                    and gain_of(self.info(hand).gain, top, self.fam) > 0)
                    elif etype != "AutoPlayed":
                        diff = dist
        self.sink.add("moves", self.game_id, event["seq"], player, seat, self.variant, etype,
                      ts, think, turn, size, dist, diff, auto)

    def _pickup(self, event: Event, player: str, hands: list[list[int]]) -> None:
        assert self.fam is not None
        seat = self.seat_index[player]
        p = event["payload"]
        cards = [parse_card(c) for c in p["cards"]]
        hand = list(hands[seat])
        for c in cards:
            hand[c] -= 1
        if min(hand) < 0:
            return
        g = self.info(hand).gain
        fam = self.fam
        gain = max(gain_of(g, c, fam) for c in cards) if cards else 0
        pile_gain = gain_of(g, self.pile_top, fam) if self.pile_top is not None else -1
        stock_gain = gain_of(g, self.stock_top, fam) if self.stock_top is not None else -1
        source = p["source"]
        from_player = self.pile_from if self.pile_top is not None and self.pile_from else None
        self.sink.add("pickups", self.game_id, event["seq"], player, source, len(cards), gain,
                      pile_gain, stock_gain, from_player)
        if source == "discard":
            known = self.public[seat]
            for c in cards:  # taken in view of the table: now public knowledge
                known[c] = known.get(c, 0) + 1
            if self.last_discard_seq >= 0:
                rows = self.sink.rows["discards"]
                row = self.last_discard_rows.get(player)
                if row is not None and row < len(rows):
                    r = rows[row]
                    rows[row] = (*r[:_TAKEN], True, *r[_TAKEN + 1:])

    def _declarable(self, st: Any, hands: list[list[int]]) -> str | None:
        """The player in turn, if his hand now (15 cards: after his draw, or dealt to the
        first player) holds a Rummy declaration by the engine's own rule
        (``find_declaration``: melds, a long run, the card taken from the pile kept).

        The engine's search runs only where the approximate meld distance is at most
        :data:`DECLARABLE_DIST`: on 1,500 classic games of the training world, 1,617 of the
        33,700 hands after a draw were declarable, 1 of them at distance 5 and none
        beyond, while half the hands lie beyond 5 (the search is the costly part)."""
        seat = getattr(st, "current", -1)
        if seat is None or seat < 0 or seat >= len(hands) or sum(hands[seat]) != 15:
            return None
        hand = hands[seat]
        if (self.dist(hand) > DECLARABLE_DIST or _loose_cards(hand) >= 2
                or st.find_declaration(seat) is None):
            return None
        return self.seats[seat]

    def _discard(self, event: Event, player: str, card: int, hands: list[list[int]],
                 melded: Iterable[int] = (), out_held: int | None = None) -> None:
        """Rows for one discard: the card's gain to every other active seat's hidden hand,
        against the discarder's options (all of them, and those worth as much to him).
        ``melded``: cards that left the hand in the same move (a declaration's melds).
        ``out_held``: classic, a decision where he could have gone out (1: he discarded
        instead, 0: he declared); then each row also gets the target's meld distance."""
        fam = self.fam
        assert fam is not None
        seat = self.seat_index[player]
        n = len(self.seats)
        own = list(hands[seat])
        own[card] += 1  # the hand before the discard
        for c in melded:
            own[c] += 1
        mine = self.info(own)
        opts = mine.nat
        n_opt = sum(m.bit_count() for m in opts)
        values = mine.values()
        keep_gain = values.get(card, 2)  # a wild card: worth a meld to anyone
        tie = [0, 0, 0, 0]  # options worth exactly what the discarded card was worth to him
        for c, v in values.items():
            if v == keep_gain:
                tie[c & 3] |= 1 << (c >> 2)
        tie_n = sum(m.bit_count() for m in tie)
        self.last_discard_rows = {}
        self.last_discard_seq = event["seq"]
        self.pile_from = player
        rows = self.sink.rows["discards"]
        off = 0  # the target's place in the order of play after the discarder (1 = next)
        for step in range(1, n):
            t = (seat + step) % n
            target = self.seats[t]
            th = hands[t]
            if not any(th):
                continue  # out of the game (removed / left / eliminated): nobody to feed
            off += 1
            g = self.info(th).gain
            gain = gain_of(g, card, fam)
            alt = gain_sum(g, opts) / n_opt if n_opt else 0.0
            tie_alt = gain_sum(g, tie) / tie_n if tie_n else float(gain)
            pg = self.public_masks(t)
            if pg is None:
                pub_gain, pub_tie, flat = 0, 0.0, True
            else:
                pub_gain = gain_of(pg, card, fam)
                pub_tie = gain_sum(pg, tie) / tie_n if tie_n else float(pub_gain)
                c2 = sum((pg[0][s] & tie[s]).bit_count() for s in range(4))
                c1 = sum((pg[1][s] & tie[s]).bit_count() for s in range(4))
                flat = c2 + c1 == 0 or c2 == tie_n or c1 == tie_n  # public info: no preference
            self.last_discard_rows[target] = len(rows)
            tdist = min(self.dist(th), 127) if out_held is not None else None
            rows.append((self.game_id, event["seq"], player, target, off, card, gain, alt,
                         keep_gain, tie_alt, tie_n, pub_gain, pub_tie, flat, False,
                         out_held, tdist))
        self._forget(seat, [card])

    def _forget(self, seat: int, cards: list[int]) -> None:
        """The table saw ``seat`` part with ``cards``: he is no longer known to hold them."""
        known = self.public[seat]
        for card in cards:
            if known.get(card):
                known[card] -= 1
                if not known[card]:
                    del known[card]

    def _start(self, event: Event, player: str, st: Any) -> None:
        """Michigan: a start after a stop with two or more suits to choose from — how far
        each candidate start would visibly chain and would really reach (hidden owners),
        and whether he chose the start a player who sees every hand would choose."""
        due = self.mi_due
        seat = self.seat_index.get(player, -1)
        if due is None or due[0] != MI_START or due[1] != seat:
            return
        card = parse_card(event["payload"]["card"])
        owner = list(st.owner)
        owner[card] = seat  # the state before the play
        clean = []  # his lowest card of each suit he may start (MI-START / MI-STOP)
        for suit in range(4):
            if suit == due[2]:
                continue
            low = next((c for c in range(suit, 52, 4) if owner[c] == seat), None)
            if low is not None:
                clean.append(low)
        options = clean if card in clean else [*clean, card]  # a dearer start (MI-PENALTY)
        if len(options) < 2:
            return

        def run_reach(c: int) -> tuple[int, int]:
            run = reach = 0
            visible = True
            while c < 52 and owner[c] >= 0:  # held by someone: the sequence goes on
                if owner[c] == seat:
                    reach += 1
                    run += visible
                else:
                    visible = False
                c += 4
            return run, reach

        def held(c: int) -> int:
            """His cards of the start's suit from the start up: what he sees of the suit."""
            return sum(1 for x in range(c, 52, 4) if owner[x] == seat)

        measured = {c: run_reach(c) for c in options}
        run, reach = measured[card]
        reaches = [r for _, r in measured.values()]
        runs = [u for u, _ in measured.values()]
        # Starts that looked the same to him: the same visible run *and* as many of his
        # cards in the suit. An honest player may well start the suit he holds most of
        # (more cards to shed); those cards raise the reach, so comparing by the run alone
        # read that choice as hidden-card evidence (session 15 persona test).
        look = (run, held(card))
        ties = [r for c, (u, r) in measured.items() if (u, held(c)) == look]
        hb, hb_run, hb_pay, hb_same = self._seeing_start(card, clean, measured, owner,
                                                         st.pay_cards)
        self.sink.add("starts", self.game_id, event["seq"], player, len(options), run, reach,
                      sum(reaches) / len(reaches), max(reaches), sum(runs) / len(runs),
                      len(ties), sum(ties) / len(ties), len(clean), hb, hb_run, hb_pay, hb_same,
                      look[1])

    @staticmethod
    def _seeing_start(card: int, clean: list[int], measured: dict[int, tuple[int, int]],
                      owner: list[int], pay_cards: tuple[int, ...]) -> tuple[bool, int, int, int]:
        """The start a player who sees every hand picks — of the clean starts, the one that
        plays the most of his own cards before the stop, the lowest card among equals — and
        how it looked to the player: ``(chosen, run gap, pay gap, look-alikes)`` against
        his other clean starts. The look is what an honest choice can depend on (his own
        consecutive cards; whether the suit's pay card is still to be played above the
        start); the reach is what it cannot."""
        if not clean:
            return False, 0, 0, 0
        best = max(clean, key=lambda c: (measured[c][1], -c))

        def ahead(c: int) -> int:
            return int(any(p & 3 == c & 3 and p > c and owner[p] != MI_PLAYED for p in pay_cards))

        others = [c for c in clean if c != best]
        look = (measured[best][0], ahead(best))
        if not others:
            return card == best, 0, 0, 0
        looks = [(measured[c][0], ahead(c)) for c in others]
        return (card == best, look[0] - max(u for u, _ in looks), look[1] - max(a for _, a in looks),
                sum(1 for x in looks if x == look))

    def _round_end(self, event: Event, hands: list[list[int]], st: Any) -> None:
        """A round just ended (the state left ``in_round``): who ended it and what
        everyone still held."""
        actor = event["actor"]
        ender = actor if actor in self.seat_index else None
        rnd = int(getattr(st, "round_no", 0))
        for s, pid in enumerate(self.seats):
            h = hands[s]
            if pid in self.left or pid in self.removed:
                continue
            cards = sum(h)
            points = sum(_POINTS[c] * k for c, k in enumerate(h) if k)
            self.sink.add("round_ends", self.game_id, event["seq"], rnd, self.variant, ender, pid,
                          cards, points)

    def finish(self, engine: GameEngine) -> None:
        record = engine.record()
        if not self.seats:
            return
        winners = set(record.results.winners)
        net = record.results.net
        end_ms = self.prev_ts
        n = len(self.seats)
        # A game not over by the rules (still in progress at scan time, cut short, or
        # halted) has no result yet: ``won`` and ``net`` are NULL, so the result-based
        # features leave it out instead of counting a loss of the stake for everyone.
        ended = not record.halted and record.state is not None and record.state.is_over()
        for s, pid in enumerate(self.seats):
            dd = self.deal_dists.get(pid)
            self.sink.add(
                "player_games", self.game_id, pid, s, n, self.variant, self.table_id, self.stake,
                self.start_ms, end_ms, pid in winners if ended else None,
                int(net.get(pid, 0)) if ended else None,
                sum(dd) / len(dd) if dd else None, pid in self.left, pid in self.removed,
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


def _loose_cards(hand: list[int]) -> int:
    """Cards no meld can hold (0 with a joker in hand: it pairs with anything): no other
    card of the rank, no card of the suit within two ranks (the ace next to both the two
    and the king). A declaration discards one card, so a hand with two cannot go out; a
    cheap, exact test before the engine's search (deliberately generous: it only skips
    hands that certainly fail)."""
    if len(hand) > 52 and hand[52]:
        return 0
    loose = 0
    for c in range(52):
        if not hand[c]:
            continue
        r, suit = c >> 2, c & 3
        if hand[c] > 1 or any(hand[r * 4 + t] for t in range(4) if t != suit):
            continue
        if any(hand[((r + d) % 13) * 4 + suit] for d in (-2, -1, 1, 2)):
            continue
        loose += 1
    return loose


def _meld_cards(payload: dict[str, Any]) -> list[int]:
    """Every card of a declaration's melds (DeclaredRummy.melds)."""
    return [parse_card(c) for m in payload.get("melds", []) for c in m["cards"]]


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
