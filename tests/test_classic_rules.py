"""Classic rummy (RULES.md §0, §1): every rule ID broken on purpose, found at its seq.

The games are scripted on a stacked deck so each test reads like the dispute it models.
Seats: p1 (seat 0), p2 (seat 1), dealer seat 1, so p1 is the first player (15 cards).
"""

from __future__ import annotations

import copy

import pytest
from logkit import Log, findings, stacked_deck

from rummyguard.events.cards import format_card
from rummyguard.events.hashing import chain
from rummyguard.replay.engine import replay, state_at
from rummyguard.replay.rules.classic import check_next_games

P1_HAND = ["3H", "4H", "5H", "6H", "7H", "9C", "9D", "9S", "TD", "JD", "QD", "KC", "KD", "KH", "2C"]
P2_HAND = ["AS", "2S", "5C", "6D", "8S", "8C", "JC", "QS", "4D", "7C", "TC", "3S", "5D", "6S"]
UP = "8D"
STOCK_TOP = ["AH", "2D", "JK", "QC", "QH"]
DECK = stacked_deck([P1_HAND, P2_HAND], UP, STOCK_TOP)
WIN_MELDS = [
    {"kind": "run", "cards": ["3H", "4H", "5H", "6H", "7H"]},
    {"kind": "set", "cards": ["9C", "9D", "9S"]},
    {"kind": "run", "cards": ["TD", "JD", "QD"]},
    {"kind": "set", "cards": ["KC", "KD", "KH"]},
]


def opening(**created) -> Log:
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1, **created)
    log.round(DECK, dealer=1)
    return log


def play_to_declaration(log: Log) -> None:
    log.discard("p1", "2C")  # first turn: no draw
    log.draw("p2", "stock", "AH")
    log.discard("p2", "AH")
    log.draw("p1", "stock", "2D")


def claims(log: Log, *, pot_to_p1: int = 200, net=None, winners=("p1",)) -> None:
    log.sys("ChipsTransferred", {"transfers": [
        {"from": "p1", "to": "pot", "amount": 100, "reason": "stake"},
        {"from": "p2", "to": "pot", "amount": 100, "reason": "stake"},
        {"from": "pot", "to": "p1", "amount": pot_to_p1, "reason": "pot"},
    ]})
    log.sys("RoundEnded", {"round": 1, "winners": list(winners), "scores": {}})
    log.sys("GameEnded", {"winners": list(winners), "net": net or {"p1": 100, "p2": -100}})


def clean_game() -> Log:
    log = opening()
    play_to_declaration(log)
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2D"})
    claims(log)
    return log


def test_clean_scripted_game_has_no_finding():
    record = replay(clean_game().events)
    assert findings(record) == []
    assert record.results.winners == ["p1"]
    assert record.results.net == {"p1": 100, "p2": -100}


def test_chained_copy_is_clean_and_replays_byte_identically():
    events = chain(clean_game().events)
    a, b = replay(events).to_dict(), replay(copy.deepcopy(events)).to_dict()
    assert a == b and a["clean"]


# -- §0 common rules ----------------------------------------------------------------------


def test_C_DEAL_wrong_dealer_in_round_started():
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    seq = log.round(DECK, dealer=0)
    assert (seq, "C-DEAL", "violation") in findings(replay(log.events))


def test_C_DEAL_deck_is_not_the_variant_deck():
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    deck = list(DECK)
    deck[-1] = "AS"  # a third ace of spades replaces some card
    seq = log.round(deck, dealer=1)
    record = replay(log.events)
    assert (seq, "C-DEAL", "violation") in findings(record)
    assert "extra AS" in record.findings[0].message


def test_C_TURN_move_out_of_turn():
    log = opening()
    seq = log.draw("p2", "stock", "AH")  # p1 must open
    assert findings(replay(log.events))[0] == (seq, "C-TURN", "violation")


def test_C_TURN_player_not_seated():
    log = opening()
    seq = log.add("FreshPressed", "stranger")
    assert (seq, "C-TURN", "violation") in findings(replay(log.events))


