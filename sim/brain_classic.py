"""Card decisions for classic 14-card rummy (RULES.md §1).

A classic hand wins by being partitioned into melds with a run of 4+; there are no
points, so play is a race on *meld distance*. The honest brain:

- draws the discard when it connects well enough with the hand (a strong player
  weighs partial melds by their live outs and compares with what a stock card is
  worth on average; a weak one takes anything that pairs up);
- discards its least useful card, with noise that shrinks with skill; a strong player
  also avoids feeding the next player (cards near what he was seen taking from the pile);
- declares Rummy when the engine says the hand can (a weak player sometimes misses it).

Mechanisms change these decisions, and a decision they changed is labelled:
card feeding (discard what the partner seated next needs, at a cost to oneself), soft
play (among near-equal discards, the one the partner wants; no defence against him; no
Rummy while a partner at the table is about to go out himself),
chip dumping (throw the game: skip a Rummy, break melds, feed the receiver, or leave a
heads-up game), hidden-card knowledge (draw by the real stock top, discard away from the
next player's real hand). Multi-accounts feed like card feeders (same person).
"""

from __future__ import annotations

from typing import Any

from ..events.cards import JOKER, NCARDS, parse_card
from .agents import Agent, Decision
from .driver import Turn
from .handeval import COMPLETE, SET_MATES, HandEval

EVAL = HandEval((JOKER,))
#: average value a random stock card adds to a hand, by which a pile card is judged
STOCK_BASELINE = 2.2
#: gain a discard must bring to be taken (a new meld is worth ~10+ with its partners)
TAKE_STRONG = 11.0
TAKE_WEAK = 7.0
#: discard noise of a skill-0 player (values: ~10 in a meld, ~3-6 in a partial):
#: near-random at skill 0, none at skill 1
NOISE = 14.0
#: a receiver takes his feeder's discard from this gain on
FED_TAKE = 4.0
#: a feeder only feeds a card worth at least this much to the receiver
FEED_GAIN = 8.0


def seen_counts(hand: list[int], pile: list[int]) -> list[int]:
    """Dead copies per card from the player's own view: his hand and the discard pile."""
    seen = list(hand)
    for c in pile:
        seen[c] += 1
    return seen


