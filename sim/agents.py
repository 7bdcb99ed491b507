"""A simulated player at one game: a :class:`~rummyguard.sim.driver.Policy` that plays
with a skill level, a style, a think-time model, a tilt state and — for the planted
fraud — the mechanisms it takes part in at this table.

The agent owns what every variant shares (timing, Fresh votes, strategic timeouts,
leaving, public memory); a *brain* per variant owns the card decisions. What a brain
may look at is the line between honest and cheating play:

- honest decisions use only what the player could see: his own hand, the table, the
  discard pile, card counts, and the public events he observed (``observe``);
- a colluder also uses his partners' hands (the "shared hands" of card feeding, soft
  play, chip dumping and multi-accounting), and only for partners seated here;
- a ``hidden_card`` cheater uses everything (``turn.state``: all hands, the stock).

Every decision a mechanism changed is returned with the mechanism's name, and the
platform records it as a planted event (the labels' ground truth).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..events.cards import parse_card
from .driver import Choice, Turn
from .timing import TimingProfile, think_ms

MECHANISMS = (
    "card_feeding", "soft_play", "chip_dumping", "bot", "hidden_card", "multi_account",
    "timeout_abuse",
)

#: how long a strategic timeout "thinks": past any classic deadline (60 s + 60 s)
TIMEOUT_THINK_MS = 10 * 60 * 1000
#: honest connection trouble. A long pause (a call, another app) sends the app to the
#: background — the platform sees a disconnect — half of the time; and any move may hit
#: a network drop, offline for a log-normal while (median 15 s; ~1 in 12 outlasts a turn's
#: clocks). Honest players drop too, so a disconnect before a timeout is not by itself
#: the mark of timeout abuse: what an abuser does differently is *when* (bad hands) and
#: how often, which is the behaviour a detector has to find.
LONG_PAUSE_MS = 30_000
PAUSE_DROP_SHARE = 0.5
NET_DROP_PROB = 0.003
OFFLINE_MEDIAN_MS = 15_000.0
#: honest walk-outs (CL-LEAVE): real life, or a tilted loser's rage quit, at one of the
#: player's first WALK_OUT_WITHIN decisions of a game. Without them every voluntary
#: ``PlayerLeft`` at a classic table was a chip dumper's (46 of 46 in a 3,000-game world).
WALK_OUT_BASE = 0.008
WALK_OUT_TILT = 0.04
WALK_OUT_WITHIN = 30


@dataclass(frozen=True, slots=True)
class Act:
    """A mechanism this agent takes part in at this game."""

    mechanism: str
    group_id: str
    intensity: float
    role: str
    partners: tuple[str, ...] = ()


@dataclass(slots=True)
class Decision:
    """What a brain picked: the index into ``turn.moves``, the mechanism that changed the
    decision (None if honest), and how hard the decision was (0..1)."""

    index: int
    mechanism: str | None = None
    difficulty: float = 0.3


class Brain(Protocol):
    """A variant's card decisions."""

    def choose(self, agent: Agent, turn: Turn) -> Decision | None:
        """The move to make, or None to decline an optional move (a buy, a call)."""
        ...

    def hand_quality(self, agent: Agent, turn: Turn) -> float:
        """0 (hopeless) .. 1 (about to go out), from the player's own view."""
        ...


