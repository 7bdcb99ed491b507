"""Corner-scenario generator: whole games concentrated on the rare paths of the four
variants, and one-fault logs built from them, for the differential audit of the engine
against the independent judges (tests/referee_*.py, tests/oracle_*.py).

Why it exists: the judges were first compared with the engine on the simulator's games,
where Fresh redeals, deep pile draws, buy windows and widow purchases are rare. The spec
(RULES.md) says what these corners mean; this module makes them frequent:

- :class:`CornerPlatform` is the platform driver (``rummyguard.sim.driver.Platform``)
  with corner injections between moves: out-of-turn Fresh votes (some on the turn's
  clock edge), players leaving at any moment (mid-turn, after a vote, between a
  unanimous vote and its redeal, down to the last player standing), connection noise.
- :class:`CornerPolicy` plays with the simulator's brains but biases the rare choices:
  unanimous Fresh after the first ``fresh_redeals`` deals (twice and more), in-turn Fresh,
  think times past both clocks (auto-plays, the fourth strike) or exactly on the deadline
  (the last legal millisecond), the deepest Rummy 500 pile draw, every Liverpool buy and
  Rummy call, Michigan widow purchases.
- :func:`corner_faults` builds one-fault logs that the generic mutants of the judges'
  tests do not make, each labelled with the rule the spec says it breaks (or ``None`` for
  a log that must stay clean), from the log and the judges' states (written from the
  spec): no engine state is read to decide what a fault is or what it breaks.

Moves are chosen from the engine's legal moves (the driver's), so a clean corner game is
clean by the engine's reading; the judges then say whether it is clean by theirs.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from rummyguard.events.timestamps import format_ts, ts_millis
from rummyguard.sim.agents import Agent
from rummyguard.sim.driver import Choice, Platform, Turn
from rummyguard.sim.timing import TimingProfile
from rummyguard.sim.world import brains

Event = dict[str, Any]
Events = list[Event]

VARIANT_SEATS = {"classic": (2, 6), "r500": (2, 4), "liverpool": (2, 8), "michigan": (3, 8)}
#: the most players a corner game seats (long Liverpool games are the slow ones)
MOST_SEATS = {"classic": 6, "r500": 4, "liverpool": 5, "michigan": 8}


# == the corner profile of one game ===========================================================


@dataclass
class Profile:
    """How hard one game leans on each corner (probabilities per opportunity)."""

    fresh_redeals: int = 0  # classic: deals answered by a unanimous Fresh
    fresh_partial: float = 0.0  # classic: chance a player votes after a later deal
    fresh_in_turn: float = 0.0  # classic: chance the player in turn presses Fresh
    fresh_out: float = 0.0  # classic: chance per step of an out-of-turn vote
    fresh_edge: float = 0.0  # classic: share of out-of-turn votes on the clock edge
    slow: float = 0.0  # classic: chance a move comes after both clocks
    edge: float = 0.0  # classic: chance a move comes exactly on the deadline
    leave: float = 0.0  # chance per step that someone leaves
    leave_keep: int = 1  # leaves stop when this many players are left
    deep: float = 0.0  # r500: chance to take the deepest pile draw offered
    buy: float = 0.0  # liverpool: chance to take a buy or a Rummy call
    widow: float = 0.0  # michigan: chance to buy the widow when offered
    dear: float = 0.0  # michigan: chance to start a sequence above the lowest (MI-PENALTY)
    noise: float = 0.0  # chance per step of a disconnect/reconnect pair

    @staticmethod
    def draw(variant: str, rng: random.Random) -> Profile:
        """A random corner mix for ``variant`` (the seed fixes it)."""
        p = Profile(leave=rng.choice([0.0, 0.0, 0.004, 0.02]), leave_keep=rng.choice([1, 1, 2]),
                    noise=rng.choice([0.0, 0.01]))
        if variant == "classic":
            p.fresh_redeals = rng.choice([0, 0, 1, 1, 2, 3])
            p.fresh_partial = rng.choice([0.0, 0.3, 0.6])
            p.fresh_in_turn = rng.choice([0.0, 0.01, 0.05])
            p.fresh_out = rng.choice([0.0, 0.01, 0.05])
            p.fresh_edge = rng.choice([0.0, 0.5, 1.0])
            p.slow = rng.choice([0.0, 0.03, 0.1, 0.3])
            p.edge = rng.choice([0.0, 0.05, 0.2])
        elif variant == "r500":
            p.deep = rng.choice([0.5, 0.9, 1.0])
        elif variant == "liverpool":
            p.buy = rng.choice([0.5, 0.9, 1.0])
        else:
            p.widow = rng.choice([0.0, 0.3, 0.9, 1.0])
            p.dear = rng.choice([0.0, 0.1, 0.4])
        return p


def draw_rules(variant: str, n: int, rng: random.Random) -> dict[str, Any]:
    """House rules that make the corners reachable quickly (short r500 games, tight
    tournament stacks, a buy limit, several deals, poker)."""
    if variant == "classic":
        return {"rake_bps": rng.choice([0, 0, 250, 1000]),
                "long_run_allows_joker": rng.choice([True, True, False])}
    if variant == "r500":
        mode = rng.choice(["target", "rounds", "tournament"])
        rules: dict[str, Any] = {"mode": mode}
        if mode == "target":
            rules["target"] = rng.choice([60, 120, 200])
        elif mode == "rounds":
            rules["rounds"] = rng.choice([1, 2, 3])
        else:
            rules["chip_ratio"] = rng.choice([1, 2, 3])
        return rules
    if variant == "liverpool":
        rules = {"set_distinct_suits": rng.choice([True, True, False])}
        if rng.random() < 0.5:
            rules["max_buys"] = rng.choice([0, 1, 2])
        return rules
    return {"deals": rng.choice([1, 2, min(n, 3)]), "three_in_one": rng.random() < 0.5,
            "widow_price": rng.choice([1, 1, 3]), "pay_ante": rng.choice([1, 2])}


# == the players ==================================================================================


class CornerPolicy:
    """The simulator's brains for the card choices; the corners decide the rest."""

    def __init__(self, variant: str, seats: list[str], profile: Profile, seed: int) -> None:
        self.variant = variant
        self.profile = profile
        self.rng = random.Random(f"policy:{seed}")
        brain = brains()[variant]
        self.agents = {p: Agent(p, 0.9, "grinder", TimingProfile(pause_prob=0.0),
                                random.Random(f"{seed}:{p}"), brain()) for p in seats}
        for a in self.agents.values():
            a.walk_out_at = None  # leaves are the injections' business

    def fresh_vote(self, turn: Turn) -> tuple[int, str | None] | None:
        """CL-FRESH after a deal: everybody while the game is in its first
        ``fresh_redeals`` deals, then a partial vote now and then."""
        st: Any = turn.state
        redeals = getattr(st, "unanimous_fresh", 0)
        if redeals < self.profile.fresh_redeals:
            return self.rng.randint(300, 4000), None
        if self.rng.random() < self.profile.fresh_partial / 2:
            return self.rng.randint(300, 4000), None
        return None

    def __call__(self, turn: Turn) -> Choice | None:
        p, rng = self.profile, self.rng
        kinds = [m[0] for m in turn.moves]
        if "FreshPressed" in kinds and rng.random() < p.fresh_in_turn:
            return Choice("FreshPressed", {}, rng.randint(300, 5000))
        choice = self._card_choice(turn)
        if choice is None:
            return None
        if self.variant == "classic" and choice.type != "PlayerLeft":
            deadline = getattr(turn.state, "clock_deadline", lambda: None)()
            if deadline is not None:
                r = rng.random()
                if r < p.slow:
                    choice.think_ms = deadline - turn.now_ms + rng.randint(1, 5000)
                elif r < p.slow + p.edge:
                    choice.think_ms = max(1, deadline - turn.now_ms)
        return choice

    def _card_choice(self, turn: Turn) -> Choice | None:
        p, rng = self.profile, self.rng
        moves = [m for m in turn.moves if m[0] != "FreshPressed"]
        if not moves:
            return None
        think = rng.randint(700, 6000)
        if self.variant == "r500" and rng.random() < p.deep:
            deep = [m for m in moves if m[0] == "Drew" and len(m[1]["cards"]) > 1]
            if deep:
                move = max(deep, key=lambda m: len(m[1]["cards"]))
                if rng.random() < 0.3:
                    move = rng.choice(deep)
                return Choice(move[0], move[1], think)
        if self.variant == "liverpool" and rng.random() < p.buy:
            for kind in ("RummyCalled", "Bought"):
                got = [m for m in moves if m[0] == kind]
                if got:
                    return Choice(kind, got[0][1], rng.randint(200, 3000))
        if self.variant == "michigan":
            widow = [m for m in moves if m[0] == "WidowBought"]
            if widow:
                if rng.random() < p.widow:
                    return Choice("WidowBought", widow[0][1], think)
                moves = [m for m in moves if m[0] != "WidowBought"]
                if not moves:
                    return None
            plays = [m for m in moves if m[0] == "CardPlayed"]
            if len(plays) > 1 and rng.random() < p.dear:  # a start: cheap ones come first
                suits = {m[1]["card"][1] for m in plays}
                dear = plays[len(suits):]
                if dear:
                    move = rng.choice(dear)
                    return Choice(move[0], move[1], think)
        agent = self.agents[turn.player]
        sub = Turn(turn.player, moves, turn.engine, turn.rng, turn.now_ms)
        decision = agent.brain.choose(agent, sub)
        if decision is None:
            return None
        kind, payload = moves[decision.index]
        return Choice(kind, payload, think)

    def observe(self, event: Event) -> None:
        for a in self.agents.values():
            a.observe(event)


