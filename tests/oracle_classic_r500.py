"""An independent results oracle for classic 14-card rummy and Rummy 500.

Why this exists: the simulator picks its moves through ``rummyguard.replay``, so a
misreading of the spec shared by the engine and the simulator would replay "clean".
This module recomputes the results of a game from its events alone, written from
spec/RULES.md §0, §1, §2, §5 and spec/EVENTS.md, without reading or importing
``rummyguard.replay`` (only card parsing is shared). Differential tests compare it with
``replay(events)``; where they disagree, the spec decides who is right.

Scope, deliberately narrow so it stays obviously correct (speed does not matter):

- results: ``winners``, ``net``, ``scores`` (RULES.md §5), per-round scores and winners,
  every chip transfer the rules make (stakes, the doubled stake of the first unanimous
  Fresh, the pot and its rake, r500 pot splits, tournament payments);
- the platform's claims: ``RoundEnded``, ``GameEnded``, the ``ChipsTransferred``
  multiset and ``PlayerRemoved`` (C-CLAIM); ``AutoPlayed`` (the player in turn, after
  both clocks, the cards CL-AUTOPLAY gives, the strike count); a removal for strikes
  (the fourth timeout, CL-STRIKES);
- not move legality (meld validity, turn order, late moves, pile rules): the moves are
  applied as logged, which is what the rules say the replay does with a violation.

A card that is not where an event says it is stops the oracle (``halted``), as C-HOLD
stops the replay. Section references (``§1 CL-POT``) name the sentence implemented.

Readings where RULES.md is silent (each is also the engine's; see the audit-6 report):

- r500 defaults: ``mode`` target, ``target`` 500, ``rounds`` 1, ``chip_ratio`` 1.
- R5-SWAP: the place a table joker held keeps its value; its points move from whoever
  put the joker there to the giver of the natural card (he put that card on the table).
- A leaver (and in r500 a player out of chips) is out at once: not scored in the round
  he leaves, his stake stays in the pot (a tournament stack stays his), his earlier
  totals stay in ``scores``; one player left wins at once in every mode (the pot, less
  the rake in classic). In r500 the player who drew the last stock card ends his turn
  by leaving too, so the round ends (R5-END). Deals go to the players still in.
- An auto-play after the player drew by hand only discards: the drawn card (the rule's
  draw), or the highest non-joker if it is a joker.
- A player whose last card goes to the table without a discard (R5-DISCARD breached,
  applied) holds nothing: he is out and the round ends.
- A broken meld (its cards are not where the C-WILD reading of the list puts them:
  C-RUN / C-SET / C-WILD / R5-MELD breached, yet on the table) scores by R5-VALUES card
  by card: a natural is worth its face ("2-10 face value; J Q K 10; ace 11", the ace 1
  only "in a run A 2 3", which a broken meld is not), a joker nothing (it stands for no
  card: no place of a valid meld fixes one). Only a wrong ``as`` leaves the places to
  the list: the meld then scores as it reads without ``as``. Nothing fits a broken meld.
  A lay-off that does not fit (R5-LAYOFF breached, applied) scores the same way, and
  the run end it sits at is dead: no later card extends the run there.
- Claims are compared value by value: a key left out is 0 (RoundEnded.scores as
  GameEnded.net); a logged transfer of 0 moves nothing. A ``ChipsTransferred`` with an
  empty list is logged, so it is compared (a claim that no chips moved).
- A game not over yet: ``net`` is the chips moved so far, ``winners`` is empty.
- A move by a player no longer in the game is not applied (it is C-TURN; his cards
  left play). Events after the game's end change nothing and are not judged here.
- r500: a move between a round's end (R5-END) and the next deal is not applied: the
  round is over, its hands are scored (the referee reports the move). A deal while a
  round is live (R5-END breached) drops that round unscored; if it names the same round
  number it deals that round again, otherwise it is the next round. ``RoundEnded`` is
  compared with the round of the number it names.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from rummyguard.events.cards import legacy_to_code

Event = dict[str, Any]
Key = tuple[str, str, int]

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "CDHS"
JK = "JK"
#: the natural cards (an ``as`` must name one)
CARD_SET = frozenset(r + s for r in RANK_CHARS for s in SUIT_CHARS)


#: the player moves of these variants (EVENTS.md): made in turn by a player in the game
MOVES = frozenset({"Drew", "Discarded", "Melded", "LaidOff", "JokerSwapped", "DeclaredRummy"})


class Stop(Exception):
    """The log and the oracle's state parted (a card that is not there)."""


def rank_no(card: str) -> int:
    """2..14 (the ace high); the oracle decides ace-low itself where a run needs it."""
    return RANK_CHARS.index(card[0]) + 2


def card_at(rank: int, suit: str) -> str:
    """The natural card of ``rank`` (1 or 14 for the ace) in ``suit``."""
    return ("A" if rank in (1, 14) else RANK_CHARS[rank - 2]) + suit


def meld_value(rank: int) -> int:
    """§2 R5-VALUES for a card on the table: 2-10 face, J Q K 10, ace 11 (1 low in a run).
    A place past an end of the ranks (a wild laid off above A: R5-LAYOFF breached, yet
    applied) stands for no card, so it is worth nothing."""
    if not 1 <= rank <= 14:
        return 0
    if rank == 1:
        return 1
    if rank == 14:
        return 11
    return min(rank, 10)


