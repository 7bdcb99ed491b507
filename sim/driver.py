"""A platform that runs one game through the rules engine and logs it as EVENTS.md says.

The driver is the platform's side of a game: it shuffles (with a seeded RNG it is
given), deals, replenishes the stock, asks players for moves, and logs the claims
(``RoundEnded``, ``ChipsTransferred``, ``GameEnded``) from what the engine computed.
Every event goes through the same :class:`~rummyguard.replay.engine.GameEngine` that
replays logs, so a game it writes replays clean unless a fault is planted on purpose.

Players are policies: ``policy(view) -> Choice`` where ``view`` is a :class:`Turn`
with the player's legal moves and the engine (the simulator's fraud mechanisms may
peek at hidden state through it; honest policies must only use ``turn.view``).

Beyond the moves, the platform does what a real one does around them:

- ``PlayerConnected`` for every seat right after ``GameCreated`` (``connections``: the
  session's ip/device hashes), and ``PlayerDisconnected``/``PlayerConnected`` around a
  timeout when a player's choice says he dropped (``Choice.disconnect``).
- Classic clocks (CL-TIMER, CL-AUTOPLAY, CL-STRIKES): a move that would arrive after
  both clocks ran out is replaced by an ``AutoPlayed`` at exactly the deadline, with the
  cards the rule gives; the fourth timeout logs ``PlayerRemoved`` (``strikes``) instead.
- A Fresh window after each deal (CL-FRESH): policies with a ``fresh_vote(turn)``
  method answer with a delay (ms) or None; votes arrive in time order, before the first
  player's move.
- ``PlayerLeft`` from a policy is followed by the platform's ``PlayerRemoved`` (``left``).
- Observers: policies with an ``observe(event)`` method see every logged event
  (they must only use its public part).
- ``planted``: ``(seq, player, mechanism)`` for every move whose ``Choice.mechanism``
  was set (the simulator's ground truth), and ``fault_early_autoplay`` plants a
  platform fault on purpose (an auto-play before the clocks ran out).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..events.cards import format_card, format_cards
from ..events.timestamps import format_ts
from ..replay.engine import GameEngine
from ..replay.rules.classic import MAX_STRIKES
from ..replay.variant import Variant
from . import fastpaths


@dataclass(slots=True)
class Choice:
    """A player's decision: the move and how long he thought (ms after the previous
    event). ``mechanism`` names the fraud mechanism that made this choice (labels);
    ``disconnect``: the player's connection drops ``disconnect_ms`` after the previous
    event and comes back ``reconnect_ms`` after it (both before ``think_ms``); if the
    move would come after the clocks ran out, the platform auto-plays instead and he is
    back right after that. ``deliberate``: the timeout is the act (a strategic timeout):
    the drop and the auto-play are planted under ``mechanism``; otherwise a move that a
    mechanism chose but the clocks overtook plants nothing (the mechanism never acted)."""

    type: str
    payload: dict[str, Any]
    think_ms: int = 3000
    mechanism: str | None = None
    disconnect: bool = False
    disconnect_ms: int = 0
    reconnect_ms: int = 0
    deliberate: bool = False


@dataclass(slots=True)
class Turn:
    """What a policy is shown when asked to move."""

    player: str
    moves: list[tuple[str, dict[str, Any]]]
    engine: GameEngine
    rng: random.Random
    now_ms: int = 0

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
    #: player -> (ip_hash, device_hash, client): logged as PlayerConnected after GameCreated
    connections: dict[str, tuple[str, str, str]] | None = None
    #: enforce the variant's clocks (classic) with platform auto-plays and removals
    clocks: bool = True
    #: plant a platform fault: auto-play this player's n-th turn (1-based) too early
    fault_early_autoplay: tuple[str, int] | None = None
    #: install the simulator's fast paths (same moves, less search; see sim/fastpaths.py)
    fast: bool = True
    #: plant a platform fault (Michigan): one play by someone other than the holder
    fault_skipped_holder: bool = False

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.engine = GameEngine(verify_hashes=False)
        self.clock = self.start_ms
        self.rounds_logged = 0
        self.transfers_claimed = 0
        self.ended = False
        self.planted: list[tuple[int, str, str]] = []
        self.faults: list[tuple[int, str, str, str]] = []  # (seq, fault, rule, kind)
        self.turns_started: dict[str, int] = {}
        self._observers: list[Callable[[dict[str, Any]], None]] = []
        self._turn_key: tuple[int, int] | None = None
        #: why the game was abandoned (players left), if it was: "cap" (``max_events``
        #: reached) or "blocked" (a round nobody can ever go out of, see ``_blocked``)
        self.abandoned: str | None = None

    # -- logging -----------------------------------------------------------------------
    def emit(self, type_: str, actor: str, payload: dict[str, Any], dt_ms: int = 200,
             at_ms: int | None = None) -> dict[str, Any]:
        """Log one event ``dt_ms`` after the previous (or at ``at_ms`` exactly, never
        before the previous event) and fold it into the engine."""
        if at_ms is not None:
            self.clock = max(self.clock, at_ms)
        else:
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
        for observe in self._observers:
            observe(event)
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
        if self.fast and self.engine.variant is not None:
            fastpaths.install(self.engine.variant)
        seen: set[int] = set()
        for player in self.seats:
            pol = self._policy(policies, player)
            observe = getattr(pol, "observe", None)
            if observe is not None and id(pol) not in seen:
                seen.add(id(pol))
                self._observers.append(observe)
        if self.connections:
            for player in self.seats:
                ip, device, client = self.connections[player]
                self.emit("PlayerConnected", player,
                          {"ip_hash": ip, "device_hash": device, "client": client},
                          dt_ms=self.rng.randint(40, 900))
        has_fresh = "FreshPressed" in self.state.event_types
        while not self.ended:
            if self.engine.halted:
                raise RuntimeError(f"{self.game_id}: the engine halted: {self.engine.findings[-1]}")
            if self.system_step():
                kind = self.events[-1]["type"]
                if has_fresh and kind == "RoundStarted":
                    self._fresh_window(policies)
                elif kind == "StockReplenished" and self.abandoned is None and self._blocked():
                    self.abandoned = "blocked"
                continue
            if self.abandoned is None and len(self.events) >= self.max_events:
                self.abandoned = "cap"
            if self.abandoned is not None:
                self._abandon()
                continue
            actors = self.state.to_act()
            if not actors:
                raise RuntimeError(f"{self.game_id}: nobody can act and no system event is due")
            if self.fault_skipped_holder and self._skip_holder():
                continue
            player = actors[0] if len(actors) == 1 else self.rng.choice(actors)
            choice = self._ask(policies, player)
            if choice is None:  # an optional move (a buy, a call, the widow) declined
                for other in actors:
                    if other != player:
                        choice = self._ask(policies, other)
                        if choice is not None:
                            player = other
                            break
            if choice is None:
                if not any(self.state.legal_moves(p) for p in actors):
                    # nobody has a move and no system event is due: a dead end the rules
                    # give no way out of (Liverpool: leavers took the last stock and pile
                    # cards, so nothing can be drawn); players leave, as for a blocked round
                    self.abandoned = "blocked"
                    continue
                raise RuntimeError(f"{self.game_id}: every player to act declined to move")
            self._play(player, choice)
        return self.events

    def _ask(self, policies: dict[str, Policy] | Policy, player: str) -> Choice | None:
        """The player's choice; None if he passes (policies may return None when none of
        their moves is mandatory, e.g. a Liverpool buy or a Michigan widow offer)."""
        moves = self.state.legal_moves(player)
        if not moves:
            return None
        policy = self._policy(policies, player)
        return policy(Turn(player, moves, self.engine, self.rng, self.clock))

    def _skip_holder(self) -> bool:
        """The planted MI-FOLLOW fault: the holder of the next card is skipped and the
        holder of a later card of the suit plays instead. False if not possible now."""
        st: Any = self.state
        if not hasattr(st, "due") or getattr(st, "widow_open", False) \
                or getattr(st, "poker_open", False):
            return False
        kind, holder, card = st.due()
        if kind != 0 or holder < 0:  # FOLLOW only
            return False
        for later in range(card + 4, 52, 4):
            other = st.owner[later]
            if other >= 0 and other != holder and st.active[other]:
                event = self.emit("CardPlayed", st.names[other], {"card": format_card(later)},
                                  dt_ms=self.rng.randint(800, 4000))
                self.faults.append((event["seq"], "skipped_holder", "MI-FOLLOW", "violation"))
                self.fault_skipped_holder = False
                return True
        return False

    @staticmethod
    def _policy(policies: dict[str, Policy] | Policy, player: str) -> Policy:
        return policies if callable(policies) else policies[player]

    def _play(self, player: str, choice: Choice) -> None:
        """Log a player's choice, or what the platform does instead (clocks, faults)."""
        st = self.state
        deadline_of = getattr(st, "clock_deadline", None) if self.clocks else None
        deadline = deadline_of() if deadline_of is not None else None
        if deadline is not None and choice.type != "PlayerLeft":
            key = (st.seat(player), deadline)  # type: ignore[attr-defined]
            new_turn = key != self._turn_key
            if new_turn:
                self._turn_key = key
                self.turns_started[player] = self.turns_started.get(player, 0) + 1
            fault = self.fault_early_autoplay
            if fault is not None and fault[0] == player and new_turn \
                    and self.turns_started[player] >= fault[1] \
                    and self._early_autoplay(player, deadline, choice):
                return
            if self.clock + max(choice.think_ms, 1) > deadline:
                self._timeout(player, deadline, choice)
                return
        think = choice.think_ms
        if choice.disconnect and 0 < choice.disconnect_ms < choice.reconnect_ms < think:
            # the connection dropped and came back in time: the move follows
            gone = self.emit("PlayerDisconnected", player, {}, choice.disconnect_ms)
            if choice.mechanism and choice.deliberate:
                self.planted.append((gone["seq"], player, choice.mechanism))
            ip, device, client = (self.connections or {}).get(player, ("", "", "web"))
            self.emit("PlayerConnected", player, {"ip_hash": ip, "device_hash": device,
                                                  "client": client},
                      choice.reconnect_ms - choice.disconnect_ms)
            think -= choice.reconnect_ms
        event = self.emit(choice.type, player, choice.payload, think)
        if choice.mechanism:
            self.planted.append((event["seq"], player, choice.mechanism))
        if choice.type == "PlayerLeft":
            self.emit("PlayerRemoved", "system", {"player": player, "reason": "left"},
                      dt_ms=self.rng.randint(20, 300))

    def _timeout(self, player: str, deadline: int, choice: Choice) -> None:
        """CL-AUTOPLAY / CL-STRIKES: both clocks ran out; the system plays or removes."""
        st: Any = self.state
        seat = st.seat(player)
        # the drop comes when the player's choice says, before the deadline; one that would
        # only come after it never happens (the clocks ran out first). No drop is pinned
        # to the deadline: an exact "1 ms before the auto-play" gap would tell a planted
        # timeout from an honest one by the timestamps alone.
        drop = choice.disconnect_ms if choice.disconnect_ms > 0 else max(choice.think_ms // 4, 500)
        dropped = choice.disconnect and self.clock + drop < deadline
        if dropped:
            gone = self.emit("PlayerDisconnected", player, {}, dt_ms=drop)
            if choice.mechanism and choice.deliberate:
                self.planted.append((gone["seq"], player, choice.mechanism))
        if st.strikes[seat] >= MAX_STRIKES:
            event = self.emit("PlayerRemoved", "system", {"player": player, "reason": "strikes"},
                              at_ms=deadline)
        else:
            drew, discarded = st.expected_autoplay(seat)
            event = self.emit("AutoPlayed", "system", {
                "player": player,
                "drew": format_card(drew) if drew is not None else None,
                "discarded": format_card(discarded),
                "strike": st.strikes[seat] + 1,
            }, at_ms=deadline)
        if choice.mechanism and choice.deliberate:
            self.planted.append((event["seq"], player, choice.mechanism))
        if dropped and st.active[seat]:
            ip, device, client = (self.connections or {}).get(player, ("", "", "web"))
            self.emit("PlayerConnected", player, {"ip_hash": ip, "device_hash": device,
                                                  "client": client},
                      dt_ms=self.rng.randint(300, 2500))

    def _early_autoplay(self, player: str, deadline: int, choice: Choice) -> bool:
        """The planted CL-AUTOPLAY fault: the platform auto-plays while the player still
        has time on his clocks. False if it cannot be planted on this turn."""
        st: Any = self.state
        seat = st.seat(player)
        if st.strikes[seat] >= MAX_STRIKES or deadline - self.clock < 3000:
            return False
        drew, discarded = st.expected_autoplay(seat)
        if discarded is None:
            return False
        at = self.clock + min(max(choice.think_ms // 2, 1500), deadline - self.clock - 1000)
        event = self.emit("AutoPlayed", "system", {
            "player": player,
            "drew": format_card(drew) if drew is not None else None,
            "discarded": format_card(discarded),
            "strike": st.strikes[seat] + 1,
        }, at_ms=at)
        self.faults.append((event["seq"], "early_autoplay", "CL-AUTOPLAY", "violation"))
        self.fault_early_autoplay = None
        return True

    def _fresh_window(self, policies: dict[str, Policy] | Policy) -> None:
        """CL-FRESH: after a deal, players may press Fresh; votes come in time order."""
        st: Any = self.state
        votes: list[tuple[int, int, str, str | None]] = []
        for seat, player in enumerate(self.seats):
            if not st.active[seat]:
                continue
            vote = getattr(self._policy(policies, player), "fresh_vote", None)
            if vote is None:
                continue
            answer = vote(Turn(player, [("FreshPressed", {})], self.engine, self.rng, self.clock))
            if answer is not None:
                votes.append((answer[0], seat, player, answer[1]))
        start = self.clock
        for delay, _seat, player, mechanism in sorted(votes):
            event = self.emit("FreshPressed", player, {}, at_ms=max(start + delay, self.clock + 1))
            if mechanism:
                self.planted.append((event["seq"], player, mechanism))

    def _blocked(self) -> bool:
        """A round that can never end (Liverpool's gap in RULES.md §3: everyone has laid
        down and no card outside the table fits a table meld). Asked when the stock is
        replenished: a blocked round cycles through the stock, so it is caught within one
        pass, at the cost of one test per restock."""
        blocked = getattr(self.state, "round_blocked", None)
        return bool(blocked is not None and blocked())

    def _abandon(self) -> None:
        """A game that will not end (a blocked round, or the event cap: e.g. random
        play): players leave, one per call, until one is left and wins."""
        for player in self.state.to_act()[:1] or [p for p in self.seats]:
            self.emit("PlayerLeft", player, {})
            return


def play(variant: str, seats: list[str], *, seed: int = 0, policy: Policy = random_policy,
         game_id: str = "g", **kwargs: Any) -> list[dict[str, Any]]:
    """Play one game with one policy for everybody; returns its events."""
    return Platform(game_id, variant, seats, seed=seed, **kwargs).run(policy)
