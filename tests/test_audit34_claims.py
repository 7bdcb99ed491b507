"""Audit 34: every platform claim of RULES.md / EVENTS.md, recomputed per variant.

Each test builds a small log by hand (tests/logkit.py, tests/r500kit.py,
tests/test_michigan_kit.py) and states the expected numbers, worked out from the spec
text before the replay was run; the docstring quotes the passage. A right claim must
give no finding; a wrong one a ``C-CLAIM`` discrepancy at the claim event's ``seq``.

The corners pinned here were not pinned by the earlier audits: a claim event logged
twice, claims after a halt, non-positive amounts, claims naming extra or missing
players, the classic rake remainder at an odd basis-point rate, a Rummy 500 tournament
payment capped by the loser's stack (its pot claims, its bust claim), a two-round
``rounds`` game whose totals tie, a Liverpool game ended by leaves, and a Michigan
game ended by leaves (kitty plus every pay card to the last player).
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from logkit import Log, findings, stacked_deck
from r500kit import P1, P2, STOCK, UP, Script, go_out_round
from spec_paths import EXAMPLES
from test_michigan_kit import STACKED

from rummyguard.replay.engine import replay

# == the spec's clean classic game (examples/classic-3p.jsonl) =================================
# seq 24 ChipsTransferred (3 stakes of 100, pot 300 -> p1), 25 RoundEnded, 26 GameEnded
# (winners [p1], net p1 +200, p2 -100, p3 -100).

P = "example-classic-"
CT, RE, GE = 24, 25, 26


def example() -> list[dict[str, Any]]:
    path = EXAMPLES / "classic-3p.jsonl"
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def renumber(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for seq, event in enumerate(events):
        e = dict(event)
        e["seq"], e["event_id"] = seq, f"a34-{seq}"
        out.append(e)
    return out


def run(events: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    return findings(replay(events, verify_hashes=False))


def test_example_is_clean_and_its_claims_are_at_the_seqs_assumed_here() -> None:
    events = example()
    assert [events[i]["type"] for i in (CT, RE, GE)] == ["ChipsTransferred", "RoundEnded", "GameEnded"]
    assert run(events) == []


def test_chips_transferred_logged_twice_is_C_CLAIM_at_the_second() -> None:
    """C-CLAIM: "all of its transfers together must equal, as a multiset of (from, to,
    amount), every transfer the replay computes ... the first differing event ... carries
    the finding". The same transfers logged again (a new event) are all extra: 300 chips
    of stakes and a second 300 payout nobody earned."""
    events = example()
    events.insert(CT + 1, copy.deepcopy(events[CT]))
    found = replay(renumber(events), verify_hashes=False).findings
    assert [(f.seq, f.rule, f.kind) for f in found] == [(CT + 1, "C-CLAIM", "discrepancy")]
    assert "claimed but not due" in found[0].message and "due but not claimed" not in found[0].message


@pytest.mark.parametrize("index", [RE, GE])
def test_a_right_round_or_game_claim_repeated_is_still_right(index: int) -> None:
    """C-CLAIM compares what a claim says with the recomputed value; a second RoundEnded
    or GameEnded that says the same true thing differs from nothing (RULES.md has no rule
    that a claim is made once; reading: not a finding)."""
    events = example()
    events.insert(index + 1, copy.deepcopy(events[index]))
    assert run(renumber(events)) == []


def test_a_wrong_game_claim_repeated_is_reported_at_each() -> None:
    """Each GameEnded is a claim of its own, judged player by player (C-CLAIM)."""
    events = example()
    events[GE]["payload"]["net"][P + "p2"] = -99
    events.append(copy.deepcopy(events[GE]))
    assert run(renumber(events)) == [(GE, "C-CLAIM", "discrepancy"), (GE + 1, "C-CLAIM", "discrepancy")]


@pytest.mark.parametrize("amount", [-300, -1])
def test_a_negative_amount_is_a_claim_not_due(amount: int) -> None:
    """C-CLAIM compares (from, to, amount) triples; "Chips are integers" and a negative
    payout is none of the computed transfers: pot -> p1 -300 is claimed but not due, and
    the true pot -> p1 300 is due but not claimed. One finding, at the differing event.
    (Replayed directly; `verify` quarantines such a line: see the audit report.)"""
    events = example()
    events[CT]["payload"]["transfers"][3]["amount"] = amount
    found = replay(events, verify_hashes=False).findings
    assert [(f.seq, f.rule, f.kind) for f in found] == [(CT, "C-CLAIM", "discrepancy")]
    assert f"pot->{P}p1 {amount}" in found[0].message
    assert f"due but not claimed: pot->{P}p1 300" in found[0].message


def test_a_zero_amount_transfer_is_no_claim() -> None:
    """"A claim the platform did not log is not a finding"; a transfer of 0 moves no
    chips, so it neither adds to nor takes from the multiset (a zero rake)."""
    events = example()
    events[CT]["payload"]["transfers"].append({"from": P + "p2", "to": P + "p3", "amount": 0, "reason": "x"})
    assert run(events) == []


@pytest.mark.parametrize("winners", [[P + "p1", P + "p1"], [P + "p1", P + "p2"], [P + "p1", "ghost"], []])
def test_game_winners_with_extra_missing_or_repeated_players(winners: list[str]) -> None:
    """CL-RESULT: winners = the declarer; any other list (a repeat, an extra seated or
    unseated id, none) differs (C-CLAIM at GameEnded)."""
    events = example()
    events[GE]["payload"]["winners"] = winners
    assert run(events) == [(GE, "C-CLAIM", "discrepancy")]


def test_net_claim_missing_a_loser_or_naming_a_stranger() -> None:
    """C-CLAIM: "GameEnded.net is compared player by player". A seated player left out of
    the claim is claimed at 0 (p2 lost 100: a finding); an id nobody has (``ghost``) at 0
    is no claim, at 5 it differs."""
    events = example()
    del events[GE]["payload"]["net"][P + "p2"]
    assert run(events) == [(GE, "C-CLAIM", "discrepancy")]
    events = example()
    events[GE]["payload"]["net"]["ghost"] = 0
    events[GE]["payload"]["net"]["pot"] = 0  # the pot is empty after the payout
    assert run(events) == []
    events[GE]["payload"]["net"]["ghost"] = 5
    assert run(events) == [(GE, "C-CLAIM", "discrepancy")]


def test_claims_after_a_halt_are_not_judged_and_those_before_are() -> None:
    """§0 C-HOLD: "the replay halts with an integrity finding"; a halted replay cannot
    recompute what comes after, so the wrong claims after the halting event give no
    finding, and no transfer logged after it is "missing" or "extra"."""
    events = example()
    drew = next(i for i, e in enumerate(events) if e["type"] == "Drew"
                and e["payload"]["source"] == "discard")
    events[drew]["payload"]["cards"] = ["AS"] if events[drew]["payload"]["cards"] != ["AS"] else ["AD"]
    events[CT]["payload"]["transfers"][3]["amount"] = 1  # wrong, after the halt
    events[GE]["payload"]["net"][P + "p1"] = 7  # wrong, after the halt
    record = replay(events, verify_hashes=False)
    assert record.halted and record.halted_at == drew
    assert [(f.seq, f.rule) for f in record.findings] == [(drew, "C-HOLD")]


def _with_rake(rake: int, payout: int, net_p1: int, house: int | None) -> list[dict[str, Any]]:
    events = example()
    events[0]["payload"]["rules"] = {**events[0]["payload"]["rules"], "rake_bps": 333}
    ts = events[CT]["payload"]["transfers"]
    ts[3]["amount"] = payout
    ts.append({"from": "pot", "to": "house", "amount": rake, "reason": "rake"})
    events[GE]["payload"]["net"][P + "p1"] = net_p1
    if house is not None:
        events[GE]["payload"]["net"]["house"] = house
    return events


def test_classic_rake_at_333_bps_is_floored_to_9_of_300() -> None:
    """CL-RUMMY: "rake = ⌊pot × rake_bps / 10000⌋, paid from the pot to house": 300 x 333
    / 10000 = 9.99 -> 9; the winner takes 291; CL-RESULT net p1 = 300 - 9 - 100 = 191."""
    assert run(_with_rake(9, 291, 191, 9)) == []
    assert run(_with_rake(9, 291, 191, None)) == []  # the house left out: not a claim


def test_classic_rake_rounded_to_nearest_is_C_CLAIM() -> None:
    """"No rounding ever happens except where a rule names it": a rake of 10 (9.99
    rounded) is a wrong transfer at the ChipsTransferred and a wrong net at GameEnded."""
    assert run(_with_rake(10, 290, 190, 10)) == [(CT, "C-CLAIM", "discrepancy"),
                                                 (GE, "C-CLAIM", "discrepancy")]


# == Rummy 500 (RULES.md §2) =====================================================================
# go_out_round (r500kit): p1 scores 88, p2 9 - 96 = -87.


def mirrored_round(s: Script) -> None:
    """go_out_round with the roles swapped (p2 starts, dealt p1's hand): p2 88, p1 -87."""
    go_out_round(s, "p2", "p1")


def test_r500_rounds_mode_two_rounds_whose_totals_tie_split_the_pot() -> None:
    """R5-GAME ``rounds``: a fixed number of rounds, "the highest total wins; a tie splits
    the prize equally". Round 1: p1 88, p2 -87; round 2 (the dealer moved left, p2
    starts): p2 88, p1 -87. Totals 1 and 1: both win, pot 200 -> 100 each, net 0 and 0;
    results.scores are the sums of the round scores (§5)."""
    s = Script(rules={"mode": "rounds", "rounds": 2})
    go_out_round(s)
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 88, "p2": -87}})
    s.deal([P1, P2], UP, STOCK, dealer=0)
    mirrored_round(s)
    r2 = s.sys("RoundEnded", {"round": 2, "winners": ["p2"], "scores": {"p1": -87, "p2": 88}})
    ct = s.sys("ChipsTransferred", {"transfers": [
        {"from": "p1", "to": "pot", "amount": 100, "reason": "stake"},
        {"from": "p2", "to": "pot", "amount": 100, "reason": "stake"},
        {"from": "pot", "to": "p2", "amount": 100, "reason": "pot"},
        {"from": "pot", "to": "p1", "amount": 100, "reason": "pot"}]})
    ge = s.sys("GameEnded", {"winners": ["p2", "p1"], "net": {"p1": 0, "p2": 0}})
    record = replay(s.log.events)
    assert findings(record) == []
    assert record.results.to_dict() == {"winners": ["p1", "p2"], "net": {"p1": 0, "p2": 0},
                                        "scores": {"p1": 1, "p2": 1}}
    wrong = copy.deepcopy(s.log.events)
    wrong[ge]["payload"]["winners"] = ["p1"]  # only one of the tied leaders
    wrong[ct]["payload"]["transfers"][2:] = [{"from": "pot", "to": "p1", "amount": 200, "reason": "pot"}]
    wrong[r2]["payload"]["scores"]["p1"] = 1  # the game total, not the round score
    assert findings(replay(wrong)) == [(r2, "C-CLAIM", "discrepancy"), (ct, "C-CLAIM", "discrepancy"),
                                       (ge, "C-CLAIM", "discrepancy")]


