"""The simulated world's people: accounts with skill, style, timing and identities
(devices, household IPs), the fraud groups planted among them, and the honest look-alikes
("hard negatives") a detector must not flag.

Realism choices, and why:

- Skill is spread out (Beta(2.2, 2.2)), fraudsters are drawn from the same distribution
  (a colluder is not a better or worse player), so win rate alone does not single them out.
- Honest people share identifiers too: households share IPs (different devices), friends
  come online together and sit together. Those are labelled ``hard_negatives``.
- One *person* may hold several accounts (multi-accounting): the accounts share that
  person's devices and IPs, and are a colluding group when seated together.
- Each mechanism has an intensity (the share of opportunities acted on, 0.2–0.85) and a
  group size; ``fraud_rate`` is the share of accounts in any mechanism (default 2 %).
- Account numbers are a seeded permutation (since session 24): numbered in creation order,
  a household's accounts were neighbours and a multi-account person's were not, so the
  gap between two numbers told one from the other (audit 54).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

from .timing import TimingProfile, bot_timing, human_timing

STYLES = ("casual", "grinder", "aggressive", "cautious")
STAKES = (10, 50, 100, 500, 1000)

#: (mechanism, group size range, roles by position)
GROUP_SHAPES: dict[str, tuple[tuple[int, int], tuple[str, ...]]] = {
    "card_feeding": ((2, 3), ("receiver", "feeder", "feeder")),
    "soft_play": ((2, 3), ("member", "member", "member")),
    "chip_dumping": ((2, 2), ("receiver", "dumper")),
    "bot": ((1, 1), ("bot",)),
    "hidden_card": ((1, 1), ("cheater",)),
    "multi_account": ((2, 3), ("member", "member", "member")),
    "timeout_abuse": ((2, 2), ("member", "member")),
}
HARD_NEGATIVE_KINDS = ("friends", "strong", "tilt", "household")


def stable_hash(*parts: object, n: int = 16) -> str:
    """A short hex digest: the platform's hashed identifiers and derived seeds."""
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:n]


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from the main seed and a path (shard, table...): independent of
    scheduling, so parallel runs give the same output."""
    return int(stable_hash(*parts, n=16), 16) >> 1


@dataclass
class Player:
    """One account."""

    player_id: str
    person_id: str
    skill: float
    style: str
    household: str
    is_bot: bool
    timing: TimingProfile
    ips: tuple[str, ...]
    devices: tuple[str, ...]
    client: str
    stakes: tuple[int, ...]
    variants: tuple[str, ...]
    activity: float  # relative number of sessions
    session_minutes: float  # mean session length
    tilt_prone: bool = False
    mechanisms: list[tuple[str, str, float, str]] = field(default_factory=list)
    #: (mechanism, group_id, intensity, role)


@dataclass
class Group:
    """A fraud group, or a friends group (hard negative), that comes online together."""

    group_id: str
    kind: str  # a mechanism, or "friends"
    members: list[str]
    roles: list[str]
    intensity: float
    together: float  # share of a member's sessions the others join


@dataclass
class Population:
    players: list[Player]
    groups: list[Group]
    hard_negatives: list[tuple[str, str, str]]  # (player_id, kind, group_id)

    def by_id(self) -> dict[str, Player]:
        return {p.player_id: p for p in self.players}


def players_for(games: int) -> int:
    """How many accounts a world of ``games`` games has: ~50 games per account, so
    per-player features have evidence, with a floor for tiny worlds."""
    return max(24, round(games * 3.4 / 50))


def build_population(seed: int, n_players: int, variants: tuple[str, ...],
                     fraud_rate: float = 0.02) -> Population:
    """Deterministic from ``seed``: accounts, households, fraud groups, friends."""
    rng = random.Random(derive_seed(seed, "population"))
    players: list[Player] = []
    households: list[tuple[str, tuple[str, ...]]] = []
    i = 0
    while len(players) < n_players:
        hh_id = f"h{len(households):05d}"
        size = rng.choices((1, 2, 3), (0.72, 0.2, 0.08))[0]
        ips = tuple(stable_hash(seed, "ip", hh_id, k) for k in range(rng.choice((1, 1, 2))))
        households.append((hh_id, ips))
        for _ in range(size):
            if len(players) >= n_players:
                break
            players.append(_new_player(rng, seed, f"p{i:06d}", f"u{i:06d}", hh_id, ips, variants))
            i += 1
    _family_devices(seed, players)
    groups: list[Group] = []
    hard: list[tuple[str, str, str]] = []
    taken: set[str] = set()

    # -- fraud groups ----------------------------------------------------------------------
    target = round(fraud_rate * n_players)
    order = list(GROUP_SHAPES)
    rng.shuffle(order)
    planted = 0
    k = 0
    honest_pool = [p for p in players]
    while planted < target and k < 10_000:
        mech = order[k % len(order)]
        k += 1
        (lo, hi), roles = GROUP_SHAPES[mech]
        size = rng.randint(lo, hi)
        free = [p for p in honest_pool if p.player_id not in taken]
        if len(free) < size:
            break  # every mechanism, multi-accounting too: no more free accounts
        if mech == "multi_account":
            members = _multi_accounts(rng, seed, players, size, len(groups), variants, taken)
        else:
            members = rng.sample(free, size)
        gid = f"{mech[:2]}{len(groups):04d}"
        intensity = round(rng.uniform(0.2, 0.85), 3)
        _align(rng, members)
        for pos, p in enumerate(members):
            role = roles[pos] if pos < len(roles) else roles[-1]
            p.mechanisms.append((mech, gid, intensity, role))
            taken.add(p.player_id)
            if mech == "bot":
                p.is_bot = True
                p.skill = round(rng.uniform(0.6, 0.85), 3)
                p.timing = bot_timing(rng)
                p.activity *= 3.0
                p.session_minutes = rng.uniform(300, 600)
                p.tilt_prone = False
            if mech == "chip_dumping" and int(stable_hash(seed, "dump-up", gid), 16) % 2:
                # half the dumping pairs move up a level from their own stakes to move
                # more chips (as strong honest players often do). Not all of them, and not
                # to the top two stakes, which only ~18 % of honest accounts play: stake
                # alone told dumpers apart (ROC AUC 0.88; 0.74 with every pair up a level).
                # Decided by hash, not by the RNG: the rest of the population stays put.
                p.stakes = tuple(STAKES[min(STAKES.index(s) + 1, len(STAKES) - 1)]
                                 for s in p.stakes)
        # multi-account persons collude at the table as feeders (one person, many seats)
        if mech == "multi_account":
            for p in members:
                p.mechanisms.append(("card_feeding", gid, intensity, "feeder"))
        groups.append(Group(gid, mech, [p.player_id for p in members],
                            [roles[min(j, len(roles) - 1)] for j in range(len(members))],
                            intensity, together=_together(seed, gid, len(members))))
        planted += len(members)
    players = sorted(players, key=lambda p: p.player_id)

    # -- hard negatives ----------------------------------------------------------------------
    honest = [p for p in players if p.player_id not in taken]
    n_friends = max(1, round(len(honest) * 0.03))
    in_hard = {h[0] for h in hard}  # a set: scanning `hard` per candidate was cubic in players
    for f in range(n_friends):
        free = [p for p in honest if p.player_id not in in_hard]
        if len(free) < 2:
            break
        # at most the honest players left (a small --players world can have 2 left when
        # 3 are drawn); the same draws as before whenever 3 are left
        members = rng.sample(free, min(len(free), rng.choice((2, 2, 3))))
        gid = f"fr{f:04d}"
        _align(rng, members)
        groups.append(Group(gid, "friends", [p.player_id for p in members],
                            ["friend"] * len(members), 0.0,
                            together=_together(seed, gid, len(members))))
        for p in members:
            hard.append((p.player_id, "friends", gid))
            in_hard.add(p.player_id)
    for p in honest:
        if p.skill >= 0.85:
            hard.append((p.player_id, "strong", ""))
        if p.tilt_prone:
            hard.append((p.player_id, "tilt", ""))
    by_household: dict[str, list[Player]] = {}
    for p in players:
        by_household.setdefault(p.household, []).append(p)
    for hh, members in by_household.items():
        persons = {p.person_id for p in members}
        if len(persons) >= 2:
            for p in members:
                if p.player_id not in taken:
                    hard.append((p.player_id, "household", hh))
    return _renumbered(seed, Population(players, groups, hard))


def _renumbered(seed: int, population: Population) -> Population:
    """The same population under account numbers drawn at random (a seeded permutation).

    Accounts are created household by household, so creation order put the accounts of
    a household (which share an IP, sometimes a device) on adjacent numbers, while a
    multi-account person's accounts, drawn from the whole population, kept scattered
    ones: the number gap alone told one person's accounts from a family's (ROC AUC 0.99,
    audit 54), an artefact no platform's account ids carry. Drawn from its own seed, so
    nothing else of the population moves."""
    rng = random.Random(derive_seed(seed, "account-ids"))
    numbers = list(range(len(population.players)))
    rng.shuffle(numbers)
    new = {p.player_id: f"p{n:06d}" for p, n in zip(population.players, numbers, strict=True)}
    for p in population.players:
        p.player_id = new[p.player_id]
    for g in population.groups:
        g.members = [new[m] for m in g.members]
    hard = sorted((new[pid], kind, gid) for pid, kind, gid in population.hard_negatives)
    return Population(sorted(population.players, key=lambda p: p.player_id), population.groups,
                      hard)


#: the range of a group's ``together`` (colluders and friends alike)
TOGETHER = (0.4, 0.95)


def _together(seed: int, group_id: str, size: int) -> float:
    """The share of a member's sessions his partners join (and then sit with him: see
    lobby.plan_sittings), one per group, drawn from the same range for fraud groups and
    friends. Not a fixed 0.85: partners who came along on every session would share
    every table, and co-seating would be a certainty instead of a signal. Drawn by hash,
    not by the population's RNG, so the rest of the population stays put."""
    if size < 2:
        return 0.0
    lo, hi = TOGETHER
    return round(lo + (hi - lo) * int(stable_hash(seed, "together", group_id), 16) / 16**16, 3)


