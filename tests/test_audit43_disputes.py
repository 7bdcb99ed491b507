"""Audit 43: the dispute-settling side — platform claims of Rummy 500, Liverpool and
Michigan in corners the earlier audits did not pin, what a player sees at a seq, and the
spec example.

Every expected number is worked out from spec/RULES.md before the replay ran; the
comment of each test quotes the sentence it rests on. Failing tests are findings.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import orjson
from logkit import Log, findings, stacked_deck
from r500kit import Script, go_out_round
from spec_paths import EXAMPLES
from test_michigan_kit import STACKED, driver_game, michigan_deck
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.cards import format_cards
from rummyguard.replay.engine import replay

Event = dict[str, Any]


def run(events: list[Event]) -> list[tuple[int, str, str]]:
    return findings(replay(events))


def write(events: list[Event], path: Path) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def view(game_id: str, path: Path, player: str, at: int) -> dict[str, Any]:
    res = CliRunner().invoke(app, ["replay", game_id, str(path), "--as", player, "--at", str(at), "--json"],
                             env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def messages(doc: dict[str, Any]) -> list[str]:
    rows = [f["message"] for r in doc["timeline"] for f in r["findings"]]
    return rows + [f["message"] for f in doc["record"]["findings"]]


def lv_points(cards: list[str]) -> int:
    """LV-SCORE: "A and 2 = 25; 3-9 = 5; T J Q K = 10"."""
    return sum(25 if c[0] in "A2" else 10 if c[0] in "TJQK" else 5 for c in cards)


# == (3) the spec example ======================================================================


def example() -> list[Event]:
    return [orjson.loads(line) for line in (EXAMPLES / "classic-3p.jsonl").read_bytes().splitlines()
            if line.strip()]


def test_example_replays_to_its_expected_output_and_every_view_hides_the_others() -> None:
    """examples/README: "classic-3p.expected.json: what a correct replay returns for it".
    RULES §0: the deck is recorded; a player sees his own hand only (the brief: "no hidden
    information leaked: other hands, the stock order")."""
    events = example()
    expected = json.loads((EXAMPLES / "classic-3p.expected.json").read_text())
    rec = replay(events)
    got = {"game_id": rec.game_id, "clean": rec.clean, "findings": [f.to_dict() for f in rec.findings],
           "results": rec.results.to_dict()}
    assert got == expected
    seats = events[0]["payload"]["seats"]
    for seq in range(1, len(events)):
        state = replay(events, until_seq=seq).state
        for p in seats:
            snap = state.snapshot(p)
            assert set(snap["hands"]) == {p}, (seq, p)
            assert "stock" not in snap, (seq, p)


# == (2) views =================================================================================


def test_michigan_follow_finding_does_not_tell_others_who_holds_the_next_card(tmp_path: Path) -> None:
    """MI-FOLLOW: "whoever holds the next card of that suit plays it". a starts with 4C; b
    holds 5C (the next card) but c plays 7C: an MI-FOLLOW violation at that seq. The
    player's view may show the finding, but where a hidden card lies is another hand's
    content (brief: "no hidden information leaked: other hands"; docs/disputes.md: "who
    holds it is a hidden card's place"; the C-HOLD message is masked for that reason).
    The next card after 4C is 5C for anyone who saw 4C, so "b holds ??, the next card"
    tells a that 5C is in b's hand."""
    log = Log("mi43")
    log.created("michigan", ["a", "b", "c"], dealer=2, stake=0, rules={})
    log.round(STACKED, round_no=1, dealer=2)
    log.add("CardPlayed", "a", {"card": "4C"})
    seq = log.add("CardPlayed", "c", {"card": "7C"})
    assert run(log.events) == [(seq, "MI-FOLLOW", "violation")]
    path = write(log.events, tmp_path / "mi.jsonl")
    for viewer in ("a", "c"):
        msgs = messages(view("mi43", path, viewer, seq))
        assert msgs, viewer
        assert not any("b holds" in m for m in msgs), (viewer, msgs)


def test_a_players_view_at_a_seq_names_no_transfer_claimed_after_it(tmp_path: Path) -> None:
    """docs/disputes.md (--as with --at): "nothing that happened after SEQ" (a finding at a
    seq up to SEQ is shown). Rummy 500 ``rounds``: the stakes are claimed at seq 2 with
    p2 -> pot 99 (wrong, 100 is due: C-CLAIM at seq 2, "the first differing event"), and
    after the round the payout pot -> p1 199 (wrong too). p2's view right after seq 2, before
    any card is played, shows the seq-2 finding; it must not name the later payout claim
    (which tells who won the game)."""
    s = Script(rules={"mode": "rounds"})
    ct = s.sys("ChipsTransferred", {"transfers": [
        {"from": "p1", "to": "pot", "amount": 100, "reason": "stake"},
        {"from": "p2", "to": "pot", "amount": 99, "reason": "stake"}]})
    go_out_round(s)
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 88, "p2": -87}})
    s.sys("ChipsTransferred", {"transfers": [{"from": "pot", "to": "p1", "amount": 199, "reason": "pot"}]})
    s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    assert run(s.log.events) == [(ct, "C-CLAIM", "discrepancy")]
    doc = view("g1", write(s.log.events, tmp_path / "r5.jsonl"), "p2", ct)
    msgs = messages(doc)
    assert msgs and all("p2->pot 99" in m for m in msgs)
    assert not any("pot->p1" in m for m in msgs), msgs


