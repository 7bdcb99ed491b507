"""Second spec audit of classic rummy (RULES.md §0, §1, §5): whole games, not single rules.

Each scenario is a complete multi-event game (Fresh redeals with the doubled stake,
timeouts and strikes, players leaving at every kind of moment, rake, transfers split
over several events, claims after the end or never logged) whose every output field —
``winners``, ``net``, ``scores``, the exact findings list, halting and the per-player
views of ``state_at`` — was computed by hand from the spec. Tests named ``fix_...``
failed before this audit's fix; the others pin flows that were already right.

Seats as in test_classic_rules: dealer is the last seat, so p1 (seat 0) is the first
player (15 cards), then p2, then p3.
"""

from __future__ import annotations

from collections import Counter

from logkit import Log, findings, stacked_deck
from test_classic_rules import DECK, P1_HAND, P2_HAND, STOCK_TOP, UP, WIN_MELDS, autoplay

from rummyguard.events.timestamps import ts_millis
from rummyguard.replay.engine import replay, state_at
from rummyguard.replay.rules.classic import check_next_games

P3_HAND = ["AC", "2H", "3C", "4C", "5S", "6C", "7S", "8H", "TS", "JS", "KS", "4S", "6H", "7D"]
PLAYERS = ["p1", "p2", "p3"]


def stakes(*players: str, amount: int = 100) -> list[dict]:
    return [{"from": p, "to": "pot", "amount": amount, "reason": "stake"} for p in players]


def three(**created) -> Log:
    log = Log()
    log.created("classic", PLAYERS, dealer=2, **created)
    log.round(stacked_deck([P1_HAND, P2_HAND, P3_HAND], UP, STOCK_TOP), dealer=2)
    return log


def fresh_leave_rake_game(*, pot_to_p1: int = 570, rake: int = 30) -> tuple[Log, dict[str, int]]:
    """Three players, rake 5 %. p1 opens; all three press Fresh (the pot doubles: 600);
    p3 leaves before the redeal (forfeits 200); the redeal deals p1 15 and p2 14; p1
    declares on his second turn. Rake ⌊600 × 500 / 10000⌋ = 30, p1 takes 570:
    net p1 = 570 − 200 = 370, p2 = −200, p3 = −200 (the house gains 30)."""
    log = three(rules={"rake_bps": 500})
    log.discard("p1", "2C")
    seqs = {"fresh_last": 0}
    log.add("FreshPressed", "p3")
    log.add("FreshPressed", "p1")  # p2 is in turn: Fresh is never out of turn
    seqs["fresh_last"] = log.add("FreshPressed", "p2")
    seqs["left"] = log.add("PlayerLeft", "p3")
    log.sys("PlayerRemoved", {"player": "p3", "reason": "left"})
    seqs["redeal"] = log.round(stacked_deck([P1_HAND, P2_HAND], UP, STOCK_TOP), dealer=2, redeal=1)
    log.discard("p1", "2C")
    log.draw("p2", "stock", "AH")
    log.discard("p2", "AH")
    log.draw("p1", "stock", "2D")
    seqs["declared"] = log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2D"})
    seqs["stakes"] = log.sys("ChipsTransferred", {"transfers": stakes(*PLAYERS)})
    seqs["doubled"] = log.sys("ChipsTransferred", {"transfers": stakes(*PLAYERS)})
    seqs["payout"] = log.sys("ChipsTransferred", {"transfers": [
        {"from": "pot", "to": "house", "amount": rake, "reason": "rake"},
        {"from": "pot", "to": "p1", "amount": pot_to_p1, "reason": "pot"}]})
    log.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {}})
    seqs["ended"] = log.sys("GameEnded", {"winners": ["p1"], "net": {
        "p1": pot_to_p1 - 200, "p2": -200, "p3": -200, "house": rake}})
    return log, seqs


# -- fixes ---------------------------------------------------------------------------------------


