"""Regression tests for non-default ``GameCreated.rules``: every config key of RULES.md, in
all four variants, at non-default and boundary values.

Three kinds of checks (audit 11):

- LOG-RULES: unknown keys, wrong JSON types, nulls and out-of-range values, on a log that
  is only ``GameCreated``; the expectation is also derived independently from RULES.md by
  tests/config_kit.py (:func:`expected_log_rules`), so the two readings are compared;
- hand-built logs whose numbers follow from one config sentence (the rake, the deck, the
  long run, the buy limit, the Michigan antes and widow price);
- simulated games per key and value, replayed by the engine and by the independent judges
  (tests/referee_*.py with tests/oracle_*.py): same findings, halting, results, transfers.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from config_kit import OPEN, differences, expected_log_rules, flip, judge_view, sim_game
from logkit import Log, findings, stacked_deck

from rummyguard.events.cards import format_cards, standard_deck
from rummyguard.replay.engine import replay

SEATS = {"classic": 2, "r500": 2, "liverpool": 2, "michigan": 3}

# == LOG-RULES ===================================================================================

#: (variant, rules, a LOG-RULES finding due) where the engine and RULES.md agree
LOG_RULES_CASES: list[tuple[str, dict[str, Any], bool]] = [
    # classic
    ("classic", {"decks": 1, "jokers": 0}, False), ("classic", {"decks": 3, "jokers": 6}, False),
    ("classic", {"rake_bps": 0}, False), ("classic", {"rake_bps": 10_000}, False),
    ("classic", {"long_run_allows_joker": False}, False),
    ("classic", {"decks": None, "jokers": None, "rake_bps": None, "long_run_allows_joker": None}, False),
    ("classic", {"decks": True}, True), ("classic", {"rake_bps": "250"}, True),
    ("classic", {"rake_bps": [250]}, True), ("classic", {"long_run_allows_joker": 0}, True),
    ("classic", {"long_run_allows_joker": "false"}, True), ("classic", {"Decks": 2}, True),
    ("classic", {"mode": "target"}, True), ("classic", {"max_buys": 1}, True),
    # r500
    ("r500", {"mode": "target", "target": 1}, False), ("r500", {"mode": "rounds", "rounds": 1}, False),
    ("r500", {"mode": "rounds", "rounds": 3}, False), ("r500", {"mode": "tournament", "chip_ratio": 0}, False),
    ("r500", {"mode": None, "target": None, "rounds": None, "chip_ratio": None}, False),
    ("r500", {"mode": "Target"}, True), ("r500", {"mode": "tournament?"}, True), ("r500", {"mode": 1}, True),
    ("r500", {"target": 0}, True), ("r500", {"target": -5}, True), ("r500", {"rounds": 0}, True),
    ("r500", {"chip_ratio": -1}, True), ("r500", {"chip_ratio": True}, True), ("r500", {"decks": 1}, True),
    # liverpool
    ("liverpool", {"max_buys": 0}, False), ("liverpool", {"max_buys": 1}, False),
    ("liverpool", {"set_distinct_suits": False}, False),
    ("liverpool", {"max_buys": None, "set_distinct_suits": None}, False),
    ("liverpool", {"max_buys": -2}, True), ("liverpool", {"max_buys": "unlimited"}, True),
    ("liverpool", {"set_distinct_suits": 1}, True), ("liverpool", {"jokers": 2}, True),
    # michigan
    ("michigan", {"pay_cards": []}, False), ("michigan", {"pay_cards": ["2C", "AS", "TD"]}, False),
    ("michigan", {"pay_ante": 0, "widow_price": 0}, False), ("michigan", {"deals": 1}, False),
    ("michigan", {"three_in_one": True}, False),
    ("michigan", {"pay_cards": None, "pay_ante": None, "widow_price": None, "deals": None,
                  "three_in_one": None}, False),
    ("michigan", {"pay_cards": ["JK"]}, True), ("michigan", {"pay_cards": ["JS", "JS"]}, True),
    ("michigan", {"pay_cards": ["XX"]}, True), ("michigan", {"pay_cards": ["js"]}, True),
    ("michigan", {"pay_cards": "JS"}, True), ("michigan", {"pay_cards": [5]}, True),
    ("michigan", {"pay_ante": -1}, True), ("michigan", {"widow_price": -1}, True),
    ("michigan", {"deals": -1}, True), ("michigan", {"three_in_one": 1}, True),
    ("michigan", {"target": 500}, True),
]


def _created_only(variant: str, rules: dict[str, Any]) -> list[dict[str, Any]]:
    log = Log()
    log.created(variant, [f"p{i + 1}" for i in range(SEATS[variant])], rules=rules)
    return log.events


@pytest.mark.parametrize(("variant", "rules", "flagged"), LOG_RULES_CASES,
                         ids=[f"{v}-{r}" for v, r, _ in LOG_RULES_CASES])
def test_log_rules(variant: str, rules: dict[str, Any], flagged: bool) -> None:
    assert bool(expected_log_rules(variant, rules)) is flagged  # the spec reading of config_kit
    rec = replay(_created_only(variant, rules))
    assert findings(rec) == ([(0, "LOG-RULES", "integrity")] if flagged else [])
    assert not rec.halted


def test_each_bad_key_is_its_own_finding() -> None:
    rules = {"decks": "2", "foo": 1, "rake_bps": 250, "jokers": False}
    assert expected_log_rules("classic", rules) == ["decks", "foo", "jokers"]
    assert findings(replay(_created_only("classic", rules))) == [(0, "LOG-RULES", "integrity")] * 3


def test_open_readings_stay_quiet() -> None:
    """The values RULES.md leaves open (config_kit.OPEN) replay without a finding: a
    change there is a decision for the lead, not a silent drift."""
    for variant, key, value in OPEN:
        assert findings(replay(_created_only(variant, {key: value}))) == [], (variant, key)


def test_a_rejected_value_reads_as_the_default() -> None:
    """r500 ``mode`` 'Target' is LOG-RULES and the game runs in the default target mode."""
    base = sim_game("r500", 2, {"mode": "target", "target": 60}, 1)
    rec = replay(flip(base, {"mode": "Target", "target": 60}))
    assert findings(rec)[0] == (0, "LOG-RULES", "integrity")
    assert findings(rec)[1:] == findings(replay(base))
    assert rec.results == replay(base).results


# == classic: rake_bps, decks, jokers, long_run_allows_joker ===================================


def _leave_game(rules: dict[str, Any], deck: list[str] | None = None) -> list[dict[str, Any]]:
    """Two players stake 100; p2 leaves at once, so p1 takes the pot less the rake."""
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1, rules=rules)
    log.round(deck or format_cards(standard_deck(2, 4)), dealer=1)
    log.add("PlayerLeft", "p2", {})
    return log.events


@pytest.mark.parametrize(("rake_bps", "rake"), [(0, 0), (1, 0), (49, 0), (50, 1), (250, 5),
                                                (9_999, 199), (10_000, 200)])
def test_classic_rake(rake_bps: int, rake: int) -> None:
    """CL-RUMMY: rake = floor(pot x rake_bps / 10000) from the pot (200) to ``house``."""
    rec = replay(_leave_game({"rake_bps": rake_bps}))
    assert findings(rec) == []
    moves = [(t.src, t.dst, t.amount) for t in rec.transfers]
    assert moves[:2] == [("p1", "pot", 100), ("p2", "pot", 100)]
    assert Counter(moves[2:]) == Counter([m for m in (("pot", "house", rake), ("pot", "p1", 200 - rake))
                                          if m[2]])
    assert rec.results.winners == ["p1"]
    assert rec.results.net == {"p1": 100 - rake, "p2": -100}


@pytest.mark.parametrize(("decks", "jokers"), [(1, 0), (1, 1), (3, 6), (2, 0)])
def test_classic_deck_from_config(decks: int, jokers: int) -> None:
    """C-DEAL: the recorded deck must be ``decks`` x 52 + ``jokers``; the default deck under
    other counts is a C-DEAL finding at RoundStarted."""
    rules = {"decks": decks, "jokers": jokers}
    assert findings(replay(_leave_game(rules, format_cards(standard_deck(decks, jokers))))) == []
    wrong = findings(replay(_leave_game(rules)))
    assert wrong and wrong[0][:2] == (1, "C-DEAL")


def test_classic_deck_too_small_for_the_table_halts() -> None:
    """One deck and two jokers hold 54 cards; four players need 15 + 3 x 14 + 1 = 58."""
    log = Log()
    log.created("classic", ["p1", "p2", "p3", "p4"], dealer=3, rules={"decks": 1, "jokers": 2})
    log.round(format_cards(standard_deck(1, 2)), dealer=3)
    rec = replay(log.events)
    assert rec.halted and findings(rec) == [(1, "CL-DEAL", "integrity")]
    judged = judge_view(log.events)
    assert judged.halted and judged.findings == findings(rec)


#: p1 (first player) declares on his first turn: the only run of 4+ holds the joker
JOKER_RUN = {"melds": [{"kind": "run", "cards": ["3H", "4H", "JK", "6H"]},
                       {"kind": "run", "cards": ["7C", "8C", "9C"]},
                       {"kind": "set", "cards": ["KD", "KS", "KC"]},
                       {"kind": "set", "cards": ["QD", "QS", "QH", "QC"]}], "discard": "9S"}
NATURAL_RUN = {"melds": [{"kind": "run", "cards": ["3H", "4H", "5H", "6H"]},
                         {"kind": "run", "cards": ["7C", "8C", "JK"]},
                         {"kind": "set", "cards": ["KD", "KS", "KC"]},
                         {"kind": "set", "cards": ["QD", "QS", "QH", "QC"]}], "discard": "9S"}


def _declaration(declared: dict[str, Any], rules: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    hand = [c for m in declared["melds"] for c in m["cards"]] + [declared["discard"]]
    other = ["2C", "2D", "2H", "2S", "5C", "5D", "5S", "TC", "TD", "TH", "TS", "JC", "JD", "JH"]
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1, rules=rules)
    log.round(stacked_deck([hand, other], "AS"), dealer=1)
    seq = log.add("DeclaredRummy", "p1", declared, dt=5)
    return log.events, seq


@pytest.mark.parametrize("rules", [{}, {"long_run_allows_joker": True}])
def test_classic_long_run_may_hold_a_joker_by_default(rules: dict[str, Any]) -> None:
    events, _ = _declaration(JOKER_RUN, rules)
    rec = replay(events)
    assert findings(rec) == [] and rec.results.winners == ["p1"]


#: the long run is four naturals plus a joker above them: the joker stands in it (as 7H)
JOKER_ON_TOP = {"melds": [{"kind": "run", "cards": ["3H", "4H", "5H", "6H", "JK"]},
                          {"kind": "run", "cards": ["7C", "8C", "9C"]},
                          {"kind": "set", "cards": ["KD", "KS", "KC"]},
                          {"kind": "set", "cards": ["QD", "QS", "QH"]}], "discard": "9S"}


@pytest.mark.parametrize("declared", [JOKER_RUN, JOKER_ON_TOP], ids=["inside", "on-top"])
def test_classic_long_run_without_jokers_when_configured(declared: dict[str, Any]) -> None:
    events, _ = _declaration(declared, {})
    assert findings(replay(events)) == []
    events, seq = _declaration(declared, {"long_run_allows_joker": False})
    assert findings(replay(events)) == [(seq, "CL-LONGRUN", "violation")]
    assert judge_view(events).findings == findings(replay(events))


def test_classic_joker_free_long_run_satisfies_the_house_rule() -> None:
    events, _ = _declaration(NATURAL_RUN, {"long_run_allows_joker": False})
    assert findings(replay(events)) == []
    assert judge_view(events).findings == []


# == Liverpool: max_buys, set_distinct_suits ======================================================


@pytest.fixture(scope="module")
def liverpool_games() -> list[list[dict[str, Any]]]:
    """Short three-player games with buys and sets repeating a suit (seeds picked so)."""
    return [sim_game("liverpool", 3, {"set_distinct_suits": False}, s) for s in (7, 9)]


def _over_limit(events: list[dict[str, Any]], limit: int) -> list[int]:
    """The seqs of the buys past ``limit`` per player per round (RULES.md LV-BUY)."""
    count: Counter[str] = Counter()
    out = []
    for e in events:
        if e["type"] == "RoundStarted":
            count.clear()
        elif e["type"] == "Bought":
            count[e["actor"]] += 1
            if count[e["actor"]] > limit:
                out.append(e["seq"])
    return out


@pytest.mark.parametrize("limit", [0, 1])
def test_liverpool_max_buys(liverpool_games: list[list[dict[str, Any]]], limit: int) -> None:
    for base in liverpool_games:
        events = flip(base, {"set_distinct_suits": False, "max_buys": limit})
        due = _over_limit(events, limit)
        assert due  # the games buy past the limit
        got = [f[0] for f in findings(replay(events)) if f[1] == "LV-BUY"]
        assert got == due
        assert differences(events) == []


def test_liverpool_set_distinct_suits(liverpool_games: list[list[dict[str, Any]]]) -> None:
    """Laid under ``set_distinct_suits`` false, a set repeating a suit breaks LV-CONTRACT
    once the rule is on (the default)."""
    for base in liverpool_games:
        assert findings(replay(base)) == []
        repeated = [e["seq"] for e in base if e["type"] == "LaidDown" and any(
            m["kind"] == "set" and len({c[1] for c in m["cards"] if c[0] != "2"})
            < len([c for c in m["cards"] if c[0] != "2"]) for m in e["payload"]["melds"])]
        assert repeated
        events = flip(base, {})
        flagged = {f[0] for f in findings(replay(events)) if f[1] == "LV-CONTRACT"}
        assert repeated[0] in flagged
        assert differences(events) == []


# == Michigan: pay_cards, pay_ante, widow_price, deals, three_in_one =============================


def _deal_transfers(rules: dict[str, Any], seed: int = 0, n: int = 4) -> tuple[list[dict[str, Any]], Counter]:
    events = sim_game("michigan", n, rules, seed)
    rec = replay(events)
    assert findings(rec) == []
    first_deal = next(e["seq"] for e in events if e["type"] == "RoundStarted")
    return events, Counter((t.src, t.dst, t.amount) for t in rec.transfers if t.seq == first_deal)


@pytest.mark.parametrize(("pay_cards", "pay_ante"), [(["JS", "QD", "KC", "AH"], 1), (["2C", "AS"], 3),
                                                     ([], 2), (["AH"], 0)])
def test_michigan_antes(pay_cards: list[str], pay_ante: int) -> None:
    """MI-ANTE: 1 chip in the kitty (dealer 2) and ``pay_ante`` on each pay card, per player."""
    events, got = _deal_transfers({"deals": 1, "pay_cards": pay_cards, "pay_ante": pay_ante})
    created = events[0]["payload"]
    want: Counter[tuple[str, str, int]] = Counter()
    for s, p in enumerate(created["seats"]):
        want[(p, "kitty", 2 if s == created["dealer"] else 1)] += 1
        for c in pay_cards:
            if pay_ante:
                want[(p, f"pay:{c}", pay_ante)] += 1
    assert got == want


@pytest.mark.parametrize("price", [0, 1, 4])
def test_michigan_widow_price(price: int) -> None:
    """MI-WIDOW: the buyer pays ``widow_price`` into the kitty (nothing at price 0)."""
    for seed in range(8):
        events = sim_game("michigan", 3, {"deals": 1, "widow_price": price}, seed)
        bought = [e for e in events if e["type"] == "WidowBought"]
        if bought:
            break
    assert bought and bought[0]["payload"]["price"] == price
    rec = replay(events)
    assert findings(rec) == []
    paid = [(t.src, t.dst, t.amount) for t in rec.transfers if t.seq == bought[0]["seq"]]
    assert paid == ([(bought[0]["actor"], "kitty", price)] if price else [])


@pytest.mark.parametrize(("n", "deals"), [(3, 1), (3, 2), (4, 5), (3, None)])
def test_michigan_deals(n: int, deals: int | None) -> None:
    """MI-END: the game lasts ``deals`` deals (null: one per player); one deal fewer in the
    rules makes the last RoundStarted an MI-END violation."""
    events = sim_game("michigan", n, {"deals": deals}, 1)
    starts = [e["seq"] for e in events if e["type"] == "RoundStarted"]
    if not any(e["type"] == "PlayerLeft" for e in events):
        assert len(starts) == (deals or n)
    assert findings(replay(events)) == []
    if len(starts) > 1:
        fewer = flip(events, {"deals": len(starts) - 1})
        assert (starts[-1], "MI-END", "violation") in findings(replay(fewer))


def test_michigan_three_in_one_pot() -> None:
    """MI-POKER: with ``three_in_one`` each player puts 1 chip in the poker pot per deal, and
    the pot goes back out in full; off, a declaration is a violation."""
    events = sim_game("michigan", 4, {"deals": 1, "three_in_one": True}, 2)
    rec = replay(events)
    assert findings(rec) == []
    into = sum(t.amount for t in rec.transfers if t.dst == "poker")
    out = sum(t.amount for t in rec.transfers if t.src == "poker")
    assert into == 4 and out == 4
    declared = [e["seq"] for e in events if e["type"] == "PokerHandDeclared"]
    off = findings(replay(flip(events, {"deals": 1})))
    assert declared and (declared[0], "MI-POKER", "violation") in off


# == every key, simulated, engine against the judges ==============================================

#: (variant, seats, rules, stake, seeds)
SIMULATED: list[tuple[str, int, dict[str, Any], int, tuple[int, ...]]] = [
    ("classic", 2, {"decks": 1, "jokers": 0}, 100, (0, 1, 2, 3)),
    ("classic", 3, {"decks": 3, "jokers": 6}, 100, (0,)),
    ("classic", 3, {"decks": 1, "jokers": 1, "long_run_allows_joker": False, "rake_bps": 5000}, 100, (0, 1)),
    ("classic", 2, {"long_run_allows_joker": False}, 100, (2,)),
    ("classic", 3, {"rake_bps": 333}, 10, (0,)),
    ("classic", 2, {"rake_bps": 10_000}, 100, (1,)),
    ("r500", 2, {"mode": "target", "target": 1}, 100, (0, 1)),
    ("r500", 3, {"target": 100}, 100, (0,)),
    ("r500", 3, {"mode": "rounds", "rounds": 1}, 7, (0,)),
    ("r500", 4, {"mode": "rounds", "rounds": 3}, 7, (0, 1)),
    ("r500", 2, {"mode": "tournament", "chip_ratio": 1}, 5, (0,)),
    ("r500", 3, {"mode": "tournament", "chip_ratio": 7}, 40, (0, 1)),
    ("r500", 4, {"mode": "tournament", "chip_ratio": 3}, 30, (0,)),
    ("liverpool", 2, {"max_buys": 2}, 100, (2,)),
    ("michigan", 3, {"deals": 1, "pay_cards": ["2C", "7H", "AS"], "pay_ante": 2}, 100, (0,)),
    ("michigan", 4, {"deals": 2, "widow_price": 5, "pay_ante": 0}, 100, (0,)),
    ("michigan", 5, {"deals": 1, "pay_cards": []}, 100, (0,)),
    ("michigan", 3, {"deals": 2, "three_in_one": True, "widow_price": 0}, 100, (0, 1)),
]


@pytest.mark.parametrize(("variant", "n", "rules", "stake", "seeds"), SIMULATED,
                         ids=[f"{v}{n}-{r}" for v, n, r, _, _ in SIMULATED])
def test_simulated_games_agree_with_the_judges(variant: str, n: int, rules: dict[str, Any], stake: int,
                                               seeds: tuple[int, ...]) -> None:
    for seed in seeds:
        events = sim_game(variant, n, rules, seed, stake=stake)
        assert events[0]["payload"]["rules"] == rules
        assert differences(events) == [], (variant, rules, seed)


#: (variant, seats, simulated under, replayed under): the same moves under other rules
FLIPS: list[tuple[str, int, dict[str, Any], dict[str, Any]]] = [
    ("classic", 2, {}, {"decks": 3}),
    ("classic", 3, {}, {"rake_bps": 250}),
    ("classic", 2, {"rake_bps": 250}, {"rake_bps": None}),
    ("classic", 2, {"decks": 1, "jokers": 2}, {"decks": 1, "jokers": 0}),
    ("r500", 2, {"mode": "rounds", "rounds": 2}, {"mode": "rounds", "rounds": 1}),
    ("r500", 3, {"mode": "rounds", "rounds": 1}, {"mode": "rounds", "rounds": 2}),
    ("r500", 2, {"mode": "target", "target": 100}, {"mode": "rounds", "rounds": 3}),
    ("r500", 3, {"mode": "tournament", "chip_ratio": 1}, {"mode": "rounds", "rounds": 1}),
    ("michigan", 3, {"deals": 1}, {"deals": 1, "pay_ante": 0}),
    ("michigan", 4, {"deals": 1, "widow_price": 3}, {"deals": 1}),
    ("michigan", 3, {"deals": 1}, {"deals": 1, "pay_cards": ["2C", "3D"]}),
    ("michigan", 3, {"deals": 1}, {"deals": 2}),
]


@pytest.mark.parametrize(("variant", "n", "sim_rules", "rules"), FLIPS,
                         ids=[f"{v}{n}-{a}->{b}" for v, n, a, b in FLIPS])
def test_flipped_rules_agree_with_the_judges(variant: str, n: int, sim_rules: dict[str, Any],
                                             rules: dict[str, Any]) -> None:
    disagreeing = 0
    for seed in range(4):
        events = flip(sim_game(variant, n, sim_rules, seed), rules)
        disagreeing += bool(findings(replay(events)))
        assert differences(events) == [], (variant, sim_rules, rules, seed)
    assert disagreeing  # the platform and the rules part ways in some of the games
