"""Second spec audit: whole-game flows and results of Rummy 500 (RULES.md §2), Liverpool
(§3) and Michigan (§4), checked against values computed by hand from the spec.

Each scenario is a complete multi-round log with the platform's claims (``RoundEnded``,
``PlayerRemoved``, ``ChipsTransferred`` split over several events, ``GameEnded`` with every
player) and checks every output an independent checker compares: ``winners``, ``net``,
``scores``, the findings (rule, kind, seq, and that no other finding appears), halting,
and ``state_at`` / per-player views. The hand computations are written next to each
expected value. Tests marked "fixed" failed before this audit's change to the variant.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from logkit import Log, findings
from r500kit import Script
from test_liverpool import going_out_by_layoffs
from test_michigan_kit import michigan_deck

from rummyguard.replay.engine import GameRecord, replay, state_at

Events = list[dict[str, Any]]

# == Rummy 500 ====================================================================================
# Three players p1 p2 p3, dealer p3 (seat 2): round 1 is dealt p1, p2, p3, seven cards each.
# p1 and p2 each meld two runs at once and keep one 2; p3 melds nothing; then the stock is
# drawn down (every player draws and discards the drawn card) until it is empty.

R1_HANDS = [
    ["3H", "4H", "5H", "6C", "7C", "8C", "2D"],  # p1: 12 + 21 melded - 2 held = 31
    ["3S", "4S", "5S", "6D", "7D", "8D", "2S"],  # p2: 12 + 21 - 2 = 31
    ["9C", "TD", "JH", "QS", "KC", "AD", "2C"],  # p3: -(9 + 10 + 10 + 10 + 10 + 15 + 2) = -66
]
R1_RUNS = {"p1": (["3H", "4H", "5H"], ["6C", "7C", "8C"]), "p2": (["3S", "4S", "5S"], ["6D", "7D", "8D"])}
R1_SCORES = {"p1": 31, "p2": 31, "p3": -66}


def r500_round1(rules: dict[str, Any], *, stake: int = 100, p3_leaves: bool = False) -> Script:
    s = Script(R1_HANDS, up="4C", stock=[], seats=["p1", "p2", "p3"], dealer=2, rules=rules, stake=stake)
    for player, runs in R1_RUNS.items():
        card = s.draw(player)
        for run in runs:
            s.meld(player, {"kind": "run", "cards": list(run)})
        s.log.discard(player, card)
    if p3_leaves:  # in his turn, before drawing: he scores nothing, the round goes on
        s.log.add("PlayerLeft", "p3")
        s.exhaust(["p1", "p2"])
    else:
        s.turn("p3")
        s.exhaust(["p1", "p2", "p3"])
    return s


# Round 2 with two players (13 cards each), dealt by p1 (the next dealer left of p3), so p2
# plays first. p2 melds 9H-KH (49) and holds 25 points: 24; p1 melds nothing and holds 76.
R2_P2 = ["9H", "TH", "JH", "QH", "KH", "2C", "2H", "2D", "3C", "3D", "4C", "4D", "5C"]
R2_P1 = ["9S", "9D", "7H", "7S", "6H", "6S", "5H", "5D", "4H", "4S", "3H", "3S", "8H"]


def r500_round2_p2_wins(s: Script) -> int:
    """Deal and play round 2; returns the seq of p2's meld."""
    s.deal([R2_P2, R2_P1], "AC", [], dealer=0)
    card = s.draw("p2")
    seq = s.meld("p2", {"kind": "run", "cards": R2_P2[:5]})
    s.log.discard("p2", card)
    s.turn("p1")
    s.exhaust(["p2", "p1"])
    return seq


def stakes(seats: list[str], stake: int) -> list[dict[str, Any]]:
    return [{"from": p, "to": "pot", "amount": stake, "reason": "stake"} for p in seats]


def test_r500_target_tie_eliminates_the_rest_and_the_playoff_decides() -> None:
    """R5-GAME target 20: after round 1 p1 and p2 lead tied at 31 (>= 20), p3 (-66) is
    eliminated; round 2 is played by p1 and p2 alone; p2 then leads alone (55 v -45) and
    wins the 300-chip pot. Claims logged in pieces replay clean; a move after GameEnded is
    C-TURN, a PlayerLeft after it changes nothing."""
    s = r500_round1({"mode": "target", "target": 20})
    s.sys("ChipsTransferred", {"transfers": stakes(["p1"], 100)})
    s.sys("ChipsTransferred", {"transfers": stakes(["p2", "p3"], 100)})
    s.sys("RoundEnded", {"round": 1, "winners": ["p1", "p2"], "scores": R1_SCORES})
    s.sys("PlayerRemoved", {"player": "p3", "reason": "bust"})
    rec = replay(s.log.events)
    assert findings(rec) == [] and not rec.state.over
    assert rec.state.out == {2: "eliminated"} and rec.results.winners == []
    r500_round2_p2_wins(s)
    s.sys("RoundEnded", {"round": 2, "winners": ["p2"], "scores": {"p1": -76, "p2": 24}})
    s.sys("ChipsTransferred", {"transfers": [{"from": "pot", "to": "p2", "amount": 300, "reason": "pot"}]})
    ended = s.sys("GameEnded", {"winners": ["p2"], "net": {"p1": -100, "p2": 200, "p3": -100}})
    s.log.add("PlayerLeft", "p1")
    late = s.log.draw("p1", "stock", "2H")
    rec = replay(s.log.events)
    assert findings(rec) == [(late, "C-TURN", "violation")]
    assert not rec.halted
    assert rec.results.to_dict() == {
        "winners": ["p2"],
        "net": {"p1": -100, "p2": 200, "p3": -100},
        "scores": {"p1": 31 - 76, "p2": 31 + 24, "p3": -66},
    }
    # the same log with a wrong net for one player: one discrepancy, at GameEnded
    bad = copy.deepcopy(s.log.events[:ended + 1])
    bad[ended]["payload"]["net"]["p3"] = 0
    rec = replay(bad)
    assert findings(rec) == [(ended, "C-CLAIM", "discrepancy")]
    assert "p3: claimed 0, recomputed -100" in rec.findings[0].message


