"""Rummy 500 — RULES.md §2 (variant ``r500``).

Every rule ID of §2 and the §0 rules the variant uses are checked here (grep the ID):
R5-DRAW-STOCK, R5-DRAW-PILE, R5-USE-BOTTOM, R5-NODISCARD-TOP, R5-MELD, R5-LAYOFF,
R5-SWAP, R5-DISCARD, R5-END, R5-VALUES, R5-SCORE, R5-GAME, R5-POT, R5-CHIPS, and
C-TURN, C-HOLD, C-DEAL, C-RUN, C-SET, C-WILD. The rules that are definitions (values,
scores, game results, pot and chips) are broken by a wrong platform claim: the engine
compares ``RoundEnded``/``GameEnded``/``ChipsTransferred`` with what this module computes
and reports a C-CLAIM discrepancy naming both values.

Config (``GameCreated.rules``), with defaults: ``mode`` ``"target"`` (or ``"rounds"``,
``"tournament"``), ``target`` 500, ``rounds`` 1, ``chip_ratio`` 1. A value out of range
(unknown mode, ``target``/``rounds`` < 1, ``chip_ratio`` < 0) is LOG-RULES and the
default applies. A known key set to ``null`` is not set (events/models.py: the default
applies, like a missing key), not a LOG-RULES finding.

Decisions where RULES.md is silent:

- A game seating fewer than 2 or more than 4 players is LOG-GAME (integrity); the
  replay still goes on (7 cards each from 3 players up).

- Turns: the first move of a turn must be a ``Drew``; a meld, swap or discard before it
  is R5-DRAW-STOCK, a lay-off before it R5-LAYOFF ("after drawing"). A second draw in a
  turn is R5-DRAW-STOCK. A move by someone not in turn is C-TURN and the turn passes to
  him (as the platform applied it); if the player in turn had drawn and the mover is the
  next player, it is R5-DISCARD instead (the turn ended without a discard), plus
  R5-USE-BOTTOM if a deep draw's deepest card was still unused.
- R5-DRAW-PILE: cards that are in the pile but are not its top slice in order (a card
  taken without those above it) are a violation, and are taken where they lie; a card
  that is not in the pile at all halts (C-HOLD).
- R5-NODISCARD-TOP and jokers (the only duplicate card): discarding a card code is a
  violation only when every copy in the hand is one that may not be discarded; a copy
  leaving the hand by a meld, lay-off or swap is taken to be the restricted one.
- R5-USE-BOTTOM is judged when the turn ends (at the discard, or at the move that ends
  it without one): the seed's "in that same turn", not at the next move; melding/laying
  off a joker counts as using a deepest joker. A deepest card put on the table by a
  meld or lay-off that breaks its own rule is used all the same (that breach is the
  move's one finding). The other cards of a deep draw, the player's own earlier discard
  among them, may be discarded in the same turn.
- R5-LAYOFF: a natural card's place on a run follows from its rank. ``end`` may be left
  out: the card goes to the end where it fits (an ace that fits both ends of ``2..K``
  goes high). A logged ``end`` is where the platform put the card, so a card that does
  not fit at that end is a violation even if it would fit at the other one.
  A wild laid off on a run without ``end`` reads as C-WILD reads a run: high, unless
  the high end is an ace. A card that does not fit (or lands on an invalid meld) is a
  violation and is placed where the platform put it, worth its natural value (a joker
  0); the meld keeps its shape for later lay-offs, except at the end of a run where
  such a card sits: nothing extends the run there (the card at that end is the misfit).
- R5-MELD: an invalid meld is a violation (rule by the meld error: C-RUN, C-SET, C-WILD
  or R5-MELD) and still goes on the table as logged: naturals keep their value, its
  jokers are worth 0 (unless only its ``as`` is wrong: then each joker is worth the card
  its place stands for), nothing fits it and no joker can be swapped off it.
- R5-SWAP: a set's joker that ``as`` did not name stands for any missing suit of the
  set's rank. The natural given takes the joker's place, and the points of that place go
  to the player who gave it (R5-SCORE counts the cards a player put on the table and that
  are there at the end); the player who had melded the joker loses them. When a set holds
  several jokers that could stand for the natural given, the swap takes the first of them
  in the meld's order (the one on the table longest), so when one player melded it and
  another laid the second one off, the melder loses the place first.
- R5-DISCARD: melding or laying off the last card is a violation; the player is then
  out and the round ends there.
- R5-END: r500 never replenishes the stock. A ``StockReplenished`` is an R5-END
  violation; while the round is still live (the last stock card drawn, no discard yet)
  it is applied (its cards must be the old stock plus the pile below its top, else
  C-HOLD), after the round has ended it is ignored. Moves after the round has ended by
  the rules are R5-END violations and are ignored until the next ``RoundStarted``.
  ``RoundStarted`` while a round is live is R5-END (the round is dropped unscored); it
  may name the same round again (dealt by the same dealer) or the next one.
- r500 has no clocks, auto-plays, strikes or Fresh: ``AutoPlayed``/``FreshPressed`` are
  LOG-EVENT. A move after the game has ended is C-TURN.
- Deals follow the ``dealer`` the platform records (C-DEAL if it is not the one the
  rules give: GameCreated's dealer, then the next active seat each round). A wrong
  ``round`` number is a C-CLAIM discrepancy; ``redeal`` must be 0 (C-DEAL).
- Round scores (R5-SCORE) and round winners (the highest round score, R5-CHIPS) cover
  the players dealt into the round and still in the game at its end.
- Leaving (``PlayerLeft``, any moment): the player is out at once, his hand leaves
  play, his cards on the table stay (and keep scoring for nobody), his stake stays in
  the pot (tournament: he keeps his stack and pays nothing for the unfinished round).
  If it was his turn, the next player's turn starts; if he had drawn the last stock
  card, the round ends (R5-END). With one player left the game ends and he wins
  (the unfinished round is not scored). A ``PlayerLeft`` after the game ended, or by a
  player already out, changes nothing.
- ``PlayerRemoved`` is a claim: ``left`` after a PlayerLeft, ``bust`` for a player the
  replay has busted (tournament) or eliminated (target tie), are confirmations; any
  other removal is a C-CLAIM discrepancy and, for a player still in, is applied.
- R5-GAME ``target``: ties are judged among the players still in; players below the
  tied leaders are eliminated (out, stake lost), and from then on the first round after
  which one player leads alone ends the game, whether or not he is still at the target
  ("play more rounds until the tie breaks"). ``rounds``: any ``rounds`` ≥ 1 is
  accepted (the seed's 1–3 is the usual range).
- R5-CHIPS applies in ``tournament`` mode only (R5-POT: the other modes pay the pot).
  A loser's payment is capped at his stack before the round's payments; players with
  no chips after a round are out (bust); if that would leave nobody, the round's
  winners stay. Remainders (tied round winners, split prizes) go one chip each in
  seat order (seat 0 first).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, ClassVar

from mypy_extensions import mypyc_attr

from ...events.cards import (
    JOKER,
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
from .melds import ACE, Meld, MeldError, MeldRules, ladder_card, layoff_position, parse_as, validate_meld
from .table import CardTable

MODES = ("target", "rounds", "tournament")

#: R5-VALUES: points of a natural card by rank index (2..9 face, T J Q K 10, ace 11)
RANK_POINTS: tuple[int, ...] = (2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10, 11)
#: R5-VALUES: what a card left in hand costs (ace and joker 15, others as above)
HAND_PENALTY: tuple[int, ...] = tuple(
    15 if c == JOKER or rank_of(c) == ACE else RANK_POINTS[rank_of(c)] for c in range(NCARDS)
)

#: meld error code -> r500 rule ID
MELD_RULE = {
    "run_short": "R5-MELD",
    "run_naturals": "R5-MELD",
    "run_suit": "C-RUN",
    "run_gap": "C-RUN",
    "run_wrap": "C-RUN",
    "set_size": "R5-MELD",
    "set_naturals": "R5-MELD",
    "set_rank": "C-SET",
    "set_suits": "R5-MELD",
    "wild_as": "C-WILD",
    "kind": "R5-MELD",
}

Move = tuple[str, dict[str, Any]]
#: ``(lay-offs per meld, swaps per meld)``: what the table accepts (Rummy500._table_fits)
_Fits = tuple[list[tuple[int, list[tuple[int, "str | None"]]]], list[tuple[int, list[int]]]]
#: card codes by int (the hot path formats without a range check)
_CODE: tuple[str, ...] = tuple(format_cards(range(NCARDS)))
#: per suit, the card at each ladder value 0..15 (1 and 14 the ace; 0 and 15 off the ladder)
_LADDER: tuple[tuple[int, ...], ...] = tuple(
    tuple(ladder_card(v, s) if 1 <= v <= 14 else -1 for v in range(16)) for s in range(4)
)


def _fit_order(entry: tuple[int, str | None]) -> tuple[int, int]:
    """Lay-offs in the order they are offered: by card, the low end first."""
    return entry[0], 0 if entry[1] == "low" else 1


# --- values and chips (pure functions, unit-tested) --------------------------------------


def run_card_points(stand: int, ladder_value: int) -> int:
    """R5-VALUES for a card in a run: the card it stands for, the ace 1 only at the low
    end (``A 2 3``), 11 at the high end (``Q K A``)."""
    if rank_of(stand) == ACE:
        return 1 if ladder_value == 1 else 11
    return RANK_POINTS[rank_of(stand)]


def hand_penalty(hand: Sequence[int]) -> int:
    """R5-VALUES: what the cards left in a hand (53 counts) cost at the end of a round."""
    return sum(HAND_PENALTY[c] * k for c, k in enumerate(hand) if k)


def split_evenly(amount: int, seats: Sequence[int]) -> list[tuple[int, int]]:
    """``amount`` chips split equally over ``seats``; the remainder goes one chip each in
    seat order (R5-GAME ties, R5-CHIPS tied round winners). Zero shares are dropped."""
    ordered = sorted(seats)
    share, rest = divmod(amount, len(ordered))
    out = [(s, share + (1 if i < rest else 0)) for i, s in enumerate(ordered)]
    return [(s, a) for s, a in out if a]


def chip_payments(
    scores: Mapping[int, int], ratio: int, stacks: Sequence[int] | Mapping[int, int] | None = None
) -> list[tuple[int, int, int]]:
    """R5-CHIPS: ``(payer, payee, amount)`` for one round.

    The round winners are the seats with the highest score; every other seat pays
    (winner score − own score) × ``ratio``, capped at its stack (when ``stacks`` is
    given), split equally over tied winners with the remainder in seat order.

    >>> chip_payments({0: 100, 1: 70, 2: 60}, 3)
    [(1, 0, 90), (2, 0, 120)]
    >>> chip_payments({0: 60, 1: 0, 2: -10}, 2)
    [(1, 0, 120), (2, 0, 140)]
    """
    if not scores:
        return []
    best = max(scores.values())
    winners = sorted(s for s, v in scores.items() if v == best)
    out: list[tuple[int, int, int]] = []
    for seat in sorted(scores):
        if scores[seat] == best:
            continue
        due = (best - scores[seat]) * ratio
        if stacks is not None:
            due = min(due, max(stacks[seat], 0))
        for winner, amount in split_evenly(due, winners):
            out.append((seat, winner, amount))
    return out


# --- the table ---------------------------------------------------------------------------


@mypyc_attr(native_class=False)  # a plain class when compiled (setup.py): copies, pickles as is
@dataclass(slots=True)
class TableMeld:
    """A meld on the table: its cards (with what each stands for), who put each card
    there (R5-LAYOFF/R5-SWAP: points follow the card's placer) and each place's points."""

    meld: Meld
    by: list[int]
    points: list[int]
    valid: bool
    #: ends of a run where a card that did not fit was put (R5-LAYOFF): nothing fits there
    dead_ends: frozenset[str] = frozenset()


class Rummy500(CardTable):
    name: ClassVar[str] = "r500"
    event_types: ClassVar[frozenset[str]] = frozenset(
        {"RoundStarted", "Drew", "Melded", "LaidOff", "JokerSwapped", "Discarded",
         "StockReplenished", "PlayerLeft", "PlayerRemoved"}
    )
    config_defaults: ClassVar[Mapping[str, Any]] = {
        "mode": "target",
        "target": 500,
        "rounds": 1,
        "chip_ratio": 1,
    }

    def __init__(self, ctx: GameContext | None = None, rules: Mapping[str, Any] | None = None) -> None:
        super().__init__(ctx, rules)
        if ctx is None:  # a bare instance, for Variant.__reduce__
            return
        if not 2 <= self.n <= 4:
            ctx.integrity("LOG-GAME", f"r500 is for 2-4 players, this game seats {self.n}")
        self._check_config()
        self.mode: str = self.config["mode"]
        self.meld_rules = MeldRules(wild=frozenset({JOKER}), run_min=3, set_min=3, set_max=4)
        self.melds: list[TableMeld] = []
        self.totals = [0] * self.n
        self.round_results: dict[int, tuple[list[str], dict[str, int]]] = {}
        self.last_scores: dict[str, int] = {}
        self.rounds_done = 0
        self.dealt: list[int] = []
        self.out: dict[int, str] = {}  # seat -> left / bust / eliminated / removed
        self.left: set[int] = set()  # every seat whose player left, at any moment
        self.over = False
        self.game_winners: list[int] = []
        self.playoff = False  # R5-GAME target: tied leaders play until the tie breaks
        self.pot = 0
        self.stacks = [ctx.stake] * self.n
        if self.mode != "tournament":  # R5-POT: everybody stakes into the pot at the start
            for pid in ctx.seats:
                self.pot += ctx.stake
                self.ctx.transfer(pid, "pot", ctx.stake, "stake")
        self.last_discarder: int | None = None
        self._fits: _Fits | None = None
        self._start_turn(-1)

    def _check_config(self) -> None:
        cfg, defaults = self.config, self.config_defaults
        if cfg["mode"] not in MODES:
            self.ctx.integrity("LOG-RULES", f"rules.mode must be one of {', '.join(MODES)}, got {cfg['mode']!r}")
            cfg["mode"] = defaults["mode"]
        for key, least in (("target", 1), ("rounds", 1), ("chip_ratio", 0)):
            if cfg[key] < least:
                self.ctx.integrity("LOG-RULES", f"rules.{key} must be at least {least}, got {cfg[key]}")
                cfg[key] = defaults[key]

    def expected_deck(self) -> Counter[int]:
        deck: Counter[int] = Counter(range(52))
        deck[JOKER] = 2
        return deck

    # -- rounds ---------------------------------------------------------------------------
    def _next_dealer(self) -> int:
        return self.ctx.dealer if self.round_no == 0 else self.next_active(self.dealer)

    def apply_RoundStarted(self, event: Event) -> None:
        self._fits = None  # the table may change (legal_moves' cache)
        p = event["payload"]
        if self.over:
            self.ctx.violation("R5-GAME", "a round started after the game ended")
            return
        # A deal while a round is live is one breach (R5-END), whether the platform logs it
        # as the same round dealt again (same number, same dealer) or as the next round.
        redeal = self.in_round and p["round"] == self.round_no
        if self.in_round:
            self.ctx.violation("R5-END", f"round {self.round_no} was redealt before it ended")
        expected_round = self.round_no if redeal else self.round_no + 1
        if p["round"] != expected_round:
            self.ctx.discrepancy(f"RoundStarted claims round {p['round']}; by the rules it is round {expected_round}")
        if p["redeal"] != 0 and not redeal:
            self.ctx.violation("C-DEAL", f"redeal {p['redeal']}: r500 has no redeals")
        dealer = self.dealer if redeal else self._next_dealer()
        logged = p["dealer"]
        if logged != dealer:
            self.ctx.violation(
                "C-DEAL", f"dealer seat {logged}, but by the rules seat {dealer} deals round {expected_round}"
            )
            if 0 <= logged < self.n and self.active[logged]:
                dealer = logged  # deal as the platform did, so later moves still match the hands
        deck = parse_cards(p["deck"])
        self.check_deck(deck)
        order = [self.next_active(dealer)]
        while len(order) < len(self.active_seats()):
            order.append(self.next_active(order[-1]))
        size = 13 if len(order) == 2 else 7
        # C-DEAL: one card at a time from the left of the dealer, then one face up.
        self.deal(deck, order, dict.fromkeys(order, size), "C-DEAL")
        self.dealer = dealer
        self.round_no = expected_round
        self.dealt = order
        self.melds = []
        self.in_round = True
        self.last_discarder = None
        self._start_turn(order[0])

    def _start_turn(self, seat: int) -> None:
        self.current = seat
        self.drawn = False
        self.moved = False
        self.blocked: dict[int, int] = {}  # card -> copies that may not be discarded
        self.must_use: list[int] = []  # deepest cards of pile draws still to be used
        self.took_single: int | None = None

    def _enter_move(self, event: Event) -> int | None:
        """Turn checks shared by every move; the acting seat, or None to skip the move."""
        kind = event["type"]
        if self.over:
            self.ctx.violation("C-TURN", f"{kind} after the game ended")
            return None
        if not self.in_round:
            if self.round_no == 0:
                self.ctx.violation("C-TURN", f"{kind} before the cards were dealt")
            else:
                self.ctx.violation("R5-END", f"{kind} after round {self.round_no} ended; ignored")
            return None
        seat = self.actor_seat(event)
        if seat is None:
            return None
        if seat != self.current:
            if kind == "Discarded" and seat == self.last_discarder and not self.moved:
                self.ctx.violation("R5-DISCARD", f"{self.player(seat)} discarded twice in one turn")
                return seat
            cur = self.player(self.current)
            if self.drawn and seat == self.next_active(self.current):
                self.ctx.violation("R5-DISCARD", f"{cur}'s turn ended without a discard")
                self._check_used()
            else:
                self.ctx.violation("C-TURN", f"{self.player(seat)} moved out of turn ({cur} was in turn)")
            self._start_turn(seat)
        self.moved = True
        return seat

    def _check_used(self) -> None:
        """R5-USE-BOTTOM, judged when a turn ends."""
        for card in self.must_use:
            self.ctx.violation(
                "R5-USE-BOTTOM",
                f"{self.player(self.current)} took {format_card(card)} as the deepest of several "
                "pile cards and did not meld, lay off or swap it this turn",
            )
        self.must_use = []

    def _placed(self, seat: int, cards: Sequence[int]) -> None:
        """Cards left the hand for the table: obligations and restrictions they settle."""
        for c in cards:
            if c in self.must_use:
                self.must_use.remove(c)
            if self.blocked.get(c):
                self.blocked[c] -= 1
        if not any(self.hands[seat]):
            # R5-DISCARD: going out takes a discard; the hand is empty all the same.
            self.ctx.violation(
                "R5-DISCARD", f"{self.player(seat)} put his last card on the table without a discard"
            )
            self._end_round()

    # -- moves --------------------------------------------------------------------------------
    def apply_Drew(self, event: Event) -> None:
        seat = self._enter_move(event)
        if seat is None:
            return
        p = event["payload"]
        cards = parse_cards(p["cards"])
        if self.drawn:
            self.ctx.violation("R5-DRAW-STOCK", f"{self.player(seat)} drew twice in one turn")
        hand = self.hands[seat]
        if p["source"] == "stock":
            # R5-DRAW-STOCK: the top stock card, one card.
            if len(cards) != 1:
                self.ctx.violation("R5-DRAW-STOCK", f"a stock draw takes one card, this one took {len(cards)}")
            for c in cards:
                self.take_stock(c)
                hand[c] += 1
        else:
            self._take_from_pile(cards)
            for c in cards:
                hand[c] += 1
            deepest = cards[0]
            self.blocked[deepest] = self.blocked.get(deepest, 0) + 1  # R5-NODISCARD-TOP
            if len(cards) == 1:
                self.took_single = deepest
            else:
                self.must_use.append(deepest)  # R5-USE-BOTTOM
        self.drawn = True

    def _take_from_pile(self, cards: list[int]) -> None:
        """R5-DRAW-PILE: a card of the pile together with every card above it."""
        pile = self.pile
        k = len(cards)
        if pile[-k:] == cards:
            del pile[-k:]
            return
        text = " ".join(format_cards(cards))
        for start in range(len(pile) - k - 1, -1, -1):
            if pile[start:start + k] == cards:
                above = len(pile) - start - k
                self.ctx.violation(
                    "R5-DRAW-PILE", f"took {text} from the discard pile without the {above} card(s) above"
                )
                del pile[start:start + k]
                return
        if Counter(cards) <= Counter(pile):
            self.ctx.violation(
                "R5-DRAW-PILE", f"{text} is not a card of the discard pile with every card above it, deepest first"
            )
            for c in cards:
                del pile[len(pile) - 1 - pile[::-1].index(c)]
            return
        top = " ".join(format_cards(pile[-k:])) or "empty"
        raise self.ctx.halt("C-HOLD", f"the discard pile's top is {top}; it does not hold {text}")

    def _hold_all(self, seat: int, cards: Sequence[int]) -> None:
        """C-HOLD for several cards at once, before any leaves the hand."""
        hand = self.hands[seat]
        for c, k in Counter(cards).items():
            if hand[c] < k:
                raise self.ctx.halt(
                    "C-HOLD", f"{self.player(seat)} plays {format_card(c)} x{k} but holds {hand[c]}"
                )

    def apply_Melded(self, event: Event) -> None:
        self._fits = None  # the table may change (legal_moves' cache)
        seat = self._enter_move(event)
        if seat is None:
            return
        p = event["payload"]
        if not self.drawn:
            self.ctx.violation("R5-DRAW-STOCK", f"{self.player(seat)} melded before drawing")
        cards = parse_cards(p["cards"])
        self._hold_all(seat, cards)
        valid = scored = False
        try:
            # R5-MELD: sets of 3-4, runs of 3+, jokers wild (C-RUN, C-SET, C-WILD by error code)
            meld = validate_meld(p["kind"], cards, parse_as(p.get("as")), self.meld_rules)
            valid = scored = True
        except MeldError as err:
            self.ctx.violation(MELD_RULE[err.code], err.message)
            meld = Meld(p["kind"], list(cards), [c if c != JOKER else -1 for c in cards])
            if err.code == "wild_as":
                # only the `as` is wrong: the cards make a meld and the place of each wild
                # still fixes the card it stands for (C-WILD), which R5-VALUES scores; the
                # meld stays invalid (nothing fits it, no joker is swapped off it)
                try:
                    meld = validate_meld(p["kind"], cards, {}, self.meld_rules)
                    scored = True
                except MeldError:
                    pass
        meld.owner = seat
        if not scored:
            points = [RANK_POINTS[rank_of(c)] if c != JOKER else 0 for c in cards]
        elif meld.kind == "set":
            points = [RANK_POINTS[meld.rank]] * len(cards)
        else:
            ace_at = 1 if meld.lo == 1 else 14  # a run holds the ace low or high, never both
            points = [run_card_points(s, ace_at) for s in meld.stands]
        self.melds.append(TableMeld(meld, [seat] * len(cards), points, valid))
        hand = self.hands[seat]
        for c in cards:
            hand[c] -= 1
        self._placed(seat, cards)

    def _fit(self, tm: TableMeld, card: int, end: str | None) -> tuple[int, str] | None:
        """Where ``card`` goes on a table meld: ``(ladder value or rank, end)``, or None."""
        if not tm.valid:
            return None
        m, rules = tm.meld, self.meld_rules
        if m.kind == "set":
            if len(m.cards) >= 4:
                return None
            v = layoff_position(m, card, None, rules)
            return None if v is None else (v, "high")
        if card == JOKER:
            side = end or ("high" if m.hi < 14 else "low")  # C-WILD's reading of an unnamed end wild
            v = layoff_position(m, card, side, rules) if side not in tm.dead_ends else None
            return None if v is None else (v, side)
        fits = {side: v for side in ("low", "high") if side not in tm.dead_ends
                and (v := layoff_position(m, card, side, rules)) is not None}
        if end is not None:  # the logged end is where the platform put it: it must fit there
            return (fits[end], end) if end in fits else None
        if not fits:
            return None
        side = "high" if "high" in fits else "low"
        return fits[side], side

    def apply_LaidOff(self, event: Event) -> None:
        self._fits = None  # the table may change (legal_moves' cache)
        seat = self._enter_move(event)
        if seat is None:
            return
        p = event["payload"]
        if not self.drawn:
            self.ctx.violation("R5-LAYOFF", f"{self.player(seat)} laid off before drawing")
        index = p["meld"]
        if index >= len(self.melds):
            raise self.ctx.halt("C-HOLD", f"there is no meld {index} on the table ({len(self.melds)} melds)")
        card = parse_card(p["card"])
        self.take_from_hand(seat, card)
        tm = self.melds[index]
        m = tm.meld
        fit = self._fit(tm, card, p.get("end"))
        if fit is None:
            why = "an invalid meld" if not tm.valid else "where it does not fit"
            self.ctx.violation(
                "R5-LAYOFF", f"{format_card(card)} laid off on meld {index} "
                f"({' '.join(format_cards(m.cards))}), {why}"
            )
            at = 0 if m.kind == "run" and p.get("end") == "low" else len(m.cards)
            self._insert(tm, at, card, card if card != JOKER else -1, seat,
                         RANK_POINTS[rank_of(card)] if card != JOKER else 0)
            if m.kind == "run":
                # the card sits at that end, so nothing extends the run there any more
                tm.dead_ends |= {"low" if at == 0 else "high"}
        elif m.kind == "set":
            self._insert(tm, len(m.cards), card, card if card != JOKER else -1, seat, RANK_POINTS[m.rank])
        else:
            value, _side = fit
            stand = card if card != JOKER else ladder_card(value, m.suit)
            # R5-LAYOFF: the laid-off card's points go to the player who laid it off.
            points = run_card_points(stand, value)
            if value < m.lo:
                m.lo = value
                self._insert(tm, 0, card, stand, seat, points)
            else:
                m.hi = value
                self._insert(tm, len(m.cards), card, stand, seat, points)
        self._placed(seat, [card])

    @staticmethod
    def _insert(tm: TableMeld, at: int, card: int, stand: int, seat: int, points: int) -> None:
        tm.meld.cards.insert(at, card)
        tm.meld.stands.insert(at, stand)
        tm.by.insert(at, seat)
        tm.points.insert(at, points)

    def _swap_place(self, tm: TableMeld, card: int) -> int | None:
        """R5-SWAP: the place of the table joker that stands for ``card``, or None."""
        if card == JOKER or not tm.valid:
            return None
        m = tm.meld
        for i, c in enumerate(m.cards):
            if c == JOKER and m.stands[i] == card:
                return i
        if m.kind == "set" and rank_of(card) == m.rank:
            present = {suit_of(s) for s in m.stands if s >= 0}
            if suit_of(card) not in present:
                for i, c in enumerate(m.cards):
                    if c == JOKER and m.stands[i] < 0:
                        return i
        return None

    def apply_JokerSwapped(self, event: Event) -> None:
        self._fits = None  # the table may change (legal_moves' cache)
        seat = self._enter_move(event)
        if seat is None:
            return
        p = event["payload"]
        if not self.drawn:
            self.ctx.violation("R5-DRAW-STOCK", f"{self.player(seat)} swapped a joker before drawing")
        index = p["meld"]
        if index >= len(self.melds):
            raise self.ctx.halt("C-HOLD", f"there is no meld {index} on the table ({len(self.melds)} melds)")
        tm = self.melds[index]
        m = tm.meld
        jokers = [i for i, c in enumerate(m.cards) if c == JOKER]
        if not jokers:
            raise self.ctx.halt("C-HOLD", f"meld {index} ({' '.join(format_cards(m.cards))}) holds no joker")
        card = parse_card(p["card"])
        self.take_from_hand(seat, card)
        place = self._swap_place(tm, card)
        if place is None:
            stands = [format_card(m.stands[i]) if m.stands[i] >= 0 else "any missing suit" for i in jokers]
            self.ctx.violation(
                "R5-SWAP", f"{format_card(card)} given for a joker of meld {index}, "
                f"which stands for {', '.join(stands)}"
            )
            place = jokers[0]
        m.cards[place] = card
        if m.stands[place] < 0:
            m.stands[place] = card
        tm.by[place] = seat  # the giver put that card on the table (R5-SCORE)
        self.hands[seat][JOKER] += 1
        self._placed(seat, [card])

    def apply_Discarded(self, event: Event) -> None:
        seat = self._enter_move(event)
        if seat is None:
            return
        card = parse_card(event["payload"]["card"])
        if seat != self.current:  # the second discard of a finished turn (R5-DISCARD above)
            self.take_from_hand(seat, card)
            self.pile.append(card)
            return
        if not self.drawn:
            self.ctx.violation("R5-DRAW-STOCK", f"{self.player(seat)} discarded without drawing")
        hand = self.hands[seat]
        before = hand[card]
        self.take_from_hand(seat, card)
        if before <= self.blocked.get(card, 0):
            how = ("the single card taken from the discard pile" if card == self.took_single
                   else "the deepest of the cards taken from the discard pile")
            self.ctx.violation("R5-NODISCARD-TOP", f"{format_card(card)} was {how} this turn")
        self.pile.append(card)
        self._check_used()
        self.last_discarder = seat
        # R5-DISCARD / R5-END: out with the last card, or the stock is empty after a discard.
        if not any(hand) or not self.stock:
            self._end_round()
        else:
            self._start_turn(self.next_active(seat))

    def apply_StockReplenished(self, event: Event) -> None:
        """R5-END: Rummy 500 ends the round on an empty stock; it never restocks."""
        self.ctx.violation(
            "R5-END", "the stock was replenished; in r500 the round ends when the stock is empty"
        )
        if not self.in_round or self.over:
            return
        new_stock = parse_cards(event["payload"]["stock"])
        if Counter(new_stock) != Counter(self.stock) + Counter(self.pile[:-1]):
            raise self.ctx.halt(
                "C-HOLD", "the new stock is not the old stock plus the discard pile below its top"
            )
        self.stock = new_stock[::-1]
        self.pile = self.pile[-1:]

    # -- leaving --------------------------------------------------------------------------------
    def apply_PlayerLeft(self, event: Event) -> None:
        seat = self.seat(event["actor"])
        if seat is None:
            self.ctx.violation("C-TURN", f"{event['actor']} is not seated at this game")
            return
        self.left.add(seat)  # after the end or once out, too: a removal claim may confirm it
        if self.over or not self.active[seat]:
            return
        self._remove(seat, "left")

    def apply_PlayerRemoved(self, event: Event) -> None:
        p = event["payload"]
        pid, reason = p["player"], p["reason"]
        seat = self.seat(pid)
        if seat is None:
            self.ctx.discrepancy(f"PlayerRemoved names {pid}, who is not seated")
            return
        if reason == "left" and seat in self.left:
            return  # the claim that confirms his PlayerLeft (a leave may come at any moment)
        if not self.active[seat]:
            why = self.out.get(seat, "")
            if not ((reason == "left" and why == "left") or (reason == "bust" and why in ("bust", "eliminated"))):
                self.ctx.discrepancy(f"{pid} removed for {reason!r}; by the rules he is out ({why or 'never'})")
            return
        if reason == "bust":
            if self.mode == "tournament":
                self.ctx.discrepancy(f"{pid} removed as bust, but he holds {self.stacks[seat]} chips")
            else:
                self.ctx.discrepancy(f"{pid} removed as bust, but {self.mode} mode has no busting")
        elif reason == "left":
            self.ctx.discrepancy(f"{pid} removed for leaving, but he did not leave")
        else:
            self.ctx.discrepancy(f"{pid} removed for {reason!r}, which r500 does not have")
        if not self.over:
            self._remove(seat, "removed")

    def _remove(self, seat: int, why: str) -> None:
        was_current = seat == self.current
        self.active[seat] = False
        self.out[seat] = why
        self.hands[seat] = [0] * NCARDS
        alive = self.active_seats()
        if len(alive) == 1:
            self.in_round = False
            self._finish(alive)
            return
        if self.in_round and was_current:
            if not self.stock:
                self._end_round()  # R5-END: he drew the last stock card and will not discard
            else:
                self._start_turn(self.next_active(seat))

    # -- scoring and results --------------------------------------------------------------------
    def _end_round(self) -> None:
        """R5-END reached: score the round (R5-SCORE) and settle it by mode (R5-GAME)."""
        self.in_round = False
        self.current = -1
        scored = [s for s in self.dealt if self.active[s]]
        credit = dict.fromkeys(scored, 0)
        for tm in self.melds:
            for by, points in zip(tm.by, tm.points, strict=True):
                if by in credit:
                    credit[by] += points
        # R5-SCORE: cards melded or laid off (and still on the table) minus cards in hand.
        scores = {s: credit[s] - hand_penalty(self.hands[s]) for s in scored}
        best = max(scores.values())
        winners = [self.player(s) for s in scored if scores[s] == best]
        for s, v in scores.items():
            self.totals[s] += v
        self.rounds_done += 1
        self.last_scores = {self.player(s): v for s, v in scores.items()}
        self.round_results[self.round_no] = (sorted(winners), dict(self.last_scores))
        self._settle(scores)

    def _settle(self, scores: dict[int, int]) -> None:
        """R5-GAME by mode, after a round's scores are in."""
        mode = self.mode
        if mode == "tournament":
            # R5-CHIPS: losers pay the round winner(s), capped at their stacks.
            for src, dst, amount in chip_payments(scores, self.config["chip_ratio"], self.stacks):
                self.stacks[src] -= amount
                self.stacks[dst] += amount
                self.ctx.transfer(self.player(src), self.player(dst), amount, f"round {self.round_no}")
            alive = self.active_seats()
            busted = [s for s in alive if self.stacks[s] <= 0]
            if len(busted) == len(alive):
                best = max(scores.values())
                busted = [s for s in busted if scores.get(s) != best]
            for s in busted:
                self.active[s] = False
                self.out[s] = "bust"
            alive = self.active_seats()
            if len(alive) <= 1:
                self._finish(alive)
        elif mode == "rounds":
            if self.rounds_done >= self.config["rounds"]:
                alive = self.active_seats()
                best = max(self.totals[s] for s in alive)
                self._finish([s for s in alive if self.totals[s] == best])
        else:
            alive = self.active_seats()
            if self.playoff or any(self.totals[s] >= self.config["target"] for s in alive):
                best = max(self.totals[s] for s in alive)
                leaders = [s for s in alive if self.totals[s] == best]
                if len(leaders) == 1:
                    self._finish(leaders)
                else:  # tied leaders: the others are eliminated, the tied play on
                    self.playoff = True
                    for s in alive:
                        if s not in leaders:
                            self.active[s] = False
                            self.out[s] = "eliminated"

    def _finish(self, winners: list[int]) -> None:
        """The game is over: R5-POT pays the pot to the winner(s), split on a tie."""
        self.over = True
        self.current = -1
        self.game_winners = sorted(winners)
        if self.mode != "tournament" and winners:
            for seat, amount in split_evenly(self.pot, winners):
                self.ctx.transfer("pot", self.player(seat), amount, "pot")
            self.pot = 0

    # -- questions ------------------------------------------------------------------------------
    def is_over(self) -> bool:
        return self.over

    def winners(self) -> list[str]:
        return [self.player(s) for s in self.game_winners]

    def scores(self) -> dict[str, int]:
        return {pid: self.totals[s] for s, pid in enumerate(self.ctx.seats)}

    def round_result(self, round_no: int) -> tuple[list[str], dict[str, int]] | None:
        return self.round_results.get(round_no)

    def rounds_finished(self) -> int:
        return len(self.round_results)

    def deal_due(self) -> dict[str, Any] | None:
        if self.over or self.in_round or len(self.active_seats()) < 2:
            return None
        return {"round": self.round_no + 1, "dealer": self._next_dealer(), "redeal": 0,
                "cards": sorted(self.expected_deck().elements())}

    def to_act(self) -> list[str]:
        if self.over or not self.in_round or self.current < 0:
            return []
        return [self.player(self.current)]

    # -- legal moves (the simulator) --------------------------------------------------------------
    def legal_moves(self, player: str) -> list[Move]:
        """Clean moves for ``player`` now, restricted to moves after which the turn can
        still end cleanly: pile draws only to depths whose deepest card can then be used,
        and while it is unused only the moves that use it; no meld or lay-off that leaves
        the hand without a card that may be discarded.

        The simulator calls this before every move, so it is built for speed: the cards
        each table meld accepts are listed once per call (:meth:`_table_fits`) instead
        of testing every held card against every meld, meld windows that cannot reach
        three cards are skipped, and the "a discard is left" test is settled by a count
        whenever it can be. The moves and their order are those of the plain enumeration
        (``tests/test_sim_legal_moves.py`` keeps it as the reference)."""
        seat = self.seat(player)
        if seat is None or seat != self.current or self.over or not self.in_round:
            return []
        hand = self.hands[seat]
        fits = self._table_fits()
        if not self.drawn:
            return self._draw_moves(hand, fits)
        if self.must_use:
            return self._use_moves(hand, self.blocked, self.must_use[0], first_only=False, fits=fits)
        moves: list[Move] = []
        blocked = self.blocked
        size = sum(hand)
        spare = size - sum(blocked.values())  # cards free to discard, at least
        for kind, cards, as_map in all_melds(hand):
            if spare > len(cards) or _discard_left(hand, blocked, cards):
                moves.append(("Melded", _meld_payload(kind, cards, as_map)))
        for move, removed in self._layoffs(hand, None, fits):
            if spare > 1 or _discard_left(hand, blocked, removed):
                moves.append(move)
        for move, removed in self._swaps(hand, None, fits):
            if spare > 0 or _discard_left(hand, blocked, removed, True):
                moves.append(move)
        if blocked:
            moves.extend(("Discarded", {"card": _CODE[c]}) for c in range(NCARDS)
                         if hand[c] > blocked.get(c, 0))
        else:
            moves.extend(("Discarded", {"card": _CODE[c]}) for c in range(NCARDS) if hand[c])
        return moves

    def _table_fits(self) -> _Fits:
        """What the table accepts now: per valid meld, in meld order, the ``(card, end)``
        lay-offs that fit (sets: the missing suits of the rank and the joker; runs: the
        next card at each end and the joker there), cards ascending and ``low`` before
        ``high`` (the order of :meth:`_fit` tried card by card); and per meld holding a
        joker, the naturals a swap may give for it (R5-SWAP), ascending. Kept until a
        move changes the table (the apply methods that do drop it)."""
        if self._fits is None:
            self._fits = self._compute_fits()
        return self._fits

    def _compute_fits(self) -> _Fits:
        layoffs: list[tuple[int, list[tuple[int, str | None]]]] = []
        swaps: list[tuple[int, list[int]]] = []
        for index, tm in enumerate(self.melds):
            if not tm.valid:
                continue
            m = tm.meld
            entries: list[tuple[int, str | None]] = []
            if m.kind == "set":
                if len(m.cards) < 4:
                    present = {s & 3 for s in m.stands if s >= 0}
                    base = m.rank << 2
                    entries = [(base + s, None) for s in range(4) if s not in present]
                    entries.append((JOKER, None))
            else:
                ladder = _LADDER[m.suit]
                low, high = m.lo - 1, m.hi + 1
                low_ok = low >= 1 and not (low == 1 and m.hi == 14) and "low" not in tm.dead_ends
                high_ok = high <= 14 and not (high == 14 and m.lo == 1) and "high" not in tm.dead_ends
                if low_ok:
                    entries.append((ladder[low], "low"))
                if high_ok:
                    entries.append((ladder[high], "high"))
                entries.sort(key=_fit_order)
                if low_ok:
                    entries.append((JOKER, "low"))
                if high_ok:
                    entries.append((JOKER, "high"))
            if entries:
                layoffs.append((index, entries))
            if JOKER in m.cards:
                wanted: set[int] = set()
                for i, c in enumerate(m.cards):
                    if c != JOKER:
                        continue
                    if m.stands[i] >= 0:
                        wanted.add(m.stands[i])
                    else:
                        present = {suit_of(s) for s in m.stands if s >= 0}
                        wanted.update(make_card(m.rank, s) for s in range(4) if s not in present)
                if wanted:
                    swaps.append((index, sorted(wanted)))
        return layoffs, swaps

    def _draw_moves(self, hand: list[int], fits: _Fits | None = None) -> list[Move]:
        if fits is None:
            fits = self._table_fits()
        moves: list[Move] = []
        if self.stock:
            moves.append(("Drew", {"source": "stock", "cards": [_CODE[self.stock[-1]]]}))
        pile = self.pile
        added: list[int] = []
        # a deep card that fits the table is usable while a card is left to discard
        fit_cards = {c for _i, entries in fits[0] for c, _end in entries}
        swap_cards = {c for _i, wanted in fits[1] for c in wanted}
        size = sum(hand)
        try:
            for k in range(1, len(pile) + 1):
                card = pile[-k]
                hand[card] += 1
                size += 1
                added.append(card)
                spare = size - 1  # the deepest card may not be discarded
                if k == 1:
                    usable = True
                elif card in fit_cards or card in swap_cards:
                    usable = (card in fit_cards and spare > 1) or (card in swap_cards and spare > 0) \
                        or bool(self._use_moves(hand, {card: 1}, card, first_only=True, fits=fits))
                else:  # no lay-off or swap for it: a meld through it, or nothing
                    usable = any(spare > len(cards) or _discard_left(hand, {card: 1}, cards)
                                 for _kind, cards, _as in melds_through(hand, card))
                if usable:
                    moves.append(("Drew", {"source": "discard", "cards": format_cards(pile[-k:])}))
        finally:
            for c in added:
                hand[c] -= 1
        return moves

    def _use_moves(self, hand: list[int], blocked: dict[int, int], card: int, *, first_only: bool,
                   fits: _Fits | None = None) -> list[Move]:
        """Moves that meld, lay off or swap ``card`` (a deep draw's deepest card) and keep
        a card to discard; with ``first_only`` stop at the first one found."""
        if fits is None:
            fits = self._table_fits()
        moves: list[Move] = []
        spare = sum(hand) - sum(blocked.values())
        for move, removed in self._layoffs(hand, card, fits):
            if spare > 1 or _discard_left(hand, blocked, removed):
                moves.append(move)
                if first_only:
                    return moves
        for move, removed in self._swaps(hand, card, fits):
            if spare > 0 or _discard_left(hand, blocked, removed, True):
                moves.append(move)
                if first_only:
                    return moves
        for kind, cards, as_map in melds_through(hand, card):
            if spare > len(cards) or _discard_left(hand, blocked, cards):
                moves.append(("Melded", _meld_payload(kind, cards, as_map)))
                if first_only:
                    return moves
        return moves

    def _layoffs(self, hand: list[int], only: int | None,
                 fits: _Fits | None = None) -> Iterator[tuple[Move, list[int]]]:
        """Lay-offs of held cards (or of ``only``), meld by meld, as ``(move, [card])``."""
        for index, entries in (fits or self._table_fits())[0]:
            for c, end in entries:
                if hand[c] <= 0 or (only is not None and c != only):
                    continue
                if end is None:
                    yield ("LaidOff", {"card": _CODE[c], "meld": index}), [c]
                else:
                    yield ("LaidOff", {"card": _CODE[c], "meld": index, "end": end}), [c]

    def _swaps(self, hand: list[int], only: int | None,
               fits: _Fits | None = None) -> Iterator[tuple[Move, list[int]]]:
        for index, wanted in (fits or self._table_fits())[1]:
            for c in wanted:
                if hand[c] > 0 and (only is None or c == only):
                    yield ("JokerSwapped", {"meld": index, "card": _CODE[c]}), [c]

    # -- views ------------------------------------------------------------------------------------
    def snapshot(self, viewer: str | None = None) -> dict[str, Any]:
        out = self.table_snapshot(viewer)
        out.update(
            {
                "mode": self.mode,
                "melds": [
                    {
                        "kind": tm.meld.kind,
                        "cards": format_cards(tm.meld.cards),
                        "stands": [format_card(s) if s >= 0 else None for s in tm.meld.stands],
                        "owner": self.player(tm.meld.owner),
                        "by": [self.player(s) for s in tm.by],
                        "points": list(tm.points),
                        "valid": tm.valid,
                    }
                    for tm in self.melds
                ],
                "pots": {"pot": self.pot} if self.mode != "tournament" else {},
                "scores": self.scores(),
                "round_scores": dict(self.last_scores),
                "drawn": self.drawn,
                "must_use": format_cards(self.must_use),
                "out": {self.player(s): why for s, why in sorted(self.out.items())},
                "over": self.over,
                "winners": self.winners(),
            }
        )
        if self.mode == "tournament":
            out["stacks"] = {pid: self.stacks[s] for s, pid in enumerate(self.ctx.seats)}
        return out


# --- meld search for legal moves (53-count hands) ---------------------------------------------


def _meld_payload(kind: str, cards: list[int], as_map: dict[int, int] | None) -> dict[str, Any]:
    payload: dict[str, Any] = {"kind": kind, "cards": format_cards(cards)}
    if as_map:
        payload["as"] = {str(i): format_card(c) for i, c in as_map.items()}
    return payload


def _discard_left(hand: list[int], blocked: dict[int, int], removed: Sequence[int], gets_joker: bool = False) -> bool:
    """True if, after ``removed`` leave the hand (and a joker comes in for a swap), a card
    that may be discarded is left (R5-DISCARD, R5-NODISCARD-TOP)."""
    for c in removed:
        hand[c] -= 1
    if gets_joker:
        hand[JOKER] += 1
    try:
        gone = Counter(removed)
        return any(k > max(0, blocked.get(c, 0) - gone[c]) for c, k in enumerate(hand) if k)
    finally:
        for c in removed:
            hand[c] += 1
        if gets_joker:
            hand[JOKER] -= 1


def set_melds(hand: Sequence[int], rank: int, must: int | None = None) -> Iterator[tuple[str, list[int], None]]:
    """Sets of ``rank`` from the hand (naturals plus up to two jokers), 3 or 4 cards;
    with ``must`` only those holding that card."""
    base = rank << 2
    naturals = [c for c in range(base, base + 4) if hand[c] > 0]
    jokers = min(hand[JOKER], 2)
    if len(naturals) + jokers < 3:
        return  # no set of three (the common case: skip the combinations)
    for m in range(1, len(naturals) + 1):
        for combo in combinations(naturals, m):
            if must is not None and must != JOKER and must not in combo:
                continue
            for j in range(jokers + 1):
                if 3 <= m + j <= 4 and not (must == JOKER and j == 0):
                    yield "set", [*combo, *[JOKER] * j], None


def run_melds(
    hand: Sequence[int], suit: int, must_values: tuple[int, ...] = (), need_joker: bool = False
) -> Iterator[tuple[str, list[int], dict[int, int] | None]]:
    """Runs of ``suit`` from the hand, jokers filling gaps (leading jokers named with
    ``as``, C-WILD); with ``must_values`` only windows through one of those ladder values."""
    for lo, hi, missing, cards, as_map in _run_windows(suit, _suit_mask(hand, suit), hand[JOKER]):
        if need_joker and not missing:
            continue
        if must_values and not any(lo <= mv <= hi for mv in must_values):
            continue
        yield "run", list(cards), dict(as_map) if as_map else None


def _suit_mask(hand: Sequence[int], suit: int) -> int:
    """Bit ``rank`` set for every rank of ``suit`` held."""
    mask = 0
    for rank in range(13):
        if hand[(rank << 2) | suit]:
            mask |= 1 << rank
    return mask


#: (suit, rank mask, jokers) -> the run windows, in the order run_melds yields them
_RUNS: dict[tuple[int, int, int], tuple[tuple[int, int, int, tuple[int, ...], dict[int, int] | None], ...]] = {}


def _run_windows(suit: int, mask: int, jokers: int) -> tuple[tuple[int, int, int, tuple[int, ...], dict[int, int] | None], ...]:
    """Every run the held ranks of one suit allow with ``jokers`` jokers, as ``(lowest
    value, highest value, jokers used, cards, as)``: windows ``lo..hi`` of three or more
    places by ``lo`` then ``hi``, jokers filling the gaps, at least one natural. A pure
    function of its key, so it is computed once per key (hands repeat their suits)."""
    key = (suit, mask, jokers)
    found = _RUNS.get(key)
    if found is not None:
        return found
    ladder = _LADDER[suit]
    held = [False] * 16
    for v in range(1, 15):
        held[v] = bool(mask >> (12 if v in (1, 14) else v - 2) & 1)
    out: list[tuple[int, int, int, tuple[int, ...], dict[int, int] | None]] = []
    for lo in range(1, 13):
        # every run from ``lo`` holds lo..lo+2: skip windows that cannot reach three cards
        if (not held[lo]) + (not held[lo + 1]) + (not held[lo + 2]) > jokers:
            continue
        cards: list[int] = []
        missing = naturals = 0
        for v in range(lo, 15):
            if lo == 1 and v == 14:
                break
            if held[v]:
                cards.append(ladder[v])
                naturals += 1
            else:
                cards.append(JOKER)
                missing += 1
                if missing > jokers:
                    break
            if len(cards) < 3 or not naturals:
                continue
            lead = next(i for i, x in enumerate(cards) if x != JOKER)
            as_map = {i: ladder[lo + i] for i in range(lead)} or None
            out.append((lo, v, missing, tuple(cards), as_map))
    result = tuple(out)
    if len(_RUNS) < 50_000:
        _RUNS[key] = result
    return result


def all_melds(hand: Sequence[int]) -> Iterator[tuple[str, list[int], dict[int, int] | None]]:
    jokers = hand[JOKER]
    spare = min(jokers, 2)
    for rank in range(13):
        b = rank << 2
        if (hand[b] > 0) + (hand[b + 1] > 0) + (hand[b + 2] > 0) + (hand[b + 3] > 0) + spare >= 3:
            yield from set_melds(hand, rank)
    masks = [0, 0, 0, 0]
    for c in range(52):
        if hand[c]:
            masks[c & 3] |= 1 << (c >> 2)
    for suit in range(4):
        for _lo, _hi, _missing, cards, as_map in _run_windows(suit, masks[suit], jokers):
            yield "run", list(cards), dict(as_map) if as_map else None


def melds_through(hand: Sequence[int], card: int) -> Iterator[tuple[str, list[int], dict[int, int] | None]]:
    """Melds from the hand that hold ``card``."""
    if card == JOKER:
        for rank in range(13):
            yield from set_melds(hand, rank, JOKER)
        for suit in range(4):
            yield from run_melds(hand, suit, need_joker=True)
        return
    yield from set_melds(hand, rank_of(card), card)
    values = (1, 14) if rank_of(card) == ACE else (rank_of(card) + 2,)
    yield from run_melds(hand, suit_of(card), values)


# --- a simple player (tests and the simulator) ------------------------------------------------


def suggest(state: Rummy500, player: str, moves: Sequence[Move]) -> Move:
    """A greedy, honest choice among ``moves`` (what ``legal_moves`` offered): take a pile
    card that melds or lays off at once, meld and lay off the most points, swap jokers
    only when that uses a deep draw, discard the least connected, costliest card. It
    reaches a ``target`` in a few rounds where uniform random play rarely does."""
    seat = state.seat(player)
    assert seat is not None
    hand = state.hands[seat]
    draws = [m for m in moves if m[0] == "Drew"]
    if draws:
        best: Move | None = None
        best_gain = 0
        for move in draws:
            p = move[1]
            if p["source"] != "discard":
                continue
            cards = parse_cards(p["cards"])
            if len(cards) > 3:
                continue
            if len(cards) == 1:
                top = cards[0]
                hand[top] += 1
                try:
                    usable = any(True for _ in melds_through(hand, top))
                finally:
                    hand[top] -= 1
                usable = usable or any(True for _ in state._layoffs(_with(hand, top), top))
                if not usable:
                    continue
            gain = sum(RANK_POINTS[rank_of(c)] if c != JOKER else 10 for c in cards[:1]) - 3 * (len(cards) - 1)
            if gain > best_gain:
                best, best_gain = move, gain
        if best is not None:
            return best
        stock = [m for m in draws if m[1]["source"] == "stock"]
        return stock[0] if stock else draws[0]

    def meld_points(move: Move) -> int:
        cards = parse_cards(move[1]["cards"])
        return sum(RANK_POINTS[rank_of(c)] if c != JOKER else 8 for c in cards)

    melds = [m for m in moves if m[0] == "Melded"]
    if melds:
        return max(melds, key=lambda m: (meld_points(m), m[1]["cards"]))
    layoffs = [m for m in moves if m[0] == "LaidOff" and m[1]["card"] != "JK"]
    if layoffs:
        return max(layoffs, key=lambda m: (HAND_PENALTY[parse_card(m[1]["card"])], m[1]["card"]))
    discards = [m for m in moves if m[0] == "Discarded"]
    if not discards:  # a deep draw's deepest card must be used first
        return moves[0]

    def keep_value(move: Move) -> tuple[int, int]:
        c = parse_card(move[1]["card"])
        if c == JOKER:
            return (100, 0)
        r, s = rank_of(c), suit_of(c)
        near = sum(hand[make_card(r, t)] for t in range(4) if t != s)
        near += sum(1 for d in (-2, -1, 1, 2) if 0 <= r + d < 13 and hand[make_card(r + d, s)])
        return (near, -HAND_PENALTY[c])

    return min(discards, key=keep_value)


def _with(hand: list[int], card: int) -> list[int]:
    out = list(hand)
    out[card] += 1
    return out


__all__ = [
    "HAND_PENALTY",
    "RANK_POINTS",
    "Rummy500",
    "TableMeld",
    "all_melds",
    "chip_payments",
    "hand_penalty",
    "melds_through",
    "run_card_points",
    "split_evenly",
    "suggest",
]
