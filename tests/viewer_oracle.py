"""An independent oracle for ``state_at`` and the per-player views.

Why this exists: the replay engine's ``snapshot(viewer)`` decides what a player may see,
and the simulator and the HTML page both trust it. This module recomputes, from the event
list alone (spec/RULES.md §0-§4 deals and card moves, spec/EVENTS.md payloads, README.md
"Settling a dispute" for what a view shows), where every card is after each event and what
each seated player could know at that moment. It does not import ``rummyguard.replay``;
differential tests (tests/test_viewer_oracle.py) compare it with ``state_at``.

Scope: clean logs (no C-HOLD breaks: a card an event takes is assumed to be there). What
is compared (both sides reduced by :func:`expected` / :func:`observed` to the same form):

- full state: every active player's hand (a multiset), the discard pile (bottom first),
  the stock (top first) and its size, the table melds (owner + multiset of cards);
  Michigan: the widow, the dead cards, the played cards;
- a viewer's state: his own hand only, every active player's hand size, pile, stock size,
  melds; no ``stock``; Michigan: no widow, only his own dead cards and poker hand.

:func:`knowable` is what the viewer could name at that moment (his hand, the table, the
pile, cards others took from the pile in view, the pay cards); :func:`leaks` lists card
codes in a serialized snapshot outside it. Readings of the spec (decided here):

- Deal order: one card at a time, seat by seat from left of the dealer over the players
  still in the game (removed players are skipped); classic's 15th card to the first
  player; Michigan's widow sits after the dealer.
- A player who leaves or is removed: his cards leave play face down (classic CL-STRIKES
  "his cards leave play"; Michigan: they are dead); nobody else learns them. Only active
  players' hands are compared.
- Michigan ``in_turn``: while the next card of the running suit is due and sits in a live
  hand, only its holder may be shown in turn (README: "nobody is shown in turn until it is
  played"); a starter after a stop is public.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

Event = dict[str, Any]
JK = "JK"
RANKS = "23456789TJQKA"
SUITS = "CDHS"
#: a card code as a whole JSON string token (player ids and text never match it)
CODE = re.compile(r'"([2-9TJQKA][CDHS]|JK)"')
#: moves made by the player in turn (Liverpool's Bought and RummyCalled are not)
TURN_MOVES = frozenset({"Drew", "Discarded", "Melded", "LaidDown", "LaidOff", "JokerSwapped",
                        "DeclaredRummy"})
#: keys whose card codes are derived from public melds, not cards in a place
DERIVED_KEYS = frozenset({"stands", "as"})


@dataclass
class Table:
    """Where every card is right after the last folded event."""

    variant: str = ""
    seats: list[str] = field(default_factory=list)
    active: dict[str, bool] = field(default_factory=dict)
    hands: dict[str, Counter[str]] = field(default_factory=dict)
    #: cards of each hand that every player saw go there (pile draws, bought cards, swapped jokers)
    known: dict[str, Counter[str]] = field(default_factory=dict)
    pile: list[str] = field(default_factory=list)  # bottom first
    stock: list[str] = field(default_factory=list)  # top first
    melds: list[tuple[str, Counter[str]]] = field(default_factory=list)
    # Michigan
    widow: Counter[str] = field(default_factory=Counter)
    dead: dict[str, Counter[str]] = field(default_factory=dict)  # by the player they came from
    played: list[str] = field(default_factory=list)
    poker: dict[str, list[str]] = field(default_factory=dict)
    pay_cards: list[str] = field(default_factory=list)
    #: Michigan: the holder of the next card of the running suit when one is due, else None
    due_holder: str | None = None


def _dealt(order: list[str], deck: list[str], sizes: dict[str, int]) -> tuple[dict[str, list[str]], int]:
    """Deal ``sizes`` cards one at a time around ``order``; returns hands and cards used."""
    hands: dict[str, list[str]] = {p: [] for p in order}
    i = 0
    while any(len(hands[p]) < sizes[p] for p in order):
        for p in order:
            if len(hands[p]) < sizes[p]:
                hands[p].append(deck[i])
                i += 1
    return hands, i


class ViewOracle:
    """Folds one game's events into a :class:`Table` (clean logs)."""

    def __init__(self) -> None:
        self.t = Table()
        self.created: dict[str, Any] = {}
        #: r500: game totals (from RoundEnded claims) and tournament stacks (from transfers),
        #: for the R5-GAME playoff and R5-CHIPS busts, which the log need not announce
        self.totals: Counter[str] = Counter()
        self.stacks: Counter[str] = Counter()

    def order_from_left(self, dealer: int) -> list[str]:
        """Active players in deal order: from the seat left of ``dealer``, wrapping."""
        n = len(self.t.seats)
        seats = [self.t.seats[(dealer + 1 + k) % n] for k in range(n)]
        return [p for p in seats if self.t.active[p]]

    def deal(self, p: dict[str, Any]) -> None:
        t = self.t
        deck = list(p["deck"])
        order = self.order_from_left(int(p["dealer"]))
        t.melds, t.pile, t.played, t.poker = [], [], [], {}
        t.known = {s: Counter() for s in t.seats}
        t.dead = {}
        t.widow = Counter()
        t.due_holder = None
        for s in t.seats:
            t.hands[s] = Counter()
        if t.variant == "michigan":
            slots = [*order, "\0widow"]
            piles: dict[str, list[str]] = {s: [] for s in slots}
            for i, card in enumerate(deck):
                piles[slots[i % len(slots)]].append(card)
            for s in order:
                t.hands[s] = Counter(piles[s])
            t.widow = Counter(piles["\0widow"])
            t.stock = []
            return
        n = len(order)
        if t.variant == "classic":
            # 14 circuits, then the 15th card to the first player (CL-DEAL)
            hands, used = _dealt(order, deck, {s: 14 for s in order})
            hands[order[0]].append(deck[used])
            used += 1
        elif t.variant == "r500":
            hands, used = _dealt(order, deck, {s: 13 if n == 2 else 7 for s in order})
        else:  # liverpool
            rnd = int(p["round"])
            hands, used = _dealt(order, deck, {s: 10 if rnd <= 4 else 12 for s in order})
        for s, cards in hands.items():
            t.hands[s] = Counter(cards)
        t.pile = [deck[used]]
        t.stock = deck[used + 1:]

    def take(self, player: str, card: str) -> None:
        """``card`` leaves ``player``'s hand (public from then on)."""
        self.t.hands[player][card] -= 1
        if self.t.hands[player][card] <= 0:
            del self.t.hands[player][card]
        if self.t.known[player][card] > 0:
            self.t.known[player][card] -= 1

    def give(self, player: str, card: str, public: bool) -> None:
        self.t.hands[player][card] += 1
        if public:
            self.t.known[player][card] += 1

    def leave(self, player: str) -> None:
        t = self.t
        if not t.active.get(player, False):
            return
        t.active[player] = False
        if t.variant == "michigan" and t.hands[player]:
            t.dead.setdefault(player, Counter()).update(t.hands[player])
        t.hands[player] = Counter()
        t.known[player] = Counter()
        if t.variant == "michigan" and t.played:  # his cards are stops now (MI-STOP)
            self.michigan_due(t.played[-1])

    def michigan_due(self, last: str) -> None:
        """After ``last`` was played: who holds the next card of its suit, if it is due."""
        t = self.t
        t.due_holder = None
        if last[0] == "A":
            return
        nxt = RANKS[RANKS.index(last[0]) + 1] + last[1]
        for s in t.seats:
            if t.active[s] and t.hands[s][nxt] > 0:
                t.due_holder = s

    def apply(self, e: Event) -> None:
        t, p, kind, actor = self.t, e["payload"], e["type"], e["actor"]
        if kind == "GameCreated":
            self.created = p
            t.variant = p["variant"]
            t.seats = list(p["seats"])
            t.active = {s: True for s in t.seats}
            t.hands = {s: Counter() for s in t.seats}
            t.known = {s: Counter() for s in t.seats}
            t.pay_cards = list((p.get("rules") or {}).get("pay_cards", ["JS", "QD", "KC", "AH"]))
        elif kind == "RoundStarted":
            self.deal(p)
        elif kind == "Drew":
            cards = p["cards"]
            if p["source"] == "stock":
                for c in cards:
                    t.stock.pop(0)
                    self.give(actor, c, public=False)
            else:
                del t.pile[len(t.pile) - len(cards):]
                for c in cards:
                    self.give(actor, c, public=True)
        elif kind == "Discarded":
            self.take(actor, p["card"])
            t.pile.append(p["card"])
        elif kind == "Melded":
            for c in p["cards"]:
                self.take(actor, c)
            t.melds.append((actor, Counter(p["cards"])))
        elif kind == "LaidDown":
            for m in p["melds"]:
                for c in m["cards"]:
                    self.take(actor, c)
                t.melds.append((actor, Counter(m["cards"])))
        elif kind == "LaidOff":
            self.take(actor, p["card"])
            t.melds[int(p["meld"])][1][p["card"]] += 1
        elif kind == "JokerSwapped":
            self.take(actor, p["card"])
            meld = t.melds[int(p["meld"])][1]
            meld[JK] -= 1
            if meld[JK] <= 0:
                del meld[JK]
            meld[p["card"]] += 1
            self.give(actor, JK, public=True)
        elif kind == "DeclaredRummy":
            for m in p["melds"]:
                for c in m["cards"]:
                    self.take(actor, c)
                t.melds.append((actor, Counter(m["cards"])))
            self.take(actor, p["discard"])
            t.pile.append(p["discard"])
        elif kind == "Bought":
            t.pile.pop()
            t.stock.pop(0)
            self.give(actor, p["card"], public=True)
            self.give(actor, p["penalty"], public=False)
        elif kind == "RummyCalled":
            card = t.pile.pop()
            t.melds[int(p["meld"])][1][card] += 1
            self.take(actor, p["discard"])
            t.pile.append(p["discard"])
        elif kind == "AutoPlayed":
            who = p["player"]
            if p.get("drew") is not None:
                t.stock.pop(0)
                self.give(who, p["drew"], public=False)
            self.take(who, p["discarded"])
            t.pile.append(p["discarded"])
        elif kind == "StockReplenished":
            t.pile = t.pile[-1:]
            t.stock = list(p["stock"])
        elif kind == "WidowBought":
            t.dead.setdefault(actor, Counter()).update(t.hands[actor])
            t.hands[actor] = Counter(t.widow)
            t.widow = Counter()
        elif kind == "CardPlayed":
            self.take(actor, p["card"])
            t.played.append(p["card"])
            self.michigan_due(p["card"])
        elif kind == "PokerHandDeclared":
            t.poker[actor] = list(p["cards"])
        elif kind == "PlayerLeft":
            self.leave(actor)
        elif kind == "PlayerRemoved":
            self.leave(p["player"])
        elif kind == "ChipsTransferred":
            for tr in p["transfers"]:
                self.stacks[tr["from"]] -= int(tr["amount"])
                self.stacks[tr["to"]] += int(tr["amount"])
        elif kind == "RoundEnded" and t.variant == "r500":
            self.r500_roster(p)

    def r500_roster(self, p: dict[str, Any]) -> None:
        """Players out of the next deal without an event: R5-GAME tie playoffs (players
        below the tied leaders) and tournament busts (no chips left, R5-CHIPS). The log
        is clean, so its RoundEnded scores and transfers are the rules' values."""
        t, rules = self.t, self.created.get("rules") or {}
        mode = rules.get("mode", "target")
        self.totals.update({k: int(v) for k, v in p["scores"].items()})
        live = [s for s in t.seats if t.active[s]]
        if mode == "tournament":
            for s in live:
                if self.stacks[s] + int(self.created["stake"]) <= 0:
                    t.active[s] = False
        elif mode == "target" and live:
            best = max(self.totals[s] for s in live)
            leaders = [s for s in live if self.totals[s] == best]
            if best >= int(rules.get("target", 500)) and len(leaders) > 1:
                for s in live:
                    if s not in leaders:
                        t.active[s] = False