def test_r500_rounds_mode_leaver_and_split_prize_with_remainder() -> None:
    """R5-GAME rounds 2, stake 101: p3 leaves in round 1 (his stake stays in the pot, he is
    not scored); p1 and p2 tie on 55 after round 2 and split 303: 152 to p1 (seat 0 takes
    the odd chip), 151 to p2."""
    s = r500_round1({"mode": "rounds", "rounds": 2}, stake=101, p3_leaves=True)
    s.sys("RoundEnded", {"round": 1, "winners": ["p1", "p2"], "scores": {"p1": 31, "p2": 31}})
    s.sys("PlayerRemoved", {"player": "p3", "reason": "left"})
    p1 = ["9S", "TS", "JS", "QS", "KS", "2C", "2H", "2D", "3C", "3D", "4C", "4D", "5C"]  # 49 - 25 = 24
    p2 = ["7H", "8H", "9H", "TH", "JH", "QH", "2S", "3H", "3S", "4H", "4S", "5H", "9D"]  # 54 - 30 = 24
    s.deal([p2, p1], "6C", [], dealer=0)
    for player, hand, n in (("p2", p2, 6), ("p1", p1, 5)):
        card = s.draw(player)
        s.meld(player, {"kind": "run", "cards": hand[:n]})
        s.log.discard(player, card)
    s.exhaust(["p2", "p1"])
    s.sys("RoundEnded", {"round": 2, "winners": ["p1", "p2"], "scores": {"p1": 24, "p2": 24, "p3": 0}})
    s.sys("ChipsTransferred", {"transfers": stakes(["p1", "p2", "p3"], 101)})
    s.sys("ChipsTransferred", {"transfers": [{"from": "pot", "to": "p1", "amount": 152, "reason": "split"}]})
    s.sys("ChipsTransferred", {"transfers": [{"from": "pot", "to": "p2", "amount": 151, "reason": "split"}]})
    s.sys("GameEnded", {"winners": ["p1", "p2"], "net": {"p1": 51, "p2": 50, "p3": -101}})
    rec = replay(s.log.events)
    assert findings(rec) == []
    assert rec.results.to_dict() == {
        "winners": ["p1", "p2"],
        "net": {"p1": 51, "p2": 50, "p3": -101},
        "scores": {"p1": 55, "p2": 55, "p3": 0},
    }


def test_r500_tournament_capped_split_payments_busting_and_views() -> None:
    """R5-CHIPS ratio 1, stacks 50: round 1 p3 owes 97 to the tied winners, capped at his
    50, split 25/25; he is bust. Round 2 p1 owes 24 - (-76) = 100, capped at his 75: he is
    bust and p2, last at the table, wins. net = final stack - 50."""
    s = r500_round1({"mode": "tournament", "chip_ratio": 1}, stake=50)
    s.sys("ChipsTransferred", {"transfers": [
        {"from": "p3", "to": "p1", "amount": 25, "reason": "round 1"},
        {"from": "p3", "to": "p2", "amount": 25, "reason": "round 1"}]})
    s.sys("PlayerRemoved", {"player": "p3", "reason": "bust"})
    meld = r500_round2_p2_wins(s)
    s.sys("ChipsTransferred", {"transfers": [{"from": "p1", "to": "p2", "amount": 75, "reason": "round 2"}]})
    s.sys("PlayerRemoved", {"player": "p1", "reason": "bust"})
    s.sys("GameEnded", {"winners": ["p2"], "net": {"p1": -50, "p2": 100, "p3": -50}})
    rec = replay(s.log.events)
    assert findings(rec) == []
    assert rec.results.to_dict() == {
        "winners": ["p2"], "net": {"p1": -50, "p2": 100, "p3": -50},
        "scores": {"p1": -45, "p2": 55, "p3": -66},
    }
    # p1's view right after p2's meld in round 2: own hand, the table, counts; no stock
    view = state_at(s.log.events, meld, "p1")
    assert view["hands"] == {"p1": sorted_cards(R2_P1)}
    assert "stock" not in view and view["stock_count"] == 54 - 27 - 1
    assert view["hand_counts"] == {"p1": 13, "p2": 9, "p3": 0}
    assert view["stacks"] == {"p1": 75, "p2": 75, "p3": 0} and view["out"] == {"p3": "bust"}
    assert view["melds"][0]["cards"] == R2_P2[:5] and view["discard_pile"] == ["AC"]
    assert_no_hidden_cards(view, others=[c for c in R2_P2[5:]] + s.deck[27:])


