"""Rummy 500 (RULES.md §0, §2): every rule ID broken on purpose and found at its seq,
plus the scoring, game modes and chips recomputed from scripted games.

Seats p1 (seat 0), p2 (seat 1), dealer seat 1: p1 starts. See tests/r500kit.py for the
stacked hands (p1 can meld 3H-6H, four 7s and TD-KD at once).
"""

from __future__ import annotations

import copy

import pytest
from logkit import findings
from r500kit import P1, P1_PENALTY, P2, P2_PENALTY, RUN_D, RUN_H, SET_7, UP, Script, go_out_round, pot_claims

from rummyguard.events.hashing import chain
from rummyguard.replay.engine import replay, state_at

P1J = ["3H", "4H", "5H", "JK", "7C", "7D", "7S", "7H", "TD", "JD", "QD", "KD", "2C"]  # JK for 6H
P2J = ["AS", "2S", "5C", "6H", "9S", "8C", "JC", "QS", "4D", "9C", "TC", "3S", "5D"]  # 6H for 6D


def only(record) -> list[tuple[int, str, str]]:
    return findings(record)


# -- a clean scripted game ------------------------------------------------------------------


def clean_game() -> Script:
    s = Script()
    go_out_round(s)
    pot_claims(s, {"p1": 200})
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 88, "p2": -87}})
    s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    return s


def test_clean_scripted_game_has_no_finding_and_scores_by_hand():
    record = replay(clean_game().log.events)
    assert only(record) == []
    # p1: 2H-6H (20) + four 7s (28) + TD-KD (40); p2: 9D laid off (9) - hand (96)
    assert record.results.scores == {"p1": 88, "p2": 9 - P2_PENALTY}
    assert record.results.winners == ["p1"]
    assert record.results.net == {"p1": 100, "p2": -100}


def test_chained_copy_is_clean_and_replays_byte_identically():
    events = chain(clean_game().log.events)
    a, b = replay(events).to_dict(), replay(copy.deepcopy(events)).to_dict()
    assert a == b and a["clean"]


# -- C-DEAL -----------------------------------------------------------------------------------


def test_C_DEAL_wrong_dealer_in_round_started():
    s = Script(dealer=1)
    s.log.events.pop()  # drop the round, deal again naming the wrong dealer
    s.round_no = 0
    seq = s.deal([P2, P1], UP, [], dealer=0)
    record = replay(s.log.events)
    assert only(record) == [(seq, "C-DEAL", "violation")]
    # dealt as the platform recorded it: p2 (left of seat 0) got the first card
    assert record.state.snapshot()["in_turn"] == "p2"


def test_C_DEAL_deck_is_not_the_variant_deck():
    s = Script()
    deck = s.log.events[1]["payload"]["deck"]
    deck[-1] = "AS" if deck[-1] != "AS" else "KS"  # a second copy of some card
    record = replay(s.log.events)
    assert only(record) == [(1, "C-DEAL", "violation")]
    assert "extra AS" in record.findings[0].message


def test_C_DEAL_deck_too_short_halts():
    s = Script()
    s.log.events[1]["payload"]["deck"] = s.log.events[1]["payload"]["deck"][:20]
    record = replay(s.log.events)
    assert only(record) == [(1, "C-DEAL", "violation"), (1, "C-DEAL", "integrity")]
    assert record.halted


def test_C_DEAL_redeal_must_be_zero():
    s = Script()
    s.log.events[1]["payload"]["redeal"] = 1
    assert only(replay(s.log.events)) == [(1, "C-DEAL", "violation")]


@pytest.mark.parametrize("players,size", [(2, 13), (3, 7), (4, 7)])
def test_C_DEAL_hand_sizes_by_player_count(players, size):
    hands = [[] for _ in range(players)]
    s = Script(hands=hands, up="2C", stock=[], dealer=0)
    view = state_at(s.log.events, 1)
    assert set(view["hand_counts"].values()) == {size}
    assert view["stock_count"] == 54 - players * size - 1
    assert view["in_turn"] == "p2"  # left of dealer seat 0