def fold(events: list[Event]) -> list[Table]:
    """The table right after each event (index i = after ``events[i]``), deep-copied."""
    oracle = ViewOracle()
    out: list[Table] = []
    for e in events:
        oracle.apply(e)
        out.append(_copy(oracle.t))
    return out


def _copy(t: Table) -> Table:
    return Table(
        variant=t.variant, seats=list(t.seats), active=dict(t.active),
        hands={k: Counter(v) for k, v in t.hands.items()},
        known={k: Counter(v) for k, v in t.known.items()},
        pile=list(t.pile), stock=list(t.stock),
        melds=[(o, Counter(c)) for o, c in t.melds],
        widow=Counter(t.widow), dead={k: Counter(v) for k, v in t.dead.items()},
        played=list(t.played), poker={k: list(v) for k, v in t.poker.items()},
        pay_cards=list(t.pay_cards), due_holder=t.due_holder,
    )


def _ms(cards: Any) -> list[str]:
    return sorted(cards.elements()) if isinstance(cards, Counter) else sorted(cards)


def expected(t: Table, viewer: str | None) -> dict[str, Any]:
    """The comparable state the spec gives after an event (see the module docstring)."""
    out: dict[str, Any] = {
        "hand_counts": {s: sum(t.hands[s].values()) for s in t.seats},
        "discard_pile": list(t.pile),
        "stock_count": len(t.stock),
        "melds": sorted((o, _ms(c)) for o, c in t.melds),
    }
    if viewer is None:
        out["hands"] = {s: _ms(t.hands[s]) for s in t.seats}
        out["stock"] = list(t.stock)
    else:
        out["hands"] = {viewer: _ms(t.hands[viewer])}
        out["stock"] = None
    if t.variant == "michigan":
        del out["discard_pile"], out["stock_count"], out["stock"], out["melds"]
        out["played"] = list(t.played)
        out["widow_count"] = sum(t.widow.values())
        if viewer is None:
            out["widow"] = _ms(t.widow)
            out["dead"] = sorted(c for d in t.dead.values() for c in d.elements())
            out["poker"] = {s: sorted(c) for s, c in t.poker.items()}
        else:
            out["widow"] = None
            mine = t.dead.get(viewer)
            out["dead"] = _ms(mine) if mine else None
            out["poker"] = {viewer: sorted(t.poker[viewer])} if viewer in t.poker else {}
    return out


