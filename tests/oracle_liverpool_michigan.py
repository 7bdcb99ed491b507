"""An independent results oracle for Liverpool rummy and Michigan rummy (with the
three-in-one poker phase), computed from the event list alone.

Why it exists: the simulator picks its moves through our own engine, so a misreading of
RULES.md shared by the engine and the simulator would replay "clean" for ever. This
module is a second reading of the spec, written from RULES.md §0, §3, §4, §5 and
EVENTS.md without looking at (or importing) ``rummyguard.replay``. It follows the cards
only as far as the results need them (who holds what, who went out, who started a
Michigan sequence with which card) and does not judge the legality of moves: it is an
oracle for *clean* logs and for logs whose only breaks are wrong platform claims.

What it computes, for each game (see :class:`OracleResult`):

* per-round results (``round``, ``winners``, ``scores``), cumulative Liverpool penalty
  totals, the game's ``winners``;
* every chip transfer ``(from, to, amount)`` the rules make due, and each player's
  ``net`` (what he received minus what he paid);
* the C-CLAIM verdict on the platform's claims: ``RoundEnded``, ``GameEnded`` (winners,
  net), ``ChipsTransferred`` (one multiset per game), ``PlayerRemoved``.

Where RULES.md is silent the oracle takes the reading written next to the code, marked
"decided here" in the docstring of the class or function that takes it. Slow and plain
on purpose: lists and Counters of card codes, no integer encoding.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rummyguard.events.cards import RANKS, legacy_to_code

Event = dict[str, Any]
Transfer = tuple[str, str, int]

# RULES.md §4: "Pay cards (seed: J Q K A; decided: the suits): JS QD KC AH (config pay_cards)".
DEFAULT_PAY_CARDS = ("JS", "QD", "KC", "AH")
# RULES.md §3 LV-SCORE: "A and 2 = 25; 3-9 = 5; T J Q K = 10".
LV_POINTS = {"A": 25, "2": 25, **{r: 5 for r in "3456789"}, **{r: 10 for r in "TJQK"}}
# RULES.md §3: "Deal (decided): 10 cards in rounds 1-4, 12 in rounds 5-6". "Six rounds".
LV_ROUNDS = 6


def lv_deal_size(round_no: int) -> int:
    return 10 if round_no <= 4 else 12


def lv_points(cards: Counter[str]) -> int:
    """Penalty points of a Liverpool hand left at the end of a round (LV-SCORE)."""
    return sum(LV_POINTS[card[0]] * n for card, n in cards.items())


# == poker (MI-POKER: standard ranking, A high, A2345 the lowest straight) ==================

def poker_rank(cards: list[str]) -> tuple[int, ...]:
    """A comparable key for a five-card hand: category first (8 straight flush ... 0 high
    card), then the ranks that break ties in the standard order. Written out case by case
    so that it reads like the ranking table."""
    assert len(cards) == 5, cards
    values = sorted((RANKS.index(c[0]) + 2 for c in cards), reverse=True)  # 2..14
    flush = len({c[1] for c in cards}) == 1
    distinct = sorted(set(values), reverse=True)
    straight_high = 0
    if len(distinct) == 5:
        if values[0] - values[4] == 4:
            straight_high = values[0]
        elif values == [14, 5, 4, 3, 2]:
            straight_high = 5  # the wheel: the ace plays low
    counts = Counter(values)
    # ranks grouped by how many times they appear, bigger groups first, then higher rank
    groups = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    shape = [n for _, n in groups]
    ordered = [v for v, _ in groups]
    if straight_high and flush:
        return (8, straight_high)
    if shape == [4, 1]:
        return (7, *ordered)
    if shape == [3, 2]:
        return (6, *ordered)
    if flush:
        return (5, *values)
    if straight_high:
        return (4, straight_high)
    if shape == [3, 1, 1]:
        return (3, *ordered)
    if shape == [2, 2, 1]:
        return (2, *ordered)
    if shape == [2, 1, 1, 1]:
        return (1, *ordered)
    return (0, *values)


# == shared bookkeeping ====================================================================

@dataclass
class RoundResult:
    round: int
    winners: list[str]
    scores: dict[str, int]


@dataclass
class OracleResult:
    """What the oracle says about one game.

    ``claim_findings`` lists ``(seq, "C-CLAIM", what)`` for every platform claim that
    differs from the oracle's value (``what`` names the field, for people).
    ``problems`` lists places where the log and the oracle's card tracking parted (a card
    that is not where the event says): the oracle's figures after such a place are not
    to be trusted, and a clean log never has one."""

    variant: str
    seats: list[str]
    winners: list[str] = field(default_factory=list)
    net: dict[str, int] = field(default_factory=dict)
    scores: dict[str, int] = field(default_factory=dict)
    rounds: list[RoundResult] = field(default_factory=list)
    transfers: list[Transfer] = field(default_factory=list)
    claim_findings: list[tuple[int, str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    over: bool = False

    def results(self) -> dict[str, Any]:
        """The three fields an independent checker compares with ``GameRecord.results``."""
        return {"winners": list(self.winners), "net": dict(self.net), "scores": dict(self.scores)}


def card_code(card: Any) -> str:
    """A card of any accepted event version as its code (EVENTS.md "Older versions")."""
    return card if isinstance(card, str) else legacy_to_code(card)


def drew_payload(event: Event) -> tuple[str, list[str]]:
    """``Drew`` v2 as (source, cards); v1 (``from`` deck/pile, one legacy card) read the
    way EVENTS.md says upcasting reads it: deck = stock, pile = discard top."""
    p = event["payload"]
    if event.get("v", 2) == 1:
        return ("stock" if p["from"] == "deck" else "discard"), [card_code(p["card"])]
    return p["source"], [card_code(c) for c in p["cards"]]


def same_winners(claimed: list[str], computed: list[str]) -> bool:
    """``winners`` are a set of player ids: the order carries nothing, a repeat is wrong
    (decided here)."""
    return sorted(claimed) == sorted(computed)


def same_values(claimed: dict[str, int], computed: dict[str, int]) -> bool:
    """``scores`` / ``net`` compared player by player (RULES.md §0); an entry that is
    absent reads as 0, so leaving out a 0 (or adding a 0 for a pool) is no discrepancy
    (decided here: a 0 claims nothing)."""
    return all(claimed.get(k, 0) == computed.get(k, 0) for k in set(claimed) | set(computed))


class _Game:
    """State shared by both variants: seats, who is still in, the chips, the claims."""

    def __init__(self, created: Event) -> None:
        p = created["payload"]
        self.variant: str = p["variant"]
        self.seats: list[str] = list(p["seats"])
        self.n = len(self.seats)
        self.stake: int = int(p.get("stake", 0))
        # RULES.md: "rules (config object of RULES.md; missing keys take the defaults)";
        # null is a key not set.
        self.rules: dict[str, Any] = {k: v for k, v in (p.get("rules") or {}).items() if v is not None}
        self.active: list[str] = list(self.seats)
        self.left: set[str] = set()
        self.out = OracleResult(self.variant, list(self.seats))
        self.ended_rounds: dict[int, RoundResult] = {}
        self.deals_seen = 0
        self.over = False

    # chips ----------------------------------------------------------------------------
    def pay(self, src: str, dst: str, amount: int) -> None:
        """Record a due transfer. A zero amount moves nothing and is not a transfer
        (decided here: nothing to claim)."""
        if amount > 0:
            self.out.transfers.append((src, dst, amount))

    def seat_order_from(self, seat: int, players: list[str]) -> list[str]:
        """``players`` in seat order starting at ``seat`` (wrapping)."""
        order = [self.seats[(seat + i) % self.n] for i in range(self.n)]
        return [q for q in order if q in players]

    def left_of(self, seat: int) -> int:
        return (seat + 1) % self.n

    def problem(self, seq: int, text: str) -> None:
        """The log and the oracle's cards parted (see :class:`OracleResult`)."""
        self.out.problems.append(f"seq {seq}: {text}")

    # claims ---------------------------------------------------------------------------
    def claim(self, seq: int, what: str) -> None:
        self.out.claim_findings.append((seq, "C-CLAIM", what))

    def count_deal(self, event: Event) -> int:
        """The number of this deal by the rules (one more than the last); the
        ``RoundStarted.round`` the platform logs is a number it claims (§0 C-CLAIM, decided
        here: the rounds are counted, not read, so a wrong number cannot change the deal
        size or the end of the game)."""
        self.deals_seen += 1
        if int(event["payload"].get("round", -1)) != self.deals_seen:
            self.claim(event["seq"], "round number")
        return self.deals_seen

    def check_round_ended(self, event: Event) -> None:
        p = event["payload"]
        got = self.ended_rounds.get(int(p.get("round", -1)))
        if got is None:
            self.claim(event["seq"], "round not ended")
            return
        if not same_winners(p.get("winners", []), got.winners):
            self.claim(event["seq"], "round winners")
        if not same_values(p.get("scores", {}), got.scores):
            self.claim(event["seq"], "round scores")

    def check_game_ended(self, event: Event) -> None:
        p = event["payload"]
        if not self.over:
            self.claim(event["seq"], "game not over")
            return
        if not same_winners(p.get("winners", []), self.out.winners):
            self.claim(event["seq"], "game winners")
        if not same_values(p.get("net", {}), self.net()):
            self.claim(event["seq"], "game net")

    def drop_out(self, player: str) -> None:
        """The variant's consequences of a player leaving the game (his cards, the end
        of the game when one player is left)."""
        raise NotImplementedError

    def leave(self, player: str) -> None:
        """PlayerLeft: "may come at any moment" (EVENTS.md); a second one changes nothing."""
        self.left.add(player)
        self.drop_out(player)

    def check_removed(self, event: Event) -> None:
        """PlayerRemoved is a claim here: neither variant's section removes anyone except
        a player who left (decided here, as the §0 "removals" claim: a removal that
        confirms a leave is right, any other is a discrepancy, and the player is out all
        the same, see :func:`oracle`)."""
        p = event["payload"]
        if not (p.get("reason") == "left" and p.get("player") in self.left):
            self.claim(event["seq"], "removal")

    def net(self) -> dict[str, int]:
        net = dict.fromkeys(self.seats, 0)
        for src, dst, amount in self.out.transfers:
            if src in net:
                net[src] -= amount
            if dst in net:
                net[dst] += amount
        return net

    def check_transfers(self, chips_events: list[Event], game_ended: Event | None) -> None:
        """RULES.md §0 C-CLAIM: the logged transfers, all together, must equal the due ones
        as a multiset of (from, to, amount); the first differing event carries the
        finding, or GameEnded for a transfer due but never logged."""
        if not chips_events:
            return  # "A claim the platform did not log is not a finding."
        due = Counter(self.out.transfers)
        flagged = False
        for event in chips_events:
            bad = False
            for t in event["payload"].get("transfers", []):
                key = (t["from"], t["to"], int(t["amount"]))
                if key[2] == 0:
                    continue  # moves nothing: not a transfer (as :meth:`pay` never records one)
                if due[key] > 0:
                    due[key] -= 1
                else:
                    bad = True
            if bad and not flagged:
                self.claim(event["seq"], "transfers")
                flagged = True
        if not flagged and +due and game_ended is not None:
            self.claim(game_ended["seq"], "transfers")

    def finish(self) -> OracleResult:
        self.out.net = self.net()
        self.out.over = self.over
        return self.out