def hand_value(card: str) -> int:
    """§2 R5-VALUES for a card left in hand: ace and joker 15, others as on the table."""
    if card == JK or card[0] == "A":
        return 15
    return meld_value(rank_no(card))


def autoplay_key(card: str) -> tuple[int, int]:
    """§1 CL-AUTOPLAY order: ranks as usual (ace high), then suits C < D < H < S."""
    return (rank_no(card), SUIT_CHARS.index(card[1]))


def take(cards: list[str], card: str) -> None:
    """Remove one copy of ``card`` (hands are multisets, §0 Cards) or stop (C-HOLD)."""
    if card not in cards:
        raise Stop(f"{card} is not there")
    cards.remove(card)


def current(event: Event) -> Event:
    """EVENTS.md "Older versions still accepted": Drew/Discarded v1 read as v2."""
    if event.get("v") != 1 or event["type"] not in ("Drew", "Discarded"):
        return event
    p = event["payload"]
    if event["type"] == "Drew":
        payload = {"source": {"deck": "stock", "pile": "discard"}[p["from"]],
                   "cards": [legacy_to_code(p["card"])]}
    else:
        payload = {"card": legacy_to_code(p["card"])}
    return {**event, "v": 2, "payload": payload}


def ms(ts: str) -> int:
    """EVENTS.md ``ts`` (RFC 3339 UTC with milliseconds) as milliseconds."""
    return round(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000)


def split(amount: int, players: list[str]) -> dict[str, int]:
    """Equal shares, the remainder one chip each to the first players (seat order):
    §2 R5-GAME rounds ties and R5-CHIPS tied round winners."""
    share, rest = divmod(amount, len(players))
    return {p: share + (1 if i < rest else 0) for i, p in enumerate(players)}


def chip_payments(scores: dict[str, int], stacks: dict[str, int], ratio: int,
                  seat_order: list[str]) -> list[Key]:
    """§2 R5-CHIPS: every player but the round winner(s) pays (winner score - own score)
    x ratio, capped at his stack; tied winners split each payment, remainder in seat
    order. Returns ``(payer, winner, amount)`` with amount > 0."""
    best = max(scores.values())
    winners = [p for p in seat_order if scores.get(p) == best]
    out: list[Key] = []
    for loser in [p for p in seat_order if p in scores and p not in winners]:
        owed = min((best - scores[loser]) * ratio, stacks[loser])
        out.extend((loser, w, a) for w, a in split(owed, winners).items() if a > 0)
    return out


@dataclass
class Oracle:
    """What the oracle computed for one game."""

    variant: str = ""
    winners: list[str] = field(default_factory=list)
    net: dict[str, int] = field(default_factory=dict)
    scores: dict[str, int] = field(default_factory=dict)
    transfers: list[Key] = field(default_factory=list)
    round_scores: list[dict[str, int]] = field(default_factory=list)
    round_winners: list[list[str]] = field(default_factory=list)
    #: r500: the round number of each entry of ``round_scores`` (a round dealt again
    #: before it ended is never scored, so numbers may skip)
    round_numbers: list[int] = field(default_factory=list)
    #: (seq, rule, kind) of each claim the oracle finds wrong
    claims: list[tuple[int, str, str]] = field(default_factory=list)
    halted: bool = False
    over: bool = False


# -- Rummy 500 table melds ------------------------------------------------------------------------


@dataclass
class Meld:
    """A meld on the table: for a run, rank -> card (rank 1 or 14 for the ace); for a set,
    its rank and cards. A joker's rank in a run is the card it stands for (§0 C-WILD)."""

    kind: str
    suit: str = ""
    ranks: dict[int, str] = field(default_factory=dict)
    rank: int = 0
    cards: list[str] = field(default_factory=list)
    #: who put each card there: run rank -> player; set: one entry per card, in order
    placers: dict[int, str] = field(default_factory=dict)
    set_placers: list[str] = field(default_factory=list)
    #: laid down broken (module notes): nothing fits it; a run's ``ranks`` are then the
    #: places its list reads to without ``as`` (a wrong ``as`` only), or empty
    broken: bool = False
    #: run ends where a card that does not fit sits (R5-LAYOFF): nothing extends them
    dead: set[str] = field(default_factory=set)
    #: a run read to places: the rank of each card of ``cards`` (the list as it lies on
    #: the table, low end first), 0 for a card laid off where it did not fit
    order: list[int] = field(default_factory=list)

    def low(self) -> int:
        return min(self.ranks)

    def high(self) -> int:
        return max(self.ranks)