# == (1) Rummy 500 claims ======================================================================

#: three 7-card hands, no meld possible; seat order p1 p2 p3, dealer p3 (p1 starts)
H46_A = ["2C", "3C", "5D", "7H", "9S", "JD", "KS"]  # 2+3+5+7+9+10+10 = 46
H46_B = ["2D", "3D", "5H", "7S", "9C", "JH", "KC"]  # 46
H51 = ["2H", "3H", "5S", "7C", "9D", "JS", "AC"]  # 2+3+5+7+9+10+15 = 51


def stock_out_round(hands: list[list[str]], rules: dict[str, Any], stake: int) -> Script:
    """R5-END: "the round ends ... when the stock is empty after a discard": every turn
    draws the stock top and discards it, so the hands never change."""
    s = Script(hands, up="4C", stock=[], seats=["p1", "p2", "p3"], dealer=2, rules=rules, stake=stake)
    s.exhaust(["p1", "p2", "p3"])
    return s


def test_r500_rounds_tie_of_three_splits_an_odd_pot_remainder_to_the_first_seat() -> None:
    """R5-SCORE: round score = melded - "value of cards left in his hand" (ace 15): p1 -46,
    p2 -46, p3 -51. R5-GAME rounds (1 round): "the highest total wins; a tie splits the prize
    equally (remainder chips go one each to the tied players in seat order)". R5-POT: pot
    3 x 101 = 303: p1 152, p2 151; net +51, +50, -101."""
    s = stock_out_round([H46_A, H46_B, H51], {"mode": "rounds", "rounds": 1}, 101)
    re_ = s.sys("RoundEnded", {"round": 1, "winners": ["p1", "p2"], "scores": {"p1": -46, "p2": -46, "p3": -51}})
    ct = s.sys("ChipsTransferred", {"transfers": [
        *({"from": p, "to": "pot", "amount": 101, "reason": "stake"} for p in ("p1", "p2", "p3")),
        {"from": "pot", "to": "p1", "amount": 152, "reason": "pot"},
        {"from": "pot", "to": "p2", "amount": 151, "reason": "pot"}]})
    ge = s.sys("GameEnded", {"winners": ["p1", "p2"], "net": {"p1": 51, "p2": 50, "p3": -101}})
    assert run(s.log.events) == []
    swapped = copy.deepcopy(s.log.events)  # the odd chip to p2
    swapped[ct]["payload"]["transfers"][3]["amount"] = 151
    swapped[ct]["payload"]["transfers"][4]["amount"] = 152
    swapped[ge]["payload"]["net"] = {"p1": 50, "p2": 51, "p3": -101}
    assert run(swapped) == [(ct, "C-CLAIM", "discrepancy"), (ge, "C-CLAIM", "discrepancy")]
    ace11 = copy.deepcopy(s.log.events)  # the ace left in hand counted 11, not 15
    ace11[re_]["payload"]["scores"]["p3"] = -47
    assert run(ace11) == [(re_, "C-CLAIM", "discrepancy")]
    one = copy.deepcopy(s.log.events)  # one tied winner named
    one[re_]["payload"]["winners"] = ["p1"]
    one[ge]["payload"]["winners"] = ["p1"]
    assert run(one) == [(re_, "C-CLAIM", "discrepancy"), (ge, "C-CLAIM", "discrepancy")]