def test_fix_game_ended_net_may_name_the_house_with_its_true_rake():
    """Fix: a ``house`` entry in GameEnded.net was compared with 0, so a platform that
    reports the rake it took got a C-CLAIM although every number was right. A pool's
    entry is now compared with what that pool gained (a wrong one is still a finding)."""
    log, seqs = fresh_leave_rake_game()
    record = replay(log.events)
    assert findings(record) == []
    assert not record.halted
    assert record.results.to_dict() == {
        "winners": ["p1"], "net": {"p1": 370, "p2": -200, "p3": -200}, "scores": {}}
    assert sorted(t.key() for t in record.transfers) == sorted(
        [(p, "pot", 100) for p in PLAYERS] * 2 + [("pot", "house", 30), ("pot", "p1", 570)])

    log.events[seqs["ended"]]["payload"]["net"]["house"] = 40
    record = replay(log.events)
    assert findings(record) == [(seqs["ended"], "C-CLAIM", "discrepancy")]
    assert "house: claimed 40, recomputed 30" in record.findings[0].message


def test_fix_a_redeal_is_still_round_1():
    """Fix: a classic game is one round; Fresh redeals restart it (CL-RESULT). A redeal
    logged as round 2 was taken at its word, so the correct ``RoundEnded`` for round 1
    became the discrepancy. Now the RoundStarted claim is the C-CLAIM, at its own seq."""
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(DECK, dealer=1)
    log.add("FreshPressed", "p1")
    log.add("FreshPressed", "p2")
    redeal = log.round(DECK, dealer=1, redeal=1, round_no=2)
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2C"})
    log.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {}})
    log.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 200, "p2": -200}})
    record = replay(log.events)
    assert findings(record) == [(redeal, "C-CLAIM", "discrepancy")]
    assert "round 2" in record.findings[0].message
    assert state_at(log.events, redeal)["round"] == 1


def test_fix_auto_play_after_a_unanimous_fresh_is_CL_FRESH():
    """Fix: after a unanimous Fresh the round must be redealt; a player's move then was
    CL-FRESH but the system's auto-play in its place passed unremarked."""
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(DECK, dealer=1)
    log.add("FreshPressed", "p2")
    log.add("FreshPressed", "p1")
    seq = autoplay(log, "p1", None, "KH", 1, dt=118)  # at the clock (120 s from the deal)
    assert findings(replay(log.events)) == [(seq, "CL-FRESH", "violation")]


# -- whole games pinned ---------------------------------------------------------------------------


def test_views_through_a_fresh_redeal_after_a_leave():
    """state_at per player: own hand only, everyone's counts, the pile, no stock order."""
    log, seqs = fresh_leave_rake_game()
    after_votes = state_at(log.events, seqs["fresh_last"], "p2")
    assert after_votes["pots"] == {"pot": 600} and after_votes["redeals"] == 1
    assert after_votes["fresh_votes"] == PLAYERS
    left = state_at(log.events, seqs["left"], "p1")
    assert left["active"] == ["p1", "p2"] and left["hand_counts"]["p3"] == 0
    view = state_at(log.events, seqs["redeal"], "p2")
    assert set(view["hands"]) == {"p2"} and Counter(view["hands"]["p2"]) == Counter(P2_HAND)
    assert view["hand_counts"] == {"p1": 15, "p2": 14, "p3": 0}
    assert view["discard_pile"] == [UP] and view["stock_count"] == 108 - 29 - 1
    assert "stock" not in view and view["in_turn"] == "p1"
    assert view["fresh_votes"] == [] and view["pots"] == {"pot": 600}
    gone = state_at(log.events, seqs["redeal"], "p3")  # a player who left sees no cards
    assert gone["hands"] == {"p3": []}
    full = state_at(log.events, seqs["redeal"])
    assert full["stock"][:2] == ["AH", "2D"] and set(full["hands"]) == set(PLAYERS)


