"""Rummy 500 whole games: driver games replay clean in every mode, the sample logs give
exactly their declared findings, mutations of clean games are caught, legal-move
generation agrees with the rules, and the scoring/chip arithmetic holds its vectors."""

from __future__ import annotations

import copy
import importlib.util
import random
from collections import Counter
from pathlib import Path

import orjson
import pytest
from logkit import findings
from r500kit import Script, greedy

from rummyguard.events.cards import JOKER, parse_card, parse_cards
from rummyguard.events.hashing import chain
from rummyguard.replay.engine import GameEngine, replay
from rummyguard.replay.rule_text import RULE_TEXT
from rummyguard.replay.rules.r500 import (
    chip_payments,
    hand_penalty,
    run_card_points,
    split_evenly,
)
from rummyguard.sim.driver import play

DATA = Path(__file__).parent / "data" / "r500"
MANIFEST = orjson.loads((DATA / "manifest.json").read_bytes())


def read(name: str) -> list[dict]:
    return [orjson.loads(line) for line in (DATA / name).read_bytes().splitlines() if line]


# -- the sample logs ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_each_sample_log_gives_exactly_its_declared_findings(name):
    events = read(name)
    record = replay(events)
    got = [[record.game_id, f.seq, f.rule, f.kind] for f in record.findings]
    assert got == MANIFEST[name]


def test_every_r500_rule_id_has_a_sample_log():
    ids = {r for r in RULE_TEXT if r.startswith("R5-")} | {"C-TURN", "C-HOLD", "C-DEAL", "C-RUN", "C-SET",
                                                            "C-WILD", "C-CLAIM"}
    assert ids <= {n.removesuffix(".jsonl") for n in MANIFEST}


def test_every_r500_rule_id_is_checked_in_the_module():
    source = (Path(__file__).parents[1] / "replay" / "rules" / "r500.py").read_text()
    for rule in [r for r in RULE_TEXT if r.startswith("R5-")]:
        assert source.count(rule) >= 2, rule  # the docstring and at least one check