# == the platform ==================================================================================


@dataclass
class CornerPlatform(Platform):
    """The driver with corner injections between moves (see the module docstring)."""

    profile: Profile = field(default_factory=Profile)
    injected: list[tuple[int, str]] = field(default_factory=list)

    def system_step(self) -> bool:
        st: Any = self.state
        if getattr(st, "fresh_pending", False) and self.profile.leave and not self.ended \
                and self.rng.random() < min(1.0, 20 * self.profile.leave):
            # a leave between the unanimous vote and its redeal
            active = [self.seats[s] for s in range(len(self.seats)) if st.active[s]]
            if len(active) > max(2, self.profile.leave_keep):
                who = self.rng.choice(active)
                event = self.emit("PlayerLeft", who, {}, dt_ms=self.rng.randint(50, 400))
                self.emit("PlayerRemoved", "system", {"player": who, "reason": "left"},
                          dt_ms=self.rng.randint(20, 300))
                self.injected.append((event["seq"], "leave_fresh_pending"))
                return True
        if super().system_step():
            return True
        if self.ended or self.abandoned is not None or self.engine.halted:
            return False
        return self._inject()

    def _ask(self, policies: Any, player: str) -> Choice | None:
        """As the driver asks, except that a player in turn with no move at all (a round
        whose stock and pile went with a leaver: nothing left to draw, a dead end the
        spec does not cover) leaves the game rather than stall it."""
        choice = super()._ask(policies, player)
        if choice is None and self.state.to_act() == [player] and not self.state.legal_moves(player):
            return Choice("PlayerLeft", {}, self.rng.randint(800, 3000))
        return choice

    def _inject(self) -> bool:
        st: Any = self.state
        p, rng = self.profile, self.rng
        if not getattr(st, "in_round", True) or st.is_over():
            return False
        active = [self.seats[s] for s in range(len(self.seats)) if st.active[s]]
        to_act = st.to_act()
        if not to_act:
            return False
        current = to_act[0]
        if p.fresh_out and rng.random() < p.fresh_out and not getattr(st, "fresh_pending", True):
            voters = {self.seats[s] for s in st.fresh_votes}
            free = [q for q in active if q not in voters and q != current]
            if free:
                who = rng.choice(free)
                at = None
                deadline = st.clock_deadline()
                if deadline is not None and rng.random() < p.fresh_edge:
                    at = deadline + rng.choice([-1500, -1, 0, 1, 700])
                event = self.emit("FreshPressed", who, {}, dt_ms=rng.randint(200, 3000), at_ms=at)
                self.injected.append((event["seq"], "fresh_out"))
                return True
        if p.leave and len(active) > p.leave_keep and rng.random() < p.leave:
            voters = {self.seats[s] for s in getattr(st, "fresh_votes", ())}
            pool = active
            if voters and rng.random() < 0.6:  # a vote then a leave, or the last non-voter
                non = [q for q in active if q not in voters]
                pool = non if len(non) == 1 and rng.random() < 0.5 else sorted(voters & set(active))
            who = rng.choice(pool or active)
            event = self.emit("PlayerLeft", who, {}, dt_ms=rng.randint(200, 4000))
            self.emit("PlayerRemoved", "system", {"player": who, "reason": "left"},
                      dt_ms=rng.randint(20, 300))
            self.injected.append((event["seq"], "leave_current" if who == current else "leave"))
            return True
        if p.noise and rng.random() < p.noise:
            who = rng.choice(active)
            self.emit("PlayerDisconnected", who, {}, dt_ms=rng.randint(100, 900))
            self.emit("PlayerConnected", who, {"ip_hash": "h", "device_hash": "d", "client": "web"},
                      dt_ms=rng.randint(100, 900))
            return True
        return False