def test_wrong_payout_split_over_events_is_one_finding_at_the_first_wrong_event():
    log, seqs = fresh_leave_rake_game(pot_to_p1=580, rake=20)
    record = replay(log.events)
    assert findings(record) == [
        (seqs["payout"], "C-CLAIM", "discrepancy"),  # transfers: pot->house 20, pot->p1 580
        (seqs["ended"], "C-CLAIM", "discrepancy"),  # net: p1 380 and house 20 claimed
    ]
    assert "due but not claimed: pot->house 30, pot->p1 570" in record.findings[0].message
    assert record.results.net == {"p1": 370, "p2": -200, "p3": -200}


def test_missing_doubled_stakes_are_reported_at_game_ended_only():
    log, seqs = fresh_leave_rake_game()
    del log.events[seqs["doubled"]]["payload"]["transfers"][1:]  # only p1's second stake logged
    del log.events[seqs["ended"]]["payload"]["net"]["house"]  # (pinned apart from that fix)
    record = replay(log.events)
    assert findings(record) == [(seqs["ended"], "C-CLAIM", "discrepancy")]
    assert "due but not claimed: p2->pot 100, p3->pot 100" in record.findings[0].message
    # the same log cut before GameEnded: nothing logged is wrong, nothing is judged missing
    cut = log.events[: seqs["ended"]]
    assert findings(replay(cut)) == []


def test_strikes_survive_a_redeal_and_the_fourth_timeout_removes():
    """Strikes count per game; a redeal restarts the turn clocks (first turn: 60 s)."""
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1, stake=50, rules={"rake_bps": 100})
    log.round(DECK, dealer=1)
    log.discard("p1", "2C")
    autoplay(log, "p2", "AH", "AH", 1, dt=120)  # p2's first turn: 60 + 60
    log.draw("p1", "stock", "2D")
    log.discard("p1", "2D")
    autoplay(log, "p2", "JK", "AS", 2, dt=90)  # a drawn joker: the highest natural goes
    log.add("FreshPressed", "p1")
    log.add("FreshPressed", "p2")  # pot 100 -> 200
    log.round(DECK, dealer=1, redeal=1)
    autoplay(log, "p1", None, "KH", 1, dt=120)  # p1's first strike, first turn again
    autoplay(log, "p2", "AH", "AH", 3, dt=120)  # first turn of the redealt round: 60 s base
    log.draw("p1", "stock", "2D")
    log.discard("p1", "2D")
    removed = log.sys("PlayerRemoved", {"player": "p2", "reason": "strikes"}, dt=90)
    log.sys("ChipsTransferred", {"transfers": stakes("p1", "p2", amount=50)})
    log.sys("ChipsTransferred", {"transfers": [
        *stakes("p2", "p1", amount=50),
        {"from": "pot", "to": "house", "amount": 2, "reason": "rake"},
        {"from": "pot", "to": "p1", "amount": 198, "reason": "pot"}]})
    log.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {}})
    log.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 98, "p2": -100}})
    record = replay(log.events)
    assert findings(record) == []
    assert record.results.to_dict() == {"winners": ["p1"], "net": {"p1": 98, "p2": -100},
                                        "scores": {}}
    snap = state_at(log.events, removed, "p1")
    assert snap["strikes"] == {"p1": 1, "p2": 3} and snap["over"] and snap["winners"] == ["p1"]
    early = Log()
    early.events = [dict(e) for e in log.events[:removed]]
    early.clock = ts_millis(early.events[-1]["ts"])
    seq = early.sys("PlayerRemoved", {"player": "p2", "reason": "strikes"}, dt=89.9)
    assert findings(replay(early.events)) == [(seq, "CL-STRIKES", "violation")]