def test_C_DEAL_dealer_moves_left_each_round():
    s = Script(rules={"mode": "rounds", "rounds": 2})
    go_out_round(s)
    wrong = s.deal([P2, P1], UP, [], dealer=1)  # round 2 must be dealt by seat 0
    assert only(replay(s.log.events)) == [(wrong, "C-DEAL", "violation")]
    s.log.events.pop()
    s.round_no = 1
    s.deal([P2, P1], UP, [], dealer=0)
    record = replay(s.log.events)
    assert only(record) == []
    assert record.state.snapshot()["in_turn"] == "p2"


def test_round_number_claim_is_checked():
    s = Script()
    s.log.events[1]["payload"]["round"] = 2
    record = replay(s.log.events)
    assert only(record) == [(1, "C-CLAIM", "discrepancy")]
    assert "claims round 2; by the rules it is round 1" in record.findings[0].message


# -- C-TURN / C-HOLD ----------------------------------------------------------------------------


def test_C_TURN_move_out_of_turn():
    s = Script()
    seq = s.log.draw("p2", "stock", "2H")
    assert only(replay(s.log.events)) == [(seq, "C-TURN", "violation")]


def test_C_TURN_player_not_seated():
    s = Script()
    seq = s.log.draw("stranger", "stock", "2H")
    assert only(replay(s.log.events)) == [(seq, "C-TURN", "violation")]


def test_C_HOLD_discarding_a_card_not_held_halts():
    s = Script()
    s.draw("p1")
    seq = s.log.discard("p1", "AC")
    record = replay(s.log.events)
    assert only(record) == [(seq, "C-HOLD", "integrity")]
    assert record.halted


def test_C_HOLD_wrong_stock_card_halts():
    s = Script()
    seq = s.log.draw("p1", "stock", "KS")  # the top is 2H
    assert only(replay(s.log.events)) == [(seq, "C-HOLD", "integrity")]


@pytest.mark.parametrize("move", ["meld", "layoff", "swap", "pile"])
def test_C_HOLD_cards_that_are_not_where_the_event_says(move):
    s = Script()
    s.draw("p1")
    if move == "meld":
        seq = s.meld("p1", {"kind": "set", "cards": ["KC", "KD", "KH"]})  # p1 has no KH
    elif move == "layoff":
        seq = s.layoff("p1", "2H", 3, "low")  # no meld 3 on the table
    elif move == "swap":
        s.meld("p1", RUN_H)
        seq = s.swap("p1", 0, "2H")  # meld 0 has no joker
    else:
        s.log.discard("p1", "2C")
        seq = s.log.draw("p2", "discard", "QS")  # QS is not in the pile
    record = replay(s.log.events)
    assert only(record) == [(seq, "C-HOLD", "integrity")] and record.halted


# -- melds: C-RUN, C-SET, C-WILD, R5-MELD ----------------------------------------------------------


@pytest.mark.parametrize("spec,rule", [
    ({"kind": "run", "cards": ["3H", "4H", "6H"]}, "C-RUN"),
    ({"kind": "run", "cards": ["5H", "6H", "7D"]}, "C-RUN"),
    ({"kind": "set", "cards": ["7C", "7D", "KD"]}, "C-SET"),
    ({"kind": "set", "cards": ["7C", "7D"]}, "R5-MELD"),
    ({"kind": "run", "cards": ["3H", "4H"]}, "R5-MELD"),
])
def test_invalid_melds_name_their_rule(spec, rule):
    s = Script()
    s.draw("p1")
    seq = s.meld("p1", spec)
    assert only(replay(s.log.events)) == [(seq, rule, "violation")]


def test_C_RUN_no_wrap_around():
    s = Script(hands=[["KH", "AH", "2H", *P1[3:]], P2], stock=["3D"])
    s.draw("p1")
    seq = s.meld("p1", {"kind": "run", "cards": ["KH", "AH", "2H"]})
    assert only(replay(s.log.events)) == [(seq, "C-RUN", "violation")]


def test_C_WILD_as_names_a_card_the_joker_cannot_be():
    s = Script(hands=[P1J, P2])
    s.draw("p1")
    seq = s.meld("p1", {"kind": "run", "cards": ["3H", "JK", "5H"], "as": {"1": "6H"}})
    assert only(replay(s.log.events)) == [(seq, "C-WILD", "violation")]