def corner_game(variant: str, seed: int) -> tuple[Events, Profile, list[tuple[int, str]]]:
    """One corner game of ``variant``, fixed by ``seed``: its events, its profile and the
    injections made (seq, kind)."""
    rng = random.Random(f"{variant}:{seed}")
    lo = VARIANT_SEATS[variant][0]
    n = rng.randint(lo, MOST_SEATS[variant])
    seats = [f"p{i + 1}" for i in range(n)]
    profile = Profile.draw(variant, rng)
    rules = draw_rules(variant, n, rng)
    stake = rng.choice([10, 100]) if not (variant == "r500" and rules["mode"] == "tournament") \
        else rng.choice([20, 60, 150])
    platform = CornerPlatform(f"{variant[:2]}c{seed}", variant, seats, dealer=rng.randrange(n),
                              stake=stake, rules=rules, seed=seed, max_events=1500,
                              profile=profile)
    events = platform.run(CornerPolicy(variant, seats, profile, seed))
    return events, profile, platform.injected


# == one-fault logs ==============================================================================
#
# Each fault is (kind, expected, log): ``expected`` is the rule the spec says the log breaks
# first (a reading noted next to the builder), or None for a log that must stay clean, so
# that the comparison is of every finding. States are the judges' (written from the spec),
# never the engine's.

Fault = tuple[str, str | None, Events]


def renumber(events: Events) -> Events:
    """Contiguous seqs and fresh event ids after events were inserted or removed."""
    out = []
    for seq, e in enumerate(events):
        e = dict(e)
        e["seq"] = seq
        e["event_id"] = f"{e['game_id']}-{seq:05d}"
        e.pop("hash", None)
        e.pop("prev_hash", None)
        out.append(e)
    return out


def at_ms(e: Event) -> int:
    return ts_millis(e["ts"])


def shift(events: Events, i: int, delta: int) -> Events:
    """``events[i:]`` moved ``delta`` ms later (order kept)."""
    out = copy.deepcopy(events)
    for e in out[i:]:
        e["ts"] = format_ts(at_ms(e) + delta)
    return out


def ev(like: Event, type_: str, actor: str, payload: dict[str, Any], *, dt: int = 1) -> Event:
    """A new event shaped like ``like`` (same game, ``dt`` ms after it)."""
    return {"event_id": "x", "game_id": like["game_id"], "seq": like["seq"], "type": type_,
            "v": 2 if type_ in ("Drew", "Discarded") else 1,
            "ts": format_ts(at_ms(like) + dt), "actor": actor, "payload": payload}


def insert(events: Events, i: int, *new: Event) -> Events:
    return renumber([*events[:i], *new, *events[i:]])


