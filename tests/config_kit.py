"""Config-aware checks for non-default ``GameCreated.rules`` (audit 11), written from RULES.md.

Why this exists: the simulator and the earlier audits mostly ran the default rules, so the
paths a house rule switches on were thinly exercised. This module gives the tests three
things the judges (tests/referee_*.py, tests/oracle_*.py) do not:

- :data:`SPEC_KEYS` / :func:`expected_log_rules`: which config keys RULES.md defines per
  variant and which values it allows, read from the text around each ``config`` mention
  (not from the engine's ``config_defaults``), so LOG-RULES findings can be predicted;
- :func:`sim_game` / :func:`flip`: simulated games under a rules dict, and the same moves
  re-read under other rules (the platform and the rulebook disagree), re-chained;
- :func:`engine_view`, :func:`judge_view`, :func:`differences`: the engine's findings and
  results next to the judges' plus this module's LOG-RULES expectations.

Readings of the spec taken here (each argued in the audit-11 report):

- A key RULES.md does not name for the variant, a value of the wrong JSON type (a boolean
  is not an integer), or a value outside what the text allows is LOG-RULES at
  GameCreated; ``null`` is "not set" (EVENTS.md via events/models.py): no finding.
- Classic: ``decks`` >= 1 (a number of 52-card decks), ``jokers`` >= 0, ``rake_bps`` in
  0..10000 (basis points of a rake "paid from the pot": it cannot exceed the pot).
- R500: ``mode`` one of target / rounds / tournament; ``target`` >= 1; ``chip_ratio``
  >= 0; ``rounds`` >= 1. Whether ``rounds`` past 3 is allowed ("1-3 for quick games") is
  open: :data:`OPEN` lists it and no test asserts either way.
- Liverpool: ``max_buys`` >= 0 ("unlimited" is the default, written by leaving the key
  out or null); the engine's -1 sentinel is listed in :data:`OPEN`.
- Michigan: ``pay_cards`` distinct natural cards (possibly none), ``pay_ante`` and
  ``widow_price`` >= 0, ``deals`` >= 1 (0 is listed in :data:`OPEN`: the engine and the
  judges read it as the default "one per player").
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from corners_kit import CornerPlatform, CornerPolicy, Profile
from oracle_classic_r500 import oracle as oracle_cr
from oracle_liverpool_michigan import oracle as oracle_lm
from referee_classic_r500 import referee as referee_cr
from referee_liverpool_michigan import referee as referee_lm

from rummyguard.events.cards import is_card_code
from rummyguard.events.hashing import chain
from rummyguard.replay.engine import replay

Event = dict[str, Any]
Events = list[Event]
Finding = tuple[int, str, str]
Check = Callable[[Any], bool]

#: cross-game rules are not one game's business
NOT_COMPARED = ("CL-NEXT",)


def _int(least: int, most: int | None = None) -> Check:
    def ok(v: Any) -> bool:
        return type(v) is int and v >= least and (most is None or v <= most)
    return ok


def _bool(v: Any) -> bool:
    return type(v) is bool


def _mode(v: Any) -> bool:
    return v in ("target", "rounds", "tournament")


def _pay_cards(v: Any) -> bool:
    return (type(v) is list and all(is_card_code(c) and c != "JK" for c in v)
            and len(set(v)) == len(v))


#: RULES.md: variant -> config key -> the values the text allows
SPEC_KEYS: dict[str, dict[str, Check]] = {
    # §1: "Deck: 2 x 52 + 4 jokers (config decks, jokers)"; CL-LONGRUN; CL-RUMMY rake
    "classic": {"decks": _int(1), "jokers": _int(0), "long_run_allows_joker": _bool,
                "rake_bps": _int(0, 10_000)},
    # §2 R5-GAME, R5-CHIPS
    "r500": {"mode": _mode, "target": _int(1), "rounds": _int(1), "chip_ratio": _int(0)},
    # §3 LV-CONTRACT, LV-BUY
    "liverpool": {"set_distinct_suits": _bool, "max_buys": _int(0)},
    # §4 pay cards, MI-ANTE, MI-WIDOW, MI-END, MI-POKER
    "michigan": {"pay_cards": _pay_cards, "pay_ante": _int(0), "widow_price": _int(0),
                 "deals": _int(1), "three_in_one": _bool},
}

#: (variant, key, value) whose LOG-RULES verdict the text leaves open
OPEN: dict[tuple[str, str, Any], str] = {
    ("r500", "rounds", 4): "RULES.md R5-GAME: 'rounds, 1-3 for quick games' may bound the key or "
                           "describe quick games; the engine accepts any rounds >= 1",
    ("liverpool", "max_buys", -1): "RULES.md has no number for 'unlimited'; the engine reads -1 as "
                                   "unlimited, a spec reader would flag a negative count",
    ("michigan", "deals", 0): "'default one per player' has no number; the engine and the judges "
                              "read an explicit 0 as that default instead of flagging it",
}


def expected_log_rules(variant: str, rules: dict[str, Any]) -> list[str]:
    """The keys of ``rules`` a LOG-RULES finding is due for (RULES.md), in dict order."""
    keys = SPEC_KEYS[variant]
    return [k for k, v in rules.items() if v is not None and (k not in keys or not keys[k](v))]


def sim_game(variant: str, n: int, rules: dict[str, Any], seed: int, *, stake: int = 100) -> Events:
    """One simulated game of ``variant`` under ``rules``: the corner simulator's brains and
    profile (games that end, with leaves, buys, widows and timeouts now and then), fixed by
    ``seed`` and the rules."""
    rng = random.Random(f"{variant}:{n}:{seed}:{sorted(rules.items())}")
    seats = [f"p{i + 1}" for i in range(n)]
    profile = Profile.draw(variant, rng)
    platform = CornerPlatform(f"{variant[:2]}-cfg-{seed}", variant, seats, dealer=rng.randrange(n),
                              stake=stake, rules=dict(rules), seed=seed, max_events=1500,
                              profile=profile)
    return platform.run(CornerPolicy(variant, seats, profile, seed))


def flip(events: Events, rules: dict[str, Any]) -> Events:
    """The same log with ``GameCreated.rules`` replaced, re-chained (hashes valid)."""
    out = copy.deepcopy(events)
    out[0]["payload"]["rules"] = dict(rules)
    return chain(out)


@dataclass(frozen=True)
class View:
    """What one side says about a game: findings ``(seq, rule, kind)``, halt, results."""

    findings: list[Finding]
    halted: bool
    winners: list[str]
    net: dict[str, int]
    scores: dict[str, int]
    transfers: Counter[tuple[str, str, int]]


def engine_view(events: Events) -> View:
    rec = replay(events)
    found = sorted({(f.seq, f.rule, f.kind) for f in rec.findings
                    if not f.rule.startswith(NOT_COMPARED)})
    return View(found, rec.halted, sorted(rec.results.winners), dict(rec.results.net),
                dict(rec.results.scores), Counter((t.src, t.dst, t.amount) for t in rec.transfers))


def _judge_rules(events: Events) -> Events:
    """The log as the judges should read it: rules the spec rejects are dropped (LOG-RULES
    says so, and the default applies), so the judges never see a value they cannot read."""
    created = events[0]["payload"]
    bad = set(expected_log_rules(created["variant"], created.get("rules") or {}))
    if not bad:
        return events
    out = copy.deepcopy(events)
    out[0]["payload"]["rules"] = {k: v for k, v in created["rules"].items() if k not in bad}
    return out


def judge_view(events: Events) -> View:
    """The judges' findings plus this module's LOG-RULES, and the oracle's results."""
    created = events[0]["payload"]
    variant = created["variant"]
    readable = _judge_rules(events)
    classic_r500 = variant in ("classic", "r500")
    verdict = (referee_cr if classic_r500 else referee_lm)(readable)
    found = {f for f in verdict.findings if not f[1].startswith(NOT_COMPARED)}
    if expected_log_rules(variant, created.get("rules") or {}):
        found.add((0, "LOG-RULES", "integrity"))
    if classic_r500:
        o = oracle_cr(readable)
        res = (sorted(o.winners), dict(o.net), dict(o.scores), Counter(o.transfers))
    else:
        r = oracle_lm(readable)
        res = (sorted(r.winners), dict(r.net), dict(r.scores), Counter(r.transfers))
    return View(sorted(found), verdict.halted, *res)


def differences(events: Events) -> list[str]:
    """Where the engine and the judges disagree on a game (empty: they agree). Results are
    compared only for games that did not halt (a halted game has no full results)."""
    e, j = engine_view(events), judge_view(events)
    out: list[str] = []
    if e.findings != j.findings or e.halted != j.halted:
        only_e = [f for f in e.findings if f not in j.findings]
        only_j = [f for f in j.findings if f not in e.findings]
        out.append(f"findings: engine only {only_e[:5]}, judges only {only_j[:5]}, "
                   f"halted {e.halted}/{j.halted}")
    if not e.halted and not j.halted:
        for name in ("winners", "net", "scores"):
            if getattr(e, name) != getattr(j, name):
                out.append(f"{name}: engine {getattr(e, name)}, oracle {getattr(j, name)}")
        if e.transfers != j.transfers:
            out.append(f"transfers: engine only {dict(e.transfers - j.transfers)}, "
                       f"oracle only {dict(j.transfers - e.transfers)}")
    return out