def read_run(cards: list[str], named: dict[int, str]) -> Meld:
    """§0 C-WILD: a run is listed low to high, so a wild's position fixes its card; a wild
    at the low end stands for the card below only when the high end is A, or when ``as``
    names it; otherwise the low-end wilds stand above the top."""
    n = len(cards)
    naturals = [(i, c) for i, c in enumerate(cards) if c != JK]
    named_low = [k for k in named if not naturals or k < naturals[0][0]]
    if named_low:
        k = min(named_low)
        anchor = named[k]
        suit = anchor[1]
        base = (1 if k == 0 and anchor[0] == "A" else rank_no(anchor)) - k
        return _run(suit, cards, [base + i for i in range(n)])
    if not naturals:
        raise Stop("a run of wilds only, with nothing named")
    i0, first = naturals[0]
    suit = first[1]
    first_rank = 1 if first[0] == "A" and i0 == 0 and n > 1 else rank_no(first)
    base = first_rank - i0  # the positional reading
    if i0 == 0 or base + n - 1 == 14:
        return _run(suit, cards, [base + i for i in range(n)])
    # low-end wilds not named and the top is not the ace: wild by wild from the one
    # nearest the naturals, each stands above the top, or below once the top is the ace
    # (``JK JK KH`` is A-Q-K: the run Q K A)
    order = [first_rank + (i - i0) for i in range(n)]
    lo, hi = order[i0], order[-1]
    for j in range(i0 - 1, -1, -1):
        if hi == 14:
            lo -= 1
            order[j] = lo
        else:
            hi += 1
            order[j] = hi
    return _run(suit, cards, order)


def _run(suit: str, cards: list[str], order: list[int]) -> Meld:
    """A run whose card ``cards[i]`` stands at rank ``order[i]``."""
    return Meld("run", suit, dict(zip(order, cards, strict=True)), cards=list(cards),
                order=list(order))


def read_meld(kind: str, cards: list[str], as_: dict[str, str] | None) -> Meld:
    """A ``Melded`` payload as a table meld (EVENTS.md: ``as`` keys are positions)."""
    named = {int(k): v for k, v in (as_ or {}).items()}
    if kind == "run":
        return read_run(cards, named)
    naturals = [c for c in cards if c != JK]
    if naturals:
        rank = rank_no(naturals[0])
    elif named:
        rank = rank_no(next(iter(named.values())))
    else:
        raise Stop("a set of wilds only")
    return Meld("set", rank=rank, cards=list(cards))


def face_value(card: str) -> int:
    """§2 R5-VALUES for a card on the table that holds no place of a valid meld: a
    natural its face (ace 11), a joker nothing (it stands for no card)."""
    return 0 if card == JK else meld_value(rank_no(card))


def reads_true(m: Meld, cards: list[str], named: dict[int, str]) -> bool:
    """Is the meld as listed valid (§2 R5-MELD, §0 C-RUN / C-SET / C-WILD): every card,
    and every card ``as`` names, is the card its place stands for?"""
    naturals = [c for c in cards if c != JK]
    if not naturals or any(card not in CARD_SET for card in [*naturals, *named.values()]):
        return False
    if m.kind == "set":
        suits = [c[1] for c in naturals] + [v[1] for v in named.values()]
        return (3 <= len(cards) <= 4 and len(set(suits)) == len(suits)
                and all(rank_no(c) == m.rank for c in [*naturals, *named.values()]))
    ranks = sorted(m.ranks)
    if len(cards) < 3 or len(ranks) != len(cards) or ranks != list(range(ranks[0], ranks[0] + len(ranks))):
        return False
    if ranks[0] < 1 or ranks[-1] > 14 or (ranks[0] == 1 and ranks[-1] == 14):
        return False
    by_place = dict(enumerate(ranks))
    return (all(c == JK or card_at(r, m.suit) == c for r, c in m.ranks.items())
            and all(card_at(by_place[i], m.suit) == v for i, v in named.items()))


def read_table_meld(kind: str, cards: list[str], as_: dict[str, str] | None) -> tuple[Meld, int]:
    """A ``Melded`` payload as a table meld and the points it earns its maker (module
    notes: a broken meld scores card by card)."""
    named = {int(k): v for k, v in (as_ or {}).items()} if isinstance(as_, dict) else {}
    try:
        m = read_meld(kind, cards, as_ if named else None)
        if reads_true(m, cards, named):
            return m, meld_points(m)
        if named:  # a wrong `as` only: the places are the list's own reading
            m = read_meld(kind, cards, None)
            if reads_true(m, cards, {}):
                m.broken = True
                return m, meld_points(m)
    except (Stop, ValueError, KeyError, IndexError):
        pass
    broken = Meld(kind, cards=list(cards), broken=True)
    return broken, sum(face_value(c) for c in cards)


def meld_points(m: Meld) -> int:
    """§2 R5-SCORE: what a valid meld earns its maker (every card at its place's value)."""
    if m.kind == "run":
        return sum(meld_value(r) for r in m.ranks)
    return len(m.cards) * meld_value(m.rank)


def place(m: Meld, player: str) -> None:
    """Record ``player`` as the placer of every card of a new meld."""
    m.placers = dict.fromkeys(m.ranks, player)
    m.set_placers = [player] * len(m.cards)


def _misfit(m: Meld, card: str, player: str, side: str = "high") -> int:
    """R5-LAYOFF breached, applied: the card is on the table, at the end the platform put
    it (the high end unless named), at its face value."""
    at = 0 if m.kind == "run" and side == "low" else len(m.cards)
    m.cards.insert(at, card)
    m.set_placers.insert(at, player)
    if m.order:
        m.order.insert(at, 0)
    return face_value(card)