def observed(snap: dict[str, Any], variant: str, seats: list[str]) -> dict[str, Any]:
    """The engine snapshot reduced to :func:`expected`'s form."""
    out: dict[str, Any] = {
        "hand_counts": dict(snap["hand_counts"]),
        "discard_pile": snap.get("discard_pile"),
        "stock_count": snap.get("stock_count"),
        "melds": sorted((m.get("owner"), sorted(m["cards"])) for m in snap.get("melds", [])),
        "hands": {s: sorted(h) for s, h in snap["hands"].items()},
        "stock": snap.get("stock"),
    }
    if variant == "michigan":
        del out["discard_pile"], out["stock_count"], out["stock"], out["melds"]
        out["played"] = snap["played"]
        out["widow_count"] = snap["widow_count"]
        out["widow"] = None if snap["widow"] is None else sorted(snap["widow"])
        out["dead"] = None if snap["dead"] is None else sorted(snap["dead"])
        out["poker"] = {s: sorted(c) for s, c in snap["poker"]["declared"].items()}
    return out


def knowable(t: Table, viewer: str) -> Counter[str]:
    """Every card code ``viewer`` could name right now: his hand, the pile, the table,
    the played cards, the pay cards, his own dead cards, and cards others took in view."""
    out: Counter[str] = Counter()
    out |= t.hands.get(viewer, Counter())
    out |= Counter(t.pile)
    for _, cards in t.melds:
        out |= cards
    out |= Counter(t.played) | Counter(t.pay_cards)
    out |= t.dead.get(viewer, Counter())
    for s in t.seats:
        out |= t.known[s]
    return out


