"""Differential test: the independent results oracle (tests/oracle_liverpool_michigan.py,
written from RULES.md §0, §3, §4, §5 without the engine's code) against
``rummyguard.replay.engine.replay`` on Liverpool and Michigan games.

Compared for every game: ``winners``, ``net`` and ``scores``; the C-CLAIM findings (seq by
seq) on the platform's claims; and that the engine finds nothing else on a clean log.
The games: every log of these variants in tests/data/, a small seeded simulated world,
platform-driver games with house rules, odd stakes and players leaving, the same games
with their claims mutated (a wrong score, winner, round number, transfer or net) and cut
short (a game in progress).

The simulator picks its moves through the engine, so a misreading they share would agree
here; the oracle is the second reading. Its own correctness is pinned first, on games
whose every figure earlier audits computed by hand, and on poker hands.

One reading differed between the oracle's letter and the engine (MI-END's winners when a
player with the best net has left: tests/test_audit6_liverpool_michigan.py); the engine
now takes the letter, and :data:`ENGINE_MI_WINNERS_STILL_IN` keeps the old reading
selectable in the oracle.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from oracle_liverpool_michigan import oracle, poker_rank
from test_audit2_variants import MI_NET, michigan_game
from test_audit4_r500_liverpool import NET as LV_NET
from test_audit4_r500_liverpool import ROUND_SCORES, TOTALS, liverpool_game

from rummyguard.replay.engine import replay
from rummyguard.sim.driver import Choice, Turn, play, random_policy
from rummyguard.sim.world import WorldConfig, build_world, run_world

DATA = Path(__file__).parent / "data"
Events = list[dict[str, Any]]
#: The old engine reading of MI-END's winners (players still in the game): False since
#: the engine takes the letter (tests/test_audit6_liverpool_michigan.py).
ENGINE_MI_WINNERS_STILL_IN = False


def disagreements(events: Events) -> list[str]:
    """Every way the engine and the oracle differ on one game ([] when they agree)."""
    rec = replay(events)
    o = oracle(events, mi_winners_still_in=ENGINE_MI_WINNERS_STILL_IN)
    out = [f"oracle lost the cards: {p}" for p in o.problems]
    got = rec.results.to_dict()
    for key in ("winners", "net", "scores"):
        if got[key] != o.results()[key]:
            out.append(f"{key}: engine {got[key]}, oracle {o.results()[key]}")
    engine_claims = sorted({(f.seq, f.rule) for f in rec.findings if f.kind == "discrepancy"})
    oracle_claims = sorted({(seq, rule) for seq, rule, _ in o.claim_findings})
    if engine_claims != oracle_claims:
        out.append(f"claims: engine {engine_claims}, oracle {o.claim_findings}")
    others = [(f.seq, f.rule, f.kind) for f in rec.findings if f.kind != "discrepancy"]
    if others:
        out.append(f"engine findings on a log the oracle calls clean: {others}")
    return out


def games(lines: Iterator[bytes]) -> list[Events]:
    """The games of a JSONL stream, each in seq order."""
    by_game: dict[str, Events] = {}
    for line in lines:
        if line.strip():
            event = orjson.loads(line)
            by_game.setdefault(event["game_id"], []).append(event)
    return [sorted(g, key=lambda e: e["seq"]) for g in by_game.values()]


def unchained(events: Events) -> Events:
    """The events without their hash fields (a producer may leave both out), so claims
    can be edited without a LOG-CHAIN finding."""
    return [{k: v for k, v in e.items() if k not in ("hash", "prev_hash")} for e in events]


@pytest.fixture(scope="module")
def world() -> list[Events]:
    """A small seeded world of both variants (the simulator's own tables and players)."""
    chunks: list[bytes] = []
    config = WorldConfig(games=80, seed=606, variants=("liverpool", "michigan"), workers=1)
    run_world(build_world(config), chunks.append)
    return games(iter(b"".join(chunks).splitlines()))


# == the oracle itself ==========================================================================


def test_oracle_reproduces_a_hand_scored_liverpool_game() -> None:
    """Six rounds, every contract, buys, a Rummy call, tied winners sharing a 303 pot:
    every figure computed by hand in tests/test_audit4_r500_liverpool.py."""
    log, _at = liverpool_game()
    o = oracle(log.events)
    assert [(r.round, r.winners, r.scores) for r in o.rounds] == [
        (n, [w], s) for n, (s, w) in sorted(ROUND_SCORES.items())]
    assert o.results() == {"winners": ["p1", "p2"], "net": LV_NET, "scores": TOTALS}
    assert sorted(t for t in o.transfers if t[0] == "pot") == [("pot", "p1", 152), ("pot", "p2", 151)]
    assert o.claim_findings == [] and o.problems == [] and o.over


def test_oracle_reproduces_a_hand_scored_michigan_game() -> None:
    """Three deals, the widow, a penalty, stops, roll-over, a leaver and the final split
    (tests/test_audit2_variants.py, by hand)."""
    log, _at = michigan_game()
    o = oracle(log.events)
    assert o.results() == {"winners": ["b"], "net": MI_NET, "scores": {}}
    assert [(r.round, r.winners) for r in o.rounds] == [(1, ["b"]), (2, ["b"]), (3, ["b"])]
    assert [t for t in o.transfers if t[0] == "kitty"] == [("kitty", "b", 5), ("kitty", "b", 4), ("kitty", "b", 3)]
    assert o.claim_findings == [] and o.problems == []


@pytest.mark.parametrize(("better", "worse"), [
    ("KC KD KH 9S 9C", "AC 2D 3H 4S 5C"),      # a full house over a straight (the wheel)
    ("2C 3D 4H 5S 6C", "AC 2D 3H 4S 5C"),      # the six-high straight beats the wheel
    ("TC JD QH KS AC", "9C TD JH QS KC"),      # ace-high straight, the top one
    ("2C 4C 6C 8C TC", "9C TD JH QS KC"),      # the lowest flush over a straight
    ("KC KD 5H 5S TC", "KH KS 5C 5D 9H"),      # two pair: the kicker decides
    ("QC QD QH 2S 3C", "JC JD JH AS KC"),      # trips by rank, kickers ignored
    ("2C 2D 2H 2S 3C", "AH AS KC KD KH"),      # four of a kind over a full house
    ("2H 3H 4H 5H 6H", "AC AD AH AS KC"),      # straight flush over quads
    ("AC KD QH JS 9C", "AD KH QS JC 8C"),      # high card by the fifth card
])
def test_poker_ranking(better: str, worse: str) -> None:
    assert poker_rank(better.split()) > poker_rank(worse.split())


def test_poker_ranking_ties_ignore_suits() -> None:
    assert poker_rank(["2C", "3C", "4C", "5C", "7C"]) == poker_rank(["2D", "3D", "4D", "5D", "7D"])


# == oracle v engine ============================================================================


def test_every_stored_log_of_these_variants_agrees_or_breaks_a_move_rule() -> None:
    """Logs whose only findings are claims must agree exactly; the breaking logs (a move
    the rules forbid) are the engine's alone to judge, and are counted apart."""
    compared = judged_by_engine = 0
    for path in sorted([*DATA.glob("liverpool/*.jsonl"), *DATA.glob("michigan/*.jsonl")]):
        for events in games(iter(path.read_bytes().splitlines())):
            if any(f.kind != "discrepancy" for f in replay(events).findings):
                judged_by_engine += 1
                continue
            assert disagreements(events) == [], path.name
            compared += 1
    assert compared >= 10 and judged_by_engine >= 10


def test_simulated_world_agrees(world: list[Events]) -> None:
    assert len(world) == 80
    variants = {g[0]["payload"]["variant"] for g in world}
    assert variants == {"liverpool", "michigan"}
    bad = {g[0]["game_id"]: d for g in world if (d := disagreements(g))}
    assert bad == {}


def _leaving(rate: float) -> Any:
    def policy(turn: Turn) -> Choice:
        if rate and turn.rng.random() < rate:
            return Choice("PlayerLeft", {}, turn.rng.randint(800, 9000))
        return random_policy(turn)
    return policy


def _michigan_table(i: int) -> tuple[int, dict[str, Any], int, float]:
    r = random.Random(i)
    n = r.choice([3, 4, 5, 6, 7, 8])
    rules: dict[str, Any] = {}
    if r.random() < 0.5:
        rules["three_in_one"] = True
    if r.random() < 0.4:
        rules["deals"] = r.randint(1, n + 1)
    if r.random() < 0.3:
        rules["pay_ante"] = r.choice([0, 2, 3])
    if r.random() < 0.3:
        rules["widow_price"] = r.choice([0, 2, 5])
    if r.random() < 0.2:
        rules["pay_cards"] = r.choice([["TS", "JH", "QC", "KD"], ["AS", "AH", "AD", "AC"]])
    return n, rules, r.choice([0, 100]), r.choice([0.0, 0.01, 0.03])


def test_driver_michigan_house_rules_and_leavers_agree() -> None:
    """Antes, widow prices, pay cards and deal counts other than the defaults; poker on
    and off; players leaving mid-deal (last player standing included)."""
    left = 0
    for i in range(120):
        n, rules, stake, rate = _michigan_table(i)
        events = play("michigan", [f"p{k}" for k in range(n)], seed=i, policy=_leaving(rate),
                      rules=rules, stake=stake, game_id=f"mi-{i}", dealer=i % n)
        left += any(e["type"] == "PlayerLeft" for e in events)
        assert disagreements(events) == [], (i, n, rules, stake, rate)
    assert left >= 20


def test_driver_liverpool_odd_stakes_and_leavers_agree() -> None:
    """Odd stakes (a shared pot's odd chip), buying limited or off, players leaving."""
    for i, (n, rules, stake, rate) in enumerate([
            (3, {}, 101, 0.0), (2, {"max_buys": 0}, 7, 0.0), (4, {"max_buys": 1}, 1, 0.003),
            (3, {"set_distinct_suits": False}, 0, 0.01), (5, {}, 100, 0.01), (3, {}, 1000, 0.01)]):
        events = play("liverpool", [f"p{k}" for k in range(n)], seed=900 + i, policy=_leaving(rate),
                      rules=rules, stake=stake, game_id=f"lv-{i}", dealer=i % n)
        assert disagreements(events) == [], (i, n, rules, stake, rate)


def _mutants(events: Events, rng: random.Random) -> Iterator[tuple[str, Events]]:
    """The game with one claim made wrong, one way at a time."""
    seats = events[0]["payload"]["seats"]
    where = {t: [i for i, e in enumerate(events) if e["type"] == t]
             for t in ("RoundStarted", "RoundEnded", "ChipsTransferred", "GameEnded")}
    for i in where["RoundEnded"][:2]:
        payload = events[i]["payload"]
        if payload["scores"]:
            m = copy.deepcopy(events)
            m[i]["payload"]["scores"][rng.choice(sorted(payload["scores"]))] += 5
            yield "round score", m
        m = copy.deepcopy(events)
        m[i]["payload"]["winners"] = [next(s for s in seats if s not in payload["winners"])]
        yield "round winner", m
        m = copy.deepcopy(events)
        m[i]["payload"]["round"] += 1
        yield "round number", m
    for i in where["ChipsTransferred"][:2]:
        if not events[i]["payload"]["transfers"]:
            continue
        j = rng.randrange(len(events[i]["payload"]["transfers"]))
        m = copy.deepcopy(events)
        m[i]["payload"]["transfers"][j]["amount"] += 1
        yield "transfer amount", m
        m = copy.deepcopy(events)
        del m[i]["payload"]["transfers"][j]
        yield "transfer missing", m
    for i in where["RoundStarted"][:1]:
        m = copy.deepcopy(events)
        m[i]["payload"]["round"] += 1
        yield "deal number", m
    for i in where["GameEnded"]:
        m = copy.deepcopy(events)
        m[i]["payload"]["net"][rng.choice(seats)] -= 1
        yield "net", m
        m = copy.deepcopy(events)
        m[i]["payload"]["winners"] = [next(s for s in seats if s not in events[i]["payload"]["winners"])]
        yield "game winners", m


def test_wrong_claims_are_found_at_the_same_seq(world: list[Events]) -> None:
    rng = random.Random(6)
    kinds: set[str] = set()
    for g in world[::4]:
        for kind, mutant in _mutants(unchained(g), rng):
            kinds.add(kind)
            assert disagreements(mutant) == [], (g[0]["game_id"], kind)
            assert oracle(mutant, mi_winners_still_in=ENGINE_MI_WINNERS_STILL_IN).claim_findings, (
                g[0]["game_id"], kind)
    assert kinds == {"round score", "round winner", "round number", "deal number",
                     "transfer amount", "transfer missing", "net", "game winners"}


def test_games_cut_short_agree(world: list[Events]) -> None:
    """A log that stops mid-game: a game in progress (no winners, chips so far)."""
    rng = random.Random(7)
    for g in world[1::4]:
        events = unchained(g)
        for cut in sorted(rng.sample(range(1, len(events)), 4)):
            assert disagreements(events[:cut]) == [], (g[0]["game_id"], cut)