def test_sample_logs_rebuild_byte_identically(tmp_path):
    spec = importlib.util.spec_from_file_location("r500_build", DATA / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.build(tmp_path)
    for name in MANIFEST:
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name


def test_sample_games_cover_every_mode_and_its_endings():
    def state(name):
        return replay(read(name)).state

    rounds = state("clean-rounds.jsonl")
    assert rounds.rounds_finished() == 3 and rounds.is_over()
    target = state("clean-target.jsonl")
    assert max(target.totals) >= 500 and target.rounds_finished() > 1
    tie = state("clean-target-tie.jsonl")
    assert "eliminated" in tie.out.values() and tie.playoff and tie.is_over()
    tournament = state("clean-tournament.jsonl")
    assert list(tournament.out.values()).count("bust") == 2 and tournament.rounds_finished() > 1
    assert sum(tournament.stacks) == 3 * 300
    leave = state("clean-leave.jsonl")
    assert list(leave.out.values()) == ["left", "left"] and leave.winners() == ["bob"]


# -- driver games ---------------------------------------------------------------------------


MODES = [{"mode": "rounds", "rounds": 2}, {"mode": "target", "target": 300}, {"mode": "tournament", "chip_ratio": 2}]


@pytest.mark.parametrize("seed", range(12))
def test_random_driver_games_replay_clean_and_identically(seed):
    rules = MODES[seed % 3]
    seats = ["a", "b", "c", "d"][: 2 + seed % 3]
    events = play("r500", seats, seed=seed, rules=rules, game_id=f"r{seed}")
    record = replay(events)
    assert record.clean, record.findings[:3]
    assert record.state.is_over() and events[-1]["type"] == "GameEnded"
    again = replay(copy.deepcopy(events))
    assert orjson.dumps(record.to_dict()) == orjson.dumps(again.to_dict())


@pytest.mark.parametrize("seed", range(6))
def test_greedy_driver_games_reach_the_target_and_replay_clean(seed):
    seats = ["a", "b", "c", "d"][: 2 + seed % 3]
    rules = {"mode": "target"} if seed % 2 == 0 else {"mode": "tournament", "chip_ratio": 3}
    events = play("r500", seats, seed=seed, rules=rules, policy=greedy, game_id=f"gr{seed}", stake=500)
    record = replay(events)
    assert record.clean, record.findings[:3]
    st = record.state
    if rules["mode"] == "target":
        assert max(st.totals) >= 500 or st.playoff
    else:
        assert len(st.active_seats()) == 1 and sum(st.stacks) == 500 * len(seats)
    assert not any(e["type"] == "PlayerLeft" for e in events)  # ended by the rules


def test_default_random_play_finishes_a_target_game():
    events = play("r500", ["a", "b", "c"], seed=3, game_id="default")
    record = replay(events)
    assert record.clean and events[-1]["type"] == "GameEnded"


def test_driver_games_use_every_kind_of_move():
    kinds: Counter[str] = Counter()
    depths: Counter[int] = Counter()
    for seed in range(6):
        for e in play("r500", ["a", "b", "c"][: 2 + seed % 2], seed=100 + seed, rules={"mode": "rounds"},
                      game_id=f"m{seed}"):
            kinds[e["type"]] += 1
            if e["type"] == "Drew" and e["payload"]["source"] == "discard":
                depths[len(e["payload"]["cards"])] += 1
    assert {"Melded", "LaidOff", "JokerSwapped", "Discarded"} <= set(kinds)
    assert depths[1] and sum(n for d, n in depths.items() if d >= 3)


# -- legal moves ----------------------------------------------------------------------------


def engine_at(events: list[dict], seq: int) -> GameEngine:
    engine = GameEngine(verify_hashes=False)
    for e in events[: seq + 1]:
        engine.apply(e)
    return engine


def test_legal_moves_after_a_deep_draw_only_use_the_deepest_card():
    s = Script()
    s.draw("p1")
    s.log.discard("p1", "2C")
    st = engine_at(s.log.events, s.last()).variant
    draws = [p["cards"] for k, p in st.legal_moves("p2") if k == "Drew" and p["source"] == "discard"]
    # 9D (under 2C) can be melded with p2's 9C 9S: both depths are offered
    assert draws == [["2C"], ["9D", "2C"]]
    s.log.draw("p2", "discard", "9D", "2C")
    st = engine_at(s.log.events, s.last()).variant
    moves = st.legal_moves("p2")
    assert moves and all(k == "Melded" and "9D" in p["cards"] for k, p in moves)
    assert st.legal_moves("p1") == []


def test_legal_moves_skip_unusable_depths_and_the_single_pile_card():
    s = Script()
    s.draw("p1")
    s.log.discard("p1", "KD")  # pile: 9D KD
    st = engine_at(s.log.events, s.last()).variant
    # take p2's 9C and 9S away: 9D then fits no meld and nothing on the table, so the
    # two-card draw is not offered (it would break R5-USE-BOTTOM)
    st.hands[1][parse_card("9S")] = 0
    st.hands[1][parse_card("9C")] = 0
    draws = [p["cards"] for k, p in st.legal_moves("p2") if k == "Drew" and p["source"] == "discard"]
    assert draws == [["KD"]]
    s2 = Script()
    s2.draw("p1")
    s2.log.discard("p1", "2C")
    s2.log.draw("p2", "discard", "2C")
    st = engine_at(s2.log.events, s2.last()).variant
    discards = {p["card"] for k, p in st.legal_moves("p2") if k == "Discarded"}
    assert "2C" not in discards and len(discards) == 13


def test_every_offered_move_replays_clean_from_a_midgame_state():
    """Each legal move at a rich position (melds and jokers on the table) is clean."""
    events = play("r500", ["a", "b"], seed=11, rules={"mode": "rounds"}, game_id="mid")
    checked = 0
    for seq in range(5, len(events), 7):
        engine = engine_at(events, seq)
        st = engine.variant
        for player in st.to_act():
            for kind, payload in st.legal_moves(player):
                trial = copy.deepcopy(events[: seq + 1])
                trial.append({**trial[-1], "seq": seq + 1, "event_id": f"t{seq}", "type": kind,
                              "v": 2 if kind in ("Drew", "Discarded") else 1, "actor": player,
                              "payload": payload})
                assert replay(trial).clean, (seq, kind, payload)
                checked += 1
    assert checked > 50


def test_joker_runs_name_leading_wilds():
    s = Script([["JK", "5H", "6H", *["7C", "7D", "7S", "7H", "TD", "JD", "QD", "KD", "2C", "3S"]],
                ["AS", "2S", "5C", "6D", "9S", "8C", "JC", "QS", "4D", "9C", "TC", "3H", "5D"]],
               stock=["8S"])
    s.draw("p1")
    st = engine_at(s.log.events, s.last()).variant
    runs = [p for k, p in st.legal_moves("p1") if k == "Melded" and p["kind"] == "run" and "JK" in p["cards"]]
    assert {"kind": "run", "cards": ["JK", "5H", "6H"], "as": {"0": "4H"}} in runs
    assert {"kind": "run", "cards": ["5H", "6H", "7H", "JK"]} in runs  # a trailing wild reads upward


# -- mutations of a clean game ----------------------------------------------------------------


@pytest.fixture(scope="module")
def clean_events() -> list[dict]:
    return play("r500", ["a", "b", "c"], seed=5, rules={"mode": "rounds", "rounds": 2}, game_id="mut")


def first(events: list[dict], type_: str, pred=lambda e: True) -> int:
    return next(i for i, e in enumerate(events) if e["type"] == type_ and pred(e))


def test_mutation_card_not_in_hand_halts(clean_events):
    events = copy.deepcopy(clean_events)
    i = first(events, "Discarded")
    actor = events[i]["actor"]
    state = engine_at(events, i - 1).variant
    held = state.hands[state.seat(actor)]
    events[i]["payload"]["card"] = next(f"{r}{s}" for r in "23456789TJQKA" for s in "CDHS"
                                        if not held[parse_card(f"{r}{s}")])
    record = replay(events)
    assert findings(record) == [(i, "C-HOLD", "integrity")] and record.halted


def test_mutation_wrong_stock_card_halts(clean_events):
    events = copy.deepcopy(clean_events)
    i = first(events, "Drew", lambda e: e["payload"]["source"] == "stock")
    real = events[i]["payload"]["cards"][0]
    events[i]["payload"]["cards"] = ["JK" if real != "JK" else "2C"]
    record = replay(events)
    assert findings(record) == [(i, "C-HOLD", "integrity")] and record.halted
    assert f"stock's top card is {real}" in record.findings[0].message


def test_mutation_wrong_payout_is_a_claim_discrepancy(clean_events):
    events = copy.deepcopy(clean_events)
    i = max(j for j, e in enumerate(events) if e["type"] == "ChipsTransferred")
    payout = next(t for t in events[i]["payload"]["transfers"] if t["from"] == "pot")
    payout["amount"] -= 1
    record = replay(events)
    assert findings(record) == [(i, "C-CLAIM", "discrepancy")]
    assert f"pot->{payout['to']} {payout['amount']}" in record.findings[0].message


def test_mutation_wrong_round_score_is_a_claim_discrepancy(clean_events):
    events = copy.deepcopy(clean_events)
    i = first(events, "RoundEnded")
    scores = events[i]["payload"]["scores"]
    player = sorted(scores)[0]
    scores[player] += 10
    record = replay(events)
    assert findings(record) == [(i, "C-CLAIM", "discrepancy")]
    assert f"{player}: claimed {scores[player]}, recomputed {scores[player] - 10}" in record.findings[0].message


def test_mutation_tampered_hash_breaks_the_chain(clean_events):
    events = chain(copy.deepcopy(clean_events))
    i = first(events, "Melded")
    events[i]["ts"] = events[i - 1]["ts"]
    assert findings(replay(events)) == [(i, "LOG-CHAIN", "integrity")]
    events = chain(copy.deepcopy(clean_events))
    events[i]["hash"] = "f" * 64
    got = findings(replay(events))
    assert (i, "LOG-CHAIN", "integrity") in got and (i + 1, "LOG-CHAIN", "integrity") in got


def test_mutation_dropped_move_is_caught(clean_events):
    events = copy.deepcopy(clean_events)
    i = first(events, "Melded")
    del events[i]
    got = findings(replay(events))
    assert got[0] == (i + 1, "LOG-SEQ", "integrity")
    assert len(got) > 1  # the game no longer adds up


# -- scoring and chip arithmetic ----------------------------------------------------------------


def test_R5_CHIPS_seed_vectors():
    assert chip_payments({0: 100, 1: 70, 2: 60}, 3) == [(1, 0, 90), (2, 0, 120)]
    assert chip_payments({0: 60, 1: 0, 2: -10}, 2) == [(1, 0, 120), (2, 0, 140)]


def test_R5_CHIPS_capped_at_what_the_loser_holds():
    assert chip_payments({0: 100, 1: 70, 2: 60}, 3, {0: 10, 1: 50, 2: 500}) == [(1, 0, 50), (2, 0, 120)]
    assert chip_payments({0: 100, 1: 70}, 3, {0: 10, 1: 0}) == []


def test_R5_CHIPS_tied_round_winners_split_remainder_in_seat_order():
    # winners seats 1 and 3 at 50; seat 0 pays 45 -> 23 + 22, seat 2 pays 20 -> 10 + 10
    assert chip_payments({3: 50, 0: 5, 1: 50, 2: 30}, 1) == [(0, 1, 23), (0, 3, 22), (2, 1, 10), (2, 3, 10)]
    assert chip_payments({0: 7, 1: 7}, 5) == []


def test_split_evenly():
    assert split_evenly(303, [1, 0]) == [(0, 152), (1, 151)]
    assert split_evenly(2, [2, 0, 1]) == [(0, 1), (1, 1)]


def test_R5_VALUES_card_values():
    hand = [0] * 53
    for c in parse_cards(["AS", "JK", "KD", "5C", "TH"]):
        hand[c] += 1
    assert hand_penalty(hand) == 15 + 15 + 10 + 5 + 10
    assert run_card_points(parse_card("AH"), 1) == 1 and run_card_points(parse_card("AH"), 14) == 11
    assert run_card_points(parse_card("QH"), 12) == 10 and run_card_points(parse_card("9C"), 9) == 9
    hand[JOKER] = 2
    assert hand_penalty(hand) == 70


def test_round_scores_sum_from_the_table_and_hands():
    """Over random games: every round's scores are the table points each player put
    there minus his hand, and the game totals are the sums of the rounds."""
    rng = random.Random(1)
    for seed in rng.sample(range(1000), 4):
        events = play("r500", ["a", "b", "c"], seed=seed, rules={"mode": "rounds", "rounds": 2}, game_id="s")
        record = replay(events)
        rounds = [e["payload"]["scores"] for e in events if e["type"] == "RoundEnded"]
        assert len(rounds) == 2
        assert record.results.scores == {p: sum(r.get(p, 0) for r in rounds) for p in ("a", "b", "c")}
