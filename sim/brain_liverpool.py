"""Card decisions for Liverpool rummy (RULES.md §3): play toward the round's contract.

A Liverpool round is won by laying down exactly the round's contract (LV-CONTRACT) and
then shedding the rest by lay-offs; in rounds 5 and 6 the lay-down must use the whole
hand (LV-ALLOUT), so a player who keeps "generally useful" cards never gets there. The
honest brain therefore values cards by the contract:

- before laying down, rounds 1-4: a card's *contract score* counts its set mates when
  the contract has sets and its run neighbours when it has runs (a wild is kept always);
  a discard that lets the contract go down at once is taken;
- before laying down, rounds 5-6: an *all-out plan* — the contract covering the whole
  hand with the fewest cards still missing (:func:`all_out_plan`, a fast estimate; the
  engine's :func:`~rummyguard.replay.rules.liverpool.find_contract` still decides when
  the lay-down exists) — marks the junk; the player discards junk and takes a discard
  only if the plan uses it;
- after laying down: take a discard that lays off at once, lay off everything that fits,
  call Rummy, and discard the card least likely to fit later (dead cards first, most
  points first).

Skill scales care, as in the other variants: a player plans on a share of his decisions
(``0.3 + 0.7 x skill``; the rest use the contract score alone), his discards carry noise
that shrinks with skill, and strong players buy only what helps the contract (never in
the all-out rounds, where a buy's penalty card is more junk), while weak ones buy and
forget lay-offs on a whim. The mechanisms of :class:`MeldBrain` (feeding any seated
partner, soft play, hidden-card knowledge) act on top of these decisions.
"""

from __future__ import annotations

import itertools
from typing import Any

from ..events.cards import parse_card
from ..replay.rules.liverpool import CONTRACTS, POINTS, WILDS, Liverpool, find_contract, layoff_ends
from .agents import Agent, Decision
from .brain_meld import FED_ROUNDS, OPTIONAL, LiverpoolEval, MeldBrain, liverpool_points
from .driver import Turn
from .handeval import LADDER, SUIT_LADDER

#: the distance reported for a hand with no run in sight
MOST_MISSING = 6
#: run windows per suit an all-out plan tries (the best by places filled)
RUN_CHOICES = 3
#: discard noise of a skill-0 player, on the contract-score scale (a mate is 3, a neighbour 2-3)
NOISE = 12.0
#: a non-junk card of an all-out plan outweighs any contract score
PLANNED = 40.0
#: plans remembered per player (hands before and after a draw repeat within a turn)
MEMO = 24


def contract_score(hand: list[int], card: int, round_no: int, distinct: bool) -> int:
    """How much ``card`` (in or joining ``hand``) helps the round's contract: its set
    mates if the contract has sets (three each), its run neighbours if it has runs."""
    if card in WILDS:
        return 100
    sets, runs = CONTRACTS[round_no]
    rank, suit = card >> 2, card & 3
    base = rank << 2
    if distinct:
        mates = sum(1 for c in range(base, base + 4) if c != card and hand[c] > 0)
    else:
        mates = hand[base] + hand[base + 1] + hand[base + 2] + hand[base + 3] - (1 if hand[card] > 0 else 0)
    near = 0
    if runs:
        ladder = SUIT_LADDER[suit]
        for v in LADDER[card]:
            for d in (-2, -1, 1, 2):
                w = v + d
                if 1 <= w <= 14 and w != 2:
                    c = ladder[w]
                    if c != card and hand[c] > 0:
                        near += 3 if d in (-1, 1) else 2
    return (3 * mates if sets else mates) + near


