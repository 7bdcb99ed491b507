"""Differential audit of move legality: the independent referee (tests/referee_classic_r500.py,
written from spec/RULES.md §0, §1, §2, §5 without the engine's code) against
``rummyguard.replay.engine.replay`` for classic 14-card rummy and Rummy 500.

Compared: the tests/data logs of both variants (every finding and halting), a small seeded
simulated world (clean games: no finding either side), its mutants (one move altered: the
FIRST finding and halting, which the spec makes determinate; later findings may cascade),
and random melds (the rule a meld breaks, if any). Known engine discrepancies are pinned
in tests/test_audit7_classic_r500.py.
"""

from __future__ import annotations

import io
import json
import random
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from logkit import Log, findings, stacked_deck
from referee_classic_r500 import MUTATORS, mutants, read, referee

from rummyguard.replay.engine import replay
from rummyguard.sim.world import WorldConfig, build_world, run_world

DATA = Path(__file__).parent / "data"
#: cross-game (CL-NEXT) and log-shape (LOG-*) rules are not move legality: not compared
NOT_COMPARED = ("LOG-", "CL-NEXT")

Event = dict[str, Any]
Finding = tuple[int, str, str]


def _games(lines: list[bytes] | list[str]) -> list[list[Event]]:
    by_game: dict[str, list[Event]] = defaultdict(list)
    for line in lines:
        if line.strip():
            e = json.loads(line)
            by_game[e["game_id"]].append(e)
    return [sorted(g, key=lambda e: e["seq"]) for g in by_game.values()]


def _engine(events: list[Event]) -> tuple[list[Finding], bool]:
    record = replay(events, verify_hashes=False)
    return [f for f in findings(record) if not f[1].startswith(NOT_COMPARED)], record.halted


def _referee(events: list[Event]) -> tuple[list[Finding], bool]:
    verdict = referee(events)
    return [f for f in verdict.findings if not f[1].startswith(NOT_COMPARED)], verdict.halted


def _first(found: list[Finding]) -> set[Finding]:
    """Every finding at the first seq that has one (a move may break several rules)."""
    return {f for f in found if f[0] == found[0][0]} if found else set()


@pytest.fixture(scope="module")
def world() -> dict[str, list[list[Event]]]:
    """A small seeded world per variant, no planted fraud, unchained."""
    out = {}
    for variant in ("classic", "r500"):
        buf = io.BytesIO()
        config = WorldConfig(games=24, seed=5, variants=(variant,), fraud_rate=0.0, chain=False)
        run_world(build_world(config), buf.write)
        out[variant] = _games(buf.getvalue().splitlines())
    return out


# -- the tests/data logs ----------------------------------------------------------------------


DATA_FILES = sorted([*(DATA / "classic").glob("*.jsonl"), *(DATA / "r500").glob("*.jsonl"),
                     *(DATA / "sample").glob("*.jsonl"), *(DATA / "spec").glob("*.jsonl")])