def test_r500_tournament_tied_round_winners_split_a_payment_remainder_in_seat_order() -> None:
    """R5-CHIPS: "Each other player pays him (winner score - own score) x chip_ratio";
    "Tied round winners: the losers' payments are split equally between them, remainder in
    seat order." p1 and p2 -46, p3 -51: p3 pays 5 -> p1 3, p2 2. Nobody is out (stacks
    100), so the game goes on: a GameEnded is a wrong claim."""
    s = stock_out_round([H46_A, H46_B, H51], {"mode": "tournament", "chip_ratio": 1}, 100)
    ct = s.sys("ChipsTransferred", {"transfers": [
        {"from": "p3", "to": "p1", "amount": 3, "reason": "r1"},
        {"from": "p3", "to": "p2", "amount": 2, "reason": "r1"}]})
    assert run(s.log.events) == []
    even = copy.deepcopy(s.log.events)  # 2.5 each rounded the other way
    even[ct]["payload"]["transfers"] = [{"from": "p3", "to": "p1", "amount": 2, "reason": "r1"},
                                        {"from": "p3", "to": "p2", "amount": 3, "reason": "r1"}]
    assert run(even) == [(ct, "C-CLAIM", "discrepancy")]
    ended = copy.deepcopy(s.log.events)
    ended.append({**ended[ct], "seq": ct + 1, "event_id": "a43-ge", "type": "GameEnded",
                  "payload": {"winners": ["p1"], "net": {"p1": 3, "p2": 2, "p3": -5}}})
    got = run(ended)  # "ended; by the rules it has not", and the winners differ
    assert got and set(got) == {(ct + 1, "C-CLAIM", "discrepancy")}


def test_r500_tournament_two_losers_capped_and_busted_at_once_end_the_game() -> None:
    """R5-CHIPS: payments "capped at what he holds"; R5-GAME tournament: "a player with no
    chips left is out; the last player at the table wins"; R5-POT: net = final stack -
    stake. Stacks 5: p1 -46 wins the round; p2 -51 owes 5, p3 -79 owes 33, capped at 5:
    both are out at once, p1 wins, net +10, -5, -5."""
    h79 = ["AD", "AH", "KD", "QH", "JC", "TS", "9H"]  # 15+15+10+10+10+10+9 = 79
    s = stock_out_round([H46_A, H51, h79], {"mode": "tournament", "chip_ratio": 1}, 5)
    ct = s.sys("ChipsTransferred", {"transfers": [
        {"from": "p2", "to": "p1", "amount": 5, "reason": "r1"},
        {"from": "p3", "to": "p1", "amount": 5, "reason": "r1"}]})
    ge = s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 10, "p2": -5, "p3": -5}})
    assert run(s.log.events) == []
    uncapped = copy.deepcopy(s.log.events)
    uncapped[ct]["payload"]["transfers"][1]["amount"] = 28
    uncapped[ge]["payload"]["net"] = {"p1": 33, "p2": -5, "p3": -28}
    assert run(uncapped) == [(ct, "C-CLAIM", "discrepancy"), (ge, "C-CLAIM", "discrepancy")]


