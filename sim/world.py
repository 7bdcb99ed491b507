"""A whole simulated world: population -> lobby -> games (in parallel shards) -> a log
and its labels.

Everything random is derived from the main seed along a path (population, lobby, then
one seed per sitting), so a sitting plays the same wherever and whenever it runs; the
shards are whole sittings (a table's consecutive games, which CL-NEXT chains), played by
a process pool and written back in plan order. Same seed and arguments -> the same
bytes, with one worker or many.

The labels file is documented in docs/fraud.md ("The simulator's labels file"; see
:func:`labels_document`).
"""

from __future__ import annotations

import multiprocessing as mp
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..events.hashing import chain
from ..events.timestamps import ts_millis
from ..replay.engine import replay
from ..replay.variant import variant_class
from .agents import Act, Agent, Brain
from .driver import Platform
from .faults import EXPECTED, FAULTS_FOR, NEEDS_CHAIN, FaultError, chain_and_tamper, wrong_payout
from .lobby import MIN_SEATS, Sitting, plan_sittings
from .population import Player, Population, build_population, derive_seed, players_for

LABELS_VERSION = 1


def brains() -> dict[str, Callable[[], Brain]]:
    """Variants the simulator can play, each with its brain factory."""
    from .brain_classic import ClassicBrain

    out: dict[str, Callable[[], Brain]] = {"classic": ClassicBrain}
    for name, module, cls in (("r500", "brain_meld", "R500Brain"),
                              ("liverpool", "brain_liverpool", "LiverpoolBrain"),
                              ("michigan", "brain_michigan", "MichiganBrain")):
        if variant_class(name) is None:
            continue
        mod = __import__(f"rummyguard.sim.{module}", fromlist=[cls])
        out[name] = getattr(mod, cls)
    return out


def available_variants() -> list[str]:
    return sorted(brains())


@dataclass(frozen=True)
class WorldConfig:
    games: int
    seed: int
    variants: tuple[str, ...] = ("classic",)
    fraud_rate: float = 0.02
    faults: int = 0
    chain: bool = True
    workers: int = 1
    players: int | None = None

    def args(self) -> dict[str, Any]:
        return {"games": self.games, "seed": self.seed, "variants": list(self.variants),
                "fraud_rate": self.fraud_rate, "faults": self.faults, "chain": self.chain,
                "players": self.players}


@dataclass
class SittingResult:
    index: int
    lines: bytes
    games: int
    events: int
    planted: list[tuple[str, int, str, str, str]] = field(default_factory=list)
    faults: list[tuple[str, int, str, str, str]] = field(default_factory=list)
    results: list[tuple[str, str, list[str], list[str]]] = field(default_factory=list)
    #: (game_id, variant, seats, winners)
    #: games abandoned by their players, by reason (driver.Platform.abandoned)
    abandoned: dict[str, int] = field(default_factory=dict)


@dataclass
class World:
    config: WorldConfig
    population: Population
    sittings: list[Sitting]

    @property
    def games(self) -> int:
        return sum(s.n_games for s in self.sittings)


def build_world(config: WorldConfig) -> World:
    """Plan the world (no cards dealt yet): population, sittings, fault placement."""
    bad = [v for v in config.variants if v not in brains()]
    if bad:
        raise ValueError(f"variant(s) not available to the simulator yet: {', '.join(bad)} "
                         f"(available: {', '.join(available_variants())})")
    n_players = config.players or players_for(config.games)
    least = min(MIN_SEATS[v] for v in config.variants)
    if n_players < least:
        raise ValueError(f"{n_players} players cannot seat a table of {', '.join(config.variants)} "
                         f"(at least {least} needed)")
    pop = build_population(config.seed, n_players, config.variants, config.fraud_rate)
    sittings = plan_sittings(config.seed, pop, config.variants, config.games)
    planned = sum(s.n_games for s in sittings)
    if planned < config.games:
        # the lobby gives up after ten simulated years: too few players who like the same
        # variant and stake ever wait together (e.g. three players of Michigan)
        raise ValueError(f"the lobby seated only {planned} of {config.games} games: {n_players} "
                         f"players too few to fill {', '.join(config.variants)} tables; "
                         f"give more players")
    if config.faults > planned:
        # one fault per game: more could only be dropped, and the labels would list fewer
        # faults than asked for without a word (audit 54)
        raise ValueError(f"--faults {config.faults}: at most one fault per game, and the world "
                         f"has {planned} games")
    _place_faults(config, sittings)
    return World(config, pop, sittings)


