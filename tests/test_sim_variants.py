"""Behaviour signatures beyond classic, on generated games (not on a detector): skill in
Liverpool, contract-aware play, r500 chip dumping in tournaments, r500 hidden-card
knowledge, Michigan bots' timing. Each runs small direct tables (a few seconds)."""

from __future__ import annotations

import collections
import itertools
import random
import statistics
from typing import Any

import pytest
from scipy.stats import binomtest, mannwhitneyu

from rummyguard.events.cards import parse_card
from rummyguard.events.timestamps import ts_millis
from rummyguard.replay.engine import replay
from rummyguard.sim.agents import Act, Agent
from rummyguard.sim.brain_liverpool import LiverpoolBrain, all_out_plan, contract_score
from rummyguard.sim.brain_meld import R500Brain
from rummyguard.sim.brain_michigan import MichiganBrain
from rummyguard.sim.driver import Platform
from rummyguard.sim.timing import bot_timing, human_timing

SKILLS = {"s1": 0.92, "s2": 0.88, "w1": 0.08, "w2": 0.12}


def _agents(rng: random.Random, skills: dict[str, float], brain: Any) -> dict[str, Agent]:
    return {p: Agent(p, k, "casual", human_timing(rng, k), random.Random(rng.getrandbits(32)), brain)
            for p, k in skills.items()}


@pytest.fixture(scope="module")
def liverpool_games() -> list[list[dict]]:
    """Two strong and two weak players, seats shuffled, 36 six-round games."""
    brain = LiverpoolBrain()
    games = []
    for g in range(36):
        rng = random.Random(g)
        seats = list(SKILLS)
        rng.shuffle(seats)
        agents = _agents(rng, {p: SKILLS[p] for p in seats}, brain)
        games.append(Platform(f"lv{g}", "liverpool", seats, dealer=g % 4, seed=g).run(agents))
    return games


def test_liverpool_games_finish_and_strong_players_win_far_more(liverpool_games: list[list[dict]]) -> None:
    strong = weak = finished = 0
    for events in liverpool_games:
        assert replay(events, verify_hashes=False).clean
        winners = events[-1]["payload"]["winners"]
        strong += sum(w.startswith("s") for w in winners)
        weak += sum(w.startswith("w") for w in winners)
        finished += sum(e["type"] == "RoundEnded" for e in events) == 6
    assert finished >= len(liverpool_games) - 3  # a blocked round (RULES.md §3 gap) is rare
    assert binomtest(strong, strong + weak, 0.5, alternative="greater").pvalue < 0.01, (strong, weak)


def test_liverpool_strong_players_aim_at_the_contract_and_decline_bad_buys(
        liverpool_games: list[list[dict]]) -> None:
    """Strong players get their contract down in more rounds (they keep cards toward it)
    and go out more often, and do not buy in the all-out rounds 5-6 (a buy's penalty
    card is one more card to place); weak players buy there now and then."""
    laid_after: dict[str, list[int]] = collections.defaultdict(list)
    late_buys: collections.Counter = collections.Counter()
    out: dict[str, list[int]] = collections.defaultdict(list)
    for events in liverpool_games:
        rnd = 0
        draws: collections.Counter = collections.Counter()
        for e in events:
            if e["type"] == "RoundStarted":
                rnd = e["payload"]["round"]
                draws.clear()
            elif e["type"] == "Drew":
                draws[e["actor"]] += 1
            elif e["type"] == "LaidDown":
                laid_after[e["actor"][0]].append(draws[e["actor"]])
            elif e["type"] == "Bought" and rnd >= 5:
                late_buys[e["actor"][0]] += 1
            elif e["type"] == "RoundEnded":
                out[e["payload"]["winners"][0][0]].append(rnd)
    rounds = 6 * len(liverpool_games) * 2  # two players of each kind
    assert len(laid_after["s"]) > 1.15 * len(laid_after["w"])  # the contract gets down more often
    assert len(out["s"]) > 1.5 * len(out["w"])  # and the whole hand goes out more often
    assert len(laid_after["s"]) / rounds > 0.5
    assert late_buys["w"] >= 3 and late_buys["s"] <= late_buys["w"] / 5


def test_all_out_plan_reads_the_contract() -> None:
    """Round 6 (one set + two runs, every card): a complete hand is at distance 0 with no
    junk; one stray card is junk; the contract score counts set mates and run neighbours."""
    hand = [0] * 53
    for code in ("7C", "7D", "7H", "3S", "4S", "5S", "6S", "9H", "TH", "JH", "QH", "KH", "AH"):
        hand[parse_card(code)] += 1
    assert all_out_plan(hand, 6) == (0, [])
    hand[parse_card("AH")] -= 1
    hand[parse_card("KD")] += 1
    distance, junk = all_out_plan(hand, 6)
    assert junk == [parse_card("KD")] and distance == 1
    assert contract_score(hand, parse_card("7C"), 1, True) == 6  # two mates, a sets round
    assert contract_score(hand, parse_card("KD"), 1, True) == 3  # one mate (KH)
    assert contract_score(hand, parse_card("KD"), 3, True) == 1  # runs only: no neighbours
    assert contract_score(hand, parse_card("JH"), 3, True) == 10  # TH QH, 9H KH