def test_r500_tournament_tied_round_winners_share_each_payment_odd_chip_to_lower_seat() -> None:
    """R5-CHIPS, stacks 1000: p3 owes the tied winners 31 - (-66) = 97, split 49 to p1
    (seat 0) and 48 to p2; nobody is bust, the game goes on."""
    s = r500_round1({"mode": "tournament", "chip_ratio": 1}, stake=1000)
    s.sys("RoundEnded", {"round": 1, "winners": ["p2", "p1"], "scores": R1_SCORES})
    rec = replay(s.log.events)
    assert findings(rec) == [] and not rec.state.over and rec.state.out == {}
    assert [t.key() for t in rec.transfers] == [("p3", "p1", 49), ("p3", "p2", 48)]
    assert rec.results.net == {"p1": 49, "p2": 48, "p3": -97} and rec.results.winners == []


def test_r500_leaver_who_drew_the_last_stock_card_ends_the_round() -> None:
    """R5-END: p2 draws the last stock card and leaves before discarding: the round ends
    there, scored for p1 (-35: nothing melded) and p3 (-66); rounds 1 is the game."""
    s = Script(R1_HANDS, up="4C", stock=[], seats=["p1", "p2", "p3"], dealer=2,
               rules={"mode": "rounds", "rounds": 1})
    order = ["p1", "p2", "p3"]
    assert len(s.stock) == 54 - 3 * 7 - 1 == 32  # 31 turns, then p2 (31 % 3 = 1) draws the last
    for i in range(31):
        s.turn(order[i % 3])
    s.draw("p2")
    s.log.add("PlayerLeft", "p2")
    rec = replay(s.log.events)
    assert findings(rec) == []
    assert rec.state.round_result(1) == (["p1"], {"p1": -35, "p3": -66})
    assert rec.results.to_dict() == {"winners": ["p1"], "net": {"p1": 200, "p2": -100, "p3": -100},
                                     "scores": {"p1": -35, "p2": 0, "p3": -66}}


def test_r500_chip_claims_partial_split_and_after_game_end() -> None:
    """C-CLAIM over a whole game: logged transfers are one multiset whatever the events;
    a missing payout is reported at GameEnded (even when the stakes come after it); a
    game without GameEnded is not judged for missing transfers."""
    s = r500_round1({"mode": "rounds", "rounds": 1})
    base = copy.deepcopy(s.log.events)  # round 1 ends: p1 and p2 tie, 150 each
    pay = [{"from": "pot", "to": p, "amount": 150, "reason": "split"} for p in ("p1", "p2")]
    net = {"p1": 50, "p2": 50, "p3": -100}

    def run(*extra: tuple[str, dict[str, Any]]) -> tuple[GameRecord, list[int]]:
        s.log.events = copy.deepcopy(base)
        seqs = [s.sys(t, p) for t, p in extra]
        return replay(s.log.events), seqs

    rec, _ = run(("ChipsTransferred", {"transfers": stakes(["p1", "p2", "p3"], 100)[::-1]}),
                 *[("ChipsTransferred", {"transfers": [t]}) for t in pay],
                 ("GameEnded", {"winners": ["p2", "p1"], "net": net}))
    assert findings(rec) == [] and rec.results.net == net
    rec, seqs = run(("GameEnded", {"winners": ["p1", "p2"], "net": net}),
                    ("ChipsTransferred", {"transfers": stakes(["p1", "p2", "p3"], 100)}))
    assert findings(rec) == [(seqs[0], "C-CLAIM", "discrepancy")]
    assert "due but not claimed: pot->p1 150, pot->p2 150" in rec.findings[0].message
    rec, _ = run(("ChipsTransferred", {"transfers": stakes(["p1", "p2", "p3"], 100)}))
    assert findings(rec) == []
    rec, seqs = run(("ChipsTransferred", {"transfers": [*stakes(["p1", "p2", "p3"], 100),
                                                        {"from": "pot", "to": "p1", "amount": 300,
                                                         "reason": "pot"}]}),
                    ("GameEnded", {"winners": ["p1"], "net": {"p1": 200, "p2": -100, "p3": -100}}))
    assert findings(rec) == [(seqs[0], "C-CLAIM", "discrepancy"), (seqs[1], "C-CLAIM", "discrepancy"),
                             (seqs[1], "C-CLAIM", "discrepancy")]



# -- the stored whole games against an independent scorer --------------------------------------

R5_DATA = Path(__file__).parent / "data" / "r500"
RANKS = "23456789TJQKA"


def _rv(card: str) -> int:
    return RANKS.index(card[0]) + 2


def _r5_points(value: int) -> int:
    """R5-VALUES of a place on the table by ladder value (1 = ace low, 14 = ace high)."""
    return 1 if value == 1 else 11 if value == 14 else min(value, 10)


def _r5_penalty(card: str) -> int:
    return 15 if card == "JK" or card[0] == "A" else min(_rv(card), 10)