def _family_devices(seed: int, players: list[Player]) -> None:
    """Half the households of two or more people share a family device (a tablet), used
    by the members on its client (one device runs one client).

    Without it only a multi-account's accounts ever shared a device: every pair of
    accounts seen on one device hash was one person's (23 of 23 pairs in four 2,000-game
    worlds), a field no honest pair showed. Decided by hash, not by the population's RNG,
    so the rest of the population stays put."""
    by_household: dict[str, list[Player]] = {}
    for p in players:
        by_household.setdefault(p.household, []).append(p)
    for hh, members in by_household.items():
        if len(members) < 2 or int(stable_hash(seed, "family-device", hh), 16) % 2:
            continue
        sharing = [p for p in members if p.client == members[0].client]
        if len(sharing) < 2:
            continue
        family = stable_hash(seed, "dev", hh, "family")
        for p in sharing:
            p.devices = (*p.devices, family)


def _new_player(rng: random.Random, seed: int, pid: str, person: str, household: str,
                ips: tuple[str, ...], variants: tuple[str, ...]) -> Player:
    skill = round(rng.betavariate(2.2, 2.2), 3)
    style = rng.choice(STYLES)
    level = rng.choices(range(len(STAKES)), (0.3, 0.3, 0.22, 0.12, 0.06))[0]
    if skill > 0.75 and rng.random() < 0.4:
        level = min(level + 1, len(STAKES) - 1)
    stakes = tuple(STAKES[j] for j in (level, min(level + 1, len(STAKES) - 1)))
    weights = [rng.random() ** 2 for _ in variants]
    favourite = variants[max(range(len(variants)), key=weights.__getitem__)]
    liked = tuple(sorted({favourite} | {v for v, w in zip(variants, weights, strict=True) if w > 0.5}))
    return Player(
        player_id=pid, person_id=person, skill=skill, style=style, household=household,
        is_bot=False, timing=human_timing(rng, skill), ips=ips,
        devices=tuple(stable_hash(seed, "dev", person, k) for k in range(rng.choice((1, 1, 2)))),
        client=rng.choices(("web", "android", "ios"), (0.45, 0.35, 0.2))[0],
        stakes=stakes, variants=liked, activity=rng.lognormvariate(0.0, 0.6),
        session_minutes=rng.lognormvariate(4.0, 0.45), tilt_prone=rng.random() < 0.12,
    )