@pytest.mark.parametrize("path", DATA_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_data_logs_agree_on_every_finding_and_halting(path: Path) -> None:
    for events in _games(path.read_text().splitlines()):
        engine, engine_halted = _engine(events)
        ref, ref_halted = _referee(events)
        assert sorted(set(ref)) == sorted(set(engine)), events[0]["game_id"]
        assert ref_halted == engine_halted, events[0]["game_id"]


def test_data_logs_named_by_a_move_rule_break_it_at_the_manifest_seq() -> None:
    """The referee finds, on its own, the finding each breaking sample is named for."""
    checked = 0
    for variant in ("classic", "r500"):
        manifest = json.loads((DATA / variant / "manifest.json").read_text())
        for name, expected in manifest.items():
            if name.startswith(("LOG-", "CL-NEXT", "clean")):
                continue
            events = _games((DATA / variant / name).read_text().splitlines())[0]
            got = set(referee(events).findings)
            for _, seq, rule, kind in expected:
                assert (seq, rule, kind) in got, (name, seq, rule, kind, got)
                checked += 1
    assert checked >= 40


# -- clean simulated games ---------------------------------------------------------------------


def test_clean_world_is_clean_for_both(world: dict[str, list[list[Event]]]) -> None:
    for variant, games in world.items():
        assert len(games) >= 20, variant
        for events in games:
            assert _engine(events) == ([], False), events[0]["game_id"]
            assert _referee(events) == ([], False), events[0]["game_id"]


# -- mutants ----------------------------------------------------------------------------------


def test_mutants_agree_on_the_first_finding_and_halting(world: dict[str, list[list[Event]]]) -> None:
    kinds: Counter[str] = Counter()
    flagged: Counter[str] = Counter()
    disagree = []
    for games in world.values():
        for events in games:
            for name, i, mutant in mutants(events, per_kind=1):
                engine, engine_halted = _engine(mutant)
                ref, ref_halted = _referee(mutant)
                kinds[name] += 1
                flagged[name] += bool(ref)
                if _first(engine) != _first(ref) or engine_halted != ref_halted:
                    disagree.append((name, mutant[0]["game_id"], i, _first(engine), _first(ref)))
    assert not disagree, disagree[:5]
    # every kind of alteration was made somewhere, and each is caught by the referee
    assert set(kinds) == set(MUTATORS), set(MUTATORS) - set(kinds)
    assert sum(kinds.values()) >= 300
    for name, n in kinds.items():
        assert flagged[name] >= n // 2, (name, flagged[name], n)


def test_a_mutant_of_each_move_kind_gives_its_rule() -> None:
    """Hand-picked: one clean classic opening, altered one way each; the referee names the
    rule the spec names (and the engine agrees)."""
    p1 = ["3H", "4H", "5H", "6H", "7H", "9C", "9D", "9S", "TD", "JD", "QD", "KC", "KD", "KH", "2C"]
    p2 = ["AS", "2S", "5C", "6D", "8S", "8C", "JC", "QS", "4D", "7C", "TC", "3S", "5D", "6S"]
    deck = stacked_deck([p1, p2], "8D", ["AH", "2D", "JK", "QC", "QH"])

    def opening() -> Log:
        log = Log()
        log.created("classic", ["p1", "p2"], dealer=1)
        log.round(deck, dealer=1)
        return log

    cases: list[tuple[Log, Finding]] = []
    log = opening()
    cases.append((log, (log.draw("p1", "stock", "AH"), "CL-FIRST", "violation")))
    log = opening()
    log.discard("p1", "2C")
    cases.append((log, (log.discard("p2", "AS"), "CL-DRAW", "violation")))
    log = opening()
    log.discard("p1", "2C")
    log.draw("p2", "discard", "2C")
    cases.append((log, (log.discard("p2", "2C"), "CL-NODISCARD-TAKEN", "violation")))
    log = opening()
    log.discard("p1", "2C")
    cases.append((log, (log.draw("p1", "stock", "AH"), "C-TURN", "violation")))
    log = opening()
    cases.append((log, (log.discard("p1", "2C", dt=120.5), "CL-TIMER", "violation")))
    log = opening()
    log.discard("p1", "2C")
    cases.append((log, (log.draw("p2", "discard", "8D"), "C-HOLD", "integrity")))
    for log, want in cases:
        assert _first(_referee(log.events)[0]) == {want}
        assert _first(_engine(log.events)[0]) == {want}


# -- melds ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind,cards,as_,rule", [
    ("run", ["3H", "4H", "5H"], None, None),
    ("run", ["QH", "KH", "AH"], None, None),
    ("run", ["AH", "2H", "3H"], None, None),
    ("run", ["KH", "AH", "2H"], None, "C-RUN"),  # no wrap-around
    ("run", ["TD", "QD", "JD"], None, "C-RUN"),  # not low to high
    ("run", ["5H", "6H", "7D"], None, "C-RUN"),
    ("run", ["3H", "4H"], None, "R5-MELD"),
    ("run", ["3H", "4H", "JK", "6H"], {"2": "5H"}, None),
    ("run", ["3H", "4H", "JK", "6H"], {"2": "8H"}, "C-WILD"),
    ("run", ["JK", "QH", "KH"], None, None),  # the wild reads as the ace above
    ("run", ["JK", "KH", "AH"], None, None),  # the high end is A: the wild is the queen
    ("run", ["JK", "5H", "6H"], {"0": "4H"}, None),
    ("run", ["JK", "JK"], None, "R5-MELD"),
    ("set", ["7C", "7D", "7S"], None, None),
    ("set", ["7C", "7D", "KD"], None, "C-SET"),
    ("set", ["7C", "7D"], None, "R5-MELD"),
    ("set", ["7C", "7D", "7S", "7H", "JK"], None, "R5-MELD"),
    ("set", ["7C", "7D", "JK"], {"2": "8S"}, "C-WILD"),
])
def test_referee_reads_melds_as_the_spec_says(kind: str, cards: list[str], as_: Any,
                                              rule: str | None) -> None:
    assert read(kind, cards, as_, "r500").rule == rule