def _strip(obj: Any) -> Any:
    """``obj`` without the keys whose codes are derived from public melds."""
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in DERIVED_KEYS}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def codes_in(obj: Any) -> set[str]:
    """Card codes appearing anywhere in ``obj`` (serialized to JSON, or a JSON text)."""
    text = obj if isinstance(obj, str) else json.dumps(_strip(obj))
    return set(CODE.findall(text))


def leaks(obj: Any, t: Table, viewer: str) -> list[str]:
    """Codes in ``obj`` that ``viewer`` could not know at ``t`` (sorted)."""
    known = knowable(t, viewer)
    return sorted(c for c in codes_in(obj) if known[c] <= 0)


def expected_turn(t: Table, nxt: Event | None, viewer: str | None) -> tuple[bool, str | None]:
    """``(checkable, in_turn)`` right after an event, from the next event: a move in turn
    names who was in turn. Michigan: a follow's holder is shown only to himself."""
    if nxt is None:
        return False, None
    kind = nxt["type"]
    if t.variant == "michigan":
        if kind != "CardPlayed" or not t.played:
            return False, None
        actor = nxt["actor"]
        if t.due_holder is None:  # a start after a stop: public
            return True, actor
        if viewer is not None and viewer != t.due_holder:
            return True, None
        return True, t.due_holder
    if kind in TURN_MOVES:
        return True, nxt["actor"]
    if kind == "AutoPlayed":
        return True, nxt["payload"]["player"]
    return False, None


__all__ = ["Table", "ViewOracle", "codes_in", "expected", "expected_turn", "fold", "knowable",
           "leaks", "observed"]