def _place_faults(config: WorldConfig, sittings: list[Sitting]) -> None:
    """Spread ``config.faults`` faults over the games: the kinds the world's variants
    allow, in turn, each in a random game of a variant that can carry it."""
    if config.faults <= 0:
        return
    rng = random.Random(derive_seed(config.seed, "faults"))
    kinds = sorted({f for s in sittings for f in FAULTS_FOR[s.variant]
                    if config.chain or f not in NEEDS_CHAIN})
    free = {(s.index, k) for s in sittings for k in range(s.n_games)}
    for n in range(config.faults):
        kind = kinds[n % len(kinds)]
        slots = sorted(slot for slot in free if kind in FAULTS_FOR[sittings[slot[0]].variant])
        if not slots:
            slots = sorted(free)
            if not slots:
                return
            kind = next(f for f in kinds if f in FAULTS_FOR[sittings[slots[0][0]].variant])
        slot = rng.choice(slots)
        free.discard(slot)
        sittings[slot[0]].faults[slot[1]] = kind


# -- playing sittings (in workers) ----------------------------------------------------------

_WORKER: dict[str, Any] = {}


def _init_worker(config: WorldConfig, players: dict[str, Player]) -> None:
    _WORKER["config"] = config
    _WORKER["players"] = players
    _WORKER["brains"] = {name: factory() for name, factory in brains().items()}


def _work(sitting: Sitting) -> SittingResult:
    return play_sitting(sitting, _WORKER["config"], _WORKER["players"], _WORKER["brains"])


def play_sitting(s: Sitting, config: WorldConfig, players: dict[str, Player],
                 brain_map: dict[str, Brain]) -> SittingResult:
    """Play one table's games in order (CL-NEXT: the winner deals... from his left)."""
    rng = random.Random(derive_seed(config.seed, "sitting", s.index))
    tilt = dict.fromkeys(s.seats, 0.0)
    dealer = s.first_dealer
    start = s.start_ms
    out: list[bytes] = []
    result = SittingResult(s.index, b"", 0, 0)
    connections = {pid: _connection(players[pid], s.session_start[pid], config.seed)
                   for pid in s.seats}
    pending_fault: str | None = None
    for k in range(s.n_games):
        game_id = f"{s.table_id}-{k:02d}"
        fault = s.faults.get(k) or pending_fault
        pending_fault = None
        agents = {pid: _agent(players[pid], s, rng, brain_map[s.variant], tilt[pid])
                  for pid in s.seats}
        set_partners(agents, players)
        for agent in agents.values():
            dump = agent.acts.get("chip_dumping")
            if dump is not None and dump.role == "dumper" and dump.partners:
                agent.dumping = agent.rng.random() < dump.intensity
        early = None
        if fault == "early_autoplay":
            early = (rng.choice(s.seats), rng.randint(1, 2))
        platform = Platform(game_id, s.variant, list(s.seats), dealer=dealer, stake=s.stake,
                            rules=dict(s.rules), seed=derive_seed(config.seed, game_id),
                            start_ms=start, table_id=s.table_id, connections=connections,
                            fault_early_autoplay=early)
        if fault == "skipped_holder":
            platform.fault_skipped_holder = True
        events = platform.run(agents)
        if platform.abandoned is not None:
            result.abandoned[platform.abandoned] = result.abandoned.get(platform.abandoned, 0) + 1
        planted = [(game_id, seq, pid, mech, agents[pid].acts[mech].group_id)
                   for seq, pid, mech in platform.planted if mech in agents[pid].acts]
        planted += _presence_rows(game_id, events, agents)
        fault_rows = [(game_id, seq, f, rule, kind) for seq, f, rule, kind in platform.faults]
        if fault in ("early_autoplay", "skipped_holder") and not fault_rows:
            if k + 1 < s.n_games and k + 1 not in s.faults:
                pending_fault = fault  # the game ended first: plant it in the next game
            else:
                # no next game free to carry it (the sitting's last game, or the next one
                # has a fault of its own): this game carries one every game can, so the
                # world holds the --faults asked for
                fault = "wrong_payout"
        if fault == "wrong_payout":
            seq = wrong_payout(events)
            fault_rows.append((game_id, seq, fault, *EXPECTED[fault]))
        if config.chain:
            if fault == "tampered_event":
                events, seq = chain_and_tamper(events, derive_seed(config.seed, game_id, "tamper"))
                fault_rows.append((game_id, seq, fault, *EXPECTED[fault]))
            else:
                events = chain(events)
        if fault_rows:
            _check_fault(events, fault_rows)
        out.extend(orjson.dumps(e) for e in events)
        result.planted.extend(sorted(planted))
        result.faults.extend(fault_rows)
        result.games += 1
        result.events += len(events)
        last = events[-1]
        winners = list(last["payload"].get("winners", [])) if last["type"] == "GameEnded" else []
        result.results.append((game_id, s.variant, list(s.seats), winners))
        # CL-NEXT: the winner is the next game's first player (dealer = his right)
        if len(winners) == 1 and winners[0] in s.seats:
            dealer = (s.seats.index(winners[0]) - 1) % len(s.seats)
        else:
            dealer = (dealer + 1) % len(s.seats)
        for pid in s.seats:
            if pid in winners:
                tilt[pid] = max(0.0, tilt[pid] - 0.4)
            elif players[pid].tilt_prone and not players[pid].is_bot:
                tilt[pid] = min(1.0, tilt[pid] + 0.3)
        start = ts_millis(last["ts"]) + rng.randint(8_000, 45_000)
    result.lines = b"\n".join(out) + b"\n" if out else b""
    return result


