"""Card decisions for the meld-on-the-table variants: Rummy 500 (and the shared base
of Liverpool's contract-aware brain, :mod:`.brain_liverpool`).

Both are draw / put down / discard games scored by the cards left in hand, so the honest
brain is classic's plus two things: it puts cards on the table when it can (a strong
player always melds, lays off and calls; a weak one sometimes forgets), and its discards
weigh the points a loose card would cost if the round ended now. Optional moves — a
Liverpool buy or Rummy call — may be declined (the brain returns None).

Mechanisms, as in classic: card feeding (discard what a seated partner needs — in
Liverpool any partner can buy it, in Rummy 500 the next player takes it), soft play
(near-equal discards go to the partner; no buying or calling a partner's discard),
chip dumping (Rummy 500 tournaments: the dumper holds his cards instead of melding, so
his round score sinks and chips flow to the round winner, and feeds the receiver),
hidden-card knowledge (draws by the real stock top; discards away from the next
player's real hand).
"""

from __future__ import annotations

from typing import Any

from ..events.cards import JOKER, NCARDS, parse_card, parse_cards
from .agents import Agent, Decision
from .brain_classic import FED_TAKE, FEED_GAIN, NOISE, ClassicBrain, seen_counts
from .driver import Turn
from .handeval import HandEval

OPTIONAL = frozenset({"Bought", "RummyCalled"})
#: a receiver takes fed discards during his first draws of a round only: two accounts
#: feeding each other from the pile would otherwise never touch the stock (r500 ends a
#: round on an empty stock), and the round would never end
FED_ROUNDS = 14
PUT_DOWN = ("LaidDown", "Melded", "LaidOff", "JokerSwapped")


def _points_r500() -> list[int]:
    pts = [0] * NCARDS
    for c in range(52):
        r = c >> 2
        pts[c] = 15 if r == 12 else (10 if r >= 8 else r + 2)
    pts[JOKER] = 15
    return pts


def _points_liverpool() -> list[int]:
    pts = [0] * NCARDS
    for c in range(52):
        r = c >> 2
        pts[c] = 25 if r in (0, 12) else (10 if r >= 8 else 5)
    return pts