def test_R5_MELD_set_of_five_with_a_joker():
    s = Script(hands=[P1J, P2])
    s.draw("p1")
    seq = s.meld("p1", {"kind": "set", "cards": ["7C", "7D", "7S", "7H", "JK"]})
    assert only(replay(s.log.events)) == [(seq, "R5-MELD", "violation")]


def test_invalid_meld_stays_on_the_table_worth_its_naturals():
    s = Script(hands=[P1J, P2])
    s.draw("p1")
    s.meld("p1", {"kind": "run", "cards": ["3H", "5H", "JK"]})
    view = state_at(s.log.events, len(s.log.events) - 1)
    assert view["melds"][0]["valid"] is False and view["melds"][0]["points"] == [3, 5, 0]


# -- drawing: R5-DRAW-STOCK, R5-DRAW-PILE ------------------------------------------------------


def test_R5_DRAW_STOCK_discard_without_drawing():
    s = Script()
    seq = s.log.discard("p1", "2C")
    assert only(replay(s.log.events)) == [(seq, "R5-DRAW-STOCK", "violation")]


def test_R5_DRAW_STOCK_meld_before_drawing():
    s = Script()
    seq = s.meld("p1", RUN_H)
    assert only(replay(s.log.events)) == [(seq, "R5-DRAW-STOCK", "violation")]


def test_R5_DRAW_STOCK_two_draws_in_one_turn():
    s = Script()
    s.draw("p1")
    s.draw("p1")
    seq = s.last()
    assert only(replay(s.log.events)) == [(seq, "R5-DRAW-STOCK", "violation")]


def test_R5_DRAW_STOCK_takes_one_card():
    s = Script()
    seq = s.log.draw("p1", "stock", "2H", "KS")
    record = replay(s.log.events)
    assert only(record) == [(seq, "R5-DRAW-STOCK", "violation")]
    assert record.state.snapshot()["hand_counts"]["p1"] == 15  # applied as logged


def test_R5_DRAW_PILE_taking_a_card_without_those_above_it():
    s = Script()
    s.draw("p1")
    s.log.discard("p1", "2C")
    seq = s.log.draw("p2", "discard", "9D")  # 2C lies on top of it
    record = replay(s.log.events)
    assert only(record) == [(seq, "R5-DRAW-PILE", "violation")]
    assert record.state.snapshot()["discard_pile"] == ["2C"]


def test_R5_DRAW_PILE_cards_listed_top_first():
    s = Script()
    s.draw("p1")
    s.log.discard("p1", "2C")
    seq = s.log.draw("p2", "discard", "2C", "9D")
    assert (seq, "R5-DRAW-PILE", "violation") in only(replay(s.log.events))


def test_deep_pile_draw_used_by_a_meld_is_clean():
    s = Script()
    s.draw("p1")
    s.log.discard("p1", "2C")
    s.log.draw("p2", "discard", "9D", "2C")
    s.meld("p2", {"kind": "set", "cards": ["9C", "9D", "9S"]})
    s.log.discard("p2", "2C")  # any taken card but the deepest may go
    assert only(replay(s.log.events)) == []


# -- R5-USE-BOTTOM / R5-NODISCARD-TOP -----------------------------------------------------------


def deep_draw() -> Script:
    s = Script()
    s.draw("p1")
    s.log.discard("p1", "2C")
    s.log.draw("p2", "discard", "9D", "2C")
    return s


def test_R5_USE_BOTTOM_deepest_card_not_used_by_the_discard():
    s = deep_draw()
    seq = s.log.discard("p2", "5C")
    record = replay(s.log.events)
    assert only(record) == [(seq, "R5-USE-BOTTOM", "violation")]
    assert "9D" in record.findings[0].message


def test_R5_USE_BOTTOM_when_the_turn_ends_without_a_discard():
    s = deep_draw()
    s.draw("p1")
    seq = s.last()
    assert only(replay(s.log.events)) == [(seq, "R5-DISCARD", "violation"), (seq, "R5-USE-BOTTOM", "violation")]