def _run_values(cards: list[str], as_map: dict[str, str] | None) -> list[int]:
    """Ladder values of a logged run's places (RULES.md C-WILD read literally: unnamed
    wilds at the low end extend the run upward while its top is below the ace)."""
    naturals = [(i, c) for i, c in enumerate(cards) if c != "JK"]
    named = {int(k): v for k, v in (as_map or {}).items()}
    anchor = next(((i, _rv(c)) for i, c in naturals if c[0] != "A"), None)
    if anchor is None:
        i, c = next(iter(named.items())) if named else naturals[0]
        anchor = (i, 14 if i == len(cards) - 1 else 1) if c[0] == "A" else (i, _rv(c))
    i0, v0 = anchor
    first = naturals[0][0]
    if named or first == 0:
        return [v0 + i - i0 for i in range(len(cards))]
    base = [v0 + i - i0 for i in range(first, len(cards))]
    lo, hi, lead = base[0], base[-1], []
    for _ in range(first):
        if hi < 14:
            hi += 1
            lead.append(hi)
        else:
            lo -= 1
            lead.append(lo)
    return lead + base


def r500_results_by_hand(events: Events) -> tuple[list[str], dict[str, int], dict[str, int],
                                                   dict[int, dict[str, int]]]:
    """An independent reading of an r500 log from RULES.md §2: hands from the deal, table
    places with their value and placer (R5-LAYOFF, R5-SWAP), round scores (R5-SCORE) at
    the end (last card discarded, or the stock empty after a discard), and the game by mode
    (R5-GAME, R5-POT, R5-CHIPS)."""
    g = events[0]["payload"]
    seats, rules, stake = g["seats"], g["rules"], g["stake"]
    mode = rules.get("mode", "target")
    active, totals = list(seats), dict.fromkeys(seats, 0)
    stacks = dict.fromkeys(seats, stake)
    rounds: dict[int, dict[str, int]] = {}
    hands: dict[str, Counter[str]] = {}
    table: list[dict[str, Any]] = []
    dealt: list[str] = []
    stock = 0
    live, over, playoff, winners, round_no = False, False, False, [], 0

    def settle(scores: dict[str, int]) -> None:
        nonlocal over, playoff, winners
        if mode == "tournament":
            best = max(scores.values())
            tops = [x for x in seats if scores.get(x) == best]
            before = dict(stacks)
            for x in seats:
                if x in scores and scores[x] != best:
                    due = min((best - scores[x]) * rules.get("chip_ratio", 1), max(before[x], 0))
                    share, rest = divmod(due, len(tops))
                    for i, w in enumerate(tops):
                        stacks[x] -= share + (i < rest)
                        stacks[w] += share + (i < rest)
            for x in [x for x in active if stacks[x] <= 0]:
                active.remove(x)
            if len(active) <= 1:
                over, winners = True, list(active)
        elif mode == "rounds":
            if len(rounds) >= rules.get("rounds", 1):
                best = max(totals[x] for x in active)
                over, winners = True, [x for x in seats if x in active and totals[x] == best]
        elif playoff or any(totals[x] >= rules.get("target", 500) for x in active):
            best = max(totals[x] for x in active)
            lead = [x for x in seats if x in active and totals[x] == best]
            if len(lead) == 1:
                over, winners = True, lead
            else:
                playoff = True
                for x in [x for x in active if x not in lead]:
                    active.remove(x)

    for e in events:
        t, a, p = e["type"], e["actor"], e["payload"]
        if over:
            break
        if t == "PlayerLeft" and a in active:
            active.remove(a)
            hands.pop(a, None)
            if len(active) == 1:
                over, winners = True, list(active)
            continue
        if t == "RoundStarted":
            round_no, d = p["round"], p["dealer"]
            dealt = [x for x in (seats[(d + 1 + k) % len(seats)] for k in range(len(seats))) if x in active]
            n = len(dealt)
            size = 13 if n == 2 else 7
            hands = {x: Counter(p["deck"][i:n * size:n]) for i, x in enumerate(dealt)}
            stock, table, live = len(p["deck"]) - n * size - 1, [], True
        elif not live:
            continue
        elif t == "Drew":
            hands[a].update(p["cards"])
            stock -= p["source"] == "stock"
        elif t == "Melded":
            hands[a].subtract(p["cards"])
            jokers = [c == "JK" for c in p["cards"]]
            if p["kind"] == "set":
                rank = next(_rv(c) for c in p["cards"] if c != "JK")
                table.append({"kind": "set", "rank": rank, "places": [[rank, a, j] for j in jokers]})
            else:
                values = _run_values(p["cards"], p.get("as"))
                table.append({"kind": "run", "lo": min(values), "hi": max(values),
                              "places": [[v, a, j] for v, j in zip(values, jokers, strict=True)]})
        elif t == "LaidOff":
            card, m, end = p["card"], table[p["meld"]], p.get("end")
            hands[a][card] -= 1
            if m["kind"] == "set":
                value = m["rank"]
            elif card == "JK":
                end = end or ("high" if m["hi"] < 14 else "low")
                value = m["hi"] + 1 if end == "high" else m["lo"] - 1
            else:
                value = next(v for v in ([_rv(card)] if card[0] != "A" else [1, 14])
                             if (v == m["hi"] + 1 and end != "low") or (v == m["lo"] - 1 and end != "high"))
            if m["kind"] == "run":
                m["lo"], m["hi"] = min(m["lo"], value), max(m["hi"], value)
            m["places"].append([value, a, card == "JK"])
        elif t == "JokerSwapped":
            card, m = p["card"], table[p["meld"]]
            hands[a][card] -= 1
            hands[a]["JK"] += 1
            if m["kind"] == "set":
                value = m["rank"]
            else:
                value = (1 if m["lo"] == 1 else 14) if card[0] == "A" else _rv(card)
            place = next(pl for pl in m["places"] if pl[0] == value and pl[2])  # the first such joker
            place[1], place[2] = a, False
        elif t == "Discarded":
            hands[a][p["card"]] -= 1
            if not +hands[a] or not stock:
                live = False
                scores = {x: sum(_r5_points(v) for m in table for v, by, _j in m["places"] if by == x)
                          - sum(_r5_penalty(c) * k for c, k in hands[x].items())
                          for x in dealt if x in active}
                for x, v in scores.items():
                    totals[x] += v
                rounds[round_no] = scores
                settle(scores)
    if mode == "tournament":
        net = {x: stacks[x] - stake for x in seats}
    else:
        net = {x: -stake for x in seats}
        share, rest = divmod(stake * len(seats), len(winners))
        for i, w in enumerate(winners):
            net[w] += share + (i < rest)
    return winners, net, totals, rounds