def test_C_HOLD_discarding_a_card_not_held_halts():
    log = opening()
    seq = log.discard("p1", "AC")
    record = replay(log.events)
    assert findings(record) == [(seq, "C-HOLD", "integrity")]
    assert record.halted


def test_C_HOLD_wrong_stock_card_halts():
    log = opening()
    log.discard("p1", "2C")
    seq = log.draw("p2", "stock", "QC")  # the top is AH
    record = replay(log.events)
    assert findings(record) == [(seq, "C-HOLD", "integrity")]
    assert "AH" in record.findings[0].message


def test_C_RUN_declared_run_with_a_gap():
    log = opening()
    play_to_declaration(log)
    melds = copy.deepcopy(WIN_MELDS)
    melds[2] = {"kind": "run", "cards": ["TD", "QD", "JD"]}  # not low to high
    seq = log.add("DeclaredRummy", "p1", {"melds": melds, "discard": "2D"})
    assert (seq, "C-RUN", "violation") in findings(replay(log.events))


def test_C_RUN_wrap_around_is_illegal():
    hand = ["KH", "AH", "2H", "3H", "4H", "5H", "9C", "9D", "9S", "TD", "JD", "QD", "7C", "7D", "7S"]
    deck = stacked_deck([hand, P2_HAND], UP, STOCK_TOP)
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(deck, dealer=1)
    seq = log.add("DeclaredRummy", "p1", {"melds": [
        {"kind": "run", "cards": ["KH", "AH", "2H"]},
        {"kind": "run", "cards": ["3H", "4H", "5H"]},
        {"kind": "set", "cards": ["9C", "9D", "9S"]},
        {"kind": "run", "cards": ["TD", "JD", "QD"]},
        {"kind": "set", "cards": ["7C", "7D"]},
    ], "discard": "7S"})
    record = replay(log.events)
    rules = [f.rule for f in record.findings if f.seq == seq]
    assert "C-RUN" in rules and "wraps" in record.findings[0].message


def test_C_SET_mixed_ranks():
    log = opening()
    play_to_declaration(log)
    melds = copy.deepcopy(WIN_MELDS)
    melds[1] = {"kind": "set", "cards": ["9C", "9D", "TD"]}
    melds[2] = {"kind": "run", "cards": ["9S", "JD", "QD"]}
    seq = log.add("DeclaredRummy", "p1", {"melds": melds, "discard": "2D"})
    assert (seq, "C-SET", "violation") in findings(replay(log.events))


def _joker_game(run: dict) -> tuple[Log, int]:
    hand = ["3H", "4H", "JK", "6H", "7H", "9C", "9D", "9S", "TD", "JD", "QD", "KC", "KD", "KH", "2C"]
    deck = stacked_deck([hand, P2_HAND], UP, STOCK_TOP)
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(deck, dealer=1)
    melds = copy.deepcopy(WIN_MELDS)
    melds[0] = run
    seq = log.add("DeclaredRummy", "p1", {"melds": melds, "discard": "2C"})
    return log, seq


def test_C_WILD_as_names_a_card_the_joker_cannot_be():
    log, seq = _joker_game({"kind": "run", "cards": ["3H", "4H", "JK", "6H", "7H"], "as": {"2": "8H"}})
    record = replay(log.events)
    assert findings(record) == [(seq, "C-WILD", "violation")]
    assert "stands for 5H, not 8H" in record.findings[0].message


def test_joker_in_the_middle_stands_positionally():
    log, _ = _joker_game({"kind": "run", "cards": ["3H", "4H", "JK", "6H", "7H"], "as": {"2": "5H"}})
    assert findings(replay(log.events)) == []
    log, _ = _joker_game({"kind": "run", "cards": ["3H", "4H", "JK", "6H", "7H"]})
    record = replay(log.events)
    assert findings(record) == []
    assert record.state.snapshot()["melds"][0]["stands"] == ["3H", "4H", "5H", "6H", "7H"]