def lay_off(m: Meld, card: str, end: str | None, player: str) -> int:
    """§2 R5-LAYOFF: add ``card`` to ``m``; returns its points (the rank it takes there,
    or its face value where it does not fit: module notes)."""
    if m.broken or (m.kind == "run" and not m.ranks):
        return _misfit(m, card, player, end or "high")
    if m.kind == "set":
        fits = len(m.cards) < 4 and (card == JK or (
            rank_no(card) == m.rank and card[1] not in {c[1] for c in m.cards if c != JK}))
        m.cards.append(card)
        m.set_placers.append(player)
        return meld_value(m.rank) if fits else face_value(card)
    lo, hi = m.low(), m.high()
    if card == JK:
        # C-WILD read for a lay-off: an end given binds; none: above the top, unless the
        # top is the ace
        side = end or ("low" if hi == 14 else "high")
    else:
        r, live = rank_no(card), card[1] == m.suit
        fits_low = (live and "low" not in m.dead and lo > 1 and not (lo == 2 and hi == 14)
                    and (r == lo - 1 or (card[0] == "A" and lo == 2)))
        fits_high = (live and "high" not in m.dead and r == hi + 1 and not (hi == 13 and lo == 1))
        side = end or ("low" if fits_low and not fits_high else "high")
    rank = lo - 1 if side == "low" else hi + 1
    fits = (side not in m.dead and 1 <= rank <= 14 and not (rank == 1 and hi == 14)
            and not (rank == 14 and lo == 1) and (card == JK or card_at(rank, m.suit) == card))
    if not fits:
        m.dead.add(side)
        return _misfit(m, card, player, side)
    m.ranks[rank] = card
    m.placers[rank] = player
    at = 0 if side == "low" else len(m.cards)
    m.cards.insert(at, card)
    m.order.insert(at, rank)
    return meld_value(rank)


def swap_joker(m: Meld, card: str, player: str) -> tuple[str, int]:
    """§2 R5-SWAP: ``card`` takes the place of the table joker standing for it. Returns
    the joker's placer and the value of its place: the place's points move from him to
    the giver of the natural card (module notes: the decided reading)."""
    if m.kind == "set" or not m.ranks:
        i = m.cards.index(JK) if JK in m.cards else -1
        if i < 0:
            raise Stop("no joker in the meld")
        m.cards[i] = card
        placer, m.set_placers[i] = m.set_placers[i], player
        # the place keeps its value: the set's rank (none for a meld that reads to none)
        return placer, meld_value(m.rank)
    jokers = [k for k, c in enumerate(m.cards) if c == JK]
    if not jokers:
        raise Stop("no joker in the run")
    # the joker standing for ``card``; a swap that breaks R5-SWAP is applied all the
    # same, to the first joker of the list as it lies (the spec says nothing of it)
    k = next((k for k in jokers if not m.broken and 1 <= m.order[k] <= 14
              and card_at(m.order[k], m.suit) == card), jokers[0])
    m.cards[k] = card
    r = m.order[k]
    if not r:  # a misfit joker: its place stands for no card and is worth nothing
        return "", 0
    m.ranks[r] = card
    placer, m.placers[r] = m.placers[r], player
    return placer, meld_value(r)


# -- the fold ----------------------------------------------------------------------------------------