def test_first_player_leaves_before_the_deal_then_two_more_leave():
    """p1 (left of the dealer) leaves before the deal: p2 is first player (15 cards).
    p2 leaves in his first turn, before discarding: p3's turn starts at the leave, with
    a draw. Then p4 leaves in turn: p3 is the last player standing and wins 400 at
    once. A move after GameEnded is out of turn; leaving then changes nothing."""
    log = Log()
    log.created("classic", ["p1", "p2", "p3", "p4"], dealer=3)
    left1 = log.add("PlayerLeft", "p1")
    p4_hand = ["AD", "3D", "4C", "5C", "6S", "7C", "8C", "9H", "TH", "JH", "QC", "KC", "2S", "3S"]
    deal = log.round(stacked_deck([P1_HAND, P2_HAND, p4_hand], UP, STOCK_TOP), dealer=3)
    view = state_at(log.events, deal, "p2")
    assert view["in_turn"] == "p2"
    assert view["hand_counts"] == {"p1": 0, "p2": 15, "p3": 14, "p4": 14}
    assert Counter(view["hands"]["p2"]) == Counter(P1_HAND)
    log.add("PlayerLeft", "p2", dt=100)  # in turn, on his first turn
    log.draw("p3", "stock", "AH", dt=119)  # p3's clock started at the leave: on time
    log.discard("p3", "AH", dt=1)  # 120 s after the leave: exactly at the deadline
    end = log.add("PlayerLeft", "p4", dt=5)  # p4 in turn leaves: p3 stands alone
    net = {"p1": -100, "p2": -100, "p3": 300, "p4": -100}
    log.sys("GameEnded", {"winners": ["p3"], "net": net})
    log.discard("p3", "2D")  # after the end: out of turn
    log.add("PlayerLeft", "p3")  # leaving after the end changes nothing
    record = replay(log.events)
    assert findings(record) == [(end + 2, "C-TURN", "violation")]
    assert record.results.to_dict() == {
        "winners": ["p3"], "net": {"p1": -100, "p2": -100, "p3": 300, "p4": -100}, "scores": {}}
    assert left1 == 1


def test_fresh_votes_are_cleared_by_the_redeal_and_the_second_unanimous_fresh_only_redeals():
    log = three()
    log.add("FreshPressed", "p2")
    log.add("FreshPressed", "p1")
    log.add("FreshPressed", "p3")  # first unanimous: 300 -> 600
    log.round(stacked_deck([P1_HAND, P2_HAND, P3_HAND], UP, STOCK_TOP), dealer=2, redeal=1)
    log.add("FreshPressed", "p1")
    log.add("FreshPressed", "p2")  # p3's old vote was cleared: not unanimous
    early = log.round(stacked_deck([P1_HAND, P2_HAND, P3_HAND], UP, STOCK_TOP), dealer=2, redeal=2)
    record = replay(log.events)
    assert findings(record) == [(early, "CL-FRESH", "violation")]
    log.events.pop()
    log.add("FreshPressed", "p3")  # second unanimous: only a redeal
    log.round(stacked_deck([P1_HAND, P2_HAND, P3_HAND], UP, STOCK_TOP), dealer=2, redeal=2)
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2C"})
    log.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 400, "p2": -200, "p3": -200}})
    record = replay(log.events)
    assert findings(record) == []
    assert record.results.net == {"p1": 400, "p2": -200, "p3": -200}


def test_cl_next_across_a_table_of_games():
    table = [
        ("g1", 2, ["p1", "p2", "p3"], ["p3"]),
        ("g2", 1, ["p1", "p2", "p3"], []),  # p3 starts: right; g2 has no winner (cut short)
        ("g3", 0, ["p1", "p2", "p3"], ["p2"]),  # nothing to chain from g2
        ("g4", 1, ["p1", "p3"], ["p1"]),  # g3's winner p2 left the table: not judged
        ("g5", 0, ["p1", "p3"], ["p1"]),  # p3 starts, p1 won g4: wrong
    ]
    assert check_next_games(table) == [
        ("g5", "the previous game's winner p1 should start; p3 does")]
