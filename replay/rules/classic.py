"""Classic 14-card rummy — RULES.md §1 (variant ``classic``).

Every rule ID of §1 is checked here (grep the ID). Decisions where the spec is silent:

- Turn order follows the platform: a move by someone other than the player in turn is
  C-TURN and the turn passes to that player; if the player in turn had drawn but not
  discarded, the next player's move is CL-DISCARD (his turn ended with no discard).
- CL-NODISCARD-TAKEN with two decks: discarding a card code taken from the pile is a
  violation only if no other copy of that code was in the hand before the draw.
- CL-TIMER: every move of the player in turn made after both clocks ran out is late
  (RULES.md: "a move ... whose ts is later than ... is late"), one finding per move.
- CL-AUTOPLAY when the player had already drawn: the system draws nothing and
  discards the card drawn from the stock (unless a joker), else the highest non-joker
  card that was not taken from the pile this turn.
- CL-AUTOPLAY with an empty stock that C-RESTOCK cannot refill (the pile is its top
  card at most, e.g. after a removed player took the last cards out of play): there is
  no stock card to draw, so it is a turn with no draw (``drew`` null) and the highest
  non-joker card is discarded, as on the first player's first turn. With a pile that
  could restock, the restock comes first; an auto-play before it breaks CL-AUTOPLAY.
- A removal for ``bust`` does not exist in classic: C-CLAIM discrepancy, applied.
- CL-NEXT is a rule between games at a table; :func:`check_next_games` checks it over
  a table's games in time order (``rummyguard verify`` runs it).
- CL-LONGRUN with ``long_run_allows_joker`` false: the qualifying run of 4+ cards holds
  no joker at all (the config's name read literally), not merely 4 natural cards.
- A declaration's melds that break a meld rule still count by kind and length for
  CL-LONGRUN, so a broken long run is reported once (its C-RUN / C-WILD / CL-MELDS).
- System events are never out of turn (C-TURN): a ``RoundStarted`` after the game
  ended breaks CL-RESULT (a classic game is one round).
- ``PlayerLeft`` from a seated player who is already out (removed, or left before) is a
  no-op. A ``PlayerRemoved`` for someone already out, or for someone not seated at the
  game, is a claim that differs from the state (C-CLAIM discrepancy, nothing applied;
  no card moves, so it is not C-HOLD), except the ``left`` removal that confirms his
  leave — the same findings r500, Liverpool and Michigan give. A removal of a player
  still in is judged by classic's own removal rules: CL-STRIKES for ``strikes`` and
  CL-LEAVE for ``left`` without a ``PlayerLeft`` (§1 says when a player is removed;
  the other variants have no removal rule, so there it is C-CLAIM).
- Card-location breaks (C-HOLD) are reported after the rule findings of the same event
  that do not depend on them, then the replay halts.
- A classic game is one round (CL-RESULT), so every ``RoundStarted``, a Fresh redeal
  included, deals round 1; another number is a claim that differs (C-CLAIM
  discrepancy, as in r500) and the round is still round 1 for ``RoundEnded``.
- After a unanimous Fresh only the redeal may come: a player's move or the system's
  auto-play before it is CL-FRESH (and applied), once per unanimous Fresh: the moves
  after it are the same breach, not new ones, whether the platform then redeals (that
  redeal is the Fresh redeal: no finding) or plays the round out. Until the redeal
  nobody is in turn: ``to_act`` is empty, the views show ``in_turn`` None and
  ``legal_moves`` offers nothing. ``FreshPressed`` outside a round (before the deal,
  after the end) is CL-FRESH too and counts for no vote: the rule lets players press it
  "at any moment of a round". A press after the unanimous Fresh, before the redeal, is
  no finding and no vote (the redeal clears the votes).
  A press by a player already out of the game (left or removed) is no finding and no
  vote: FreshPressed is not a move (EVENTS.md), so C-TURN does not apply, and only the
  active players vote. A press by someone not seated at the game is C-TURN, as his
  PlayerLeft is.
- ``RoundStarted.redeal`` is the Fresh rule's count (EVENTS.md: "n for the n-th Fresh
  redeal"): 0 for the deal, the number of unanimous Fresh so far for a redeal; another
  number is CL-FRESH (a violation of the redeal, as a non-zero ``redeal`` is C-DEAL in
  r500 and Liverpool), unlike the ``round`` number, which is a plain claim.
- Strikes count per game (redeals keep them); a redeal restarts the turn clocks, so
  each player's first turn of the redealt round has the 60 s base again.
- CL-TIMER's "first turn of the round": a turn in which the player drew counts as his
  turn even when it ended without a discard (CL-DISCARD) or was broken into by a move
  out of turn (C-TURN); his next turn has the 30 s base.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ...events.cards import JOKER, format_card, format_cards, parse_card, parse_cards
from ..variant import Event, GameContext
from .melds import (
    KnownMelds,
    Meld,
    MeldError,
    MeldRules,
    find_partition,
    parse_as,
    validate_meld,
)
from .table import CARD_CODES, CardTable, joker_free_max

BASE_FIRST_MS = 60_000
BASE_MS = 30_000
EXTRA_MS = 60_000
MAX_STRIKES = 3  # the first three timeouts are auto-played; the fourth removes

#: meld error code -> classic rule ID
MELD_RULE = {
    "run_short": "CL-MELDS",
    "run_naturals": "CL-MELDS",
    "run_suit": "C-RUN",
    "run_gap": "C-RUN",
    "run_wrap": "C-RUN",
    "set_size": "CL-MELDS",
    "set_naturals": "CL-MELDS",
    "set_rank": "C-SET",
    "set_suits": "CL-MELDS",
    "wild_as": "C-WILD",
    "kind": "CL-MELDS",
}

#: classic's meld rules (frozen, so one object serves every game)
MELD_RULES = MeldRules(wild=frozenset({JOKER}), run_min=3, set_min=3, set_max=4)
#: the valid melds of declarations under MELD_RULES, each checked once (melds.KnownMelds)
_KNOWN_MELDS = KnownMelds(MELD_RULES)
#: (first seat, active flags) -> the deal's circuit and hand sizes (ClassicRummy._deal_seats)
_DEAL_SEATS: dict[tuple[int, tuple[bool, ...]], tuple[list[int], dict[int, int]]] = {}


class ClassicRummy(CardTable):
    name: ClassVar[str] = "classic"
    event_types: ClassVar[frozenset[str]] = frozenset(
        {"RoundStarted", "Drew", "Discarded", "DeclaredRummy", "FreshPressed", "AutoPlayed",
         "PlayerRemoved", "PlayerLeft", "StockReplenished"}
    )
    config_defaults: ClassVar[Mapping[str, Any]] = {
        "decks": 2,
        "jokers": 4,
        "long_run_allows_joker": True,
        "rake_bps": 0,
    }
    #: the state of this class (the table's is CardTable's): slots, because with the
    #: table's the instance would hold 36 attributes, past the 30 CPython 3.11 keeps in
    #: a shared-key array: each game would then build a full dict (1.6 kB, kept with the
    #: record) and every move would read and write its attributes through it
    __slots__ = (
        "before_take", "declaration_finder", "declared", "drawn", "drawn_stock", "first_move",
        "first_player",
        "fresh_breach_seen", "fresh_pending", "fresh_votes", "had_turn", "last_discarder",
        "left", "meld_rules", "moved", "over", "pot", "removed",
        "stakes_paid", "strikes", "taken", "turn_actor", "turn_deadline", "turn_start",
        "unanimous_fresh", "win_how", "winner",
    )

    def __init__(self, ctx: GameContext | None = None, rules: Mapping[str, Any] | None = None) -> None:
        super().__init__(ctx, rules)
        if ctx is None:  # a bare instance, for Variant.__reduce__
            return
        if not 2 <= self.n <= 6:
            ctx.integrity("LOG-GAME", f"classic is for 2-6 players, this game seats {self.n}")
        self._check_config()
        self.meld_rules = MELD_RULES
        self.pot = 0
        self.stakes_paid = [0] * self.n
        for s, pid in enumerate(ctx.seats):  # CL-POT: everyone stakes at GameCreated
            self._stake(s, pid)
        self.first_player = self.next_active(self.dealer)
        self.unanimous_fresh = 0
        self.fresh_breach_seen = False  # a move came after the unanimous Fresh (reported once)
        self.fresh_votes: set[int] = set()
        self.fresh_pending = False
        self.strikes = [0] * self.n
        self.removed: dict[int, str] = {}
        self.left: set[int] = set()
        self.over = False
        self.winner: int | None = None
        self.declared: list[Meld] = []
        # made once and emptied in place by every reset (nothing else holds them)
        self.taken: Counter[int] = Counter()  # cards taken from the pile this turn
        self.before_take: Counter[int] = Counter()  # copies held before taking
        self.had_turn: set[int] = set()  # seats that have had a turn this round
        #: the player whose Drew or Discarded takes the hot path: the one in turn, while a
        #: round is in progress, not over, with no unanimous Fresh pending (else None);
        #: set by _start_turn where a turn starts, cleared where the game ends, a Fresh
        #: passes or a seat leaves play. And when the clocks of the turn run out
        #: (CL-TIMER: _deadline(current)), set with it.
        self.turn_actor: str | None = None
        self.turn_deadline = 0
        #: a faster search with the same answers as :meth:`find_declaration`'s own
        #: (the simulator's, sim/fastpaths.py); an attribute, not a replaced method, as a
        #: compiled build's classes allow no per-instance methods
        self.declaration_finder: Callable[[int], dict[str, Any] | None] | None = None
        self._reset_turn_state()

    def _check_config(self) -> None:
        """LOG-RULES for values of the right type that make no sense; defaults instead.
        RULES.md §1: ``decks`` counts 52-card decks and ``jokers`` jokers (a negative count
        is no deck, and no classic hand melds from jokers alone); ``rake_bps`` is basis
        points of a rake "paid from the pot", so 0..10000 (past it the pot pays out more
        than it holds and the winner gets a negative transfer)."""
        cfg, defaults = self.config, self.config_defaults
        for key, least, most in (("decks", 1, None), ("jokers", 0, None), ("rake_bps", 0, 10_000)):
            value = cfg[key]
            if value < least or (most is not None and value > most):
                allowed = f"at least {least}" if most is None else f"between {least} and {most}"
                self.ctx.integrity("LOG-RULES", f"rules.{key} must be {allowed}, got {value}")
                cfg[key] = defaults[key]

    def _stake(self, seat: int, pid: str) -> None:
        stake = self.ctx.stake
        self.pot += stake
        self.stakes_paid[seat] += stake
        self.ctx.transfer(pid, "pot", stake, "stake")

    def _reset_turn_state(self) -> None:
        self.drawn = False
        self.taken.clear()
        self.before_take.clear()
        self.drawn_stock: int | None = None
        self.first_move = False
        self.moved = False  # the player in turn has made a move
        self.turn_start = self.ctx.ts_ms
        self.had_turn.clear()
        self.last_discarder: int | None = None

    deck_from_config = True  # ``decks`` and ``jokers``

    def expected_deck(self) -> Counter[int]:
        """The configured deck as counts, never as a list of cards: ``decks`` and
        ``jokers`` have no upper bound in RULES.md, and a log may say 2**53 - 1 (the
        recorded deck then differs: a C-DEAL violation, not a list of 2**59 cards)."""
        counts = Counter(dict.fromkeys(range(52), self.config["decks"]))
        if self.config["jokers"]:
            counts[JOKER] = self.config["jokers"]
        return counts

    # -- rounds and Fresh ------------------------------------------------------------------
    def apply_RoundStarted(self, event: Event) -> None:
        p = event["payload"]
        if self.over:  # a system event is never out of turn (C-TURN): one round a game
            self.ctx.violation("CL-RESULT", "a round started after the game ended")
            return
        if self.in_round and not self.fresh_pending:
            self.ctx.violation("CL-FRESH", "the round was redealt without a unanimous Fresh")
        elif p["redeal"] != self.unanimous_fresh:
            self.ctx.violation(
                "CL-FRESH",
                f"redeal number {p['redeal']}, but {self.unanimous_fresh} unanimous Fresh so far",
            )
        if p["dealer"] != self.dealer:
            self.ctx.violation(
                "C-DEAL", f"dealer seat {p['dealer']}, but the game's dealer is seat {self.dealer}"
            )
        if p["round"] != 1:  # CL-RESULT: one round a game; a redeal deals round 1 again
            self.ctx.discrepancy(
                f"RoundStarted claims round {p['round']}; a classic game has only round 1"
            )
        try:  # parse_cards, with the per-card work in C (a deck is 108 cards)
            deck = list(map(CARD_CODES.__getitem__, p["deck"]))
        except (KeyError, TypeError):
            deck = parse_cards(p["deck"])  # raises CardError naming the bad code
        self.check_deck(deck)
        self.round_no = 1
        first = self.first_player if self.active[self.first_player] else self.next_active(self.dealer)
        # CL-DEAL: 14 circuits of one card from the first player, then his 15th card.
        order, sizes = self._deal_seats(first)
        self.deal(deck, order, sizes, "CL-DEAL")
        self.in_round = True
        self.fresh_votes.clear()
        self.fresh_pending = False
        self.fresh_breach_seen = False
        self._reset_turn_state()
        self._start_turn(first, self.turn_start)  # opens the turn (turn_actor, turn_deadline)
        self.first_move = True

    def _deal_seats(self, first: int) -> tuple[list[int], dict[int, int]]:
        """The deal's circuit from ``first`` over the active seats and each one's hand size
        (15 for ``first``, 14 for the others), by (first seat, active seats): a table has a
        handful of seatings, so each is worked out once. The caller must not change them."""
        key = (first, tuple(self.active))
        known = _DEAL_SEATS.get(key)
        if known is None:
            order = [first]
            n_active = len(self.active_seats())
            while len(order) < n_active:
                order.append(self.next_active(order[-1]))
            sizes = {s: 14 for s in order}
            sizes[first] = 15
            known = (order, sizes)
            if len(_DEAL_SEATS) < 4096:
                _DEAL_SEATS[key] = known
        return known

    def apply_FreshPressed(self, event: Event) -> None:
        seat = self.seat(event["actor"])
        if seat is not None and not self.active[seat]:
            # not a move (EVENTS.md: FreshPressed "may come at any moment"), so no turn rule
            # applies, as to a PlayerLeft of a player already out; and only "every active
            # player" votes (CL-FRESH): the press counts for nothing (audit 41)
            return
        seat = self.actor_seat(event)
        if seat is None:
            return
        if not self.in_round or self.over:
            self.ctx.violation("CL-FRESH", "Fresh pressed outside a round")
            return
        self.fresh_votes.add(seat)
        self._fresh_if_unanimous()

    def _fresh_if_unanimous(self) -> None:
        """CL-FRESH: once every active player has pressed in this round, the round must be
        redealt; the first time in the game every active player stakes again (the pot
        doubles). Reached by a press, or by the leave of the last player not pressing."""
        alive = self.active_seats()
        if self.fresh_pending or not self.fresh_votes or not all(s in self.fresh_votes for s in alive):
            return
        self.unanimous_fresh += 1
        self.fresh_pending = True
        self.turn_actor = None  # only the redeal may come
        if self.unanimous_fresh == 1:
            for s in alive:
                self._stake(s, self.player(s))

    def _fresh_ignored(self, what: str) -> None:
        """CL-FRESH: a move or auto-play came where only the redeal may. Reported once
        per unanimous Fresh: the moves after it are the same breach, not new ones, and
        the redeal may still come (it is then the Fresh redeal, not a finding)."""
        if not self.fresh_breach_seen:
            self.fresh_breach_seen = True
            self.ctx.violation("CL-FRESH", f"{what} after a unanimous Fresh: the round must be redealt")

    # -- turns -------------------------------------------------------------------------------
    def _deadline(self, seat: int) -> int:
        base = BASE_MS if seat in self.had_turn else BASE_FIRST_MS
        return self.turn_start + base + EXTRA_MS

    def _enter_move(self, event: Event) -> int | None:
        """Turn checks common to every move; returns the acting seat or None (skip)."""
        if self.over:
            self.ctx.violation("C-TURN", f"{event['type']} after the game ended")
            return None
        if not self.in_round:
            self.ctx.violation("C-TURN", f"{event['type']} before the cards were dealt")
            return None
        seat = self.seat_index.get(event["actor"])
        if seat is None or not self.active[seat]:
            return self.actor_seat(event)  # reports C-TURN, returns None
        if self.fresh_pending:
            self._fresh_ignored("a move")
        if seat != self.current:
            if (
                event["type"] == "Discarded"
                and seat == self.last_discarder
                and not self.moved
            ):
                self.ctx.violation("CL-DISCARD", f"{self.player(seat)} discarded twice in one turn")
                return seat
            if self.drawn:  # he drew, so that was a turn of his: his next has the 30 s base
                self.had_turn.add(self.current)  # (CL-TIMER: "the player's first turn")
            if self.drawn and seat == self.next_active(self.current):
                self.ctx.violation(
                    "CL-DISCARD", f"{self.player(self.current)}'s turn ended without a discard"
                )
            else:
                self.ctx.violation(
                    "C-TURN",
                    f"{self.player(seat)} moved out of turn ({self.player(self.current)} was in turn)",
                )
            self._start_turn(seat, self.ctx.ts_ms)
        if self.ctx.ts_ms > self.turn_deadline:  # seat is current
            self._late(seat)
        self.moved = True
        return seat

    def _late(self, seat: int) -> None:
        """CL-TIMER: the move of ``seat`` came after both clocks ran out."""
        late = (self.ctx.ts_ms - self._deadline(seat)) / 1000
        self.ctx.violation(
            "CL-TIMER", f"{self.player(seat)} moved {late:.3f} s after both clocks ran out "
            f"({self._clocks(seat)})"
        )

    def _clocks(self, seat: int) -> str:
        """How long this turn of ``seat`` has run and what its clocks allow (CL-TIMER), for
        a finding's message: a support agent answers a timeout dispute from it."""
        first = seat not in self.had_turn
        base = (BASE_FIRST_MS if first else BASE_MS) // 1000
        return (f"{(self.ctx.ts_ms - self.turn_start) / 1000:.3f} s into the turn; "
                f"{base} s base{' (his first turn of the round)' if first else ''} "
                f"+ {EXTRA_MS // 1000} s extra")

    def _start_turn(self, seat: int, ts_ms: int) -> None:
        self.current = seat
        self.turn_start = ts_ms
        self.drawn = False
        if self.taken:  # emptied in place: nothing else holds them
            self.taken.clear()
            self.before_take.clear()
        self.drawn_stock = None
        self.first_move = False
        self.moved = False
        # _deadline(seat), kept for every move's CL-TIMER check (had_turn gains this seat
        # only when its turn ends), and who may take the hot path of Drew and Discarded,
        # instead of the game's end, the round, the Fresh state and the actor's seat
        self.turn_deadline = ts_ms + (BASE_MS if seat in self.had_turn else BASE_FIRST_MS) + EXTRA_MS
        if self.over or not self.in_round or self.fresh_pending or not self.active[seat]:
            self.turn_actor = None
        else:
            self.turn_actor = self.ctx.seats[seat]

    def _end_turn(self, seat: int) -> None:
        self.had_turn.add(seat)
        self.last_discarder = seat
        if not self.over:
            self._start_turn(self.next_active(seat), self.ctx.ts_ms)

    # -- moves -------------------------------------------------------------------------------
    def apply_Drew(self, event: Event) -> None:
        # turn_actor is None after the end, before the deal and after a unanimous Fresh:
        # then the actor field is only read by _enter_move, which reports such a move
        actor = self.turn_actor
        if actor is not None and event["actor"] == actor:
            # The player in turn of a round in progress, no unanimous Fresh pending: every
            # check of _enter_move passes but CL-TIMER, made here (the hot path, inlined).
            seat = self.current
            if self.ctx.ts_ms > self.turn_deadline:
                self._late(seat)
            self.moved = True
        else:
            entered = self._enter_move(event)
            if entered is None:
                return
            seat = entered
        p = event["payload"]
        codes = p["cards"]
        try:
            (code,) = codes  # one card (every draw the rules allow) ...
            card: int | None = CARD_CODES[code]
        except (ValueError, TypeError, KeyError):  # ... else the general code decides
            card = None
        if card is not None:
            # the general code below without its list handling, the same findings and
            # state (a one-key object reads as the list of its key there too)
            if self.first_move:
                self.ctx.violation("CL-FIRST", "the first player may not draw on his first turn")
            elif self.drawn:
                self.ctx.violation("CL-DRAW", f"{self.player(seat)} drew twice in one turn")
            hand = self.hands[seat]
            if p["source"] == "stock":
                stock = self.stock
                if not stock or stock[-1] != card:
                    self.take_stock(card)  # raises the C-HOLD halt
                stock.pop()
                self.drawn_stock = card
            else:
                pile = self.pile
                if not pile or pile[-1] != card:
                    self.take_pile([card])  # raises the C-HOLD halt
                pile.pop()
                self.before_take[card] = hand[card]
                taken = self.taken  # .get: a Counter's miss is a Python-level __missing__ call
                taken[card] = taken.get(card, 0) + 1
            hand[card] += 1
            self.drawn = True
            return
        cards = parse_cards(codes)
        if self.first_move:
            self.ctx.violation("CL-FIRST", "the first player may not draw on his first turn")
        elif self.drawn:
            self.ctx.violation("CL-DRAW", f"{self.player(seat)} drew twice in one turn")
        if len(cards) != 1:
            self.ctx.violation("CL-DRAW", f"a draw takes one card, this one took {len(cards)}")
        hand = self.hands[seat]
        if p["source"] == "stock":
            for c in cards:
                self.take_stock(c)
            self.drawn_stock = cards[-1]
        else:
            self.take_pile(cards)
            for c in cards:
                self.before_take[c] = hand[c]
                self.taken[c] += 1
        for c in cards:
            hand[c] += 1
        self.drawn = True

    def _check_discard(self, seat: int, card: int) -> None:
        if card == JOKER:
            self.ctx.violation("CL-NODISCARD-JOKER", "a joker may never be discarded")
        # .get, not [ ]: a Counter's miss is a Python-level __missing__ call
        if self.taken.get(card, 0) and self.before_take.get(card, 0) == 0:
            self.ctx.violation(
                "CL-NODISCARD-TAKEN",
                f"{format_card(card)} was taken from the discard pile this turn",
            )

    def apply_Discarded(self, event: Event) -> None:
        actor = self.turn_actor  # as in apply_Drew
        if actor is not None and event["actor"] == actor:
            # The player in turn (as in apply_Drew): _enter_move's CL-TIMER check, the
            # discard, and _end_turn / _start_turn / next_active, inlined (the hot path).
            seat = self.current
            ctx = self.ctx
            ts_ms = ctx.ts_ms
            if ts_ms > self.turn_deadline:
                self._late(seat)
            self.moved = True
            try:
                card = CARD_CODES[event["payload"]["card"]]
            except (KeyError, TypeError):  # not a card code: parse_card raises the error
                card = parse_card(event["payload"]["card"])
            if not self.drawn and not self.first_move:
                ctx.violation("CL-DRAW", f"{self.player(seat)} discarded without drawing")
            hand = self.hands[seat]
            if hand[card] <= 0:
                self.take_from_hand(seat, card)  # raises the C-HOLD halt
            hand[card] -= 1
            if card == JOKER or self.taken:  # else neither discard restriction can apply
                self._check_discard(seat, card)
            self.pile.append(card)
            # _end_turn(seat), with the game known not over
            self.had_turn.add(seat)
            self.last_discarder = seat
            self._start_turn(self.next_active(seat), ts_ms)
            return
        entered = self._enter_move(event)
        if entered is None:
            return
        seat = entered
        card = parse_card(event["payload"]["card"])
        if seat != self.current:  # the second discard of a finished turn (CL-DISCARD above)
            self.take_from_hand(seat, card)
            if card == JOKER:
                self.ctx.violation("CL-NODISCARD-JOKER", "a joker may never be discarded")
            self.pile.append(card)
            return
        if not self.drawn and not self.first_move:
            self.ctx.violation("CL-DRAW", f"{self.player(seat)} discarded without drawing")
        self.take_from_hand(seat, card)
        if card == JOKER or self.taken:  # else neither discard restriction can apply
            self._check_discard(seat, card)
        self.pile.append(card)
        self._end_turn(seat)

    def apply_DeclaredRummy(self, event: Event) -> None:
        seat = self._enter_move(event)
        if seat is None:
            return
        p = event["payload"]
        if not self.drawn and not self.first_move:
            self.ctx.violation("CL-RUMMY", "Rummy declared before drawing")
        discard = parse_card(p["discard"])
        hand = self.hands[seat]
        # every card the declaration uses, the discard first: the first card in this
        # order that the hand lacks is the one reported
        all_cards = [discard]
        melds: list[Meld] = []
        rules = self.meld_rules
        known = _KNOWN_MELDS if rules is MELD_RULES else None
        for spec in p["melds"]:
            named = spec.get("as")
            try:
                if named or known is None:
                    cards = parse_cards(spec["cards"])
                    meld = validate_meld(spec["kind"], cards, parse_as(named) if named else None,
                                         rules)
                else:  # the common case: each distinct meld is parsed and checked once
                    meld = known.meld(spec["kind"], spec["cards"])
            except MeldError as err:  # its codes parsed: the broken meld still uses them
                self.ctx.violation(MELD_RULE[err.code], err.message)
                cards = parse_cards(spec["cards"])
                meld = Meld(spec["kind"], cards, list(cards))
            all_cards += meld.cards
            melds.append(meld)
        rest = hand[:]  # what the melds and the discard leave of the hand
        for c in all_cards:
            rest[c] -= 1
        if min(rest) < 0:  # C-HOLD: a card used more often than the hand holds it
            for c in all_cards:
                if rest[c] < 0:
                    raise self.ctx.halt(
                        "C-HOLD", f"the declaration uses {format_card(c)} x{hand[c] - rest[c]}; "
                        f"the hand holds {hand[c]}",
                    )
        self._check_discard(seat, discard)
        n_used = len(all_cards)
        if any(rest):
            left = [c for c, k in enumerate(rest) for _ in range(k)]
            self.ctx.violation("CL-RUMMY", "the declared melds leave " + " ".join(format_cards(left)))
        elif n_used - 1 != 14:
            self.ctx.violation("CL-RUMMY", f"the melds cover {n_used - 1} cards, not 14")
        natural_only = not self.config["long_run_allows_joker"]
        for m in melds:
            if m.kind == "run" and len(m.cards) >= 4 and not (natural_only and JOKER in m.cards):
                break
        else:
            what = "joker-free run" if natural_only else "run"
            self.ctx.violation("CL-LONGRUN", f"no {what} of 4 or more cards in the declaration")
        hand[:] = rest
        self.pile.append(discard)
        self.declared = melds
        for m in melds:
            m.owner = seat
        self._win(seat, "rummy")
        self.had_turn.add(seat)
        self.current = -1

    # -- system decisions ---------------------------------------------------------------------
    def expected_autoplay(self, seat: int) -> tuple[int | None, int | None]:
        """CL-AUTOPLAY: ``(drew, discarded)`` the system must play for ``seat`` now."""
        hand = list(self.hands[seat])
        if self.first_move:
            return None, joker_free_max(hand)
        if self.drawn:
            if self.drawn_stock is not None and self.drawn_stock != JOKER:
                return None, self.drawn_stock
            return None, joker_free_max(hand, self.taken)
        if not self.stock:
            if len(self.pile) > 1:
                return None, None  # C-RESTOCK is due first: the rule's draw is its stock top
            # no card to draw, none to restock from (the pile is its top at most): a turn
            # with no draw, as the first player's first (EVENTS.md: AutoPlayed.drew is
            # null "on a turn with no draw"); the rule's other branch discards
            return None, joker_free_max(hand)
        top = self.stock[-1]
        if top != JOKER:
            return top, top
        hand[top] += 1
        return top, joker_free_max(hand)

    def apply_AutoPlayed(self, event: Event) -> None:
        p = event["payload"]
        if self.over or not self.in_round:
            self.ctx.violation("CL-AUTOPLAY", "auto-play outside a round in progress")
            return
        seat = self.seat(p["player"])
        if seat is None or not self.active[seat]:
            raise self.ctx.halt("C-HOLD", f"auto-play for {p['player']}, who is not in the game")
        if self.fresh_pending:
            self._fresh_ignored("an auto-play")
        deadline = self._deadline(seat)
        if seat != self.current:  # one finding: his clocks never ran, so not "too early" too
            self.ctx.violation(
                "CL-AUTOPLAY", f"auto-played {p['player']}, but {self.player(self.current)} was in turn"
            )
            self._start_turn(seat, self.ctx.ts_ms)
        elif self.ctx.ts_ms < deadline:
            self.ctx.violation(
                "CL-AUTOPLAY",
                f"auto-played {(deadline - self.ctx.ts_ms) / 1000:.3f} s before the clocks ran out "
                f"({self._clocks(seat)})",
            )
        strike = self.strikes[seat] + 1
        if strike > MAX_STRIKES:
            self.ctx.violation(
                "CL-STRIKES", f"timeout {strike} of {p['player']} must remove him, not auto-play"
            )
        if p["strike"] != strike:
            self.ctx.discrepancy(f"auto-play strike: claimed {p['strike']}, recomputed {strike}")
        want_drew, want_discard = self.expected_autoplay(seat)
        drew = parse_card(p["drew"]) if p["drew"] is not None else None
        discarded = parse_card(p["discarded"])
        wrong = ""
        if drew != want_drew or discarded != want_discard:
            show = lambda c: format_card(c) if c is not None else "nothing"  # noqa: E731
            wrong = (f"auto-play drew {show(drew)} and discarded {show(discarded)}; "
                     f"the rule gives draw {show(want_drew)}, discard {show(want_discard)}")
            if (drew is None) != (want_drew is None) or want_discard is None:
                # a draw missing or extra, or no auto-play due at all: wrong whatever
                # the cards, so reported before their C-HOLD check
                self.ctx.violation("CL-AUTOPLAY", wrong)
                wrong = ""
        # C-HOLD before the cards are judged: a card that is not where the event says
        # is the one finding of it (as for a Drew or a Discarded), not also CL-AUTOPLAY
        if drew is not None:
            self.take_stock(drew)
            self.hands[seat][drew] += 1
        self.take_from_hand(seat, discarded)
        if wrong:
            self.ctx.violation("CL-AUTOPLAY", wrong)
        self.pile.append(discarded)
        self.strikes[seat] = strike
        self._end_turn(seat)

    def apply_PlayerRemoved(self, event: Event) -> None:
        p = event["payload"]
        seat = self.seat(p["player"])
        if seat is None:  # a claim about nobody at the table: C-CLAIM, as in every variant
            self.ctx.discrepancy(f"removal of {p['player']}, who is not seated")
            return
        reason = p["reason"]
        if not self.active[seat]:  # a claim about someone already out: nothing to apply
            if reason == "left" and seat in self.left:
                return  # the claim that goes with his PlayerLeft (CL-LEAVE)
            was = "left" if seat in self.left else "was removed already"
            self.ctx.discrepancy(f"{p['player']} removed for {reason!r}, but he {was}")
            return
        if reason == "left":
            self.ctx.violation("CL-LEAVE", f"{p['player']} removed for leaving, but did not leave")
            self._remove(seat, "left")
            return
        if reason == "bust":
            self.ctx.discrepancy(f"{p['player']} removed for 'bust', which classic does not have")
        elif self.over or not self.in_round:
            self.ctx.violation("CL-STRIKES", f"{p['player']} removed for strikes outside play")
        else:
            why = []
            # CL-STRIKES: the fourth timeout removes; past it (a fourth auto-played, which
            # was the breach) a removal is the rule applied late, not a second breach
            if self.strikes[seat] < MAX_STRIKES:
                why.append(f"he had {self.strikes[seat]} auto-plays, not {MAX_STRIKES}")
            if seat != self.current:
                why.append("it was not his turn")
            elif self.ctx.ts_ms < self._deadline(seat):
                why.append("his clocks had not run out")
            if why:
                self.ctx.violation("CL-STRIKES", f"{p['player']} removed for strikes, but " + "; ".join(why))
        # 'bust' is no classic removal: shown as "removed", as Liverpool and Michigan show theirs
        self._remove(seat, "strikes" if reason == "strikes" else "removed")

    def apply_PlayerLeft(self, event: Event) -> None:
        seat = self.seat(event["actor"])
        if seat is None:
            self.ctx.violation("C-TURN", f"{event['actor']} left a game he is not seated at")
            return
        if not self.active[seat]:  # already out (removed, or left before): leaving is a no-op
            return
        self.left.add(seat)
        self._remove(seat, "left")

    def _remove(self, seat: int, reason: str) -> None:
        """CL-STRIKES / CL-LEAVE: out at once, stake forfeited, cards leave play. ``reason``
        (``left``, or the removal's own reason) is what the snapshot's ``out`` shows."""
        was_current = seat == self.current
        self.active[seat] = False
        self.removed[seat] = reason
        if was_current:
            self.turn_actor = None  # the next turn, if any, opens below
        self.hands[seat] = [0] * len(self.hands[seat])
        self.fresh_votes.discard(seat)
        alive = self.active_seats()
        if self.over:
            return
        if len(alive) == 1:
            self._win(alive[0], "last player standing")
            self.current = -1
            return
        if self.in_round and was_current:
            self._start_turn(self.next_active(seat), self.ctx.ts_ms)
        if seat == self.first_player and not self.in_round:
            self.first_player = self.next_active(seat)
        if self.in_round:
            self._fresh_if_unanimous()

    def _win(self, seat: int, how: str) -> None:
        """CL-RUMMY / CL-STRIKES: the winner takes the pot less the rake."""
        self.over = True
        self.turn_actor = None
        self.winner = seat
        self.win_how = how
        rake = self.pot * self.config["rake_bps"] // 10_000
        self.ctx.transfer("pot", "house", rake, "rake")
        self.ctx.transfer("pot", self.player(seat), self.pot - rake, "pot")
        self.pot = 0

    # -- questions ------------------------------------------------------------------------
    def is_over(self) -> bool:
        return self.over

    def winners(self) -> list[str]:
        return [self.player(self.winner)] if self.winner is not None else []

    def scores(self) -> dict[str, int]:
        return {}

    def round_result(self, round_no: int) -> tuple[list[str], dict[str, int]] | None:
        if not self.over or round_no != max(self.round_no, 1):
            return None
        return self.winners(), {}

    def deal_due(self) -> dict[str, Any] | None:
        if self.over:
            return None
        if not self.in_round or self.fresh_pending:
            return {"round": max(self.round_no, 1), "dealer": self.dealer,
                    "redeal": self.unanimous_fresh, "cards": sorted(self.expected_deck().elements())}
        return None

    def restock_due(self) -> list[int] | None:
        if (self.in_round and not self.over and not self.stock and not self.drawn
                and not self.first_move and len(self.pile) > 1):
            return self.pile[:-1]
        return None

    def rounds_finished(self) -> int:
        return 1 if self.over and self.in_round else 0

    def to_act(self) -> list[str]:
        # After a unanimous Fresh only the redeal may come (CL-FRESH): nobody may move.
        if self.over or not self.in_round or self.current < 0 or self.fresh_pending:
            return []
        return [self.player(self.current)]

    def clock_deadline(self) -> int | None:
        """When the player in turn times out (ms since the epoch), for the simulator."""
        if self.over or self.current < 0:
            return None
        return self._deadline(self.current)

    def legal_moves(self, player: str) -> list[tuple[str, dict[str, Any]]]:
        moves: list[tuple[str, dict[str, Any]]] = []
        seat = self.seat(player)
        if seat is None or not self.active[seat] or self.over or not self.in_round \
                or self.fresh_pending:  # only the redeal may come (CL-FRESH)
            return moves
        if seat not in self.fresh_votes:
            moves.append(("FreshPressed", {}))
        if seat != self.current:
            return moves
        hand = self.hands[seat]
        if not self.drawn and not self.first_move:
            if self.stock:
                moves.append(("Drew", {"source": "stock", "cards": [format_card(self.stock[-1])]}))
            if self.pile:
                moves.append(("Drew", {"source": "discard", "cards": [format_card(self.pile[-1])]}))
            return moves
        for c in range(52):
            if hand[c] > 0 and not (self.taken[c] and self.before_take[c] == 0):
                moves.append(("Discarded", {"card": format_card(c)}))
        declaration = self.find_declaration(seat)
        if declaration is not None:
            moves.append(("DeclaredRummy", declaration))
        return moves

    def find_declaration(self, seat: int) -> dict[str, Any] | None:
        """A valid Rummy declaration for ``seat`` now, if the hand has one (by
        :attr:`declaration_finder` when one is set)."""
        if self.declaration_finder is not None:
            return self.declaration_finder(seat)
        hand = self.hands[seat]
        natural_only = not self.config["long_run_allows_joker"]
        for d in range(51, -1, -1):
            if hand[d] == 0 or (self.taken[d] and self.before_take[d] == 0):
                continue
            hand[d] -= 1
            try:
                parts = find_partition(hand, self.meld_rules, need_long_run=4,
                                       long_run_allows_wild=not natural_only)
            finally:
                hand[d] += 1
            if parts is not None:
                return {
                    "melds": [{"kind": k, "cards": format_cards(cs)} for k, cs in parts],
                    "discard": format_card(d),
                }
        return None

    def snapshot(self, viewer: str | None = None) -> dict[str, Any]:
        out = self.table_snapshot(viewer)
        if self.fresh_pending:  # the round awaits its redeal: nobody is in turn (CL-FRESH)
            out["in_turn"] = None
        out.update(
            {
                "pots": {"pot": self.pot},
                "strikes": {self.player(s): k for s, k in enumerate(self.strikes) if k},
                "out": {self.player(s): why for s, why in sorted(self.removed.items())},
                "fresh_votes": sorted(self.player(s) for s in self.fresh_votes),
                "redeals": self.unanimous_fresh,
                "over": self.over,
                "winners": self.winners(),
                "melds": [{**m.to_dict(), "owner": self.player(m.owner) if m.owner >= 0 else None}
                          for m in self.declared],
            }
        )
        return out


def check_next_games(records: list[tuple[str, int, list[str], list[str]]]) -> list[tuple[str, str]]:
    """CL-NEXT over one table's classic games in time order.

    ``records``: ``(game_id, dealer_seat, seats, winners)`` per game. The next game at
    the table starts with the previous winner as first player (left of the dealer) when
    he is seated in it. Returns ``(game_id, message)`` for each game that breaks it.
    """
    problems = []
    for prev, nxt in itertools.pairwise(records):
        winners = prev[3]
        game_id, dealer, seats, _ = nxt
        if len(winners) != 1 or winners[0] not in seats:
            continue
        first = seats[(dealer + 1) % len(seats)]
        if first != winners[0]:
            problems.append(
                (game_id, f"the previous game's winner {winners[0]} should start; {first} does")
            )
    return problems


__all__ = ["ClassicRummy", "check_next_games"]