def test_r500_tournament_payment_capped_at_the_stack_busts_the_loser() -> None:
    """R5-POT: in ``tournament`` mode ``stake`` is the starting stack, "chips move only
    between players", net = final stack - stake. R5-CHIPS: p2 owes (88 - (-87)) x 1 = 175,
    "capped at what he holds" = 100; with no chips left he is out and p1, the last at the
    table, wins. A ``bust`` removal of p2 is the platform's confirmation (no finding)."""
    s = Script(rules={"mode": "tournament"})
    go_out_round(s)
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 88, "p2": -87}})
    ct = s.sys("ChipsTransferred", {"transfers": [{"from": "p2", "to": "p1", "amount": 100, "reason": "r1"}]})
    s.sys("PlayerRemoved", {"player": "p2", "reason": "bust"})
    ge = s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 100, "p2": -100}})
    assert findings(replay(s.log.events)) == []

    uncapped = copy.deepcopy(s.log.events)
    uncapped[ct]["payload"]["transfers"][0]["amount"] = 175
    uncapped[ge]["payload"]["net"] = {"p1": 175, "p2": -175}
    assert findings(replay(uncapped)) == [(ct, "C-CLAIM", "discrepancy"), (ge, "C-CLAIM", "discrepancy")]

    staked = copy.deepcopy(s.log.events)  # a pot as in the other modes: not in tournament
    staked[ct]["payload"]["transfers"][:0] = [
        {"from": p, "to": "pot", "amount": 100, "reason": "stake"} for p in ("p1", "p2")]
    assert findings(replay(staked)) == [(ct, "C-CLAIM", "discrepancy")]