def until_claims(events: Events, i: int) -> Events:
    """The log cut before the first system claim or deal after index ``i`` (the platform's
    claims were computed for the unaltered game and would only echo the change)."""
    for j in range(i + 1, len(events)):
        if events[j]["type"] in ("RoundStarted", "RoundEnded", "ChipsTransferred", "GameEnded"):
            return copy.deepcopy(events[:j])
    return copy.deepcopy(events)


# -- classic ------------------------------------------------------------------------------------


def _classic_state(events: Events, i: int) -> Any:
    """The classic/r500 referee's state before ``events[i]``."""
    from referee_classic_r500 import fold

    ref, _ = fold(events, events[0], until=i)
    return ref


def autoplay_cards(ref: Any) -> tuple[str | None, str]:
    """CL-AUTOPLAY for the player in turn, from a judge's state: draw the stock top and
    discard it, or (a joker, or no draw on the first turn) the highest non-joker."""
    from oracle_classic_r500 import autoplay_key

    hand = list(ref.hands[ref.turn])
    drew = None
    if not ref.started:
        drew = ref.stock[0]
        hand.append(drew)
        if drew != "JK":
            return drew, drew
    return drew, max((c for c in hand if c != "JK"), key=autoplay_key)


def classic_faults(events: Events) -> Iterator[Fault]:
    """Fresh, clock, auto-play, strike and leave corners of a classic game."""
    stake = events[0]["payload"]["stake"]
    removed: list[str] = []
    strikes: dict[str, int] = {}
    for i, e in enumerate(events):
        t, p = e["type"], e["payload"]
        if t == "FreshPressed":
            # CL-FRESH counts players, not presses: a second press changes nothing
            yield "fresh_double_press", None, until_claims(insert(events, i + 1, ev(e, t, e["actor"], {})), i + 1)
            if removed:
                # not a finding (audit 41): FreshPressed is not a move (EVENTS.md: it "may
                # come at any moment"; C-TURN judges moves), and a removed player has no
                # vote (CL-FRESH counts "every active player")
                yield "fresh_by_removed", None, until_claims(
                    insert(events, i + 1, ev(e, t, removed[0], {})), i + 1)
        if t == "RoundStarted" and p["redeal"] > 0:
            bad = copy.deepcopy(events)
            bad[i]["payload"]["dealer"] = (p["dealer"] + 1) % len(events[0]["payload"]["seats"])
            # CL-FRESH: a redeal keeps the first player; the logged dealer is a C-DEAL claim
            yield "redeal_moved_dealer", "C-DEAL", until_claims(bad, i)
            bad = copy.deepcopy(events)
            bad[i]["payload"]["redeal"] = p["redeal"] + 1
            yield "redeal_wrong_count", "CL-FRESH", until_claims(bad, i)
        if t == "PlayerRemoved":
            removed.append(p["player"])
        if t == "AutoPlayed":
            who = p["player"]
            strikes[who] = strikes.get(who, 0) + 1
            bad = copy.deepcopy(events)
            bad[i]["payload"]["strike"] = p["strike"] + 1
            yield "autoplay_wrong_strike", "C-CLAIM", bad[:i + 1]
            # CL-STRIKES: the first three timeouts are auto-played, not removed
            rem = ev(e, "PlayerRemoved", "system", {"player": who, "reason": "strikes"}, dt=0)
            yield "removed_before_fourth", "CL-STRIKES", renumber([*events[:i], rem])
            ref = _classic_state(events, i)
            if ref.turn == who:
                # the auto-play exactly on the deadline is on time (C: "earlier than")
                on = shift(events, i, ref.deadline(who) - at_ms(e))
                if at_ms(on[i]) > at_ms(on[i - 1]):
                    yield "autoplay_on_deadline", None, on[:i + 1]
                from oracle_classic_r500 import autoplay_key

                hand = [c for c in ref.hands[who] if c != "JK"]
                bad = copy.deepcopy(events)
                if p["drew"] is not None and hand:
                    # CL-AUTOPLAY: the draw the rule gives is missing
                    bad[i]["payload"].update(drew=None, discarded=max(hand, key=autoplay_key))
                    yield "autoplay_missing_draw", "CL-AUTOPLAY", bad[:i + 1]
                elif p["drew"] is None and ref.stock:
                    # CL-AUTOPLAY: a draw the turn does not owe (first turn, or after the
                    # player's own draw)
                    bad[i]["payload"].update(drew=ref.stock[0], discarded=ref.stock[0])
                    yield "autoplay_extra_draw", "CL-AUTOPLAY", bad[:i + 1]
                if ref.round_live and not ref.fresh_pending:
                    # CL-FRESH: everyone presses, and the platform auto-plays instead of
                    # redealing: playing on is the breach, at the auto-play
                    votes = [ev(events[i - 1], "FreshPressed", q, {}) for q in ref.active
                             if q not in ref.votes]
                    yield "autoplay_fresh_pending", "CL-FRESH", insert(events, i, *votes)[:i + len(votes) + 1]
                early = shift(events, i, ref.deadline(who) - 1 - at_ms(e))
                if at_ms(early[i]) > at_ms(early[i - 1]):
                    yield "autoplay_1ms_early", "CL-AUTOPLAY", early[:i + 1]
        if t == "PlayerRemoved" and p["reason"] == "strikes":
            ref = _classic_state(events, i)
            # after a pile draw CL-AUTOPLAY names no card (see the audit-9 report): skipped
            if ref.turn == p["player"] and not ref.taken:
                drew, discarded = autoplay_cards(ref)
                auto = ev(e, "AutoPlayed", "system", {"player": p["player"], "drew": drew,
                                                     "discarded": discarded,
                                                     "strike": strikes.get(p["player"], 0) + 1}, dt=0)
                # CL-STRIKES: the fourth timeout removes; an auto-play instead is a violation
                yield "autoplay_at_fourth", "CL-STRIKES", renumber([*events[:i], auto])
    yield from _timer_faults(events)
    yield from _first_player_leaves(events)
    yield from _stake_faults(events, stake)
    yield from _leave_faults(events)


