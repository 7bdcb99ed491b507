"""Scripted Rummy 500 games for the r500 rule tests and sample logs: a stacked deck,
a log, and the stock tracked so a script can draw it down (``exhaust``)."""

from __future__ import annotations

from typing import Any

from logkit import Log, stacked_deck

from rummyguard.replay.rules.r500 import suggest
from rummyguard.sim.driver import Choice, Turn

# Two players, dealer p2 (seat 1): p1 starts. p1 can meld everything but 2C at once.
P1 = ["3H", "4H", "5H", "6H", "7C", "7D", "7S", "7H", "TD", "JD", "QD", "KD", "2C"]
P2 = ["AS", "2S", "5C", "6D", "9S", "8C", "JC", "QS", "4D", "9C", "TC", "3S", "5D"]
UP = "9D"
STOCK = ["2H", "KS", "AH", "JK", "QH"]
P1_PENALTY = 88  # 3H-6H 18, four 7s 28, TD-KD 40, 2C 2
P2_PENALTY = 96  # AS 15, 2S 2, 5C 5, 6D 6, 9S 9, 8C 8, JC 10, QS 10, 4D 4, 9C 9, TC 10, 3S 3, 5D 5

RUN_H = {"kind": "run", "cards": ["3H", "4H", "5H", "6H"]}
SET_7 = {"kind": "set", "cards": ["7C", "7D", "7S", "7H"]}
RUN_D = {"kind": "run", "cards": ["TD", "JD", "QD", "KD"]}


class Script:
    """One r500 game being written: ``log`` plus the stock still to draw (top first)."""

    def __init__(self, hands: list[list[str]] | None = None, up: str = UP, stock: list[str] = STOCK, *,
                 seats: list[str] | None = None, dealer: int = 1, rules: dict[str, Any] | None = None,
                 stake: int = 100, game_id: str = "g1") -> None:
        hands = hands if hands is not None else [P1, P2]
        self.seats = seats or [f"p{i + 1}" for i in range(len(hands))]
        self.log = Log(game_id)
        self.log.created("r500", self.seats, dealer=dealer, stake=stake, rules=rules if rules is not None else {"mode": "rounds"})
        self.round_no = 0
        self.deal(hands, up, stock, dealer=dealer)

    def deal(self, hands: list[list[str]], up: str, stock: list[str], *, dealer: int) -> int:
        """Deal a round; ``hands`` in deal order (the first is left of the dealer)."""
        deck = stacked_deck(hands, up, stock, decks=1, jokers=2)
        self.round_no += 1
        self.deck = deck
        self.stock = deck[sum(len(h) for h in hands) + 1:]
        return self.log.round(deck, round_no=self.round_no, dealer=dealer)

    def last(self) -> int:
        """The seq of the last event written."""
        return len(self.log.events) - 1

    def draw(self, player: str) -> str:
        card = self.stock.pop(0)
        self.log.draw(player, "stock", card)
        return card

    def turn(self, player: str) -> int:
        """Draw from the stock and discard the drawn card (stock draws may be discarded)."""
        return self.log.discard(player, self.draw(player))

    def meld(self, player: str, spec: dict[str, Any]) -> int:
        return self.log.add("Melded", player, spec)

    def layoff(self, player: str, card: str, meld: int, end: str | None = None) -> int:
        payload: dict[str, Any] = {"card": card, "meld": meld}
        if end:
            payload["end"] = end
        return self.log.add("LaidOff", player, payload)

    def swap(self, player: str, meld: int, card: str) -> int:
        return self.log.add("JokerSwapped", player, {"meld": meld, "card": card})

    def exhaust(self, order: list[str], start: int = 0) -> tuple[str, int]:
        """Players in ``order`` (from ``start``) draw and discard until the stock is empty;
        returns the last drawer and the seq of his discard."""
        i, seq, last = start, -1, ""
        while self.stock:
            last = order[i % len(order)]
            seq = self.turn(last)
            i += 1
        return last, seq

    def sys(self, type_: str, payload: dict[str, Any]) -> int:
        return self.log.sys(type_, payload)


def go_out_round(s: Script, first: str = "p1", second: str = "p2") -> None:
    """``first`` (p1) melds three melds, ``second`` (p2) takes the pile and lays 9D off on
    the first's run, the first lays off 2H and goes out with KS: the first scores 88, the
    second 9 - 96 = -87. (Swap them for a round where p2 starts, dealt p1's hand.)"""
    s.log.draw(first, "stock", "2H")
    s.meld(first, RUN_H)
    s.meld(first, SET_7)
    s.meld(first, RUN_D)
    s.log.discard(first, "2C")
    s.log.draw(second, "discard", "9D", "2C")
    s.layoff(second, "9D", 2, "low")
    s.log.discard(second, "2C")
    s.log.draw(first, "stock", "KS")
    s.layoff(first, "2H", 0, "low")
    s.log.discard(first, "KS")
    s.stock = s.stock[2:]


def pot_claims(s: Script, winners: dict[str, int], seats: list[str] | None = None, stake: int = 100) -> None:
    seats = seats or s.seats
    transfers = [{"from": p, "to": "pot", "amount": stake, "reason": "stake"} for p in seats]
    transfers += [{"from": "pot", "to": p, "amount": a, "reason": "pot"} for p, a in winners.items()]
    s.sys("ChipsTransferred", {"transfers": transfers})


def greedy(turn: Turn) -> Choice:
    """The module's greedy player as a driver policy (finishes target games quickly)."""
    kind, payload = suggest(turn.state, turn.player, turn.moves)  # type: ignore[arg-type]
    return Choice(kind, payload, turn.rng.randint(800, 9000))
