"""The lobby: when players come online, and which tables they sit at.

Players start sessions (a few a day, evening-heavy, lengths log-normal; bots run for
hours), pick a variant and stake they like, and wait in that queue. A table forms when
enough players wait (or the oldest has waited two minutes and the variant's minimum is
there); a player left alone in his queue moves, every two minutes, to another of his
stakes where someone waits. Group members (colluders, friends, one person's accounts)
come online together at a variant and stake they all like, at the group's pace (each
member's own session starts are thinned so that his total stays what his activity
says), and the first to be seated pulls his waiting partners to the same table — the
same way for fraud and for friends, so co-seating alone is not proof. Chip dumpers
prefer heads-up tables; partners take adjacent seats most of the time (a feeder right
before his receiver is the seat that pays).

None of this may tell a fraudster by anything but his play: game and session counts,
first appearance, variants and stakes played are those of a lone player of the same
activity (tests/test_sim_no_leaks.py; bots excepted, they run for hours).

The output is a list of :class:`Sitting`: one table's occupancy for a run of games with
the same players. Everything is decided here from the seed, before any card is dealt,
so the games can be played in parallel shards and still give the same world.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .population import Population, derive_seed

WORLD_START_MS = int(datetime(2026, 11, 2, tzinfo=UTC).timestamp() * 1000)
DAY_MS = 86_400_000
MINUTE_MS = 60_000

#: seats per table: (choices, weights); minimum seats
TABLE_SIZES: dict[str, tuple[tuple[int, ...], tuple[float, ...]]] = {
    "classic": ((2, 3, 4, 5, 6), (0.2, 0.25, 0.35, 0.12, 0.08)),
    "r500": ((2, 3, 4), (0.35, 0.35, 0.3)),
    "liverpool": ((3, 4, 5, 6), (0.3, 0.35, 0.2, 0.15)),
    "michigan": ((3, 4, 5, 6), (0.3, 0.35, 0.2, 0.15)),
}
MIN_SEATS = {"classic": 2, "r500": 2, "liverpool": 2, "michigan": 3}
#: mean sessions per account per day (times the account's activity). At 0.55 a
#: 3,000-game world's lobby was so thin (~0.3 arrivals an hour per variant and stake) that
#: lone players' sessions went by waiting while group members, who bring their opponents,
#: played: game and session counts alone told group members (fraud or friends) apart
#: (ROC AUC 0.85 / 0.78 with the other lobby artefacts; 0.65 / 0.62 with only this one).
SESSIONS_PER_DAY = 1.5
#: rough minutes per game, to plan how many games a sitting holds
GAME_MINUTES = {"classic": 5.0, "r500": 9.0, "liverpool": 18.0, "michigan": 8.0}


@dataclass
class Sitting:
    """One table's occupancy: the same players for ``n_games`` games in a row."""

    index: int
    table_id: str
    variant: str
    stake: int
    rules: dict[str, Any]
    seats: list[str]
    n_games: int
    start_ms: int
    session_start: dict[str, int]
    first_dealer: int
    faults: dict[int, str] = field(default_factory=dict)  # game number -> fault kind