def _timer_faults(events: Events, most: int = 8) -> Iterator[Fault]:
    """A player's move exactly on his deadline (clean: "later than" is late) and one ms
    after it (CL-TIMER); the deadline is the referee's (RULES.md CL-TIMER). Sites: the
    first moves of the game and the first move after each event that moves a clock (a
    redeal, an auto-play, a leave, a removal, a Fresh vote)."""
    done = 0
    after_clock = True
    for i, e in enumerate(events):
        t = e["type"]
        if t in ("RoundStarted", "AutoPlayed", "PlayerLeft", "PlayerRemoved", "FreshPressed"):
            after_clock = True
            continue
        if done >= most or t not in ("Drew", "Discarded", "DeclaredRummy") or i + 1 >= len(events):
            continue
        site, after_clock = after_clock or done < 2, False
        if not site:
            continue
        ref = _classic_state(events, i)
        if e["actor"] != ref.turn or not ref.round_live:
            continue
        delta = ref.deadline(e["actor"]) - at_ms(e)
        if delta <= 0:
            continue
        done += 1
        # cut after the move: the rest of its turn would be late with it
        yield "move_on_deadline", None, shift(events, i, delta)[:i + 1]
        yield "move_after_deadline", "CL-TIMER", shift(events, i, delta + 1)[:i + 1]


def _first_player_leaves(events: Events) -> Iterator[Fault]:
    """CL-LEAVE on the first turn: the first player (who needs no draw, CL-FIRST) leaves
    before his discard; the next player's turn starts then and starts with a draw, so his
    move as logged is clean when it is a draw and CL-DRAW when it is a discard."""
    for i, e in enumerate(events):
        if e["type"] != "RoundStarted":
            continue
        j = next((k for k in range(i + 1, len(events)) if events[k]["type"] in ("Discarded", "DeclaredRummy", "AutoPlayed", "PlayerLeft", "Drew")), None)
        if j is None or events[j]["type"] != "Discarded":
            return
        ref = _classic_state(events, j)
        first = ref.turn
        if first is None or len(ref.active) < 3 or not ref.first_turn:
            return
        nxt = ref.next_after(first)
        gone = [ev(events[j], "PlayerLeft", first, {}, dt=-900),
                ev(events[j], "PlayerRemoved", "system", {"player": first, "reason": "left"}, dt=-800)]
        draw = ev(events[j], "Drew", nxt, {"source": "stock", "cards": [ref.stock[0]]}, dt=0)
        yield "first_player_leaves", None, renumber([*events[:j], *gone, draw])
        disc = ev(events[j], "Discarded", nxt, {"card": ref.hands[nxt][0]}, dt=0)
        yield "first_player_leaves_next_discards", "CL-DRAW", renumber([*events[:j], *gone, disc])
        return


def _stake_faults(events: Events, stake: int) -> Iterator[Fault]:
    """CL-FRESH: only the first unanimous Fresh of a game charges a second stake; a claim
    that charges it at every redeal is a C-CLAIM discrepancy (as is one that never does)."""
    redeals = [e for e in events if e["type"] == "RoundStarted" and e["payload"]["redeal"] > 0]
    chips = [i for i, e in enumerate(events) if e["type"] == "ChipsTransferred"]
    if not redeals or not chips:
        return
    k = chips[0]
    seats = events[0]["payload"]["seats"]
    bad = copy.deepcopy(events)
    transfers = bad[k]["payload"]["transfers"]
    if len(redeals) >= 2:
        extra = [{"from": q, "to": "pot", "amount": stake, "reason": "fresh"} for q in seats]
        bad[k]["payload"]["transfers"] = transfers + extra
        yield "fresh_stake_twice", "C-CLAIM", bad
    bad = copy.deepcopy(events)
    fresh = [x for x in bad[k]["payload"]["transfers"] if x["to"] == "pot"]
    if len(fresh) > len(seats):
        bad[k]["payload"]["transfers"].remove(fresh[-1])
        yield "fresh_stake_missing", "C-CLAIM", bad


def _leave_faults(events: Events) -> Iterator[Fault]:
    """A vote then a leave: every active player but one presses Fresh, then that one
    leaves. Every player still active has pressed, so the round must be redealt
    (CL-FRESH, unanimous); a move instead of the redeal is CL-FRESH."""
    for i, e in enumerate(events):
        if e["type"] not in ("Drew", "Discarded"):
            continue
        ref = _classic_state(events, i)
        if not ref.round_live or ref.fresh_pending or ref.votes or len(ref.active) < 3:
            continue
        stay = [q for q in ref.active if q != ref.turn]
        leaver = stay[-1]
        votes = [ev(e, "FreshPressed", q, {}, dt=-5) for q in ref.active if q != leaver]
        gone = [ev(e, "PlayerLeft", leaver, {}, dt=-3),
                ev(e, "PlayerRemoved", "system", {"player": leaver, "reason": "left"}, dt=-2)]
        log = insert(events, i, *votes, *gone)
        # the platform plays on: the first move after the leave breaks CL-FRESH
        yield "vote_then_leave_no_redeal", "CL-FRESH", log[:i + len(votes) + len(gone) + 1]
        return