@pytest.mark.parametrize("name", ["clean", "clean-rounds", "clean-leave", "clean-target",
                                  "clean-target-tie", "clean-tournament"])
def test_r500_stored_games_match_an_independent_scorer(name: str) -> None:
    """Whole games in every mode (ties and eliminations, leavers, busting, jokers laid off
    and swapped): round scores, totals, winners and net agree with the hand computation,
    and so do the platform's RoundEnded claims."""
    events = [json.loads(line) for line in (R5_DATA / f"{name}.jsonl").read_text().splitlines()]
    winners, net, totals, rounds = r500_results_by_hand(events)
    rec = replay(events)
    assert findings(rec) == [] and not rec.halted
    assert rec.results.to_dict() == {"winners": winners, "net": net, "scores": totals}
    for r, scores in rounds.items():
        assert rec.state.round_result(r)[1] == scores
    claimed = {e["payload"]["round"]: e["payload"]["scores"] for e in events if e["type"] == "RoundEnded"}
    assert claimed == rounds

# == Liverpool ====================================================================================

LV_DATA = Path(__file__).parent / "data" / "liverpool"


def lv_points(card: str) -> int:
    """LV-SCORE read from the spec: A and 2 = 25; 3-9 = 5; T J Q K = 10."""
    return 25 if card[0] in "A2" else 5 if card[0] in "3456789" else 10


def lv_results_by_hand(events: Events) -> tuple[list[str], dict[str, int], dict[str, int], dict[int, Any]]:
    """An independent reading of a Liverpool log: hands as multisets from the deal (one card
    at a time from left of the dealer; 10 cards, 12 in rounds 5-6), every card that enters or
    leaves a hand, round scores when a hand empties, the lowest total wins the pot."""
    created = events[0]["payload"]
    seats, stake = created["seats"], created["stake"]
    active = list(seats)
    totals = dict.fromkeys(seats, 0)
    hands: dict[str, Counter[str]] = {}
    rounds: dict[int, Any] = {}
    round_no = 0
    for e in events:
        t, actor, p = e["type"], e["actor"], e["payload"]
        if t == "RoundStarted":
            round_no, size = p["round"], 12 if p["round"] >= 5 else 10
            order = [seats[(p["dealer"] + 1 + k) % len(seats)] for k in range(len(seats))]
            order = [x for x in order if x in active]
            n = len(order)
            hands = {x: Counter(p["deck"][i:n * size:n]) for i, x in enumerate(order)}
        elif t == "Drew":
            hands[actor].update(p["cards"])
        elif t == "Bought":
            hands[actor].update([p["card"], p["penalty"]])
        elif t == "LaidDown":
            for m in p["melds"]:
                hands[actor].subtract(m["cards"])
        elif t in ("LaidOff", "Discarded"):
            hands[actor][p["card"]] -= 1
        elif t == "RummyCalled":
            hands[actor][p["discard"]] -= 1
        elif t == "PlayerLeft":
            active.remove(actor)
            hands.pop(actor, None)
        if t in ("LaidDown", "LaidOff", "Discarded", "RummyCalled") and not +hands[actor]:
            scores = {x: sum(lv_points(c) * k for c, k in h.items()) for x, h in hands.items()}
            rounds[round_no] = ([actor], scores)
            for x, v in scores.items():
                totals[x] += v
    best = min(totals[x] for x in active)
    winners = [x for x in seats if x in active and totals[x] == best]
    share, rest = divmod(stake * len(seats), len(winners))
    net = {x: -stake for x in seats}
    for i, x in enumerate(winners):
        net[x] += share + (1 if i < rest else 0)
    return winners, net, totals, rounds


@pytest.mark.parametrize("players", [2, 5, 8])
def test_liverpool_stored_games_match_an_independent_scorer(players: int) -> None:
    """Six rounds with buys, Rummy calls, going out and (8 players) a restock: penalty
    totals, round claims, the winner and the pot agree with the hand computation."""
    events = [json.loads(line) for line in (LV_DATA / f"clean-{players}p.jsonl").read_text().splitlines()]
    winners, net, totals, rounds = lv_results_by_hand(events)
    rec = replay(events)
    assert findings(rec) == [] and not rec.halted
    assert rec.results.to_dict() == {"winners": winners, "net": net, "scores": totals}
    assert sorted(rounds) == [1, 2, 3, 4, 5, 6]
    for r, result in rounds.items():
        assert rec.state.round_result(r) == result
    claimed = {e["payload"]["round"]: (e["payload"]["winners"], e["payload"]["scores"])
               for e in events if e["type"] == "RoundEnded"}
    assert claimed == rounds