def test_r500_chip_dumping_in_tournaments_moves_chips_to_the_receiver() -> None:
    """A dumper who throws heads-up tournament games (holding cards, feeding) loses his
    stack to his partner far more than the same player does playing honestly."""
    brain = R500Brain()
    nets: dict[str, list[int]] = {"dump": [], "honest": []}
    planted = 0
    for g in range(16):
        for mode in ("dump", "honest"):
            rng = random.Random(g)
            agents = _agents(rng, {"d": 0.6, "r": 0.6}, brain)
            if mode == "dump":
                agents["d"].acts["chip_dumping"] = Act("chip_dumping", "cd1", 1.0, "dumper", ("r",))
                agents["r"].acts["chip_dumping"] = Act("chip_dumping", "cd1", 1.0, "receiver", ("d",))
                agents["d"].dumping = True
            platform = Platform(f"cd{g}", "r500", ["d", "r"], dealer=g % 2, seed=g, stake=500,
                                rules={"mode": "tournament", "chip_ratio": 5})
            events = platform.run(agents)
            assert replay(events, verify_hashes=False).clean
            nets[mode].append(events[-1]["payload"]["net"]["d"])
            planted += sum(m == "chip_dumping" for _s, p, m in platform.planted if p == "d")
    assert planted >= 16
    assert sum(n < 0 for n in nets["dump"]) >= 14
    assert mannwhitneyu(nets["dump"], nets["honest"], alternative="less").pvalue < 0.001


def test_r500_hidden_card_draws_track_the_hidden_stock() -> None:
    """Knowing the stock top, a cheater draws from it when it pays: his stock draws bring
    him more than an honest player's (blind) stock draws at the same tables."""
    brain = R500Brain()
    gains: dict[str, list[float]] = collections.defaultdict(list)

    def observe(engine: Any, event: dict) -> None:
        if event["type"] != "Drew" or event["payload"]["source"] != "stock":
            return
        state = engine.variant
        card = parse_card(event["payload"]["cards"][0])
        hand = list(state.hands[state.seat(event["actor"])])
        hand[card] -= 1
        gains[event["actor"]].append(R500Brain.eval.gain(hand, card))

    for g in range(24):
        rng = random.Random(500 + g)
        seats = ["cheat", "h1", "h2"]
        rng.shuffle(seats)
        agents = _agents(rng, dict.fromkeys(seats, 0.6), brain)
        agents["cheat"].acts["hidden_card"] = Act("hidden_card", "hi1", 1.0, "cheater")
        events = Platform(f"hc{g}", "r500", seats, dealer=g % 3, seed=g,
                          rules={"mode": "rounds", "rounds": 2}).run(agents)
        replay(events, observer=observe, verify_hashes=False)
    honest = gains["h1"] + gains["h2"]
    assert len(gains["cheat"]) >= 60
    assert mannwhitneyu(gains["cheat"], honest, alternative="greater").pvalue < 0.001
    assert statistics.mean(gains["cheat"]) > statistics.mean(honest) + 1.5


def test_michigan_bots_play_with_inhuman_regularity() -> None:
    """A bot's think time before each card it plays varies a few per cent; a person's
    varies by half or more (and a bot does not slow down over a session)."""
    brain = MichiganBrain()
    gaps: dict[str, list[int]] = collections.defaultdict(list)
    rng = random.Random(900)
    seats = ["bot", "h1", "h2", "h3"]
    timing = {p: human_timing(rng, 0.6) for p in seats[1:]}
    timing["bot"] = bot_timing(rng)  # one account, one profile, game after game
    for g in range(12):
        agents = {p: Agent(p, 0.6, "casual", timing[p], random.Random(rng.getrandbits(32)), brain,
                           is_bot=p == "bot") for p in seats}
        events = Platform(f"mi{g}", "michigan", seats, dealer=g % 4, seed=g).run(agents)
        for prev, e in itertools.pairwise(events):
            if e["type"] == "CardPlayed":
                gaps[e["actor"]].append(ts_millis(e["ts"]) - ts_millis(prev["ts"]))

    def cv(xs: list[int]) -> float:
        return statistics.pstdev(xs) / statistics.mean(xs)

    assert len(gaps["bot"]) >= 60
    humans = [cv(gaps[p]) for p in ("h1", "h2", "h3")]
    assert cv(gaps["bot"]) < 0.15 < 0.35 < min(humans), (cv(gaps["bot"]), humans)
