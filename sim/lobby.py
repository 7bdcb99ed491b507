"""The lobby: when players come online, and which tables they sit at.

Players start sessions (a few a day, evening-heavy, lengths log-normal; bots run for
hours), pick a variant and stake they like, and wait in that queue. A table forms when
enough players wait (or the oldest has waited two minutes and the variant's minimum is
there); a player left alone in his queue moves, every two minutes, to another of his
stakes where someone waits.

Colluders seek their partner's table, and friends play together: when a group member
starts a session, each offline partner comes along with the group's ``together`` chance
(drawn per group, the same range for fraud and friends: population._together), at a
variant and stake they all like, at the group's pace (each member's own session starts
are thinned so that his total stays what his activity says). Those who came form the
session's *party*: it queues as one unit when its last member has arrived, sits at one
table, and goes back to the queue together after each sitting until a member's session
ends. A party waits for at least one stranger — it never starts a table with its
groups' members alone (chip-dumping pairs excepted at the variant's own heads-up odds: see
:func:`_try_seat`) — so coordination makes partners share tables, not heads-up pair
tables, and sessions without the partner keep co-seating a signal, not a certainty.
The same rule for fraud and friends, so co-seating alone is not proof. Partners take
adjacent seats most of the time (a feeder right before his receiver is the seat that
pays).

Before this rule the first partner seated pulled whoever of his partners already waited,
and partners drifted apart after one sitting: in a 30,000-game world of 9,000 players a
card feeder had his partner at the table in 18 % of his games, a chip dumper in 1 %;
now 80-95 %, with no more games than a lone player.

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
#: variants where a chip-dumping pair may sit heads-up (their dumping brains: classic's
#: walk-out and thrown games, Rummy 500's held cards in a tournament)
HEADS_UP_DUMPING = ("classic", "r500")
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
    #: the parties (partners who came online together) seated here, as the lobby formed it
    parties: list[tuple[str, ...]] = field(default_factory=list)


def table_rules(variant: str, rng: random.Random, dumpers: bool, stake: int = 100) -> dict[str, Any]:
    """The house rules a table runs (GameCreated.rules).

    An r500 tournament's ``chip_ratio`` grows with the starting stack (one chip per
    point per 100 chips of stack): round-score gaps are tens of points, so at ratio 1 a
    stack of 500 or 1,000 chips takes ~100 rounds to bust (thousands of moves, far past
    any real sitting); scaled, every tournament lasts a handful of rounds."""
    # ``dumpers`` is not used: the rules must not depend on who sits. A tournament forced
    # wherever a dumping pair sat made a dumper's Rummy 500 games tournaments ~always (a
    # quarter for everyone else), a tell with nothing to do with play (ROC AUC 0.95 over
    # planned worlds; tests/test_audit19_sim.py). The dumping brain holds cards in any mode.
    del dumpers
    if variant == "classic":
        return {"rake_bps": 250} if rng.random() < 0.3 else {}
    if variant == "r500":
        if rng.random() < 0.25:
            return {"mode": "tournament", "chip_ratio": max(1, stake // 100)}
        return {"mode": "rounds", "rounds": rng.choice((1, 2, 3))}
    if variant == "michigan":
        return {"deals": 3} if rng.random() < 0.7 else {"deals": 4, "three_in_one": True}
    return {}


def plan_sittings(seed: int, pop: Population, variants: tuple[str, ...], games: int) -> list[Sitting]:
    """Sessions -> queues -> tables, until the sittings hold ``games`` games.

    A player who starts a session may bring partners of his groups along (each offline
    partner with the group's ``together`` chance): that session's *party*. A party queues
    as one unit once its last member has arrived, sits at one table with at least one
    stranger (see :func:`_try_seat`), and goes back to the queue together after each
    sitting, until a member's session ends. Partners who came online on their own are
    strangers to each other in the lobby: they meet only as often as the queue makes them."""
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
    party_of: dict[str, int] = {}  # player -> the party of his current session, if any
    parties: dict[int, tuple[str, ...]] = {}
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

    def push(t: int, kind: str, pid: str) -> None:
        nonlocal counter
        counter += 1
        heapq.heappush(heap, (t, counter, kind, pid))

    def unit_of(pid: str, t: int) -> list[str]:
        """``pid`` and the members of his party who are free to queue with him now."""
        party = parties.get(party_of.get(pid, -1), (pid,))
        return [m for m in party if m == pid or (
            party_of.get(m) == party_of[pid] and session_pick.get(m) == session_pick[pid]
            and busy_until.get(m, 0) <= t and session_end.get(m, 0) - t >= 3 * MINUTE_MS)]

    schedule_day(0)
    waiting: dict[tuple[str, int], list[tuple[int, str]]] = {}
    sittings: list[Sitting] = []
    planned = 0
    busy_until: dict[str, int] = {}
    retry_at: dict[str, int] = {}  # players waiting, with a "retry" event pending
    seated_day = 0  # the last day a table formed
    while planned < games:
        if not heap or heap[0][0] >= WORLD_START_MS + (day + 1) * DAY_MS:
            day += 1
            schedule_day(day)
            # a year without a table formed: none will (too few players for the variants
            # asked, say); stop here and let the caller refuse, instead of ten years on
            if day > 3650 or day - seated_day > 365:
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
            party_of.pop(pid, None)
            arrive = t
            came: list[str] = []
            for other in joiners:
                if session_end.get(other, 0) <= t and other not in came:  # once, if in two groups
                    lag = rng.randint(5_000, 240_000)
                    session_start[other] = t + lag
                    session_end[other] = session_end[pid] + rng.randint(-600_000, 600_000)
                    session_pick[other] = session_pick[pid]
                    arrive = max(arrive, t + lag)
                    came.append(other)
            if came:
                # the party queues as one unit when its last member has arrived
                party = len(parties)
                parties[party] = (pid, *came)
                for m in parties[party]:
                    party_of[m] = party
                push(arrive, "queue", pid)
                continue
            kind = "queue"
        if kind == "retry":
            # still waiting two minutes on: the table may form now (the oldest waited two
            # minutes), or, with no stranger in his queue, the unit moves to where some wait
            retry_at.pop(pid, None)
            key = session_pick[pid]
            queue = waiting.get(key, [])
            if busy_until.get(pid, 0) > t or all(q[1] != pid for q in queue):
                continue
            unit = [m for m in unit_of(pid, t) if any(q[1] == m for q in queue)]
            new_key = _liquid_pick(waiting, key, p, unit, group_of)
            if new_key != key:
                queue[:] = [q for q in queue if q[1] not in unit]
                for m in unit:
                    session_pick[m] = new_key
            kind = "queue"
        if kind == "queue":
            key = session_pick[pid]
            unit = [m for m in unit_of(pid, t) if session_end.get(m, 0) - t >= 3 * MINUTE_MS]
            if not unit:
                continue
            queue = waiting.setdefault(key, [])
            # whoever's session ran out while waiting has gone home
            queue[:] = [q for q in queue if session_end.get(q[1], 0) - t >= 3 * MINUTE_MS]
            for m in unit:
                if all(q[1] != m for q in queue):
                    queue.append((t, m))
            made = _try_seat(rng, t, key, queue, group_of, party_of, session_end,
                             session_start, sittings)
            for m in unit:
                if any(q[1] == m for q in queue) and m not in retry_at:
                    retry_at[m] = t + 2 * MINUTE_MS
                    push(t + 2 * MINUTE_MS, "retry", m)
            if made:
                seated_day = day
            for s in made:
                n = min(s.n_games, games - planned)
                s.n_games = n
                planned += n
                end = s.start_ms + int(n * GAME_MINUTES[s.variant] * MINUTE_MS)
                back: dict[int, int] = {}  # a party seated here goes back to the queue together
                for q in s.seats:
                    busy_until[q] = end
                    party = party_of.get(q)
                    if party is None or sum(m in s.seats for m in parties[party]) < 2:
                        push(end + rng.randint(5_000, 60_000), "queue", q)
                    elif party not in back:
                        back[party] = end + rng.randint(5_000, 60_000)
                        push(back[party], "queue", q)
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
                 player: Any, unit: list[str],
                 group_of: dict[str, list[tuple[str, list[str], float, str]]]) -> tuple[str, int]:
    """Where a player (and his party, ``unit``) with no stranger in his queue goes: ``pick``
    if a stranger waits there, else the same variant at the one of his stakes with the most
    strangers waiting (a real lobby shows the open tables), else ``pick``. A stranger is
    anyone in no group with a member of the unit: partners alone cannot start a table
    (:func:`_try_seat`). The variant stays: moving across variants drained the three-seat
    Michigan queues in thin lobbies.

    Without it, in a thin lobby a lone player waited (median 0.2 min, but a mean of 40
    min in a 3,000-game world) for an opponent and played fewer games per session
    than a group member, who brings his opponents along — a game count tell that is
    about lobby liquidity, not fraud (with SESSIONS_PER_DAY, see there)."""
    mine = {m for u in unit for _g, members, _tog, _k in group_of.get(u, []) for m in members}
    mine.update(unit)

    def strangers(key: tuple[str, int]) -> int:
        return sum(1 for _t, q in waiting.get(key, ()) if q not in mine)

    if strangers(pick):
        return pick
    options = [(pick[0], st) for st in sorted(set(player.stakes))]
    best = max(options, key=strangers)
    return best if strangers(best) else pick


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
              party_of: dict[str, int], session_end: dict[str, int],
              session_start: dict[str, int], sittings: list[Sitting]) -> list[Sitting]:
    """Form the tables the queue allows now, first come first seated; return them.

    The queue is taken in *units*: a party (partners who came online together) or a lone
    player. A table takes the first unit and the next units that fit whole, at the size
    drawn for the variant, raised to seat a party plus at least one stranger; a party that
    does not fit keeps its place for the next table. Once the first has waited two
    minutes, the table starts with whoever can sit (the variant's minimum). Never does a
    party sit with only its groups' members — partners wait for a stranger — so
    coordination cannot make the heads-up pair tables of the rejected "queue together"
    rule (DETECTION.md, round 5b), the same way for colluders and friends.

    One exception, because the mechanism needs it: a chip-dumping party (dumper and
    receiver) at classic or Rummy 500 takes a heads-up table when the size drawn is two
    (the share of heads-up tables the variant has anyway). Dumping moves chips to the
    receiver only when he is the one who wins what the dumper throws: at a table with a
    stranger the stranger collects as often (tests/test_sim_behaviour.py: the receiver's
    net was -4,000 chips with no heads-up table), and the walk-out that hands over a
    heads-up pot (brain_classic) needs the pair alone. Once they sat heads-up every time
    (size 2 forced), now at the table's own odds."""
    variant, stake = key
    made: list[Sitting] = []
    sizes, weights = TABLE_SIZES[variant]
    while queue:
        units = _units(queue, party_of)
        first_t, lead = units[0]
        size = rng.choices(sizes, weights)[0]
        least = MIN_SEATS[variant]
        if size == 2 and variant in HEADS_UP_DUMPING and _dumping_pair(lead, group_of):
            chosen: list[str] | None = list(lead)  # the one exception: see the docstring
        else:
            if len(lead) > 1:
                size = max(size, len(lead) + 1)
                least = max(least, len(lead) + 1)
            chosen = _fill(units, size, group_of)
        if chosen is None:
            if t - first_t < 2 * MINUTE_MS:
                return made
            # the oldest waited two minutes: the largest table the queue can make now
            top = min(sum(len(u) for _t, u in units), max(sizes))
            chosen = next((c for n in range(top, least - 1, -1)
                           if (c := _fill(units, n, group_of)) is not None), None)
            if chosen is None:
                return made
        queue[:] = [q for q in queue if q[1] not in chosen]
        seats = _seat_order(rng, chosen, group_of)
        remaining = min(session_end[q] - t for q in seats)
        n_games = max(1, min(14, int(remaining / (GAME_MINUTES[variant] * MINUTE_MS))))
        dumping = any(gkind == "chip_dumping" and sum(m in seats for m in members) >= 2
                      for q in seats for _g, members, _tog, gkind in group_of.get(q, []))
        index = len(sittings)
        s = Sitting(
            index=index, table_id=f"t{index:06d}", variant=variant, stake=stake,
            rules=table_rules(variant, rng, dumping, stake), seats=seats,
            n_games=n_games, start_ms=t + rng.randint(2_000, 20_000),
            session_start={q: session_start.get(q, t) for q in seats},
            first_dealer=rng.randrange(len(seats)),
        )
        s.parties = [tuple(u) for _t, u in units if len(u) > 1 and u[0] in chosen]
        sittings.append(s)
        made.append(s)
    return made


def _dumping_pair(unit: list[str],
                 group_of: dict[str, list[tuple[str, list[str], float, str]]]) -> bool:
    """Whether ``unit`` is exactly a chip-dumping group's dumper and receiver."""
    return len(unit) == 2 and any(
        kind == "chip_dumping" and sorted(members) == sorted(unit)
        for _g, members, _tog, kind in group_of.get(unit[0], []))


def _units(queue: list[tuple[int, str]], party_of: dict[str, int]) -> list[tuple[int, list[str]]]:
    """The queue as (arrival, members) units in queue order: a party's waiting members
    together at its first member's place, everyone else alone."""
    units: list[tuple[int, list[str]]] = []
    at: dict[int, int] = {}
    for qt, q in queue:
        party = party_of.get(q)
        if party is None:
            units.append((qt, [q]))
        elif party in at:
            units[at[party]][1].append(q)
        else:
            at[party] = len(units)
            units.append((qt, [q]))
    return units


def _fill(units: list[tuple[int, list[str]]], size: int,
          group_of: dict[str, list[tuple[str, list[str], float, str]]]) -> list[str] | None:
    """``size`` players: the first unit, then each next unit that fits whole, skipping one
    that would complete a table of one group's members only with a party among them (a
    party waits for a stranger); None if the queue cannot. Partners who came online on
    their own are strangers to the rule: two friends alone in a thin lobby still play."""
    chosen = list(units[0][1])
    party = len(chosen) > 1
    if len(chosen) >= size:
        return None
    for _t, unit in units[1:]:
        if len(chosen) + len(unit) > size:
            continue
        candidate = chosen + unit
        if (len(candidate) == size and (party or len(unit) > 1)
                and _one_group(candidate, group_of)):
            continue
        party = party or len(unit) > 1
        chosen = candidate
        if len(chosen) == size:
            return chosen
    return None


def _one_group(seats: list[str],
               group_of: dict[str, list[tuple[str, list[str], float, str]]]) -> bool:
    """Whether every one of ``seats`` is a member of one group (of the first seat's)."""
    return any(all(q in members for q in seats) for _g, members, _tog, _k in
               group_of.get(seats[0], []))


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
