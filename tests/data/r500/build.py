# ruff: noqa: E702 - a compact table of one-line scenarios
"""Regenerate the Rummy 500 sample logs: ``python tests/data/r500/build.py``.

Each scripted log breaks exactly one rule; its expected findings are declared here by
hand (``EXPECT``), checked while writing, and checked again by tests/test_r500_games.py.
The ``clean-*`` logs are whole multi-round games from the platform driver, one per mode
(plus a target-mode tie play-off, a tournament with its bust removals logged, and a game
players leave), chained, and must replay with no finding.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[1]))  # tests/, for logkit and r500kit

from r500kit import P1, P2, RUN_D, RUN_H, SET_7, Script, go_out_round, greedy, pot_claims  # noqa: E402

from rummyguard.events.hashing import chain  # noqa: E402
from rummyguard.replay.engine import replay  # noqa: E402
from rummyguard.sim.driver import play, random_policy  # noqa: E402

Expect = list[tuple[int, str, str]]


def s_clean(g):
    s = Script(game_id=g); go_out_round(s); pot_claims(s, {"p1": 200})
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 88, "p2": -87}})
    s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}}); return s, []


def s_c_deal(g):
    s = Script(game_id=g); s.log.events.pop(); s.round_no = 0
    return s, [(s.deal([P2, P1], "9D", [], dealer=0), "C-DEAL", "violation")]


def s_c_turn(g):
    s = Script(game_id=g); return s, [(s.log.draw("p2", "stock", "2H"), "C-TURN", "violation")]


def s_c_hold(g):
    s = Script(game_id=g); s.draw("p1"); return s, [(s.log.discard("p1", "AC"), "C-HOLD", "integrity")]


def s_c_run(g):
    s = Script(game_id=g); s.draw("p1")
    return s, [(s.meld("p1", {"kind": "run", "cards": ["3H", "4H", "6H"]}), "C-RUN", "violation")]


def s_c_set(g):
    s = Script(game_id=g); s.draw("p1")
    return s, [(s.meld("p1", {"kind": "set", "cards": ["7C", "7D", "KD"]}), "C-SET", "violation")]


def s_c_wild(g):
    s = Script([["3H", "4H", "5H", "JK", *P1[4:]], P2], game_id=g); s.draw("p1")
    seq = s.meld("p1", {"kind": "run", "cards": ["3H", "JK", "5H"], "as": {"1": "6H"}})
    return s, [(seq, "C-WILD", "violation")]


def s_c_claim(g):
    s = Script(game_id=g); go_out_round(s)
    return s, [(s.sys("RoundEnded", {"round": 1, "winners": ["p2"], "scores": {"p1": 88, "p2": -87}}),
                "C-CLAIM", "discrepancy")]


def s_draw_stock(g):
    s = Script(game_id=g); return s, [(s.log.discard("p1", "2C"), "R5-DRAW-STOCK", "violation")]


def s_draw_pile(g):
    s = Script(game_id=g); s.draw("p1"); s.log.discard("p1", "2C")
    return s, [(s.log.draw("p2", "discard", "9D"), "R5-DRAW-PILE", "violation")]


def s_use_bottom(g):
    s = Script(game_id=g); s.draw("p1"); s.log.discard("p1", "2C"); s.log.draw("p2", "discard", "9D", "2C")
    return s, [(s.log.discard("p2", "5C"), "R5-USE-BOTTOM", "violation")]


def s_nodiscard_top(g):
    s = Script(game_id=g); s.draw("p1"); s.log.discard("p1", "2C"); s.log.draw("p2", "discard", "2C")
    return s, [(s.log.discard("p2", "2C"), "R5-NODISCARD-TOP", "violation")]


def s_meld(g):
    s = Script(game_id=g); s.draw("p1")
    return s, [(s.meld("p1", {"kind": "set", "cards": ["7C", "7D"]}), "R5-MELD", "violation")]


def s_layoff(g):
    s = Script(game_id=g); s.draw("p1"); s.meld("p1", RUN_H)
    return s, [(s.layoff("p1", "KD", 0, "high"), "R5-LAYOFF", "violation")]


def s_swap(g):
    s = Script([["3H", "4H", "5H", "JK", *P1[4:]], ["6H" if c == "6D" else c for c in P2]], game_id=g)
    s.draw("p1"); s.meld("p1", {"kind": "run", "cards": ["3H", "4H", "5H", "JK"]}); s.log.discard("p1", "2C")
    s.draw("p2"); return s, [(s.swap("p2", 0, "5C"), "R5-SWAP", "violation")]


def s_discard(g):
    s = Script(game_id=g); s.draw("p1"); s.meld("p1", RUN_H); s.meld("p1", SET_7); s.meld("p1", RUN_D)
    s.log.discard("p1", "2C"); s.turn("p2"); s.draw("p1"); s.layoff("p1", "2H", 0, "low")
    return s, [(s.layoff("p1", "AH", 0, "low"), "R5-DISCARD", "violation")]


def s_end(g):
    s = Script(game_id=g, rules={"mode": "rounds", "rounds": 2}); s.exhaust(["p1", "p2"])
    return s, [(s.sys("StockReplenished", {"stock": ["QH"]}), "R5-END", "violation"),
               (s.log.draw("p2", "stock", "QH"), "R5-END", "violation")]


def s_values(g):
    hand = ["AH", "2H", "3H", "QC", "KC", "AC", "7C", "7D", "7S", "JK", "AD", "5H", "9H"]
    s = Script([hand, P2], stock=["8H"], game_id=g); s.draw("p1")
    s.meld("p1", {"kind": "run", "cards": ["AH", "2H", "3H"]}); s.meld("p1", {"kind": "run", "cards": ["QC", "KC", "AC"]})
    s.meld("p1", {"kind": "set", "cards": ["7C", "7D", "7S"]}); s.log.discard("p1", "8H"); s.exhaust(["p2", "p1"])
    # the platform counted the ace of A-2-3 as 11 (and so claims 24, not 14)
    return s, [(s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 24, "p2": -96}}),
                "C-CLAIM", "discrepancy")]


def s_score(g):
    s = Script(game_id=g); go_out_round(s)
    # the platform credited p2's lay-off of 9D to p1, who owns the run
    return s, [(s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 97, "p2": -96}}),
                "C-CLAIM", "discrepancy")]


def s_game(g):
    s = Script(game_id=g, rules={"mode": "target", "target": 500}); go_out_round(s)
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 88, "p2": -87}})
    # the platform ended the game at 88 of 500: the end and the winner are both wrong claims
    seq = s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": -100, "p2": -100}})
    return s, [(seq, "C-CLAIM", "discrepancy"), (seq, "C-CLAIM", "discrepancy")]


def s_pot(g):
    s = Script(game_id=g); go_out_round(s); pot_claims(s, {"p1": 190})
    return s, [(s.last(), "C-CLAIM", "discrepancy")]


def s_chips(g):
    s = Script(game_id=g, rules={"mode": "tournament", "chip_ratio": 3}, stake=100); go_out_round(s)
    # (88 - -87) x 3 = 525, but p2 holds only 100
    return s, [(s.sys("ChipsTransferred", {"transfers": [{"from": "p2", "to": "p1", "amount": 525,
                                                          "reason": "round 1"}]}), "C-CLAIM", "discrepancy")]


def s_log_chain(g):
    s, _ = s_clean(g)
    events = chain(s.log.events)
    events[5]["ts"] = events[4]["ts"]  # an edit the rules cannot see; only the chain does
    return events, [(5, "LOG-CHAIN", "integrity")]


SCENARIOS = {
    "clean": s_clean, "C-DEAL": s_c_deal, "C-TURN": s_c_turn, "C-HOLD": s_c_hold, "C-RUN": s_c_run,
    "C-SET": s_c_set, "C-WILD": s_c_wild, "C-CLAIM": s_c_claim, "R5-DRAW-STOCK": s_draw_stock,
    "R5-DRAW-PILE": s_draw_pile, "R5-USE-BOTTOM": s_use_bottom, "R5-NODISCARD-TOP": s_nodiscard_top,
    "R5-MELD": s_meld, "R5-LAYOFF": s_layoff, "R5-SWAP": s_swap, "R5-DISCARD": s_discard, "R5-END": s_end,
    "R5-VALUES": s_values, "R5-SCORE": s_score, "R5-GAME": s_game, "R5-POT": s_pot, "R5-CHIPS": s_chips,
    "LOG-CHAIN": s_log_chain,
}


def insert_after(events: list[dict[str, Any]], seq: int, type_: str, payload: dict[str, Any]) -> None:
    """Insert a system event after ``seq`` (same timestamp) and renumber what follows."""
    new = {**copy.deepcopy(events[seq]), "type": type_, "v": 1, "actor": "system", "payload": payload}
    events.insert(seq + 1, new)
    game = events[0]["game_id"]
    for i, e in enumerate(events):
        e["seq"] = i
        e["event_id"] = f"{game}-{i:05d}"


def with_bust_claims(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A tournament log with the platform's ``PlayerRemoved(bust)`` after each round that
    busted somebody (players whose chips went to zero)."""
    seats = events[0]["payload"]["seats"]
    stacks = dict.fromkeys(seats, events[0]["payload"]["stake"])
    out = list(events)
    i = 0
    while i < len(out):
        e = out[i]
        if e["type"] == "ChipsTransferred":
            for t in e["payload"]["transfers"]:
                stacks[t["from"]] -= t["amount"]
                stacks[t["to"]] += t["amount"]
        if e["type"] == "RoundEnded":
            for p in seats:
                if stacks[p] == 0:
                    insert_after(out, i, "PlayerRemoved", {"player": p, "reason": "bust"})
                    stacks[p] = -1
                    i += 1
        i += 1
    return out