class MeldBrain:
    """Shared by :class:`R500Brain` and :class:`LiverpoolBrain`."""

    eval: HandEval = HandEval((JOKER,))
    points: list[int] = _points_r500()
    feed_anyone: bool = False  # Liverpool: any seated partner can buy a discard

    # -- views -----------------------------------------------------------------------
    @staticmethod
    def own_hand(turn: Turn, player: str | None = None) -> list[int]:
        """The player's own hand (53 counts); see ClassicBrain.own_hand."""
        st: Any = turn.state
        return st.hands[st.seat(player or turn.player)]

    def hand_quality(self, agent: Agent, turn: Turn) -> float:
        return self.quality_of(turn, turn.player)

    def quality_of(self, turn: Turn, player: str) -> float:
        hand = self.own_hand(turn, player)
        size = max(1, sum(hand))
        return max(0.0, 1.0 - self.eval.distance(hand) / size)

    # -- decisions -------------------------------------------------------------------
    def choose(self, agent: Agent, turn: Turn) -> Decision | None:
        moves = turn.moves
        kinds = [m[0] for m in moves]
        st: Any = turn.state
        if all(k in OPTIONAL for k in kinds):
            return self._optional(agent, turn, kinds)
        if "Drew" in kinds:
            return self._draw(agent, turn, [i for i, k in enumerate(kinds) if k == "Drew"])
        put = self._put_down(agent, turn, kinds)
        if put is not None:
            return put
        discards = [i for i, k in enumerate(kinds) if k == "Discarded"]
        if not discards:
            return Decision(0, None, 0.5)
        del st
        return self._discard(agent, turn, discards)

    def _optional(self, agent: Agent, turn: Turn, kinds: list[str]) -> Decision | None:
        """A buy or a Rummy call out of turn: take it only when the card is worth it."""
        st: Any = turn.state
        skill = agent.effective_skill
        partners = set(agent.partners_seated("soft_play", st.ctx.seats))
        discarder = getattr(st, "last_discarder", None)
        from_partner = discarder is not None and discarder >= 0 and st.player(discarder) in partners
        for i, kind in enumerate(kinds):
            payload = turn.moves[i][1]
            card = parse_card(payload["card"])
            if from_partner and agent.roll("soft_play") is not None:
                return None  # never take a partner's discard away from the table
            if kind == "RummyCalled":
                if agent.rng.random() < 0.4 + 0.5 * skill:
                    return Decision(i, None, 0.3)
                continue
            gain = self.eval.gain(self.own_hand(turn), card)
            if gain >= 6.0 - 2.0 * skill and agent.rng.random() < 0.5 + 0.4 * skill:
                return Decision(i, None, 0.35)
        return None

    def _draw(self, agent: Agent, turn: Turn, options: list[int]) -> Decision:
        st: Any = turn.state
        hand = self.own_hand(turn)
        skill = agent.effective_skill
        strong = skill >= 0.55
        seen = seen_counts(hand, st.pile) if strong else None
        stock_i = next((i for i in options if turn.moves[i][1]["source"] == "stock"), None)
        best_i, best_gain = stock_i, (11.0 - 2.0 * (skill - 0.55)) if strong else 7.0 + 3.0 * skill
        # a round that drags on: stop fishing in the pile, dig into the stock
        best_gain += max(0, agent.draws_this_round - 12) * 0.6
        for i in options:
            payload = turn.moves[i][1]
            if payload["source"] != "discard":
                continue
            cards = parse_cards(payload["cards"])
            gain = self.eval.gain(hand, cards[0], seen) - 0.6 * (len(cards) - 1)
            if not strong and agent.rng.random() < 0.12 * (1.0 - skill):
                gain += 10.0
            if gain > best_gain:
                best_i, best_gain = i, gain
        if best_i is None:
            best_i = options[0]
        if best_i == stock_i:
            top = next((i for i in options if len(turn.moves[i][1]["cards"]) == 1
                        and turn.moves[i][1]["source"] == "discard"), None)
            if top is not None and agent.draws_this_round <= FED_ROUNDS and ClassicBrain._fed(agent, turn) and self.eval.gain(
                    hand, parse_card(turn.moves[top][1]["cards"][0]), seen) >= FED_TAKE:
                return Decision(top, "card_feeding", 0.3)
        difficulty = min(1.0, 0.2 + 0.05 * len(options))
        cheat = agent.roll("hidden_card")
        if cheat is not None and st.stock and stock_i is not None:
            stock_gain = self.eval.gain(hand, st.stock[-1], seen)
            top = next((i for i in options if len(turn.moves[i][1]["cards"]) == 1
                        and turn.moves[i][1]["source"] == "discard"), None)
            if best_i != stock_i and stock_gain > best_gain:
                return Decision(stock_i, "hidden_card", difficulty)
            if best_i == stock_i and top is not None and stock_gain < 3.0:
                return Decision(top, "hidden_card", difficulty)
        return Decision(best_i, None, difficulty)

    def _put_down(self, agent: Agent, turn: Turn, kinds: list[str]) -> Decision | None:
        skill = agent.effective_skill
        for kind in PUT_DOWN:
            idx = [i for i, k in enumerate(kinds) if k == kind]
            if not idx:
                continue
            if agent.dumping and kind in ("Melded", "LaidOff") and "Discarded" in kinds:
                return self._dump_hold(agent, turn, kinds)
            eager = 0.97 if kind == "LaidDown" else 0.55 + 0.45 * skill
            if agent.rng.random() >= eager:
                continue
            best = max(idx, key=lambda i: self._points_of(turn.moves[i]))
            return Decision(best, None, min(1.0, 0.4 + 0.05 * len(idx)))
        return None

    def _dump_hold(self, agent: Agent, turn: Turn, kinds: list[str]) -> Decision:
        """Chip dumping: keep the cards in hand (they count against the dumper)."""
        discards = [i for i, k in enumerate(kinds) if k == "Discarded"]
        d = self._discard(agent, turn, discards)
        return Decision(d.index, "chip_dumping", d.difficulty)

    def _points_of(self, move: tuple[str, dict[str, Any]]) -> int:
        kind, payload = move
        if kind == "LaidDown":
            return sum(self.points[parse_card(c)] for m in payload["melds"] for c in m["cards"]) + 1000
        if kind == "Melded":
            return sum(self.points[parse_card(c)] for c in payload["cards"])
        return self.points[parse_card(payload["card"])]

    def _discard(self, agent: Agent, turn: Turn, options: list[int]) -> Decision:
        st: Any = turn.state
        moves = turn.moves
        hand = self.own_hand(turn)
        cards = [parse_card(moves[i][1]["card"]) for i in options]
        cost = self._costs(agent, turn, hand, cards)
        best = min(range(len(cards)), key=cost.__getitem__)
        difficulty = min(1.0, 0.25 + len(options) / 24.0)
        honest = Decision(options[best], None, difficulty)
        seats = st.ctx.seats
        nxt = st.player(st.next_active(st.seat(turn.player)))

        def partner_for(mech: str) -> str | None:
            here = agent.partners_seated(mech, seats)
            if nxt in here:
                return nxt
            return here[0] if self.feed_anyone and here else None

        target = partner_for("chip_dumping") if agent.dumping else None
        if target is not None:
            return self._feed(turn, options, cards, cost, target, "chip_dumping", honest, 99.0)
        for mech in ("card_feeding", "multi_account"):
            target = partner_for(mech)
            if target is not None and agent.roll(mech) is not None:
                return self._feed(turn, options, cards, cost, target, "card_feeding", honest, 6.5)
        target = partner_for("soft_play")
        if target is not None and agent.roll("soft_play") is not None:
            floor = cost[best] + 1.0
            near = [i for i in range(len(cards)) if cost[i] <= floor]
            ph = self.own_hand(turn, target)
            gains = {i: self.eval.gain(ph, cards[i]) for i in near}
            pick = max(near, key=lambda i: (gains[i], -cost[i]))
            if pick != best and gains[pick] > gains[best]:
                return Decision(options[pick], "soft_play", difficulty)
        if agent.roll("hidden_card") is not None:
            opp = self.own_hand(turn, nxt)
            adj = [cost[i] + 0.6 * max(0.0, self.eval.gain(opp, cards[i])) for i in range(len(cards))]
            pick = min(range(len(cards)), key=adj.__getitem__)
            if pick != best:
                return Decision(options[pick], "hidden_card", difficulty)
        return honest

    def _costs(self, agent: Agent, turn: Turn, hand: list[int], cards: list[int]) -> list[float]:
        """What discarding each of ``cards`` would cost the player (lowest goes): the
        card's connectivity, less its points (a strong player sheds points), plus noise
        that shrinks with skill."""
        st: Any = turn.state
        skill = agent.effective_skill
        seen = seen_counts(hand, st.pile) if skill >= 0.55 else None
        values = self.eval.values(hand, seen)
        noise = NOISE * (1.0 - skill) ** 1.5
        rng = agent.rng
        weight = 0.12 * skill
        return [values.get(c, 0.0) - weight * self.points[c] + (rng.random() * noise if noise else 0.0)
                for c in cards]

    def _feed(self, turn: Turn, options: list[int], cards: list[int], cost: list[float],
              partner: str, mechanism: str, honest: Decision, max_cost: float) -> Decision:
        ph = self.own_hand(turn, partner)
        best_i, best_gain = -1, FEED_GAIN
        for i, c in enumerate(cards):
            if cost[i] > max_cost:
                continue
            g = self.eval.gain(ph, c) - 0.15 * cost[i]
            if g > best_gain:
                best_i, best_gain = i, g
        if best_i < 0 or options[best_i] == honest.index:
            return honest
        return Decision(options[best_i], mechanism, honest.difficulty)


class R500Brain(MeldBrain):
    eval = HandEval((JOKER,))
    points = _points_r500()
    feed_anyone = False


#: Liverpool's connectivity measure (every 2 is wild) and penalty points, for its brain
LiverpoolEval = HandEval((0, 1, 2, 3))
liverpool_points = _points_liverpool

__all__ = ["OPTIONAL", "LiverpoolEval", "MeldBrain", "R500Brain", "liverpool_points"]