def test_r500_melded_jokers_score_the_card_they_stand_for() -> None:
    """R5-VALUES: "ace 11, but 1 in a run A 2 3…; a melded joker is worth the card it stands
    for. Left in hand at the end: ace and joker -15 each". p1 melds JK(=AH) 2H 3H 4H (10),
    AD AC JK (33), QS KS AS (31), 5D 6D 7D (18) and goes out: 92. p2 holds AH (15) + 84:
    -99."""
    h1 = ["JK", "2H", "3H", "4H", "AD", "AC", "JK", "QS", "KS", "AS", "5D", "6D", "9C"]
    h2 = ["AH", "2S", "3S", "4C", "5C", "6S", "7S", "8S", "9D", "TD", "JC", "QD", "KD"]
    s = Script([h1, h2], up="2C", stock=["7D"], rules={"mode": "rounds"})
    s.log.draw("p1", "stock", "7D")
    s.meld("p1", {"kind": "run", "cards": ["JK", "2H", "3H", "4H"], "as": {"0": "AH"}})
    s.meld("p1", {"kind": "set", "cards": ["AD", "AC", "JK"]})
    s.meld("p1", {"kind": "run", "cards": ["QS", "KS", "AS"]})
    s.meld("p1", {"kind": "run", "cards": ["5D", "6D", "7D"]})
    s.log.discard("p1", "9C")
    re_ = s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 92, "p2": -99}})
    assert run(s.log.events) == []
    for p1_claim in (102, 91, 82):  # the low joker as 11; the high ace as 10; the set joker as 0
        wrong = copy.deepcopy(s.log.events)
        wrong[re_]["payload"]["scores"]["p1"] = p1_claim
        assert run(wrong) == [(re_, "C-CLAIM", "discrepancy")], p1_claim


# == (1) Liverpool claims ======================================================================

LV_SEATS = ["p1", "p2", "p3"]


def _set(*cards: str) -> dict[str, Any]:
    return {"kind": "set", "cards": list(cards)}


def _run(*cards: str) -> dict[str, Any]:
    return {"kind": "run", "cards": list(cards)}


F10 = ["3C", "3D", "3S", "4C", "4D", "4S", "5C", "5D", "9C", "9D"]
#: per round: the starter's hand, his stock draw, the contract he lays down, his discard
#: (None: round 6 goes out without one, LV-ALLOUT), the other two hands in deal order
LV_ROUNDS: list[tuple[list[str], str, list[dict[str, Any]], str | None, list[list[str]]]] = [
    (["5C", "5D", "5H", "5S", "2C", "6C", "6D", "6H", "6S", "2D"], "KC",
     [_set("5C", "5D", "5H", "5S", "2C"), _set("6C", "6D", "6H", "6S", "2D")], "KC",
     [["3C", "3D", "3H", "4C", "4D", "4H", "7C", "AS", "2H", "TC"],
      ["3C", "3D", "4C", "4D", "7C", "7D", "TC", "TD", "JC", "JD"]]),
    (["7C", "7D", "7H", "7S", "3H", "4H", "5H", "6H", "7H", "8H"], "KC",
     [_set("7C", "7D", "7H", "7S"), _run("3H", "4H", "5H", "6H", "7H", "8H")], "KC", [F10, F10]),
    (["3C", "4C", "5C", "6C", "7C", "3D", "4D", "5D", "6D", "7D"], "KC",
     [_run("3C", "4C", "5C", "6C", "7C"), _run("3D", "4D", "5D", "6D", "7D")], "KC",
     [["3H", "3S", "4H", "4S", "8C", "8D", "9H", "9S", "TC", "TD"]] * 2),
    (["8C", "8D", "8H", "9C", "9D", "9H", "TC", "TD", "TH", "TS"], "KC",
     [_set("8C", "8D", "8H"), _set("9C", "9D", "9H"), _set("TC", "TD", "TH", "TS")], "KC",
     [["3C", "3D", "4C", "4D", "5C", "5D", "6C", "6D", "7C", "7D"]] * 2),
    (["8C", "8D", "8H", "8S", "9C", "9D", "9H", "9S", "3S", "4S", "5S", "6S"], "KC",
     [_set("8C", "8D", "8H", "8S"), _set("9C", "9D", "9H", "9S"), _run("3S", "4S", "5S", "6S")], "KC",
     [["3C", "3D", "3H", "4C", "4D", "4H", "5C", "5D", "5H", "6C", "6D", "6H"]] * 2),
    (["JC", "JD", "JH", "3C", "4C", "5C", "6C", "7C", "3D", "4D", "5D", "6D"], "7D",
     [_set("JC", "JD", "JH"), _run("3C", "4C", "5C", "6C", "7C"), _run("3D", "4D", "5D", "6D", "7D")], None,
     [["3H", "3S", "4H", "4S", "5H", "5S", "6H", "6S", "8H", "8S", "9H", "9S"]] * 2),
]