def test_joker_in_the_wrong_place_breaks_the_run():
    log, seq = _joker_game({"kind": "run", "cards": ["3H", "4H", "6H", "JK", "7H"]})
    assert findings(replay(log.events)) == [(seq, "C-RUN", "violation")]


def test_C_RESTOCK_replenished_while_stock_remains():
    log = opening()
    log.discard("p1", "2C")
    seq = log.sys("StockReplenished", {"stock": []})
    assert (seq, "C-RESTOCK", "violation") in findings(replay(log.events))


def test_C_CLAIM_wrong_payout_is_a_discrepancy_at_the_first_differing_transfer():
    log = opening()
    play_to_declaration(log)
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2D"})
    claims(log, pot_to_p1=190, net={"p1": 90, "p2": -100})
    record = replay(log.events)
    got = findings(record)
    transfer_seq = 7
    assert (transfer_seq, "C-CLAIM", "discrepancy") in got  # multiset of transfers
    assert (9, "C-CLAIM", "discrepancy") in got  # GameEnded.net, player by player
    text = " ".join(f.message for f in record.findings)
    assert "pot->p1 190" in text and "pot->p1 200" in text


def test_C_CLAIM_missing_transfer_is_reported_at_game_ended():
    log = opening()
    play_to_declaration(log)
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2D"})
    log.sys("ChipsTransferred", {"transfers": [
        {"from": "p1", "to": "pot", "amount": 100, "reason": "stake"},
        {"from": "p2", "to": "pot", "amount": 100, "reason": "stake"}]})
    log.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {}})
    end = log.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    record = replay(log.events)
    assert findings(record) == [(end, "C-CLAIM", "discrepancy")]
    assert "due but not claimed: pot->p1 200" in record.findings[0].message


# -- §1 classic -----------------------------------------------------------------------------


def test_CL_DEAL_deck_too_short_halts():
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    seq = log.round(DECK[:20], dealer=1)
    record = replay(log.events)
    assert (seq, "CL-DEAL", "integrity") in findings(record) and record.halted


def test_CL_DEAL_first_player_gets_15_in_circuits():
    snap = state_at(opening().events, 1)
    assert sorted(snap["hands"]["p1"]) == sorted(P1_HAND)
    assert sorted(snap["hands"]["p2"]) == sorted(P2_HAND)
    assert snap["discard_pile"] == [UP] and snap["stock"][:2] == ["AH", "2D"]


def test_CL_FIRST_first_player_may_not_draw():
    log = opening()
    seq = log.draw("p1", "stock", "AH")
    assert findings(replay(log.events))[0] == (seq, "CL-FIRST", "violation")


def test_CL_DRAW_discard_without_drawing():
    log = opening()
    log.discard("p1", "2C")
    seq = log.discard("p2", "AS")
    assert findings(replay(log.events)) == [(seq, "CL-DRAW", "violation")]


def test_CL_DRAW_two_draws_in_one_turn():
    log = opening()
    log.discard("p1", "2C")
    log.draw("p2", "stock", "AH")
    seq = log.draw("p2", "stock", "2D")
    assert findings(replay(log.events)) == [(seq, "CL-DRAW", "violation")]


def test_CL_DRAW_classic_takes_only_the_top_discard():
    log = opening()
    log.discard("p1", "2C")
    seq = log.draw("p2", "discard", "8D", "2C")
    assert (seq, "CL-DRAW", "violation") in findings(replay(log.events))


def test_CL_NODISCARD_TAKEN():
    log = opening()
    log.discard("p1", "2C")
    log.draw("p2", "discard", "2C")
    seq = log.discard("p2", "2C")
    assert findings(replay(log.events)) == [(seq, "CL-NODISCARD-TAKEN", "violation")]


def test_CL_NODISCARD_TAKEN_allows_another_copy_of_the_same_code():
    hand2 = ["AS", "2S", "5C", "6D", "8S", "8C", "JC", "QS", "4D", "7C", "TC", "3S", "5D", "2C"]  # p2 holds 2C already
    deck = stacked_deck([P1_HAND, hand2], UP, STOCK_TOP)
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(deck, dealer=1)
    log.discard("p1", "2C")
    log.draw("p2", "discard", "2C")
    log.discard("p2", "2C")
    assert findings(replay(log.events)) == []