class _Game:
    """The oracle's state while it reads a game."""

    def __init__(self, created: Event) -> None:
        p = created["payload"]
        self.out = Oracle(variant=p["variant"])
        self.seats: list[str] = list(p["seats"])
        self.stake: int = int(p["stake"])
        rules = {k: v for k, v in (p.get("rules") or {}).items() if v is not None}
        self.rules = rules
        self.active: list[str] = list(self.seats)  # still in the game, seat order
        self.paid = dict.fromkeys(self.seats, 0)  # chips each put in the pot
        self.pot = 0
        self.hands: dict[str, list[str]] = {}
        self.stock: list[str] = []
        self.pile: list[str] = []
        self.round_no = 0
        self.round_live = False
        self.game_end_seq: int | None = None
        # classic
        self.votes: set[str] = set()
        self.doubled = False
        self.fresh_pending = False
        self.first_player: str | None = None
        #: a player's draw of his current turn not yet followed by his discard
        self.drawn: dict[str, tuple[str, str]] = {}
        self.strikes: dict[str, int] = {}  # auto-plays per player, over the whole game
        # §1 CL-TIMER: who is in turn, since when (ms), who has had a turn in this deal
        self.now = 0
        self.turn: str | None = None
        self.turn_start = 0
        self.had_turn: set[str] = set()
        # r500
        self.mode = rules.get("mode", "target")
        self.melds: list[Meld] = []
        self.points: dict[str, int] = {}
        self.in_round: list[str] = []
        self.totals = dict.fromkeys(self.seats, 0)
        self.stacks = dict.fromkeys(self.seats, self.stake)
        self.playoff = False
        self.last_stock_drawer: str | None = None
        self.left: set[str] = set()
        #: players R5-CHIPS left without chips (R5-GAME: "out")
        self.busted: set[str] = set()

    # chips

    def move(self, src: str, dst: str, amount: int) -> None:
        """One chip transfer the rules make (a transfer of nothing is none)."""
        if amount <= 0:
            return
        self.out.transfers.append((src, dst, amount))
        if dst == "pot":
            self.pot += amount
            self.paid[src] += amount
        if src == "pot":
            self.pot -= amount

    def finish(self, winners: list[str]) -> None:
        """The game is over: §1 CL-RESULT / §2 R5-POT, R5-GAME."""
        self.out.over = True
        self.out.winners = [p for p in self.seats if p in winners]
        if self.out.variant == "r500" and self.mode == "tournament":
            self.out.net = {p: self.stacks[p] - self.stake for p in self.seats}
            return
        pot = self.pot
        if self.out.variant == "classic":
            rake = pot * int(self.rules.get("rake_bps", 0)) // 10000  # §1 CL-RUMMY
            self.move("pot", "house", rake)
            shares = {self.out.winners[0]: pot - rake}
        else:
            shares = split(pot, self.out.winners)  # §2 R5-GAME rounds tie split
        for p, amount in shares.items():
            self.move("pot", p, amount)
        self.out.net = {p: shares.get(p, 0) - self.paid[p] for p in self.seats}

    def remove(self, player: str) -> None:
        """A player leaves play (§1 CL-STRIKES/CL-LEAVE; §2 a leaver or a bust stack)."""
        if player not in self.active:
            return
        self.active.remove(player)
        self.hands.pop(player, None)
        self.votes.discard(player)
        if player in self.in_round:
            self.in_round.remove(player)
        if self.out.over:
            return
        if len(self.active) == 1:
            # §1 CL-STRIKES "with one active player left, that player wins the pot at
            # once"; §2 tournament "the last player at the table wins"; r500 target and
            # rounds: see the module notes (the same reading)
            if self.out.variant == "classic":
                self.classic_win(self.active[0])  # the round ends with the game (CL-RESULT)
            else:
                self.round_live = False
                self.finish(list(self.active))
            return
        if player == self.turn:
            self.pass_turn(player)  # §1 CL-LEAVE: "the next turn starts then"
        if self.out.variant == "r500" and self.round_live and player == self.last_stock_drawer:
            self.end_r500_round()  # §2 R5-END: his turn is over and the stock is empty
        elif self.out.variant == "classic":
            self.check_fresh()

    # dealing

    def deal(self, e: Event) -> None:
        """§0 C-DEAL from ``RoundStarted.deck``: one card at a time, seat by seat from the
        first player, to the players still in; then one card up, the rest is stock."""
        p = e["payload"]
        deck = list(p["deck"])
        dealer = int(p["dealer"])
        order = [self.seats[(dealer + 1 + k) % len(self.seats)] for k in range(len(self.seats))]
        order = [s for s in order if s in self.active]
        if self.out.variant == "classic":
            # §1 CL-FRESH: a redeal keeps the first player (the next one still in if he left)
            if self.first_player is None:
                self.first_player = order[0]
            elif self.first_player not in self.active:
                i = self.seats.index(self.first_player)
                self.first_player = next(self.seats[(i + k) % len(self.seats)]
                                         for k in range(len(self.seats))
                                         if self.seats[(i + k) % len(self.seats)] in self.active)
            j = order.index(self.first_player)
            order = order[j:] + order[:j]
            sizes = {s: 14 for s in order}
            sizes[order[0]] = 15  # §1 CL-DEAL
        else:
            sizes = dict.fromkeys(order, 13 if len(order) == 2 else 7)  # §2 deal
        self.hands = {s: [] for s in order}
        while any(len(self.hands[s]) < sizes[s] for s in order):
            for s in order:
                if len(self.hands[s]) < sizes[s]:
                    if not deck:
                        raise Stop("the deck is short")
                    self.hands[s].append(deck.pop(0))
        if not deck:
            raise Stop("no card to turn up")
        self.pile = [deck.pop(0)]
        self.stock = deck
        self.in_round = list(order)
        self.round_live = True
        self.votes = set()
        self.fresh_pending = False
        self.melds = []
        self.points = dict.fromkeys(order, 0)
        self.last_stock_drawer = None
        self.drawn = {}
        self.turn = order[0]
        self.turn_start = self.now
        self.had_turn = set()

    # classic

    def pass_turn(self, after: str) -> None:
        """The turn goes left (the next seat still in) and its clock starts now."""
        i = self.seats.index(after)
        nxt = [self.seats[(i + k) % len(self.seats)] for k in range(1, len(self.seats) + 1)]
        self.turn = next((s for s in nxt if s in self.active), None)
        self.turn_start = self.now

    def deadline(self, player: str) -> int:
        """§1 CL-TIMER: 60 s base on a player's first turn of the deal, else 30 s; then
        60 s extra."""
        return self.turn_start + (30_000 if player in self.had_turn else 60_000) + 60_000

    def check_fresh(self) -> None:
        """§1 CL-FRESH: unanimous when every active player has pressed in this round."""
        if not self.round_live or self.fresh_pending or not self.active:
            return
        if all(p in self.votes for p in self.active):
            self.fresh_pending = True
            if not self.doubled:
                self.doubled = True
                for p in self.active:
                    self.move(p, "pot", self.stake)

    def classic_win(self, winner: str) -> None:
        """§1 CL-RESULT: the one round ends with the game (``RoundEnded.scores`` is {})."""
        self.round_live = False
        self.out.round_winners.append([winner])
        self.out.round_scores.append({})
        self.finish([winner])

    # r500

    def end_r500_round(self) -> None:
        """§2 R5-SCORE, then R5-GAME / R5-CHIPS."""
        self.round_live = False
        scores = {p: self.points[p] - sum(hand_value(c) for c in self.hands[p])
                  for p in self.in_round}
        best = max(scores.values())
        winners = [p for p in self.in_round if scores[p] == best]
        self.out.round_scores.append(scores)
        self.out.round_winners.append(winners)
        self.out.round_numbers.append(self.round_no)
        for p, s in scores.items():
            self.totals[p] += s
        live = [p for p in self.seats if p in self.active]
        if self.mode == "tournament":
            ratio = int(self.rules.get("chip_ratio", 1))
            # "remainder in seat order": GameCreated.seats order (audit 9: the deal order
            # from left of the dealer was passed, so a remainder went to the wrong winner)
            seat_order = [p for p in self.seats if p in self.in_round]
            for loser, w, amount in chip_payments(scores, self.stacks, ratio, seat_order):
                self.stacks[loser] -= amount
                self.stacks[w] += amount
                self.move(loser, w, amount)
            for p in live:
                if self.stacks[p] == 0:
                    self.active.remove(p)
                    self.busted.add(p)
            if len(self.active) <= 1:
                self.finish(list(self.active))
            return
        if self.mode == "rounds":
            # "a fixed number of rounds": rounds played out and scored (a round dealt
            # again before it ended adds no score, so it is not one of them)
            if len(self.out.round_scores) >= int(self.rules.get("rounds", 1)):
                top = max(self.totals[p] for p in live)
                self.finish([p for p in live if self.totals[p] == top])
            return
        top = max(self.totals[p] for p in live)
        if top >= int(self.rules.get("target", 500)) or self.playoff:
            leaders = [p for p in live if self.totals[p] == top]
            if len(leaders) == 1:
                self.finish(leaders)
            else:
                self.playoff = True  # §2 R5-GAME: below the tie are out, the tied play on
                self.active = leaders