def liverpool_six(stake: int = 101) -> tuple[Log, dict[int, int], dict[str, int]]:
    """Six rounds, dealer p1 then left each round; the player left of the dealer lays the
    whole contract down at once and goes out (LV-OUT); the others score their hands."""
    log = Log("lv43")
    log.created("liverpool", LV_SEATS, dealer=0, stake=stake)
    seqs: dict[int, int] = {}
    totals = dict.fromkeys(LV_SEATS, 0)
    for r, (hand, draw, melds, disc, others) in enumerate(LV_ROUNDS, start=1):
        dealer = (r - 1) % 3
        order = [LV_SEATS[(dealer + 1 + i) % 3] for i in range(3)]
        log.round(stacked_deck([hand, *others], "QS", [draw], decks=2, jokers=0), round_no=r, dealer=dealer)
        log.draw(order[0], "stock", draw)
        log.add("LaidDown", order[0], {"melds": melds})
        if disc:
            log.discard(order[0], disc)
        scores = {order[0]: 0}
        for p, h in zip(order[1:], others, strict=True):
            scores[p] = lv_points(h)
            totals[p] += scores[p]
        seqs[r] = log.sys("RoundEnded", {"round": r, "winners": [order[0]], "scores": scores})
    return log, seqs, totals


def test_liverpool_six_rounds_tied_lowest_totals_share_the_win() -> None:
    """LV-SCORE: "the others score what they hold: A and 2 = 25; 3-9 = 5; T J Q K = 10. The
    lowest total after round 6 wins; a tie shares the win". Totals p1 230, p2 230, p3 265
    (round 1: p3 holds AS and 2H, 95): p1 and p2 win. (Chips: §3 names none; the engine's
    stated pot of stakes, split as R5-GAME's tie: 303 -> p1 152, p2 151.)"""
    log, seqs, totals = liverpool_six()
    assert totals == {"p1": 230, "p2": 230, "p3": 265}
    log.sys("ChipsTransferred", {"transfers": [
        *({"from": p, "to": "pot", "amount": 101, "reason": "stake"} for p in LV_SEATS),
        {"from": "pot", "to": "p1", "amount": 152, "reason": "pot"},
        {"from": "pot", "to": "p2", "amount": 151, "reason": "pot"}]})
    ge = log.sys("GameEnded", {"winners": ["p1", "p2"], "net": {"p1": 51, "p2": 50, "p3": -101}})
    rec = replay(log.events)
    assert findings(rec) == []
    assert rec.results.to_dict() == {"winners": ["p1", "p2"], "net": {"p1": 51, "p2": 50, "p3": -101},
                                     "scores": totals}
    ace15 = copy.deepcopy(log.events)  # the ace and the 2 as 15 each: 75, not 95
    ace15[seqs[1]]["payload"]["scores"]["p3"] = 75
    assert run(ace15) == [(seqs[1], "C-CLAIM", "discrepancy")]
    alone = copy.deepcopy(log.events)  # only the first of the tied players
    alone[ge]["payload"]["winners"] = ["p1"]
    assert run(alone) == [(ge, "C-CLAIM", "discrepancy")]
    total = copy.deepcopy(log.events)  # round 6 claimed with the running totals
    total[seqs[6]]["payload"]["scores"] = {"p1": 0, "p2": 230, "p3": 265}
    assert run(total) == [(seqs[6], "C-CLAIM", "discrepancy")]
    early = copy.deepcopy(log.events)  # the game claimed over after round 5
    early.insert(seqs[5] + 1, {**early[seqs[5]], "type": "GameEnded",
                               "payload": {"winners": ["p1", "p2"], "net": {"p1": 51, "p2": 50, "p3": -101}}})
    for i, e in enumerate(early):
        e["seq"], e["event_id"] = i, f"lv43-{i:04d}"
    assert (seqs[5] + 1, "C-CLAIM", "discrepancy") in findings(replay(early, verify_hashes=False))


# == (1) Michigan claims =======================================================================


