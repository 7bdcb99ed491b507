"""Card-table mechanics shared by the draw-and-discard variants (classic, r500, Liverpool):
hands as card counts, the stock and discard pile, dealing from a recorded deck, turn
rotation over active seats, and the C-HOLD / C-DEAL / C-RESTOCK / C-TURN checks.

Stock and pile are Python lists with the *top at the end*, so drawing is ``pop()``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from operator import itemgetter
from typing import Any, ClassVar

from ...events.cards import JOKER, NCARDS, format_card, format_cards, parse_cards
from ...events.models import MAX_DECK
from ..variant import Event, GameContext, Variant

#: card code -> card integer (events/cards.py's notation, read through format_card): the
#: hot paths look a code up here and call ``parse_card`` only for what is not a card,
#: to raise its error
CARD_CODES: dict[str, int] = {format_card(c): c for c in range(NCARDS)}
#: an empty hand's counts (copied into a hand by slice assignment, never changed)
_NO_CARDS = (0,) * NCARDS
#: (variant class, config items) -> the variant's deck, sorted (CardTable.check_deck)
_SORTED_DECKS: dict[Any, list[int]] = {}


def _listed(counts: Counter[int]) -> list[int] | None:
    """``counts`` as a sorted list of cards, or None if more than a deck may hold."""
    if sum(counts.values()) > MAX_DECK:
        return None
    return sorted(counts.elements())


def _first_sorted(counts: Counter[int], n: int) -> list[int]:
    """The ``n`` lowest cards of ``counts`` (a multiset of any size), in order."""
    out: list[int] = []
    for card in sorted(counts):
        out.extend([card] * min(counts[card], n - len(out)))
        if len(out) >= n:
            break
    return out


#: a deal: (cards dealt, [(seat, deck -> that seat's cards)])
_DealPlan = tuple[int, list[tuple[int, Callable[[list[int]], tuple[int, ...]]]]]
#: (circuit order, sizes) -> the deal's plan (CardTable.deal)
_DEAL_ORDERS: dict[tuple[tuple[int, ...], tuple[tuple[int, int], ...]], _DealPlan] = {}


def _deal_order(order: list[int], sizes: dict[int, int]) -> _DealPlan:
    """The seats of a one-card-at-a-time deal round ``order`` until each seat has
    ``sizes[seat]`` cards (seats that are full are skipped), as ``(number of cards
    dealt, [(seat, the deck positions it gets)])``: a hand is counts, so a seat's cards
    can be taken together (C-level, one ``itemgetter`` per seat). Cached, as games
    repeat a handful of seatings."""
    key = (tuple(order), tuple(sizes.items()))  # the same sizes in another order: a miss
    plan = _DEAL_ORDERS.get(key)
    if plan is None:
        seats: list[int] = []
        remaining = dict(sizes)
        while any(remaining.get(s, 0) > 0 for s in order):
            for s in order:
                if remaining.get(s, 0) > 0:
                    seats.append(s)
                    remaining[s] -= 1
        positions: dict[int, list[int]] = {}
        for i, s in enumerate(seats):
            positions.setdefault(s, []).append(i)
        plan = (len(seats), [(s, _getter(pos)) for s, pos in positions.items()])
        if len(_DEAL_ORDERS) < 4096:
            _DEAL_ORDERS[key] = plan
    return plan


def _getter(positions: list[int]) -> Callable[[list[int]], tuple[int, ...]]:
    """``deck -> the cards at positions``, always a tuple (itemgetter of one index
    returns the item itself)."""
    if len(positions) == 1:
        only = positions[0]
        return lambda deck: (deck[only],)
    return itemgetter(*positions)


class CardTable(Variant):
    """Hands, stock, pile and seats; subclasses add their rules."""

    #: True when ``expected_deck`` depends on the config alone (not, say, on the number
    #: of players still in), so the sorted deck can be cached per configuration
    deck_from_config: ClassVar[bool] = False

    def __init__(self, ctx: GameContext | None = None, rules: Mapping[str, Any] | None = None) -> None:
        super().__init__(ctx, rules)
        if ctx is None:  # a bare instance, for Variant.__reduce__
            return
        n = len(ctx.seats)
        self.n = n
        #: player id -> seat (the first seat, as ``list.index`` would say; GameCreated
        #: with a repeated id halts before any move)
        self.seat_index: dict[str, int] = {}
        for i, pid in enumerate(ctx.seats):
            self.seat_index.setdefault(pid, i)
        self.active = [True] * n
        self.hands: list[list[int]] = [[0] * NCARDS for _ in range(n)]
        self.stock: list[int] = []
        self.pile: list[int] = []
        self.dealer = ctx.dealer
        self.current = -1  # seat in turn (-1: nobody, the system must act)
        self.round_no = 0
        self.in_round = False

    # -- seats --------------------------------------------------------------------------
    def seat(self, player: str) -> int | None:
        return self.seat_index.get(player)

    def player(self, seat: int) -> str:
        return self.ctx.seats[seat]

    def next_active(self, seat: int) -> int:
        """The next active seat after ``seat`` (wrapping); ``seat`` itself if alone."""
        nxt = seat + 1 if seat + 1 < self.n else 0
        if self.active[nxt] and nxt != seat:  # the common case, without the loop
            return nxt
        for step in range(1, self.n + 1):
            s = (seat + step) % self.n
            if self.active[s]:
                return s
        return seat

    def active_seats(self) -> list[int]:
        return [s for s in range(self.n) if self.active[s]]

    def actor_seat(self, event: Event) -> int | None:
        """The actor's seat, or None (reported as C-TURN) if not an active seated player."""
        seat = self.seat_index.get(event["actor"])
        if seat is None:
            self.ctx.violation("C-TURN", f"{event['actor']} is not seated at this game")
            return None
        if not self.active[seat]:
            self.ctx.violation("C-TURN", f"{event['actor']} is no longer in the game")
            return None
        return seat

    # -- cards ----------------------------------------------------------------------------
    def expected_deck(self) -> Counter[int]:
        raise NotImplementedError

    def check_deck(self, deck: list[int]) -> None:
        """C-DEAL: the recorded deck is exactly the variant's cards."""
        if self.deck_from_config:
            cards = self._sorted_deck()
            if cards is not None and sorted(deck) == cards:
                return
        want = self.expected_deck()
        got = Counter(deck)
        if got != want:
            # the first eight of each side only: a configured deck may be far larger than
            # any recorded one (MAX_DECK), so its missing cards are never listed whole
            extra = _first_sorted(got - want, 8)
            missing = _first_sorted(want - got, 8)
            parts = []
            if extra:
                parts.append("extra " + " ".join(format_cards(extra)))
            if missing:
                parts.append("missing " + " ".join(format_cards(missing)))
            self.ctx.violation("C-DEAL", "the shuffled deck is not the variant's deck: " + "; ".join(parts))

    def _sorted_deck(self) -> list[int] | None:
        """The variant's deck, sorted; computed once per class and configuration (only
        for a class whose ``expected_deck`` depends on nothing but its config). None when
        that deck is larger than any event may record (MAX_DECK): no recorded deck can
        equal it, and it is not built (a config may name 2**53 - 1 decks)."""
        key = (type(self), tuple(self.config.items()))
        try:
            cards = _SORTED_DECKS.get(key)  # the key is hashed once, here
        except TypeError:  # an unhashable config value: no caching
            return _listed(self.expected_deck())
        if cards is None:
            cards = _listed(self.expected_deck())
            if cards is None:
                return None
            _SORTED_DECKS[key] = cards
        return cards

    def deal(self, deck: list[int], order: list[int], sizes: dict[int, int], rule: str) -> None:
        """Deal one card at a time to ``order`` (seats, circuit order) until each seat has
        ``sizes[seat]`` cards, then turn one card up; the rest is stock. ``rule`` names the
        variant's deal rule for the short-deck halt."""
        need = sum(sizes.values()) + 1
        if len(deck) < need:
            raise self.ctx.halt(rule, f"the deck has {len(deck)} cards; the deal needs {need}")
        for hand in self.hands:
            hand[:] = _NO_CARDS
        pos, plan = _deal_order(order, sizes)  # the rest of the deck is not dealt
        hands = self.hands
        for s, cards_of in plan:
            hand = hands[s]
            for card in cards_of(deck):
                hand[card] += 1
        self.pile = [deck[pos]]
        self.stock = deck[:pos:-1]  # deck[pos + 1:] reversed, in one copy

    def take_from_hand(self, seat: int, card: int, what: str = "") -> None:
        """C-HOLD: remove a card the event says the player holds, or halt."""
        if self.hands[seat][card] <= 0:
            raise self.ctx.halt(
                "C-HOLD", f"{self.player(seat)} does not hold {format_card(card)}{what}"
            )
        self.hands[seat][card] -= 1

    def take_stock(self, card: int) -> None:
        if not self.stock:
            raise self.ctx.halt("C-HOLD", f"the stock is empty; cannot draw {format_card(card)}")
        if self.stock[-1] != card:
            raise self.ctx.halt(
                "C-HOLD",
                f"the stock's top card is {format_card(self.stock[-1])}, not {format_card(card)}",
            )
        self.stock.pop()

    def take_pile(self, cards: list[int]) -> None:
        """Take ``cards`` (deepest first) off the top of the pile, or halt."""
        k = len(cards)
        if k > len(self.pile) or self.pile[-k:] != cards:
            top = " ".join(format_cards(self.pile[-k:])) or "empty"
            raise self.ctx.halt(
                "C-HOLD",
                f"the discard pile's top is {top}, not {' '.join(format_cards(cards))}",
            )
        del self.pile[-k:]

    def hand_cards(self, seat: int) -> list[int]:
        hand = self.hands[seat]
        return [c for c in range(NCARDS) for _ in range(hand[c])]

    def hand_size(self, seat: int) -> int:
        return sum(self.hands[seat])

    def apply_StockReplenished(self, event: Event) -> None:
        """C-RESTOCK: when the stock is empty, the pile but its top becomes the stock in
        the order the platform records.

        A restock that breaks the rule (stock not yet empty, or not exactly the pile
        below its top) is a C-RESTOCK violation and is applied as logged: its cards come
        from the pile below the top first, then the top, then the old stock; what it
        leaves stays where it was. A card that is in none of them is not where the event
        says it is: C-HOLD, the replay halts.
        """
        new_stock = parse_cards(event["payload"]["stock"])
        if self.stock:
            self.ctx.violation("C-RESTOCK", f"stock replenished while {len(self.stock)} cards remain")
        below, top = self.pile[:-1], self.pile[-1:]
        need = Counter(new_stock)
        if need != Counter(below):
            self.ctx.violation(
                "C-RESTOCK", "the new stock is not the discard pile minus its top card"
            )
        from_below = need & Counter(below)
        need -= from_below
        from_top = need & Counter(top)
        need -= from_top
        from_stock = need & Counter(self.stock)
        need -= from_stock
        if need:
            raise self.ctx.halt(
                "C-HOLD",
                "the new stock holds " + " ".join(format_cards(sorted(need.elements())))
                + ", which is not in the discard pile",
            )
        self.pile = _without(below, from_below) + _without(top, from_top)
        self.stock = _without(self.stock, from_stock) + new_stock[::-1]

    # -- views ------------------------------------------------------------------------------
    def table_snapshot(self, viewer: str | None) -> dict[str, Any]:
        """The parts every draw-and-discard variant shows."""
        vseat = None if viewer is None else self.seat(viewer)
        hands: dict[str, Any] = {}
        for s, pid in enumerate(self.ctx.seats):
            if viewer is None or s == vseat:
                hands[pid] = format_cards(self.hand_cards(s))
        out: dict[str, Any] = {
            "variant": self.name,
            "round": self.round_no,
            "dealer": self.player(self.dealer),
            "in_turn": self.player(self.current) if self.current >= 0 else None,
            "active": [p for s, p in enumerate(self.ctx.seats) if self.active[s]],
            "hands": hands,
            "hand_counts": {p: self.hand_size(s) for s, p in enumerate(self.ctx.seats)},
            "stock_count": len(self.stock),
            "discard_pile": format_cards(self.pile),
        }
        if viewer is None:
            out["stock"] = format_cards(self.stock[::-1])
        return out


def _without(cards: list[int], take: Counter[int]) -> list[int]:
    """``cards`` minus the multiset ``take``, order kept (copies taken from the start)."""
    left = Counter(take)
    out = []
    for c in cards:
        if left[c] > 0:
            left[c] -= 1
        else:
            out.append(c)
    return out


def joker_free_max(hand: list[int], exclude: Counter[int] | None = None) -> int | None:
    """The highest non-joker card in a hand (ranks as usual, then suits C<D<H<S) — the
    integer encoding orders cards exactly so. ``exclude`` withholds some copies."""
    for c in range(JOKER - 1, -1, -1):
        have = hand[c] - (exclude[c] if exclude else 0)
        if have > 0:
            return c
    return None


__all__ = ["CARD_CODES", "CardTable", "joker_free_max"]