def _check_claims(g: _Game, e: Event) -> None:
    """§0 C-CLAIM for ``RoundEnded`` and ``GameEnded``, against the state at that event."""
    seq, t, p = e["seq"], e["type"], e["payload"]
    out = g.out
    if t == "RoundEnded":
        # the round it names must have ended (r500: the n-th deal; classic: one round,
        # redeals included, CL-RESULT) with these winners and scores; repeating a true
        # claim differs in nothing
        n = p.get("round")
        if out.variant == "r500":
            i = out.round_numbers.index(n) if n in out.round_numbers else -1
        else:
            i = 0 if n == 1 else -1
        ok = (0 <= i < len(out.round_scores)
              and set(p.get("winners", [])) == set(out.round_winners[i])
              and same_values(dict(p.get("scores", {})), out.round_scores[i]))
        if not ok:
            out.claims.append((seq, "C-CLAIM", "discrepancy"))
    elif t == "GameEnded":
        if g.game_end_seq is None:
            g.game_end_seq = seq
        ok = out.over and set(p.get("winners", [])) == set(out.winners)
        if ok:
            pools = Counter[str]()
            for src, dst, amount in out.transfers:
                pools[dst] += amount
                pools[src] -= amount
            for who, amount in p.get("net", {}).items():
                want = out.net.get(who, 0) if who in g.seats else pools[who]
                ok = ok and amount == want
            ok = ok and all(p.get("net", {}).get(s, 0) == out.net.get(s, 0) for s in g.seats)
        if not ok:
            out.claims.append((seq, "C-CLAIM", "discrepancy"))


def same_values(claimed: dict[str, int], computed: dict[str, int]) -> bool:
    """§0 C-CLAIM compares scores value by value: a key either side leaves out is 0 (the
    reading §0 states for GameEnded.net, applied to RoundEnded.scores alike)."""
    return all(claimed.get(k, 0) == computed.get(k, 0) for k in set(claimed) | set(computed))


def _transfer_claims(out: Oracle, logged: list[tuple[int, list[Key]]], ended: int | None) -> None:
    """§0 C-CLAIM: "if a game logs any" ``ChipsTransferred`` (EVENTS.md: "A game's
    ChipsTransferred events, if it has any"), its transfers as one multiset against the
    computed ones; the first event holding one not due carries the finding, else
    GameEnded a missing one. An event with an empty list is logged: it claims that no
    chips moved."""
    if not logged:
        return
    due = Counter(out.transfers)
    for seq, keys in logged:
        for k in keys:
            if due[k] <= 0:
                out.claims.append((seq, "C-CLAIM", "discrepancy"))
                return
            due[k] -= 1
    if +due and ended is not None:
        out.claims.append((ended, "C-CLAIM", "discrepancy"))