def test_liverpool_round_then_two_leavers_last_player_takes_the_pot() -> None:
    """Round 1: p0 goes out (p1 holds 55, p2 105). Round 2 (dealt by p0): p1 leaves in his
    turn after drawing, p2 plays and leaves; p0, alone, wins the 300 pot at once. Totals
    keep round 1. A second PlayerLeft is no finding; a move after GameEnded is C-TURN."""
    log = going_out_by_layoffs()
    log.off("p0", "2D", 1)
    log.disc("p0", "2S")
    log.add("RoundEnded", "system", {"round": 1, "winners": ["p0"], "scores": {"p0": 0, "p1": 55, "p2": 105}})
    log.add("ChipsTransferred", "system", {"transfers": stakes(["p0", "p1", "p2"], 100)})
    p2_hand = "3C 3H 6C 6D JD QD TC AC AD 5S"
    log.deal(2, 0, {1: "7C 7D 7H 8C 8D 9H TS 3D 4D 6S", 2: p2_hand,
                    0: "5C 5D 5H 9C 9D KH 5S 9S 2C 2D"}, "KD", "4H 6H TH")
    drew = log.drew("p1")
    log.add("PlayerLeft", "p1", {})
    log.drew("p2")
    log.disc("p2", "6H")
    log.add("PlayerLeft", "p2", {})
    log.add("PlayerLeft", "p2", {})
    log.add("PlayerRemoved", "system", {"player": "p2", "reason": "left"})
    log.add("ChipsTransferred", "system", {"transfers": [{"from": "pot", "to": "p0", "amount": 300,
                                                          "reason": "last player"}]})
    log.add("GameEnded", "system", {"winners": ["p0"], "net": {"p0": 200, "p1": -100, "p2": -100}})
    late = log.drew("p0")
    rec = replay(log.events)
    assert findings(rec) == [(late, "C-TURN", "violation")]
    assert rec.results.to_dict() == {"winners": ["p0"], "net": {"p0": 200, "p1": -100, "p2": -100},
                                     "scores": {"p0": 0, "p1": 55, "p2": 105}}
    view = state_at(log.events, drew, "p2")
    assert view["hands"] == {"p2": sorted_cards(p2_hand.split())}
    assert "stock" not in view and view["hand_counts"] == {"p0": 10, "p1": 11, "p2": 10}
    assert view["discard_pile"] == ["KD"] and view["buy_window"] == {"card": "KD", "entitled": ["p2", "p0"]}
    assert view["pots"] == {"pot": 300} and view["scores"] == {"p0": 0, "p1": 55, "p2": 105}


# == Michigan =====================================================================================
# Three players a b c, dealer c, three deals (the default: one per player), stake 0.

SUITED = "23456789TJQKA"


def suit(s: str, ranks: str = SUITED) -> list[str]:
    return [r + s for r in ranks]


def michigan_game() -> tuple[Log, dict[str, int]]:
    """The whole game; returns the log and the seqs the tests look at.

    Deal 1 (dealer c; a clubs, b diamonds, c hearts, widow spades). Antes: kitty a 1, b 1,
    c 2; 1 on each pay card from each (3 a card). b buys the widow (1 to the kitty: 5).
    a starts with 3C, not his lowest club: 1 chip to b and to c. a plays up to AC (KC: 3 to
    a); the ace stops; a holds only 2C, so the right passes to b, who plays 2S..AS (JS: 3
    to b) and is out: the kitty, 5, to b. QD (dead) and AH (c's) roll over: 3 each.
    Deal 2 (dealer a; b clubs, c diamonds, a hearts). Antes: kitty 4; pay cards +3 each
    (JS 3, QD 6, KC 3, AH 6). c leaves; b plays 2C..AC (KC: 3) and is out: kitty 4 to b.
    Deal 3 (dealer b, c skipped; a 18 cards, b 17, widow 17). Antes: a 1, b 2; pay cards
    +2 (JS 5, QD 8, KC 2, AH 8). a plays 2H..AH (AH: 8), 2D..5D; b 6D 7D 8D (9D widow:
    stop), 2C..AC (KC: 2), TD (JD widow) and is out: kitty 3 to b. Left on pay cards:
    JS 5 + QD 8 = 13 over a and b: 6 each, the odd chip to a (left of the last dealer b).
    net a: -1-4-2+3 | -2-4 | -1-4+8+7 = 0; b: -1-4-1+1+3+5 | -1-4+3+4 | -2-4+2+3+6 = 10;
    c: -2-4+1 | -1-4 = -10.
    """
    log = Log("mi")
    log.created("michigan", ["a", "b", "c"], dealer=2, stake=0)
    at: dict[str, int] = {}
    log.round(michigan_deck([suit("C"), suit("D"), suit("H"), suit("S")]), round_no=1, dealer=2)
    at["widow"] = log.add("WidowBought", "b", {"price": 1})
    at["penalty"] = log.add("CardPlayed", "a", {"card": "3C"})
    for card in suit("C", "456789TJQKA"):
        log.add("CardPlayed", "a", {"card": card})
    at["stop1"] = len(log.events) - 1
    for card in suit("S"):
        log.add("CardPlayed", "b", {"card": card})
    log.sys("RoundEnded", {"round": 1, "winners": ["b"], "scores": {}})
    log.round(michigan_deck([suit("C"), suit("D"), suit("H"), suit("S")]), round_no=2, dealer=0)
    at["left"] = log.add("PlayerLeft", "c")
    log.sys("PlayerRemoved", {"player": "c", "reason": "left"})
    for card in suit("C"):
        log.add("CardPlayed", "b", {"card": card})
    log.sys("RoundEnded", {"round": 2, "winners": ["b"], "scores": {}})
    a3 = suit("H") + suit("D", "2345") + ["2S"]
    b3 = suit("C") + suit("D", "678T")
    w3 = suit("S", "3456789TJQKA") + suit("D", "9JQKA")
    log.round(michigan_deck([a3, b3, w3]), round_no=3, dealer=1)
    for card in suit("H") + suit("D", "2345"):
        log.add("CardPlayed", "a", {"card": card})
    at["follow"] = len(log.events) - 1  # 6D is due; b holds it
    for card in [*suit("D", "678"), *suit("C"), "TD"]:
        log.add("CardPlayed", "b", {"card": card})
    log.sys("RoundEnded", {"round": 3, "winners": ["b"], "scores": {}})
    return log, at


