"""A platform that runs one game through the rules engine and logs it as EVENTS.md says.

The driver is the platform's side of a game: it shuffles (with a seeded RNG it is
given), deals, replenishes the stock, asks players for moves, and logs the claims
(``RoundEnded``, ``ChipsTransferred``, ``GameEnded``) from what the engine computed.
Every event goes through the same :class:`~rummyguard.replay.engine.GameEngine` that
replays logs, so a game it writes replays clean unless a fault is planted on purpose.

Players are policies: ``policy(view) -> Choice`` where ``view`` is a :class:`Turn`
with the player's legal moves and the engine (the simulator's fraud mechanisms may
peek at hidden state through it; honest policies must only use ``turn.view``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..events.cards import format_cards
from ..events.timestamps import format_ts
from ..replay.engine import GameEngine
from ..replay.variant import Variant


@dataclass(slots=True)
class Choice:
    """A player's decision: the move and how long he thought (ms)."""

    type: str
    payload: dict[str, Any]
    think_ms: int = 3000


@dataclass(slots=True)
class Turn:
    """What a policy is shown when asked to move."""

    player: str
    moves: list[tuple[str, dict[str, Any]]]
    engine: GameEngine
    rng: random.Random

    @property
    def state(self) -> Variant:
        assert self.engine.variant is not None
        return self.engine.variant

    @property
    def view(self) -> dict[str, Any]:
        """The player's own view: all an honest policy may use."""
        return self.state.snapshot(self.player)


Policy = Callable[[Turn], Choice]


def random_policy(turn: Turn) -> Choice:
    """Uniform over legal moves, except that a move that ends the game or a round
    (a Rummy declaration, going out) is always taken; Fresh is never pressed."""
    moves = [m for m in turn.moves if m[0] != "FreshPressed"]
    for preferred in ("DeclaredRummy", "LaidDown"):
        for m in moves:
            if m[0] == preferred:
                return Choice(m[0], m[1], turn.rng.randint(1500, 9000))
    kind, payload = turn.rng.choice(moves)
    return Choice(kind, payload, turn.rng.randint(800, 9000))


@dataclass
class Platform:
    """Runs one game. ``seed`` fixes every shuffle; policies bring their own RNG use."""

    game_id: str
    variant: str
    seats: list[str]
    dealer: int = 0
    stake: int = 100
    rules: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    start_ms: int = 1_795_000_000_000
    table_id: str = "t0"
    max_events: int = 5000
    events: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.engine = GameEngine(verify_hashes=False)
        self.clock = self.start_ms
        self.rounds_logged = 0
        self.transfers_claimed = 0
        self.ended = False

    # -- logging -----------------------------------------------------------------------
    def emit(self, type_: str, actor: str, payload: dict[str, Any], dt_ms: int = 200) -> dict[str, Any]:
        """Log one event ``dt_ms`` after the previous and fold it into the engine."""
        self.clock += max(dt_ms, 1)
        seq = len(self.events)
        event = {
            "event_id": f"{self.game_id}-{seq:05d}",
            "game_id": self.game_id,
            "seq": seq,
            "type": type_,
            "v": 1 if type_ not in ("Drew", "Discarded") else 2,
            "ts": format_ts(self.clock),
            "actor": actor,
            "payload": payload,
        }
        self.events.append(event)
        self.engine.apply(event)
        return event

    @property
    def state(self) -> Variant:
        assert self.engine.variant is not None
        return self.engine.variant

    # -- the platform's own decisions ------------------------------------------------------
    def system_step(self) -> bool:
        """Log the system event due now, if any. True if one was logged."""
        st = self.state
        finished = st.rounds_finished()
        if finished > self.rounds_logged:
            self.rounds_logged += 1
            result = st.round_result(self.rounds_logged)
            assert result is not None
            winners, scores = result
            self._claim_transfers()
            self.emit("RoundEnded", "system",
                      {"round": self.rounds_logged, "winners": winners, "scores": scores})
            return True
        if st.is_over():
            self._claim_transfers()
            self.emit("GameEnded", "system", {"winners": st.winners(), "net": self.engine.net()})
            self.ended = True
            return True
        deal = st.deal_due()
        if deal is not None:
            deck = list(deal["cards"])
            self.rng.shuffle(deck)
            self.emit("RoundStarted", "system", {"round": deal["round"], "dealer": deal["dealer"],
                                                 "deck": format_cards(deck), "redeal": deal["redeal"]},
                      dt_ms=500)
            return True
        restock = st.restock_due()
        if restock is not None:
            cards = list(restock)
            self.rng.shuffle(cards)
            self.emit("StockReplenished", "system", {"stock": format_cards(cards)})
            return True
        return False

    def _claim_transfers(self) -> None:
        assert self.engine.ctx is not None
        pending = self.engine.ctx.transfers[self.transfers_claimed:]
        if pending:
            self.transfers_claimed += len(pending)
            self.emit("ChipsTransferred", "system", {"transfers": [
                {"from": t.src, "to": t.dst, "amount": t.amount, "reason": t.reason} for t in pending
            ]})

    def run(self, policies: dict[str, Policy] | Policy) -> list[dict[str, Any]]:
        """Play the game to its end; returns the events."""
        self.emit("GameCreated", "system", {
            "variant": self.variant, "table_id": self.table_id, "seats": list(self.seats),
            "dealer": self.dealer, "stake": self.stake, "rules": dict(self.rules),
        }, dt_ms=0)
        while not self.ended:
            if self.engine.halted:
                raise RuntimeError(f"{self.game_id}: the engine halted: {self.engine.findings[-1]}")
            if self.system_step():
                continue
            if len(self.events) >= self.max_events:
                self._abandon()
                continue
            actors = self.state.to_act()
            if not actors:
                raise RuntimeError(f"{self.game_id}: nobody can act and no system event is due")
            player = actors[0] if len(actors) == 1 else self.rng.choice(actors)
            moves = self.state.legal_moves(player)
            if not moves:
                raise RuntimeError(f"{self.game_id}: {player} is to act but has no legal move")
            policy = policies if callable(policies) else policies[player]
            choice = policy(Turn(player, moves, self.engine, self.rng))
            self.emit(choice.type, player, choice.payload, choice.think_ms)
        return self.events

    def _abandon(self) -> None:
        """A game that will not end (e.g. random play): players leave until one is left."""
        for player in self.state.to_act()[:1] or [p for p in self.seats]:
            self.emit("PlayerLeft", player, {})
            return


def play(variant: str, seats: list[str], *, seed: int = 0, policy: Policy = random_policy,
         game_id: str = "g", **kwargs: Any) -> list[dict[str, Any]]:
    """Play one game with one policy for everybody; returns its events."""
    return Platform(game_id, variant, seats, seed=seed, **kwargs).run(policy)