def _removal(g: _Game, e: Event) -> None:
    """A ``PlayerRemoved`` claim: §1 CL-STRIKES / CL-LEAVE, §2 R5-CHIPS (bust), §0 C-CLAIM.

    ``left`` confirms a leave, at any moment (classic: CL-LEAVE makes it a removal, so it
    is applied); ``strikes`` removes a classic player still in (a second one for him is
    about someone out already); ``bust`` must name a player R5-CHIPS left without chips.
    Anything else is a claim that differs from the state: C-CLAIM, not applied."""
    p = e["payload"]
    who, reason = p["player"], p.get("reason")
    classic = g.out.variant == "classic"
    ok = who in g.seats
    if ok and reason == "left":
        ok = who in g.left or (classic and who in g.active)
        if ok:
            g.remove(who)
    elif ok and reason == "strikes" and classic:
        ok = who in g.active
        if ok:
            # §1 CL-STRIKES: removed at his fourth timeout: three auto-plays before (or
            # more: a fourth auto-played was the breach, the removal is then overdue), in
            # his turn, both clocks run out (CL-TIMER)
            if (g.strikes.get(who, 0) < 3 or who != g.turn
                    or g.now < g.deadline(who)):
                g.out.claims.append((e["seq"], "CL-STRIKES", "violation"))
            g.remove(who)
    elif ok and reason == "bust" and not classic:
        ok = who in g.busted  # repeating it is still true (as a repeated "left")
    else:
        ok = False
    if not ok:
        g.out.claims.append((e["seq"], "C-CLAIM", "discrepancy"))


def _apply(g: _Game, e: Event) -> None:
    """Fold one event of the game in progress (claims are handled by the caller)."""
    t, p, actor = e["type"], e["payload"], e["actor"]
    g.now = ms(e["ts"])
    classic = g.out.variant == "classic"
    if t == "RoundStarted":
        if g.out.over:
            return  # a deal after the end is a breach, not applied
        if classic:
            g.round_no = 1
        elif not (g.round_live and p.get("round") == g.round_no):
            # a deal while the round is live (R5-END breached) that names the same round
            # deals it again; any other deal is the next round (the dropped one unscored)
            g.round_no += 1
        g.deal(e)
    elif t == "PlayerLeft":
        if actor in g.seats:
            g.left.add(actor)
        g.remove(actor)
    elif t == "PlayerRemoved":
        _removal(g, e)
    elif t == "FreshPressed":
        if classic and actor in g.active and g.round_live:
            g.votes.add(actor)
            g.check_fresh()
    elif t == "Drew":
        hand = g.hands[actor]
        g.drawn[actor] = (p["source"], p["cards"][-1]) if p["cards"] else ("", "")
        if p["source"] == "stock":
            for c in p["cards"]:
                if not g.stock or g.stock[0] != c:
                    raise Stop(f"{c} is not the stock top")
                g.stock.pop(0)
                hand.append(c)
            if not g.stock:
                g.last_stock_drawer = actor
        else:
            # classic (CL-DRAW): the face-up top discard, or the card is not there;
            # r500: taken as logged (a draw that breaks R5-DRAW-PILE is still applied),
            # only a card the pile does not hold stops the oracle
            if classic and (len(p["cards"]) != 1 or not g.pile or g.pile[-1] != p["cards"][0]):
                raise Stop("not the top discard")
            n = len(p["cards"])
            if n and g.pile[-n:] == list(p["cards"]):
                # the cards come off the top (audit 9: ``take`` removed the deepest copy
                # of a duplicated code, so with two decks the pile kept the taken card)
                del g.pile[-n:]
                hand.extend(p["cards"])
            else:
                for c in p["cards"]:
                    take(g.pile, c)
                    hand.append(c)
    elif t == "Discarded":
        if classic and actor == g.turn:
            g.had_turn.add(actor)
            g.pass_turn(actor)
        g.drawn.pop(actor, None)
        take(g.hands[actor], p["card"])
        g.pile.append(p["card"])
        if not classic and g.round_live and (not g.hands[actor] or not g.stock):
            g.end_r500_round()  # §2 R5-DISCARD going out, R5-END stock empty
    elif t in ("Melded", "LaidOff", "JokerSwapped"):
        _table_move(g, e)
        if g.round_live and not g.hands[actor]:
            # a last card put on the table breaks R5-DISCARD, yet the move stands and
            # the player holds nothing: he is out, so the round ends (R5-END)
            g.end_r500_round()
    elif t == "AutoPlayed":
        who = p["player"]
        if who not in g.hands:
            raise Stop(f"{who} holds no cards")  # out of the game: his cards left play
        # §1 CL-AUTOPLAY: the player in turn, once both his clocks have run out (after a
        # unanimous Fresh the platform did not redeal, play is judged as it went on)
        if who != g.turn or g.now < g.deadline(who):
            g.out.claims.append((e["seq"], "CL-AUTOPLAY", "violation"))
        # §1 CL-AUTOPLAY: the system draws from the stock, except on the first player's
        # first turn and (module notes) after the player's own draw: a missing or extra
        # draw plays other cards than the rule gives (audit 9: the draw went unchecked).
        # An empty stock is refilled first when the pile can (§0 C-RESTOCK), so the draw
        # is still owed; with nothing to restock from there is none (a turn with no draw)
        owed = who == g.turn and who not in g.drawn and (bool(g.stock) or len(g.pile) > 1) \
            and not (who == g.first_player and who not in g.had_turn)
        if who == g.turn and (p.get("drew") is not None) != owed:
            g.out.claims.append((e["seq"], "CL-AUTOPLAY", "violation"))
        if who == g.turn:
            g.had_turn.add(who)
            g.pass_turn(who)
        # §1 CL-STRIKES: timeouts 1-3 of a game are auto-played, the fourth removes;
        # the logged strike number is a claim (C-CLAIM)
        g.strikes[who] = g.strikes.get(who, 0) + 1
        if g.strikes[who] > 3:
            g.out.claims.append((e["seq"], "CL-STRIKES", "violation"))
        elif p.get("strike") != g.strikes[who]:
            g.out.claims.append((e["seq"], "C-CLAIM", "discrepancy"))
        hand = g.hands[who]
        drew, discarded = p.get("drew"), p["discarded"]
        if drew is not None:
            if not g.stock or g.stock[0] != drew:
                raise Stop(f"{drew} is not the stock top")
            hand.append(g.stock.pop(0))
        naturals = [c for c in hand if c != JK]
        # the turn's draw: the auto-play's own, or one the player made before his clocks
        # ran out (then the system only discards: the drawn card, as the rule's draw)
        source, card = ("stock", drew) if drew is not None else g.drawn.get(who, ("", ""))
        g.drawn.pop(who, None)
        if source == "stock" and card != JK:
            want = card
        else:
            want = max(naturals, key=autoplay_key) if naturals else JK
        if source != "discard" and discarded != want:
            g.out.claims.append((e["seq"], "CL-AUTOPLAY", "violation"))
        take(hand, discarded)
        g.pile.append(discarded)
    elif t == "StockReplenished":
        new = list(p["stock"])
        rest = list(g.pile)
        for c in new:
            take(rest, c)
        g.pile, g.stock = rest, new
    elif t == "DeclaredRummy":
        hand = g.hands[actor]
        for m in p["melds"]:
            for c in m["cards"]:
                take(hand, c)
        take(hand, p["discard"])
        g.pile.append(p["discard"])
        if g.round_live and not g.out.over:
            g.classic_win(actor)