def test_R5_USE_BOTTOM_laying_the_deepest_off_on_another_players_meld():
    s = Script()
    s.draw("p1")
    s.meld("p1", RUN_D)
    s.log.discard("p1", "2C")
    s.log.draw("p2", "discard", "9D", "2C")
    s.layoff("p2", "9D", 0, "low")
    s.log.discard("p2", "5C")
    assert only(replay(s.log.events)) == []


def test_R5_NODISCARD_TOP_single_pile_card():
    s = Script()
    s.draw("p1")
    s.log.discard("p1", "2C")
    s.log.draw("p2", "discard", "2C")
    seq = s.log.discard("p2", "2C")
    record = replay(s.log.events)
    assert only(record) == [(seq, "R5-NODISCARD-TOP", "violation")]
    assert "single card" in record.findings[0].message


def test_R5_NODISCARD_TOP_single_pile_card_may_be_kept():
    s = Script()
    s.draw("p1")
    s.log.discard("p1", "2C")
    s.log.draw("p2", "discard", "2C")
    s.log.discard("p2", "5C")
    assert only(replay(s.log.events)) == []


def test_R5_NODISCARD_TOP_deepest_of_several():
    s = deep_draw()
    seq = s.log.discard("p2", "9D")
    assert only(replay(s.log.events)) == [(seq, "R5-NODISCARD-TOP", "violation"),
                                          (seq, "R5-USE-BOTTOM", "violation")]


# -- R5-LAYOFF / R5-SWAP ------------------------------------------------------------------------


def test_R5_LAYOFF_card_that_does_not_fit():
    s = Script()
    s.draw("p1")
    s.meld("p1", RUN_H)
    seq = s.layoff("p1", "KD", 0, "high")
    record = replay(s.log.events)
    assert only(record) == [(seq, "R5-LAYOFF", "violation")]
    assert record.state.snapshot()["melds"][0]["cards"] == ["3H", "4H", "5H", "6H", "KD"]


def test_R5_LAYOFF_before_drawing():
    s = Script(hands=[P1, ["AD", *P2[1:]]])
    s.draw("p1")
    s.meld("p1", RUN_D)
    s.log.discard("p1", "2C")
    seq = s.layoff("p2", "AD", 0, "high")  # fits, but p2 has not drawn
    assert only(replay(s.log.events)) == [(seq, "R5-LAYOFF", "violation")]


def test_R5_LAYOFF_on_another_players_meld_before_melding_scores_for_the_layer():
    s = Script(hands=[P1, ["AD", *P2[1:]]])
    s.draw("p1")
    s.meld("p1", RUN_D)
    s.log.discard("p1", "2C")
    s.draw("p2")
    s.layoff("p2", "AD", 0, "high")
    view = state_at(s.log.events, s.last())
    assert only(replay(s.log.events)) == []
    assert view["melds"][0]["by"] == ["p1"] * 4 + ["p2"] and view["melds"][0]["points"][-1] == 11


def test_R5_LAYOFF_fifth_card_on_a_set():
    s = Script(hands=[P1, ["JK", *P2[1:]]])
    s.draw("p1")
    s.meld("p1", SET_7)
    s.log.discard("p1", "2C")
    s.draw("p2")
    seq = s.layoff("p2", "JK", 0)
    assert only(replay(s.log.events)) == [(seq, "R5-LAYOFF", "violation")]


@pytest.mark.parametrize("meld,end,points", [(0, "low", 1), (1, "high", 11)])
def test_R5_VALUES_a_laid_off_ace_is_1_below_a_2_and_11_above_a_king(meld, end, points):
    p2 = ["4S" if c == "4D" else c for c in P2]
    s = Script(hands=[["2D", "3D", "4D", *P1[3:]], p2], stock=["AD"])
    s.draw("p1")
    s.meld("p1", {"kind": "run", "cards": ["2D", "3D", "4D"]})
    s.meld("p1", RUN_D)
    s.layoff("p1", "AD", meld, end)
    view = state_at(s.log.events, s.last())
    assert only(replay(s.log.events)) == []
    cards = view["melds"][meld]["cards"]
    assert (cards[0] if end == "low" else cards[-1]) == "AD"
    assert (view["melds"][meld]["points"][0 if end == "low" else -1]) == points


