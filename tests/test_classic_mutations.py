"""Mutation suite: seeded clean classic games, each broken one way, must give exactly
the finding the mutation class calls for, at the mutated seq."""

from __future__ import annotations

import copy
import random

import pytest

from rummyguard.events.cards import format_card, parse_card
from rummyguard.events.hashing import chain
from rummyguard.events.timestamps import format_ts, ts_millis
from rummyguard.replay.engine import GameEngine, replay
from rummyguard.sim.driver import play

SEEDS = range(12)


def clean_games():
    for seed in SEEDS:
        seats = ["ann", "bob", "cy", "dee"][: 2 + seed % 3]
        yield seed, play("classic", seats, seed=seed, game_id=f"m{seed}", max_events=250)


GAMES = list(clean_games())


def rules_at(record, seq):
    return [(f.rule, f.kind) for f in record.findings if f.seq == seq]


def hand_before(events, seq, player):
    engine = GameEngine()
    for e in events[:seq]:
        engine.apply(e)
    seat = engine.variant.seat(player)
    return engine.variant.hands[seat]


@pytest.mark.parametrize("seed,events", GAMES, ids=[f"seed{s}" for s, _ in GAMES])
def test_clean_games_are_clean_and_deterministic(seed, events):
    a = replay(events)
    assert a.clean, [f.to_dict() for f in a.findings]
    assert a.to_dict() == replay(copy.deepcopy(events)).to_dict()


@pytest.mark.parametrize("seed,events", GAMES, ids=[f"seed{s}" for s, _ in GAMES])
def test_mutations_give_their_findings(seed, events):
    rng = random.Random(seed)
    discards = [e for e in events if e["type"] == "Discarded"]
    stock_draws = [e for e in events if e["type"] == "Drew" and e["payload"]["source"] == "stock"]

    # 1. a discard of a card the player does not hold -> C-HOLD, halted
    target = rng.choice(discards)
    hand = hand_before(events, target["seq"], target["actor"])
    missing = next(c for c in range(52) if hand[c] == 0)
    bad = copy.deepcopy(events)
    bad[target["seq"]]["payload"]["card"] = format_card(missing)
    record = replay(bad)
    assert rules_at(record, target["seq"]) == [("C-HOLD", "integrity")] and record.halted

    # 2. a stock draw naming another card than the stock's top -> C-HOLD
    target = rng.choice(stock_draws)
    bad = copy.deepcopy(events)
    top = parse_card(target["payload"]["cards"][0])
    bad[target["seq"]]["payload"]["cards"] = [format_card((top + 1) % 52)]
    assert rules_at(replay(bad), target["seq"]) == [("C-HOLD", "integrity")]

    # 3. a move made 200 s late (everything after it shifted too) -> CL-TIMER there only
    target = rng.choice(discards[1:])
    bad = copy.deepcopy(events)
    for e in bad[target["seq"]:]:
        e["ts"] = format_ts(ts_millis(e["ts"]) + 200_000)
    record = replay(bad)
    assert [(f.seq, f.rule) for f in record.findings] == [(target["seq"], "CL-TIMER")]

    # 4. a wrong payout claim -> C-CLAIM at the transfers and at GameEnded's net
    bad = copy.deepcopy(events)
    claim = next(e for e in bad if e["type"] == "ChipsTransferred")
    payout = next(t for t in claim["payload"]["transfers"] if t["from"] == "pot")
    payout["amount"] -= 1
    record = replay(bad)
    assert ("C-CLAIM", "discrepancy") in rules_at(record, claim["seq"])
    assert {f.rule for f in record.findings} == {"C-CLAIM"}

    # 5. a tampered chained log -> LOG-CHAIN at the edited event
    chained = chain(events)
    target = rng.choice(discards)
    chained[target["seq"]]["ts"] = format_ts(ts_millis(chained[target["seq"]]["ts"]) - 1)
    assert ("LOG-CHAIN", "integrity") in rules_at(replay(chained), target["seq"])

    # 6. a dropped event -> LOG-SEQ at the next seq
    k = rng.randrange(3, len(events) - 1)
    record = replay(events[:k] + events[k + 1:])
    assert ("LOG-SEQ", "integrity") in rules_at(record, k + 1)


def test_early_autoplay_in_a_driver_game_is_found():
    events = play("classic", ["ann", "bob"], seed=99, game_id="auto", max_events=60)
    engine = GameEngine()
    for e in events[:10]:
        engine.apply(e)
    st = engine.variant
    player = st.player(st.current)
    drew, discarded = st.expected_autoplay(st.current)
    early = {"event_id": "auto-x", "game_id": "auto", "seq": 10, "type": "AutoPlayed", "v": 1,
             "ts": format_ts(ts_millis(events[9]["ts"]) + 1000), "actor": "system",
             "payload": {"player": player, "drew": format_card(drew) if drew is not None else None,
                         "discarded": format_card(discarded), "strike": 1}}
    engine.apply(early)
    assert [(f.seq, f.rule) for f in engine.record().findings] == [(10, "CL-AUTOPLAY")]