# -- Rummy 500 ----------------------------------------------------------------------------------


def _bust_faults(events: Events) -> Iterator[Fault]:
    """R5-CHIPS tournament busts as ``PlayerRemoved`` claims (the driver logs none): after
    the round that left a player without chips, ``bust`` for him confirms the rules
    (clean); for a player who still holds chips it is a C-CLAIM discrepancy. The
    results oracle (independent of the engine) says who is bust."""
    from oracle_classic_r500 import _apply, _Game

    if events[0]["payload"]["rules"].get("mode") != "tournament":
        return
    g = _Game(events[0])
    made = 0
    for i, e in enumerate(events[1:], start=1):
        try:
            _apply(g, e)
        except Exception:
            return
        if e["type"] != "RoundEnded" or made >= 2:
            continue
        busted = sorted(g.busted)
        holding = [q for q in g.active if g.stacks[q] > 0]
        if busted:
            made += 1
            claim = ev(e, "PlayerRemoved", "system", {"player": busted[-1], "reason": "bust"})
            yield "bust_claimed", None, renumber([*events[:i + 1], claim])
        if holding and len(holding) > 1:
            made += 1
            claim = ev(e, "PlayerRemoved", "system", {"player": holding[0], "reason": "bust"})
            yield "bust_claimed_wrongly", "C-CLAIM", renumber([*events[:i + 1], claim])


def _uses(e: Event, card: str) -> bool:
    t, p = e["type"], e["payload"]
    if t == "Melded":
        return card in p["cards"]
    if t in ("LaidOff", "JokerSwapped"):
        return p["card"] == card
    return False


def r500_faults(events: Events) -> Iterator[Fault]:
    """Deep pile draws (R5-DRAW-PILE, R5-USE-BOTTOM, R5-NODISCARD-TOP): the deepest card
    left unused, or discarded; the top card of a deep draw discarded (clean); the
    deepest card used by a lay-off on another player's meld, then a second lay-off."""
    yield from _bust_faults(events)
    for i, e in enumerate(events):
        if e["type"] != "Drew" or e["payload"]["source"] != "discard":
            continue
        cards, actor = e["payload"]["cards"], e["actor"]
        end = next((j for j in range(i + 1, len(events)) if events[j]["type"] == "Discarded"
                    or events[j]["actor"] not in (actor, "system")), None)
        if end is None or events[end]["type"] != "Discarded" or events[end]["actor"] != actor:
            continue
        if len(cards) == 1:
            # R5-NODISCARD-TOP: a single pile card may not be discarded the same turn
            if events[end]["payload"]["card"] != cards[0] and \
                    not any(_uses(events[j], cards[0]) for j in range(i + 1, end)):
                d = copy.deepcopy(events[end])
                d["payload"] = {"card": cards[0]}
                yield "single_pile_discarded", "R5-NODISCARD-TOP", renumber([*events[:end], d])
            continue
        deepest = cards[0]
        use = next((j for j in range(i + 1, end) if _uses(events[j], deepest)), None)
        if use is None:
            continue
        top = cards[-1]
        if events[end]["payload"]["card"] != top and not any(_uses(events[j], top) for j in range(i + 1, end)):
            d = copy.deepcopy(events[end])
            d["payload"] = {"card": top}
            yield "deep_top_discarded", None, renumber([*events[:end], d])
        used = events[use]
        if used["type"] == "Melded":
            continue  # dropping a meld leaves its other cards in play: not one fault
        later = events[use + 1:end]
        if any(x["type"] in ("LaidOff", "JokerSwapped") and x["payload"]["meld"] == used["payload"]["meld"]
               for x in later) or (used["type"] == "JokerSwapped" and any(_uses(x, "JK") for x in later)):
            continue  # a later move of the turn builds on the use: dropping it breaks two
        # the use dropped: the deepest card is still in hand, unused, at the discard
        yield "deepest_unused", "R5-USE-BOTTOM", renumber([*events[:use], *events[use + 1:end + 1]])
        # ... and discarded instead of the logged discard (which stays in hand)
        d = copy.deepcopy(events[end])
        d["payload"] = {"card": deepest}
        yield "deepest_discarded", "R5-USE-BOTTOM|R5-NODISCARD-TOP", renumber([*events[:use], *events[use + 1:end], d])


# -- Liverpool ----------------------------------------------------------------------------------


def _at_most(limit: int) -> Callable[[str], bool]:
    """A counter per kind of fault: True for the first ``limit`` asks of each kind (so a
    game gets a few of each fault, not one per chance)."""
    made: dict[str, int] = {}

    def once(kind: str) -> bool:
        made[kind] = made.get(kind, 0) + 1
        return made[kind] <= limit

    return once