def swap_game() -> Script:
    s = Script(hands=[P1J, P2J])
    s.log.draw("p1", "stock", "2H")
    s.meld("p1", {"kind": "run", "cards": ["3H", "4H", "5H", "JK"]})  # JK = 6H
    s.meld("p1", SET_7)
    s.meld("p1", RUN_D)
    s.log.discard("p1", "2C")
    s.log.draw("p2", "stock", "KS")
    return s


def test_R5_SWAP_clean_swap_moves_the_points_to_the_giver():
    s = swap_game()
    s.swap("p2", 0, "6H")
    s.log.discard("p2", "KS")
    s.log.draw("p1", "stock", "AH")
    s.layoff("p1", "2H", 0, "low")
    s.log.discard("p1", "AH")
    record = replay(s.log.events)
    assert only(record) == []
    # p1: 2+3+4+5 (6H's place is p2's now) + 28 + 40; p2: 6 - (96 - 6D + JK 15)
    assert record.state.round_result(1) == (["p1"], {"p1": 82, "p2": 6 - (P2_PENALTY - 6 + 15)})


def test_R5_SWAP_card_the_joker_does_not_stand_for():
    s = swap_game()
    seq = s.swap("p2", 0, "5C")
    record = replay(s.log.events)
    assert only(record) == [(seq, "R5-SWAP", "violation")]
    assert "stands for 6H" in record.findings[0].message


def test_R5_SWAP_set_joker_stands_for_any_missing_suit():
    hand = ["7C", "7D", "JK", *P1[8:], "3H", "4H", "5H", "6H", "8S"]
    s = Script(hands=[hand, ["7S", *P2[1:]]])
    s.draw("p1")
    s.meld("p1", {"kind": "set", "cards": ["7C", "7D", "JK"]})
    s.log.discard("p1", "2C")
    s.draw("p2")
    s.swap("p2", 0, "7S")
    assert only(replay(s.log.events)) == []
    view = state_at(s.log.events, len(s.log.events) - 1)
    assert view["melds"][0]["cards"] == ["7C", "7D", "7S"] and view["hand_counts"]["p2"] == 14


# -- R5-DISCARD / R5-END -----------------------------------------------------------------------


def test_R5_DISCARD_melding_the_last_card_without_a_discard():
    s = Script()
    s.draw("p1")  # 2H
    s.meld("p1", RUN_H)
    s.meld("p1", SET_7)
    s.meld("p1", RUN_D)
    s.log.discard("p1", "2C")
    s.turn("p2")  # KS
    s.draw("p1")  # AH
    s.layoff("p1", "2H", 0, "low")
    seq = s.layoff("p1", "AH", 0, "low")
    record = replay(s.log.events)
    assert only(record) == [(seq, "R5-DISCARD", "violation")]
    # the round ended there: A-6 hearts, the ace low (1)
    assert record.state.round_result(1)[1]["p1"] == 1 + 20 + 28 + 40


def test_R5_DISCARD_two_discards_in_one_turn():
    s = Script()
    s.draw("p1")
    s.log.discard("p1", "2C")
    seq = s.log.discard("p1", "3H")
    assert only(replay(s.log.events)) == [(seq, "R5-DISCARD", "violation")]


def test_R5_DISCARD_turn_ends_without_a_discard():
    s = Script()
    s.draw("p1")
    s.draw("p2")
    seq = s.last()
    assert only(replay(s.log.events)) == [(seq, "R5-DISCARD", "violation")]


def test_R5_END_the_round_ends_on_an_empty_stock_after_the_discard():
    s = Script(rules={"mode": "rounds", "rounds": 2})
    last, _ = s.exhaust(["p1", "p2"])
    record = replay(s.log.events)
    assert only(record) == []
    assert last == "p1"  # 27 stock cards: p1 draws the first and the last
    # nobody melded: each scores minus his dealt hand
    assert record.state.round_result(1) == (["p1"], {"p1": -P1_PENALTY, "p2": -P2_PENALTY})
    after = s.log.draw("p2", "stock", "QH")
    assert only(replay(s.log.events)) == [(after, "R5-END", "violation")]