def test_CL_NODISCARD_JOKER():
    log = opening()
    log.discard("p1", "2C")
    log.draw("p2", "stock", "AH")
    log.discard("p2", "AH")
    log.draw("p1", "stock", "2D")
    log.discard("p1", "2D")
    log.draw("p2", "stock", "JK")
    seq = log.discard("p2", "JK")
    assert findings(replay(log.events)) == [(seq, "CL-NODISCARD-JOKER", "violation")]


def test_CL_DISCARD_two_discards_in_one_turn():
    log = opening()
    log.discard("p1", "2C")
    seq = log.discard("p1", "3H")
    assert findings(replay(log.events)) == [(seq, "CL-DISCARD", "violation")]


def test_CL_DISCARD_turn_ends_without_a_discard():
    log = opening()
    log.discard("p1", "2C")
    log.draw("p2", "stock", "AH")
    seq = log.draw("p1", "stock", "2D")  # p2 never discarded
    assert findings(replay(log.events)) == [(seq, "CL-DISCARD", "violation")]


def test_CL_MELDS_set_of_two():
    log = opening()
    play_to_declaration(log)
    melds = copy.deepcopy(WIN_MELDS)
    melds[1] = {"kind": "set", "cards": ["9C", "9D"]}
    melds[0] = {"kind": "run", "cards": ["3H", "4H", "5H", "6H", "7H"]}
    melds.append({"kind": "set", "cards": ["9S"]})
    seq = log.add("DeclaredRummy", "p1", {"melds": melds, "discard": "2D"})
    assert (seq, "CL-MELDS", "violation") in findings(replay(log.events))


def test_CL_MELDS_set_repeats_a_suit():
    hand = ["3H", "4H", "5H", "6H", "7H", "9C", "9D", "9S", "TD", "JD", "QD", "KC", "KD", "KD", "2C"]
    deck = stacked_deck([hand, P2_HAND], UP, STOCK_TOP)
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(deck, dealer=1)
    melds = copy.deepcopy(WIN_MELDS)
    melds[3] = {"kind": "set", "cards": ["KC", "KD", "KD"]}
    seq = log.add("DeclaredRummy", "p1", {"melds": melds, "discard": "2C"})
    assert findings(replay(log.events)) == [(seq, "CL-MELDS", "violation")]


def test_CL_LONGRUN_no_run_of_four():
    hand = ["3H", "4H", "5H", "9C", "9D", "9S", "9H", "TD", "JD", "QD", "KC", "KD", "KH", "KS", "2C"]
    deck = stacked_deck([hand, P2_HAND], UP, STOCK_TOP)
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(deck, dealer=1)
    seq = log.add("DeclaredRummy", "p1", {"melds": [
        {"kind": "run", "cards": ["3H", "4H", "5H"]},
        {"kind": "set", "cards": ["9C", "9D", "9S", "9H"]},
        {"kind": "run", "cards": ["TD", "JD", "QD"]},
        {"kind": "set", "cards": ["KC", "KD", "KH", "KS"]},
    ], "discard": "2C"})
    assert findings(replay(log.events)) == [(seq, "CL-LONGRUN", "violation")]


def test_CL_LONGRUN_joker_counts_unless_configured_otherwise():
    hand = ["3H", "4H", "5H", "JK", "9C", "9D", "9S", "9H", "TD", "JD", "QD", "KC", "KD", "KH", "2C"]
    deck = stacked_deck([hand, P2_HAND], UP, STOCK_TOP)
    melds = [
        {"kind": "run", "cards": ["3H", "4H", "5H", "JK"]},
        {"kind": "set", "cards": ["9C", "9D", "9S", "9H"]},
        {"kind": "run", "cards": ["TD", "JD", "QD"]},
        {"kind": "set", "cards": ["KC", "KD", "KH"]},
    ]
    for allow in (True, False):
        log = Log()
        log.created("classic", ["p1", "p2"], dealer=1, rules={"long_run_allows_joker": allow})
        log.round(deck, dealer=1)
        seq = log.add("DeclaredRummy", "p1", {"melds": melds, "discard": "2C"})
        expect = [] if allow else [(seq, "CL-LONGRUN", "violation")]
        assert findings(replay(log.events)) == expect