def liverpool_faults(events: Events) -> Iterator[Fault]:
    """Buy-window corners the generic mutants do not build: a buy of a card already
    buried (C-HOLD), a wrong penalty card (C-HOLD), a buy after the round ended, a buy by
    a player who left, a buy when the next player took the discard as his draw."""
    from referee_liverpool_michigan import walk

    once = _at_most(2)
    left: list[str] = []
    for i, st in walk(events):
        e = events[i]
        t, p = e["type"], e["payload"]
        if t == "PlayerLeft":
            left.append(e["actor"])
        if t == "Bought":
            bad = copy.deepcopy(events)
            if st.stock[1:2] and st.stock[1] != p["penalty"] and once("buy_wrong_penalty"):
                bad[i]["payload"]["penalty"] = st.stock[1]
                yield "buy_wrong_penalty", "C-HOLD", bad[:i + 1]
            if len(st.pile) >= 2 and st.pile[-2] != p["card"] and once("buy_buried"):
                bad = copy.deepcopy(events)
                bad[i]["payload"]["card"] = st.pile[-2]
                yield "buy_buried", "C-HOLD", bad[:i + 1]
            if left and once("buy_by_leaver"):
                yield "buy_by_leaver", "C-TURN", renumber([*events[:i], ev(e, t, left[0], p, dt=0)])
        if t == "Discarded" and st.live is not None and st.live.state == "buy" and st.stock \
                and len(st.stock) > 1 and e["actor"] == st.turn and once("buy_extra_legal"):
            # LV-BUY: the next player drew from the stock; until he discards, any other
            # player who has not laid down (and is under max_buys) may buy
            cap = st.max_buys
            buyer = next((q for q in st.active if q not in (st.turn, st.live.discarder)
                          and q not in st.laid and q in st.hands
                          and (cap is None or st.buys[q] < int(cap))), None)
            if buyer is not None and st.pile and st.pile[-1] == st.live.card:
                bought = ev(events[i - 1], "Bought", buyer, {"card": st.live.card,
                                                             "penalty": st.stock[0]})
                yield "buy_extra_legal", None, renumber([*events[:i], bought])
            capped = next((q for q in st.active if q not in (st.turn, st.live.discarder)
                           and q not in st.laid and q in st.hands
                           and cap is not None and st.buys[q] >= int(cap)), None)
            if capped is not None and st.pile and st.pile[-1] == st.live.card:
                bought = ev(events[i - 1], "Bought", capped, {"card": st.live.card,
                                                              "penalty": st.stock[0]})
                yield "buy_over_cap", "LV-BUY", renumber([*events[:i], bought])
        if t == "Discarded" and st.live is not None and st.live.state == "buy" and len(st.stock) > 2 \
                and e["actor"] == st.turn and len(st.active) >= 4 and once("next_leaves_in_window"):
            # the player after the discarder drew from the stock and leaves: the player
            # now after the discarder has the discard to take, or to let others buy once
            # he draws from the stock (LV-BUY); a buy before his draw is LV-BUY
            nxt = st.active[(st.active.index(st.turn) + 1) % len(st.active)]
            buyer = next((q for q in st.active if q not in (st.turn, nxt, st.live.discarder)
                          and q not in st.laid and q in st.hands
                          and (st.max_buys is None or st.buys[q] < int(st.max_buys))), None)
            if buyer is not None and st.pile and st.pile[-1] == st.live.card:
                gone = [ev(events[i - 1], "PlayerLeft", st.turn, {}),
                        ev(events[i - 1], "PlayerRemoved", "system", {"player": st.turn, "reason": "left"}, dt=2)]
                early = ev(events[i - 1], "Bought", buyer, {"card": st.live.card, "penalty": st.stock[0]}, dt=3)
                yield "next_leaves_buy_before_draw", "LV-BUY", renumber([*events[:i], *gone, early])
                draw = ev(events[i - 1], "Drew", nxt, {"source": "stock", "cards": [st.stock[0]]}, dt=3)
                buy = ev(events[i - 1], "Bought", buyer, {"card": st.live.card, "penalty": st.stock[1]}, dt=4)
                yield "next_leaves_buy_after_draw", None, renumber([*events[:i], *gone, draw, buy])
        if t == "Drew" and p["source"] == "discard" and st.live is not None and st.stock \
                and once("buy_after_pile_draw"):
            # the next player took the discard as his draw: there is nothing to buy
            buyer = next((q for q in st.active if q not in (e["actor"], st.live.discarder)
                          and q not in st.laid), None)
            if buyer is not None and st.pile[:-1]:
                bought = ev(e, "Bought", buyer, {"card": st.pile[-2], "penalty": st.stock[0]})
                yield "buy_after_pile_draw", "LV-BUY", renumber([*events[:i + 1], bought])
        if t == "Discarded" and st.in_round and sum(st.hands.get(e["actor"], {}).values()) == 1 \
                and st.stock and once("buy_after_out"):
            buyer = next((q for q in st.active if q != e["actor"] and q not in st.laid), None)
            if buyer is not None:
                bought = ev(e, "Bought", buyer, {"card": p["card"], "penalty": st.stock[0]})
                yield "buy_after_out", "LV-BUY", renumber([*events[:i + 1], bought])


# -- Michigan -----------------------------------------------------------------------------------


