# ruff: noqa: E702 - a compact table of one-line scenarios
"""Regenerate the classic sample logs: ``python tests/data/classic/build.py``.

Each log breaks exactly one rule; its expected findings are declared here by hand
(``EXPECT``), checked while writing, and checked again by tests/test_verify_cli.py (the manifest).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import orjson

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[1]))  # tests/, for logkit

from logkit import Log, stacked_deck  # noqa: E402

from rummyguard.events.hashing import chain  # noqa: E402
from rummyguard.replay.engine import replay  # noqa: E402
from rummyguard.sim.driver import play  # noqa: E402

P1 = ["3H", "4H", "5H", "6H", "7H", "9C", "9D", "9S", "TD", "JD", "QD", "KC", "KD", "KH", "2C"]
P2 = ["AS", "2S", "5C", "6D", "8S", "8C", "JC", "QS", "4D", "7C", "TC", "3S", "5D", "6S"]
DECK = stacked_deck([P1, P2], "8D", ["AH", "2D", "JK", "QC", "QH"])
MELDS = [
    {"kind": "run", "cards": ["3H", "4H", "5H", "6H", "7H"]},
    {"kind": "set", "cards": ["9C", "9D", "9S"]},
    {"kind": "run", "cards": ["TD", "JD", "QD"]},
    {"kind": "set", "cards": ["KC", "KD", "KH"]},
]


def base(game_id: str, deck=DECK, **created) -> Log:
    log = Log(game_id)
    log.created("classic", ["p1", "p2"], dealer=1, **created)
    log.round(deck, dealer=1)
    return log


def to_declaration(log: Log) -> None:
    log.discard("p1", "2C")
    log.draw("p2", "stock", "AH")
    log.discard("p2", "AH")
    log.draw("p1", "stock", "2D")


def claims(log: Log, pot: int = 200, net=None) -> None:
    log.sys("ChipsTransferred", {"transfers": [
        {"from": "p1", "to": "pot", "amount": 100, "reason": "stake"},
        {"from": "p2", "to": "pot", "amount": 100, "reason": "stake"},
        {"from": "pot", "to": "p1", "amount": pot, "reason": "pot"}]})
    log.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {}})
    log.sys("GameEnded", {"winners": ["p1"], "net": net or {"p1": 100, "p2": -100}})


def declare(log: Log, melds=MELDS, discard="2D") -> int:
    return log.add("DeclaredRummy", "p1", {"melds": melds, "discard": discard})


def s_clean(g):
    log = base(g); to_declaration(log); declare(log); claims(log); return log, []


def s_c_deal(g):
    log = Log(g); log.created("classic", ["p1", "p2"], dealer=1)
    return log, [(log.round(DECK, dealer=0), "C-DEAL", "violation")]


def s_c_turn(g):
    log = base(g); return log, [(log.draw("p2", "stock", "AH"), "C-TURN", "violation")]


def s_c_hold(g):
    log = base(g); return log, [(log.discard("p1", "AC"), "C-HOLD", "integrity")]


def s_c_run(g):
    log = base(g); to_declaration(log)
    m = copy.deepcopy(MELDS); m[2]["cards"] = ["TD", "QD", "JD"]
    return log, [(declare(log, m), "C-RUN", "violation")]


def s_c_set(g):
    log = base(g); to_declaration(log)
    m = copy.deepcopy(MELDS); m[3]["cards"] = ["KC", "KD", "2D"]
    return log, [(declare(log, m, "KH"), "C-SET", "violation")]


def s_c_wild(g):
    hand = ["3H", "4H", "JK", "6H", "7H", "9C", "9D", "9S", "TD", "JD", "QD", "KC", "KD", "KH", "2C"]
    log = base(g, stacked_deck([hand, P2], "8D", ["AH"]))
    m = copy.deepcopy(MELDS)
    m[0] = {"kind": "run", "cards": ["3H", "4H", "JK", "6H", "7H"], "as": {"2": "8H"}}
    return log, [(declare(log, m, "2C"), "C-WILD", "violation")]


def s_c_restock(g):
    log = base(g); log.discard("p1", "2C")
    return log, [(log.sys("StockReplenished", {"stock": ["8D"]}), "C-RESTOCK", "violation")]


def s_c_claim(g):
    log = base(g); to_declaration(log); declare(log)
    claims(log, pot=190, net={"p1": 90, "p2": -100})
    return log, [(7, "C-CLAIM", "discrepancy"), (9, "C-CLAIM", "discrepancy")]


def s_cl_deal(g):
    log = Log(g); log.created("classic", ["p1", "p2"], dealer=1)
    seq = log.round(DECK[:20], dealer=1)
    return log, [(seq, "C-DEAL", "violation"), (seq, "CL-DEAL", "integrity")]


def s_cl_first(g):
    log = base(g); return log, [(log.draw("p1", "stock", "AH"), "CL-FIRST", "violation")]


def s_cl_draw(g):
    log = base(g); log.discard("p1", "2C")
    return log, [(log.discard("p2", "AS"), "CL-DRAW", "violation")]


def s_cl_nodiscard_taken(g):
    log = base(g); log.discard("p1", "2C"); log.draw("p2", "discard", "2C")
    return log, [(log.discard("p2", "2C"), "CL-NODISCARD-TAKEN", "violation")]


def s_cl_nodiscard_joker(g):
    log = base(g); to_declaration(log); log.discard("p1", "2D"); log.draw("p2", "stock", "JK")
    return log, [(log.discard("p2", "JK"), "CL-NODISCARD-JOKER", "violation")]


def s_cl_discard(g):
    log = base(g); log.discard("p1", "2C")
    return log, [(log.discard("p1", "3H"), "CL-DISCARD", "violation")]


def s_cl_melds(g):
    hand = ["3H", "4H", "5H", "6H", "7H", "9C", "9D", "9S", "TD", "JD", "QD", "KC", "KD", "KD", "2C"]
    log = base(g, stacked_deck([hand, P2], "8D", ["AH"]))
    m = copy.deepcopy(MELDS); m[3]["cards"] = ["KC", "KD", "KD"]
    return log, [(declare(log, m, "2C"), "CL-MELDS", "violation")]


def s_cl_longrun(g):
    hand = ["3H", "4H", "5H", "9C", "9D", "9S", "9H", "TD", "JD", "QD", "KC", "KD", "KH", "KS", "2C"]
    log = base(g, stacked_deck([hand, P2], "8D", ["AH"]))
    m = [{"kind": "run", "cards": ["3H", "4H", "5H"]}, {"kind": "set", "cards": ["9C", "9D", "9S", "9H"]},
         {"kind": "run", "cards": ["TD", "JD", "QD"]}, {"kind": "set", "cards": ["KC", "KD", "KH", "KS"]}]
    return log, [(declare(log, m, "2C"), "CL-LONGRUN", "violation")]


def s_cl_rummy(g):
    log = base(g); to_declaration(log)
    return log, [(declare(log, MELDS[:3]), "CL-RUMMY", "violation")]


def s_cl_fresh(g):
    log = base(g); log.add("FreshPressed", "p2")
    return log, [(log.round(DECK, dealer=1, redeal=1), "CL-FRESH", "violation")]


def s_cl_timer(g):
    log = base(g); return log, [(log.discard("p1", "2C", dt=121), "CL-TIMER", "violation")]


def s_cl_autoplay(g):
    log = base(g)
    seq = log.sys("AutoPlayed", {"player": "p1", "drew": None, "discarded": "KH", "strike": 1}, dt=100)
    return log, [(seq, "CL-AUTOPLAY", "violation")]


def s_cl_strikes(g):
    log = base(g); log.discard("p1", "2C")
    seq = log.sys("PlayerRemoved", {"player": "p2", "reason": "strikes"}, dt=121)
    return log, [(seq, "CL-STRIKES", "violation")]


def s_cl_leave(g):
    log = base(g)
    return log, [(log.sys("PlayerRemoved", {"player": "p2", "reason": "left"}), "CL-LEAVE", "violation")]


def s_cl_result(g):
    log = base(g); to_declaration(log); declare(log)
    seq = log.sys("GameEnded", {"winners": ["p2"], "net": {"p1": 100, "p2": -100}})
    return log, [(seq, "C-CLAIM", "discrepancy")]


def s_cl_pot(g):
    log = base(g); to_declaration(log); declare(log)
    seq = log.sys("ChipsTransferred", {"transfers": [
        {"from": "p1", "to": "pot", "amount": 50, "reason": "stake"},
        {"from": "p2", "to": "pot", "amount": 100, "reason": "stake"},
        {"from": "pot", "to": "p1", "amount": 200, "reason": "pot"}]})
    return log, [(seq, "C-CLAIM", "discrepancy")]


def s_cl_next(g):
    """Two games at one table: p2 wins the first, but p1 starts the second."""
    first = base(g + "-a"); first.discard("p1", "2C"); first.add("PlayerLeft", "p1")
    first.sys("GameEnded", {"winners": ["p2"], "net": {"p1": -100, "p2": 100}})
    second = base(g + "-b"); second.clock = first.clock + 60_000
    second.events[0]["ts"] = second.events[1]["ts"]
    return (first, second), [(g + "-b", 0, "CL-NEXT", "violation")]


def s_log_chain(g):
    log, _ = s_clean(g)
    events = chain(log.events)
    events[4]["payload"]["card"] = "AS"
    return events, [(4, "LOG-CHAIN", "integrity")]


SCENARIOS = {
    "clean": s_clean, "C-DEAL": s_c_deal, "C-TURN": s_c_turn, "C-HOLD": s_c_hold, "C-RUN": s_c_run,
    "C-SET": s_c_set, "C-WILD": s_c_wild, "C-RESTOCK": s_c_restock, "C-CLAIM": s_c_claim,
    "CL-DEAL": s_cl_deal, "CL-FIRST": s_cl_first, "CL-DRAW": s_cl_draw,
    "CL-NODISCARD-TAKEN": s_cl_nodiscard_taken, "CL-NODISCARD-JOKER": s_cl_nodiscard_joker,
    "CL-DISCARD": s_cl_discard, "CL-MELDS": s_cl_melds, "CL-LONGRUN": s_cl_longrun,
    "CL-RUMMY": s_cl_rummy, "CL-POT": s_cl_pot, "CL-FRESH": s_cl_fresh, "CL-TIMER": s_cl_timer,
    "CL-AUTOPLAY": s_cl_autoplay, "CL-STRIKES": s_cl_strikes, "CL-LEAVE": s_cl_leave,
    "CL-RESULT": s_cl_result, "CL-NEXT": s_cl_next, "LOG-CHAIN": s_log_chain,
}


def build() -> dict[str, list]:
    manifest: dict[str, list] = {}
    for name, scenario in SCENARIOS.items():
        game_id = f"sample-{name.lower()}"
        logs, expect = scenario(game_id)
        if isinstance(logs, tuple):  # several games (CL-NEXT)
            events = [e for log in logs for e in log.events]
        else:
            events = logs.events if isinstance(logs, Log) else logs
            expect = [(game_id, *e) for e in expect]
        path = HERE / f"{name}.jsonl"
        path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events))
        manifest[path.name] = [list(e) for e in expect]
        if name not in ("CL-NEXT",):
            got = [(game_id, f.seq, f.rule, f.kind) for f in replay(events).findings]
            assert got == [tuple(e) for e in expect], (name, got, expect)
    # clean games from the platform driver (seeded random play)
    for seed in range(3):
        events = play("classic", ["ann", "bob", "cy"][: 2 + seed % 2], seed=seed,
                      game_id=f"sample-driver-{seed}", max_events=400)
        path = HERE / f"clean-driver-{seed}.jsonl"
        path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in chain(events)))
        manifest[path.name] = []
    (HERE / "manifest.json").write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    return manifest


if __name__ == "__main__":
    print(f"wrote {len(build())} sample logs to {HERE}")