def test_R5_END_the_drawer_of_the_last_stock_card_finishes_his_turn():
    s = Script()
    order = ["p1", "p2"]
    i = 0
    while len(s.stock) > 1:
        s.turn(order[i % 2])
        i += 1
    assert order[i % 2] == "p1"
    card = s.draw("p1")
    s.meld("p1", RUN_D)  # after drawing the last stock card, he still melds
    s.log.discard("p1", card)
    record = replay(s.log.events)
    assert only(record) == []
    assert record.state.round_result(1)[1]["p1"] == 40 - (P1_PENALTY - 40)


def test_R5_END_r500_does_not_replenish_the_stock():
    s = Script()
    s.exhaust(["p1", "p2"])
    seq = s.sys("StockReplenished", {"stock": ["QH"]})
    record = replay(s.log.events)
    assert only(record) == [(seq, "R5-END", "violation")]


def test_R5_END_redeal_in_the_middle_of_a_round():
    s = Script(rules={"mode": "rounds", "rounds": 2})
    s.draw("p1")
    seq = s.deal([P2, P1], UP, [], dealer=0)
    assert only(replay(s.log.events)) == [(seq, "R5-END", "violation")]


# -- R5-VALUES / R5-SCORE -------------------------------------------------------------------------


VALUES_HAND = ["AH", "2H", "3H", "QC", "KC", "AC", "7C", "7D", "7S", "JK", "AD", "5H", "9H"]


def values_game(claim_p1: int | None = None) -> tuple[Script, int]:
    s = Script(hands=[VALUES_HAND, P2], stock=["8H"])
    s.draw("p1")
    s.meld("p1", {"kind": "run", "cards": ["AH", "2H", "3H"]})  # ace low: 1 + 2 + 3
    s.meld("p1", {"kind": "run", "cards": ["QC", "KC", "AC"]})  # ace high: 10 + 10 + 11
    s.meld("p1", {"kind": "set", "cards": ["7C", "7D", "7S"]})  # 21
    s.log.discard("p1", "8H")
    s.exhaust(["p2", "p1"])
    # left in hand: JK -15, AD -15, 5H -5, 9H -9
    want = 6 + 31 + 21 - 44
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"],
                               "scores": {"p1": want if claim_p1 is None else claim_p1, "p2": -P2_PENALTY}})
    return s, want


def test_R5_VALUES_aces_and_jokers():
    s, want = values_game()
    record = replay(s.log.events)
    assert only(record) == []
    assert want == 14 and record.results.scores["p1"] == 14


def test_R5_VALUES_ace_low_counted_as_eleven_is_a_discrepancy():
    s, _ = values_game(claim_p1=24)
    record = replay(s.log.events)
    seq = len(s.log.events) - 1
    assert only(record) == [(seq, "C-CLAIM", "discrepancy")]
    assert "p1: claimed 24, recomputed 14" in record.findings[0].message


def test_R5_SCORE_laid_off_points_belong_to_who_laid_them_off():
    s = Script()
    go_out_round(s)
    seq = s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 97, "p2": -96}})
    record = replay(s.log.events)
    assert only(record) == [(seq, "C-CLAIM", "discrepancy")]
    assert "p1: claimed 97, recomputed 88" in record.findings[0].message
    assert "p2: claimed -96, recomputed -87" in record.findings[0].message


# -- R5-GAME / R5-POT ---------------------------------------------------------------------------


def test_R5_GAME_rounds_mode_wrong_winner_claim():
    s = Script()
    go_out_round(s)
    seq = s.sys("GameEnded", {"winners": ["p2"], "net": {"p1": 100, "p2": -100}})
    record = replay(s.log.events)
    assert only(record) == [(seq, "C-CLAIM", "discrepancy")]
    assert "claimed ['p2'], recomputed ['p1']" in record.findings[0].message


def test_R5_GAME_target_not_reached_the_game_goes_on():
    s = Script(rules={})  # default: mode target, 500
    go_out_round(s)
    record = replay(s.log.events)
    assert not record.state.is_over() and record.state.deal_due()["round"] == 2
    seq = s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    record = replay(s.log.events)
    assert (seq, "C-CLAIM", "discrepancy") in only(record)
    assert "by the rules it has not" in record.findings[0].message