MI_NET = {"a": 0, "b": 10, "c": -10}


def test_michigan_three_deals_widow_stops_rollover_leaver_and_final_split() -> None:
    log, _at = michigan_game()
    # the final split, claimed in two events (the rest of the transfers not logged)
    log.sys("ChipsTransferred", {"transfers": [{"from": "pay:JS", "to": "a", "amount": 5, "reason": "split"},
                                               {"from": "pay:QD", "to": "a", "amount": 2, "reason": "split"}]})
    log.sys("ChipsTransferred", {"transfers": [{"from": "pay:QD", "to": "b", "amount": 6, "reason": "split"}]})
    rec = replay(log.events)
    assert findings(rec) == [] and not rec.halted and rec.state.over
    assert rec.results.to_dict() == {"winners": ["b"], "net": MI_NET, "scores": {}}
    assert rec.state.pools == {"kitty": 0, "poker": 0, "pay:JS": 0, "pay:QD": 0, "pay:KC": 0, "pay:AH": 0}
    kitty = [(t.dst, t.amount) for t in rec.transfers if t.src == "kitty"]
    assert kitty == [("b", 5), ("b", 4), ("b", 3)]
    pay = [(t.src, t.dst, t.amount) for t in rec.transfers if t.src.startswith("pay:")]
    assert pay == [("pay:KC", "a", 3), ("pay:JS", "b", 3), ("pay:KC", "b", 3), ("pay:AH", "a", 8),
                   ("pay:KC", "b", 2), ("pay:JS", "a", 5), ("pay:QD", "a", 2), ("pay:QD", "b", 6)]
    # with GameEnded, the transfers the platform did not log are missing (C-CLAIM there)
    ended = log.sys("GameEnded", {"winners": ["b"], "net": MI_NET})
    rec = replay(log.events)
    assert findings(rec) == [(ended, "C-CLAIM", "discrepancy")]
    assert "due but not claimed: a->b 1, a->c 1, a->kitty 1" in rec.findings[0].message
    assert "claimed but not due" not in rec.findings[0].message
    # every transfer logged, in two events, and GameEnded: clean
    full = copy.deepcopy(log.events[:ended - 2])
    computed = [t.to_dict() for t in rec.transfers]
    for part in (computed[:40], computed[40:]):
        full.append({**full[-1], "event_id": f"mi-x{len(full)}", "seq": len(full), "type": "ChipsTransferred",
                     "actor": "system", "payload": {"transfers": [
                         {k: t[k] for k in ("from", "to", "amount", "reason")} for t in part]}})
    full.append({**log.events[ended], "seq": len(full), "event_id": "mi-end"})
    assert findings(replay(full)) == []
    # a wrong net for c, and a split paid to the wrong player
    bad = copy.deepcopy(full)
    bad[-1]["payload"]["net"] = {"a": 0, "b": 10}
    moved = next(t for t in bad[-2]["payload"]["transfers"] if t["from"] == "pay:QD" and t["to"] == "b")
    moved["to"] = "a"
    rec = replay(bad)
    # one transfer finding (extra and missing together) at the first differing event
    assert findings(rec) == [(len(bad) - 2, "C-CLAIM", "discrepancy"), (len(bad) - 1, "C-CLAIM", "discrepancy")]
    assert "claimed but not due: pay:QD->a 6; due but not claimed: pay:QD->b 6" in rec.findings[0].message
    assert rec.findings[1].message == "net differs: c: claimed 0, recomputed -10"


def test_michigan_second_player_left_is_no_finding() -> None:
    """fixed: a PlayerLeft by a player already out was C-TURN; PlayerLeft is not a move and
    may come at any moment (EVENTS.md), as in r500 and Liverpool."""
    log, at = michigan_game()
    events = log.events[:at["left"] + 1]
    again = {**events[-1], "seq": at["left"] + 1, "event_id": "mi-again"}
    rec = replay([*events, again])
    assert findings(rec) == [] and rec.state.active == [True, True, False]
    assert rec.results.net == replay(events).results.net


