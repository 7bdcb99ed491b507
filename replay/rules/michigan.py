"""Michigan rummy — RULES.md §4 (variant ``michigan``): a stops game, not a meld game.

All 52 cards are dealt into the players' hands and a *widow*; the holder of the next
card of the running suit plays it (turns do not rotate); a sequence stops at a card in
the widow or dead hand, a card already played, or the ace, and the last player restarts
in another suit. Chips live in pools: the ``kitty`` (antes, widow price; won by the first
player out), one ``pay:<card>`` pool per pay card (won by whoever plays that card, rolled
over otherwise, split at the end) and, with ``three_in_one``, the ``poker`` pot.

Every rule ID of §4 is checked here (grep the ID). Cards are ints; where each of the 52
cards is lives in one array (``owner``: a seat, or WIDOW / DEAD / PLAYED), so "who holds
the next card" is one lookup and a play costs a few list operations.

Decisions where RULES.md is silent (a careful reading, stated once here):

- Deal order (MI-DEAL): the hands are, in order, the players still in the game from left
  of the dealer round to the dealer, then the widow; card ``i`` of ``RoundStarted.deck``
  goes to hand ``i mod (players + 1)``. A deck that is not exactly the 52 cards is the
  C-DEAL violation every variant reports for a deck that is not its deck (RULES.md §0);
  unlike the draw-and-discard variants, Michigan cannot follow it (every card is dealt
  and would sit in two hands, or in none), so the replay then halts with an MI-DEAL
  integrity finding — the same pair classic gives for a deck too short for its deal
  (C-DEAL, then its own deal rule). A ``redeal`` other than 0 is an MI-DEAL violation
  (Michigan has no redeals).
- Widow offers (MI-WIDOW): the widow is offered in seat order starting left of the
  dealer, the dealer last; the first player who accepts buys it. EVENTS.md has no event
  for a refusal, so a purchase by any player while the offer is open is accepted (it
  says every seat before him declined); ``to_act()`` lists the players in offer order.
  The offer closes at the purchase, at the first poker declaration, or at the first
  card played. A purchase after that is a violation, applied as the platform did (price
  charged, hands swapped). A second purchase in a deal is a violation and is ignored
  (there is no widow left to take; no chips move). The replay charges ``widow_price``; a
  ``WidowBought.price`` that differs is a C-CLAIM discrepancy.
- Starts (MI-START, MI-STOP): after a stop the player who played the last card starts in
  a suit other than the stopped one. If he has no such card, the right passes to the
  next player on his left who has one; if nobody has a card of another suit the
  restriction lapses and the last player (or, passing left, the first player with any
  card) starts in any suit. A player who has left is passed over.
- Irregular plays: a play by someone other than the holder of the next card, or any
  other card than the next one (a skipped holder), is MI-FOLLOW, naming the holder who
  should have played; a start by someone other than the entitled starter is MI-START
  (the deal's first start) or MI-STOP (a restart), naming the starter; the entitled
  starter restarting in the stopped suit is MI-STOP. Every such play is applied as the
  platform applied it: its card becomes the running card and its player the last
  player. An irregular play never pays MI-PENALTY (the penalty prices a legitimate start);
  the entitled starter who breaks only the suit rule still pays it when his card is not
  his lowest of that suit.
- MI-PENALTY is paid to every other player still in the game, 1 chip each, in seat order.
- MI-PAY: whoever plays a pay card takes its chips, even in an irregular play.
- Config: a key of ``GameCreated.rules`` whose value is ``null`` takes its default, as a
  missing key does (no finding).
- MI-END: ``deals`` = 0 (the default) means one deal per seated player. The game-end
  division of the pay-card chips is :func:`~.poker.split_pot` over the players still in
  the game; as chip transfers it is poured from the pay-card pools in ``pay_cards``
  order into the players' shares, the players taken in seat order from left of the last
  dealer (a canonical decomposition, so claims compare as a multiset). The game's
  winners are the players with the highest net, every seated player counted: a player
  who left keeps his final net and wins if it is the highest (the letter of MI-END; the
  division above, "among all players", goes to those still in). A RoundStarted while
  a deal is running is an MI-END violation: the unfinished deal has no winner and its
  kitty rolls into the next. A deal beyond ``deals`` (or after the game ended) is an
  MI-END violation and is ignored; its moves are C-TURN violations (nobody is entitled
  to act after the game's last deal) and are ignored. A wrong ``dealer`` in
  RoundStarted is an MI-END violation (MI-END is where §4 says the dealer moves left);
  the replay follows the platform's dealer (the hands were dealt from it). A wrong
  ``round`` number is a number the platform claims: a C-CLAIM discrepancy (RULES.md
  §0/§5), as in classic, r500 and Liverpool; the replay keeps its own count.
- MI-POKER: each declaration pays its 1 chip into ``poker``; the pot is settled when every
  player still in the game (holding at least five cards) has declared. A card played
  before that is an MI-POKER violation naming who had not declared, and the pot is
  settled among the declared hands. A declaration when ``three_in_one`` is off, a second
  declaration, or one after the first card was played is an MI-POKER violation and is
  ignored. A declaration repeating a card is an MI-POKER violation: its chip is paid but
  the hand cannot win. A declared card the player does not hold halts (C-HOLD). Players
  who left cannot win the pot; if no declared hand remains, the pot stays in ``poker``
  and goes with the next deal's pot (so does the pot of a deal abandoned by a new
  ``RoundStarted``). When leaves end the deal in the poker phase (one player left), the
  pot is settled first, among the declared hands still in: the last player takes it if
  he declared.
- Leaving (PlayerLeft, at any moment): the player is out at once; his cards become dead
  (they are stops), he antes no more, is never entitled to act, and his chips already
  in pools stay there. Dealer rotation and the deal skip him. When one player is left,
  he wins the running deal (the kitty; the poker pot as in MI-POKER above) and the game
  ends. ``PlayerRemoved`` with reason ``left`` after a PlayerLeft is the platform's
  acknowledgement; any other removal is a C-CLAIM discrepancy (Michigan has no strikes
  or busts), applied. A ``PlayerLeft`` by a player already out changes nothing and is
  not a finding: it is not a move and may come at any moment (EVENTS.md), as in r500
  and Liverpool.
- Player views (``snapshot(viewer)``): his own hand, the played cards, the pools, every
  hand's size and the widow's size; never another hand, the widow, or dead cards but
  his own (the widow buyer sees his old hand, a player who left the hand he left with).
  The full view's ``dead`` lists every dead card of the deal (the widow buyer's old
  hand and the hands of players who left), so once dealt, hands, widow, dead and
  played cards hold the 52; ``dead_count`` is public. Who holds the next card of the
  running suit is a hidden card's place, so while a card is due only its holder is
  shown ``in_turn``/``next_card``/``to_act``; the others see nobody in turn until it is
  played. A stop and its starter are shown to all (at the table everyone sees that
  nobody plays the next card). Declared poker hands stay in the hands, so a player sees
  only his own (and who won the pot), before and after the showdown — the same cards the
  per-player HTML page redacts from the ``PokerHandDeclared`` events.
- Moves while no deal is running, after the game ended, or by someone not in the game
  are C-TURN violations and are ignored. Games outside 3-8 players are reported
  (LOG-GAME) and replayed anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import Any, ClassVar

from ...events.cards import JOKER, RA, SUITS, CardError, format_card, format_cards, parse_card
from ..variant import Event, GameContext, Transfer, Variant
from .poker import best_hands, split_pot, trusted_key

#: where a card is, besides a seat number 0..n-1
WIDOW, DEAD, PLAYED, NOWHERE = -1, -2, -3, -4
#: what is due in the stop phase (see :meth:`Michigan.due`)
FOLLOW, START = 0, 1

NATURALS = 52
ACES = RA * 4  # cards >= ACES are aces
POKER_SIZE = 5
DEFAULT_PAY_CARDS = ("JS", "QD", "KC", "AH")

_PLACE = {WIDOW: "in the widow", DEAD: "in a dead hand", PLAYED: "already played",
          NOWHERE: "not dealt"}


class Michigan(Variant):
    """RULES.md §4 as a state machine over events."""

    name: ClassVar[str] = "michigan"
    event_types: ClassVar[frozenset[str]] = frozenset(
        {"RoundStarted", "WidowBought", "PokerHandDeclared", "CardPlayed", "PlayerLeft",
         "PlayerRemoved"}
    )
    config_defaults: ClassVar[Mapping[str, Any]] = {
        "pay_cards": DEFAULT_PAY_CARDS,
        "pay_ante": 1,
        "widow_price": 1,
        "deals": 0,
        "three_in_one": False,
    }

    def __init__(self, ctx: GameContext | None = None, rules: Mapping[str, Any] | None = None) -> None:
        # A null rule value is "not set" (``deals`` has no number to write): the shared
        # Variant.read_config applies the default, as for a missing key.
        super().__init__(ctx, rules)
        if ctx is None:  # a bare instance, for Variant.__reduce__
            return
        n = len(ctx.seats)
        self.n = n
        if not 3 <= n <= 8:
            ctx.integrity("LOG-GAME", f"Michigan is for 3-8 players, this game seats {n}")
        self._check_config()
        self.names = ctx.seats
        self.index = {p: s for s, p in enumerate(ctx.seats)}
        self.pay_cards: tuple[int, ...] = tuple(parse_card(c) for c in self.config["pay_cards"])
        self.pay_pool = {c: "pay:" + format_card(c) for c in self.pay_cards}
        self.pools: dict[str, int] = {"kitty": 0, "poker": 0}
        for pool in self.pay_pool.values():
            self.pools[pool] = 0
        self.net = [0] * n
        self.active = [True] * n
        self.left: set[int] = set()
        self.owner = [NOWHERE] * NATURALS
        self.hand_size = [0] * n
        self.suit_count = [[0, 0, 0, 0] for _ in range(n)]
        self.total_deals = self.config["deals"] or n
        self.dealer = ctx.dealer  # dealer of the running (or last) deal
        self.next_dealer = ctx.dealer
        self.deals_started = 0
        self.deal_winners: list[int | None] = []  # one per ended deal (None: abandoned)
        self.in_deal = False
        self.rogue = False  # inside a deal the rules do not allow (MI-END); moves ignored
        self.over = False
        self.final_winners: list[str] = []
        self._reset_deal()

    def _check_config(self) -> None:
        """LOG-RULES for values of the right type that make no sense; defaults instead."""
        try:
            cards = [parse_card(c) for c in self.config["pay_cards"]]
            if JOKER in cards or len(set(cards)) != len(cards):
                raise CardError("pay cards must be distinct natural cards")
        except CardError:
            self.ctx.integrity(
                "LOG-RULES", f"rules.pay_cards must be distinct cards, got {self.config['pay_cards']!r}"
            )
            self.config["pay_cards"] = DEFAULT_PAY_CARDS
        for key in ("pay_ante", "widow_price", "deals"):
            if self.config[key] < 0:
                self.ctx.integrity("LOG-RULES", f"rules.{key} must be >= 0, got {self.config[key]}")
                self.config[key] = self.config_defaults[key]

    def _reset_deal(self) -> None:
        self.widow_open = False
        self.widow_buyer: int | None = None
        self.dead_from: dict[int, list[int]] = {}  # seat -> his cards made dead this deal
        self.started = False
        self.last = -1  # the running card of the current sequence
        self.last_seat = -1  # who played it
        self.played: list[int] = []
        self.poker_open = False
        self.declared: dict[int, list[int]] = {}
        self.bad_declared: set[int] = set()
        self.poker_winners: list[str] = []

    # -- chips ------------------------------------------------------------------------------
    def _pay(self, src: int | str, dst: int | str, amount: int, reason: str) -> None:
        """One chip movement between seats (ints) and pools (names), recorded for C-CLAIM."""
        if amount <= 0:
            return
        if isinstance(src, int):
            self.net[src] -= amount
            src_name = self.names[src]
        else:
            self.pools[src] -= amount
            src_name = src
        if isinstance(dst, int):
            self.net[dst] += amount
            dst_name = self.names[dst]
        else:
            self.pools[dst] += amount
            dst_name = dst
        self.ctx.transfer(src_name, dst_name, amount, reason)

    # -- seats --------------------------------------------------------------------------------
    def next_active(self, seat: int) -> int:
        """The next seat after ``seat`` still in the game (wrapping); ``seat`` if alone."""
        n = self.n
        for step in range(1, n + 1):
            s = (seat + step) % n
            if self.active[s]:
                return s
        return seat

    def active_seats(self) -> list[int]:
        return [s for s in range(self.n) if self.active[s]]

    def offer_order(self) -> list[int]:
        """Players still in, from left of the dealer round to the dealer (deal and widow
        offer order)."""
        n = self.n
        return [s for s in ((self.dealer + k) % n for k in range(1, n + 1)) if self.active[s]]

    # -- cards ------------------------------------------------------------------------------
    def cards_of(self, seat: int) -> list[int]:
        owner = self.owner
        return [c for c in range(NATURALS) if owner[c] == seat]

    def lowest(self, seat: int, suit: int) -> int | None:
        """The seat's lowest card of ``suit``."""
        owner = self.owner
        for c in range(suit, NATURALS, 4):
            if owner[c] == seat:
                return c
        return None

    def _move_card(self, card: int, dst: int) -> None:
        src = self.owner[card]
        if src >= 0:
            self.hand_size[src] -= 1
            self.suit_count[src][card & 3] -= 1
        if dst >= 0:
            self.hand_size[dst] += 1
            self.suit_count[dst][card & 3] += 1
        self.owner[card] = dst

    def _where(self, card: int) -> str:
        if card == JOKER:
            return "not in the deck"
        o = self.owner[card]
        return f"held by {self.names[o]}" if o >= 0 else _PLACE[o]

    # -- what is due ----------------------------------------------------------------------------
    def due(self) -> tuple[int, int, int]:
        """In the stop phase: ``(FOLLOW, holder, next card)`` or ``(START, starter,
        barred suit or -1)``; the starter is -1 if nobody can start (no cards left)."""
        if not self.started:  # MI-START: left of the dealer, any suit
            return (START, self._starter(self.next_active(self.dealer), -1), -1)
        c = self.last
        if c < ACES:  # MI-FOLLOW: the holder of the next card plays it
            o = self.owner[c + 4]
            if o >= 0:
                return (FOLLOW, o, c + 4)
        # MI-STOP: next card dead, in the widow, played, or the ace was played
        suit = c & 3
        starter = self._starter(self.last_seat, suit)
        if starter >= 0:
            return (START, starter, suit)
        return (START, self._starter(self.last_seat, -1), -1)

    def _starter(self, seat: int, barred: int) -> int:
        """From ``seat`` leftwards, the first player still in holding a card outside the
        barred suit (any card if ``barred`` is -1); -1 if none."""
        n = self.n
        for k in range(n):
            s = (seat + k) % n
            if self.active[s]:
                size = self.hand_size[s]
                if size and (barred < 0 or size > self.suit_count[s][barred]):
                    return s
        return -1

    def poker_pending(self) -> list[int]:
        """Players who still owe a poker declaration, in offer order."""
        return [s for s in self.offer_order()
                if s not in self.declared and self.hand_size[s] >= POKER_SIZE]

    # -- deals --------------------------------------------------------------------------------
    def apply_RoundStarted(self, event: Event) -> None:
        p = event["payload"]
        number = self.deals_started + 1
        if self.over or number > self.total_deals:
            self.ctx.violation(
                "MI-END",
                f"deal {p['round']} started, but the game is over after {self.total_deals} deals",
            )
            self.rogue = True
            self.in_deal = False
            return
        self.rogue = False
        deck = [parse_card(c) for c in p["deck"]]
        if sorted(deck) != list(range(NATURALS)):
            self.ctx.violation("C-DEAL", "the shuffled deck is not the variant's deck (the 52 cards)")
            seen = set(deck)
            extra = sorted({c for c in deck if deck.count(c) > 1 or c == JOKER})
            missing = [c for c in range(NATURALS) if c not in seen]
            raise self.ctx.halt(
                "MI-DEAL",
                f"the deck is not the 52 cards (repeated or extra: {' '.join(format_cards(extra)) or '-'};"
                f" missing: {' '.join(format_cards(missing)) or '-'}); the deal cannot be followed",
            )
        if self.in_deal:
            self.ctx.violation(
                "MI-END", f"deal {number} started before deal {number - 1} ended (nobody went out)"
            )
            self.deal_winners.append(None)
            self.next_dealer = self.next_active(self.dealer)
            self.in_deal = False
        if p["round"] != number:
            self.ctx.discrepancy(f"RoundStarted claims deal {p['round']}; by the rules it is deal {number}")
        if p["redeal"]:
            self.ctx.violation("MI-DEAL", f"redeal {p['redeal']}: Michigan has no redeals")
        dealer = p["dealer"]
        if dealer != self.next_dealer:
            want = self.next_dealer
            self.ctx.violation(
                "MI-END",
                f"deal {number} dealt by seat {dealer}; the dealer is seat {want} ({self.names[want]})",
            )
            if 0 <= dealer < self.n:  # a seat that left still deals: the hands follow it
                self.next_dealer = dealer
        self.dealer = self.next_dealer
        self.deals_started = number
        self._ante()
        self._deal(deck)
        self._reset_deal()
        self.in_deal = True
        self.widow_open = True
        self.poker_open = self.config["three_in_one"]

    def _ante(self) -> None:
        """MI-ANTE: 1 chip to the kitty (the dealer 2), ``pay_ante`` on every pay card."""
        pay_ante = self.config["pay_ante"]
        for s in self.offer_order():
            self._pay(s, "kitty", 2 if s == self.dealer else 1, "ante")
            for pool in self.pay_pool.values():
                self._pay(s, pool, pay_ante, "pay-card ante")

    def _deal(self, deck: list[int]) -> None:
        """MI-DEAL: one card at a time from left of the dealer, the widow after the dealer."""
        order = [*self.offer_order(), WIDOW]
        k = len(order)
        owner = self.owner
        for i, c in enumerate(deck):
            owner[c] = order[i % k]
        self.hand_size = [0] * self.n
        self.suit_count = [[0, 0, 0, 0] for _ in range(self.n)]
        for c in range(NATURALS):
            o = owner[c]
            if o >= 0:
                self.hand_size[o] += 1
                self.suit_count[o][c & 3] += 1

    # -- moves ----------------------------------------------------------------------------------
    def _mover(self, event: Event) -> int | None:
        """The acting seat of a move, or None (reported as C-TURN, move ignored)."""
        actor = event["actor"]
        if self.rogue:  # nobody is entitled to act in a deal past the game's (RULES.md C-TURN)
            self.ctx.violation(
                "C-TURN", f"{event['type']} by {actor} in a deal past the game's {self.total_deals} deals"
            )
            return None
        seat = self.index.get(actor)
        if seat is None:
            self.ctx.violation("C-TURN", f"{actor} is not seated at this game")
        elif not self.active[seat]:
            self.ctx.violation("C-TURN", f"{actor} has left the game")
        elif self.over:
            self.ctx.violation("C-TURN", f"{event['type']} by {actor} after the game ended")
        elif not self.in_deal:
            self.ctx.violation("C-TURN", f"{event['type']} by {actor} while no deal is running")
        else:
            return seat
        return None

    def apply_WidowBought(self, event: Event) -> None:
        seat = self._mover(event)
        if seat is None:
            return
        actor = self.names[seat]
        if self.widow_buyer is not None:
            self.ctx.violation(
                "MI-WIDOW",
                f"{actor} bought the widow, but {self.names[self.widow_buyer]} already bought it",
            )
            return
        if not self.widow_open:
            when = "the first card was played" if self.started else "the poker declarations began"
            self.ctx.violation("MI-WIDOW", f"{actor} bought the widow after {when}")
        price = self.config["widow_price"]
        if event["payload"]["price"] != price:
            self.ctx.discrepancy(
                f"widow price: claimed {event['payload']['price']}, the rules say {price}"
            )
        self._pay(seat, "kitty", price, "widow")
        own = self.cards_of(seat)
        for c in range(NATURALS):
            if self.owner[c] == WIDOW:
                self._move_card(c, seat)
        for c in own:
            self._move_card(c, DEAD)
        self.dead_from[seat] = own
        self.widow_buyer = seat
        self.widow_open = False

    def apply_PokerHandDeclared(self, event: Event) -> None:
        seat = self._mover(event)
        if seat is None:
            return
        actor = self.names[seat]
        problem = None
        if not self.config["three_in_one"]:
            problem = "this game has no poker phase (three_in_one is off)"
        elif self.started:
            problem = "the stop phase has begun"
        elif seat in self.declared:
            problem = f"{actor} already declared"
        elif not self.poker_open:
            problem = "the poker pot was already settled"
        if problem is not None:
            self.ctx.violation("MI-POKER", f"poker hand declared by {actor}, but {problem}")
            return
        cards = [parse_card(c) for c in event["payload"]["cards"]]
        for c in cards:
            if c == JOKER or self.owner[c] != seat:
                raise self.ctx.halt(
                    "C-HOLD", f"{actor} declared {format_card(c)}, which is {self._where(c)}"
                )
        if len(set(cards)) != POKER_SIZE:
            self.ctx.violation(
                "MI-POKER", f"{actor} declared {' '.join(format_cards(cards))}: five different cards are needed"
            )
            self.bad_declared.add(seat)
        self.widow_open = False
        self._pay(seat, "poker", 1, "poker ante")
        self.declared[seat] = cards
        if not self.poker_pending():
            self._settle_poker()

    def _settle_poker(self) -> None:
        """MI-POKER: the best declared hand takes the pot; ties split, the odd chips one
        each in seat order from left of the dealer."""
        self.poker_open = False
        hands = {self.names[s]: cards for s, cards in sorted(self.declared.items())
                 if self.active[s] and s not in self.bad_declared}
        pot = self.pools["poker"]
        if not hands or not pot:
            return
        self.poker_winners = best_hands(hands)
        shares = split_pot(pot, self.poker_winners, list(self.names),
                           self.names[(self.dealer + 1) % self.n])
        for name, amount in shares.items():
            self._pay("poker", self.index[name], amount, "poker pot")

    def apply_CardPlayed(self, event: Event) -> None:
        seat = self._mover(event)
        if seat is None:
            return
        card = parse_card(event["payload"]["card"])
        actor = self.names[seat]
        if card == JOKER or self.owner[card] != seat:
            raise self.ctx.halt(
                "C-HOLD", f"{actor} plays {format_card(card)}, which is {self._where(card)}"
            )
        if self.poker_open:
            missing = [self.names[s] for s in self.poker_pending()]
            if missing:
                self.ctx.violation(
                    "MI-POKER", f"the stop phase began before {', '.join(missing)} declared a poker hand"
                )
            self._settle_poker()
        self.widow_open = False
        kind, who, x = self.due()
        if kind == FOLLOW:
            if seat != who or card != x:
                self.ctx.violation(
                    "MI-FOLLOW",
                    f"{self.names[who]} holds {format_card(x)}, the next card, and should have "
                    f"played it; {actor} played {format_card(card)}",
                )
        elif seat != who and who >= 0:
            rule = "MI-STOP" if self.started else "MI-START"
            self.ctx.violation(
                rule, f"{self.names[who]} should start the sequence; {actor} started with {format_card(card)}"
            )
        else:
            if x >= 0 and card & 3 == x:
                self.ctx.violation(
                    "MI-STOP",
                    f"{actor} restarted in {SUITS[x]}, the stopped suit, though he holds other suits",
                )
            if card != self.lowest(seat, card & 3):
                # MI-PENALTY: not his lowest of the suit: the play stands, 1 chip to each other
                for s in self.active_seats():
                    if s != seat:
                        self._pay(seat, s, 1, "penalty")
        self._play(seat, card)

    def _play(self, seat: int, card: int) -> None:
        self._move_card(card, PLAYED)
        self.played.append(card)
        self.last = card
        self.last_seat = seat
        self.started = True
        pool = self.pay_pool.get(card)
        if pool is not None:  # MI-PAY
            self._pay(pool, seat, self.pools[pool], "pay card")
        if self.hand_size[seat] == 0:  # MI-OUT
            self._end_deal(seat)

    def _end_deal(self, winner: int | None) -> None:
        """MI-OUT: the first player out takes the kitty; pay-card chips stay (roll over)."""
        self.in_deal = False
        self.widow_open = False
        self.poker_open = False
        self.deal_winners.append(winner)
        if winner is not None:
            self._pay("kitty", winner, self.pools["kitty"], "kitty")
        self.next_dealer = self.next_active(self.dealer)
        if len(self.deal_winners) >= self.total_deals or len(self.active_seats()) <= 1:
            self._end_game()

    def _end_game(self) -> None:
        """MI-END: the pay-card chips are divided equally, remainder in seat order from left
        of the last dealer; the winners are the highest net."""
        self.over = True
        alive = self.active_seats()
        if not alive:
            return
        names = [self.names[s] for s in alive]
        first = self.names[self.next_active(self.dealer)]  # always a player still in
        total = sum(self.pools[p] for p in self.pay_pool.values())
        if total:
            shares = split_pot(total, names, names, first)
            start = names.index(first)
            pools = list(self.pay_pool.values())
            i = 0
            for name in names[start:] + names[:start]:
                need = shares[name]
                while need:
                    while not self.pools[pools[i]]:
                        i += 1
                    take = min(need, self.pools[pools[i]])
                    self._pay(pools[i], self.index[name], take, "pay cards split")
                    need -= take
        # MI-END: "the players with the highest net" -- every seated player's net, a
        # leaver's included (his net is final; RULES.md does not exclude him)
        best = max(self.net)
        self.final_winners = [self.names[s] for s in range(self.n) if self.net[s] == best]

    def regroupable(self, transfer: Transfer) -> bool:
        """MI-END fixes each player's share of the pay-card chips and that every pay card
        is emptied, not which card pays whom: any routing with those totals is right."""
        return transfer.reason == "pay cards split"

    # -- leaving ----------------------------------------------------------------------------------
    def apply_PlayerLeft(self, event: Event) -> None:
        seat = self.index.get(event["actor"])
        if seat is None:
            self.ctx.violation("C-TURN", f"{event['actor']} left a game he is not seated at")
            return
        if not self.active[seat]:
            return  # PlayerLeft may come at any moment (EVENTS.md); he is already out
        self.left.add(seat)
        self._leave(seat)

    def apply_PlayerRemoved(self, event: Event) -> None:
        p = event["payload"]
        seat = self.index.get(p["player"])
        if seat is None:
            self.ctx.discrepancy(f"removal of {p['player']}, who is not seated")
            return
        if p["reason"] == "left":
            if seat in self.left:
                return
            self.ctx.discrepancy(f"{p['player']} removed for leaving, but he did not leave")
        elif not self.active[seat]:
            self.ctx.discrepancy(f"{p['player']} removed for {p['reason']!r}, but he is already out")
        else:
            self.ctx.discrepancy(
                f"{p['player']} removed for {p['reason']!r}, which Michigan does not have"
            )
        if self.active[seat]:
            self._leave(seat)

    def _leave(self, seat: int) -> None:
        """Out at once: his cards become dead, the game goes on without him."""
        self.active[seat] = False
        held = self.cards_of(seat)
        for c in held:
            self._move_card(c, DEAD)
        if held:
            self.dead_from.setdefault(seat, []).extend(held)
        if self.over:
            return
        if self.next_dealer == seat:
            self.next_dealer = self.next_active(seat)
        alive = self.active_seats()
        if len(alive) <= 1:
            if self.in_deal:
                if self.poker_open:  # MI-POKER: the declared hands still in share the pot
                    self._settle_poker()
                self._end_deal(alive[0] if alive else None)
            else:
                self._end_game()
            return
        if self.in_deal and self.poker_open and not self.poker_pending():
            self._settle_poker()

    # -- questions -----------------------------------------------------------------------------
    def is_over(self) -> bool:
        return self.over

    def winners(self) -> list[str]:
        return list(self.final_winners)

    def scores(self) -> dict[str, int]:
        return {}

    def round_result(self, round_no: int) -> tuple[list[str], dict[str, int]] | None:
        if not 1 <= round_no <= len(self.deal_winners):
            return None
        winner = self.deal_winners[round_no - 1]
        if winner is None:
            return None
        return [self.names[winner]], {}

    def rounds_finished(self) -> int:
        return len(self.deal_winners)

    def deal_due(self) -> dict[str, Any] | None:
        if self.over or self.in_deal:
            return None
        return {"round": self.deals_started + 1, "dealer": self.next_dealer, "redeal": 0,
                "cards": list(range(NATURALS))}

    def to_act(self) -> list[str]:
        if self.over or not self.in_deal:
            return []
        if self.widow_open:
            return [self.names[s] for s in self.offer_order()]
        if self.poker_open:
            return [self.names[s] for s in self.poker_pending()]
        _, who, _ = self.due()
        return [self.names[who]] if who >= 0 else []

    def legal_moves(self, player: str) -> list[tuple[str, dict[str, Any]]]:
        """Every clean move: the widow purchase while offered, each poker declaration
        (best hand first), the next card, or a start: the lowest card of each allowed
        suit first, then the dearer starts that pay MI-PENALTY (allowed, not a finding)."""
        seat = self.index.get(player)
        moves: list[tuple[str, dict[str, Any]]] = []
        if seat is None or not self.active[seat] or self.over or not self.in_deal:
            return moves
        if self.widow_open:
            moves.append(("WidowBought", {"price": self.config["widow_price"]}))
        if self.poker_open:
            if seat in self.poker_pending():
                # his own cards: five distinct naturals by construction, no checks needed
                combos = sorted(combinations(self.cards_of(seat), POKER_SIZE), key=trusted_key,
                                reverse=True)
                moves.extend(("PokerHandDeclared", {"cards": format_cards(h)}) for h in combos)
            return moves
        kind, who, x = self.due()
        if seat != who:
            return moves
        if kind == FOLLOW:
            moves.append(("CardPlayed", {"card": format_card(x)}))
            return moves
        suits = [s for s in range(4) if self.suit_count[seat][s] and s != x]
        cheap, dear = [], []
        for suit in suits:
            cards = [c for c in range(suit, NATURALS, 4) if self.owner[c] == seat]
            cheap.append(cards[0])
            dear.extend(cards[1:])
        moves.extend(("CardPlayed", {"card": format_card(c)}) for c in cheap + dear)
        return moves

    def phase(self) -> str:
        if self.over:
            return "over"
        if not self.in_deal:
            return "between deals"
        if self.widow_open:
            return "widow"
        if self.poker_open:
            return "poker"
        return "stops"

    def snapshot(self, viewer: str | None = None) -> dict[str, Any]:
        vseat = None if viewer is None else self.index.get(viewer)
        hidden = viewer is not None
        hands = {p: format_cards(self.cards_of(s)) for s, p in enumerate(self.names)
                 if not hidden or s == vseat}
        in_turn = None
        next_card = None
        barred = None
        to_act = self.to_act()
        if self.in_deal and not self.over and not self.widow_open and not self.poker_open:
            kind, who, x = self.due()
            in_turn = self.names[who] if who >= 0 else None
            if kind == FOLLOW:
                next_card = format_card(x)
                if hidden and who != vseat:
                    # Who holds the next card is a hidden card's place: only the holder
                    # knows it before he plays it (the module docstring, views).
                    in_turn, next_card, to_act = None, None, []
            elif x >= 0:
                barred = SUITS[x]
        dead = [c for c in range(NATURALS) if self.owner[c] == DEAD]
        if hidden:  # a player knows only the dead cards that were his
            mine = self.dead_from.get(vseat) if vseat is not None else None
            shown_dead = format_cards(sorted(mine)) if mine else None
        else:
            shown_dead = format_cards(dead)
        shown_poker = {  # declared cards stay in the hand: hidden from the others
            self.names[s]: format_cards(cards) for s, cards in sorted(self.declared.items())
            if not hidden or s == vseat
        }
        return {
            "variant": self.name,
            "round": self.deals_started,
            "dealer": self.names[self.dealer],
            "in_turn": in_turn,
            "to_act": to_act,
            "active": [p for s, p in enumerate(self.names) if self.active[s]],
            # out of the game: "left", or removed on a platform claim (a finding of its own)
            "out": {p: "left" if s in self.left else "removed"
                    for s, p in enumerate(self.names) if not self.active[s]},
            "hands": hands,
            "hand_counts": {p: self.hand_size[s] for s, p in enumerate(self.names)},
            "pots": dict(self.pools),
            "scores": {},
            "over": self.over,
            "winners": self.winners(),
            "phase": self.phase(),
            "deals": self.total_deals,
            "deal_winners": [self.names[w] if w is not None else None for w in self.deal_winners],
            "pay_cards": format_cards(self.pay_cards),
            "widow": None if hidden else format_cards(
                [c for c in range(NATURALS) if self.owner[c] == WIDOW]),
            "widow_count": self.owner.count(WIDOW),
            "widow_buyer": self.names[self.widow_buyer] if self.widow_buyer is not None else None,
            "dead": shown_dead,
            "dead_count": len(dead),
            "played": format_cards(self.played),
            "running": format_card(self.last) if self.last >= 0 else None,
            "next_card": next_card,
            "barred_suit": barred,
            "poker": {"declared": shown_poker, "winners": list(self.poker_winners)},
        }


__all__ = ["DEAD", "PLAYED", "WIDOW", "Michigan"]