@dataclass
class Agent:
    """One player at one game (a Policy)."""

    player: str
    skill: float
    style: str
    timing: TimingProfile
    rng: random.Random
    brain: Brain
    is_bot: bool = False
    tilt: float = 0.0
    #: when the player's session began (ms since the epoch); None = at his first move
    session_start_ms: int | None = None
    acts: dict[str, Act] = field(default_factory=dict)
    #: chip dumping: this game is one the dumper throws (decided at the start)
    dumping: bool = False
    #: public memory: cards each opponent took from the discard pile this round
    pickups: dict[str, list[int]] = field(default_factory=dict)
    fresh_pressed: dict[str, int] = field(default_factory=dict)
    #: own draws this round (a long round makes players stop fishing in the pile)
    draws_this_round: int = 0
    #: a brain's working memory for this game (e.g. Liverpool's contract plans)
    scratch: dict[str, Any] = field(default_factory=dict)
    #: the world outside the cards (connection drops, offline times, walking out): a
    #: stream apart from ``rng``, so that modelling it does not reshuffle card decisions
    net_rng: random.Random = field(init=False, repr=False)
    #: the decision (1-based count of calls) at which an honest walk-out comes, if any
    walk_out_at: int | None = field(init=False, default=None)
    decisions: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        # seeded from the decision stream's state without drawing from it (a str seed
        # is hashed with SHA-512: the same on every run and machine)
        state = self.rng.getstate()[1]
        self.net_rng = random.Random(f"net:{self.player}:{state[1]}:{state[2]}:{state[-1]}")
        if self.net_rng.random() < WALK_OUT_BASE + WALK_OUT_TILT * self.tilt:
            self.walk_out_at = self.net_rng.randint(1, WALK_OUT_WITHIN)

    # -- skill under tilt ------------------------------------------------------------------
    @property
    def effective_skill(self) -> float:
        return max(0.0, self.skill * (1.0 - 0.55 * self.tilt))

    def act(self, mechanism: str) -> Act | None:
        return self.acts.get(mechanism)

    def roll(self, mechanism: str) -> Act | None:
        """The act if this opportunity is one its intensity acts on."""
        a = self.acts.get(mechanism)
        if a is None or self.rng.random() >= a.intensity:
            return None
        return a

    def partners_seated(self, mechanism: str, seats: Sequence[str]) -> list[str]:
        a = self.acts.get(mechanism)
        if a is None:
            return []
        return [p for p in a.partners if p in seats and p != self.player]

    # -- the policy --------------------------------------------------------------------
    def __call__(self, turn: Turn) -> Choice | None:
        self.decisions += 1
        if self.walk_out_at is not None and self.decisions >= self.walk_out_at:
            self.walk_out_at = None
            return Choice("PlayerLeft", {}, self.net_rng.randint(800, 6000))
        strategic = self._strategic_timeout(turn)
        decision = self.brain.choose(self, turn)
        if decision is None:
            return None
        kind, payload = turn.moves[decision.index]
        session = self._session_ms(turn)
        if strategic:
            # he looks at his cards as for any draw, then drops and lets the clocks run;
            # the drop time is drawn exactly as an honest player's is (_connection_trouble)
            drop = think_ms(self.timing, self.net_rng, "Drew", decision.difficulty, session,
                            self.tilt)
            return Choice(kind, payload, TIMEOUT_THINK_MS, "timeout_abuse", disconnect=True,
                          disconnect_ms=drop, reconnect_ms=TIMEOUT_THINK_MS - 2000,
                          deliberate=True)
        t = think_ms(self.timing, self.rng, kind, decision.difficulty, session, self.tilt)
        if kind == "PlayerLeft":
            return Choice(kind, payload, self.rng.randint(800, 6000), decision.mechanism)
        return self._connection_trouble(Choice(kind, payload, t, decision.mechanism),
                                        decision.difficulty, session)

    def _connection_trouble(self, choice: Choice, difficulty: float, session: int) -> Choice:
        """Honest disconnects (see LONG_PAUSE_MS): the app backgrounded during a long
        pause, or a network drop. The drop comes after a draw-like think time, the same
        draw a strategic timeout uses; the player is back before his move (or right
        after the platform auto-played it, driver._timeout)."""
        rng = self.net_rng
        t = choice.think_ms
        if t >= LONG_PAUSE_MS and rng.random() < PAUSE_DROP_SHARE:
            drop = min(think_ms(self.timing, rng, "Drew", difficulty, session, self.tilt),
                       t // 2)
            back = t - rng.randint(800, 4000)
        elif rng.random() < NET_DROP_PROB:
            drop = think_ms(self.timing, rng, "Drew", difficulty, session, self.tilt)
            back = drop + int(rng.lognormvariate(math.log(OFFLINE_MEDIAN_MS), 0.9))
            t = max(t, back + rng.randint(800, 4000))
        else:
            return choice
        choice.think_ms = t
        choice.disconnect, choice.disconnect_ms, choice.reconnect_ms = True, drop, back
        return choice

    def _session_ms(self, turn: Turn) -> int:
        if self.session_start_ms is None:
            self.session_start_ms = turn.now_ms
        return max(0, turn.now_ms - self.session_start_ms)

    def _strategic_timeout(self, turn: Turn) -> bool:
        """Timeout abuse: with a bad hand and strikes to spare, drop and let the clock
        run; the platform auto-plays (classic only: the other variants have no clock).

        Before or after the draw, as honest timeouts come at either decision: abusers who
        only ever dropped before drawing left every planted auto-play with a drawn card
        and a drop ~2 s into the turn, against honest timeouts split between the two
        (ROC AUC 0.73 for the drop-to-auto-play gap alone)."""
        act = self.acts.get("timeout_abuse")
        st: Any = turn.state
        if act is None or not hasattr(st, "clock_deadline") or not hasattr(st, "strikes"):
            return False
        seat = st.seat(self.player)
        if st.strikes[seat] >= 2:
            return False
        if not any(m[0] in ("Drew", "Discarded") for m in turn.moves):
            return False
        return (self.brain.hand_quality(self, turn) <= 0.45
                and self.rng.random() < act.intensity * 0.3)

    def fresh_vote(self, turn: Turn) -> tuple[int, str | None] | None:
        """CL-FRESH after a deal: press when the hand is poor (style sets how poor), and
        Fresh abusers press along with their partner's bad hands."""
        st: Any = turn.state
        redeals = getattr(st, "unanimous_fresh", 0)
        if redeals >= 2:
            return None
        quality = self.brain.hand_quality(self, turn)
        threshold = {"cautious": 0.2, "casual": 0.15, "aggressive": 0.08, "grinder": 0.18}.get(
            self.style, 0.15)
        delay = think_ms(self.timing, self.rng, "FreshPressed", 0.2, self._session_ms(turn))
        act = self.acts.get("timeout_abuse")
        if act is not None and self.rng.random() < act.intensity:
            partners = self.partners_seated("timeout_abuse", st.ctx.seats)
            if partners:
                worst = min([quality] + [self.brain_quality_of(turn, p) for p in partners])
                if worst < 0.32:
                    return delay, "timeout_abuse"
        if quality < threshold and self.rng.random() < 0.6:
            return delay, None
        return None

    def brain_quality_of(self, turn: Turn, player: str) -> float:
        """A partner's hand quality (shared hands: colluders only)."""
        quality_of = getattr(self.brain, "quality_of", None)
        return quality_of(turn, player) if quality_of is not None else 0.5

    def observe(self, event: dict[str, Any]) -> None:
        """Public events only: pickups from the discard pile, redeals."""
        kind = event["type"]
        if kind == "Drew" and event["payload"]["source"] == "discard" and event["actor"] != self.player:
            self.pickups.setdefault(event["actor"], []).extend(
                parse_card(c) for c in event["payload"]["cards"]
            )
        elif kind == "RoundStarted":
            self.pickups.clear()
            self.draws_this_round = 0
        elif kind == "Drew" and event["actor"] == self.player:
            self.draws_this_round += 1


__all__ = ["MECHANISMS", "TIMEOUT_THINK_MS", "Act", "Agent", "Brain", "Decision"]