def _connection(p: Player, session_start: int, seed: int) -> tuple[str, str, str]:
    """The session's identifiers: one of the player's devices and household IPs."""
    r = random.Random(derive_seed(seed, p.player_id, session_start))
    return (r.choice(p.ips), r.choice(p.devices), p.client)


def _agent(p: Player, s: Sitting, rng: random.Random, brain: Brain, tilt: float) -> Agent:
    acts: dict[str, Act] = {}
    for mech, gid, intensity, role in p.mechanisms:
        acts[mech] = Act(mech, gid, intensity, role, ())
    agent = Agent(p.player_id, p.skill, p.style, p.timing, random.Random(rng.getrandbits(63)),
                  brain, is_bot=p.is_bot, tilt=tilt, session_start_ms=s.session_start[p.player_id],
                  acts=acts)
    return agent


def set_partners(agents: dict[str, Agent], players: dict[str, Player]) -> None:
    """Fill each act's partners: the other members of the same group seated here."""
    members: dict[tuple[str, str], list[str]] = {}
    for pid in agents:
        for mech, gid, _i, _r in players[pid].mechanisms:
            members.setdefault((mech, gid), []).append(pid)
    for pid, agent in agents.items():
        for mech, act in list(agent.acts.items()):
            here = tuple(q for q in members.get((mech, act.group_id), []) if q != pid)
            agent.acts[mech] = Act(act.mechanism, act.group_id, act.intensity, act.role, here)


def _presence_rows(game_id: str, events: list[dict[str, Any]],
                   agents: dict[str, Agent]) -> list[tuple[str, int, str, str, str]]:
    """Planted rows for mechanisms that act by being there: a bot's first move of the
    game, and each multi-account's PlayerConnected when two accounts of one person sit
    at the game."""
    rows: list[tuple[str, int, str, str, str]] = []
    first_move: dict[str, int] = {}
    connected: dict[str, int] = {}
    for e in events:
        actor = e["actor"]
        if e["type"] == "PlayerConnected" and actor not in connected:
            connected[actor] = e["seq"]
        elif actor in agents and actor not in first_move and e["type"] not in (
                "PlayerConnected", "PlayerDisconnected"):
            first_move[actor] = e["seq"]
    for pid, agent in agents.items():
        bot = agent.acts.get("bot")
        if bot is not None and pid in first_move:
            rows.append((game_id, first_move[pid], pid, "bot", bot.group_id))
        multi = agent.acts.get("multi_account")
        if multi is not None and multi.partners and pid in connected:
            rows.append((game_id, connected[pid], pid, "multi_account", multi.group_id))
    return rows