def test_CL_RUMMY_melds_do_not_cover_the_hand():
    log = opening()
    play_to_declaration(log)
    seq = log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS[:3], "discard": "2D"})
    record = replay(log.events)
    assert (seq, "CL-RUMMY", "violation") in findings(record)
    assert "leave KC KD KH" in " ".join(f.message for f in record.findings)


def test_CL_RUMMY_declared_before_drawing():
    log = opening()
    log.discard("p1", "2C")
    log.draw("p2", "stock", "AH")
    log.discard("p2", "AH")
    seq = log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS[:3], "discard": "KC"})
    assert (seq, "CL-RUMMY", "violation") in findings(replay(log.events))


def test_CL_RUMMY_first_player_may_declare_on_first_turn():
    log = opening()
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2C"})
    claims(log)
    assert findings(replay(log.events)) == []


def test_CL_RUMMY_rake_goes_to_the_house():
    log = opening(rules={"rake_bps": 500})
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2C"})
    record = replay(log.events)
    assert {(t.src, t.dst, t.amount) for t in record.transfers} >= {("pot", "house", 10), ("pot", "p1", 190)}
    assert record.results.net == {"p1": 90, "p2": -100}


def test_CL_POT_wrong_stake_claim_is_a_C_CLAIM_discrepancy():
    log = opening()
    play_to_declaration(log)
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2D"})
    seq = log.sys("ChipsTransferred", {"transfers": [
        {"from": "p1", "to": "pot", "amount": 50, "reason": "stake"},
        {"from": "p2", "to": "pot", "amount": 100, "reason": "stake"},
        {"from": "pot", "to": "p1", "amount": 200, "reason": "pot"}]})
    record = replay(log.events)
    assert findings(record) == [(seq, "C-CLAIM", "discrepancy")]
    assert "p1->pot 50" in record.findings[0].message


def test_CL_FRESH_unanimous_fresh_redeals_and_doubles_the_pot_once():
    log = opening()
    log.add("FreshPressed", "p2")
    log.add("FreshPressed", "p1")
    log.round(DECK, dealer=1, redeal=1)
    log.add("FreshPressed", "p1")
    log.add("FreshPressed", "p2")
    log.round(DECK, dealer=1, redeal=2)
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2C"})
    record = replay(log.events)
    assert findings(record) == []
    assert record.results.net == {"p1": 200, "p2": -200}


def test_CL_FRESH_move_instead_of_the_redeal():
    log = opening()
    log.add("FreshPressed", "p1")
    log.add("FreshPressed", "p2")
    seq = log.discard("p1", "2C")
    assert findings(replay(log.events)) == [(seq, "CL-FRESH", "violation")]


def test_CL_FRESH_redeal_without_unanimous_fresh():
    log = opening()
    log.add("FreshPressed", "p2")
    seq = log.round(DECK, dealer=1, redeal=1)
    got = findings(replay(log.events))
    assert (seq, "CL-FRESH", "violation") in got


def test_CL_TIMER_late_move():
    log = opening()
    seq = log.discard("p1", "2C", dt=120.5)  # first turn: 60 s + 60 s
    assert findings(replay(log.events)) == [(seq, "CL-TIMER", "violation")]


def test_CL_TIMER_later_turns_have_a_30_second_base():
    log = opening()
    log.discard("p1", "2C")
    log.draw("p2", "stock", "AH", dt=100)  # p2's first turn: fine (< 120 s)
    log.discard("p2", "AH")
    seq = log.draw("p1", "stock", "2D", dt=90.001)  # p1's second turn: 30 + 60
    assert findings(replay(log.events)) == [(seq, "CL-TIMER", "violation")]