def _table_move(g: _Game, e: Event) -> None:
    """§2 R5-MELD, R5-LAYOFF, R5-SWAP: cards to the table and their points."""
    t, p, actor = e["type"], e["payload"], e["actor"]
    if t == "Melded":
        hand = g.hands[actor]
        for c in p["cards"]:
            take(hand, c)
        m, points = read_table_meld(p["kind"], list(p["cards"]), p.get("as"))
        place(m, actor)
        g.melds.append(m)
        g.points[actor] = g.points.get(actor, 0) + points
    elif t == "LaidOff":
        take(g.hands[actor], p["card"])
        if not 0 <= p["meld"] < len(g.melds):
            raise Stop("no such meld")
        got = lay_off(g.melds[p["meld"]], p["card"], p.get("end"), actor)
        g.points[actor] = g.points.get(actor, 0) + got
    elif t == "JokerSwapped":
        if not 0 <= p["meld"] < len(g.melds):
            raise Stop("no such meld")
        take(g.hands[actor], p["card"])
        placer, value = swap_joker(g.melds[p["meld"]], p["card"], actor)
        g.hands[actor].append(JK)
        if placer in g.points:
            g.points[placer] -= value
        g.points[actor] = g.points.get(actor, 0) + value


def oracle(events: list[Event]) -> Oracle:
    """Fold one game's events (seq order) into what the rules say its results are."""
    events = [current(e) for e in events]
    created = next((e for e in events if e["type"] == "GameCreated"), None)
    if created is None:
        return Oracle(halted=True)
    g = _Game(created)
    if not (g.out.variant == "r500" and g.mode == "tournament"):
        for s in g.seats:
            g.move(s, "pot", g.stake)  # §1 CL-POT, §2 R5-POT: every seat stakes at the start
    logged: list[tuple[int, list[Key]]] = []
    for e in events:
        if e is created or e["type"] in ("GameCreated", "PlayerConnected", "PlayerDisconnected"):
            continue
        if e["type"] == "ChipsTransferred":
            # a logged 0 moves nothing, so it is no claim to compare (a zero rake written
            # out); the event itself still counts as the platform logging its transfers
            logged.append((e["seq"], [(t["from"], t["to"], int(t["amount"]))
                                      for t in e["payload"]["transfers"] if t["amount"]]))
            continue
        if e["type"] in ("RoundEnded", "GameEnded"):
            _check_claims(g, e)
            continue
        if g.out.over and e["type"] == "AutoPlayed":
            # nobody is in turn once the game is over: the auto-play breaks CL-AUTOPLAY
            g.out.claims.append((e["seq"], "CL-AUTOPLAY", "violation"))
            continue
        if g.out.over and e["type"] not in ("PlayerLeft", "PlayerRemoved"):
            continue
        if e["type"] in MOVES and e["actor"] not in g.active:
            continue  # a move by someone out of the game (C-TURN): his cards left play
        if e["type"] in MOVES and g.out.variant == "r500" and not g.round_live:
            continue  # §2 R5-END: the round is over until the next deal; nothing is played
        try:
            _apply(g, e)
        except (Stop, KeyError):
            g.out.halted = True
            break
    _transfer_claims(g.out, logged, g.game_end_seq)
    if not g.out.over:  # a game not over yet: the chips moved so far
        if g.out.variant == "r500" and g.mode == "tournament":
            g.out.net = {p: g.stacks[p] - g.stake for p in g.seats}
        else:
            g.out.net = {p: -g.paid[p] for p in g.seats}
    g.out.scores = dict(g.totals) if g.out.variant == "r500" else {}
    return g.out


__all__ = ["Meld", "Oracle", "chip_payments", "face_value", "hand_value", "meld_value", "oracle",
           "read_meld", "read_run", "read_table_meld", "reads_true"]