def test_r500_tournament_loser_with_chips_left_plays_on() -> None:
    """R5-CHIPS with a stack of 200: p2 pays the full 175 and keeps 25, so nobody is out
    and the game goes on: a ``bust`` removal and a GameEnded are both wrong claims."""
    s = Script(rules={"mode": "tournament"}, stake=200)
    go_out_round(s)
    s.sys("ChipsTransferred", {"transfers": [{"from": "p2", "to": "p1", "amount": 175, "reason": "r1"}]})
    rm = s.sys("PlayerRemoved", {"player": "p2", "reason": "bust"})
    ge = s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 175, "p2": -175}})
    got = findings(replay(s.log.events))
    assert (rm, "C-CLAIM", "discrepancy") in got
    assert all(seq in (rm, ge) and rule == "C-CLAIM" for seq, rule, _ in got)


# == Liverpool (RULES.md §3) ====================================================================


def liverpool_three() -> Log:
    """Three players, dealer p1 (seat 0): round 1 dealt (10 cards each), p2 to play."""
    log = Log("lv34")
    log.created("liverpool", ["p1", "p2", "p3"], dealer=0, stake=100)
    hands = [["3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC", "JC", "QC"],
             ["3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD", "JD", "QD"],
             ["3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH"]]
    log.round(stacked_deck(hands, "KS", decks=2, jokers=0), round_no=1, dealer=0)
    return log


