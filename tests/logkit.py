"""Build small, readable game logs for rule tests: a stacked deck and a script of moves."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rummyguard.events.cards import format_cards, parse_cards, standard_deck
from rummyguard.events.timestamps import format_ts

T0 = 1_795_000_000_000


def stacked_deck(hands: list[list[str]], up: str, stock_top: list[str] = (), *, decks: int = 2,
                 jokers: int = 4, order: list[int] | None = None) -> list[str]:
    """A full deck that deals ``hands`` (in deal order: hands[0] is the first player,
    dealt one card per circuit, the longest hand's extra card last), then ``up`` face
    up, then ``stock_top`` as the top of the stock, then the rest of the cards."""
    full = Counter(standard_deck(decks, jokers))
    deal: list[str] = []
    longest = max(len(h) for h in hands)
    for i in range(longest):
        for h in hands:
            if i < len(h):
                deal.append(h[i])
    deal.append(up)
    deal.extend(stock_top)
    used = Counter(parse_cards(deal))
    assert not (used - full), f"stacked cards exceed the deck: {used - full}"
    rest = sorted((full - used).elements())
    return deal + format_cards(rest)


class Log:
    """Accumulates events with contiguous seqs and increasing timestamps."""

    def __init__(self, game_id: str = "g1", start: int = T0) -> None:
        self.game_id = game_id
        self.clock = start
        self.events: list[dict[str, Any]] = []

    def add(self, type_: str, actor: str, payload: dict[str, Any] | None = None, *,
            dt: float = 1.0, v: int | None = None) -> int:
        """Append an event ``dt`` seconds after the previous; returns its seq."""
        self.clock += int(dt * 1000)
        seq = len(self.events)
        self.events.append({
            "event_id": f"{self.game_id}-{seq:04d}", "game_id": self.game_id, "seq": seq,
            "type": type_, "v": v or (2 if type_ in ("Drew", "Discarded") else 1),
            "ts": format_ts(self.clock), "actor": actor, "payload": payload or {},
        })
        return seq

    def sys(self, type_: str, payload: dict[str, Any], *, dt: float = 0.2) -> int:
        return self.add(type_, "system", payload, dt=dt)

    def created(self, variant: str, seats: list[str], *, dealer: int = 0, stake: int = 100,
                rules: dict[str, Any] | None = None) -> int:
        return self.add("GameCreated", "system", {
            "variant": variant, "table_id": "t1", "seats": seats, "dealer": dealer,
            "stake": stake, "rules": rules or {}}, dt=0)

    def round(self, deck: list[str], *, round_no: int = 1, dealer: int = 0, redeal: int = 0) -> int:
        return self.sys("RoundStarted", {"round": round_no, "dealer": dealer, "deck": deck,
                                         "redeal": redeal})

    def draw(self, player: str, source: str, *cards: str, dt: float = 2.0) -> int:
        return self.add("Drew", player, {"source": source, "cards": list(cards)}, dt=dt)

    def discard(self, player: str, card: str, dt: float = 2.0) -> int:
        return self.add("Discarded", player, {"card": card}, dt=dt)


def findings(record) -> list[tuple[int, str, str]]:
    """``(seq, rule, kind)`` of every finding, in order."""
    return [(f.seq, f.rule, f.kind) for f in record.findings]