def all_out_plan(hand: list[int], round_no: int, distinct: bool = True) -> tuple[int, list[int]]:
    """Rounds 5-6 (LV-ALLOUT): ``(distance, junk)`` for the contract closest to covering
    the whole hand: ``distance`` = the fewest cards still to draw (each draw replaces a
    junk card or fills a missing place), ``junk`` = the naturals the plan leaves out.

    A player's estimate, not the engine's solver (which decides whether a lay-down
    exists, and is far too slow to run on every hand a player weighs): runs are tried
    over windows between two held cards of a suit (each suit's :data:`RUN_CHOICES` best
    by places filled), sets over the ranks with the most suits left after the runs (the
    best choice: a set of more suits leaves less junk and misses fewer cards), and a
    plan's distance is ``max(missing places - wilds held, junk - cards the round lets
    over)``.
    """
    sets, runs = CONTRACTS[round_no]
    over = 1 if round_no == 5 else 0
    wilds = hand[0] + hand[1] + hand[2] + hand[3]
    naturals = sum(hand[4:52])
    # -- candidate runs: (suit, lo, hi, missing, cards) ---------------------------------
    windows: list[tuple[int, int, int, int, list[int]]] = []
    for suit in range(4):
        ladder = SUIT_LADDER[suit]
        held = [v for v in range(1, 15) if v != 2 and hand[ladder[v]] > 0]
        found = []
        for i, lo in enumerate(held):
            for hi in held[i + 1:]:
                if lo == 1 and hi == 14:
                    continue
                cards = [ladder[v] for v in held[i:] if v <= hi]
                missing = max(hi - lo + 1, 4) - len(cards)
                found.append((missing - len(cards), missing, lo, hi, cards))
        found.sort(key=_window_order)
        windows.extend((suit, lo, hi, missing, cards) for _s, missing, lo, hi, cards in found[:RUN_CHOICES])
    if len(windows) < runs:  # no run in sight: everything is junk
        return MOST_MISSING + 1, [c for c in range(4, 52) for _ in range(hand[c])]
    # -- sets: suits (or cards) of each rank, before the runs take theirs --------------------
    def cover_of(rank: int, used: dict[int, int]) -> list[int]:
        base = rank << 2
        if distinct:
            return [c for c in range(base, base + 4) if hand[c] > used.get(c, 0)]
        return [c for c in range(base, base + 4) for _ in range(hand[c] - used.get(c, 0))]

    base_cover = [len(cover_of(r, {})) for r in range(13)]
    base_cover[0] = 0  # the 2s are wild, never a set's naturals
    best: tuple[int, int, int] | None = None
    best_plan: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    for combo in itertools.combinations(range(len(windows)), runs):
        if runs == 2:
            (s1, lo1, hi1, _m1, _c1), (s2, lo2, hi2, _m2, _c2) = windows[combo[0]], windows[combo[1]]
            if s1 == s2 and lo1 <= hi2 and lo2 <= hi1:
                continue  # two runs of one suit must not overlap
        used: dict[int, int] = {}
        missing = 0
        for i in combo:
            missing += windows[i][3]
            for c in windows[i][4]:
                used[c] = used.get(c, 0) + 1
        covers = list(base_cover)
        for rank in {c >> 2 for c in used}:
            covers[rank] = len(cover_of(rank, used))
        first = max(range(1, 13), key=covers.__getitem__)
        if sets == 1:
            picked: tuple[int, ...] = (first,)
        else:
            covers_first, covers[first] = covers[first], -1
            second = max(range(1, 13), key=covers.__getitem__)
            covers[first] = covers_first
            picked = (first, second) if first < second or covers[second] < covers[first] else (second, first)
        covered = len(used) if not any(k > 1 for k in used.values()) else sum(used.values())
        covered += sum(covers[r] for r in picked)
        miss = missing + sum(max(0, 3 - covers[r]) for r in picked)
        junk = naturals - covered
        key = (max(miss - wilds, junk - over, 0), miss, junk)
        if best is None or key < best:
            best = key
            best_plan = (picked, combo)
    if best is None:
        return MOST_MISSING + 1, [c for c in range(4, 52) for _ in range(hand[c])]
    rest = list(hand)
    for i in best_plan[1]:
        for c in windows[i][4]:
            rest[c] -= 1
    for rank in best_plan[0]:
        for c in cover_of(rank, {c: hand[c] - rest[c] for c in range(rank << 2, (rank << 2) + 4)}):
            rest[c] -= 1
    return best[0], [c for c in range(4, 52) for _ in range(rest[c])]


def _window_order(window: tuple[int, int, int, int, list[int]]) -> tuple[int, int, int]:
    return window[0], window[1], window[2]