def test_liverpool_game_ended_by_leaves_pays_the_pot_to_the_last_player() -> None:
    """§0 / EVENTS.md: PlayerLeft "at any moment"; RULES.md §3 says nothing about chips
    (the engine's stated reading: each player stakes ``stake`` into the pot, a leaver's
    stake stays, the last player standing takes the pot). p3 and p2 leave in round 1: p1
    takes 300, net +200; the round never ended, so a RoundEnded for it is C-CLAIM."""
    log = liverpool_three()
    log.add("PlayerLeft", "p3")
    log.sys("PlayerRemoved", {"player": "p3", "reason": "left"})
    log.add("PlayerLeft", "p2")
    ct = log.sys("ChipsTransferred", {"transfers": [
        *({"from": p, "to": "pot", "amount": 100, "reason": "stake"} for p in ("p1", "p2", "p3")),
        {"from": "pot", "to": "p1", "amount": 300, "reason": "pot"}]})
    ge = log.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 200, "p2": -100, "p3": -100}})
    record = replay(log.events)
    assert findings(record) == []
    assert record.results.scores == {"p1": 0, "p2": 0, "p3": 0}
    ended = copy.deepcopy(log.events)  # a RoundEnded for the round nobody went out of
    ended.insert(ct, {**ended[ct], "type": "RoundEnded",
                      "payload": {"round": 1, "winners": ["p1"], "scores": {}}})
    assert findings(replay(renumber(ended), verify_hashes=False)) == [(ct, "C-CLAIM", "discrepancy")]
    split = copy.deepcopy(log.events)  # the pot shared with a leaver
    split[ct]["payload"]["transfers"][3:] = [{"from": "pot", "to": "p1", "amount": 200, "reason": "pot"},
                                            {"from": "pot", "to": "p2", "amount": 100, "reason": "pot"}]
    split[ge]["payload"]["winners"] = ["p1", "p2"]
    assert findings(replay(split)) == [(ct, "C-CLAIM", "discrepancy"), (ge, "C-CLAIM", "discrepancy")]


def test_liverpool_removal_for_strikes_is_a_claim_and_applied() -> None:
    """Liverpool has no clocks or strikes (§3): a ``strikes`` removal is a C-CLAIM
    discrepancy; the platform did remove him, so with one player left the game ends."""
    log = liverpool_three()
    rm = log.sys("PlayerRemoved", {"player": "p3", "reason": "strikes"})
    log.add("PlayerLeft", "p2")
    log.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 200, "p2": -100, "p3": -100}})
    assert findings(replay(log.events)) == [(rm, "C-CLAIM", "discrepancy")]


