"""An independent move-legality referee for classic 14-card rummy and Rummy 500.

Why this exists: the simulator chooses its moves through ``rummyguard.replay``, so a rule
misread by the engine is also "obeyed" by every simulated game and replays clean. This
module judges every move of a game from spec/RULES.md §0, §1, §2, §5 and spec/EVENTS.md
alone, written without reading or importing ``rummyguard.replay``; differential tests
(tests/test_referee_classic_r500.py) compare it with ``replay(events)``.

What it decides, per event: legal, or the rule ID it breaks (kind ``violation``), or a
card that is not where the event says (C-HOLD, kind ``integrity``: the referee halts, as
the replay must). A violation is recorded and the move applied as the platform applied
it (§5, ARCHITECTURE "Replay"). Claims (scores, transfers, removals, auto-plays) are
judged by the independent results oracle (tests/oracle_classic_r500.py) and merged in, so
:func:`referee` gives the whole list of findings the spec makes determinate.

Brute force over speed: melds are read by trying every base rank; nothing is cached.

Readings of the spec (each marked where it is used):

- Turn shape. A player's turn "starts" with his draw (classic CL-FIRST: the first player's
  first turn starts without one). A move of the *next* player while the player in turn has
  started but not discarded means that turn ended without its discard: CL-DISCARD /
  R5-DISCARD at that move (plus R5-USE-BOTTOM if the deepest pile card was left unused),
  and the move is then judged as the next player's. A discard by the player who has just
  discarded, before the next player moves, is a second discard of his turn (CL-DISCARD /
  R5-DISCARD). Any other move by someone not in turn is C-TURN.
- Melds (C-RUN, C-SET, C-WILD, CL-MELDS, R5-MELD): a natural out of its place, a mixed
  suit or a wrap is C-RUN; mixed ranks C-SET; an ``as`` that names what the wild cannot
  stand for (or names a non-wild) C-WILD; a meld of the wrong size, or (classic) a set
  repeating a suit, CL-MELDS / R5-MELD.
- Unnamed wilds at the low end of a run whose high end is not A stand above its top
  (§0 C-WILD: "a wild at the low end stands for the card below only when the high end is
  A"), wild by wild from the one nearest the naturals (``JK JK KH`` is Q-K-A); a named low
  wild may name the card below the run (positional) or the one that reading gives it.
- A lay-off that does not fit (R5-LAYOFF) is applied at the end the platform named; the
  run keeps its span, but that end is dead: the card there is the misfit, so no later
  card extends the run at that end.
- Multi-breach melds report one rule, in the order: set ranks (C-SET), size
  (CL-MELDS / R5-MELD), run shape (C-RUN), names (C-WILD).
- A move after the round's end (r500: R5-END) or the game's (C-TURN) is not applied; a
  move out of turn (C-TURN) gives the mover the turn, as the platform applied it.
- r500 rosters between rounds (R5-GAME playoffs, R5-CHIPS busts) come from the results
  oracle stepped in lockstep (it scores a broken meld and a misfit lay-off card by card,
  at face value, as its module notes say).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from oracle_classic_r500 import MOVES as ORACLE_MOVES
from oracle_classic_r500 import _apply, _Game, current, ms, oracle, rank_no

from rummyguard.events.cards import format_cards, standard_deck

Event = dict[str, Any]
Finding = tuple[int, str, str]
JK = "JK"
SUITS = "CDHS"

#: player moves (EVENTS.md: "the others are moves, made in turn")
MOVES = frozenset({"Drew", "Discarded", "Melded", "LaidOff", "JokerSwapped", "DeclaredRummy"})


class Halt(Exception):
    """§0 C-HOLD: the log and the state have parted; the replay halts."""

    def __init__(self, message: str, rule: str = "C-HOLD") -> None:
        super().__init__(message)
        self.rule = rule


# -- melds -----------------------------------------------------------------------------------------


def _ranks_of(card: str) -> tuple[int, ...]:
    """The ranks a natural can take in a run: the ace is 1 (low) or 14 (high)."""
    return (1, 14) if card[0] == "A" else (rank_no(card),)


def _card(rank: int, suit: str) -> str:
    return ("A" if rank in (1, 14) else "23456789TJQKA"[rank - 2]) + suit


def _valid_code(card: object) -> bool:
    return isinstance(card, str) and len(card) == 2 and card[0] in "23456789TJQKA" and card[1] in SUITS


@dataclass
class Reading:
    """A meld as the rules read it: ``stands[i]`` the card position i stands for (runs:
    rank 1..14 per position; sets: the set's rank). ``rule`` is the breach, if any."""

    kind: str
    rule: str | None
    suit: str = ""
    ranks: list[int] = field(default_factory=list)  # runs: rank of each position
    rank: int = 0  # sets
    cards: list[str] = field(default_factory=list)


def _run_positions(cards: list[str], named: dict[int, str]) -> tuple[str | None, str, list[int]]:
    """(rule, suit, rank of each position) for a run listed low to high (§0 C-RUN, C-WILD)."""
    n = len(cards)
    naturals = [(i, c) for i, c in enumerate(cards) if c != JK]
    nat_suits = {c[1] for _, c in naturals}
    if len(nat_suits) > 1:
        return "C-RUN", "", []
    if not naturals and not named:
        return "C-WILD", "", []  # nothing fixes what the wilds stand for
    suit = next(iter(nat_suits)) if nat_suits else next(iter(named.values()))[1]
    # every base rank for position 0 under which the naturals sit at their places
    bases = []
    for base in range(-13, 15):
        ranks = [base + i for i in range(n)]
        if ranks[0] < 1 or ranks[-1] > 14:
            continue
        if all(ranks[i] in _ranks_of(c) for i, c in naturals):
            bases.append(base)
    first_nat = naturals[0][0] if naturals else n
    low_named = [i for i in named if i < first_nat]
    above = _above_reading(cards, first_nat, naturals) if naturals and first_nat > 0 else None
    if naturals and first_nat > 0 and not low_named:
        # unnamed low wilds: below only when the high end is A, else above the top
        if above is None:
            return "C-RUN", suit, []
        return (None if _named_ok(above, named, suit) else "C-WILD"), suit, above
    if low_named and naturals:
        # "may name it with as": a named low-end wild stands for what it names: read
        # positionally (the wilds inside it too), or wild by wild as above
        by_name = _above_reading(cards, first_nat, naturals, named)
        readings = [[b + i for i in range(n)] for b in bases] + ([by_name] if by_name else [])
        for ranks in readings:
            if _named_ok(ranks, named, suit):
                return None, suit, ranks
        if readings or above:
            # the cards make a run; the names do not
            return "C-WILD", suit, (readings or [above or []])[0]
        return "C-RUN", suit, []
    if not bases:
        return "C-RUN", suit, []
    if low_named:
        # a named low wild fixes the base (and the wilds inside are positional)
        good = [b for b in bases
                if all(b + i in _ranks_of(named[i]) and named[i][1] == suit for i in low_named)]
        if not good:
            return "C-WILD", suit, [bases[0] + i for i in range(n)]
        ranks = [good[0] + i for i in range(n)]
        return (None if _named_ok(ranks, named, suit) else "C-WILD"), suit, ranks
    # the first card is a natural: positions are fixed by it (an ace first is low unless
    # it is the only natural reading; prefer a reading that exists)
    ranks = [bases[0] + i for i in range(n)]
    return (None if _named_ok(ranks, named, suit) else "C-WILD"), suit, ranks


def _above_reading(cards: list[str], first_nat: int, naturals: list[tuple[int, str]],
                   named: dict[int, str] | None = None) -> list[int] | None:
    """Ranks of a run with ``first_nat`` leading wilds, read wild by wild from the one
    nearest the naturals (§0 C-WILD): a named wild stands for what it names, if that is
    the card just below or just above the run so far; an unnamed one stands below only
    when the high end is A, else above the top (``JK JK KH`` reads Q A K: the run Q-K-A).
    A lone ace written last is the high end (the list is low to high)."""
    named = named or {}
    tail = cards[first_nat:]
    lone_ace_last = len(naturals) == 1 and naturals[0][1][0] == "A" and naturals[0][0] == len(cards) - 1
    for base in range(1, 15):
        ranks = [base + i for i in range(len(tail))]
        if ranks[-1] > 14:
            continue
        if not all(ranks[i - first_nat] in _ranks_of(c) for i, c in naturals):
            continue
        if lone_ace_last and ranks[naturals[0][0] - first_nat] != 14:
            continue
        lo, hi = ranks[0], ranks[-1]
        wild: list[int] = []
        for j in range(first_nat - 1, -1, -1):
            name = named.get(j)
            if name is not None and lo - 1 in _ranks_of(name) and lo - 1 >= 1:
                below = True
            elif name is not None and hi + 1 in _ranks_of(name) and hi + 1 <= 14:
                below = False
            elif name is not None:
                return None
            else:
                below = hi == 14
            if below:
                lo -= 1
                wild.insert(0, lo)
            else:
                hi += 1
                wild.insert(0, hi)
        if lo < 1 or hi > 14 or (lo == 1 and hi == 14):
            return None
        return wild + ranks
    return None


def _named_ok(ranks: list[int], named: dict[int, str], suit: str) -> bool:
    """§0 C-WILD: every ``as`` names exactly the card its wild's position stands for."""
    return all(c[1] == suit and ranks[i] in _ranks_of(c) and (c[0] != "A" or ranks[i] in (1, 14))
               for i, c in named.items())


def read(kind: str, cards: list[str], as_: Any, variant: str) -> Reading:
    """Judge one meld (a ``Melded`` payload or one meld of a declaration)."""
    size_rule = "CL-MELDS" if variant == "classic" else "R5-MELD"
    named: dict[int, str] = {}
    bad_as = False
    if as_ is not None:
        if not isinstance(as_, dict):
            bad_as = True
        else:
            for k, v in as_.items():
                try:
                    i = int(k)
                except (TypeError, ValueError):
                    bad_as = True
                    continue
                if not (0 <= i < len(cards)) or cards[i] != JK or not _valid_code(v):
                    bad_as = True
                    continue
                named[i] = v
    if kind == "set" and len({c[0] for c in cards if c != JK}) > 1:
        return Reading("set", "C-SET", cards=cards)  # mixed ranks first
    if (kind == "set" and not 3 <= len(cards) <= 4) or (kind == "run" and len(cards) < 3):
        return Reading(kind, size_rule, cards=cards)  # then the size
    if kind == "set":
        naturals = [c for c in cards if c != JK]
        if len({c[0] for c in naturals}) > 1:
            return Reading("set", "C-SET", cards=cards)
        rank_c = naturals[0][0] if naturals else (next(iter(named.values()))[0] if named else "")
        if bad_as:
            return Reading("set", "C-WILD", cards=cards)
        if not rank_c:
            return Reading("set", "C-WILD", cards=cards)
        if any(v[0] != rank_c for v in named.values()):
            return Reading("set", "C-WILD", cards=cards)
        rank = rank_no(rank_c + "C")
        if not 3 <= len(cards) <= 4:
            return Reading("set", size_rule, rank=rank, cards=cards)
        nat_suits = [c[1] for c in naturals] + [v[1] for v in named.values()]
        if len(set(nat_suits)) != len(nat_suits):
            # classic: "all suits different" (CL-MELDS); r500 (one deck): the same reading
            # classic: "all suits different" (CL-MELDS); r500 has one deck, so a repeated
            # card is one a set of "3-4 of a rank" cannot hold (R5-MELD)
            return Reading("set", size_rule, rank=rank, cards=cards)
        return Reading("set", None, rank=rank, cards=cards)
    if kind != "run":
        return Reading(kind, size_rule, cards=cards)
    rule, suit, ranks = _run_positions(cards, named)
    if bad_as and rule is None:
        rule = "C-WILD"
    if rule is None and len(cards) < 3:
        rule = size_rule
    return Reading("run", rule, suit=suit, ranks=ranks, cards=cards)


# -- the fold --------------------------------------------------------------------------------------


@dataclass
class TableMeld:
    """An r500 meld on the table, as the rules read it."""

    reading: Reading
    #: run ends where a card that does not fit sits: nothing extends the run there
    dead: set[str] = field(default_factory=set)

    @property
    def valid(self) -> bool:
        return self.reading.rule is None


@dataclass
class Verdict:
    findings: list[Finding]
    halted: bool
    halt_seq: int | None = None


class Ref:
    """The referee's state while it reads one game."""

    def __init__(self, created: Event) -> None:
        p = created["payload"]
        self.variant: str = p["variant"]
        self.classic = self.variant == "classic"
        self.seats: list[str] = list(p["seats"])
        self.dealer0: int = int(p["dealer"])
        rules = {k: v for k, v in (p.get("rules") or {}).items() if v is not None}
        self.rules = rules
        self.out: list[Finding] = []
        self.active: list[str] = list(self.seats)
        self.left: set[str] = set()
        self.hands: dict[str, list[str]] = {}
        self.stock: list[str] = []
        self.pile: list[str] = []
        self.dealt = False
        self.round_live = False
        self.over = False
        self.round_no = 0
        self.dealer: int | None = None
        self.turn: str | None = None
        self.started = False  # the player in turn has drawn (or, CL-FIRST, needs no draw)
        self.first_turn = False  # classic: the first player's first turn is on
        self.just_discarded: str | None = None  # the player whose discard ended the last turn
        # classic
        self.first_player: str | None = None
        self.votes: set[str] = set()
        self.fresh_pending = False
        self.fresh_flagged = False
        self.turn_start = 0
        self.redeals = 0  # unanimous Fresh redeals dealt so far (RoundStarted.redeal)
        self.had_turn: set[str] = set()
        self.taken: str | None = None  # classic: the pile card taken this turn
        self.taken_had = 0  # copies of it held before the draw
        # r500
        self.melds: list[TableMeld] = []
        self.pile_draw: list[str] = []  # the cards of this turn's pile draw, deepest first
        self.pile_had: Counter[str] = Counter()  # hand copies of those codes before the draw
        self.bottom_used = True
        self.last_stock_drawer: str | None = None

    # helpers

    def find(self, seq: int, rule: str, kind: str = "violation") -> None:
        self.out.append((seq, rule, kind))

    def take(self, where: list[str], card: str, what: str) -> None:
        if card not in where:
            raise Halt(f"{card} is not in {what}")
        where.remove(card)

    def next_after(self, player: str) -> str | None:
        i = self.seats.index(player)
        for k in range(1, len(self.seats) + 1):
            s = self.seats[(i + k) % len(self.seats)]
            if s in self.active and (self.classic or s in self.hands):
                return s
        return None

    def pass_turn(self, after: str, now: int) -> None:
        """The turn goes left; its clock starts now (CL-TIMER)."""
        self.had_turn.add(after)
        self.turn = self.next_after(after)
        self.started = False
        self.first_turn = False
        self.taken = None
        self.pile_draw = []
        self.bottom_used = True
        self.turn_start = now

    def deadline(self, player: str) -> int:
        base = 30_000 if player in self.had_turn else 60_000
        return self.turn_start + base + 60_000

    # deal

    def deal(self, e: Event) -> None:
        """§0 C-DEAL, §1 CL-DEAL, §2 deal; CL-FRESH redeals; R5-END / R5-GAME timing."""
        seq, p = e["seq"], e["payload"]
        redeal = int(p.get("redeal", 0) or 0)
        if self.over:
            self.find(seq, "CL-RESULT" if self.classic else "R5-GAME")
            return
        if self.classic:
            if self.dealt:
                if not self.fresh_pending:
                    self.find(seq, "CL-FRESH")
                else:
                    self.redeals += 1
                    if redeal != self.redeals:  # EVENTS.md: n for the n-th Fresh redeal
                        self.find(seq, "CL-FRESH")
            elif redeal != 0:
                self.find(seq, "CL-FRESH")
            dealer = self.dealer0
        else:
            if self.round_live:
                self.find(seq, "R5-END")
            if redeal != 0:
                self.find(seq, "C-DEAL")
            dealer = self.dealer0 if self.dealer is None else self._next_dealer(self.dealer)
        if int(p["dealer"]) != dealer:
            self.find(seq, "C-DEAL")
            if 0 <= int(p["dealer"]) < len(self.seats):
                dealer = int(p["dealer"])  # dealt as the platform dealt it
        deck = list(p["deck"])
        want = (standard_deck(int(self.rules.get("decks", 2)), int(self.rules.get("jokers", 4)))
                if self.classic else standard_deck(1, 2))
        if Counter(deck) != Counter(format_cards(want)):
            self.find(seq, "C-DEAL")
        order = [self.seats[(dealer + 1 + k) % len(self.seats)] for k in range(len(self.seats))]
        order = [s for s in order if s in self.active]
        if self.classic:
            if self.first_player is None:
                self.first_player = order[0]
            elif self.first_player not in self.active:
                self.first_player = self.next_after(self.first_player)
            j = order.index(self.first_player) if self.first_player in order else 0
            order = order[j:] + order[:j]
            sizes = dict.fromkeys(order, 14)
            sizes[order[0]] = 15
        else:
            sizes = dict.fromkeys(order, 13 if len(order) == 2 else 7)
        self.dealer = dealer
        self.round_no += 1
        self.hands = {s: [] for s in order}
        if len(deck) < sum(sizes.values()) + 1:
            raise Halt("the deck is short", "CL-DEAL" if self.classic else "C-DEAL")
        while any(len(self.hands[s]) < sizes[s] for s in order):
            for s in order:
                if len(self.hands[s]) < sizes[s]:
                    self.hands[s].append(deck.pop(0))
        self.pile = [deck.pop(0)]
        self.stock = deck
        self.dealt = True
        self.round_live = True
        self.votes = set()
        self.fresh_pending = False
        self.fresh_flagged = False
        self.melds = []
        self.last_stock_drawer = None
        self.turn = order[0]
        self.started = self.classic  # CL-FIRST: the first turn needs no draw
        self.first_turn = self.classic
        self.just_discarded = None
        self.taken = None
        self.pile_draw = []
        self.bottom_used = True
        self.had_turn = set()
        self.turn_start = ms(e["ts"])

    def _next_dealer(self, dealer: int) -> int:
        """§2: the dealer moves left each round (to the next seat still in)."""
        n = len(self.seats)
        for k in range(1, n + 1):
            s = (dealer + k) % n
            if self.seats[s] in self.active:
                return s
        return (dealer + 1) % n

    # turn entry

    def enter(self, e: Event) -> bool:
        """Decide whether ``e`` (a move) is made by the player entitled to it; record the
        finding if not. Returns True when the move is judged as the turn player's."""
        seq, actor, t = e["seq"], e["actor"], e["type"]
        if actor not in self.seats or actor not in self.active or not self.dealt or self.over:
            self.find(seq, "C-TURN")
            return False
        if not self.classic and not self.round_live:
            self.find(seq, "R5-END")
            return False
        if self.classic and self.fresh_pending and not self.fresh_flagged:
            self.find(seq, "CL-FRESH")  # once: the platform played on instead of redealing
            self.fresh_flagged = True
        if actor == self.turn:
            return True
        if t == "Discarded" and actor == self.just_discarded:
            self.find(seq, "CL-DISCARD" if self.classic else "R5-DISCARD")
            return False
        if self.turn is not None and self.started and not self.first_turn \
                and actor == self.next_after(self.turn):
            # the player in turn drew and never discarded: his turn is over
            self.find(seq, "CL-DISCARD" if self.classic else "R5-DISCARD")
            if not self.classic and not self.bottom_used:
                self.find(seq, "R5-USE-BOTTOM")
            # no event ended that turn (CL-TIMER names none): this move starts the next
            self.pass_turn(self.turn, ms(e["ts"]))
            return True
        self.find(seq, "C-TURN")
        if self.turn is not None and self.started and not self.first_turn:
            self.had_turn.add(self.turn)  # he drew: that was his turn (CL-TIMER, audit 32)
        # play goes on as the platform applied it: the mover now holds the turn (a reading:
        # the spec does not say whose turn follows a move out of turn)
        if actor in self.hands:
            self.turn = actor
            self.started = False  # his move is then judged as his turn's (a draw first)
            self.first_turn = False
            # CL-TIMER times "a move of the player in turn": this one was not, so his
            # seized turn's clock starts with it (audit 9: it was timed from the clock of
            # the turn he broke into, a CL-TIMER finding the spec does not make)
            self.turn_start = ms(e["ts"])
            self.taken = None
            self.pile_draw = []
            self.bottom_used = True
            return True
        return False

    def timer(self, e: Event) -> None:
        """§1 CL-TIMER: a move of the player in turn later than start + base + extra."""
        if self.classic and e["actor"] == self.turn and ms(e["ts"]) > self.deadline(e["actor"]):
            self.find(e["seq"], "CL-TIMER")

    # moves

    def drew(self, e: Event, in_turn: bool) -> None:
        seq, actor, p = e["seq"], e["actor"], e["payload"]
        if in_turn:
            self.timer(e)
            if self.classic and self.first_turn:
                self.find(seq, "CL-FIRST")
            elif self.started:
                self.find(seq, "CL-DRAW" if self.classic else "R5-DRAW-STOCK")
        hand = self.hands.setdefault(actor, [])
        cards = list(p["cards"])
        if p["source"] == "stock":
            if len(cards) != 1:
                self.find(seq, "CL-DRAW" if self.classic else "R5-DRAW-STOCK")
            for c in cards:
                if not self.stock or self.stock[0] != c:
                    raise Halt(f"{c} is not the stock top")
                hand.append(self.stock.pop(0))
            if not self.stock:
                self.last_stock_drawer = actor
            if in_turn:
                self.taken = None
                self.pile_draw = []
        else:
            before = Counter(hand)
            k = len(cards)
            on_top = k >= 1 and self.pile[-k:] == cards if k <= len(self.pile) else False
            for c in cards:
                if c not in self.pile:
                    raise Halt(f"{c} is not in the discard pile")
            if self.classic:
                # CL-DRAW: the face-up top discard; a card from under it is not where the
                # event says (C-HOLD), a draw of several top cards is the wrong draw
                if not on_top:
                    raise Halt("not the top of the discard pile")
                if k != 1:
                    self.find(seq, "CL-DRAW")
            elif not on_top:
                self.find(seq, "R5-DRAW-PILE")
            for c in cards:
                # taken as logged: the copy nearest the top
                i = len(self.pile) - 1 - self.pile[::-1].index(c)
                self.pile.pop(i)
                hand.append(c)
            if in_turn and cards:
                self.taken = cards[-1] if k == 1 else None
                self.taken_had = before[cards[0]] if k == 1 else 0
                self.pile_draw = cards
                self.pile_had = before
                self.bottom_used = k <= 1
        if in_turn:
            self.started = True
            self.first_turn = False
        self.just_discarded = None

    def discarded(self, e: Event, in_turn: bool) -> None:
        seq, actor, card = e["seq"], e["actor"], e["payload"]["card"]
        now = ms(e["ts"])
        if in_turn:
            self.timer(e)
            if not self.started:
                self.find(seq, "CL-DRAW" if self.classic else "R5-DRAW-STOCK")
        hand = self.hands.get(actor, [])
        if card not in hand:
            raise Halt(f"{card} is not in {actor}'s hand")
        if in_turn:
            if self.classic:
                if card == JK:
                    self.find(seq, "CL-NODISCARD-JOKER")
                if self.taken is not None and card == self.taken and self.taken_had == 0:
                    self.find(seq, "CL-NODISCARD-TAKEN")
            else:
                self.r5_pile_discard(seq, card)
        hand.remove(card)
        self.pile.append(card)
        if in_turn or actor == self.turn:
            self.pass_turn(actor, now)
            self.just_discarded = actor
        if not self.classic and self.round_live and (not hand or not self.stock):
            self.round_live = False  # R5-DISCARD going out / R5-END stock empty

    def r5_pile_discard(self, seq: int, card: str) -> None:
        """§2 R5-NODISCARD-TOP and R5-USE-BOTTOM at the discard."""
        taken = self.pile_draw
        if taken:
            deepest = taken[0]
            if len(taken) == 1:
                if card == deepest and self.pile_had[card] == 0:
                    self.find(seq, "R5-NODISCARD-TOP")
            elif card == deepest and self.pile_had[card] + taken.count(card) - 1 == 0:
                self.find(seq, "R5-NODISCARD-TOP")
        if not self.bottom_used:
            self.find(seq, "R5-USE-BOTTOM")

    def note_use(self, card: str) -> None:
        if self.pile_draw and len(self.pile_draw) > 1 and card == self.pile_draw[0]:
            self.bottom_used = True

    def melded(self, e: Event, in_turn: bool) -> None:
        seq, actor, p = e["seq"], e["actor"], e["payload"]
        if in_turn and not self.started:
            self.find(seq, "R5-DRAW-STOCK")
        hand = self.hands.get(actor, [])
        cards = list(p["cards"])
        rest = list(hand)
        for c in cards:
            self.take(rest, c, f"{actor}'s hand")
        r = read(p["kind"], cards, p.get("as"), self.variant)
        if r.rule:
            self.find(seq, r.rule)
        hand[:] = rest
        self.melds.append(TableMeld(r))
        if in_turn:
            for c in cards:
                self.note_use(c)
        self.after_table_move(seq, actor)

    def after_table_move(self, seq: int, actor: str) -> None:
        if self.round_live and not self.hands.get(actor):
            # R5-DISCARD: the last card may not go to the table without a discard
            self.find(seq, "R5-DISCARD")
            self.round_live = False

    def laid_off(self, e: Event, in_turn: bool) -> None:
        seq, actor, p = e["seq"], e["actor"], e["payload"]
        card, i, end = p["card"], p["meld"], p.get("end")
        hand = self.hands.get(actor, [])
        early = in_turn and not self.started
        if early:
            self.find(seq, "R5-LAYOFF")  # "after drawing"
        if not isinstance(i, int) or not 0 <= i < len(self.melds):
            raise Halt("no such meld")
        if card not in hand:
            raise Halt(f"{card} is not in {actor}'s hand")
        m = self.melds[i]
        fits = self.fit(m, card, end)
        if not fits:
            self.find(seq, "R5-LAYOFF")
        hand.remove(card)
        if in_turn:
            self.note_use(card)
        self.after_table_move(seq, actor)

    def fit(self, m: TableMeld, card: str, end: str | None) -> bool:
        """§2 R5-LAYOFF: does ``card`` extend the meld (at ``end`` when given)? The meld is
        updated as the platform applied the lay-off either way."""
        r = m.reading
        if r.kind == "set":
            ok = m.valid and len(r.cards) < 4 and (card == JK or rank_no(card) == r.rank)
            if ok and card != JK:
                ok = card[1] not in {c[1] for c in r.cards if c != JK}
            r.cards.append(card)
            return ok
        if not m.valid or not r.ranks:
            r.cards.append(card)
            return False
        # a misfit's place is rank 0: the run keeps its span, the end it sits at is dead
        # (R5-LAYOFF "add cards to any meld": a card next to it extends no run)
        lo, hi = min(x for x in r.ranks if x), max(r.ranks)
        if card == JK:
            side = end or ("low" if hi == 14 else "high")
            rank = lo - 1 if side == "low" else hi + 1
            ok = 1 <= rank <= 14 and not (rank == 1 and hi == 14) and not (rank == 14 and lo == 1)
        else:
            ok_low = card[1] == r.suit and (lo - 1) in _ranks_of(card) and lo - 1 >= 1 \
                and not (lo - 1 == 1 and hi == 14)
            ok_high = card[1] == r.suit and (hi + 1) in _ranks_of(card) and hi + 1 <= 14 \
                and not (hi + 1 == 14 and lo == 1)
            if end == "low":
                ok, side = ok_low, "low"
            elif end == "high":
                ok, side = ok_high, "high"
            else:
                ok = ok_low or ok_high
                side = "low" if ok_low and not ok_high else "high"
            rank = lo - 1 if side == "low" else hi + 1
        ok = ok and side not in m.dead
        if not ok:
            rank = 0
            m.dead.add(side)
        if side == "low":
            r.ranks.insert(0, rank)
            r.cards.insert(0, card)
        else:
            r.ranks.append(rank)
            r.cards.append(card)
        return ok

    def swapped(self, e: Event, in_turn: bool) -> None:
        seq, actor, p = e["seq"], e["actor"], e["payload"]
        card, i = p["card"], p["meld"]
        hand = self.hands.get(actor, [])
        early = in_turn and not self.started
        if early:
            self.find(seq, "R5-DRAW-STOCK")  # R5-SWAP has no timing of its own
        if not isinstance(i, int) or not 0 <= i < len(self.melds):
            raise Halt("no such meld")
        r = self.melds[i].reading
        if JK not in r.cards:
            raise Halt("no joker in that meld")
        if card not in hand:
            raise Halt(f"{card} is not in {actor}'s hand")
        ok = self.melds[i].valid and card != JK
        if r.kind == "run":
            spots = [k for k, c in enumerate(r.cards) if c == JK]
            hit = [k for k in spots if ok and card[1] == r.suit and r.ranks[k] in _ranks_of(card)]
            k = hit[0] if hit else spots[0]
            ok = ok and bool(hit)
        else:
            k = r.cards.index(JK)
            ok = ok and rank_no(card) == r.rank and card[1] not in {c[1] for c in r.cards if c != JK}
        if not ok:
            self.find(seq, "R5-SWAP")
        r.cards[k] = card
        hand.remove(card)
        hand.append(JK)
        if in_turn:
            self.note_use(card)

    def declared(self, e: Event, in_turn: bool) -> None:
        """§1 CL-RUMMY, CL-MELDS, CL-LONGRUN (+ the discard rules for its discard)."""
        seq, actor, p = e["seq"], e["actor"], e["payload"]
        hand = self.hands.get(actor, [])
        rest = list(hand)
        if in_turn:
            self.timer(e)
        found: list[str] = []
        if in_turn and not self.started:
            found.append("CL-RUMMY")
            self.find(seq, "CL-RUMMY")  # reported even if the cards then are not there
        for m in p["melds"]:
            for c in m["cards"]:
                self.take(rest, c, f"{actor}'s hand")
        self.take(rest, p["discard"], f"{actor}'s hand")
        readings = [read(m["kind"], list(m["cards"]), m.get("as"), "classic") for m in p["melds"]]
        for r in readings:
            if r.rule and r.rule not in found:
                found.append(r.rule)
        if rest and "CL-RUMMY" not in found:
            found.append("CL-RUMMY")
        allow = self.rules.get("long_run_allows_joker", True)
        long_run = any(r.kind == "run" and r.rule is None and len(r.cards) >= 4
                       and (allow or JK not in r.cards) for r in readings)
        if not long_run and not any(r.rule for r in readings):
            found.append("CL-LONGRUN")
        if p["discard"] == JK:
            found.append("CL-NODISCARD-JOKER")
        if in_turn and self.taken is not None and p["discard"] == self.taken and self.taken_had == 0:
            found.append("CL-NODISCARD-TAKEN")
        for rule in found[1 if in_turn and not self.started else 0:]:
            self.find(seq, rule)
        hand[:] = rest
        self.pile.append(p["discard"])
        if in_turn and self.round_live:
            self.round_live = False
            self.over = True
            self.turn = None

    def autoplayed(self, e: Event) -> None:
        """Applied as logged (the oracle judges CL-AUTOPLAY / CL-STRIKES)."""
        p = e["payload"]
        who = p["player"]
        if who not in self.hands or who not in self.active:
            raise Halt(f"{who} holds no cards")
        if self.classic and self.fresh_pending and not self.fresh_flagged:
            # CL-FRESH: after a unanimous Fresh the round is redealt; an auto-play is the
            # platform playing on instead, as a move is (audit 9: only moves were checked)
            self.find(e["seq"], "CL-FRESH")
            self.fresh_flagged = True
        hand = self.hands[who]
        if p.get("drew") is not None:
            if not self.stock or self.stock[0] != p["drew"]:
                raise Halt("not the stock top")
            hand.append(self.stock.pop(0))
        self.take(hand, p["discarded"], f"{who}'s hand")
        self.pile.append(p["discarded"])
        if who == self.turn:
            self.pass_turn(who, ms(e["ts"]))
        self.just_discarded = None

    def remove(self, player: str, now: int) -> None:
        if player not in self.active:
            return
        was_turn = player == self.turn
        nxt = self.next_after(player) if was_turn else None
        self.active.remove(player)
        self.hands.pop(player, None)
        self.votes.discard(player)
        if self.just_discarded == player:
            self.just_discarded = None
        if len(self.active) <= 1:
            self.over = True
            self.round_live = False
            self.turn = None
            return
        if was_turn:
            self.had_turn.add(player)
            self.turn = nxt
            self.started = False
            self.first_turn = False
            self.taken = None
            self.pile_draw = []
            self.bottom_used = True
            self.turn_start = now
        if not self.classic and self.round_live and player == self.last_stock_drawer:
            self.round_live = False
        if self.classic:
            self.check_fresh()

    def check_fresh(self) -> None:
        if self.round_live and self.active and all(p in self.votes for p in self.active):
            self.fresh_pending = True

    def restock(self, e: Event) -> None:
        seq, new = e["seq"], list(e["payload"]["stock"])
        if not self.classic:
            self.find(seq, "R5-END")
            return
        # C-RESTOCK: only an exhausted stock is replenished, with the pile but its top
        if self.stock or not self.pile or Counter(new) != Counter(self.pile[:-1]):
            self.find(seq, "C-RESTOCK")
        rest = list(self.pile)
        for c in new:
            self.take(rest, c, "the discard pile")
        self.pile, self.stock = rest, new

    # r500 round end bookkeeping is the oracle's; the referee only needs "round live"

    def apply(self, e: Event) -> None:
        t, actor, seq = e["type"], e["actor"], e["seq"]
        now = ms(e["ts"])
        if t == "RoundStarted":
            self.deal(e)
        elif t in MOVES:
            in_turn = self.enter(e)
            if actor not in self.hands or actor not in self.active or self.over:
                return  # out of the game (or before the deal): his cards left play
            if not self.round_live:
                return  # after the round's end (R5-END) / the game's: not applied
            getattr(self, {"Drew": "drew", "Discarded": "discarded", "Melded": "melded",
                           "LaidOff": "laid_off", "JokerSwapped": "swapped",
                           "DeclaredRummy": "declared"}[t])(e, in_turn)
        elif t == "FreshPressed":
            if actor not in self.seats:
                self.find(seq, "C-TURN")
            elif actor not in self.active:
                return  # not a move (EVENTS.md), no turn rule; out of the game: no vote
            elif self.classic and self.round_live:
                self.votes.add(actor)
                self.check_fresh()
        elif t == "PlayerLeft":
            if actor not in self.seats:
                self.find(seq, "C-TURN")
                return
            self.left.add(actor)
            self.remove(actor, now)
        elif t == "PlayerRemoved":
            who, reason = e["payload"].get("player"), e["payload"].get("reason")
            if reason == "left" and self.classic and who in self.active and who not in self.left:
                self.find(seq, "CL-LEAVE")
            if who in self.seats and ((reason in ("left", "strikes") and self.classic)
                                      or (reason == "left" and who in self.left)):
                self.remove(who, now)
        elif t == "AutoPlayed":
            if self.over:
                return
            self.autoplayed(e)
        elif t == "StockReplenished":
            self.restock(e)


SKIP = frozenset({"GameCreated", "PlayerConnected", "PlayerDisconnected", "ChipsTransferred",
                  "RoundEnded", "GameEnded"})


def referee(events: list[Event], *, claims: bool = True) -> Verdict:
    """Judge one game's events (seq order): every finding the spec makes determinate, in
    seq order, and whether (and where) the game halts. ``claims`` merges the results
    oracle's claim findings (C-CLAIM, CL-AUTOPLAY, CL-STRIKES)."""
    events = [current(e) for e in events]
    created = next((e for e in events if e["type"] == "GameCreated"), None)
    if created is None:
        return Verdict([], True)
    ref, halt_seq = fold(events, created)
    out = list(ref.out)
    if claims:
        try:
            claimed = oracle(events).claims
        except Exception:
            claimed = []
        for f in claimed:
            if (halt_seq is None or f[0] < halt_seq) and f not in out:
                out.append(f)
    out.sort(key=lambda f: f[0])
    return Verdict(out, halt_seq is not None, halt_seq)


def fold(events: list[Event], created: Event, until: int | None = None) -> tuple[Ref, int | None]:
    """The referee's fold over ``events`` (up to index ``until``, exclusive): its state and
    the seq it halted at, if it did."""
    ref = Ref(created)
    # the results oracle, stepped in lockstep: r500 scoring decides who is still in at the
    # next deal (R5-GAME playoff, R5-CHIPS bust), which is the oracle's business
    shadow: _Game | None = _Game(created)
    halt_seq: int | None = None
    for e in events[:until]:
        if e is created or e["type"] in SKIP:
            continue
        if shadow is not None:
            if e["type"] == "RoundStarted" and not ref.classic and not shadow.out.over:
                ref.active = [s for s in ref.seats if s in shadow.active]
            try:
                if (ref.classic or ref.round_live or e["type"] not in MOVES) \
                        and not (shadow.out.over and e["type"] not in ("PlayerLeft", "PlayerRemoved")) \
                        and not (e["type"] in ORACLE_MOVES and e["actor"] not in shadow.active):
                    _apply(shadow, e)
            except Exception:
                shadow = None
        try:
            ref.apply(e)
            if shadow is not None and shadow.out.over:
                ref.over = True  # R5-GAME: the game ended with this event
        except Halt as h:
            ref.find(e["seq"], h.rule, "integrity")
            halt_seq = e["seq"]
            break
        except (KeyError, IndexError, ValueError, TypeError):
            ref.find(e["seq"], "C-HOLD", "integrity")
            halt_seq = e["seq"]
            break
    return ref, halt_seq


# -- mutants ---------------------------------------------------------------------------------------
#
# A mutant is a clean game with one move altered the way a platform bug or a cheat would
# alter it. The referee and the engine must agree on its FIRST finding and on halting.


def reseq(events: list[Event]) -> list[Event]:
    """Contiguous seqs and fresh event ids after an insertion or deletion; hash fields
    dropped (EVENTS.md: a producer may leave them out), so LOG-CHAIN cannot mask a rule."""
    out = []
    for i, e in enumerate(events):
        e = {k: v for k, v in e.items() if k not in ("hash", "prev_hash")}
        e["seq"] = i
        e["event_id"] = f"{e['game_id']}-m{i:05d}"
        out.append(e)
    return out


def _copy(e: Event, **payload: Any) -> Event:
    return {**e, "payload": {**e["payload"], **payload}}


def _turn_draw(events: list[Event], i: int) -> int | None:
    """Index of the draw that opened the turn of the move at ``i`` (same actor), if any."""
    actor = events[i]["actor"]
    for k in range(i - 1, -1, -1):
        e = events[k]
        if e["type"] in ("Discarded", "AutoPlayed", "RoundStarted", "DeclaredRummy"):
            return None
        if e["type"] == "Drew" and e["actor"] == actor:
            return k
    return None


def _state(events: list[Event], i: int) -> Ref:
    return fold(events, events[0], until=i)[0]


def _mut_discard_not_held(ev: list[Event], i: int) -> list[Event] | None:
    e = ev[i]
    if e["type"] != "Discarded":
        return None
    hand = _state(ev, i).hands.get(e["actor"], [])
    code = next((c for c in format_cards(range(52)) if c not in hand), None)
    return None if code is None else [*ev[:i], _copy(e, card=code), *ev[i + 1:]]


def _mut_discard_taken(ev: list[Event], i: int) -> list[Event] | None:
    e = ev[i]
    if e["type"] != "Discarded":
        return None
    k = _turn_draw(ev, i)
    if k is None or ev[k]["payload"]["source"] != "discard":
        return None
    taken = ev[k]["payload"]["cards"][0]  # the single card, or the deepest of several
    if taken == e["payload"]["card"]:
        return None
    if taken not in _state(ev, i).hands.get(e["actor"], []):
        return None
    return [*ev[:i], _copy(e, card=taken), *ev[i + 1:]]


def _mut_discard_joker(ev: list[Event], i: int) -> list[Event] | None:
    e = ev[i]
    if e["type"] != "Discarded" or e["payload"]["card"] == JK:
        return None
    if JK not in _state(ev, i).hands.get(e["actor"], []):
        return None
    return [*ev[:i], _copy(e, card=JK), *ev[i + 1:]]


def _mut_out_of_turn(ev: list[Event], i: int) -> list[Event] | None:
    e = ev[i]
    if e["type"] != "Drew":
        return None
    ref = _state(ev, i)
    others = [p for p in ref.active if p != e["actor"] and p in ref.hands]
    if len(others) < 1:
        return None
    # the player two seats on (or the one before, at a two-player table)
    who = others[-1]
    return [*ev[:i], {**e, "actor": who}, *ev[i + 1:]]


def _mut_drop(kind: str) -> Any:
    def mut(ev: list[Event], i: int) -> list[Event] | None:
        if ev[i]["type"] != kind or i + 1 >= len(ev) or ev[i + 1]["type"] not in MOVES:
            return None
        return reseq(ev[:i] + ev[i + 1:])
    return mut


def _mut_double_draw(ev: list[Event], i: int) -> list[Event] | None:
    e = ev[i]
    if e["type"] != "Drew" or e["payload"]["source"] != "stock":
        return None
    ref = _state(ev, i + 1)
    if not ref.stock:
        return None
    extra = _copy(e, cards=[ref.stock[0]])
    return reseq([*ev[:i + 1], extra, *ev[i + 1:]])


def _mut_stock_two(ev: list[Event], i: int) -> list[Event] | None:
    e = ev[i]
    if e["type"] != "Drew" or e["payload"]["source"] != "stock":
        return None
    ref = _state(ev, i)
    if len(ref.stock) < 2:
        return None
    return [*ev[:i], _copy(e, cards=ref.stock[:2]), *ev[i + 1:]]


def _mut_late(ev: list[Event], i: int) -> list[Event] | None:
    """Every event from ``i`` on 200 s later: the move at ``i`` is late (CL-TIMER)."""
    from rummyguard.events.timestamps import format_ts
    e = ev[i]
    if e["type"] not in MOVES:
        return None
    return ev[:i] + [{**x, "ts": format_ts(ms(x["ts"]) + 200_000)} for x in ev[i:]]


def _mut_first_draw(ev: list[Event], i: int) -> list[Event] | None:
    """Classic: the first player draws on his first turn (CL-FIRST)."""
    e = ev[i]
    if e["type"] not in ("Discarded", "DeclaredRummy") or ev[i - 1]["type"] != "RoundStarted":
        return None
    ref = _state(ev, i)
    if not ref.stock or e["actor"] != ref.turn:
        return None
    draw = {**e, "type": "Drew", "v": 2, "payload": {"source": "stock", "cards": [ref.stock[0]]}}
    return reseq([*ev[:i], draw, *ev[i:]])


def _mut_pile_shape(ev: list[Event], i: int) -> list[Event] | None:
    """r500: a pile draw listed top first, or missing the top card (R5-DRAW-PILE)."""
    e = ev[i]
    if e["type"] != "Drew" or e["payload"]["source"] != "discard":
        return None
    cards = e["payload"]["cards"]
    if len(cards) >= 2:
        return [*ev[:i], _copy(e, cards=list(reversed(cards))), *ev[i + 1:]]
    ref = _state(ev, i)
    if len(ref.pile) < 2:
        return None
    return [*ev[:i], _copy(e, cards=[ref.pile[-2]]), *ev[i + 1:]]


def _mut_pile_deeper(ev: list[Event], i: int) -> list[Event] | None:
    """r500: a pile draw that also takes the card below (legal), leaving it unused."""
    e = ev[i]
    if e["type"] != "Drew" or e["payload"]["source"] != "discard":
        return None
    ref = _state(ev, i)
    k = len(e["payload"]["cards"])
    if len(ref.pile) <= k:
        return None
    return [*ev[:i], _copy(e, cards=[ref.pile[-k - 1], *e["payload"]["cards"]]), *ev[i + 1:]]


def _mut_meld_reverse(ev: list[Event], i: int) -> list[Event] | None:
    e = ev[i]
    if e["type"] != "Melded" or e["payload"]["kind"] != "run":
        return None
    cards = list(reversed(e["payload"]["cards"]))
    as_ = e["payload"].get("as")
    payload: dict[str, Any] = {"kind": "run", "cards": cards}
    if as_:
        payload["as"] = {str(len(cards) - 1 - int(k)): v for k, v in as_.items()}
    return [*ev[:i], {**e, "payload": payload}, *ev[i + 1:]]


def _mut_meld_card(ev: list[Event], i: int) -> list[Event] | None:
    """r500: one card of a meld replaced by another card of the hand."""
    e = ev[i]
    if e["type"] != "Melded":
        return None
    hand = _state(ev, i).hands.get(e["actor"], [])
    cards = list(e["payload"]["cards"])
    spare = [c for c in hand if c not in cards and c != JK]
    nat = [k for k, c in enumerate(cards) if c != JK]
    if not spare or not nat:
        return None
    cards[nat[len(nat) // 2]] = spare[0]
    return [*ev[:i], _copy(e, cards=cards), *ev[i + 1:]]


def _mut_meld_kind(ev: list[Event], i: int) -> list[Event] | None:
    e = ev[i]
    if e["type"] != "Melded":
        return None
    kind = "set" if e["payload"]["kind"] == "run" else "run"
    return [*ev[:i], _copy(e, kind=kind), *ev[i + 1:]]


def _mut_wrong_as(ev: list[Event], i: int) -> list[Event] | None:
    """r500: an ``as`` naming a card the wild cannot stand for (C-WILD)."""
    e = ev[i]
    if e["type"] != "Melded" or JK not in e["payload"]["cards"]:
        return None
    cards = e["payload"]["cards"]
    k = cards.index(JK)
    nat = next((c for c in cards if c != JK), None)
    if nat is None:
        return None
    if e["payload"]["kind"] == "set":
        wrong = ("2" if nat[0] != "2" else "3") + nat[1]
    else:
        wrong = nat[0] + ("C" if nat[1] != "C" else "D")
    return [*ev[:i], _copy(e, **{"as": {str(k): wrong}}), *ev[i + 1:]]


def _mut_layoff_end(ev: list[Event], i: int) -> list[Event] | None:
    e = ev[i]
    if e["type"] != "LaidOff" or e["payload"]["card"] == JK or not e["payload"].get("end"):
        return None
    end = "low" if e["payload"]["end"] == "high" else "high"
    return [*ev[:i], _copy(e, end=end), *ev[i + 1:]]


def _mut_layoff_meld(ev: list[Event], i: int) -> list[Event] | None:
    e = ev[i]
    if e["type"] != "LaidOff":
        return None
    n = len(_state(ev, i).melds)
    if n < 2:
        return None
    return [*ev[:i], _copy(e, meld=(e["payload"]["meld"] + 1) % n), *ev[i + 1:]]


def _mut_swap_card(ev: list[Event], i: int) -> list[Event] | None:
    e = ev[i]
    if e["type"] != "JokerSwapped":
        return None
    hand = _state(ev, i).hands.get(e["actor"], [])
    spare = [c for c in hand if c not in (JK, e["payload"]["card"])]
    return None if not spare else [*ev[:i], _copy(e, card=spare[0]), *ev[i + 1:]]


def _mut_before_draw(ev: list[Event], i: int) -> list[Event] | None:
    """r500: a meld, lay-off or swap moved before the turn's draw."""
    e = ev[i]
    if e["type"] not in ("Melded", "LaidOff", "JokerSwapped"):
        return None
    k = _turn_draw(ev, i)
    if k is None or any(x["type"] != "Drew" for x in ev[k:i] if x["actor"] != e["actor"]):
        return None
    # only when the moved move does not use the drawn cards
    if set(ev[k]["payload"]["cards"]) & set([*e["payload"].get("cards", []), e["payload"].get("card")]):
        return None
    return reseq([*ev[:k], e, *ev[k:i], *ev[i + 1:]])


def _mut_declare_swap(ev: list[Event], i: int) -> list[Event] | None:
    """Classic: the declaration's discard trades places with a card of its first meld."""
    e = ev[i]
    if e["type"] != "DeclaredRummy":
        return None
    melds = [dict(m) for m in e["payload"]["melds"]]
    m0 = dict(melds[0])
    cards = list(m0["cards"])
    k = next((j for j, c in enumerate(cards) if c != JK), None)
    if k is None or e["payload"]["discard"] == cards[k]:
        return None
    discard = cards[k]
    cards[k] = e["payload"]["discard"]
    m0["cards"] = cards
    melds[0] = m0
    return [*ev[:i], _copy(e, melds=melds, discard=discard), *ev[i + 1:]]


def _mut_declare_short(ev: list[Event], i: int) -> list[Event] | None:
    e = ev[i]
    if e["type"] != "DeclaredRummy" or len(e["payload"]["melds"]) < 2:
        return None
    return [*ev[:i], _copy(e, melds=e["payload"]["melds"][:-1]), *ev[i + 1:]]


def _mut_fresh(ev: list[Event], i: int) -> list[Event] | None:
    """Classic: every active player presses Fresh, then play goes on (CL-FRESH)."""
    e = ev[i]
    if e["type"] not in MOVES:
        return None
    ref = _state(ev, i)
    if not ref.round_live or ref.fresh_pending:
        return None
    presses = [{**e, "type": "FreshPressed", "v": 1, "actor": p, "payload": {}}
               for p in ref.active if p not in ref.votes]
    return reseq(ev[:i] + presses + ev[i:])


def _mut_early_autoplay(ev: list[Event], i: int) -> list[Event] | None:
    from rummyguard.events.timestamps import format_ts
    e = ev[i]
    if e["type"] != "AutoPlayed":
        return None
    return [*ev[:i], {**e, "ts": format_ts(ms(ev[i - 1]["ts"]) + 1)}, *ev[i + 1:]]


#: name -> (variants, mutator); a mutator returns None where it does not apply
MUTATORS: dict[str, tuple[tuple[str, ...], Any]] = {
    "discard_not_held": (("classic", "r500"), _mut_discard_not_held),
    "discard_taken": (("classic", "r500"), _mut_discard_taken),
    "discard_joker": (("classic",), _mut_discard_joker),
    "out_of_turn": (("classic", "r500"), _mut_out_of_turn),
    "drop_draw": (("classic", "r500"), _mut_drop("Drew")),
    "drop_discard": (("classic", "r500"), _mut_drop("Discarded")),
    "double_draw": (("classic", "r500"), _mut_double_draw),
    "stock_two": (("classic", "r500"), _mut_stock_two),
    "late": (("classic",), _mut_late),
    "first_draw": (("classic",), _mut_first_draw),
    "pile_shape": (("classic", "r500"), _mut_pile_shape),
    "pile_deeper": (("r500",), _mut_pile_deeper),
    "meld_reverse": (("r500",), _mut_meld_reverse),
    "meld_card": (("r500",), _mut_meld_card),
    "meld_kind": (("r500",), _mut_meld_kind),
    "wrong_as": (("r500",), _mut_wrong_as),
    "layoff_end": (("r500",), _mut_layoff_end),
    "layoff_meld": (("r500",), _mut_layoff_meld),
    "swap_card": (("r500",), _mut_swap_card),
    "before_draw": (("r500",), _mut_before_draw),
    "declare_swap": (("classic",), _mut_declare_swap),
    "declare_short": (("classic",), _mut_declare_short),
    "fresh": (("classic",), _mut_fresh),
    "early_autoplay": (("classic",), _mut_early_autoplay),
}


def mutants(events: list[Event], per_kind: int = 2) -> list[tuple[str, int, list[Event]]]:
    """Up to ``per_kind`` mutants of each applicable kind for one clean game: (kind, the
    index of the altered event, the mutated events). Sites are spread over the game
    deterministically (no randomness: the same game gives the same mutants)."""
    events = [current(e) for e in events]
    variant = events[0]["payload"]["variant"]
    out = []
    for name, (variants, mut) in MUTATORS.items():
        if variant not in variants:
            continue
        sites = [i for i in range(1, len(events)) if events[i]["type"] not in SKIP]
        got = 0
        step = max(1, len(sites) // (per_kind * 4))
        for i in sites[len(sites) // (per_kind * 8)::step] + sites:
            if got >= per_kind:
                break
            m = mut(events, i)
            if m is not None:
                out.append((name, i, m))
                got += 1
                sites = [x for x in sites if x > i + 5]
    return out


__all__ = ["MUTATORS", "Halt", "Reading", "Verdict", "fold", "mutants", "read", "referee", "reseq"]