def michigan_faults(events: Events) -> Iterator[Fault]:
    """Widow corners: a wrong price (C-CLAIM), a card of the dead hand played by the
    buyer (C-HOLD: it is not his), a purchase by a player who left (C-TURN), by the
    dealer (legal: "any one player")."""
    from referee_liverpool_michigan import walk

    once = _at_most(2)
    left: list[str] = []
    for i, st in walk(events):
        e = events[i]
        t, p = e["type"], e["payload"]
        if t == "PlayerLeft":
            left.append(e["actor"])
        if t == "WidowBought":
            if once("widow_wrong_price"):
                bad = copy.deepcopy(events)
                bad[i]["payload"]["price"] = p["price"] + 1
                # the price is the platform's claim against the config (C-CLAIM)
                yield "widow_wrong_price", "C-CLAIM", bad
            if left and once("widow_by_leaver"):
                yield "widow_by_leaver", "C-TURN", renumber([*events[:i], ev(e, t, left[0], p, dt=0)])
        if t == "CardPlayed" and st.last is None and st.widow_buyer is None \
                and not st.three_in_one and once("widow_extra_legal"):
            # MI-WIDOW: before the first card is played any one player may buy it, even
            # after every player was offered it and passed
            for q in reversed(st.active):
                if st.hands.get(q):
                    price = events[0]["payload"]["rules"].get("widow_price", 1)
                    bought = ev(events[i - 1], "WidowBought", q, {"price": price})
                    yield "widow_extra_legal", None, renumber([*events[:i], bought])
                    break
        if t == "CardPlayed" and st.widow_buyer is not None and st.dead and \
                e["actor"] == st.widow_buyer and once("dead_hand_play"):
            bad = copy.deepcopy(events)
            bad[i]["payload"]["card"] = sorted(st.dead)[0]
            yield "dead_hand_play", "C-HOLD", bad[:i + 1]
    yield from _mi_leave_faults(events)


def _mi_due_play(st: Any) -> tuple[str, str] | None:
    """The clean next play of a Michigan referee state: the holder of the next card, or
    the starter's lowest card of a suit he may start (MI-START, MI-STOP)."""
    due = st.next_card()
    if due is not None:
        return st.holder(due), due
    if st.last is None:
        starter = next((q for q in st.order_from_left_of(st.dealer) if st.hands.get(q)), None)
        barred = None
    else:
        st.stopped_suit = st.last[1]
        starter, barred = st.starter_after_stop(), st.last[1]
    if starter is None or not st.hands.get(starter):
        return None
    cards = sorted(st.hands[starter], key=lambda c: ("23456789TJQKA".index(c[0])))
    allowed = [c for c in cards if c[1] != barred] or cards
    return starter, allowed[0]


def _mi_leave_faults(events: Events) -> Iterator[Fault]:
    """A player leaves just before his play (the holder of the next card, or the player
    due to start): the play then due is clean (MI-FOLLOW / MI-STOP: his cards are out)."""
    from referee_liverpool_michigan import fold, walk

    made = 0
    for i, st in walk(events):
        e = events[i]
        if e["type"] != "CardPlayed" or not st.in_deal or len(st.active) < 3 or made >= 3:
            continue
        if st.widow_buyer is None and st.last is None:
            continue  # before the first card the widow is still on offer
        who = e["actor"]
        gone = [ev(events[i - 1], "PlayerLeft", who, {}),
                ev(events[i - 1], "PlayerRemoved", "system", {"player": who, "reason": "left"}, dt=2)]
        log = renumber([*events[:i], *gone])
        after = fold(log)
        play = _mi_due_play(after) if after.in_deal else None
        if play is None:
            continue
        made += 1
        move = ev(events[i - 1], "CardPlayed", play[0], {"card": play[1]}, dt=3)
        yield "due_player_leaves", None, renumber([*log, move])


def restock_faults(events: Events) -> Iterator[Fault]:
    """C-RESTOCK (classic, Liverpool): the new stock is the pile but its top, in the
    order the platform records. Another order is clean; a card left out, or the pile's
    top card put in too, is C-RESTOCK. The log is cut at the restock."""
    made = 0
    for i, e in enumerate(events):
        if e["type"] != "StockReplenished" or made >= 2 or len(e["payload"]["stock"]) < 2:
            continue
        made += 1
        new = list(e["payload"]["stock"])
        prev = next((x for x in reversed(events[:i]) if x["type"] in ("Discarded", "AutoPlayed")), None)
        for kind, rule, stock in (("restock_reordered", None, new[::-1]),
                                  ("restock_missing_card", "C-RESTOCK", new[1:])):
            bad = copy.deepcopy(events[:i + 1])
            bad[i]["payload"]["stock"] = stock
            yield kind, rule, bad
        if prev is not None:
            top = prev["payload"].get("card") or prev["payload"].get("discarded")
            bad = copy.deepcopy(events[:i + 1])
            bad[i]["payload"]["stock"] = [*new, top]
            yield "restock_with_the_top", "C-RESTOCK", bad


FAULTS = {"classic": classic_faults, "r500": r500_faults, "liverpool": liverpool_faults,
          "michigan": michigan_faults}


def corner_faults(events: Events) -> Iterator[Fault]:
    """The corner one-fault logs of one clean game."""
    variant = events[0]["payload"]["variant"]
    for fault in FAULTS[variant](events):
        if fault[2]:
            yield fault
    if variant in ("classic", "liverpool"):
        yield from restock_faults(events)


__all__ = ["CornerPlatform", "CornerPolicy", "Fault", "Profile", "classic_faults", "corner_faults",
           "corner_game", "ev", "insert", "liverpool_faults", "michigan_faults", "r500_faults",
           "renumber", "restock_faults", "shift"]