def table_rules(variant: str, rng: random.Random, dumpers: bool, stake: int = 100) -> dict[str, Any]:
    """The house rules a table runs (GameCreated.rules).

    An r500 tournament's ``chip_ratio`` grows with the starting stack (one chip per
    point per 100 chips of stack): round-score gaps are tens of points, so at ratio 1 a
    stack of 500 or 1,000 chips takes ~100 rounds to bust (thousands of moves, far past
    any real sitting); scaled, every tournament lasts a handful of rounds."""
    if variant == "classic":
        return {"rake_bps": 250} if rng.random() < 0.3 else {}
    if variant == "r500":
        if dumpers or rng.random() < 0.25:
            return {"mode": "tournament", "chip_ratio": max(1, stake // 100)}
        return {"mode": "rounds", "rounds": rng.choice((1, 2, 3))}
    if variant == "michigan":
        return {"deals": 3} if rng.random() < 0.7 else {"deals": 4, "three_in_one": True}
    return {}


def plan_sittings(seed: int, pop: Population, variants: tuple[str, ...], games: int) -> list[Sitting]:
    """Sessions -> queues -> tables, until the sittings hold ``games`` games."""
    rng = random.Random(derive_seed(seed, "lobby"))
    players = pop.by_id()
    group_of: dict[str, list[tuple[str, list[str], float, str]]] = {}
    for g in pop.groups:
        for m in g.members:
            group_of.setdefault(m, []).append((g.group_id, g.members, g.together, g.kind))
    heap: list[tuple[int, int, str, str]] = []  # (time, tiebreak, kind, player)
    counter = 0
    session_end: dict[str, int] = {}
    session_start: dict[str, int] = {}
    session_pick: dict[str, tuple[str, int]] = {}
    day = 0

    rate = {pid: SESSIONS_PER_DAY * p.activity * _own_share(group_of.get(pid, []))
            for pid, p in players.items()}

    def schedule_day(d: int) -> None:
        nonlocal counter
        base = WORLD_START_MS + d * DAY_MS
        for pid in sorted(players):
            n = _poisson(rng, rate[pid])
            for _ in range(n):
                hour = rng.choices(range(24), _HOUR_WEIGHTS)[0]
                t = base + hour * 3_600_000 + rng.randrange(3_600_000)
                counter += 1
                heapq.heappush(heap, (t, counter, "start", pid))

    schedule_day(0)
    waiting: dict[tuple[str, int], list[tuple[int, str]]] = {}
    sittings: list[Sitting] = []
    planned = 0
    busy_until: dict[str, int] = {}
    retry_at: dict[str, int] = {}  # players waiting, with a "retry" event pending
    while planned < games:
        if not heap or heap[0][0] >= WORLD_START_MS + (day + 1) * DAY_MS:
            day += 1
            schedule_day(day)
            if day > 3650:
                break
            continue
        t, _, kind, pid = heapq.heappop(heap)
        p = players[pid]
        if kind == "start":
            if busy_until.get(pid, 0) > t or session_end.get(pid, 0) > t:
                continue  # already online
            length = int(rng.lognormvariate(0, 0.35) * p.session_minutes * MINUTE_MS)
            session_start[pid] = t
            session_end[pid] = t + max(10 * MINUTE_MS, length)
            joiners = [other for _gid, members, together, _kind in group_of.get(pid, [])
                       for other in members
                       if other != pid and session_end.get(other, 0) <= t
                       and rng.random() < together]
            session_pick[pid], joiners = _group_pick(rng, p, [players[o] for o in joiners],
                                                     variants)
            for other in joiners:
                if session_end.get(other, 0) <= t:  # once, if in two of pid's groups
                    lag = rng.randint(5_000, 240_000)
                    session_start[other] = t + lag
                    session_end[other] = session_end[pid] + rng.randint(-600_000, 600_000)
                    session_pick[other] = session_pick[pid]
                    counter += 1
                    heapq.heappush(heap, (t + lag, counter, "queue", other))
            kind = "queue"
        if kind == "retry":
            # still waiting two minutes on: the table may form now (the oldest waited two
            # minutes), or, alone in his queue, the player moves to where others wait
            retry_at.pop(pid, None)
            key = session_pick[pid]
            if busy_until.get(pid, 0) > t or all(q[1] != pid for q in waiting.get(key, [])):
                continue
            partner_due = any(session_pick.get(m) == key and session_end.get(m, 0) > t
                              for _g, members, _tog, _k in group_of.get(pid, [])
                              for m in members if m != pid)
            if len(waiting[key]) == 1 and not partner_due:
                new_key = _liquid_pick(waiting, key, p, pid)
                if new_key != key:
                    waiting[key] = []
                    session_pick[pid] = new_key
            kind = "queue"
        if kind == "queue":
            if session_end.get(pid, 0) - t < 3 * MINUTE_MS:
                continue
            key = session_pick[pid]
            queue = waiting.setdefault(key, [])
            # whoever's session ran out while waiting has gone home
            queue[:] = [q for q in queue if session_end.get(q[1], 0) - t >= 3 * MINUTE_MS]
            if all(q[1] != pid for q in queue):
                queue.append((t, pid))
            made = _try_seat(rng, t, key, queue, group_of, players, session_end, session_start,
                             sittings)
            if any(q[1] == pid for q in queue) and pid not in retry_at:
                retry_at[pid] = t + 2 * MINUTE_MS
                counter += 1
                heapq.heappush(heap, (t + 2 * MINUTE_MS, counter, "retry", pid))
            for s in made:
                n = min(s.n_games, games - planned)
                s.n_games = n
                planned += n
                end = s.start_ms + int(n * GAME_MINUTES[s.variant] * MINUTE_MS)
                for q in s.seats:
                    busy_until[q] = end
                    counter += 1
                    heapq.heappush(heap, (end + rng.randint(5_000, 60_000), counter, "queue", q))
                if planned >= games:
                    break
    return [s for s in sittings if s.n_games > 0]


def _own_share(groups: list[tuple[str, list[str], float, str]]) -> float:
    """The share of a group member's sessions he starts himself.

    Partners pull him online (a share ``together`` of each partner's sessions), so his own
    session starts are thinned to keep his expected number of sessions what his activity
    says: 1 / (1 + together x partners). Without it every group member — colluders and
    friends alike — played ~2x the games of a comparable lone player, and the game count
    alone told fraud from honest play (ROC AUC 0.85 over the fraud accounts)."""
    return 1.0 / (1.0 + sum(together * (len(members) - 1)
                            for _gid, members, together, _kind in groups))


def _group_pick(rng: random.Random, lead: Any, joiners: list[Any],
                variants: tuple[str, ...]) -> tuple[tuple[str, int], list[str]]:
    """The session's (variant, stake) and who of ``joiners`` comes along.

    Everybody plays something he likes: the variant and stake are drawn from those the
    lead and the joiners share (population._align makes sure there is one); a joiner who
    shares neither stays offline. Taking the lead's pick for everyone made group members
    play variants and stakes outside their own taste — more distinct variants and stakes
    than any lone player, a tell unrelated to their play."""
    mine = [v for v in lead.variants if v in variants] or list(variants)
    common = [v for v in mine if all(v in j.variants for j in joiners)]
    variant = rng.choice(common or mine)
    stakes = [s for s in lead.stakes if all(s in j.stakes for j in joiners)]
    stake = rng.choice(stakes or list(lead.stakes))
    return (variant, stake), [j.player_id for j in joiners
                              if variant in j.variants and stake in j.stakes]


def _liquid_pick(waiting: dict[tuple[str, int], list[tuple[int, str]]], pick: tuple[str, int],
                 player: Any, me: str) -> tuple[str, int]:
    """Where a player alone in his queue goes: ``pick`` if anyone else waits there, else
    the same variant at the one of his stakes with the most others waiting (a real lobby
    shows the open tables), else ``pick``. The variant stays: moving across variants
    drained the three-seat Michigan queues in thin lobbies.

    Without it, in a thin lobby a lone player waited (median 0.2 min, but a mean of 40
    min in a 3,000-game world) for an opponent and played fewer games per session
    than a group member, who brings his opponents along — a game count tell that is
    about lobby liquidity, not fraud (with SESSIONS_PER_DAY, see there)."""
    def others(key: tuple[str, int]) -> int:
        return sum(1 for _t, q in waiting.get(key, ()) if q != me)

    if others(pick):
        return pick
    options = [(pick[0], st) for st in sorted(set(player.stakes))]
    best = max(options, key=others)
    return best if others(best) else pick


_HOUR_WEIGHTS = [1, 0.6, 0.4, 0.3, 0.3, 0.4, 0.6, 0.9, 1.1, 1.2, 1.3, 1.4, 1.6, 1.6, 1.5, 1.5,
                 1.7, 2.0, 2.6, 3.2, 3.5, 3.2, 2.4, 1.6]


def _poisson(rng: random.Random, lam: float) -> int:
    n, p, limit = 0, 1.0, pow(2.718281828459045, -lam)
    while True:
        p *= rng.random()
        if p <= limit:
            return n
        n += 1


def _try_seat(rng: random.Random, t: int, key: tuple[str, int], queue: list[tuple[int, str]],
              group_of: dict[str, list[tuple[str, list[str], float, str]]],
              players: dict[str, Any], session_end: dict[str, int],
              session_start: dict[str, int], sittings: list[Sitting]) -> list[Sitting]:
    variant, stake = key
    made: list[Sitting] = []
    sizes, weights = TABLE_SIZES[variant]
    while queue:
        first_t, first = queue[0]
        partners: list[str] = []
        dumping = False
        for _gid, members, _tog, gkind in group_of.get(first, []):
            for m in members:
                if m != first and m not in partners and any(q[1] == m for q in queue):
                    partners.append(m)
            dumping = dumping or gkind == "chip_dumping"
        if dumping and partners and variant in ("classic", "r500"):
            size = 2
        else:
            size = rng.choices(sizes, weights)[0]
            if len(queue) < size:
                if t - first_t < 2 * MINUTE_MS or len(queue) < MIN_SEATS[variant]:
                    return made
                size = len(queue)
        chosen = [first, *partners[: size - 1]]
        for _qt, q in queue:
            if len(chosen) >= size:
                break
            if q not in chosen:
                chosen.append(q)
        queue[:] = [q for q in queue if q[1] not in chosen]
        seats = _seat_order(rng, chosen, group_of)
        remaining = min(session_end[q] - t for q in seats)
        n_games = max(1, min(14, int(remaining / (GAME_MINUTES[variant] * MINUTE_MS))))
        index = len(sittings)
        s = Sitting(
            index=index, table_id=f"t{index:06d}", variant=variant, stake=stake,
            rules=table_rules(variant, rng, dumping and len(seats) == 2, stake), seats=seats,
            n_games=n_games, start_ms=t + rng.randint(2_000, 20_000),
            session_start={q: session_start.get(q, t) for q in seats},
            first_dealer=rng.randrange(len(seats)),
        )
        sittings.append(s)
        made.append(s)
    return made


def _seat_order(rng: random.Random, chosen: list[str],
                group_of: dict[str, list[tuple[str, list[str], float, str]]]) -> list[str]:
    """Random seats, except that group partners usually sit next to each other (in the
    group's member order: a feeder right before his receiver)."""
    seats = list(chosen)
    rng.shuffle(seats)
    for q in chosen:
        for _gid, members, _tog, _kind in group_of.get(q, []):
            here = [m for m in members if m in seats]
            if len(here) < 2 or rng.random() > 0.7:
                continue
            # members listed receiver first; seat feeders right before the receiver
            rest = [s for s in seats if s not in here]
            ordered = here[1:] + here[:1]
            at = rng.randrange(len(rest) + 1)
            seats = rest[:at] + ordered + rest[at:]
    return seats


__all__ = ["GAME_MINUTES", "MIN_SEATS", "TABLE_SIZES", "WORLD_START_MS", "Sitting",
           "plan_sittings", "table_rules"]