def test_michigan_poker_tie_odd_chip_goes_from_left_of_the_dealer() -> None:
    """MI-POKER: "the best poker hand ... wins the pot; ties split, remainder one chip each
    in seat order from left of the dealer". Dealer b (seat 1): a and c both hold a 2-6
    straight, b a pair: pot 3 -> 1 each and the odd chip to c (left of b), not to a."""
    a = ["2H", "3H", "4H", "5C", "6C"]
    c = ["2S", "3S", "4S", "5D", "6D"]
    b = ["KH", "KD", "9C", "8S", "JH"]
    rest = [x for x in format_cards(range(52)) if x not in a + b + c]
    hands = {"a": a + rest[0:8], "b": b + rest[8:16], "c": c + rest[16:24]}
    log = Log("mi43p")
    log.created("michigan", ["a", "b", "c"], dealer=1, stake=0, rules={"three_in_one": True})
    log.round(michigan_deck([hands["c"], hands["a"], hands["b"], rest[24:]]), round_no=1, dealer=1)
    for p in ("c", "a", "b"):
        log.add("PokerHandDeclared", p, {"cards": hands[p][:5]})
    ct = log.sys("ChipsTransferred", {"transfers": [
        *({"from": p, "to": "poker", "amount": 1, "reason": "poker"} for p in ("c", "a", "b")),
        {"from": "poker", "to": "a", "amount": 1, "reason": "poker pot"},
        {"from": "poker", "to": "c", "amount": 2, "reason": "poker pot"}]})
    rec = replay(log.events)
    assert findings(rec) == []  # the antes are not claimed yet: not a finding without GameEnded
    assert rec.state.snapshot()["poker"]["winners"] == ["a", "c"]
    first_seat = copy.deepcopy(log.events)
    first_seat[ct]["payload"]["transfers"][3:] = [
        {"from": "poker", "to": "a", "amount": 2, "reason": "poker pot"},
        {"from": "poker", "to": "c", "amount": 1, "reason": "poker pot"}]
    assert run(first_seat) == [(ct, "C-CLAIM", "discrepancy")]


def test_michigan_unplayed_pay_card_rolls_over_and_pays_both_deals_to_its_player() -> None:
    """MI-OUT: "Chips on unplayed pay cards roll over to the next deal"; MI-PAY: "whoever
    plays a pay card takes the chips on it"; MI-ANTE: each of 3 players puts 1 on each pay
    card per deal. Driver game (3 players, 2 deals, seed 101): QD is not played in deal 1
    and p1 plays it in deal 2: pay:QD -> p1 6 (3 + 3). Claiming only the second deal's 3
    is C-CLAIM at that ChipsTransferred."""
    events = driver_game(3, 101, deals=2)
    starts = [i for i, e in enumerate(events) if e["type"] == "RoundStarted"]
    played = [{e["payload"]["card"] for e in part if e["type"] == "CardPlayed"}
              for part in (events[starts[0]:starts[1]], events[starts[1]:])]
    assert "QD" not in played[0] and "QD" in played[1]
    assert run(events) == []
    ct = next(i for i, e in enumerate(events) if e["type"] == "ChipsTransferred" and any(
        t["from"] == "pay:QD" and t["reason"] == "pay card" for t in e["payload"]["transfers"]))
    transfer = next(t for t in events[ct]["payload"]["transfers"] if t["from"] == "pay:QD" and t["reason"] == "pay card")
    assert transfer["amount"] == 6
    wrong = copy.deepcopy(events)
    next(t for t in wrong[ct]["payload"]["transfers"] if t["from"] == "pay:QD" and t["reason"] == "pay card")["amount"] = 3
    assert (ct, "C-CLAIM", "discrepancy") in run(wrong)


