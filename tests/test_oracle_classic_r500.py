"""Differential test: the independent oracle (tests/oracle_classic_r500.py, written from
RULES.md §0 §1 §2 §5 and EVENTS.md without the engine's code) against ``replay()`` on
classic and Rummy 500 games.

Why differential: the simulator picks its moves through the engine, so its logs replay
clean by construction; an oracle that reads the rules on its own catches a wrong
payout, score, winner or claim verdict that the engine and the simulator would share.
Inputs: small seeded worlds (two with house rules the lobby does not pick: r500
``target`` mode and odd rakes), every classic/r500 log in tests/data, those games with
their claims tampered with, and games cut at a random moment with players leaving or
pressing Fresh there. What is compared: ``winners``, ``net``, ``scores``, the computed
transfers (as a multiset), halting, and the claim verdicts both compute (C-CLAIM,
CL-AUTOPLAY, CL-STRIKES findings, by seq).
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest
from oracle_classic_r500 import (
    chip_payments,
    hand_value,
    meld_points,
    oracle,
    read_meld,
    split,
)

from rummyguard.replay.engine import replay
from rummyguard.sim.world import WorldConfig, build_world, run_world

DATA = Path(__file__).parent / "data"
VARIANTS = ("classic", "r500")
#: the finding rules whose verdicts the oracle computes too
CLAIM_RULES = frozenset({"C-CLAIM", "CL-AUTOPLAY", "CL-STRIKES"})
Events = list[dict[str, Any]]


def by_game(lines: bytes) -> dict[str, Events]:
    games: dict[str, Events] = {}
    for line in lines.splitlines():
        if line.strip():
            event = orjson.loads(line)
            games.setdefault(event["game_id"], []).append(event)
    return games


def differences(events: Events) -> list[str]:
    """What the engine and the oracle disagree on for one game (empty: they agree)."""
    record, want = replay(events), oracle(events)
    if record.halted or want.halted:
        return [] if record.halted == want.halted else [f"halted {record.halted} v {want.halted}"]
    out = []
    got = record.results
    for name, a, b in (("winners", got.winners, want.winners), ("net", got.net, want.net),
                       ("scores", got.scores, want.scores),
                       ("transfers", Counter(t.key() for t in record.transfers),
                        Counter(want.transfers))):
        if a != b:
            out.append(f"{name}: engine {a}, oracle {b}")
    engine_claims = sorted({(f.seq, f.rule) for f in record.findings if f.rule in CLAIM_RULES})
    oracle_claims = sorted({(seq, rule) for seq, rule, _kind in want.claims})
    if engine_claims != oracle_claims:
        out.append(f"claim verdicts: engine {engine_claims}, oracle {oracle_claims}")
    return out


def check_all(games: dict[str, Events]) -> None:
    bad = {gid: d for gid, events in games.items() if (d := differences(events))}
    assert not bad, f"{len(bad)} of {len(games)} games differ; first: {list(bad.items())[:3]}"


@cache
def world(variant: str, seed: int, games: int, rules: tuple[tuple[str, Any], ...] = ()) -> bytes:
    """A seeded world of one variant; ``rules`` (as pairs) overrides every table's house
    rules (seeded per table when a value is a tuple of choices)."""
    w = build_world(WorldConfig(games=games, seed=seed, variants=(variant,)))
    rng = random.Random(seed)
    for sitting in w.sittings:
        if rules:
            sitting.rules = {k: rng.choice(v) if isinstance(v, tuple) else v for k, v in rules}
    chunks: list[bytes] = []
    run_world(w, chunks.append)
    return b"".join(chunks)


WORLDS = {
    "classic": ("classic", 5, 60, ()),
    "classic-rake": ("classic", 22, 30, (("rake_bps", (1, 250, 333, 999)),)),
    "r500": ("r500", 7, 60, ()),
    "r500-target": ("r500", 21, 40, (("mode", "target"), ("target", (150, 250, 500)))),
    "r500-tournament": ("r500", 23, 30, (("mode", "tournament"), ("chip_ratio", (1, 2, 5)))),
}


def world_games(name: str) -> dict[str, Events]:
    return by_game(world(*WORLDS[name]))


def data_games() -> dict[str, Events]:
    games: dict[str, Events] = {}
    for path in sorted(p for d in ("classic", "r500", "sample", "spec") for p in (DATA / d).glob("*.jsonl")):
        for gid, events in by_game(path.read_bytes()).items():
            created = next((e for e in events if e["type"] == "GameCreated"), None)
            if created is not None and created["payload"]["variant"] in VARIANTS:
                games[f"{path.relative_to(DATA)}:{gid}"] = events
    return games


# -- the oracle against the spec's own numbers --------------------------------------------------------


def test_r5_chips_test_vectors_of_the_seed() -> None:
    """RULES.md R5-CHIPS: "ratio 3; winner 100; others 70 and 60 -> they pay 90 and 120"
    and "ratio 2; winner 60; others 0 and -10 -> they pay 120 and 140"."""
    rich = dict.fromkeys("abc", 10_000)
    assert chip_payments({"a": 100, "b": 70, "c": 60}, rich, 3, ["a", "b", "c"]) == [
        ("b", "a", 90), ("c", "a", 120)]
    assert chip_payments({"a": 60, "b": 0, "c": -10}, rich, 2, ["a", "b", "c"]) == [
        ("b", "a", 120), ("c", "a", 140)]


def test_r5_chips_cap_and_tied_winners() -> None:
    """Capped at what the payer holds; tied winners split each payment, the odd chip to
    the first in seat order; a payment of nothing is no transfer."""
    stacks = {"a": 50, "b": 50, "c": 7, "d": 1}
    got = chip_payments({"a": 31, "b": 31, "c": -66, "d": 0}, stacks, 1, ["a", "b", "c", "d"])
    assert got == [("c", "a", 4), ("c", "b", 3), ("d", "a", 1)]
    assert split(303, ["p1", "p2"]) == {"p1": 152, "p2": 151}


@pytest.mark.parametrize(("kind", "cards", "named", "points"), [
    ("run", ["AH", "2H", "3H"], None, 6),          # ace low in A 2 3: 1
    ("run", ["QH", "KH", "AH"], None, 31),         # ace high: 11
    ("run", ["JK", "QH", "KH"], None, 31),         # C-WILD: low wild, top not A -> it is the A
    ("run", ["JK", "KH", "AH"], None, 31),         # top is A -> the wild is the Q below
    ("run", ["JK", "2C", "3C"], {"0": "AC"}, 6),   # named low ace: 1
    ("run", ["JK", "2C", "3C"], None, 9),          # unnamed: 2 3 4
    ("run", ["JK", "JK", "5H", "6H"], {"0": "3H"}, 18),
    ("set", ["AS", "AC", "JK"], None, 33),
])
def test_r5_values_of_melds(kind: str, cards: list[str], named: dict[str, str] | None,
                            points: int) -> None:
    """R5-VALUES: 2-10 face, J Q K 10, ace 11 (1 in A 2 3), a melded wild worth its card."""
    assert meld_points(read_meld(kind, cards, named)) == points


def test_r5_values_in_hand() -> None:
    assert [hand_value(c) for c in ("AS", "JK", "KD", "TC", "2H")] == [15, 15, 10, 10, 2]


# -- oracle v engine -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(WORLDS))
def test_simulated_games_agree_and_carry_true_claims(name: str) -> None:
    games = world_games(name)
    assert len(games) >= 30
    check_all(games)
    for gid, events in games.items():
        assert oracle(events).claims == [], gid  # the simulator's claims are right
        assert oracle(events).over, gid


def test_every_data_log_of_the_variants_agrees() -> None:
    games = data_games()
    assert len(games) >= 60
    check_all(games)


def _tampered(events: Events, rng: random.Random) -> list[tuple[str, Events]]:
    """Copies of a clean game with one claim changed (never a ChipsTransferred emptied:
    tests/test_audit6_classic_r500.py pins that one)."""
    out: list[tuple[str, Events]] = []
    seats = events[0]["payload"]["seats"]

    def variant(label: str, i: int, change: Any) -> None:
        copy_ = copy.deepcopy(events)
        change(copy_[i]["payload"])
        out.append((f"{label}@{i}", copy_))

    for i, e in enumerate(events):
        if e["type"] == "RoundEnded":
            if e["payload"]["scores"]:
                who = rng.choice(sorted(e["payload"]["scores"]))
                variant("score", i, lambda p, w=who: p["scores"].__setitem__(w, p["scores"][w] + 1))
                variant("no-score", i, lambda p, w=who: p["scores"].pop(w))
            variant("round", i, lambda p: p.__setitem__("round", p["round"] + 1))
            variant("round-winners", i, lambda p: p.__setitem__(
                "winners", [s for s in seats if s not in p["winners"]][:1]))
            variant("stranger-0", i, lambda p: p["scores"].__setitem__("nobody", 0))
        elif e["type"] == "GameEnded":
            who = rng.choice(sorted(e["payload"]["net"]))
            variant("net", i, lambda p, w=who: p["net"].__setitem__(w, p["net"][w] + 1))
            variant("house", i, lambda p: p["net"].__setitem__("house", 5))
            variant("winners", i, lambda p: p.__setitem__("winners", list(seats)))
            variant("reversed", i, lambda p: p.__setitem__("winners", p["winners"][::-1]))
        elif e["type"] == "ChipsTransferred" and e["payload"]["transfers"]:
            j = rng.randrange(len(e["payload"]["transfers"]))
            variant("amount", i, lambda p, j=j: p["transfers"][j].__setitem__(
                "amount", p["transfers"][j]["amount"] + 1))
            variant("reversed-transfer", i, lambda p, j=j: p["transfers"][j].update(
                {"from": p["transfers"][j]["to"], "to": p["transfers"][j]["from"]}))
            if len(e["payload"]["transfers"]) > 1:
                variant("dropped", i, lambda p, j=j: p["transfers"].pop(j))
            variant("zero", i, lambda p: p["transfers"].append(
                {"from": "pot", "to": "house", "amount": 0, "reason": "rake"}))
    return out


def _unchained(events: Events) -> Events:
    return [{k: v for k, v in e.items() if k not in ("hash", "prev_hash")} for e in events]


@pytest.mark.parametrize("name", ["classic", "r500", "r500-tournament"])
def test_tampered_claims_get_the_same_verdicts(name: str) -> None:
    rng = random.Random(6)
    games = sorted(world_games(name).items(), key=lambda kv: (len(kv[1]), kv[0]))[:12]
    tampered = {}
    for gid, clean in games:
        variants = _tampered(_unchained(clean), rng)
        for label, events in rng.sample(variants, min(len(variants), 12)):
            tampered[f"{gid}/{label}"] = events
    assert len(tampered) >= 100
    check_all(tampered)


def test_tampered_claims_are_found_by_the_oracle() -> None:
    """Guard on the oracle itself: a changed number is a C-CLAIM (a reordered list, a 0
    for a stranger or a logged zero rake are not)."""
    rng = random.Random(7)
    gid, clean = sorted(world_games("r500").items())[0]
    labels = set()
    for label, events in _tampered(_unchained(clean), rng):
        kind = label.split("@")[0]
        labels.add(kind)
        if kind == "no-score":
            continue  # a left-out score reads as 0: a finding only if the score was not 0
        found = oracle(events).claims
        assert (found == []) == (kind in ("stranger-0", "reversed", "zero")), (gid, label, found)
    assert {"score", "round", "net", "house", "amount", "zero"} <= labels


def _cut_with_leaves(events: Events, rng: random.Random) -> Events:
    """The game up to a random event, then some seated players press Fresh (classic) and
    some leave, all at that moment: leaving and Fresh may come at any time."""
    k = rng.randrange(2, len(events))
    out = _unchained(events[:k])
    created = events[0]["payload"]
    for who in rng.sample(created["seats"], rng.randint(1, len(created["seats"]))):
        kinds = ["FreshPressed"] if created["variant"] == "classic" and rng.random() < 0.5 else []
        kinds += ["PlayerLeft"] if rng.random() < 0.6 else []
        for kind in kinds:
            out.append({"event_id": f"cut-{len(out)}", "game_id": events[0]["game_id"],
                        "seq": len(out), "type": kind, "v": 1, "ts": out[-1]["ts"],
                        "actor": who, "payload": {}})
    return out


@pytest.mark.parametrize("name", ["classic", "r500", "r500-tournament", "r500-target"])
def test_games_cut_by_leaves_and_fresh_presses_agree(name: str) -> None:
    rng = random.Random(8)
    games = world_games(name)
    cut = {f"{gid}/{n}": _cut_with_leaves(events, rng)
           for gid, events in sorted(games.items()) for n in range(2)}
    check_all(cut)


CARDS = [r + s for r in "23456789TJQKA" for s in "CDHS"] + ["JK"]
MOVES = ("Drew", "Discarded", "Melded", "LaidOff", "JokerSwapped", "DeclaredRummy", "AutoPlayed")


def _one_card_changed(events: Events, rng: random.Random) -> Events:
    """The game up to a few events past one move whose card was changed at random: the
    card may not be where the move says (C-HOLD halts both) or be there and break a
    rule (both apply it as logged)."""
    i = rng.choice([k for k, e in enumerate(events) if e["type"] in MOVES])
    out = _unchained(copy.deepcopy(events[: i + 1 + rng.randint(0, 4)]))
    p, new = out[i]["payload"], rng.choice(CARDS)
    if out[i]["type"] in ("Drew", "Melded"):
        p["cards"][rng.randrange(len(p["cards"]))] = new
    elif out[i]["type"] == "DeclaredRummy":
        p["discard"] = new
    elif out[i]["type"] == "AutoPlayed":
        p["discarded"] = new
    else:
        p["card"] = new
    return out


@pytest.mark.parametrize("name", ["classic", "r500"])
def test_a_changed_card_halts_both_or_neither_with_the_same_results(name: str) -> None:
    rng = random.Random(9)
    games = world_games(name)
    changed = {f"{gid}/{n}": _one_card_changed(events, rng)
               for gid, events in sorted(games.items()) for n in range(3)}
    bad = {}
    for key, events in changed.items():
        record, want = replay(events), oracle(events)
        got = (record.halted, *(() if record.halted else (
            record.results.winners, record.results.net, record.results.scores)))
        exp = (want.halted, *(() if want.halted else (want.winners, want.net, want.scores)))
        if got != exp:
            bad[key] = (got, exp)
    assert not bad, f"{len(bad)} of {len(changed)} differ; first: {list(bad.items())[:3]}"