# == Liverpool (RULES.md §3) ===============================================================

class _Liverpool(_Game):
    """Liverpool: six rounds of contracts; penalty points for what others hold.

    Chips (decided here: §3 names none): each player stakes ``stake`` into the pot at
    GameCreated, as R5-POT and CL-POT do; the lowest total after round 6 takes the pot,
    tied lowest totals share it ("a tie shares the win"), the odd chips one each to the
    tied players in seat order from seat 0 (R5-GAME's reading of "seat order").
    A player who leaves is out: his cards leave play, his stake stays in the pot, he
    scores nothing more and cannot win; with one player left, that player takes the pot
    at once (CL-STRIKES / CL-LEAVE carried over)."""

    def __init__(self, created: Event) -> None:
        super().__init__(created)
        self.totals = dict.fromkeys(self.seats, 0)
        for q in self.seats:
            self.pay(q, "pot", self.stake)
        self.pot = self.stake * self.n
        self.round_no = 0
        self.in_round = False
        self.hands: dict[str, Counter[str]] = {}
        self.stock: list[str] = []  # top first
        self.pile: list[str] = []  # top last

    def take(self, seq: int, player: str, card: str) -> None:
        hand = self.hands.get(player)
        if hand is None or hand[card] <= 0:
            self.problem(seq, f"{player} does not hold {card}")
            return
        hand[card] -= 1
        if hand[card] == 0:
            del hand[card]

    def take_pile_top(self, seq: int, card: str) -> None:
        if not self.pile or self.pile[-1] != card:
            self.problem(seq, f"{card} is not the discard top")
            return
        self.pile.pop()

    def take_stock_top(self, seq: int, card: str | None) -> str | None:
        if not self.stock:
            self.problem(seq, "the stock is empty")
            return None
        top = self.stock.pop(0)
        if card is not None and top != card:
            self.problem(seq, f"stock top is {top}, not {card}")
        return top

    def deal(self, event: Event) -> None:
        p = event["payload"]
        self.round_no = self.count_deal(event)
        dealer = int(p["dealer"])
        deck = [card_code(c) for c in p["deck"]]
        # §0 C-DEAL: from the top, one card at a time, seat by seat starting left of the
        # dealer; §3: 10 or 12 cards, then one card face up.
        order = self.seat_order_from(self.left_of(dealer), self.active)
        self.hands = {q: Counter() for q in order}
        i = 0
        for _ in range(lv_deal_size(self.round_no)):
            for q in order:
                self.hands[q][deck[i]] += 1
                i += 1
        self.pile = [deck[i]]
        self.stock = deck[i + 1:]
        self.in_round = True

    def maybe_out(self, player: str) -> None:
        """LV-OUT: the round ends when a player has no cards."""
        if self.in_round and not self.hands.get(player):
            self.end_round(player)

    def end_round(self, winner: str) -> None:
        self.in_round = False
        # LV-SCORE: "the others score what they hold"; the players still in only.
        scores = {q: (0 if q == winner else lv_points(self.hands[q]))
                  for q in self.seats if q in self.hands and q in self.active}
        for q, s in scores.items():
            self.totals[q] += s
        rr = RoundResult(self.round_no, [winner], scores)
        self.ended_rounds[self.round_no] = rr
        self.out.rounds.append(rr)
        if self.round_no >= LV_ROUNDS:
            low = min(self.totals[q] for q in self.active)
            self.end_game([q for q in self.seats if q in self.active and self.totals[q] == low])

    def end_game(self, winners: list[str]) -> None:
        self.over = True
        self.in_round = False
        self.out.winners = winners
        share, odd = divmod(self.pot, len(winners))
        for i, w in enumerate(winners):  # seat order from seat 0
            self.pay("pot", w, share + (1 if i < odd else 0))
        self.pot = 0

    def drop_out(self, player: str) -> None:
        if player not in self.active or self.over:
            return
        self.active.remove(player)
        self.hands.pop(player, None)  # "his cards leave play"
        if len(self.active) == 1:
            self.end_game(list(self.active))

    def apply(self, event: Event) -> None:
        t, seq, actor, p = event["type"], event["seq"], event.get("actor"), event["payload"]
        if t == "RoundStarted":
            if not self.over:
                self.deal(event)
            return
        if t == "PlayerLeft":
            self.leave(actor)
            return
        if t == "StockReplenished":
            # C-RESTOCK: the pile but its top becomes the stock in the logged order.
            self.stock = [card_code(c) for c in p["stock"]]
            self.pile = self.pile[-1:]
            return
        if not self.in_round or self.over or actor not in self.hands:
            return  # a move outside a round: no effect on the results (a violation)
        hand = self.hands[actor]
        if t == "Drew":
            source, cards = drew_payload(event)
            for card in cards:
                if source == "stock":
                    top = self.take_stock_top(seq, card)
                    if top is not None:
                        hand[top] += 1
                else:
                    self.take_pile_top(seq, card)
                    hand[card] += 1
        elif t == "Discarded":
            card = card_code(p["card"])
            self.take(seq, actor, card)
            self.pile.append(card)
            self.maybe_out(actor)
        elif t == "LaidDown":
            for meld in p["melds"]:
                for card in meld["cards"]:
                    self.take(seq, actor, card_code(card))
            self.maybe_out(actor)
        elif t == "LaidOff":
            self.take(seq, actor, card_code(p["card"]))
            self.maybe_out(actor)
        elif t == "Bought":
            # LV-BUY: the discard plus the top stock card as a penalty.
            card = card_code(p["card"])
            self.take_pile_top(seq, card)
            hand[card] += 1
            top = self.take_stock_top(seq, card_code(p["penalty"]))
            if top is not None:
                hand[top] += 1
        elif t == "RummyCalled":
            # LV-RUMMY: takes the discard, lays it off, then discards one of his own.
            self.take_pile_top(seq, card_code(p["card"]))
            own = card_code(p["discard"])
            self.take(seq, actor, own)
            self.pile.append(own)
            self.maybe_out(actor)