class ClassicBrain:
    """Honest play by skill, plus the planted mechanisms."""

    # -- views -------------------------------------------------------------------------
    @staticmethod
    def own_hand(turn: Turn, player: str | None = None) -> list[int]:
        """The player's own hand (53 counts). Same information as ``turn.view['hands']``
        for the viewer; read from the state for speed. With ``player`` (a partner or,
        for hidden-card cheaters, anyone) it is another player's hand: only mechanisms
        may ask for that."""
        st: Any = turn.state
        return st.hands[st.seat(player or turn.player)]

    def hand_quality(self, agent: Agent, turn: Turn) -> float:
        return self.quality_of(turn, turn.player)

    def quality_of(self, turn: Turn, player: str) -> float:
        hand = self.own_hand(turn, player)
        return max(0.0, 1.0 - EVAL.distance(hand) / 12.0)

    # -- decisions ---------------------------------------------------------------------
    def choose(self, agent: Agent, turn: Turn) -> Decision:
        moves = turn.moves
        kinds = [m[0] for m in moves]
        if "DeclaredRummy" in kinds:
            return self._declare(agent, turn, kinds)
        if "Drew" in kinds:
            return self._draw(agent, turn)
        leave = self._dump_leave(agent, turn)
        if leave is not None:
            return leave
        return self._discard(agent, turn, [i for i, k in enumerate(kinds) if k == "Discarded"])

    def _declare(self, agent: Agent, turn: Turn, kinds: list[str]) -> Decision:
        index = kinds.index("DeclaredRummy")
        discards = [i for i, k in enumerate(kinds) if k == "Discarded"]
        if agent.dumping and self._receiver_here(agent, turn) and discards:
            d = self._discard(agent, turn, discards)
            return Decision(d.index, "chip_dumping", 0.9)
        delay = self._soft_delay(agent, turn, discards)
        if delay is not None:
            return delay
        miss = 0.3 * (1.0 - agent.effective_skill) ** 2
        if discards and agent.rng.random() < miss:
            d = self._discard(agent, turn, discards)
            return Decision(d.index, None, 0.95)
        return Decision(index, None, 0.9)

    def _soft_delay(self, agent: Agent, turn: Turn, discards: list[int]) -> Decision | None:
        """Soft play's "delay going out" (issue 7): while a soft-play partner still in the
        game is close to going out himself (meld distance 2 or less), the player holds back
        his own Rummy on the opportunities his intensity acts on and discards instead, so
        that the pot can go to the partner."""
        if not discards:
            return None
        st: Any = turn.state
        partners = [p for p in agent.partners_seated("soft_play", st.ctx.seats)
                    if st.active[st.seat(p)]]
        if not any(EVAL.distance(self.own_hand(turn, p)) <= 2 for p in partners):
            return None
        if agent.roll("soft_play") is None:
            return None
        return Decision(self._discard(agent, turn, discards).index, "soft_play", 0.9)

    def _draw(self, agent: Agent, turn: Turn) -> Decision:
        st: Any = turn.state
        moves = turn.moves
        stock_i = next((i for i, m in enumerate(moves) if m[0] == "Drew" and m[1]["source"] == "stock"), None)
        pile_i = next((i for i, m in enumerate(moves) if m[0] == "Drew" and m[1]["source"] == "discard"), None)
        if pile_i is None or stock_i is None:
            return Decision(stock_i if stock_i is not None else pile_i or 0, None, 0.1)
        hand = self.own_hand(turn)
        top = st.pile[-1]
        skill = agent.effective_skill
        strong = skill >= 0.55
        seen = seen_counts(hand, st.pile) if strong else None
        gain = EVAL.gain(hand, top, seen)
        if strong:
            # a strong player takes a discard that completes or extends a meld (with live
            # outs counted), not one that merely pairs up: a pickup also tells the table
            take = gain >= TAKE_STRONG - 2.0 * (skill - 0.55)
        else:
            # weaker players take what looks useful, and sometimes on a whim
            take = gain >= TAKE_WEAK + 3.0 * skill or agent.rng.random() < 0.12 * (1.0 - skill)
        honest = pile_i if take else stock_i
        difficulty = min(1.0, 0.2 + 0.08 * abs(gain - STOCK_BASELINE))
        if not take and gain >= FED_TAKE and self._fed(agent, turn):
            return Decision(pile_i, "card_feeding", difficulty)
        cheat = agent.roll("hidden_card")
        if cheat is not None and st.stock:
            # he knows the stock top: go there only when it helps more than the pile
            stock_gain = EVAL.gain(hand, st.stock[-1], seen)
            smart = stock_i if stock_gain >= max(3.0, gain) else pile_i
            if smart != honest:
                return Decision(smart, "hidden_card", difficulty)
        return Decision(honest, None, difficulty)

    @staticmethod
    def _fed(agent: Agent, turn: Turn) -> bool:
        """The pile top was discarded by a feeding partner (the receiver knows it is
        meant for him and takes it on a weaker fit than he would from a stranger)."""
        st: Any = turn.state
        last = getattr(st, "last_discarder", None)
        if last is None or last < 0:
            return False
        who = st.player(last)
        for mech in ("card_feeding", "multi_account", "chip_dumping"):
            act = agent.act(mech)
            if act is not None and (act.role == "receiver" or mech == "multi_account" or (
                    mech == "card_feeding" and act.role == "feeder" and "multi_account" in agent.acts)) \
                    and who in agent.partners_seated(mech, st.ctx.seats):
                return True
        return False

    def _receiver_here(self, agent: Agent, turn: Turn) -> bool:
        return bool(agent.partners_seated("chip_dumping", turn.state.ctx.seats))

    def _dump_leave(self, agent: Agent, turn: Turn) -> Decision | None:
        """A dumper at a heads-up table with his receiver walks out (CL-LEAVE): the
        receiver is the last player standing and takes the pot."""
        if not agent.dumping:
            return None
        st: Any = turn.state
        active = [p for s, p in enumerate(st.ctx.seats) if st.active[s]]
        if len(active) != 2 or not self._receiver_here(agent, turn):
            return None
        if agent.rng.random() < 0.18:
            turn.moves.append(("PlayerLeft", {}))
            return Decision(len(turn.moves) - 1, "chip_dumping", 0.2)
        return None

    def _discard(self, agent: Agent, turn: Turn, options: list[int]) -> Decision:
        st: Any = turn.state
        moves = turn.moves
        hand = self.own_hand(turn)
        skill = agent.effective_skill
        strong = skill >= 0.55
        seen = seen_counts(hand, st.pile) if strong else None
        values = EVAL.values(hand, seen)
        cards = [parse_card(moves[i][1]["card"]) for i in options]
        rng = agent.rng
        noise = NOISE * (1.0 - skill) ** 1.5
        seats = st.ctx.seats
        nxt = st.player(st.next_active(st.seat(turn.player)))
        defence = self._defence(agent, nxt) if skill >= 0.65 else None
        cost = []
        for c in cards:
            v = values.get(c, 0.0) + (rng.random() * noise if noise else 0.0)
            if defence is not None:
                v += defence[c]
            cost.append(v)
        best = min(range(len(cards)), key=cost.__getitem__)
        loose = sum(1 for v in values.values() if v < COMPLETE)
        difficulty = min(1.0, len(options) / 16.0 * 0.5 + (0.5 if loose <= 3 else 0.15))
        honest = Decision(options[best], None, difficulty)

        # -- mechanisms, each on its share of opportunities ------------------------------
        if agent.dumping and nxt in agent.partners_seated("chip_dumping", seats):
            return self._feed(agent, turn, options, cards, cost, nxt, "chip_dumping", honest,
                              max_cost=99.0)
        for mech in ("card_feeding", "multi_account"):
            if nxt in agent.partners_seated(mech, seats) and agent.roll(mech) is not None:
                return self._feed(agent, turn, options, cards, cost, nxt, "card_feeding", honest,
                                  max_cost=6.5)
        if nxt in agent.partners_seated("soft_play", seats) and agent.roll("soft_play") is not None:
            floor = cost[best] + 1.0
            near = [i for i in range(len(cards)) if cost[i] <= floor]
            partner_hand = self.own_hand(turn, nxt)
            gains = {i: EVAL.gain(partner_hand, cards[i]) for i in near}
            pick = max(near, key=lambda i: (gains[i], -cost[i]))
            if pick != best and gains[pick] > gains[best]:
                return Decision(options[pick], "soft_play", difficulty)
        if agent.roll("hidden_card") is not None:
            opp = self.own_hand(turn, nxt)
            adj = [cost[i] + 0.6 * max(0.0, EVAL.gain(opp, cards[i])) for i in range(len(cards))]
            pick = min(range(len(cards)), key=adj.__getitem__)
            if pick != best:
                return Decision(options[pick], "hidden_card", difficulty)
        return honest

    def _feed(self, agent: Agent, turn: Turn, options: list[int], cards: list[int],
              cost: list[float], partner: str, mechanism: str, honest: Decision,
              max_cost: float) -> Decision:
        """Discard what the partner (seated next) needs most, within what the feeder
        is willing to give up."""
        partner_hand = self.own_hand(turn, partner)
        best_i, best_gain = -1, FEED_GAIN
        for i, c in enumerate(cards):
            if cost[i] > max_cost:
                continue
            g = EVAL.gain(partner_hand, c) - 0.15 * cost[i]
            if g > best_gain:
                best_i, best_gain = i, g
        if best_i < 0 or options[best_i] == honest.index:
            return honest
        return Decision(options[best_i], mechanism, honest.difficulty)

    @staticmethod
    def _defence(agent: Agent, nxt: str) -> list[float] | None:
        """Penalty per card for discarding what the next player was seen collecting."""
        taken = agent.pickups.get(nxt)
        if not taken:
            return None
        penalty = [0.0] * NCARDS
        for t in taken:
            penalty[t] += 1.5
            if t == JOKER:  # a joker taken from the pile says nothing of ranks or suits
                continue
            for m in SET_MATES[t]:
                penalty[m] += 1.2
            rank, suit = t >> 2, t & 3
            for dr in (-2, -1, 1, 2):
                r = rank + dr
                if 0 <= r <= 12:
                    penalty[r * 4 + suit] += 1.2 if abs(dr) == 1 else 0.6
        return penalty


__all__ = ["EVAL", "ClassicBrain", "seen_counts"]
