"""Card decisions for Michigan rummy (RULES.md §4), a stops game.

Following is forced (the holder plays the next card), so skill lives in three places:
the widow (buy it when the own hand is poor), the poker declaration (the engine lists
the five-card hands best first; a weak player may not find the best), and above all the
start after a stop. A strong player starts in the suit where his own cards chain the
longest from his lowest (he keeps control, gets rid of cards and reaches pay cards);
a weak one starts anywhere, and now and then with a card that is not his lowest
(MI-PENALTY: allowed, at a price).

Honest play sees only the own hand (``cards_of(seat)``) and what was played. The
``hidden_card`` cheater knows where every card is (``owner``), so he can count exactly
how far each start would run before it stops — the decision his knowledge changes is
labelled. Fraud groups still co-seat at Michigan tables (bots, multi-accounts); card
feeding and soft play have no lever in a forced-follow game and are not simulated here.
"""

from __future__ import annotations

from typing import Any

from ..events.cards import parse_card
from .agents import Agent, Decision
from .driver import Turn


class MichiganBrain:
    """Honest Michigan play by skill, plus hidden-card starts."""

    def hand_quality(self, agent: Agent, turn: Turn) -> float:
        return 0.5

    def quality_of(self, turn: Turn, player: str) -> float:
        return 0.5

    def choose(self, agent: Agent, turn: Turn) -> Decision | None:
        moves = turn.moves
        kinds = [m[0] for m in moves]
        st: Any = turn.state
        seat = st.index[turn.player]
        skill = agent.effective_skill
        if "PokerHandDeclared" in kinds:
            idx = [i for i, k in enumerate(kinds) if k == "PokerHandDeclared"]
            pick = idx[0] if agent.rng.random() < 0.5 + 0.5 * skill else agent.rng.choice(idx[:6])
            return Decision(pick, None, 0.8)
        plays = [i for i, k in enumerate(kinds) if k == "CardPlayed"]
        if "WidowBought" in kinds:
            own = st.cards_of(seat)
            high = sum(1 for c in own if (c >> 2) >= 9)
            weak = high <= max(1, len(own) // 6)
            if weak and agent.rng.random() < 0.25 + 0.3 * skill:
                return Decision(kinds.index("WidowBought"), None, 0.7)
            if not plays:
                return None  # decline the widow; someone else will move
        if len(plays) == 1:
            return Decision(plays[0], None, 0.05)
        return self._start(agent, turn, plays, seat)

    def _start(self, agent: Agent, turn: Turn, plays: list[int], seat: int) -> Decision:
        st: Any = turn.state
        skill = agent.effective_skill
        cards = [parse_card(turn.moves[i][1]["card"]) for i in plays]
        lowest = {}
        for i, c in zip(plays, cards, strict=True):
            lowest.setdefault(c & 3, (i, c))
        cheap = list(lowest.values())
        if agent.rng.random() < 0.08 * (1.0 - skill) ** 2:
            i = agent.rng.choice(plays)
            return Decision(i, None, 0.6)
        own = set(st.cards_of(seat))
        pay = set(st.pay_cards)

        def honest_score(card: int) -> float:
            run = 0
            c = card
            while c < 52 and c in own:
                run += 1
                c += 4
            return run + (1.5 if any(p & 3 == card & 3 and p > card for p in pay) else 0.0)

        noise = 3.0 * (1.0 - skill)
        scored = [(honest_score(c) + agent.rng.random() * noise, i, c) for i, c in cheap]
        honest = max(scored)[1]
        difficulty = min(1.0, 0.3 + 0.1 * len(cheap))
        if agent.roll("hidden_card") is not None:
            owner = st.owner

            def reach(card: int) -> int:
                """Own cards the sequence would play before it stops (exact)."""
                run, c = 0, card
                while c < 52 and owner[c] >= 0:
                    if owner[c] == seat:
                        run += 1
                    c += 4
                return run

            best = max(cheap, key=lambda ic: (reach(ic[1]), -ic[1]))[0]
            if best != honest:
                return Decision(best, "hidden_card", difficulty)
        return Decision(honest, None, difficulty)


__all__ = ["MichiganBrain"]
