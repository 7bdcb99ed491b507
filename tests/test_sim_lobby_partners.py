"""Colluders seek their partner's table without a tell (sim/lobby.py, parties).

Group members who come online together (a party) sit at one table far more often than
chance, never at a table of their group alone (chip-dumping pairs excepted, at the
variant's heads-up odds), and not on every session. Planned worlds only: no card is dealt,
a 3,000-game plan takes ~0.2 s. The no-leak checks (game and session counts like a lone
player's) are tests/test_sim_no_leaks.py's, unchanged.
"""

from __future__ import annotations

import collections
import itertools

import pytest

from rummyguard.sim.lobby import HEADS_UP_DUMPING, plan_sittings
from rummyguard.sim.population import TOGETHER, build_population
from rummyguard.sim.world import World, WorldConfig, build_world

VARIANTS = ("classic", "r500", "michigan")
COLLUSION = ("card_feeding", "soft_play", "chip_dumping", "multi_account")


@pytest.fixture(scope="module")
def worlds() -> list[World]:
    """Three 3,000-game plans at 6 % fraud (the measured world's parameters) and the
    behaviour test's thin 40-player, 30 % fraud classic world."""
    out = [build_world(WorldConfig(games=3000, seed=seed, variants=VARIANTS, fraud_rate=0.06))
           for seed in (31, 32, 33)]
    out.append(build_world(WorldConfig(games=700, seed=5, variants=("classic",),
                                       fraud_rate=0.3, players=40)))
    return out


def _pair_games(world: World) -> collections.Counter:
    shared: collections.Counter = collections.Counter()
    for s in world.sittings:
        for a, b in itertools.combinations(sorted(s.seats), 2):
            shared[(a, b)] += s.n_games
    return shared


def test_partners_co_sit_far_above_chance(worlds: list[World]) -> None:
    """A colluding pair shares many times the games of a pair of the same tastes that
    does not coordinate: the group member with an honest account whose variants and
    stakes are exactly his partner's (same queues, same lobby)."""
    pairs = chance = 0.0
    n_pairs = n_chance = 0
    for world in worlds[:3]:
        shared = _pair_games(world)
        players = world.population.by_id()
        fraud = {p.player_id for p in world.population.players if p.mechanisms}
        friends = {pid for pid, _kind, _g in world.population.hard_negatives if _kind == "friends"}
        for g in world.population.groups:
            if g.kind not in COLLUSION or len(g.members) < 2:
                continue
            for a, b in itertools.combinations(sorted(g.members), 2):
                pairs += shared[(a, b)]
                n_pairs += 1
                twins = [c for c, p in players.items()
                         if c not in fraud and c not in friends and c != a
                         and p.variants == players[b].variants and p.stakes == players[b].stakes]
                for c in twins:
                    chance += shared[tuple(sorted((a, c)))]
                    n_chance += 1
    assert n_pairs >= 10 and n_chance >= 100
    per_pair, per_twin = pairs / n_pairs, chance / n_chance
    assert per_pair > 10 * per_twin, (per_pair, per_twin)


def test_most_of_a_colluders_games_are_with_his_partner_but_not_all(worlds: list[World]) -> None:
    """Co-seating is a signal, not a certainty: partners coordinate on a share of their
    sessions (``together``, one per group in TOGETHER's range)."""
    with_partner = total = 0
    apart_groups = groups = 0
    for world in worlds[:3]:
        for g in world.population.groups:
            if g.kind not in COLLUSION or len(g.members) < 2:
                continue
            assert TOGETHER[0] <= g.together <= TOGETHER[1]
            apart = 0
            for s in world.sittings:
                here = [m for m in g.members if m in s.seats]
                total += len(here) * s.n_games
                with_partner += len(here) * s.n_games if len(here) >= 2 else 0
                apart += len(here) == 1
            groups += 1
            apart_groups += apart > 0
    share = with_partner / total
    assert 0.5 < share < 0.97, share
    assert apart_groups >= groups // 2, (apart_groups, groups)


def test_a_party_never_sits_with_its_group_alone_but_the_dumpers(worlds: list[World]) -> None:
    """Partners who came online together wait for a stranger: every table the lobby seats
    a party at has someone outside the party's groups — except a chip-dumping pair at a
    heads-up classic or Rummy 500 table, which the mechanism needs, and then not at every
    table the pair shares. Tables of one group alone from partners who came online on
    their own (chance meetings) stay rare."""
    dumper_alone = dumper_shared = checked = chance_alone = co_tables = 0
    for world in worlds:
        group_sets = [(g.kind, set(g.members)) for g in world.population.groups
                      if len(g.members) > 1]
        for s in world.sittings:
            seats = set(s.seats)
            for party in s.parties:
                checked += 1
                mine = set().union(*(m for _k, m in group_sets if set(party) <= m))
                if seats <= mine:
                    kinds = {k for k, m in group_sets if set(party) <= m}
                    assert kinds == {"chip_dumping"} and len(seats) == 2, (party, s.seats)
                    assert s.variant in HEADS_UP_DUMPING, s
            for kind, members in group_sets:
                if len(seats & members) < 2:
                    continue
                co_tables += 1
                alone = seats <= members
                if kind == "chip_dumping":
                    dumper_shared += 1
                    dumper_alone += alone
                elif alone:
                    assert not any(set(p) <= members for p in s.parties)
                    chance_alone += 1
    assert checked >= 200
    assert dumper_shared >= 10 and dumper_alone < dumper_shared, (dumper_alone, dumper_shared)
    assert chance_alone < 0.1 * co_tables, (chance_alone, co_tables)


def test_a_thin_lobby_does_not_seat_partners_heads_up(worlds: list[World]) -> None:
    """The rejected rule's failure: in a 40-player world the queue often held only the
    pair, and after two minutes they sat heads-up again and again. Here heads-up tables
    are common (the thin lobby) but never a non-dumping pair's."""
    world = worlds[3]
    groups = [set(g.members) for g in world.population.groups
              if len(g.members) > 1 and g.kind != "chip_dumping"]
    heads_up = [s for s in world.sittings if len(s.seats) == 2]
    assert len(heads_up) > len(world.sittings) // 3
    pair_alone = [s for s in heads_up for g in groups if set(s.seats) <= g]
    assert not any(s.parties for s in pair_alone)
    co = sum(1 for s in world.sittings for g in groups if len(set(s.seats) & g) >= 2)
    assert co >= 30 and len(pair_alone) < 0.1 * co, (len(pair_alone), co)


def test_a_plan_is_deterministic() -> None:
    """Same seed, same sittings (the played world's byte identity is
    tests/test_sim_world.py's)."""
    def plan() -> list[tuple]:
        pop = build_population(77, 120, VARIANTS, 0.1)
        return [(s.table_id, s.variant, s.stake, tuple(s.seats), s.n_games, s.start_ms,
                 tuple(sorted(s.session_start.items())), s.first_dealer, tuple(sorted(s.rules)))
                for s in plan_sittings(77, pop, VARIANTS, 1500)]

    assert plan() == plan()
