"""Audit 6 (differential: tests/oracle_classic_r500.py against the engine) — the
discrepancies the oracle found in classic rummy and Rummy 500, each pinned on a
hand-built log (both fixed in the engine; each test failed before its fix).

1. A game whose only ``ChipsTransferred`` lists no transfer (a platform claiming
that no chips moved, while stakes and the pot did) replays clean. EVENTS.md: "A game's
``ChipsTransferred`` events, if it has any, are compared together as one multiset";
RULES.md C-CLAIM: "if a game logs any, all of its transfers together must equal ...
every transfer the replay computes ... GameEnded for a missing transfer". The engine
keys the comparison on the transfers it collected, not on the events: an empty list
(or one holding only zero amounts, which it skips) counts as no claim at all. The
project itself reads an empty list as a claim ("A claim that no chips moved",
tests/test_audit_events.py::test_empty_chips_transferred_is_accepted).

Fix (replay/engine.py, ``GameEngine``): remember that a ``ChipsTransferred`` was
logged (``_claimed_transfers``) and test that flag, not ``self.claimed``, in
``_check_transfers``; reset it where ``replay(until_seq=...)`` clears ``claimed``.

2. Rummy 500: a ``PlayerRemoved`` (reason ``left``) confirming a ``PlayerLeft`` is a
C-CLAIM when the player left after the game ended ("removed for leaving, but he did not
leave") or after R5-CHIPS busted him / R5-GAME eliminated him ("by the rules he is out
(bust)"). EVENTS.md: ``PlayerLeft`` "may come at any moment"; RULES.md C-CLAIM: a claim
is a finding when it differs from the recomputed value, and this one does not: he left.
The project's own reading (tests/test_audit3_consistency.py: "left removals confirming a
leave are no finding") and classic (a removed player may leave, and its removal claim
is accepted) agree. ``Rummy500.apply_PlayerLeft`` returns before noting the leave when
the game is over or the player is out already, so ``apply_PlayerRemoved`` never learns it.

Fix (replay/rules/r500.py, ``Rummy500``): keep ``self.left: set[int]`` (every seat whose
player left, at any moment), filled in ``apply_PlayerLeft`` before its early return;
in ``apply_PlayerRemoved``, after the unseated check, return without a finding when
``reason == "left" and seat in self.left``.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from logkit import Log, findings, stacked_deck
from oracle_classic_r500 import oracle
from r500kit import Script, go_out_round

from rummyguard.replay.engine import replay

DATA = Path(__file__).parent / "data"

# classic: the scripted game of tests/test_classic_rules.py (p1 first, declares)
P1_HAND = ["3H", "4H", "5H", "6H", "7H", "9C", "9D", "9S", "TD", "JD", "QD", "KC", "KD", "KH", "2C"]
P2_HAND = ["AS", "2S", "5C", "6D", "8S", "8C", "JC", "QS", "4D", "7C", "TC", "3S", "5D", "6S"]
WIN_MELDS = [
    {"kind": "run", "cards": ["3H", "4H", "5H", "6H", "7H"]},
    {"kind": "set", "cards": ["9C", "9D", "9S"]},
    {"kind": "run", "cards": ["TD", "JD", "QD"]},
    {"kind": "set", "cards": ["KC", "KD", "KH"]},
]


def classic_game(transfers: list[dict]) -> tuple[list[dict], int]:
    """p1 declares; the claims log ``transfers`` and a true RoundEnded and GameEnded.
    Returns the events and the seq of GameEnded."""
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(stacked_deck([P1_HAND, P2_HAND], "8D", ["AH", "2D"]), dealer=1)
    log.discard("p1", "2C")
    log.draw("p2", "stock", "AH")
    log.discard("p2", "AH")
    log.draw("p1", "stock", "2D")
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2D"})
    log.sys("ChipsTransferred", {"transfers": transfers})
    log.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {}})
    end = log.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    return log.events, end


def r500_game(transfers: list[dict]) -> tuple[list[dict], int]:
    """One round (rounds mode, 1 round): p1 goes out 88 to -87 and takes the 200 pot."""
    s = Script(rules={"mode": "rounds", "rounds": 1})
    go_out_round(s)
    s.sys("ChipsTransferred", {"transfers": transfers})
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 88, "p2": -87}})
    end = s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    return s.log.events, end


TRUE = [{"from": "p1", "to": "pot", "amount": 100, "reason": "stake"},
        {"from": "p2", "to": "pot", "amount": 100, "reason": "stake"},
        {"from": "pot", "to": "p1", "amount": 200, "reason": "pot"}]
ZERO_RAKE_ONLY = [{"from": "pot", "to": "house", "amount": 0, "reason": "rake"}]


@pytest.mark.parametrize("build", [classic_game, r500_game], ids=["classic", "r500"])
def test_true_transfers_are_clean_in_both(build) -> None:
    """Guard: the same game with its true transfers is clean for engine and oracle."""
    events, _end = build(TRUE)
    assert findings(replay(events)) == []
    assert oracle(events).claims == []


@pytest.mark.parametrize("build", [classic_game, r500_game], ids=["classic", "r500"])
@pytest.mark.parametrize("transfers", [[], ZERO_RAKE_ONLY], ids=["empty", "zero-rake-only"])
def test_a_chips_transferred_claiming_nothing_moved_is_C_CLAIM_at_game_ended(
        build, transfers: list[dict]) -> None:
    """The platform logs ChipsTransferred with no chip moving, but stakes and the pot did
    move: every due transfer is missing, reported at GameEnded (C-CLAIM)."""
    events, end = build(transfers)
    assert oracle(events).claims == [(end, "C-CLAIM", "discrepancy")]  # the oracle's verdict
    assert findings(replay(events)) == [(end, "C-CLAIM", "discrepancy")]


def test_a_game_without_any_chips_transferred_is_no_finding() -> None:
    """The boundary of the fix: a transfer claim that is not logged is not a finding
    (RULES.md C-CLAIM), for engine and oracle alike."""
    events, _end = classic_game([])
    events = [e for e in events if e["type"] != "ChipsTransferred"]
    for i, e in enumerate(events):
        e["seq"] = i
    assert findings(replay(events)) == []
    assert oracle(events).claims == []


def leave_and_removal(events: list[dict], at: int, who: str) -> list[dict]:
    """``events`` with ``who`` leaving at index ``at`` and the platform's removal claim
    for it, renumbered (no hash chain: these logs are built, not stored)."""
    events = [{k: v for k, v in e.items() if k not in ("hash", "prev_hash")} for e in events]
    ts, gid = events[at - 1]["ts"], events[0]["game_id"]
    events[at:at] = [
        {"event_id": "x-left", "game_id": gid, "seq": 0, "type": "PlayerLeft", "v": 1, "ts": ts,
         "actor": who, "payload": {}},
        {"event_id": "x-removed", "game_id": gid, "seq": 0, "type": "PlayerRemoved", "v": 1,
         "ts": ts, "actor": "system", "payload": {"player": who, "reason": "left"}},
    ]
    for i, e in enumerate(events):
        e["seq"], e["event_id"] = i, f"{gid}-{i:04d}"
    return events


def tournament() -> list[dict]:
    """tests/data/r500/clean-tournament.jsonl: cy is bust after round 8 (PlayerRemoved
    bust at seq 265); ann and bob play on until bob is bust too."""
    lines = (DATA / "r500" / "clean-tournament.jsonl").read_bytes().splitlines()
    return [orjson.loads(line) for line in lines if line.strip()]


def test_leaves_without_a_removal_claim_are_clean_today() -> None:
    """Guard: the leaves alone are no finding (PlayerLeft may come at any moment)."""
    events, _end = r500_game(TRUE)
    events = leave_and_removal(events, len(events), "p2")[:-1]
    assert findings(replay(events)) == [] and oracle(events).claims == []
    events = leave_and_removal(tournament(), 266, "cy")
    events = [e for e in events if e["type"] != "PlayerRemoved" or e["payload"]["reason"] != "left"]
    for i, e in enumerate(events):
        e["seq"] = i
    assert findings(replay(events)) == [] and oracle(events).claims == []


def _leave_after_the_end(build, who: str) -> list[dict]:
    """Both players of a finished game may leave the table; the platform logs each
    removal for leaving. Nothing differs from the facts: no finding."""
    events, _end = build(TRUE)
    events = leave_and_removal(events, len(events), who)
    assert oracle(events).claims == []  # the oracle's verdict
    return events


@pytest.mark.parametrize("who", ["p1", "p2"], ids=["winner", "loser"])
def test_classic_leave_after_the_game_ended_and_its_removal_claim_are_no_finding(who: str) -> None:
    assert findings(replay(_leave_after_the_end(classic_game, who))) == []


@pytest.mark.parametrize("who", ["p1", "p2"], ids=["winner", "loser"])
def test_r500_leave_after_the_game_ended_and_its_removal_claim_are_no_finding(who: str) -> None:
    """Today: C-CLAIM "removed for leaving, but he did not leave" at the removal."""
    assert findings(replay(_leave_after_the_end(r500_game, who))) == []


def test_r500_bust_player_who_leaves_the_table_and_its_removal_claim_are_no_finding() -> None:
    """cy, bust (and removed as such) after round 8, leaves the table; the platform logs
    his removal for leaving. The game's results and every other claim are unchanged."""
    events = leave_and_removal(tournament(), 266, "cy")
    assert oracle(events).claims == []  # the oracle's verdict
    record = replay(events)
    assert record.results.winners == ["ann"]
    assert findings(record) == []