def driver_games() -> dict[str, list[dict[str, Any]]]:
    """Whole games from the platform driver, one or more per mode."""
    return {
        "clean-rounds": play("r500", ["ann", "bob", "cy"], seed=1, rules={"mode": "rounds", "rounds": 3},
                             game_id="sample-r500-rounds"),
        "clean-target": play("r500", ["ann", "bob"], seed=0, rules={"mode": "target"}, policy=greedy,
                             game_id="sample-r500-target"),
        "clean-target-tie": play("r500", ["ann", "bob", "cy", "dee"], seed=1072, policy=random_policy,
                                 rules={"mode": "target", "target": 150}, game_id="sample-r500-target-tie"),
        "clean-tournament": with_bust_claims(play(
            "r500", ["ann", "bob", "cy"], seed=4, stake=300, rules={"mode": "tournament", "chip_ratio": 2},
            policy=greedy, game_id="sample-r500-tournament")),
        "clean-leave": play("r500", ["ann", "bob", "cy"], seed=7, rules={"mode": "target"},
                            max_events=300, game_id="sample-r500-leave"),
    }


def build(out: Path = HERE) -> dict[str, list]:
    manifest: dict[str, list] = {}
    for name, scenario in SCENARIOS.items():
        game_id = f"sample-r500-{name.lower()}"
        made, expect = scenario(game_id)
        events = made if isinstance(made, list) else made.log.events
        path = out / f"{name}.jsonl"
        path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events))
        manifest[path.name] = [[game_id, *e] for e in expect]
        got = [(f.seq, f.rule, f.kind) for f in replay(events).findings]
        assert got == list(expect), (name, got, expect)
    for name, events in driver_games().items():
        events = chain(events)
        record = replay(events)
        assert record.clean, (name, record.findings)
        path = out / f"{name}.jsonl"
        path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events))
        manifest[path.name] = []
    (out / "manifest.json").write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    return manifest


if __name__ == "__main__":
    print(f"wrote {len(build())} sample logs to {HERE}")