def test_R5_GAME_target_reached():
    s = Script(rules={"target": 80})
    go_out_round(s)
    record = replay(s.log.events)
    assert record.state.is_over() and record.results.winners == ["p1"]


THREE = [["2C", "3C", "4C", "5C", "6C", "7C", "KS"],
         ["2D", "3D", "4D", "5D", "6D", "7D", "KH"],
         ["9S", "9H", "TS", "TH", "JS", "QH", "AS"]]


def test_R5_GAME_tie_playoff_scripted():
    s = Script(hands=THREE, up="2S", stock=[], dealer=2, rules={"target": 15}, seats=["p1", "p2", "p3"])
    for p in ("p1", "p2"):
        s.draw(p)
        s.meld(p, {"kind": "run", "cards": THREE[0 if p == "p1" else 1][:6]})
        s.log.discard(p, s.log.events[-2]["payload"]["cards"][0])
    s.exhaust(["p3", "p1", "p2"])
    record = replay(s.log.events)
    st = record.state
    # p1, p2: 27 melded - KS/KH 10 = 17 each (>= 15, tied); p3 holds 9 9 10 10 10 10 and AS 15
    assert st.round_result(1) == (["p1", "p2"], {"p1": 17, "p2": 17, "p3": -73})
    assert not st.is_over() and st.snapshot()["out"] == {"p3": "eliminated"}
    assert st.deal_due()["dealer"] == 0  # the dealer moves left: seat 2 -> seat 0
    # the play-off: two players, 13 cards each, p2 (left of seat 0) first
    s.deal([P2, P1], UP, [], dealer=0)
    s.exhaust(["p2", "p1"])
    record = replay(s.log.events)
    assert only(record) == []
    assert record.state.round_result(2) == (["p1"], {"p1": -P1_PENALTY, "p2": -P2_PENALTY})
    assert record.results.winners == ["p1"]
    assert record.results.net == {"p1": 200, "p2": -100, "p3": -100}


def test_R5_GAME_rounds_tie_splits_the_pot_remainder_in_seat_order():
    hands = [["2C", "3C", "4C", "5C", "6C", "7C", "KS"],
             ["2D", "3D", "4D", "5D", "6D", "7D", "KH"],
             ["9S", "9H", "TS", "TH", "JS", "QH", "AS"]]
    s = Script(hands=hands, up="2S", stock=[], dealer=2, stake=101, seats=["p1", "p2", "p3"])
    s.exhaust(["p1", "p2", "p3"])
    record = replay(s.log.events)
    assert record.state.round_result(1)[0] == ["p1", "p2"]  # both hold 37
    assert record.results.winners == ["p1", "p2"]
    assert record.results.net == {"p1": 152 - 101, "p2": 151 - 101, "p3": -101}
    s.sys("ChipsTransferred", {"transfers": [
        *({"from": p, "to": "pot", "amount": 101, "reason": "stake"} for p in ("p1", "p2", "p3")),
        {"from": "pot", "to": "p1", "amount": 151, "reason": "pot"},
        {"from": "pot", "to": "p2", "amount": 152, "reason": "pot"}]})
    seq = s.sys("GameEnded", {"winners": ["p1", "p2"], "net": {"p1": 50, "p2": 51, "p3": -101}})
    record = replay(s.log.events)
    assert [f[1:] for f in only(record)] == [("C-CLAIM", "discrepancy")] * 2
    assert {f.seq for f in record.findings} == {seq - 1, seq}


def test_R5_POT_wrong_payout_is_a_discrepancy():
    s = Script()
    go_out_round(s)
    pot_claims(s, {"p1": 190})
    seq = len(s.log.events) - 1
    s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    record = replay(s.log.events)
    assert only(record) == [(seq, "C-CLAIM", "discrepancy")]
    assert "pot->p1 190" in record.findings[0].message and "pot->p1 200" in record.findings[0].message