# == Michigan (RULES.md §4) =====================================================================


def michigan_three(**rules: Any) -> Log:
    """Seats a, b, c, dealer c (seat 2): the stacked deal of tests/test_michigan_kit.py."""
    log = Log("mi34")
    log.created("michigan", ["a", "b", "c"], dealer=2, stake=0, rules=rules)
    log.round(STACKED, round_no=1, dealer=2)
    return log


def test_michigan_game_ended_by_leaves_gives_kitty_and_pay_cards_to_the_last() -> None:
    """MI-ANTE: a and b put 1 in the kitty, the dealer c 2 (kitty 4), and each puts
    ``pay_ante`` = 1 on each of the 4 pay cards (3 per card, 12). a and b leave before a
    card is played: c is the last player, wins the deal's kitty (MI-OUT, by the engine's
    stated reading of a game ended by leaves) and the pay-card chips (MI-END divides them
    among the players still in: c alone). Net a -5, b -5, c -6 + 4 + 12 = +10; the game's
    winners are the highest net: c."""
    log = michigan_three()
    log.add("PlayerLeft", "a")
    log.add("PlayerLeft", "b")
    ante = [{"from": p, "to": "kitty", "amount": 2 if p == "c" else 1, "reason": "ante"} for p in "abc"]
    ante += [{"from": p, "to": f"pay:{card}", "amount": 1, "reason": "pay ante"}
             for p in "abc" for card in ("JS", "QD", "KC", "AH")]
    won = [{"from": "kitty", "to": "c", "amount": 4, "reason": "kitty"}]
    won += [{"from": f"pay:{card}", "to": "c", "amount": 3, "reason": "split"} for card in ("JS", "QD", "KC", "AH")]
    ct = log.sys("ChipsTransferred", {"transfers": ante + won})
    re_ = log.sys("RoundEnded", {"round": 1, "winners": ["c"], "scores": {}})
    ge = log.sys("GameEnded", {"winners": ["c"], "net": {"a": -5, "b": -5, "c": 10}})
    record = replay(log.events)
    assert findings(record) == []
    assert record.results.net == {"a": -5, "b": -5, "c": 10}

    one_card = copy.deepcopy(log.events)  # the pay cards paid out as one lump from one card
    one_card[ct]["payload"]["transfers"][-4:] = [
        {"from": "pay:AH", "to": "c", "amount": 12, "reason": "split"}]
    assert (ct, "C-CLAIM", "discrepancy") in findings(replay(one_card))

    shared = copy.deepcopy(log.events)  # "among all players", leavers included
    shared[ct]["payload"]["transfers"][-4:] = [
        {"from": f"pay:{card}", "to": p, "amount": 1, "reason": "split"}
        for card in ("JS", "QD", "KC", "AH") for p in "abc"]
    shared[ge]["payload"]["net"] = {"a": -1, "b": -1, "c": 2}
    assert findings(replay(shared)) == [(ct, "C-CLAIM", "discrepancy"), (ge, "C-CLAIM", "discrepancy")]

    scored = copy.deepcopy(log.events)  # Michigan counts chips only: round scores are {}
    scored[re_]["payload"]["scores"] = {"c": 16}
    assert findings(replay(scored)) == [(re_, "C-CLAIM", "discrepancy")]


def test_michigan_pay_ante_config_scales_the_pay_card_antes() -> None:
    """MI-ANTE: "Each player also puts ``pay_ante`` chips on each pay card": with
    ``pay_ante`` 3 each player puts 12 on the pay cards; the transfer of the default 1
    is a wrong claim at its event."""
    log = michigan_three(pay_ante=3)
    ct = log.sys("ChipsTransferred", {"transfers": [
        {"from": "a", "to": "pay:JS", "amount": 1, "reason": "pay ante"}]})
    assert findings(replay(log.events)) == [(ct, "C-CLAIM", "discrepancy")]
    log = michigan_three(pay_ante=3)
    log.sys("ChipsTransferred", {"transfers": [
        {"from": p, "to": f"pay:{card}", "amount": 3, "reason": "pay ante"}
        for p in "abc" for card in ("JS", "QD", "KC", "AH")]})
    assert findings(replay(log.events)) == []  # no GameEnded: the kitty antes may follow
