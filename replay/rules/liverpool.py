"""Liverpool rummy — RULES.md §3 (variant ``liverpool``).

Six rounds, six contracts, every 2 wild, a buy window after each discard and the
out-of-turn "Rummy" call. Every rule ID of §3 is checked here (grep the ID); the meld
shapes come from :mod:`.melds` through :data:`MELD_RULE`.

Who may act, moment by moment (C-TURN, LV-BUY, LV-RUMMY). A discard (or the card
turned up at the deal) is *live* on top of the pile until someone takes it:

1. Until the next player draws, he may take it as his draw (LV-DRAW), and every other
   player who has laid down this round, except its discarder, may call "Rummy" on it
   if it could be laid off on a table meld (LV-RUMMY). A call takes the card, lays it
   off and puts one of the caller's own cards on the pile, which is then the live
   discard (the caller is its discarder); the next player still has his draw to make.
2. Once he has drawn from the stock, every other player who has not laid down, is not
   its discarder and has buys left may buy it (LV-BUY), until he discards. The first
   ``Bought`` in the log takes it with the top stock card as penalty; the window then
   closes. Simultaneous requests are the platform's to settle (by seat order from the
   player in turn); a replay sees only the winning request, so any entitled buyer's
   ``Bought`` is clean. :meth:`Liverpool.to_act` lists the player in turn first, then
   the entitled callers or buyers in that seat order.

A ``Bought`` or ``RummyCalled`` outside its window or by someone not entitled is LV-BUY /
LV-RUMMY (plus a C-HOLD halt when the card is no longer on top of the pile). A turn
move (draw, lay-down, lay-off, discard) by anyone but the player in turn is C-TURN,
and the turn passes to him; if the player in turn had drawn, the next player's move
is LV-DISCARD (that turn ended without a discard).

Decisions where RULES.md §3 is silent:

- A 2 is *never* natural, even where it stands for itself (``2H`` in ``2H 3H 4H 5H``
  counts as a wild, so that run has three naturals). One reading for every meld keeps
  the natural-card minimums of LV-WILD checkable without guessing intent.
- A wild at the low end of a run follows C-WILD: without ``as`` it extends the run
  upward (the simulator always names such wilds).
- The next player may not call Rummy on the discard that is his to draw: he may take
  it and lay it off in his turn (LV-LAYOFF), which leaves him the same cards. Since
  buying opens only after his draw, "before the next player draws or a buy happens"
  reduces to "before the next player draws".
- The card turned up at the deal is live like a discard with no discarder: the first
  player may take it, and anyone may buy it once he draws from the stock.
- ``max_buys``: ``-1`` (the default) means unlimited (the seed's "any number"); ``n >= 0``
  caps each player's buys per round (``0`` turns buying off). An integer sentinel rather
  than ``null`` because GameCreated.rules values are ints, bools and strings (EVENTS.md). A buy needs a penalty card, so with an empty stock nobody
  is entitled to buy (the platform replenishes the stock first, C-RESTOCK, which it may
  do whenever the stock is empty and the pile holds more than its top card).
- Decks: 2 x 52 up to five players dealt in, 3 x 52 beyond, counted at each deal.
- Laying down twice in a round, or a contract of the wrong shape, is LV-CONTRACT; a
  lay-off in the turn of laying down is LV-LAYOFF; going out without a discard outside
  round 6 (laying down or off the last card) is LV-DISCARD; every turn move after a
  player has gone out and before the next deal is LV-OUT and is not applied (the round
  is settled), as is a new deal before anyone has gone out.
- Chips: RULES.md §3 says nothing about chips. Each player stakes ``stake`` into the
  ``pot`` at GameCreated; after round 6 the winner(s) (lowest total, LV-SCORE) take the
  pot, split equally with the remainder one chip each to the tied winners in seat
  order (R5-GAME's rule for ties). No rake.
- A player who leaves (``PlayerLeft``) is out at once: his hand leaves play, his melds
  stay on the table for lay-offs, his stake stays in the pot, he scores nothing more and
  cannot win. If it was his turn, the next player's turn starts with the same live
  discard. With one player left the game ends and he takes the pot. ``PlayerRemoved``
  is a claim: reason ``left`` confirms a ``PlayerLeft``; any other removal (Liverpool
  has no strikes and no bust) is a C-CLAIM discrepancy and is applied.
- A round's scores cover the players still in the game when it ends; the game's
  totals keep what departed players had scored.
- Lay-offs (LaidOff or RummyCalled) on a run: a logged ``end`` is where the platform put
  the card, so the card must fit at that end. Without ``end`` a natural goes where it
  fits (high when both ends fit: an ace on ``2..K``) and a wild is read as C-WILD reads
  an unnamed wild at an end: high, unless the run's high end is the ace (then low) —
  the same reading as r500.
- A meld laid down broken (a C-RUN / C-SET / C-WILD / LV-CONTRACT / LV-WILD finding)
  stays on the table as logged, but nothing fits it: a lay-off or Rummy call on it is
  LV-LAYOFF / LV-RUMMY (the card is put at the named end, or the high end, as logged).
- A redeal number, or a dealer other than the one left of the last, is C-DEAL (the
  platform dealt so; Liverpool's section gives no rule ID of its own for the deal).
  ``RoundStarted.round`` other than the round by the rules is a number the platform
  claims, so it is a C-CLAIM discrepancy (RULES.md §0/§5), as in classic, r500 and
  Michigan. The replay keeps its own round count (the contract and deal size follow
  it) and deals from the platform's dealer. A deal while
  a round is live is one LV-OUT finding, whether logged as the same round dealt again
  (same dealer) or as the next round (next dealer; the abandoned round is not scored).
- Moves (turn moves, buys, Rummy calls) before the first deal or after the game ended
  are C-TURN: nobody is entitled to act. Between a going-out and the next deal, turn
  moves are LV-OUT and buys / calls LV-BUY / LV-RUMMY (no window is open); none is
  applied. A ``PlayerLeft`` by a player already out changes nothing and is not a
  finding (EVENTS.md: it may come at any moment).
- ``GameCreated.rules``: a known key set to ``null`` is not set (the default applies),
  as events/models.py defines; not a LOG-RULES finding.

- A deal after the game ended (six rounds played, or one player left) is C-DEAL, the
  rule of dealing (§3 puts the six rounds in its header, under no rule ID), and is not
  applied.

Gap in RULES.md (reported, not invented around): in the all-set rounds (1 and 4) with
distinct-suit sets, a round can reach a state where nobody can ever go out (everyone
has laid down, every wild is on the table, and no card held fits any set); §3 gives no
way to end it. The replay needs none and invents none: such a round stays in progress
(draws, discards and restocks replay as usual; :meth:`Liverpool.round_blocked` says
so), a ``RoundEnded`` claim for it is a C-CLAIM discrepancy ("by the rules it has not"
ended), a new deal is LV-OUT like any deal while a round is live (the round is not
scored), and players leaving end the game as usual (the simulator abandons such a game
that way). A log cut inside it is a game in progress: no winners, stakes in the pot.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ...events.cards import (
    NCARDS,
    format_card,
    format_cards,
    make_card,
    parse_card,
    parse_cards,
    rank_of,
    suit_of,
)
from ..variant import Event, GameContext
from .melds import (
    ACE,
    Meld,
    MeldError,
    MeldRules,
    apply_layoff,
    ladder_card,
    layoff_position,
    parse_as,
    validate_meld,
)
from .table import CardTable

ROUNDS = 6
#: round -> (sets, runs) of its contract (LV-CONTRACT)
CONTRACTS: dict[int, tuple[int, int]] = {1: (2, 0), 2: (1, 1), 3: (0, 2), 4: (3, 0), 5: (2, 1), 6: (1, 2)}
#: the four 2s (LV-WILD)
WILDS: frozenset[int] = frozenset(range(4))
#: LV-SCORE penalty points per card: A and 2 = 25, 3-9 = 5, T-K = 10
POINTS: tuple[int, ...] = tuple(
    25 if c < 52 and rank_of(c) in (0, ACE) else 5 if c < 52 and rank_of(c) <= 7 else 10 if c < 52 else 0
    for c in range(NCARDS)
)

#: the sorted cards of two and of three decks (C-DEAL)
_DECKS: dict[int, list[int]] = {k: sorted(c for _ in range(k) for c in range(52)) for k in (2, 3)}
_EMPTY = [0] * NCARDS

#: meld error code -> Liverpool rule ID
MELD_RULE = {
    "run_short": "LV-CONTRACT",
    "run_naturals": "LV-WILD",
    "run_suit": "C-RUN",
    "run_gap": "C-RUN",
    "run_wrap": "C-RUN",
    "set_size": "LV-CONTRACT",
    "set_naturals": "LV-WILD",
    "set_rank": "C-SET",
    "set_suits": "LV-CONTRACT",
    "wild_as": "C-WILD",
    "kind": "LV-CONTRACT",
}


def deal_size(round_no: int) -> int:
    """Cards dealt to each player: 10 in rounds 1-4, 12 in rounds 5-6."""
    return 12 if round_no >= 5 else 10


def contract_text(round_no: int) -> str:
    sets, runs = CONTRACTS.get(round_no, (0, 0))
    parts = []
    if sets:
        parts.append(f"{sets} set{'s' if sets > 1 else ''}")
    if runs:
        parts.append(f"{runs} run{'s' if runs > 1 else ''}")
    return " + ".join(parts)


def hand_points(hand: Sequence[int]) -> int:
    """LV-SCORE: the penalty points of a hand given as 53 counts."""
    return sum(POINTS[c] * k for c, k in enumerate(hand) if k)


def split_pot(pot: int, winners: Sequence[int]) -> list[tuple[int, int]]:
    """``(seat, chips)`` per winner: equal shares, the remainder one chip each in seat order."""
    if not winners:
        return []
    ordered = sorted(winners)
    share, rest = divmod(pot, len(ordered))
    return [(s, share + (1 if i < rest else 0)) for i, s in enumerate(ordered)]


def meld_rules(set_distinct_suits: bool = True) -> MeldRules:
    """LV-CONTRACT / LV-WILD as shared meld rules."""
    return MeldRules(
        wild=WILDS, run_min=4, set_min=3, set_max=None, set_distinct_suits=set_distinct_suits,
        set_suits_naturals_only=True, run_min_naturals=3, set_min_naturals=2,
    )


def layoff_ends(meld: Meld, card: int, rules: MeldRules) -> list[str | None]:
    """Where ``card`` could be laid off on ``meld``: ``[None]`` for a set, the run ends
    (``"low"``/``"high"``) for a run; empty if nowhere."""
    if meld.kind == "set":
        return [None] if layoff_position(meld, card, None, rules) is not None else []
    return [end for end in ("low", "high") if layoff_position(meld, card, end, rules) is not None]


class Liverpool(CardTable):
    name: ClassVar[str] = "liverpool"
    event_types: ClassVar[frozenset[str]] = frozenset(
        {"RoundStarted", "Drew", "Bought", "LaidDown", "LaidOff", "RummyCalled", "Discarded",
         "StockReplenished", "PlayerLeft", "PlayerRemoved"}
    )
    config_defaults: ClassVar[Mapping[str, Any]] = {
        "set_distinct_suits": True,
        "max_buys": -1,
    }

    def __init__(self, ctx: GameContext | None = None, rules: Mapping[str, Any] | None = None) -> None:
        super().__init__(ctx, rules)
        if ctx is None:  # a bare instance, for Variant.__reduce__
            return
        if not 2 <= self.n <= 8:
            ctx.integrity("LOG-GAME", f"liverpool is for 2-8 players, this game seats {self.n}")
        if self.config["max_buys"] < -1:
            ctx.integrity("LOG-RULES", f"rules.max_buys must be -1 (unlimited) or >= 0, got {self.config['max_buys']}")
            self.config["max_buys"] = -1
        #: LV-BUY: buys per player per round, None = unlimited
        self.max_buys: int | None = None if self.config["max_buys"] == -1 else self.config["max_buys"]
        self.meld_rules = meld_rules(self.config["set_distinct_suits"])
        self.pot = 0
        for pid in ctx.seats:  # decided: everyone stakes at GameCreated; the winners take the pot
            self.pot += ctx.stake
            ctx.transfer(pid, "pot", ctx.stake, "stake")
        self.totals = [0] * self.n
        self.results: dict[int, tuple[list[str], dict[str, int]]] = {}
        self.rounds_done = 0
        self.over = False
        self.winner_seats: list[int] = []
        self.left: set[int] = set()
        self.melds: list[Meld] = []
        self.invalid: set[int] = set()  # table melds laid down broken: nothing fits them
        self.laid = [False] * self.n
        self.buys = [0] * self.n
        self.live = False  # the pile's top card is a discard open to take / buy / call
        self.discarder: int | None = None  # who discarded the live card (None: the up-card)
        self.out_seat: int | None = None
        self._start_turn(-1)

    def _start_turn(self, seat: int) -> None:
        self.current = seat
        self.drawn = False
        self.drew_stock = False
        self.laid_now = False  # laid down in this turn (no lay-offs until a later turn)
        self.moved = False

    def expected_deck(self) -> Counter[int]:
        return Counter(_DECKS[self._decks()])

    def _decks(self) -> int:
        """2 x 52 for up to five players dealt in, 3 x 52 beyond."""
        return 2 if len(self.active_seats()) <= 5 else 3

    def check_deck(self, deck: list[int]) -> None:
        """C-DEAL, with a sorted comparison first (the replay's hot path); the base class
        words the finding when the deck differs."""
        if sorted(deck) != _DECKS[self._decks()]:
            super().check_deck(deck)

    def _deal(self, deck: list[int], order: list[int], size: int) -> None:
        """Deal one card at a time around ``order`` (seat k of the circuit gets the deck's
        cards k, k + m, k + 2m, ...), turn one up; the rest is the stock."""
        m = len(order)
        dealt = m * size
        if len(deck) < dealt + 1:
            raise self.ctx.halt("C-DEAL", f"the deck has {len(deck)} cards; the deal needs {dealt + 1}")
        for hand in self.hands:
            hand[:] = _EMPTY
        for k, s in enumerate(order):
            hand = self.hands[s]
            for c in deck[k:dealt:m]:
                hand[c] += 1
        self.pile = [deck[dealt]]
        self.stock = deck[:dealt:-1]

    # -- rounds ----------------------------------------------------------------------------
    def expected_dealer(self) -> int:
        if self.round_no == 0:
            return self.ctx.dealer
        return self.next_active(self.dealer)

    def apply_RoundStarted(self, event: Event) -> None:
        p = event["payload"]
        if self.over:
            self.ctx.violation("C-DEAL", f"a deal after the game ended ({ROUNDS} rounds or one player left)")
            return
        # A deal while a round is live is one breach (LV-OUT), whether the platform logs it
        # as the same round dealt again (same dealer) or as the next round (next dealer).
        again = self.in_round and not (p["round"] == self.round_no + 1 and self.round_no < ROUNDS)
        if self.in_round:
            self.ctx.violation("LV-OUT", f"round {self.round_no} was redealt before anyone went out")
        expected_round = self.round_no if again else self.round_no + 1
        if p["round"] != expected_round:
            self.ctx.discrepancy(
                f"RoundStarted claims round {p['round']}; by the rules it is round {expected_round}"
            )
        if p["redeal"] != 0 and not again:
            self.ctx.violation("C-DEAL", f"redeal {p['redeal']}: Liverpool has no redeals")
        want = self.dealer if again else self.expected_dealer()
        dealer = p["dealer"]
        if dealer != want:
            self.ctx.violation("C-DEAL", f"dealer seat {dealer}, but seat {want} deals this round")
            if not 0 <= dealer < self.n:  # a seat that left still deals: the hands follow it
                dealer = want
        self.dealer = dealer  # follow the platform: the next dealer is left of this one
        self.round_no = expected_round
        deck = parse_cards(p["deck"])
        self.check_deck(deck)
        order = [self.next_active(dealer)]
        while len(order) < len(self.active_seats()):
            order.append(self.next_active(order[-1]))
        self._deal(deck, order, deal_size(self.round_no))
        self.in_round = True
        self.melds = []
        self.invalid = set()
        self.laid = [False] * self.n
        self.buys = [0] * self.n
        self.out_seat = None
        self.live = True  # the up-card: the first player may take it, others may buy it
        self.discarder = None
        self._start_turn(order[0])

    def _end_round(self, seat: int) -> None:
        """LV-OUT: ``seat`` has no cards; LV-SCORE: the others score what they hold."""
        self.out_seat = seat
        scores = {
            self.player(s): 0 if s == seat else hand_points(self.hands[s]) for s in self.active_seats()
        }
        for s in self.active_seats():
            self.totals[s] += scores[self.player(s)]
        self.results[self.round_no] = ([self.player(seat)], scores)
        self.rounds_done += 1
        self.in_round = False
        self.live = False
        self._start_turn(-1)
        if self.round_no >= ROUNDS:
            alive = self.active_seats()
            best = min(self.totals[s] for s in alive)
            self._finish([s for s in alive if self.totals[s] == best])

    def _finish(self, winners: list[int]) -> None:
        """LV-SCORE: the lowest total wins, ties share; the winners take the pot."""
        self.over = True
        self.in_round = False
        self._start_turn(-1)
        self.winner_seats = sorted(winners)
        for s, chips in split_pot(self.pot, self.winner_seats):
            self.ctx.transfer("pot", self.player(s), chips, "pot")

    def _go_out(self, seat: int, with_discard: bool) -> None:
        if not with_discard and self.round_no != ROUNDS:
            self.ctx.violation(
                "LV-DISCARD",
                f"{self.player(seat)} went out without a discard; only round {ROUNDS} allows that",
            )
        self._end_round(seat)

    # -- turn entry --------------------------------------------------------------------------
    def _enter(self, event: Event) -> int | None:
        """Checks shared by the turn moves (draw, lay down, lay off, discard); returns the
        acting seat, or None when the move cannot be applied."""
        current = self.current
        if current >= 0 and event["actor"] == self.ctx.seats[current]:
            return current  # the player in turn (in a round, active): the hot path
        seat = self.actor_seat(event)
        if seat is None:
            return None
        if self.over:
            self.ctx.violation("C-TURN", f"{event['type']} after the game ended")
            return None
        if not self.in_round:
            if self.round_no == 0:  # nobody is entitled to act before the first deal
                self.ctx.violation("C-TURN", f"{event['type']} before the cards were dealt")
            else:
                self.ctx.violation("LV-OUT", self._between_rounds(event))
            return None
        if seat != self.current:
            cur = self.player(self.current)
            if event["type"] == "Discarded" and seat == self.discarder and self.live and not self.moved:
                self.ctx.violation("LV-DISCARD", f"{self.player(seat)} discarded twice in one turn")
                return seat
            if self.drawn and seat == self.next_active(self.current):
                self.ctx.violation("LV-DISCARD", f"{cur}'s turn ended without a discard")
            else:
                self.ctx.violation("C-TURN", f"{self.player(seat)} moved out of turn ({cur} was in turn)")
            self._start_turn(seat)
        return seat

    def _between_rounds(self, event: Event) -> str:
        if self.out_seat is not None:
            return (f"{event['type']} after {self.player(self.out_seat)} went out: "
                    f"round {self.round_no} is over")
        return f"{event['type']} before round {self.round_no + 1} was dealt"

    def _window_move_refused(self, event: Event, rule: str, what: str) -> bool:
        """A buy or a Rummy call when no round is in progress: C-TURN after the game or
        before the first deal (nobody may act), else ``rule`` (no window between rounds).
        True when the move is not applied."""
        if self.over or self.round_no == 0:
            when = "after the game ended" if self.over else "before the cards were dealt"
            self.ctx.violation("C-TURN", f"{event['type']} {when}")
            return True
        if not self.in_round:
            self.ctx.violation(rule, f"{what} outside a round in progress")
            return True
        return False

    def _need_draw(self, seat: int, what: str) -> None:
        """LV-DRAW: a turn starts with a draw; report once and treat the draw as skipped."""
        if not self.drawn:
            self.ctx.violation("LV-DRAW", f"{self.player(seat)} {what} without drawing first")
            self.drawn = True

    # -- moves of the player in turn ------------------------------------------------------------
    def apply_Drew(self, event: Event) -> None:
        seat = self._enter(event)
        if seat is None:
            return
        p = event["payload"]
        codes = p["cards"]
        cards = [parse_card(codes[0])] if len(codes) == 1 else parse_cards(codes)
        if self.drawn:
            self.ctx.violation("LV-DRAW", f"{self.player(seat)} drew twice in one turn")
        if len(cards) != 1:
            self.ctx.violation("LV-DRAW", f"a draw takes one card, this one took {len(cards)}")
        hand = self.hands[seat]
        if p["source"] == "stock":
            stock = self.stock
            for c in cards:
                if stock and stock[-1] == c:
                    stock.pop()
                else:
                    self.take_stock(c)  # halts (C-HOLD)
                hand[c] += 1
            if not self.drawn:
                self.drew_stock = True  # LV-BUY: the live discard may now be bought
        else:
            self.take_pile(cards)
            self.live = False
            for c in cards:
                hand[c] += 1
        self.drawn = True
        self.moved = True

    def apply_LaidDown(self, event: Event) -> None:
        seat = self._enter(event)
        if seat is None:
            return
        self._need_draw(seat, "laid down")
        if self.laid[seat]:
            self.ctx.violation("LV-CONTRACT", f"{self.player(seat)} laid down twice in round {self.round_no}")
        used: Counter[int] = Counter()
        melds: list[Meld] = []
        broken: list[int] = []
        for spec in event["payload"]["melds"]:
            cards = parse_cards(spec["cards"])
            used.update(cards)
            try:
                meld = validate_meld(spec["kind"], cards, parse_as(spec.get("as")), self.meld_rules)
            except MeldError as err:
                self.ctx.violation(MELD_RULE[err.code], err.message)
                meld = Meld(spec["kind"], list(cards), list(cards))
                broken.append(len(self.melds) + len(melds))
            meld.owner = seat
            melds.append(meld)
        want_sets, want_runs = CONTRACTS.get(self.round_no, (0, 0))
        sets = sum(1 for m in melds if m.kind == "set")
        runs = sum(1 for m in melds if m.kind == "run")
        if (sets, runs) != (want_sets, want_runs):
            self.ctx.violation(
                "LV-CONTRACT",
                f"round {self.round_no}'s contract is {contract_text(self.round_no)}; "
                f"laid down {sets} set(s) + {runs} run(s)",
            )
        hand = self.hands[seat]
        for c, k in used.items():
            if hand[c] < k:
                raise self.ctx.halt(
                    "C-HOLD", f"the lay-down uses {format_card(c)} x{k}; {self.player(seat)} holds {hand[c]}"
                )
        for c, k in used.items():
            hand[c] -= k
        self.melds.extend(melds)
        self.invalid.update(broken)
        self.laid[seat] = True
        self.laid_now = True
        self.moved = True
        left = self.hand_size(seat)
        if self.round_no == 5 and left != 1:
            self.ctx.violation("LV-ALLOUT", f"round 5: the lay-down must leave one card to discard, it leaves {left}")
        elif self.round_no == ROUNDS and left != 0:
            self.ctx.violation("LV-ALLOUT", f"round {ROUNDS}: the lay-down must use every card, it leaves {left}")
        if left == 0:
            self._go_out(seat, with_discard=False)

    def _table_meld(self, index: int) -> Meld:
        if index >= len(self.melds):
            raise self.ctx.halt("C-HOLD", f"table meld {index} does not exist ({len(self.melds)} on the table)")
        return self.melds[index]

    def _layoff_place(self, index: int, card: int, end: str | None) -> tuple[str | None, int | None]:
        """``(end, value)`` of a lay-off on table meld ``index``; ``value`` None if the
        card does not fit there (nothing fits a meld laid down broken). A logged ``end``
        binds. Without it a natural goes where it fits (high when both ends do: an ace on
        ``2..K``) and a wild is read as C-WILD reads an unnamed end wild: high, unless
        the run's high end is the ace."""
        rules = self.meld_rules
        meld = self.melds[index]
        if index in self.invalid:
            return end, None
        if end is not None or meld.kind == "set":
            return end, layoff_position(meld, card, end, rules)
        if card in rules.wild:
            side = "high" if meld.hi < 14 else "low"
            return side, layoff_position(meld, card, side, rules)
        for side in ("high", "low"):
            value = layoff_position(meld, card, side, rules)
            if value is not None:
                return side, value
        return None, None

    def _lay_off(self, seat: int, meld: Meld, card: int, end: str | None, value: int | None) -> None:
        """Add ``card`` to ``meld`` as the platform did; a card that does not fit is put
        at the named end (or the high end) unchanged, so later lay-offs still replay."""
        if value is not None:
            apply_layoff(meld, card, value, seat, self.meld_rules)
            return
        meld.contributed.setdefault(seat, []).append(card)
        if end == "low":
            meld.cards.insert(0, card)
            meld.stands.insert(0, card)
        else:
            meld.cards.append(card)
            meld.stands.append(card)

    def apply_LaidOff(self, event: Event) -> None:
        seat = self._enter(event)
        if seat is None:
            return
        p = event["payload"]
        self._need_draw(seat, "laid off")
        if not self.laid[seat]:
            self.ctx.violation("LV-LAYOFF", f"{self.player(seat)} laid off before laying down")
        elif self.laid_now:
            self.ctx.violation(
                "LV-LAYOFF", f"{self.player(seat)} laid off in the turn he laid down (only in later turns)"
            )
        meld = self._table_meld(p["meld"])
        card = parse_card(p["card"])
        end = p.get("end")
        self.take_from_hand(seat, card)
        end, value = self._layoff_place(p["meld"], card, end)
        if value is None:
            where = f" at the {end} end" if end else ""
            if p["meld"] in self.invalid:
                where += " (it was laid down broken: nothing fits it)"
            self.ctx.violation("LV-LAYOFF", f"{format_card(card)} does not fit table meld {p['meld']}{where}")
        self._lay_off(seat, meld, card, end, value)
        self.moved = True
        if not any(self.hands[seat]):
            self._go_out(seat, with_discard=False)

    def apply_Discarded(self, event: Event) -> None:
        seat = self._enter(event)
        if seat is None:
            return
        card = parse_card(event["payload"]["card"])
        if seat != self.current:  # the second discard of a finished turn (LV-DISCARD above)
            self.take_from_hand(seat, card)
            self.pile.append(card)
            return
        if not self.drawn:
            self._need_draw(seat, "discarded")
        hand = self.hands[seat]
        if hand[card] <= 0:
            self.take_from_hand(seat, card)  # halts (C-HOLD)
        hand[card] -= 1
        self.pile.append(card)
        if not any(hand):
            self._go_out(seat, with_discard=True)
            return
        self.live = True
        self.discarder = seat
        self._start_turn(self.next_active(seat))

    # -- out-of-turn moves: buying and calling Rummy ---------------------------------------------
    def buy_open(self) -> bool:
        """LV-BUY: the next player drew from the stock and has not discarded yet."""
        return self.in_round and self.live and self.drew_stock

    def rummy_open(self) -> bool:
        """LV-RUMMY: a live discard the next player has not drawn over yet."""
        return self.in_round and self.live and not self.drawn

    def open_melds(self) -> list[tuple[int, Meld]]:
        """The table melds cards may be laid off on: all but those laid down broken."""
        return [(i, m) for i, m in enumerate(self.melds) if i not in self.invalid]

    def can_lay_off(self, card: int) -> bool:
        rules = self.meld_rules
        return any(layoff_ends(m, card, rules) for _i, m in self.open_melds())

    def entitled_buyers(self) -> list[int]:
        """Seats that may buy the live discard now, in priority order (LV-BUY)."""
        if not self.buy_open() or not self.stock or not self.pile:
            return []
        return [s for s in self._others() if self._buy_problems(s) == []]

    def entitled_callers(self) -> list[int]:
        """Seats that may call Rummy on the live discard now, in priority order (LV-RUMMY)."""
        if not self.rummy_open() or not self.pile or not self.can_lay_off(self.pile[-1]):
            return []
        return [s for s in self._others() if self.laid[s] and s != self.discarder]

    def _others(self) -> list[int]:
        """Active seats other than the player in turn, leftward from him."""
        return [
            s for s in ((self.current + k) % self.n for k in range(1, self.n)) if self.active[s]
        ]

    def _buy_problems(self, seat: int) -> list[str]:
        who = self.player(seat)
        problems = []
        if not self.live:
            problems.append("no discard is open to buying (taken, bought or called)")
        elif not self.drew_stock:
            nxt = self.player(self.current)
            problems.append(f"{nxt} has not drawn from the stock; the discard is his to take first")
        if seat == self.current:
            problems.append(f"{who} is in turn and passed the discard")
        if self.discarder is not None and seat == self.discarder:
            problems.append(f"{who} may not buy back his own discard")
        if self.laid[seat]:
            problems.append(f"{who} has laid down")
        if self.max_buys is not None and self.buys[seat] >= self.max_buys:
            problems.append(f"{who} has used his {self.max_buys} buy(s) this round")
        return problems

    def apply_Bought(self, event: Event) -> None:
        seat = self.actor_seat(event)
        if seat is None:
            return
        if self._window_move_refused(event, "LV-BUY", "a buy"):
            return
        p = event["payload"]
        card, penalty = parse_card(p["card"]), parse_card(p["penalty"])
        problems = self._buy_problems(seat)
        if self.pile and self.pile[-1] != card and self.live:
            problems = [f"{format_card(card)} is not the open discard (the window for it closed)"]
        if problems:
            self.ctx.violation("LV-BUY", f"{self.player(seat)} bought {format_card(card)}: " + "; ".join(problems))
        self.take_pile([card])
        self.take_stock(penalty)
        self.hands[seat][card] += 1
        self.hands[seat][penalty] += 1
        self.buys[seat] += 1
        self.live = False

    def apply_RummyCalled(self, event: Event) -> None:
        seat = self.actor_seat(event)
        if seat is None:
            return
        if self._window_move_refused(event, "LV-RUMMY", "a Rummy call"):
            return
        p = event["payload"]
        card, discard, end = parse_card(p["card"]), parse_card(p["discard"]), p.get("end")
        who = self.player(seat)
        problems = []
        if not self.live or (self.pile and self.pile[-1] != card):
            problems.append(f"{format_card(card)} is not an open discard")
        elif self.drawn:
            problems.append(f"{self.player(self.current)} has already drawn (the call window closed)")
        if self.discarder is not None and seat == self.discarder:
            problems.append(f"{who} called Rummy on his own discard")
        if seat == self.current:
            problems.append(f"{who} is next to draw; the discard is his to take, not to call")
        if not self.laid[seat]:
            problems.append(f"{who} has not laid down")
        meld = self._table_meld(p["meld"])
        end, value = self._layoff_place(p["meld"], card, end)
        if value is None:
            problems.append(f"{format_card(card)} cannot be laid off on table meld {p['meld']}")
        if problems:
            self.ctx.violation("LV-RUMMY", f"{who} called Rummy on {format_card(card)}: " + "; ".join(problems))
        self.take_pile([card])
        self._lay_off(seat, meld, card, end, value)
        self.take_from_hand(seat, discard)
        self.pile.append(discard)
        if self.hand_size(seat) == 0:
            self._end_round(seat)
            return
        self.live = True  # the caller's discard is now open; the next player still draws
        self.discarder = seat

    # -- leaving ------------------------------------------------------------------------------------
    def apply_PlayerLeft(self, event: Event) -> None:
        seat = self.seat(event["actor"])
        if seat is None:
            self.ctx.violation("C-TURN", f"{event['actor']} is not seated at this game")
            return
        if not self.active[seat]:
            return  # PlayerLeft may come at any moment (EVENTS.md); he is already out
        self.left.add(seat)
        self._remove(seat)

    def apply_PlayerRemoved(self, event: Event) -> None:
        p = event["payload"]
        seat = self.seat(p["player"])
        if seat is None:
            self.ctx.discrepancy(f"removal of {p['player']}, who is not seated")
            return
        if p["reason"] == "left":
            if seat in self.left:
                return  # the platform's record of a PlayerLeft already applied
            self.ctx.discrepancy(f"{p['player']} removed for leaving, but did not leave")
        else:
            self.ctx.discrepancy(f"{p['player']} removed for {p['reason']!r}; Liverpool has no such removal")
        if self.active[seat]:
            self._remove(seat)

    def _remove(self, seat: int) -> None:
        was_current = self.in_round and seat == self.current
        self.active[seat] = False
        self.hands[seat] = [0] * NCARDS
        if self.over:
            return
        alive = self.active_seats()
        if len(alive) <= 1:
            self._finish(alive)
            return
        if was_current:
            self._start_turn(self.next_active(seat))

    # -- questions ------------------------------------------------------------------------------------
    def is_over(self) -> bool:
        return self.over

    def winners(self) -> list[str]:
        return [self.player(s) for s in self.winner_seats]

    def scores(self) -> dict[str, int]:
        return {pid: self.totals[s] for s, pid in enumerate(self.ctx.seats)}

    def round_result(self, round_no: int) -> tuple[list[str], dict[str, int]] | None:
        return self.results.get(round_no)

    def rounds_finished(self) -> int:
        return self.rounds_done

    def deal_due(self) -> dict[str, Any] | None:
        if self.over or self.in_round or self.round_no >= ROUNDS:
            return None
        return {"round": self.round_no + 1, "dealer": self.expected_dealer(), "redeal": 0,
                "cards": sorted(self.expected_deck().elements())}

    def restock_due(self) -> list[int] | None:
        if self.in_round and not self.over and not self.stock and len(self.pile) > 1:
            return self.pile[:-1]
        return None

    def to_act(self) -> list[str]:
        if self.over or not self.in_round or self.current < 0:
            return []
        extra = self.entitled_callers() if not self.drawn else self.entitled_buyers()
        return [self.player(self.current)] + [self.player(s) for s in extra]

    def legal_moves(self, player: str) -> list[tuple[str, dict[str, Any]]]:
        seat = self.seat(player)
        if seat is None or not self.active[seat] or self.over or not self.in_round:
            return []
        if seat != self.current:
            if seat in self.entitled_callers():
                return self._rummy_moves(seat)
            if seat in self.entitled_buyers():
                return [("Bought", {"card": format_card(self.pile[-1]), "penalty": format_card(self.stock[-1])})]
            return []
        moves: list[tuple[str, dict[str, Any]]] = []
        if not self.drawn:
            if self.stock:
                moves.append(("Drew", {"source": "stock", "cards": [format_card(self.stock[-1])]}))
            if self.pile:
                moves.append(("Drew", {"source": "discard", "cards": [format_card(self.pile[-1])]}))
            return moves
        hand = self.hands[seat]
        if not self.laid[seat]:
            plan = self.find_laydown(seat)
            if plan is not None:
                moves.append(("LaidDown", {"melds": plan}))
        elif not self.laid_now and (self.round_no == ROUNDS or self.hand_size(seat) > 1):
            for c in range(52):
                if hand[c]:
                    for i, m in self.open_melds():
                        for end in layoff_ends(m, c, self.meld_rules):
                            payload: dict[str, Any] = {"card": format_card(c), "meld": i}
                            if end is not None:
                                payload["end"] = end
                            moves.append(("LaidOff", payload))
        moves.extend(("Discarded", {"card": format_card(c)}) for c in range(52) if hand[c])
        return moves

    def _rummy_moves(self, seat: int) -> list[tuple[str, dict[str, Any]]]:
        card = self.pile[-1]
        hand = self.hands[seat]
        moves: list[tuple[str, dict[str, Any]]] = []
        for i, m in self.open_melds():
            for end in layoff_ends(m, card, self.meld_rules):
                for d in range(52):
                    if hand[d]:
                        payload: dict[str, Any] = {"card": format_card(card), "meld": i}
                        if end is not None:
                            payload["end"] = end
                        payload["discard"] = format_card(d)
                        moves.append(("RummyCalled", payload))
        return moves

    def round_blocked(self) -> bool:
        """True when the round in progress can never end (the gap in RULES.md §3 noted
        in this module's docstring): every active player has laid down, so no new meld
        will come, and no card outside the table (hands, stock, pile) can be laid off on
        any table meld, so no hand can shrink again. A question for the simulator, which
        abandons such a game; the replay never asks it."""
        if not self.in_round or self.over:
            return False
        active = self.active_seats()
        if not all(self.laid[s] for s in active):
            return False
        outside = [0] * NCARDS
        for s in active:
            for c, k in enumerate(self.hands[s]):
                outside[c] += k
        for c in self.stock:
            outside[c] += 1
        for c in self.pile:
            outside[c] += 1
        rules = self.meld_rules
        return not any(outside[c] and layoff_ends(m, c, rules) for c in range(52) for _i, m in self.open_melds())

    def find_laydown(self, seat: int) -> list[dict[str, Any]] | None:
        """A clean lay-down of this round's contract from the seat's hand, or None."""
        sets, runs = CONTRACTS[self.round_no]
        leave = 1 if self.round_no == 5 else 0 if self.round_no == ROUNDS else None
        plan = find_contract(self.hands[seat], sets, runs, self.meld_rules, leave=leave)
        return None if plan is None else [plan_payload(m) for m in plan]

    def snapshot(self, viewer: str | None = None) -> dict[str, Any]:
        out = self.table_snapshot(viewer)
        top = format_card(self.pile[-1]) if self.live and self.pile else None
        out.update({
            "contract": contract_text(self.round_no) if self.round_no else None,
            "melds": [{**m.to_dict(), "owner": self.player(m.owner) if m.owner >= 0 else None}
                      for m in self.melds],
            "laid_down": [self.player(s) for s in range(self.n) if self.laid[s]],
            # out of the game: "left", or removed on a platform claim (a finding of its own)
            "out": {self.player(s): "left" if s in self.left else "removed"
                    for s in range(self.n) if not self.active[s]},
            "buys": {self.player(s): k for s, k in enumerate(self.buys) if k},
            "live_discard": top,
            "buy_window": {"card": top, "entitled": [self.player(s) for s in self.entitled_buyers()]}
            if self.buy_open() else None,
            "rummy_window": {"card": top, "entitled": [self.player(s) for s in self.entitled_callers()]}
            if self.rummy_open() and self.melds else None,
            "pots": {"pot": self.pot if not self.over else 0},
            "scores": self.scores(),
            "over": self.over,
            "winners": self.winners(),
        })
        return out


# --- the contract solver (for legal_moves and the simulator) ------------------------------------

#: a planned meld: kind, cards in log order (runs low to high), ``as`` {position: card}
MeldPlan = tuple[str, list[int], dict[int, int]]
_WILD = -1  # a wild slot in a planned run
#: naturals in search order: aces first (an ace may be the low end of a run)
_ORDER: tuple[int, ...] = tuple(range(48, 52)) + tuple(range(4, 48))


def plan_payload(plan: MeldPlan) -> dict[str, Any]:
    """A planned meld as a LaidDown meld object."""
    kind, cards, as_map = plan
    out: dict[str, Any] = {"kind": kind, "cards": format_cards(cards)}
    if as_map:
        out["as"] = {str(i): format_card(c) for i, c in sorted(as_map.items())}
    return out


#: find_contract results by (hand, contract, rules, leave): the simulator asks the same
#: question twice per turn (a player weighing the discard, then legal_moves after his draw)
_CONTRACT_MEMO: dict[tuple[Any, ...], list[MeldPlan] | None] = {}
_MEMO_SIZE = 4096


def find_contract(
    hand: Sequence[int], sets: int, runs: int, rules: MeldRules, *, leave: int | None = None
) -> list[MeldPlan] | None:
    """Melds making a contract of ``sets`` sets and ``runs`` runs from ``hand`` (53 counts).

    ``leave=None``: a contract with the fewest wilds, extended by every natural that fits
    it, always leaving at least one card (rounds 1-4 need a discard). ``leave=k``: the
    contract uses every card but exactly ``k`` (LV-ALLOUT: 1 in round 5, 0 in round 6).
    The search is sound (every plan validates) but not complete: a natural is never
    replaced by a wild inside a run. Results are remembered (a pure function of its
    arguments); each call gets its own copy.
    """
    key = (tuple(hand), sets, runs, rules, leave)
    if key in _CONTRACT_MEMO:
        found = _CONTRACT_MEMO[key]
    else:
        found = _find_contract(hand, sets, runs, rules, leave=leave)
        if len(_CONTRACT_MEMO) >= _MEMO_SIZE:
            _CONTRACT_MEMO.clear()
        _CONTRACT_MEMO[key] = found
    return None if found is None else [(kind, list(cards), dict(as_map)) for kind, cards, as_map in found]


def _find_contract(
    hand: Sequence[int], sets: int, runs: int, rules: MeldRules, *, leave: int | None = None
) -> list[MeldPlan] | None:
    """:func:`find_contract`'s search (not remembered)."""
    nat = [hand[c] if c >= 4 and c < 52 else 0 for c in range(52)]
    wild_cards = [w for w in range(4) for _ in range(hand[w])]
    if leave is None:
        total = sum(nat) + len(wild_cards)
        for budget in range(len(wild_cards) + 1):
            picked = _pick(nat, budget, sets, runs, rules, 1, (0, 0))
            if picked is not None:
                return _extend(picked, nat, wild_cards, total, rules)
        return None
    found = _exact(nat, len(wild_cards), sets, runs, leave, rules, [])
    if found is None:
        return None
    return _attach_wilds(found[0], found[1], wild_cards, rules)


# internal meld forms: ("set", rank, [naturals], wilds) and ("run", suit, lo, [slots])
_Internal = tuple[Any, ...]


def _sets_from(nat: list[int], rank: int, rules: MeldRules, wilds: int) -> list[tuple[list[int], int]]:
    """Sets of three of ``rank`` from ``nat`` within ``wilds`` wilds: three naturals, then
    two and a wild (which leaves a natural for a second set of the rank)."""
    cards = [make_card(rank, s) for s in range(4)]
    if rules.set_distinct_suits:
        naturals = [c for c in cards if nat[c] > 0][:3]
    else:
        naturals = [c for c in cards for _ in range(nat[c])][:3]
    return [(naturals[:k], 3 - k) for k in (3, 2) if len(naturals) >= k and 3 - k <= wilds]


#: per suit, the card at each ladder value 0..15 (1 and 14 the ace; 0 and 15 off the ladder)
_LADDER: tuple[tuple[int, ...], ...] = tuple(
    tuple(ladder_card(v, s) if 1 <= v <= 14 else -1 for v in range(16)) for s in range(4)
)


def _window(nat: list[int], suit: int, lo: int, length: int) -> list[int]:
    """Slots of a run of ``suit`` over values lo..lo+length-1: a natural or a wild."""
    ladder = _LADDER[suit]
    return [c if nat[c] > 0 else _WILD for c in ladder[lo:lo + length]]


def _take(nat: list[int], cards: Sequence[int], k: int) -> None:
    for c in cards:
        if c != _WILD:
            nat[c] -= k


def _pick(
    nat: list[int], budget: int, sets: int, runs: int, rules: MeldRules, min_rank: int,
    min_run: tuple[int, int],
) -> list[_Internal] | None:
    """Backtracking over minimal melds (sets of 3, runs of 4) within a wild budget."""
    if sets:
        per_rank = [nat[b] + nat[b + 1] + nat[b + 2] + nat[b + 3] for b in range(min_rank * 4, 52, 4)]
        if min(sum(k // 2 for k in per_rank), sum(k // 3 for k in per_rank) + budget) < sets:
            return None  # not enough naturals (and wilds) left for the sets still wanted
        for rank in range(min_rank, 13):
            for naturals, need in _sets_from(nat, rank, rules, budget):
                _take(nat, naturals, 1)
                rest = _pick(nat, budget - need, sets - 1, runs, rules, rank, min_run)
                _take(nat, naturals, -1)
                if rest is not None:
                    return [("set", rank, naturals, need), *rest]
        return None
    if runs:
        most = min(budget, 1)
        for suit, lo in itertools.product(range(4), range(1, 12)):
            if (suit, lo) < min_run:
                continue
            ladder = _LADDER[suit]
            if (nat[ladder[lo]] <= 0) + (nat[ladder[lo + 1]] <= 0) + (nat[ladder[lo + 2]] <= 0) \
                    + (nat[ladder[lo + 3]] <= 0) > most:
                continue  # the window misses more cards than the wilds it may use
            slots = _window(nat, suit, lo, 4)
            need = slots.count(_WILD)
            _take(nat, slots, 1)
            rest = _pick(nat, budget - need, 0, runs - 1, rules, min_rank, (suit, lo))
            _take(nat, slots, -1)
            if rest is not None:
                return [("run", suit, lo, slots), *rest]
        return None
    return []


def _extend(picked: list[_Internal], nat: list[int], wild_cards: list[int], total: int,
            rules: MeldRules) -> list[MeldPlan]:
    """Grow the minimal melds with every natural that fits, keeping one card in hand."""
    nat = list(nat)
    left = total
    melds: list[list[Any]] = []
    wilds = list(wild_cards)
    for plan in picked:
        if plan[0] == "set":
            _, rank, naturals, need = plan
            _take(nat, naturals, 1)
            used = [wilds.pop() for _ in range(need)]
            melds.append(["set", rank, list(naturals), used])
            left -= len(naturals) + need
        else:
            _, suit, lo, slots = plan
            _take(nat, slots, 1)
            melds.append(["run", suit, lo, list(slots)])
            left -= len(slots)
    run_wilds = [w for plan in picked if plan[0] == "run" for w in [plan[3].count(_WILD)]]
    run_wild_codes = [[wilds.pop() for _ in range(k)] for k in run_wilds]
    for m in melds:
        if m[0] == "set":
            for c in (make_card(m[1], s) for s in range(4)):
                while nat[c] > 0 and left > 1:
                    if rules.set_distinct_suits and any(suit_of(x) == suit_of(c) for x in m[2]):
                        break
                    nat[c] -= 1
                    m[2].append(c)
                    left -= 1
        else:
            suit, slots = m[1], m[3]
            while left > 1:
                hi = m[2] + len(slots) - 1
                if hi < 14 and not (hi + 1 == 14 and m[2] == 1) and nat[ladder_card(hi + 1, suit)] > 0:
                    c = ladder_card(hi + 1, suit)
                    slots.append(c)
                elif m[2] > 1 and not (m[2] - 1 == 1 and hi == 14) and nat[ladder_card(m[2] - 1, suit)] > 0:
                    c = ladder_card(m[2] - 1, suit)
                    slots.insert(0, c)
                    m[2] -= 1
                else:
                    break
                nat[c] -= 1
                left -= 1
    out: list[MeldPlan] = []
    codes = iter(run_wild_codes)
    for m in melds:
        if m[0] == "set":
            out.append(("set", [*m[2], *m[3]], {}))
        else:
            out.append(_run_plan(m[1], m[2], m[3], next(codes)))
    return out


def _run_plan(suit: int, lo: int, slots: list[int], wild_codes: list[int]) -> MeldPlan:
    """Slots -> cards with wild codes, naming the wilds below the first natural."""
    codes = iter(wild_codes)
    cards: list[int] = []
    as_map: dict[int, int] = {}
    leading = True
    for i, s in enumerate(slots):
        if s == _WILD:
            cards.append(next(codes))
            if leading:
                as_map[i] = ladder_card(lo + i, suit)
        else:
            cards.append(s)
            leading = False
    return ("run", cards, as_map)


def _first_natural(nat: list[int]) -> int | None:
    for c in _ORDER:
        if nat[c] > 0:
            return c
    return None


def _exact(nat: list[int], wilds: int, sets: int, runs: int, skips: int, rules: MeldRules,
           melds: list[_Internal]) -> tuple[list[_Internal], int] | None:
    """Exact cover: every natural in a meld or among ``skips`` kept cards; returns the
    melds and the number of cards still to keep (kept as wilds)."""
    c = _first_natural(nat)
    if c is None:
        if sets or runs or wilds < skips:
            return None
        return melds, skips
    if sets == 0 and runs == 0 and skips == 0:
        return None
    rank, suit = rank_of(c), suit_of(c)
    if sets:
        for naturals in _set_choices(nat, c, rules):
            need = max(0, 3 - len(naturals))
            if need > wilds:
                continue
            _take(nat, naturals, 1)
            found = _exact(nat, wilds - need, sets - 1, runs, skips, rules, [*melds, ("set", rank, naturals, need)])
            _take(nat, naturals, -1)
            if found is not None:
                return found
    if runs:
        for lo, slots in _run_choices(nat, c, suit, wilds):
            need = slots.count(_WILD)
            _take(nat, slots, 1)
            found = _exact(nat, wilds - need, sets, runs - 1, skips, rules, [*melds, ("run", suit, lo, slots)])
            _take(nat, slots, -1)
            if found is not None:
                return found
    if skips:
        nat[c] -= 1
        found = _exact(nat, wilds, sets, runs, skips - 1, rules, melds)
        nat[c] += 1
        if found is not None:
            return found
    return None


def _set_choices(nat: list[int], c: int, rules: MeldRules) -> list[list[int]]:
    """Sets of naturals through ``c`` (at least two naturals), larger first."""
    rank = rank_of(c)
    if rules.set_distinct_suits:
        others = [make_card(rank, s) for s in range(4) if s != suit_of(c) and nat[make_card(rank, s)] > 0]
        return [[c, *combo] for k in range(len(others), 0, -1) for combo in itertools.combinations(others, k)]
    pool = [x for x in (make_card(rank, s) for s in range(4)) for _ in range(nat[x] - (x == c))]
    seen: set[tuple[int, ...]] = set()
    out = []
    for k in range(len(pool), 0, -1):
        for combo in itertools.combinations(pool, k):
            if combo not in seen:
                seen.add(combo)
                out.append([c, *combo])
    return out


def _run_choices(nat: list[int], c: int, suit: int, wilds: int) -> list[tuple[int, list[int]]]:
    """Runs in ``c``'s suit with ``c`` as their lowest natural (an ace also as their
    highest), every slot a natural where one is left or a wild (so a natural can go to
    another meld), wilds also below ``c``. Returns ``(lowest value, slots)``."""
    out: list[tuple[int, list[int]]] = []
    nat[c] -= 1
    if rank_of(c) == ACE:  # ace high: grow down from the king
        _grow(nat, suit, [c], 14, 14, -1, wilds, out)
        low = [1]
    else:
        low = [rank_of(c) + 2]
    for v0 in low:
        for lead in range(0, min(wilds, v0 - 1) + 1):
            _grow(nat, suit, [_WILD] * lead + [c], v0 - lead, v0, 1, wilds - lead, out)
    nat[c] += 1
    return out


def _grow(nat: list[int], suit: int, slots: list[int], lo: int, edge: int, step: int, wilds: int,
          out: list[tuple[int, list[int]]]) -> None:
    """Depth-first growth of a run from ``edge`` in direction ``step`` (+1 up, -1 down)."""
    naturals = sum(1 for x in slots if x != _WILD)
    if len(slots) >= 4 and naturals >= 3 and (step < 0 or slots[-1] != _WILD):
        out.append((lo, list(slots)))
    v = edge + step
    if v < 2 or v > (13 if lo == 1 else 14):
        return
    x = ladder_card(v, suit)
    for card in (x, _WILD):
        if card == _WILD:
            if not wilds:
                continue
        elif nat[x] <= 0:
            continue
        grown = [*slots, card] if step > 0 else [card, *slots]
        if card != _WILD:
            nat[x] -= 1
        _grow(nat, suit, grown, lo if step > 0 else v, v, step, wilds - (card == _WILD), out)
        if card != _WILD:
            nat[x] += 1


def _attach_wilds(melds: list[_Internal], keep: int, wild_cards: list[int],
                  rules: MeldRules) -> list[MeldPlan] | None:
    """Give each meld its wilds; the wilds not needed are kept (``keep``) or attached to a
    set, else to a run end."""
    wilds = list(wild_cards)
    spare = len(wilds) - sum(m[3] if m[0] == "set" else m[3].count(_WILD) for m in melds) - keep
    if spare < 0:
        return None
    work = [[*m[:3], list(m[3])] if m[0] == "run" else [m[0], m[1], list(m[2]), m[3]] for m in melds]
    target = next((m for m in work if m[0] == "set"), None)
    if target is not None:
        target[3] += spare
        spare = 0
    for m in work:
        while spare and m[0] == "run":
            lo, slots = m[2], m[3]
            hi = lo + len(slots) - 1
            if hi < 14 and not (hi + 1 == 14 and lo == 1):
                slots.append(_WILD)
            elif lo > 1 and not (lo - 1 == 1 and hi == 14):
                slots.insert(0, _WILD)
                m[2] -= 1
            else:
                break
            spare -= 1
    if spare:
        return None
    out: list[MeldPlan] = []
    for m in work:
        if m[0] == "set":
            out.append(("set", [*m[2], *(wilds.pop() for _ in range(m[3]))], {}))
        else:
            k = m[3].count(_WILD)
            out.append(_run_plan(m[1], m[2], m[3], [wilds.pop() for _ in range(k)]))
    return out


__all__ = [
    "CONTRACTS",
    "MELD_RULE",
    "POINTS",
    "WILDS",
    "Liverpool",
    "contract_text",
    "deal_size",
    "find_contract",
    "hand_points",
    "layoff_ends",
    "meld_rules",
    "plan_payload",
    "split_pot",
]