def test_r500_target_tie_eliminates_the_rest_and_the_playoff_winner_takes_the_pot() -> None:
    """R5-GAME target: "rounds go on until at least one player's total >= target ... Tied
    leaders: players below the tie are eliminated and the tied players play more rounds
    until the tie breaks." Target 1. Round 1: p1 melds 5H 6H 7H (18) and holds 10: 8; p2
    the same with spades: 8; p3 holds 62: -62. p1 and p2 tie (>= 1), p3 is out. Round 2
    (two players, 13 cards; the dealer moves left: p1 deals, p2 starts): p2 88, p1 -87:
    the tie is broken, p2 takes the pot of 300 (net +200, -100, -100)."""
    from r500kit import P1, P2, STOCK, UP

    h1 = ["5H", "6H", "7H", "2C", "3C", "2D", "3D"]
    h2 = ["5S", "6S", "7S", "2H", "3H", "2S", "3S"]
    h3 = ["9C", "9D", "TC", "JD", "QC", "KD", "4D"]
    s = Script([h1, h2, h3], up="8C", stock=["AC", "AD"], seats=["p1", "p2", "p3"], dealer=2,
               rules={"mode": "target", "target": 1}, stake=100)
    for player, run_, card in (("p1", ["5H", "6H", "7H"], "AC"), ("p2", ["5S", "6S", "7S"], "AD")):
        s.draw(player)
        s.meld(player, {"kind": "run", "cards": run_})
        s.log.discard(player, card)
    s.exhaust(["p3", "p1", "p2"])
    s.sys("RoundEnded", {"round": 1, "winners": ["p1", "p2"], "scores": {"p1": 8, "p2": 8, "p3": -62}})
    s.sys("PlayerRemoved", {"player": "p3", "reason": "bust"})
    s.deal([P1, P2], UP, STOCK, dealer=0)
    go_out_round(s, "p2", "p1")
    s.sys("RoundEnded", {"round": 2, "winners": ["p2"], "scores": {"p1": -87, "p2": 88}})
    ct = s.sys("ChipsTransferred", {"transfers": [
        *({"from": p, "to": "pot", "amount": 100, "reason": "stake"} for p in ("p1", "p2", "p3")),
        {"from": "pot", "to": "p2", "amount": 300, "reason": "pot"}]})
    ge = s.sys("GameEnded", {"winners": ["p2"], "net": {"p1": -100, "p2": 200, "p3": -100}})
    rec = replay(s.log.events)
    assert findings(rec) == []
    assert rec.results.winners == ["p2"]
    split = copy.deepcopy(s.log.events)  # the round-1 tie paid out as a split
    split[ct]["payload"]["transfers"][3:] = [{"from": "pot", "to": "p1", "amount": 150, "reason": "pot"},
                                            {"from": "pot", "to": "p2", "amount": 150, "reason": "pot"}]
    split[ge]["payload"] = {"winners": ["p1", "p2"], "net": {"p1": 50, "p2": 50, "p3": -100}}
    assert set(run(split)) == {(ct, "C-CLAIM", "discrepancy"), (ge, "C-CLAIM", "discrepancy")}


def test_liverpool_rummy_call_with_the_last_card_ends_the_round_for_the_caller() -> None:
    """LV-RUMMY: the caller "takes the card, lays it off, and then discards a card of his
    own"; LV-OUT: "the round ends when a player has no cards"; LV-SCORE: the others score
    what they hold. p2 lays down 9 cards and keeps 9S; p3 discards 5S; p2 calls Rummy on it
    (set 5C 5D 5H 2S) discarding 9S: out. p1 holds 2H (25) + 50, p3 75 with QD drawn."""
    p2 = ["5C", "5D", "5H", "2S", "6C", "6D", "6H", "6S", "2C", "9S"]
    p3 = ["5S", "3C", "3D", "4C", "4D", "7C", "7D", "8C", "8D", "AH"]
    p1 = ["3H", "3S", "4H", "4S", "7H", "7S", "8H", "8S", "TC", "2H"]
    log = Log("lv43r")
    log.created("liverpool", LV_SEATS, dealer=0, stake=100)
    log.round(stacked_deck([p2, p3, p1], "QS", ["KC", "QD"], decks=2, jokers=0), round_no=1, dealer=0)
    log.draw("p2", "stock", "KC")
    log.add("LaidDown", "p2", {"melds": [_set("5C", "5D", "5H", "2S"), _set("6C", "6D", "6H", "6S", "2C")]})
    log.discard("p2", "KC")
    log.draw("p3", "stock", "QD")
    log.discard("p3", "5S")
    log.add("RummyCalled", "p2", {"card": "5S", "meld": 0, "discard": "9S"})
    re_ = log.sys("RoundEnded", {"round": 1, "winners": ["p2"], "scores": {"p1": 75, "p2": 0, "p3": 75}})
    assert run(log.events) == []
    to_p3 = copy.deepcopy(log.events)  # the round given to the discarder
    to_p3[re_]["payload"] = {"round": 1, "winners": ["p3"], "scores": {"p1": 75, "p2": 0, "p3": 0}}
    assert set(run(to_p3)) == {(re_, "C-CLAIM", "discrepancy")}  # winners and scores