def test_michigan_views_never_show_widow_dead_hand_or_who_holds_the_next_card() -> None:
    """fixed: while a card is due, the view of a player who does not hold it named its
    holder in ``in_turn``/``to_act`` and the card in ``next_card`` (a hidden card's place)."""
    log, at = michigan_game()
    events = log.events
    before = state_at(events, at["widow"] - 1, "a")
    assert before["widow"] is None and before["widow_count"] == 13 and before["hands"] == {"a": suit("C")}
    after = state_at(events, at["widow"], "a")
    assert after["widow"] is None and after["dead"] is None and after["widow_buyer"] == "b"
    assert state_at(events, at["widow"], "b")["dead"] == suit("D")  # his own former hand
    assert state_at(events, at["widow"], "c")["dead"] is None
    for viewer in ("a", "b", "c"):
        view = state_at(events, at["widow"], viewer)
        others = [c for p, cs in state_at(events, at["widow"])["hands"].items() if p != viewer for c in cs]
        assert_no_hidden_cards(view, others + (suit("D") if viewer != "b" else []))
    # a stop is seen by all: b restarts after a's ace
    stop = state_at(events, at["stop1"], "c")
    assert (stop["in_turn"], stop["barred_suit"], stop["next_card"]) == ("b", "C", None)
    # deal 3: 6D is due and b holds it; only b is told
    full = state_at(events, at["follow"])
    assert (full["in_turn"], full["next_card"], full["to_act"]) == ("b", "6D", ["b"])
    mine = state_at(events, at["follow"], "b")
    assert (mine["in_turn"], mine["next_card"], mine["to_act"]) == ("b", "6D", ["b"])
    theirs = state_at(events, at["follow"], "a")
    assert (theirs["in_turn"], theirs["next_card"], theirs["to_act"]) == (None, None, [])
    assert theirs["hands"] == {"a": ["2S"]} and theirs["widow"] is None and theirs["widow_count"] == 17
    assert theirs["running"] == "5D" and theirs["hand_counts"] == {"a": 1, "b": 17, "c": 0}
    assert_no_hidden_cards(theirs, full["hands"]["b"] + full["widow"])


def test_michigan_poker_ties_over_two_deals_odd_chip_from_left_of_each_dealer() -> None:
    """MI-POKER (and the player view of it, fixed): in each deal a and b tie with 8-high flushes over c's 7-high; the 3-chip
    pot splits 1/1 and the odd chip goes to the first tied player from left of the dealer:
    a in deal 1 (dealer c), b in deal 2 (dealer a). MI-END: 18 chips left on JS QD AH,
    6 each. net a: (-1-4-1+2+3+4) + (-2-4-1+1) + 6 = 3; b: -5 + 3 + 6 = 4; c: -7 - 6 + 6 = -7."""
    log = Log("mp")
    log.created("michigan", ["a", "b", "c"], dealer=2, stake=0, rules={"three_in_one": True, "deals": 2})
    for deal, dealer, hands in ((1, 2, ("2C 3C 4C 5C 8C", "2D 3D 4D 5D 8D", "2H 3H 4H 5H 7H")),
                                (2, 0, ("2H 3H 4H 5H 8H", "2C 3C 4C 5C 8C", "2D 3D 4D 5D 7D"))):
        log.round(michigan_deck([suit("C"), suit("D"), suit("H"), suit("S")]), round_no=deal, dealer=dealer)
        for player, cards in zip("abc", hands, strict=True):
            last_declared = log.add("PokerHandDeclared", player, {"cards": cards.split()})
        runner = "a" if deal == 1 else "b"  # the clubs, left of the dealer
        for card in suit("C"):
            log.add("CardPlayed", runner, {"card": card})
    rec = replay(log.events)
    assert findings(rec) == []
    poker = [t.key() for t in rec.transfers if t.src == "poker"]
    assert poker == [("poker", "a", 2), ("poker", "b", 1), ("poker", "a", 1), ("poker", "b", 2)]
    assert rec.results.to_dict() == {"winners": ["b"], "net": {"a": 3, "b": 4, "c": -7}, "scores": {}}
    # fixed: the view showed every declared hand after the showdown, though declared cards
    # stay in the hands (hidden cards; the HTML view redacts them from the events). A player
    # sees his own declaration and who won, before and after the showdown.
    assert state_at(log.events, last_declared - 1, "c")["poker"]["declared"] == {}
    shown = state_at(log.events, last_declared, "c")["poker"]
    assert shown == {"declared": {"c": ["2D", "3D", "4D", "5D", "7D"]}, "winners": ["a", "b"]}
    assert state_at(log.events, last_declared, None)["poker"]["declared"]["a"] == ["2H", "3H", "4H", "5H", "8H"]


# -- helpers -------------------------------------------------------------------------------------


def sorted_cards(cards: list[str]) -> list[str]:
    from rummyguard.events.cards import format_cards, parse_cards

    return format_cards(sorted(parse_cards(cards)))


def assert_no_hidden_cards(view: dict[str, Any], others: list[str]) -> None:
    """No card of ``others`` (another player's hand, the widow, the stock) appears in the
    parts of a view that are about cards not on the table: hands, widow, dead hand, the
    next card. (Cards on the table or played are public and may repeat a code in a
    multi-deck game, so those keys are not searched.)"""
    hidden = set(others)
    for key in ("hands", "widow", "dead", "next_card", "stock", "must_use"):
        value = view.get(key)
        text = json.dumps(value)
        leaked = sorted(c for c in hidden if f'"{c}"' in text)
        assert not leaked, (key, leaked)