# == Michigan (RULES.md §4) ================================================================

def _suit_rank(card: str) -> tuple[str, int]:
    return card[1], RANKS.index(card[0])  # 2 low (0), A high (12)


class _Michigan(_Game):
    """Michigan: a stops game; chips only.

    Readings taken where §4 is silent (decided here): ``stake`` plays no part (§4 names
    none of it); the poker ante is paid with the declaration (a player who does not
    declare does not play the poker hand); the poker pot is settled when every player
    still in has declared, or at the first card played, or when leaves end the deal; with
    no declared hand still in, nobody wins it and it stays for a later deal's pot. A
    player who leaves is out: his hand is dead; with one player left he wins the deal
    (the kitty) and the game ends. The MI-END split is among the players still in; the
    game's winners are the seated players with the highest net."""

    def __init__(self, created: Event, winners_still_in: bool = False) -> None:
        super().__init__(created)
        self.winners_still_in = winners_still_in
        self.pay_cards: list[str] = list(self.rules.get("pay_cards", DEFAULT_PAY_CARDS))
        self.pay_ante = int(self.rules.get("pay_ante", 1))
        self.widow_price = int(self.rules.get("widow_price", 1))
        self.three_in_one = bool(self.rules.get("three_in_one", False))
        # "default one per player"; 0 read as "not set" too (decided here: no game of
        # zero deals)
        self.deals = int(self.rules.get("deals", 0)) or self.n
        self.pools: dict[str, int] = {"kitty": 0, "poker": 0, **{f"pay:{c}": 0 for c in self.pay_cards}}
        self.deal_no = 0
        self.dealer = int(created["payload"].get("dealer", 0))
        self.in_deal = False
        self.hands: dict[str, Counter[str]] = {}
        self.widow: Counter[str] = Counter()
        self.widow_bought = False
        self.declared: dict[str, list[str]] = {}
        self.poker_open = False
        self.last_played: str | None = None

    def to_pool(self, player: str, pool: str, amount: int) -> None:
        self.pay(player, pool, amount)
        self.pools[pool] += amount

    def from_pool(self, pool: str, player: str, amount: int) -> None:
        self.pay(pool, player, amount)
        self.pools[pool] -= amount

    def deal(self, event: Event) -> None:
        p = event["payload"]
        self.deal_no = self.count_deal(event)
        self.dealer = int(p["dealer"])
        dealer_id = self.seats[self.dealer]
        # MI-ANTE: 1 chip to the kitty from each player, 2 from the dealer; pay_ante on
        # each pay card from each player.
        for q in self.active:
            self.to_pool(q, "kitty", 2 if q == dealer_id else 1)
            for c in self.pay_cards:
                self.to_pool(q, f"pay:{c}", self.pay_ante)
        # MI-DEAL: all 52 one at a time from left of the dealer, the widow after the dealer.
        order = self.seat_order_from(self.left_of(self.dealer), self.active)
        hands: list[Counter[str]] = [Counter() for _ in range(len(order) + 1)]
        for i, card in enumerate(p["deck"]):
            hands[i % len(hands)][card_code(card)] += 1
        self.hands = dict(zip(order, hands[:-1], strict=True))
        self.widow = hands[-1]
        self.widow_bought = False
        self.declared = {}
        self.poker_open = self.three_in_one
        self.last_played = None
        self.in_deal = True

    def settle_poker(self) -> None:
        """MI-POKER: the best declared hand among the players still in wins the pot; ties
        split, the odd chips one each in seat order from left of the dealer."""
        if not self.poker_open:
            return
        self.poker_open = False
        hands = {q: poker_rank(c) for q, c in self.declared.items() if q in self.active}
        if not hands or self.pools["poker"] == 0:
            return
        best = max(hands.values())
        winners = self.seat_order_from(self.left_of(self.dealer), [q for q, r in hands.items() if r == best])
        share, odd = divmod(self.pools["poker"], len(winners))
        for i, w in enumerate(winners):
            self.from_pool("poker", w, share + (1 if i < odd else 0))

    def end_deal(self, winner: str) -> None:
        """MI-OUT: the first player out wins the kitty; unwon pay-card chips roll over."""
        self.settle_poker()
        self.in_deal = False
        if self.pools["kitty"]:
            self.from_pool("kitty", winner, self.pools["kitty"])
        rr = RoundResult(self.deal_no, [winner], {})
        self.ended_rounds[self.deal_no] = rr
        self.out.rounds.append(rr)
        if self.deal_no >= self.deals or len(self.active) == 1:
            self.end_game()

    def end_game(self) -> None:
        """MI-END: the chips left on all pay cards together, divided equally among the
        players (still in), remainder one chip each in seat order from left of the last
        dealer. Each player's share is taken from the pay cards in their config order."""
        self.over = True
        self.in_deal = False
        players = self.seat_order_from(self.left_of(self.dealer), self.active)
        pools = [f"pay:{c}" for c in self.pay_cards]
        total = sum(self.pools[k] for k in pools)
        share, odd = divmod(total, len(players))
        for i, q in enumerate(players):
            owed = share + (1 if i < odd else 0)
            for k in pools:
                part = min(owed, self.pools[k])
                if part:
                    self.from_pool(k, q, part)
                    owed -= part
        # MI-END: "the game's winners are the players with the highest net" (the letter:
        # every seated player has a net; ``winners_still_in`` restricts it to the players
        # still in the game, the engine's documented reading)
        nets = self.net()
        pool = [q for q in self.seats if q in self.active or not self.winners_still_in]
        top = max(nets[q] for q in pool)
        self.out.winners = [q for q in pool if nets[q] == top]

    def drop_out(self, player: str) -> None:
        if player not in self.active or self.over:
            return
        self.active.remove(player)
        self.hands.pop(player, None)  # the hand is dead
        if self.poker_open and self.in_deal and all(q in self.declared for q in self.active):
            self.settle_poker()
        if len(self.active) == 1:
            if self.in_deal:
                self.end_deal(self.active[0])
            else:
                self.end_game()

    def apply(self, event: Event) -> None:
        t, seq, actor, p = event["type"], event["seq"], event.get("actor"), event["payload"]
        if t == "RoundStarted":
            if not self.over:
                self.deal(event)
            return
        if t == "PlayerLeft":
            self.leave(actor)
            return
        if not self.in_deal or self.over or actor not in self.hands:
            return
        if t == "WidowBought":
            if self.widow_bought:
                return  # MI-WIDOW: a second purchase is a violation; nothing changes hands
            self.widow_bought = True
            if int(p.get("price", self.widow_price)) != self.widow_price:
                self.claim(seq, "widow price")  # the price the platform says it charged
            self.to_pool(actor, "kitty", self.widow_price)
            self.hands[actor] = self.widow  # his own hand is dead
            self.widow = Counter()
        elif t == "PokerHandDeclared":
            if not self.poker_open or actor in self.declared:
                return
            self.declared[actor] = [card_code(c) for c in p["cards"]]
            self.to_pool(actor, "poker", 1)
            if all(q in self.declared for q in self.active):
                self.settle_poker()
        elif t == "CardPlayed":
            self.settle_poker()
            card = card_code(p["card"])
            hand = self.hands[actor]
            if hand[card] <= 0:
                self.problem(seq, f"{actor} does not hold {card}")
                return
            suit, rank = _suit_rank(card)
            follows = False
            if self.last_played is not None:
                ls, lr = _suit_rank(self.last_played)
                follows = ls == suit and lr + 1 == rank
            if not follows:
                # MI-START / MI-PENALTY: a start with a card other than the lowest of
                # that suit in the starter's hand costs 1 chip to every other player.
                lowest = min(_suit_rank(c)[1] for c in hand if c[1] == suit)
                if rank != lowest:
                    for q in self.active:
                        if q != actor:
                            self.pay(actor, q, 1)
            hand[card] -= 1
            if hand[card] == 0:
                del hand[card]
            self.last_played = card
            if card in self.pay_cards and self.pools[f"pay:{card}"]:
                # MI-PAY: whoever plays a pay card takes the chips on it.
                self.from_pool(f"pay:{card}", actor, self.pools[f"pay:{card}"])
            if not hand:
                self.end_deal(actor)