def _check_fault(events: list[dict[str, Any]], rows: list[tuple[str, int, str, str, str]]) -> None:
    """A planted fault must give exactly its expected finding(s), nothing else."""
    record = replay(events)
    got = sorted((f.seq, f.rule, f.kind) for f in record.findings)
    want = sorted((seq, rule, kind) for _g, seq, _f, rule, kind in rows)
    if got != want:
        raise FaultError(f"{rows[0][0]}: planted faults {want} but the replay found {got}: "
                         f"{[f.message for f in record.findings]}")


# -- the whole run ------------------------------------------------------------------------------


def run_world(world: World, sink: Callable[[bytes], None],
              progress: Callable[[int, int], None] | None = None,
              stats: dict[str, Any] | None = None) -> dict[str, Any]:
    """Play every sitting (in parallel if ``workers`` > 1), feed the JSONL bytes to
    ``sink`` in plan order, and return the labels document. ``stats``, if given, is
    filled per variant with ``games``, ``events`` and ``abandoned`` (``{reason: games}``
    for games that ended by players leaving: the event cap, or a blocked round)."""
    players = world.population.by_id()
    planted: list[tuple[str, int, str, str, str]] = []
    faults: list[tuple[str, int, str, str, str]] = []
    done = 0
    variant_of = {s.index: s.variant for s in world.sittings}
    for res in _results(world, players):
        sink(res.lines)
        planted.extend(res.planted)
        faults.extend(res.faults)
        done += res.games
        if stats is not None:
            row = stats.setdefault(variant_of[res.index], {"games": 0, "events": 0, "abandoned": {}})
            row["games"] += res.games
            row["events"] += res.events
            for reason, n in res.abandoned.items():
                row["abandoned"][reason] = row["abandoned"].get(reason, 0) + n
        if progress is not None:
            progress(done, res.events)
    return labels_document(world, planted, faults)


def _results(world: World, players: dict[str, Player]) -> Iterator[SittingResult]:
    config = world.config
    if config.workers <= 1 or len(world.sittings) < 4:
        _init_worker(config, players)
        for s in world.sittings:
            yield _work(s)
        return
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    with ctx.Pool(config.workers, initializer=_init_worker, initargs=(config, players)) as pool:
        yield from pool.imap(_work, world.sittings, chunksize=4)


def labels_document(world: World, planted: list[tuple[str, int, str, str, str]],
                    faults: list[tuple[str, int, str, str, str]]) -> dict[str, Any]:
    """The labels file (docs/fraud.md, "The simulator's labels file")."""
    pop = world.population
    return {
        "seed": world.config.seed,
        "args": world.config.args(),
        "version": LABELS_VERSION,
        "players": [
            {"player_id": p.player_id, "person_id": p.person_id, "skill": p.skill,
             "style": p.style, "household": p.household, "is_bot": p.is_bot}
            for p in pop.players
        ],
        "mechanisms": sorted(
            ({"player_id": p.player_id, "mechanism": m, "group_id": g, "intensity": i, "role": r}
             for p in pop.players for m, g, i, r in p.mechanisms),
            key=lambda row: (row["player_id"], row["mechanism"], row["group_id"]),
        ),
        "hard_negatives": [{"player_id": pid, "kind": kind, "group_id": gid}
                           for pid, kind, gid in pop.hard_negatives],
        "planted": [{"game_id": g, "seq": seq, "player_id": pid, "mechanism": m, "group_id": gid}
                    for g, seq, pid, m, gid in planted],
        "faults": [{"game_id": g, "seq": seq, "fault": f, "expected_rule": rule,
                    "expected_kind": kind} for g, seq, f, rule, kind in faults],
    }


def dumps_labels(doc: dict[str, Any]) -> bytes:
    return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)


__all__ = ["SittingResult", "World", "WorldConfig", "available_variants", "brains",
           "build_world", "dumps_labels", "labels_document", "play_sitting", "run_world",
           "set_partners"]