def test_R5_POT_tournament_has_no_pot_and_net_is_the_stack_change():
    s = Script(rules={"mode": "tournament", "chip_ratio": 1}, stake=500)
    go_out_round(s)
    record = replay(s.log.events)
    # p2 pays (88 - -87) x 1 = 175
    assert [t.key() for t in record.transfers] == [("p2", "p1", 175)]
    assert record.results.net == {"p1": 175, "p2": -175}
    assert not record.state.is_over()


# -- R5-CHIPS ---------------------------------------------------------------------------------


def test_R5_CHIPS_capped_at_the_stack_and_bust_ends_the_tournament():
    s = Script(rules={"mode": "tournament", "chip_ratio": 3}, stake=100)
    go_out_round(s)
    s.sys("ChipsTransferred", {"transfers": [{"from": "p2", "to": "p1", "amount": 100, "reason": "round 1"}]})
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 88, "p2": -87}})
    s.sys("PlayerRemoved", {"player": "p2", "reason": "bust"})
    s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    record = replay(s.log.events)
    assert only(record) == []
    assert record.state.snapshot()["out"] == {"p2": "bust"}


def test_R5_CHIPS_uncapped_claim_is_a_discrepancy():
    s = Script(rules={"mode": "tournament", "chip_ratio": 3}, stake=100)
    go_out_round(s)
    seq = s.sys("ChipsTransferred", {"transfers": [{"from": "p2", "to": "p1", "amount": 525, "reason": "round 1"}]})
    s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    record = replay(s.log.events)
    assert only(record) == [(seq, "C-CLAIM", "discrepancy")]
    assert "claimed but not due: p2->p1 525; due but not claimed: p2->p1 100" in record.findings[0].message


# -- leaving and removals -------------------------------------------------------------------------


def test_leaving_in_turn_passes_the_turn_and_the_round_goes_on():
    s = Script(hands=THREE, up="2S", stock=[], dealer=2, seats=["p1", "p2", "p3"])
    s.turn("p1")
    s.log.add("PlayerLeft", "p2")
    s.sys("PlayerRemoved", {"player": "p2", "reason": "left"})
    s.turn("p3")
    record = replay(s.log.events)
    assert only(record) == []
    view = record.state.snapshot()
    assert view["in_turn"] == "p1" and view["active"] == ["p1", "p3"] and view["hand_counts"]["p2"] == 0


def test_last_player_standing_wins_the_pot():
    s = Script()
    s.draw("p1")
    s.log.add("PlayerLeft", "p2")
    s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    record = replay(s.log.events)
    assert only(record) == [] and record.results.winners == ["p1"]


@pytest.mark.parametrize("reason", ["strikes", "bust", "left"])
def test_removal_claims_the_rules_do_not_give(reason):
    s = Script(hands=THREE, up="2S", stock=[], dealer=2, seats=["p1", "p2", "p3"])
    seq = s.sys("PlayerRemoved", {"player": "p2", "reason": reason})
    record = replay(s.log.events)
    assert only(record) == [(seq, "C-CLAIM", "discrepancy")]
    assert record.state.snapshot()["active"] == ["p1", "p3"]  # applied as the platform did


# -- config -------------------------------------------------------------------------------------


def test_config_defaults_and_bad_values():
    s = Script(rules={"mode": "fill", "chip_ratio": -1, "extra": 1})
    record = replay(s.log.events)
    assert [f[1] for f in only(record)] == ["LOG-RULES"] * 3
    assert record.state.config == {"mode": "target", "target": 500, "rounds": 1, "chip_ratio": 1}


def test_events_of_other_variants_are_log_event():
    s = Script()
    seq = s.log.add("FreshPressed", "p1")
    assert only(replay(s.log.events)) == [(seq, "LOG-EVENT", "integrity")]


def test_player_view_shows_own_hand_and_the_table_only():
    events = clean_game().log.events
    view = state_at(events, 5, viewer="p2")
    assert set(view["hands"]) == {"p2"} and "stock" not in view
    assert [m["cards"] for m in view["melds"]] == [RUN_H["cards"], SET_7["cards"], RUN_D["cards"]]
    assert view["hand_counts"] == {"p1": 2, "p2": 13}