# == entry point ===========================================================================

def oracle(events: list[Event], *, mi_winners_still_in: bool = False) -> OracleResult:
    """The oracle's verdict on one game's events (in seq order).

    ``mi_winners_still_in``: Michigan's game winners among the players still in the game
    only (the engine's reading) instead of among every seated player (MI-END's letter)."""
    created = next(e for e in events if e["type"] == "GameCreated")
    variant = created["payload"]["variant"]
    game: _Liverpool | _Michigan
    if variant == "liverpool":
        game = _Liverpool(created)
    elif variant == "michigan":
        game = _Michigan(created, mi_winners_still_in)
    else:
        raise ValueError(f"the oracle covers liverpool and michigan, not {variant}")
    chips: list[Event] = []
    game_ended: Event | None = None
    for event in events:
        if event is created:
            continue
        t = event["type"]
        # a claim is judged against the state when it is logged (a RoundEnded before the
        # round ended is wrong even if the round later ends that way)
        if t == "ChipsTransferred":
            chips.append(event)
        elif t == "RoundEnded":
            game.check_round_ended(event)
        elif t == "PlayerRemoved":
            game.check_removed(event)
            # applied as the platform applied it (ARCHITECTURE: a wrong move or claim is
            # reported and applied): whoever the platform removed is out of the game
            if event["payload"].get("player") in game.active:
                game.drop_out(event["payload"]["player"])
        elif t == "GameEnded":
            game_ended = game_ended or event
            game.check_game_ended(event)
        else:
            game.apply(event)
    if isinstance(game, _Liverpool):
        game.out.scores = dict(game.totals)
    game.check_transfers(chips, game_ended)
    game.out.claim_findings.sort(key=lambda f: f[0])
    return game.finish()


__all__ = ["OracleResult", "RoundResult", "lv_points", "oracle", "poker_rank"]