def _multi_accounts(rng: random.Random, seed: int, players: list[Player], size: int,
                    index: int, variants: tuple[str, ...], taken: set[str]) -> list[Player]:
    """Turn ``size`` fresh accounts into one person's: same devices, same IPs."""
    free = [p for p in players if p.player_id not in taken]
    members = rng.sample(free, size)
    owner = members[0]
    for p in members[1:]:
        p.person_id = owner.person_id
        p.household = owner.household
        p.ips = owner.ips
        p.devices = owner.devices
        # one device runs one client: a device hash seen with two clients would mark a
        # shared device beyond the sharing itself
        p.client = owner.client
        p.skill = round(min(1.0, max(0.0, owner.skill + rng.uniform(-0.05, 0.05))), 3)
    del seed, index, variants
    return members


def _align(rng: random.Random, members: list[Player]) -> None:
    """Group members come online together: they play the same games at the same stakes
    (the lead's tastes; one person's accounts, friends and colluders alike).

    Equal tastes, not merely one shared variant: the group's sessions are played at a
    (variant, stake) all of them like (lobby._group_pick), so with one shared variant and
    stake a member would play fewer variants and stakes than a lone player, and with the
    lead's pick forced on him (the old way) more — either way a tell with nothing to do
    with play (ROC AUC 0.82 for the number of variants, 0.73 for stakes, before)."""
    if len(members) < 2:
        return
    lead = members[0]
    rng.choice(lead.variants)  # the draw the former alignment made: a seed keeps its people
    for p in members[1:]:
        p.variants = lead.variants
        p.stakes = lead.stakes


__all__ = ["GROUP_SHAPES", "HARD_NEGATIVE_KINDS", "STAKES", "Group", "Player", "Population",
           "build_population", "derive_seed", "players_for", "stable_hash"]
