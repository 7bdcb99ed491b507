"""Audit 7 (classic, r500): engine discrepancies found by the independent move-legality
referee (tests/referee_classic_r500.py, tests/test_referee_classic_r500.py).

Each test is a hand-built log that pins what spec/RULES.md says; each failed on the
engine before its fix. Each test also checks that the referee gives the spec's answer.
"""

from __future__ import annotations

from logkit import Log, findings, stacked_deck
from r500kit import P1, P2, RUN_D, Script
from referee_classic_r500 import referee

from rummyguard.replay.engine import replay

CL_P1 = ["3H", "4H", "5H", "6H", "7H", "9C", "9D", "9S", "TD", "JD", "QD", "KC", "KD", "KH", "2C"]
CL_P2 = ["AS", "2S", "5C", "6D", "8S", "8C", "JC", "QS", "4D", "7C", "TC", "3S", "5D", "6S"]


def _classic_opening() -> Log:
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(stacked_deck([CL_P1, CL_P2], "8D", ["AH", "2D", "JK", "QC", "QH"]), dealer=1)
    return log


# -- CL-TIMER: every late move is late -----------------------------------------------------------


def _late_turn() -> tuple[Log, int, int]:
    """p2's first turn (60 s + 60 s from p1's discard): his draw at 125 s and his discard
    at 127 s are both past the clocks."""
    log = _classic_opening()
    log.discard("p1", "2C")
    draw = log.draw("p2", "stock", "AH", dt=125)
    discard = log.discard("p2", "AH", dt=2)
    return log, draw, discard


def test_referee_CL_TIMER_finds_each_late_move_of_a_turn():
    log, draw, discard = _late_turn()
    assert referee(log.events).findings == [(draw, "CL-TIMER", "violation"),
                                            (discard, "CL-TIMER", "violation")]


def test_CL_TIMER_every_late_move_of_a_turn_is_a_finding():
    log, draw, discard = _late_turn()
    assert findings(replay(log.events)) == [(draw, "CL-TIMER", "violation"),
                                            (discard, "CL-TIMER", "violation")]


# -- R5-LAYOFF: a run a misfit lay-off broke is no longer a run ---------------------------------


def _misfit_then_extend() -> tuple[Script, int, int]:
    """p1 melds TD-KD; p2 lays 9D off at the HIGH end, where it does not fit (R5-LAYOFF,
    applied where the platform put it: the meld reads TD JD QD KD 9D); p1 then lays AD off
    at the high end. AD would extend TD-KD, but the meld's high end is 9D now: TD..KD 9D AD
    is no run (C-RUN: consecutive rank), so AD does not fit either. (Laying a card off at
    the other end, below TD, is left as the engine decides: the run keeps its shape.)"""
    s = Script(hands=[["AD", *P1[1:]], ["9D", "2H", *P2[2:]]], up="5S",
               stock=["KS", "3H", "JK", "QH", "3C"])
    s.draw("p1")
    s.meld("p1", RUN_D)
    s.log.discard("p1", "2C")
    s.draw("p2")
    misfit = s.layoff("p2", "9D", 0, "high")
    s.log.discard("p2", "2H")
    s.draw("p1")
    extend = s.layoff("p1", "AD", 0, "high")
    s.log.discard("p1", "4H")
    return s, misfit, extend


def test_referee_R5_LAYOFF_onto_a_run_broken_by_a_misfit():
    s, misfit, extend = _misfit_then_extend()
    assert referee(s.log.events).findings == [(misfit, "R5-LAYOFF", "violation"),
                                              (extend, "R5-LAYOFF", "violation")]


def test_R5_LAYOFF_onto_a_run_broken_by_an_earlier_misfit_lay_off():
    s, misfit, extend = _misfit_then_extend()
    assert findings(replay(s.log.events)) == [(misfit, "R5-LAYOFF", "violation"),
                                              (extend, "R5-LAYOFF", "violation")]


# -- R5-VALUES: a wrongly named joker still stands for its place ----------------------------------


def _misnamed_joker_round() -> tuple[Script, int, int]:
    """p1 melds 8S JK TS naming the joker 8C (C-WILD: by its place it stands for 9S), then
    two good runs; nobody goes out, the stock runs dry. The platform scores p1's joker as
    the 9S it stands for: 8 + 9 + 10 + 18 + 40 - (7C + 2C) = 76; p2 holds his 13 cards."""
    p1 = ["8S", "JK", "TS", "3H", "4H", "5H", "6H", "TD", "JD", "QD", "KD", "7C", "2C"]
    p2 = ["AS", "2S", "5C", "6D", "9S", "8C", "JC", "QS", "4D", "9C", "TC", "3S", "5D"]
    s = Script(hands=[p1, p2], up="9D", stock=["2D"])
    s.draw("p1")  # 2D
    bad = s.meld("p1", {"kind": "run", "cards": ["8S", "JK", "TS"], "as": {"1": "8C"}})
    s.meld("p1", {"kind": "run", "cards": ["3H", "4H", "5H", "6H"]})
    s.meld("p1", RUN_D)
    s.log.discard("p1", "2D")
    s.exhaust(["p2", "p1"])
    p2_left = 15 + 2 + 5 + 6 + 9 + 8 + 10 + 10 + 4 + 9 + 10 + 3 + 5
    claim = s.sys("RoundEnded", {"round": 1, "winners": ["p1"],
                                 "scores": {"p1": 76, "p2": -p2_left}})
    return s, bad, claim


def test_referee_misnamed_joker_is_C_WILD_only():
    s, bad, _ = _misnamed_joker_round()
    assert referee(s.log.events).findings == [(bad, "C-WILD", "violation")]


def test_R5_VALUES_a_misnamed_joker_is_worth_the_card_its_place_fixes():
    s, bad, _ = _misnamed_joker_round()
    assert findings(replay(s.log.events)) == [(bad, "C-WILD", "violation")]