def test_classic_sets_must_have_different_suits() -> None:
    assert read("set", ["KC", "KD", "KD"], None, "classic").rule == "CL-MELDS"
    assert read("set", ["KC", "KD", "KH"], None, "classic").rule is None


def _random_meld(rng: random.Random) -> tuple[str, list[str], dict[str, str] | None] | None:
    ranks, suits = "A23456789TJQKA", "CDHS"
    if rng.random() < 0.7:
        kind, suit, n = "run", rng.choice(suits), rng.randint(2, 6)
        lo = rng.randint(0, 14 - n)
        cards = [ranks[lo + i] + suit for i in range(n)]
        if rng.random() < 0.2:
            i, j = rng.sample(range(n), 2)
            cards[i], cards[j] = cards[j], cards[i]
        if rng.random() < 0.15:
            k = rng.randrange(n)
            cards[k] = cards[k][0] + rng.choice(suits)
    else:
        kind, rank = "set", rng.choice(ranks[1:])
        cards = [rank + s for s in rng.sample(suits, rng.randint(2, 4))]
        if rng.random() < 0.2:
            cards[0] = rng.choice(ranks[1:]) + cards[0][1]
    for k in rng.sample(range(len(cards)), rng.choice([0, 1, 1, 2])):
        cards[k] = "JK"
    named = {str(i): rng.choice(ranks[1:]) + rng.choice(suits)
             for i, c in enumerate(cards) if c == "JK" and rng.random() < 0.3}
    naturals = [c for c in cards if c != "JK"]
    if len(set(naturals)) != len(naturals):
        return None
    return kind, cards, named or None


def test_random_melds_break_the_same_rule_for_both() -> None:
    """r500 melds (one deck + 2 jokers), each made by p1 right after his first draw."""
    rng = random.Random(7)
    every = [r + s for s in "CDHS" for r in "23456789TJQKA"]
    compared = 0
    while compared < 400:
        meld = _random_meld(rng)
        if meld is None:
            continue
        kind, cards, as_ = meld
        rest = [c for c in every if c not in cards]
        hand = cards + rest[:13 - len(cards)]
        p2, rest = rest[13 - len(cards):26 - len(cards)], rest[26 - len(cards):]
        log = Log()
        log.created("r500", ["p1", "p2"], dealer=1, rules={"mode": "rounds"})
        log.round(stacked_deck([hand, p2], rest[0], rest[1:3], decks=1, jokers=2), dealer=1)
        log.draw("p1", "stock", rest[1])
        payload: dict[str, Any] = {"kind": kind, "cards": cards}
        if as_:
            payload["as"] = as_
        seq = log.add("Melded", "p1", payload)
        engine = {f[1] for f in findings(replay(log.events)) if f[0] == seq}
        ref = {f[1] for f in referee(log.events).findings if f[0] == seq}
        assert engine == ref, (payload, engine, ref)
        compared += 1