def autoplay(log: Log, player: str, drew, discarded, strike: int, dt: float) -> int:
    return log.add("AutoPlayed", "system", {"player": player, "drew": drew, "discarded": discarded,
                                            "strike": strike}, dt=dt)


def test_CL_AUTOPLAY_correct_first_turn_autoplay_is_clean():
    log = opening()
    autoplay(log, "p1", None, "KH", 1, dt=120)  # highest non-joker: KH (K, then H < S)
    assert findings(replay(log.events)) == []


def test_CL_AUTOPLAY_too_early():
    log = opening()
    seq = autoplay(log, "p1", None, "KH", 1, dt=119.999)
    assert findings(replay(log.events)) == [(seq, "CL-AUTOPLAY", "violation")]


def test_CL_AUTOPLAY_wrong_card():
    log = opening()
    log.discard("p1", "2C")
    seq = autoplay(log, "p2", "AH", "QS", 1, dt=120)
    record = replay(log.events)
    assert findings(record) == [(seq, "CL-AUTOPLAY", "violation")]
    assert "discard AH" in record.findings[0].message


def test_CL_AUTOPLAY_drawn_joker_discards_highest_natural():
    log = opening()
    log.discard("p1", "2C")
    log.draw("p2", "stock", "AH")
    log.discard("p2", "AH")
    log.draw("p1", "stock", "2D")
    log.discard("p1", "2D")
    autoplay(log, "p2", "JK", "AS", 1, dt=90)
    assert findings(replay(log.events)) == []


def strikes_game(fourth: str) -> tuple[Log, int]:
    log = opening()
    log.discard("p1", "2C")
    autoplay(log, "p2", "AH", "AH", 1, dt=120)
    log.draw("p1", "stock", "2D")
    log.discard("p1", "2D")
    autoplay(log, "p2", "JK", "AS", 2, dt=90)
    log.draw("p1", "stock", "QC")
    log.discard("p1", "QC")
    autoplay(log, "p2", "QH", "QH", 3, dt=90)
    log.draw("p1", "discard", "QH")
    log.discard("p1", "9S")
    if fourth == "remove":
        seq = log.sys("PlayerRemoved", {"player": "p2", "reason": "strikes"}, dt=90)
    else:
        # the stock's real top card, so the log is sound and CL-STRIKES its one finding
        state = replay(log.events).state
        assert state is not None
        top = format_card(state.stock[-1])
        seq = autoplay(log, "p2", top, top, 4, dt=90)
    return log, seq


def test_CL_STRIKES_fourth_timeout_removes_and_last_player_wins():
    log, _ = strikes_game("remove")
    log.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    record = replay(log.events)
    assert findings(record) == []
    assert record.results.winners == ["p1"]


def test_CL_STRIKES_fourth_timeout_auto_played_instead_of_removal():
    log, seq = strikes_game("autoplay")
    assert findings(replay(log.events)) == [(seq, "CL-STRIKES", "violation")]


def test_CL_STRIKES_removed_before_three_strikes():
    log = opening()
    log.discard("p1", "2C")
    seq = log.sys("PlayerRemoved", {"player": "p2", "reason": "strikes"}, dt=121)
    record = replay(log.events)
    assert findings(record) == [(seq, "CL-STRIKES", "violation")]
    assert "0 auto-plays" in record.findings[0].message


def test_CL_LEAVE_leaving_forfeits_and_next_turn_starts():
    log = Log()
    log.created("classic", ["p1", "p2", "p3"], dealer=2)
    deck = stacked_deck([P1_HAND, P2_HAND, ["AC", "2H", "3C", "4C", "5S", "6C", "7S", "8H", "TS", "JS", "KS", "4S", "6H", "7D"]],
                        UP, STOCK_TOP)
    log.round(deck, dealer=2)
    log.discard("p1", "2C")
    log.add("PlayerLeft", "p2", dt=5)
    log.sys("PlayerRemoved", {"player": "p2", "reason": "left"})
    log.draw("p3", "stock", "AH", dt=100)  # p3's clock started at PlayerLeft
    log.discard("p3", "AH")
    log.draw("p1", "stock", "2D")
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2D"})
    record = replay(log.events)
    assert findings(record) == []
    assert record.results.net == {"p1": 200, "p2": -100, "p3": -100}