def later_fit(st: Liverpool, card: int) -> float:
    """After laying down: how likely ``card`` is to be laid off later (10 if it fits
    now, less the more cards a run still needs below or above it, 0 if never)."""
    if card in WILDS:
        return 100.0
    rules = st.meld_rules
    best = 0.0
    suit = card & 3
    for m in st.melds:
        if layoff_ends(m, card, rules):
            return 10.0
        if m.kind != "run" or m.suit != suit:
            continue
        for v in LADDER[card]:
            gap = m.lo - v if v < m.lo else v - m.hi if v > m.hi else 0
            if gap >= 2:
                best = max(best, 4.0 / gap)
    return best


class LiverpoolBrain(MeldBrain):
    """Contract-aware Liverpool play (see the module docstring)."""

    eval = LiverpoolEval
    points = liverpool_points()
    feed_anyone = True  # any seated partner can buy a discard

    # -- plans -------------------------------------------------------------------------
    @staticmethod
    def _careful(agent: Agent) -> bool:
        """Whether this decision is thought through (a share that grows with skill)."""
        return agent.rng.random() < 0.3 + 0.7 * agent.effective_skill

    @staticmethod
    def _plan(agent: Agent, st: Liverpool, hand: list[int]) -> tuple[int, list[int]]:
        """The all-out plan for ``hand``, remembered per hand for this game."""
        memo: dict[Any, Any] = agent.scratch.setdefault("plans", {})
        key = (st.round_no, tuple(hand))
        plan = memo.get(key)
        if plan is None:
            plan = all_out_plan(hand, st.round_no, st.meld_rules.set_distinct_suits)
            if len(memo) >= MEMO:
                memo.clear()
            memo[key] = plan
        return plan

    def _keep(self, agent: Agent, st: Liverpool, hand: list[int], cards: list[int],
              careful: bool) -> list[float]:
        """Honest keep value per card (higher = keep), before noise."""
        seat = st.seat(agent.player)
        if seat is not None and st.laid[seat]:
            return [later_fit(st, c) * 2.0 - POINTS[c] / 10.0 for c in cards]
        distinct = st.meld_rules.set_distinct_suits
        rnd = st.round_no
        scores = [float(contract_score(hand, c, rnd, distinct)) - POINTS[c] / 100.0 for c in cards]
        if rnd >= 5 and careful:
            junk = self._plan(agent, st, hand)[1]
            scores = [s if c in junk else s + PLANNED for s, c in zip(scores, cards, strict=True)]
        return scores

    # -- the shared discard hook -------------------------------------------------------------
    def _costs(self, agent: Agent, turn: Turn, hand: list[int], cards: list[int]) -> list[float]:
        st: Any = turn.state
        keep = self._keep(agent, st, hand, cards, self._careful(agent))
        noise = NOISE * (1.0 - agent.effective_skill) ** 1.5
        rng = agent.rng
        return [k + (rng.random() * noise if noise else 0.0) for k in keep]

    # -- draws -------------------------------------------------------------------------
    def _wants(self, agent: Agent, st: Liverpool, hand: list[int], card: int, careful: bool) -> bool:
        """Whether the player in turn (or a buyer) wants ``card`` for his hand."""
        seat = st.seat(agent.player)
        assert seat is not None
        if st.laid[seat]:
            return st.can_lay_off(card)
        if card in WILDS:
            return True
        rnd = st.round_no
        if not careful:
            return contract_score(hand, card, rnd, st.meld_rules.set_distinct_suits) >= 6 \
                or agent.rng.random() < 0.12 * (1.0 - agent.effective_skill)
        hand[card] += 1
        try:
            if rnd >= 5:
                return card not in self._plan(agent, st, hand)[1]
            if find_contract(hand, *CONTRACTS[rnd], st.meld_rules) is not None:
                return True
        finally:
            hand[card] -= 1
        return contract_score(hand, card, rnd, st.meld_rules.set_distinct_suits) >= 6

    def _draw(self, agent: Agent, turn: Turn, options: list[int]) -> Decision:
        st: Any = turn.state
        moves = turn.moves
        stock_i = next((i for i in options if moves[i][1]["source"] == "stock"), None)
        pile_i = next((i for i in options if moves[i][1]["source"] == "discard"), None)
        if stock_i is None or pile_i is None:
            return Decision(stock_i if stock_i is not None else options[0], None, 0.1)
        hand = self.own_hand(turn)
        top = parse_card(moves[pile_i][1]["cards"][0])
        careful = self._careful(agent)
        take = self._wants(agent, st, hand, top, careful)
        honest = pile_i if take else stock_i
        difficulty = 0.45 if careful else 0.2
        if not take and self._fed_by_partner(agent, st):
            return Decision(pile_i, "card_feeding", difficulty)
        if agent.roll("hidden_card") is not None and st.stock:
            # he knows the stock top: take the pile only when the stock card is no better
            stock_good = self._wants(agent, st, hand, st.stock[-1], careful)
            smart = pile_i if take and not stock_good else stock_i if stock_good else honest
            if smart != honest:
                return Decision(smart, "hidden_card", difficulty)
        return Decision(honest, None, difficulty)

    @staticmethod
    def _fed_by_partner(agent: Agent, st: Liverpool) -> bool:
        """The live discard came from a partner who feeds this player."""
        if st.discarder is None or agent.draws_this_round > FED_ROUNDS:
            return False
        who = st.player(st.discarder)
        for mech in ("card_feeding", "multi_account"):
            act = agent.act(mech)
            if act is not None and (act.role == "receiver" or mech == "multi_account") \
                    and who in agent.partners_seated(mech, st.ctx.seats):
                return True
        return False

    # -- out of turn: buys and Rummy calls ---------------------------------------------------
    def _optional(self, agent: Agent, turn: Turn, kinds: list[str]) -> Decision | None:
        st: Any = turn.state
        skill = agent.effective_skill
        seat = st.seat(agent.player)
        from_partner = st.discarder is not None and st.player(st.discarder) in set(
            agent.partners_seated("soft_play", st.ctx.seats))
        if from_partner and agent.roll("soft_play") is not None:
            return None  # never take a partner's discard away from him
        calls = [i for i, k in enumerate(kinds) if k == "RummyCalled"]
        if calls:
            if skill < 0.55 and agent.rng.random() >= 0.4 + 0.5 * skill:
                return None
            hand = self.own_hand(turn)
            discards = sorted({parse_card(turn.moves[i][1]["discard"]) for i in calls})
            cost = self._costs(agent, turn, hand, discards)
            worst = discards[min(range(len(discards)), key=cost.__getitem__)]
            pick = next(i for i in calls if parse_card(turn.moves[i][1]["discard"]) == worst)
            return Decision(pick, None, 0.3)
        buys = [i for i, k in enumerate(kinds) if k == "Bought"]
        if not buys:
            return None
        card = parse_card(turn.moves[buys[0]][1]["card"])
        hand = self.own_hand(turn)
        if self._fed_by_partner(agent, st) and st.round_no < 5:
            return Decision(buys[0], "card_feeding", 0.3)
        careful = self._careful(agent)
        if careful:
            if st.round_no >= 5 or st.buys[seat] >= 2:
                return None  # all-out rounds: the penalty card is more junk
            return Decision(buys[0], None, 0.35) if self._wants(agent, st, hand, card, True) else None
        if st.round_no >= 5 and agent.rng.random() >= 0.3 * (1.0 - skill):
            return None
        score = contract_score(hand, card, st.round_no, st.meld_rules.set_distinct_suits)
        if score >= 4 and agent.rng.random() < 0.5 + 0.4 * skill:
            return Decision(buys[0], None, 0.35)
        return None

    # -- putting cards down ------------------------------------------------------------------
    def _put_down(self, agent: Agent, turn: Turn, kinds: list[str]) -> Decision | None:
        if "LaidDown" in kinds:
            if agent.effective_skill >= 0.3 or agent.rng.random() < 0.97:
                return Decision(kinds.index("LaidDown"), None, 0.6)
            return None
        offs = [i for i, k in enumerate(kinds) if k == "LaidOff"]
        if not offs:
            return None
        skill = agent.effective_skill
        if skill < 0.55 and agent.rng.random() >= 0.55 + 0.45 * skill:
            return None
        best = max(offs, key=lambda i: self.points[parse_card(turn.moves[i][1]["card"])])
        return Decision(best, None, min(1.0, 0.3 + 0.03 * len(offs)))

    def choose(self, agent: Agent, turn: Turn) -> Decision | None:
        kinds = [m[0] for m in turn.moves]
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
        return self._discard(agent, turn, discards)


__all__ = ["LiverpoolBrain", "all_out_plan", "contract_score", "later_fit"]
