"""An independent move-legality referee for Liverpool rummy (RULES.md §0, §3, §5) and
Michigan rummy with its three-in-one poker phase (§0, §4, §5).

Why it exists: the simulator chooses its moves through our own engine, so a misreading
of the rules of play shared by both would replay "clean" for ever. This module is a
second reading of RULES.md and EVENTS.md, written without reading or importing
``rummyguard.replay``: for every move it decides "legal" or names the rule it breaks,
and it halts where a card is not where the event says (C-HOLD, ``integrity``). The
platform's claims (scores, chips, removals) are judged by the results oracle of
tests/oracle_liverpool_michigan.py, whose C-CLAIM findings are merged in, so that one
:class:`Verdict` can be compared with ``replay(events)`` finding for finding.

Slow and plain on purpose: cards are their string codes, hands are Counters, a meld keeps
its cards and what each stands for. Readings taken where the spec leaves a choice are
written next to the code as "decided here"; where the first comparison with the engine
showed that the engine took another defensible reading of an open point (the order of
checks inside one event, play after an out-of-turn move, the Rummy caller, the widow
after the poker declarations, a restock onto a stock that was not empty), the referee
follows it and says so, so that the differential test flags only what the spec decides.

Covered: C-TURN, C-HOLD, C-DEAL (deck, dealer), C-RUN, C-SET, C-WILD (``as``),
C-RESTOCK, LOG-EVENT; LV-DRAW, LV-DISCARD, LV-CONTRACT, LV-WILD, LV-ALLOUT, LV-LAYOFF,
LV-BUY (window, discarder, laid-down buyer, ``max_buys``), LV-RUMMY, LV-OUT; MI-DEAL,
MI-WIDOW, MI-POKER, MI-START, MI-FOLLOW, MI-STOP, MI-END (dealer, deals). Claims
(C-CLAIM, MI-PENALTY chips, MI-PAY, MI-OUT, LV-SCORE) come from the results oracle.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from oracle_liverpool_michigan import card_code, drew_payload, oracle

from rummyguard.events.cards import RANKS, SUITS

Event = dict[str, Any]
Triple = tuple[int, str, str]  # (seq, rule, kind)

ACE_LOW, ACE_HIGH = 1, 14
# RULES.md §3 LV-CONTRACT: round -> (sets, runs).
CONTRACTS = {1: (2, 0), 2: (1, 1), 3: (0, 2), 4: (3, 0), 5: (2, 1), 6: (1, 2)}
LV_ROUNDS = 6
# EVENTS.md catalog: the events each variant knows (the others are LOG-EVENT, §5)
COMMON_EVENTS = frozenset({
    "PlayerConnected", "PlayerDisconnected", "PlayerLeft", "GameCreated", "RoundStarted",
    "PlayerRemoved", "ChipsTransferred", "RoundEnded", "GameEnded"})
LV_EVENTS = COMMON_EVENTS | {"Drew", "Discarded", "LaidDown", "LaidOff", "Bought", "RummyCalled",
                             "StockReplenished"}
MI_EVENTS = COMMON_EVENTS | {"WidowBought", "CardPlayed", "PokerHandDeclared"}


@dataclass
class Verdict:
    """The referee's findings ``(seq, rule, kind)`` in log order and whether the game
    halted (a card not where an event says it is)."""

    findings: list[Triple] = field(default_factory=list)
    halted: bool = False

    def first(self) -> tuple[list[Triple], bool]:
        """Every finding at the seq of the first one (sorted), and the halt flag: the part
        of a one-break log that the spec makes determinate."""
        if not self.findings:
            return [], self.halted
        seq = min(f[0] for f in self.findings)
        return sorted(f for f in self.findings if f[0] == seq), self.halted


class Halt(Exception):
    """A card is not where the event says: the log and the state have parted (C-HOLD)."""


def rank_value(card: str) -> int:
    """2..14, the ace high (its low reading, 1, is chosen by the run)."""
    return RANKS.index(card[0]) + 2


def value_card(value: int, suit: str) -> str:
    """The card of ``suit`` a run position of ``value`` (1..14) stands for."""
    return ("A" if value in (ACE_LOW, ACE_HIGH) else RANKS[value - 2]) + suit


class _Referee:
    """Shared by both variants: seats, who is still in, findings, halting."""

    def __init__(self, created: Event) -> None:
        p = created["payload"]
        self.seats: list[str] = list(p["seats"])
        self.n = len(self.seats)
        self.rules: dict[str, Any] = {k: v for k, v in (p.get("rules") or {}).items()
                                      if v is not None}
        self.active: list[str] = list(self.seats)
        self.dealer = int(p.get("dealer", 0))
        self.dealt = False  # no deal yet: the first dealer is GameCreated.dealer
        self.verdict = Verdict()
        self.seq = 0
        self.over = False

    def find(self, rule: str, kind: str = "violation") -> None:
        """One finding per broken check: the contract's shape and each broken meld of a
        lay-down are separate findings, even under one rule ID."""
        self.verdict.findings.append((self.seq, rule, kind))

    def halt(self) -> None:
        self.find("C-HOLD", "integrity")
        self.halt_here()

    def halt_here(self) -> None:
        self.verdict.halted = True
        raise Halt

    def check_dealer(self, logged: int, rule: str) -> None:
        """The dealer moves left each deal (§3, §4), skipping players who are out; the
        first is ``GameCreated.dealer``. A wrong dealer is a violation of ``rule``, and the
        deal is followed as the platform logged it, from left of the logged seat even if
        that player has left (ARCHITECTURE: applied as the platform applied it)."""
        want = self.seats.index(self.next_active(self.dealer)) if self.dealt else self.dealer
        if logged != want:
            self.find(rule)
        self.dealt = True
        self.dealer = logged

    def next_active(self, seat: int) -> str:
        """The first player still in, left of ``seat`` (the next seat, wrapping)."""
        for i in range(1, self.n + 1):
            q = self.seats[(seat + i) % self.n]
            if q in self.active:
                return q
        raise LookupError("nobody left")

    def order_from_left_of(self, seat: int) -> list[str]:
        return [self.seats[(seat + i) % self.n] for i in range(1, self.n + 1)
                if self.seats[(seat + i) % self.n] in self.active]


# == Liverpool ============================================================================


@dataclass
class Meld:
    """A table meld: ``cards`` as placed, ``values`` what each stands for (runs: 1..14;
    sets: the rank value), and whether it was valid when laid down."""

    kind: str
    owner: str
    cards: list[str]
    values: list[int | None]
    suit: str | None
    good: bool


@dataclass
class Live:
    """The top discard and its windows: ``state`` is ``open`` (the next player has not
    drawn: he may take it, a laid-down player may call Rummy on it), ``buy`` (the next
    player drew from the stock: it may be bought until he discards) or ``closed``."""

    card: str
    discarder: str | None
    state: str


def is_wild(card: str) -> bool:
    return card[0] == "2"  # RULES.md §3: "every 2 is wild"


def read_as(meld: dict[str, Any]) -> dict[int, str] | None:
    raw = meld.get("as")
    if raw is None:
        return None
    return {int(k): card_code(v) for k, v in raw.items()}


def _names_a_natural(cards: list[str], named: dict[int, str] | None) -> bool:
    return any(not (0 <= i < len(cards)) or not is_wild(cards[i]) for i in (named or {}))


def check_set(cards: list[str], named: dict[int, str] | None,
              distinct: bool) -> tuple[list[str], list[int]]:
    """The rule a set breaks, if any, and its values.

    One finding per meld (decided here: a meld is one thing laid down; the spec names no
    order between its rules, so the first failing check in this order is reported: an
    ``as`` that names a natural (C-WILD), too few naturals (LV-WILD), fewer than 3 cards
    (LV-CONTRACT), naturals of two ranks (C-SET), a named wild of another rank (C-WILD), a
    repeated suit (LV-CONTRACT))."""
    naturals = [c for c in cards if not is_wild(c)]
    ranks = {c[0] for c in naturals}
    rank = next(iter(ranks)) if len(ranks) == 1 else None
    value = rank_value(rank + "C") if rank else 0
    values = [value] * len(cards)
    if _names_a_natural(cards, named):
        return ["C-WILD"], values
    if len(naturals) < 2:
        return ["LV-WILD"], values
    if len(cards) < 3:
        return ["LV-CONTRACT"], values
    if len(ranks) > 1:
        return ["C-SET"], values
    # decided here: a set's wild may be named, as a card of the set's rank
    if any(c[0] != rank for c in (named or {}).values()):
        return ["C-WILD"], values
    if distinct and len({c[1] for c in naturals}) < len(naturals):
        return ["LV-CONTRACT"], values
    return [], values


def run_values(cards: list[str], named: dict[int, str] | None) -> tuple[list[str], list[int], str | None]:
    """The rule a run breaks, if any (one per meld, in the order: an ``as`` naming a
    natural C-WILD, too few naturals LV-WILD, not one suit or not consecutive C-RUN, a
    named wild that is not the card its place gives C-WILD, fewer than 4 cards
    LV-CONTRACT), and what each position stands for.

    Reading of C-WILD (RULES.md §0): the list is low to high and a wild's position fixes
    it, except the wilds written before the first natural (the low end): unnamed, they
    stand for the cards above the high end, or below the low end when the high end is the
    ace; named with ``as``, they stand for what is named, below the low end or above the
    high end. An ace is low when it is the first natural and
    others follow, high otherwise; an ace between naturals is a wrap (C-RUN)."""
    naturals = [(i, c) for i, c in enumerate(cards) if not is_wild(c)]
    values = [0] * len(cards)
    if _names_a_natural(cards, named):
        return ["C-WILD"], values, None
    if len(naturals) < 3:
        return ["LV-WILD"], values, None
    suit = naturals[0][1][1]
    if len(cards) < 4:
        return ["LV-CONTRACT"], values, suit
    if len({c[1] for _, c in naturals}) > 1:
        return ["C-RUN"], values, suit
    i0, first = naturals[0]
    v0 = ACE_LOW if first[0] == "A" else rank_value(first)
    for i in range(i0, len(cards)):
        values[i] = v0 + (i - i0)
    for i, c in naturals:
        if values[i] != rank_value(c) and not (c[0] == "A" and values[i] == ACE_LOW):
            return ["C-RUN"], values, suit
    lead = list(range(i0))
    named = named or {}
    if lead:
        top = values[-1]
        below = {i: v0 - (i0 - i) for i in lead}
        above = {i: top + 1 + k for k, i in enumerate(lead)}
        names = {i: c for i, c in named.items() if i in below}
        if names:
            # "a run whose wild is at an end may name it": either reading, as named
            def agrees(reading: dict[int, int]) -> bool:
                return all(ACE_LOW <= reading[i] <= ACE_HIGH and c == value_card(reading[i], suit)
                           for i, c in names.items())
            chosen = below if agrees(below) or not agrees(above) else above
        else:
            chosen = below if top == ACE_HIGH else above
        for i in lead:
            values[i] = chosen[i]
    if any(v < ACE_LOW or v > ACE_HIGH for v in values):
        return ["C-RUN"], values, suit
    if any(c != value_card(values[i], suit) for i, c in named.items()):
        return ["C-WILD"], values, suit
    return [], values, suit


class Liverpool(_Referee):
    """RULES.md §3 move by move."""

    def __init__(self, created: Event) -> None:
        super().__init__(created)
        self.distinct = bool(self.rules.get("set_distinct_suits", True))
        self.max_buys: int | None = self.rules.get("max_buys")
        self.round_no = 0
        self.in_round = False
        self.hands: dict[str, Counter[str]] = {}
        self.stock: list[str] = []  # top first
        self.pile: list[str] = []  # top last
        self.melds: list[Meld] = []
        self.laid: dict[str, int] = {}  # player -> turn number he laid down in
        self.turn: str | None = None
        self.turn_no = 0
        self.drawn = False
        self.live: Live | None = None
        self.buys: Counter[str] = Counter()

    # -- helpers ---------------------------------------------------------------------------
    def take(self, player: str, card: str) -> None:
        hand = self.hands[player]
        if hand[card] <= 0:
            self.halt()
        hand[card] -= 1
        if hand[card] == 0:
            del hand[card]

    def holds(self, player: str, cards: list[str]) -> bool:
        return not (Counter(cards) - self.hands[player])

    def new_turn(self, player: str) -> None:
        self.turn = player
        self.turn_no += 1
        self.drawn = False

    def end_round(self) -> None:
        self.in_round = False
        self.turn = None
        self.live = None
        if self.round_no >= LV_ROUNDS:
            self.over = True

    def after_hand_change(self, player: str, by_discard: bool) -> None:
        """LV-OUT: a player with no cards ends the round; LV-DISCARD unless it was by a
        discard or by the round-6 lay-down (LV-ALLOUT)."""
        if self.hands[player]:
            return
        if not by_discard:
            self.find("LV-DISCARD")
        self.end_round()

    def fits(self, meld: Meld, card: str, end: str | None) -> tuple[bool, str]:
        """Whether ``card`` may be laid off on ``meld`` (at ``end``), and the end it goes."""
        if not meld.good:
            return False, end or "high"
        if meld.kind == "set":
            if is_wild(card):
                return True, end or "high"
            ok = rank_value(card) == meld.values[0]
            if ok and self.distinct:
                ok = card[1] not in {c[1] for c in meld.cards if not is_wild(c)}
            return ok, end or "high"
        # a low-end wild may stand above; a card placed where it did not fit (None) moves
        # no end (decided here, for play after a violation: it stands for itself)
        known = [v for v in meld.values if v is not None]
        lo, hi = min(known), max(known)
        if is_wild(card):
            if end is None:
                end = "low" if hi == ACE_HIGH else "high"
            return (hi < ACE_HIGH) if end == "high" else (lo > ACE_LOW), end
        if card[1] != meld.suit:
            return False, end or "high"
        v = rank_value(card)
        high_ok = hi < ACE_HIGH and v == hi + 1
        low_ok = lo > ACE_LOW and (v == lo - 1 or (card[0] == "A" and lo == 2))
        if end == "high":
            return high_ok, end
        if end == "low":
            return low_ok, end
        return (high_ok or low_ok), ("high" if high_ok else "low")

    def place(self, meld: Meld, card: str, end: str, ok: bool) -> None:
        """Put ``card`` at ``end`` of ``meld`` as the platform did, fitting or not."""
        known = [v for v in meld.values if v is not None]
        if meld.kind == "set":
            value: int | None = meld.values[0]
        elif not ok:
            value = None
        else:
            value = min(known) - 1 if end == "low" else max(known) + 1
        if end == "low" and meld.kind == "run":
            meld.cards.insert(0, card)
            meld.values.insert(0, value)
        else:
            meld.cards.append(card)
            meld.values.append(value)

    def in_play(self, actor: str, rule_outside: str = "LV-OUT") -> bool:
        """Moves outside a round, after the game, or by someone not in it (C-TURN)."""
        if actor not in self.active or self.over:
            self.find("C-TURN")
            return False
        if not self.in_round:
            # nobody may act before the first deal (C-TURN); between rounds a turn move
            # breaks LV-OUT (the round is over), a buy or a call its own rule (no window)
            self.find("C-TURN" if self.round_no == 0 else rule_outside)
            return False
        return True

    # -- events ----------------------------------------------------------------------------
    def deal(self, event: Event) -> None:
        p = event["payload"]
        self.round_no += 1
        if not self.in_round:  # a redeal mid-round is LV-OUT alone
            self.check_dealer(int(p["dealer"]), "C-DEAL")
        self.dealer = int(p["dealer"])
        deck = [card_code(c) for c in p["deck"]]
        # "2 x 52 for up to 5 players, 3 x 52 for more": the players dealt in (a player who
        # left is not dealt to), the engine's reading too (tests/test_audit24_...)
        decks = 2 if len(self.active) <= 5 else 3
        if Counter(deck) != Counter(r + s for r in RANKS for s in SUITS for _ in range(decks)):
            self.find("C-DEAL")
        size = 10 if self.round_no <= 4 else 12
        order = self.order_from_left_of(self.dealer)
        self.hands = {q: Counter() for q in order}
        i = 0
        for _ in range(size):
            for q in order:
                self.hands[q][deck[i]] += 1
                i += 1
        self.pile = [deck[i]]
        self.stock = deck[i + 1:]
        self.melds = []
        self.laid = {}
        self.buys = Counter()
        self.in_round = True
        self.turn_no = 0
        self.new_turn(order[0])
        # decided (by the seed's card play, as the stored tests/data logs read it): the
        # face-up card is the first "discard", with no discarder
        self.live = Live(self.pile[-1], None, "open")

    def drew(self, actor: str, event: Event) -> None:
        source, cards = drew_payload(event)
        if self.in_turn(actor) and self.drawn:
            self.find("LV-DRAW")
        if len(cards) != 1:
            self.find("LV-DRAW")
        if source == "stock":
            # one card from the top of the stock; a longer list is read as the next ones
            if self.stock[:len(cards)] != cards:
                self.halt()
            del self.stock[:len(cards)]
        else:
            # EVENTS.md: "the cards taken, deepest first" -- the top of the pile last
            if not cards or self.pile[-len(cards):] != cards:
                self.halt()
            del self.pile[-len(cards):]
        for card in cards:
            self.hands[actor][card] += 1
        if actor == self.turn:
            self.drawn = True
            if self.live is not None:
                if source == "stock" and self.live.state == "open":
                    self.live.state = "buy"
                elif source != "stock":
                    self.live = None

    def in_turn(self, actor: str) -> bool:
        """C-TURN, with two readings of LV-DISCARD (decided here, as a reader of "a turn
        ends with one discard"): when the player in turn has drawn and the next player
        moves, the turn ended without a discard (LV-DISCARD) and the next one began; a
        second discard by the player whose discard just ended his turn is LV-DISCARD."""
        if actor == self.turn:
            return True
        if self.turn is not None and self.drawn and actor == self.next_active(self.seats.index(self.turn)):
            self.find("LV-DISCARD")
            if self.live is not None and self.live.state == "buy":
                self.live.state = "closed"
            self.new_turn(actor)
            return True
        # the move is applied as the platform applied it: the platform gave him the turn
        # (decided here, the engine's reading too; the spec says only "a violation")
        self.find("C-TURN")
        if self.live is not None and self.live.state == "buy":
            self.live.state = "closed"
        self.new_turn(actor)
        return True

    def need_draw(self) -> None:
        """LV-DRAW: a turn starts with a draw; reported once a turn, the draw then counts
        as skipped."""
        if not self.drawn:
            self.find("LV-DRAW")
            self.drawn = True
            if self.live is not None and self.live.state == "open":
                self.live.state = "closed"  # as after a draw: no call, and no stock draw

    def discarded(self, actor: str, card: str) -> None:
        live = self.live
        if actor != self.turn and live is not None and live.discarder == actor and not self.drawn:
            self.find("LV-DISCARD")  # discarded twice
            self.take(actor, card)
            self.pile.append(card)
            self.live = Live(card, actor, "open")
            self.after_hand_change(actor, by_discard=True)
            return
        if self.in_turn(actor):
            self.need_draw()
        self.take(actor, card)
        self.pile.append(card)
        if actor == self.turn:
            self.live = Live(card, actor, "open")
            if self.hands[actor]:
                self.new_turn(self.next_active(self.seats.index(actor)))
        self.after_hand_change(actor, by_discard=True)

    def laid_down(self, actor: str, melds: list[dict[str, Any]]) -> None:
        if self.in_turn(actor):
            self.need_draw()
        if actor in self.laid:
            self.find("LV-CONTRACT")  # decided here: the contract is shown once, at once
        want_sets, want_runs = CONTRACTS.get(self.round_no, (0, 0))
        kinds = Counter(m.get("kind") for m in melds)
        if kinds["set"] != want_sets or kinds["run"] != want_runs or len(melds) != want_sets + want_runs:
            self.find("LV-CONTRACT")
        all_cards = [card_code(c) for m in melds for c in m["cards"]]
        placed: list[Meld] = []
        for m in melds:
            cards = [card_code(c) for c in m["cards"]]
            named = read_as(m)
            if m.get("kind") == "set":
                broken, values = check_set(cards, named, self.distinct)
                suit = None
            else:
                broken, values, suit = run_values(cards, named)
            for rule in broken:
                self.find(rule)
            placed.append(Meld(str(m.get("kind")), actor, cards, values, suit, not broken))
        # the melds are judged as shown, then the cards must be in the hand (decided
        # here: the spec orders no checks within one event; the engine's order)
        if not self.holds(actor, all_cards):
            self.halt()
        for card in all_cards:
            self.take(actor, card)
        self.melds.extend(placed)
        self.laid.setdefault(actor, self.turn_no)
        left = sum(self.hands[actor].values())
        if self.round_no == 5 and left != 1:
            self.find("LV-ALLOUT")
        if self.round_no == 6:
            if left != 0:
                self.find("LV-ALLOUT")
            elif actor == self.turn:
                self.end_round()  # the round-6 going-out: no discard
                return
        self.after_hand_change(actor, by_discard=False)

    def laid_off(self, actor: str, p: dict[str, Any]) -> None:
        if self.in_turn(actor):
            self.need_draw()
        if actor not in self.laid or self.laid[actor] == self.turn_no:
            self.find("LV-LAYOFF")
        card = card_code(p["card"])
        index = int(p["meld"])
        if not (0 <= index < len(self.melds)):
            self.halt()
        self.take(actor, card)
        meld = self.melds[index]
        ok, end = self.fits(meld, card, p.get("end"))
        if not ok:
            self.find("LV-LAYOFF")
        self.place(meld, card, end, ok)
        self.after_hand_change(actor, by_discard=False)

    def bought(self, actor: str, p: dict[str, Any]) -> None:
        """LV-BUY, one finding however many of its conditions fail; the buy is applied as
        the platform applied it when the card is there to take (else C-HOLD halts)."""
        card, penalty = card_code(p["card"]), card_code(p["penalty"])
        live = self.live
        bad = live is None or live.state != "buy" or live.card != card
        bad = bad or actor == (live.discarder if live else None) or actor == self.turn \
            or actor in self.laid \
            or (self.max_buys is not None and self.buys[actor] >= int(self.max_buys))
        if bad:
            self.find("LV-BUY")
        if self.pile[-1:] != [card]:
            self.halt()
        self.pile.pop()
        if not self.stock or self.stock[0] != penalty:
            self.halt()
        self.stock.pop(0)
        self.hands[actor][card] += 1
        self.hands[actor][penalty] += 1
        self.buys[actor] += 1
        self.live = None

    def rummy(self, actor: str, p: dict[str, Any]) -> None:
        """LV-RUMMY, one finding however many of its conditions fail."""
        card, own = card_code(p["card"]), card_code(p["discard"])
        live = self.live
        bad = live is None or live.state != "open" or live.card != card
        # "any other player ... before the next player draws": the next player's turn
        # has begun and starts with a draw (LV-DRAW), so he is not among the callers
        # (decided here; the engine reads it so too)
        bad = bad or actor == (live.discarder if live else None) or actor not in self.laid \
            or actor == self.turn
        index = int(p["meld"])
        if not (0 <= index < len(self.melds)):
            self.halt()  # a meld that is not on the table (C-HOLD: "a meld")
        if not self.pile or self.pile[-1] != card:
            if bad:
                self.find("LV-RUMMY")
            self.halt()
        meld = self.melds[index]
        ok, end = self.fits(meld, card, p.get("end"))
        if bad or not ok:
            self.find("LV-RUMMY")
        self.pile.pop()
        self.place(meld, card, end, ok)
        self.take(actor, own)
        self.pile.append(own)
        # the caller's discard is live like any discard: for the next player's draw, or,
        # when he has already drawn (a late call), for buying until he discards
        self.live = Live(own, actor, "buy" if self.drawn else "open")
        self.after_hand_change(actor, by_discard=True)

    def leave(self, player: str) -> None:
        if player not in self.active or self.over:
            return
        self.active.remove(player)
        self.hands.pop(player, None)
        if len(self.active) == 1:
            self.over = True
            self.in_round = False
            return
        if self.in_round and self.turn == player:
            self.new_turn(self.next_active(self.seats.index(player)))
            if self.live is not None and self.live.state == "buy":
                # LV-BUY is worded by "the player after the discarder": with the leaver
                # gone that is the new player in turn, who has not drawn; the discard is
                # his to take, or buyable once he draws from the stock (audit 9: it was
                # closed here, a reading no sentence of §3 gives; the engine's too)
                self.live.state = "open"

    def restock(self, p: dict[str, Any]) -> None:
        """C-RESTOCK: the pile but its top, once the stock is empty. A card from outside
        the pile is not there (C-HOLD); a wrong choice of pile cards, or a restock while
        the stock still holds cards, is a violation each, and the restock is applied as
        logged: the named cards leave the pile (deepest first), the rest stays."""
        new = [card_code(c) for c in p["stock"]]
        if self.stock:
            self.find("C-RESTOCK")
        if Counter(new) != Counter(self.pile[:-1]):
            self.find("C-RESTOCK")
        if Counter(new) - Counter(self.pile):
            self.halt()
        for card in new:
            self.pile.remove(card)  # list.remove takes the deepest copy first
        # decided here (no card may vanish): a stock that still held cards stays under
        # the new one
        self.stock = new + self.stock

    def apply(self, event: Event) -> None:
        t, actor, p = event["type"], event.get("actor"), event["payload"]
        if t == "RoundStarted":
            if self.over:
                self.find("C-DEAL")  # a deal after the game ended: not followed
            else:
                if self.in_round:
                    self.find("LV-OUT")  # redealt before anyone went out
                self.deal(event)
            return
        if t == "StockReplenished":
            self.restock(p)
            return
        if t == "PlayerLeft":
            if actor not in self.seats:
                self.find("C-TURN")
            self.leave(actor)
            return
        if t == "PlayerRemoved":
            self.leave(p.get("player"))
            return
        if t not in LV_EVENTS:
            self.find("LOG-EVENT", "integrity")  # §5: an event the variant does not know
            return
        if t in ("PlayerConnected", "PlayerDisconnected") or actor == "system":
            return
        if t == "Bought":
            if self.in_play(actor, "LV-BUY"):
                self.bought(actor, p)
        elif t == "RummyCalled":
            if self.in_play(actor, "LV-RUMMY"):
                self.rummy(actor, p)
        elif self.in_play(actor):
            if t == "Drew":
                self.drew(actor, event)
            elif t == "Discarded":
                self.discarded(actor, card_code(p["card"]))
            elif t == "LaidDown":
                self.laid_down(actor, p["melds"])
            else:
                self.laid_off(actor, p)


# == Michigan =============================================================================


def mi_value(card: str) -> int:
    return RANKS.index(card[0])  # 2 low (0) .. A high (12)


class Michigan(_Referee):
    """RULES.md §4 play by play."""

    def __init__(self, created: Event) -> None:
        super().__init__(created)
        self.three_in_one = bool(self.rules.get("three_in_one", False))
        self.deals = int(self.rules.get("deals", 0)) or self.n
        self.deal_no = 0
        self.in_deal = False
        self.hands: dict[str, Counter[str]] = {}
        self.widow: Counter[str] = Counter()
        self.widow_buyer: str | None = None
        self.dead: Counter[str] = Counter()
        self.played: set[str] = set()
        self.last: str | None = None
        self.last_player: str | None = None
        self.stopped_suit: str | None = None
        self.declared: set[str] = set()

    def holder(self, card: str) -> str | None:
        for q in self.active:
            if self.hands.get(q, Counter())[card] > 0:
                return q
        return None

    def deal(self, event: Event) -> None:
        p = event["payload"]
        self.deal_no += 1
        if not self.in_deal:  # a deal before the last one ended is MI-END alone
            self.check_dealer(int(p["dealer"]), "MI-END")
        self.dealer = int(p["dealer"])
        deck = [card_code(c) for c in p["deck"]]
        if sorted(deck) != sorted(r + s for r in RANKS for s in SUITS):
            self.find("C-DEAL")
            self.find("MI-DEAL", "integrity")  # the deal cannot be followed
            self.halt_here()
        order = self.order_from_left_of(self.dealer)
        hands: list[Counter[str]] = [Counter() for _ in range(len(order) + 1)]
        for i, card in enumerate(deck):
            hands[i % len(hands)][card] += 1
        self.hands = dict(zip(order, hands[:-1], strict=True))
        self.widow = hands[-1]
        self.widow_buyer = None
        self.dead = Counter()
        self.played = set()
        self.last = self.last_player = self.stopped_suit = None
        self.declared = set()
        self.in_deal = True

    def next_card(self) -> str | None:
        """The card due after the last one played, if a follow is due (else a stop)."""
        if self.last is None or self.last[0] == "A":
            return None
        nxt = RANKS[mi_value(self.last) + 1] + self.last[1]
        if nxt in self.played or self.holder(nxt) is None:
            return None  # played, in the widow or a dead hand (MI-STOP)
        return nxt

    def starter_after_stop(self) -> str:
        """MI-STOP: the last player, else (no card of another suit) the right passes left
        (decided here: to the first player who has a card of another suit; if nobody has,
        the last player starts with what he has, or, if he has left, the first active player
        after him who has cards)."""
        assert self.last_player is not None
        seat = self.seats.index(self.last_player)
        order = [self.last_player] + [q for q in self.order_from_left_of(seat)
                                      if q != self.last_player]
        for q in order:
            if q in self.active and any(c[1] != self.stopped_suit for c in self.hands[q]):
                return q
        # nobody has another suit: the first active player (in the same order) with cards;
        # a last player who has left cannot start
        for q in order:
            if q in self.active and sum(self.hands[q].values()) > 0:
                return q
        return self.last_player

    def played_card(self, actor: str, card: str) -> None:
        hand = self.hands[actor]
        if hand[card] <= 0:
            self.halt()
        if self.last is None:
            if self.three_in_one and any(q not in self.declared for q in self.active):
                self.find("MI-POKER")
            self.declared = set(self.active)  # the poker phase is over
            if actor != self.next_active(self.dealer):
                self.find("MI-START")
        else:
            due = self.next_card()
            if due is not None:
                if card != due:
                    self.find("MI-FOLLOW")
            else:
                self.stopped_suit = self.last[1]
                starter = self.starter_after_stop()
                if actor != starter or (card[1] == self.stopped_suit and any(c[1] != self.stopped_suit for c in hand)):
                    self.find("MI-STOP")
        hand[card] -= 1
        if hand[card] == 0:
            del hand[card]
        self.played.add(card)
        self.last, self.last_player = card, actor
        if not hand:
            self.end_deal()

    def end_deal(self) -> None:
        self.in_deal = False
        if self.deal_no >= self.deals:
            self.over = True

    def widow_bought(self, actor: str) -> None:
        if self.last is not None:
            # too late, but applied as the platform applied it (ARCHITECTURE: a violation
            # is recorded and the move applied) while the widow is still there to take
            self.find("MI-WIDOW")
        elif self.declared:
            # MI-POKER: the poker phase comes "after any widow purchase", so the widow's
            # window closes at the first declaration (decided here, the engine's reading);
            # the purchase is applied as the platform applied it
            self.find("MI-WIDOW")
        if self.widow_buyer is not None:
            if not self.declared and self.last is None:
                self.find("MI-WIDOW")  # a second purchase: no widow left to take
            return
        self.widow_buyer = actor
        self.dead += self.hands[actor]
        self.hands[actor] = self.widow
        self.widow = Counter()

    def poker(self, actor: str, cards: list[str]) -> None:
        if not self.three_in_one or self.last is not None or actor in self.declared:
            self.find("MI-POKER")
            return
        if not self.holds(actor, sorted(set(cards))):
            # §5: "a card that is not where the event says it is": the event says his hand
            self.halt()
        if len(cards) != 5 or len(set(cards)) != 5:
            self.find("MI-POKER")
        self.declared.add(actor)

    def holds(self, player: str, cards: list[str]) -> bool:
        return not (Counter(cards) - self.hands[player])

    def leave(self, player: str) -> None:
        if player not in self.active or self.over:
            return
        self.active.remove(player)
        if player in self.hands:
            self.dead += self.hands.pop(player)
        if len(self.active) == 1:
            self.over = True
            self.in_deal = False

    def apply(self, event: Event) -> None:
        t, actor, p = event["type"], event.get("actor"), event["payload"]
        if t == "RoundStarted":
            if self.over or self.deal_no >= self.deals:
                self.find("MI-END")  # a deal after the game's last one: not followed
                self.in_deal = False
            else:
                if self.in_deal:
                    self.find("MI-END")  # a deal started before the last one ended
                self.deal(event)
            return
        if t == "PlayerLeft":
            if actor not in self.seats:
                self.find("C-TURN")
            self.leave(actor)
            return
        if t == "PlayerRemoved":
            self.leave(p.get("player"))
            return
        if t not in MI_EVENTS:
            self.find("LOG-EVENT", "integrity")  # §5: an event the variant does not know
            return
        if t in ("PlayerConnected", "PlayerDisconnected") or actor == "system":
            return
        if actor not in self.active or self.over or not self.in_deal:
            self.find("C-TURN")
            return
        if t == "CardPlayed":
            self.played_card(actor, card_code(p["card"]))
        elif t == "WidowBought":
            self.widow_bought(actor)
        else:
            self.poker(actor, [card_code(c) for c in p["cards"]])


# == entry point ==========================================================================


def fold(events: list[Event]) -> Liverpool | Michigan:
    """The referee's state after ``events`` (used to build mutants that need to know who
    holds what, who is in turn, which window is open)."""
    created = next(e for e in events if e["type"] == "GameCreated")
    variant = created["payload"]["variant"]
    game: Liverpool | Michigan = Liverpool(created) if variant == "liverpool" else Michigan(created)
    for event in events:
        if event is created:
            continue
        game.seq = int(event["seq"])
        try:
            game.apply(event)
        except Halt:
            break
    return game


def walk(events: list[Event]) -> Iterator[tuple[int, Liverpool | Michigan]]:
    """Yield ``(index, state before events[index])`` for every event after GameCreated,
    folding one state as it goes (the caller must not change it). Stops at a halt."""
    game = fold(events[:1])
    for i in range(1, len(events)):
        yield i, game
        game.seq = int(events[i]["seq"])
        try:
            game.apply(events[i])
        except Halt:
            return


def referee(events: list[Event], *, claims: bool = True) -> Verdict:
    """The referee's verdict on one game (events in seq order). With ``claims`` the
    results oracle's C-CLAIM findings are merged in (up to a halt)."""
    created = next(e for e in events if e["type"] == "GameCreated")
    variant = created["payload"]["variant"]
    game: _Referee
    if variant == "liverpool":
        game = Liverpool(created)
    elif variant == "michigan":
        game = Michigan(created)
    else:
        raise ValueError(f"the referee covers liverpool and michigan, not {variant}")
    halt_seq: int | None = None
    for event in events:
        if event is created:
            continue
        game.seq = int(event["seq"])
        try:
            game.apply(event)  # type: ignore[attr-defined]
        except Halt:
            halt_seq = game.seq
            break
    verdict = game.verdict
    if claims:
        cut = [e for e in events if halt_seq is None or e["seq"] < halt_seq]
        verdict.findings.extend((s, r, "discrepancy") for s, r, _ in oracle(cut).claim_findings)
    verdict.findings.sort(key=lambda f: f[0])
    return verdict


__all__ = ["Halt", "Liverpool", "Meld", "Michigan", "Verdict", "fold", "referee", "walk"]