def test_CL_LEAVE_removed_for_leaving_without_leaving():
    log = opening()
    seq = log.sys("PlayerRemoved", {"player": "p2", "reason": "left"})
    assert findings(replay(log.events)) == [(seq, "CL-LEAVE", "violation")]


def test_CL_RESULT_wrong_winner_claim():
    log = opening()
    play_to_declaration(log)
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2D"})
    seq = log.sys("GameEnded", {"winners": ["p2"], "net": {"p1": 100, "p2": -100}})
    record = replay(log.events)
    assert findings(record) == [(seq, "C-CLAIM", "discrepancy")]
    assert "claimed ['p2'], recomputed ['p1']" in record.findings[0].message


def test_CL_RESULT_round_scores_are_empty_in_classic():
    log = opening()
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2C"})
    seq = log.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 10}})
    assert findings(replay(log.events)) == [(seq, "C-CLAIM", "discrepancy")]


def test_CL_NEXT_previous_winner_must_start():
    table = [
        ("g1", 1, ["p1", "p2"], ["p1"]),
        ("g2", 1, ["p1", "p2"], ["p2"]),  # p1 (left of dealer 1) starts: right
        ("g3", 1, ["p1", "p2"], ["p1"]),  # p1 starts, but p2 won g2: wrong
    ]
    assert check_next_games(table) == [
        ("g3", "the previous game's winner p2 should start; p1 does")]


# -- the log itself ------------------------------------------------------------------------


@pytest.mark.parametrize("what", ["payload", "hash"])
def test_LOG_CHAIN_tampering_is_found_at_its_seq(what):
    events = chain(clean_game().events)
    if what == "payload":
        events[4]["payload"]["card"] = "AS"  # p2 holds AS too: a plausible edit
    else:
        events[4]["hash"] = "0" * 64
    got = findings(replay(events))
    assert (4, "LOG-CHAIN", "integrity") in got


def test_LOG_SEQ_gap_and_repeat():
    events = clean_game().events
    gap = events[:3] + events[4:]
    assert (4, "LOG-SEQ", "integrity") in findings(replay(gap))
    rep = [*events[:4], events[3], *events[4:]]
    assert (3, "LOG-SEQ", "integrity") in findings(replay(rep))


def test_LOG_GAME_must_start_with_game_created():
    events = clean_game().events[1:]
    record = replay(events)
    assert findings(record) == [(1, "LOG-SEQ", "integrity"), (1, "LOG-GAME", "integrity")]
    assert record.halted


def test_LOG_EVENT_type_of_another_variant():
    log = opening()
    seq = log.add("CardPlayed", "p1", {"card": "2C"})
    assert findings(replay(log.events)) == [(seq, "LOG-EVENT", "integrity")]


def test_LOG_RULES_unknown_config_key():
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1, rules={"house_special": 1})
    assert findings(replay(log.events)) == [(0, "LOG-RULES", "integrity")]


def test_upcast_v1_events_replay_like_v2():
    events = clean_game().events
    events[3] = {**events[3], "v": 1, "payload": {"from": "deck", "card": {"rank": "A", "suit": "hearts"}}}
    events[4] = {**events[4], "v": 1, "payload": {"card": {"rank": "A", "suit": "hearts"}}}
    assert findings(replay(events)) == []


def test_per_player_view_hides_other_hands_and_the_stock():
    events = clean_game().events
    view = state_at(events, 3, viewer="p2")
    assert set(view["hands"]) == {"p2"} and "stock" not in view
    assert view["hand_counts"] == {"p1": 14, "p2": 15}
    assert view["discard_pile"] == ["8D", "2C"]
