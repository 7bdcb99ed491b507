"""The replay's hot-path shortcuts (replay/engine.py, replay/rules/classic.py, table.py,
melds.py) give exactly what the general code gives: the same melds or errors, the same
deal, the same findings with the same words, the same records however games interleave.
Each test pits a shortcut against the general path or a plain reference."""

from __future__ import annotations

import copy
import itertools
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rummyguard.events.cards import JOKER, NCARDS, format_card, format_cards, parse_card
from rummyguard.events.hashing import chain
from rummyguard.replay.engine import (
    GameEngine,
    _handler_table,
    replay,
    replay_interleaved,
)
from rummyguard.replay.rules.classic import ClassicRummy
from rummyguard.replay.rules.melds import (
    MeldError,
    MeldRules,
    _general_run,
    _general_set,
    _wild_run,
    _wild_set,
    validate_meld,
)
from rummyguard.replay.rules.table import CARD_CODES, _deal_order
from rummyguard.sim.driver import play

#: classic's rules, Liverpool's (every 2 wild, 4-card runs with 3 naturals), and odd ones
RULES = [
    MeldRules(wild=frozenset({JOKER}), run_min=3, set_min=3, set_max=4),
    MeldRules(wild=frozenset({0, 1, 2, 3}), run_min=4, set_min=3, set_max=None,
              run_min_naturals=3, set_min_naturals=2),
    MeldRules(wild=frozenset({JOKER}), run_min=3, set_distinct_suits=False, set_max=None),
    MeldRules(wild=frozenset({JOKER, 51}), run_min=5, run_min_naturals=2),
]


def _meld_or_code(fn, *args):
    try:
        m = fn(*args)
    except MeldError as err:
        return err.code
    return (m.kind, m.cards, m.stands, m.suit, m.lo, m.hi, m.rank)


def _general(kind: str, cards: list[int], rules: MeldRules):
    return _meld_or_code({"run": _general_run, "set": _general_set}[kind], list(cards), {}, rules)


def _agree(kind: str, cards: list[int], rules: MeldRules) -> bool:
    """The wild fast path answers as the general path does, or declines; True if it answered."""
    fast = {"run": _wild_run, "set": _wild_set}[kind](list(cards), rules)
    if fast is None:
        return False
    assert (fast.kind, fast.cards, fast.stands, fast.suit, fast.lo, fast.hi, fast.rank) == \
        _general(kind, cards, rules), (kind, format_cards(cards))
    return True


# -- melds -------------------------------------------------------------------------------

#: a suit's thirteen cards and two wild kinds, the alphabet of the exhaustive checks
ALPHABET = [r * 4 + 2 for r in range(13)] + [JOKER, 0, 3, 51]


@pytest.mark.parametrize("rules", RULES, ids=["classic", "liverpool", "loose-sets", "two-wilds"])
def test_wild_runs_agree_with_the_general_path_exhaustively(rules):
    answered = 0
    for n in (3, 4, 5):
        for cards in itertools.product(ALPHABET, repeat=n):
            if rules.wild.isdisjoint(cards):
                continue
            answered += _agree("run", list(cards), rules)
    assert answered > 100  # the fast path is taken, not only declined


@pytest.mark.parametrize("rules", RULES, ids=["classic", "liverpool", "loose-sets", "two-wilds"])
def test_wild_sets_agree_with_the_general_path_exhaustively(rules):
    ranks = [8, 9, 10, 11, 48, 49, 50, 51, 4, JOKER, 0, 1]  # 4 eights, 4 aces, a six, wilds
    answered = 0
    for n in (2, 3, 4, 5):
        for cards in itertools.product(ranks, repeat=n):
            if rules.wild.isdisjoint(cards):
                continue
            answered += _agree("set", list(cards), rules)
    assert answered > 50


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(["run", "set"]), st.lists(st.integers(0, NCARDS - 1), min_size=0, max_size=9),
       st.sampled_from(range(len(RULES))))
def test_validate_meld_dispatch_matches_the_general_paths(kind, cards, rules_i):
    """validate_meld without ``as`` (fast paths first) == the general path for any cards."""
    rules = RULES[rules_i]
    assert _meld_or_code(validate_meld, kind, cards, None, rules) == _general(kind, cards, rules)


def test_validate_meld_unknown_kind_still_reports_kind():
    with pytest.raises(MeldError) as err:
        validate_meld("sequence", [8, 12, 16], None, RULES[0])
    assert err.value.code == "kind"
    with pytest.raises(MeldError):
        validate_meld("sequence", [8, JOKER, 16], None, RULES[0])


# -- cards and deals -------------------------------------------------------------------


def test_card_codes_are_the_notation():
    assert len(CARD_CODES) == NCARDS
    for code, card in CARD_CODES.items():
        assert parse_card(code) == card and format_card(card) == code


def _naive_deal(deck: list[int], order: list[int], sizes: dict[int, int]) -> dict[int, Counter]:
    hands = {s: Counter() for s in sizes}
    left = dict(sizes)
    pos = 0
    while any(left.get(s, 0) > 0 for s in order):
        for s in order:
            if left.get(s, 0) > 0:
                hands[s][deck[pos]] += 1
                left[s] -= 1
                pos += 1
    return hands


@pytest.mark.parametrize("order,sizes", [
    ([1, 0], {1: 15, 0: 14}),
    ([2, 3, 0, 1], {2: 15, 3: 14, 0: 14, 1: 14}),
    ([0, 1, 2], {0: 7, 1: 7, 2: 7}),
    ([0, 1, 2], {0: 1, 1: 0, 2: 2}),  # a one-card seat, an empty seat
    ([4, 5, 0, 1, 2, 3], {s: 12 for s in range(6)}),
])
def test_deal_plan_deals_what_one_card_at_a_time_deals(order, sizes):
    deck = random.Random(7).sample(range(52), 52) * 3
    n, plan = _deal_order(order, sizes)
    assert n == sum(sizes.values())
    got = {s: Counter(cards_of(deck)) for s, cards_of in plan}
    want = _naive_deal(deck, order, sizes)
    assert {s: c for s, c in got.items() if c} == {s: c for s, c in want.items() if c}


# -- the classic hot paths, end to end -----------------------------------------------------

#: simulated classic games that end in a declaration (some seeds end otherwise)
GAMES = [g for g in (play("classic", ["ann", "bob", "cy"][: 2 + seed % 2], seed=seed,
                          game_id=f"f{seed}", max_events=2000) for seed in (0, 5, 6, 7, 9, 10, 11))
         if any(e["type"] == "DeclaredRummy" for e in g)]
assert len(GAMES) >= 4


def _declaration(events):
    return next(e for e in events if e["type"] == "DeclaredRummy")


def _hand_before(events, seq, player):
    engine = GameEngine()
    for e in events[:seq]:
        engine.apply(e)
    return list(engine.variant.hands[engine.variant.seat(player)])


@pytest.mark.parametrize("events", GAMES, ids=[g[0]["game_id"] for g in GAMES])
def test_declaration_using_a_card_twice_names_it_with_both_counts(events):
    """C-HOLD on a declaration: the first card (discard first, then the melds in order)
    used more often than held, with the use count and the hand's count."""
    decl = _declaration(events)
    hand = _hand_before(events, decl["seq"], decl["actor"])
    bad = copy.deepcopy(events)
    melds = bad[decl["seq"]]["payload"]["melds"]
    melds[0]["cards"].append(melds[-1]["cards"][0])  # one more use of that card
    used = Counter([parse_card(bad[decl["seq"]]["payload"]["discard"])])  # in order of use
    for m in melds:
        used.update(parse_card(c) for c in m["cards"])
    first = next(c for c in used if used[c] > hand[c])
    record = replay(bad)
    assert record.halted
    assert [(f.seq, f.rule, f.message) for f in record.findings if f.rule == "C-HOLD"] == [
        (decl["seq"], "C-HOLD",
         f"the declaration uses {format_card(first)} x{used[first]}; the hand holds {hand[first]}")
    ]


@pytest.mark.parametrize("events", GAMES, ids=[g[0]["game_id"] for g in GAMES])
def test_declaration_leaving_cards_lists_them_sorted(events):
    decl = _declaration(events)
    bad = copy.deepcopy(events)
    dropped = bad[decl["seq"]]["payload"]["melds"].pop()
    record = replay(bad)
    left = sorted(parse_card(c) for c in dropped["cards"])
    rummy = [f.message for f in record.findings if f.rule == "CL-RUMMY"]
    assert rummy == ["the declared melds leave " + " ".join(format_cards(left))]
    assert not record.halted


@pytest.mark.parametrize("events", GAMES, ids=[g[0]["game_id"] for g in GAMES])
def test_bad_cards_leave_the_fast_paths_for_the_general_code(events):
    """A discarded code that is not a card: LOG-EVENT and a halt, as parse_card says;
    a draw of two cards: CL-DRAW (the one-card shortcut declines)."""
    discards = [e for e in events if e["type"] == "Discarded"]
    bad = copy.deepcopy(events)
    e = bad[discards[3]["seq"]]
    e["payload"]["card"] = "1H"
    record = replay(bad)
    assert record.halted and [(f.seq, f.rule) for f in record.findings] == [(e["seq"], "LOG-EVENT")]

    draws = [e for e in events if e["type"] == "Drew"]
    bad = copy.deepcopy(events)
    e = bad[draws[2]["seq"]]
    e["payload"]["cards"] = e["payload"]["cards"] * 2
    record = replay(bad)
    assert (e["seq"], "CL-DRAW") in [(f.seq, f.rule) for f in record.findings]


def test_records_do_not_depend_on_how_games_interleave():
    chained = [chain(g) for g in GAMES]
    alone = {g[0]["game_id"]: replay(g).to_dict() for g in chained}
    rng = random.Random(3)
    queues = [list(g) for g in chained]
    mixed = []
    while any(queues):  # a random interleaving that keeps each game's order
        q = rng.choice([q for q in queues if q])
        mixed.append(q.pop(0))
    for events in (mixed, [e for g in chained for e in g]):
        records = replay_interleaved(events)
        assert {k: r.to_dict() for k, r in records.items()} == alone
        assert list(records) == list(dict.fromkeys(e["game_id"] for e in events))


def test_consumed_events_give_the_same_records_and_the_same_chain_findings():
    """``consume=True`` (verify FILES: lines parsed for the pass only) hashes each event
    with its ``hash`` member removed in place rather than from a copy: the same records,
    a tampered event still a LOG-CHAIN finding at its seq, and without ``consume`` the
    caller's events are left whole."""
    chained = [chain(g) for g in GAMES]
    tampered = copy.deepcopy(chained[1])
    draw = next(e for e in tampered if e["type"] == "Drew")
    draw["ts"] = draw["ts"][:-2] + ("0Z" if draw["ts"][-2] != "0" else "1Z")  # hash kept
    games = [*chained, tampered]
    # the tampered game under another id, so both it and the clean one are in the pass
    for e in tampered:
        e["game_id"] += "-t"
        e["event_id"] += "-t"
    tampered[:] = chain(tampered)
    tampered[draw["seq"]]["hash"] = "0" * 64  # now the content no longer matches
    events = [e for g in games for e in g]
    given = copy.deepcopy(events)
    kept = replay_interleaved(events)
    assert events == given  # not consumed: left whole
    taken = replay_interleaved(copy.deepcopy(events), consume=True)
    assert {k: r.to_dict() for k, r in taken.items()} == {k: r.to_dict() for k, r in kept.items()}
    bad = taken[tampered[0]["game_id"]]
    assert (draw["seq"], "LOG-CHAIN") in [(f.seq, f.rule) for f in bad.findings]
    assert all(r.clean for k, r in taken.items() if k != tampered[0]["game_id"])
    consumed = copy.deepcopy(events)
    replay_interleaved(consumed, consume=True)
    # what consume is for: no copy made (a game's first event takes the slow path: kept)
    clean_ids = {g[0]["game_id"] for g in chained}
    assert all(("hash" in e) == (e["seq"] == 0) for e in consumed if e["game_id"] in clean_ids)


def test_transfer_claims_in_another_order_are_clean_and_wrong_ones_are_not():
    events = chain(GAMES[0])
    claim = next(e for e in events if e["type"] == "ChipsTransferred")
    ok = copy.deepcopy(events)
    ok[claim["seq"]]["payload"]["transfers"].reverse()
    assert replay(chain(ok)).clean
    bad = copy.deepcopy(events)
    first, second = bad[claim["seq"]]["payload"]["transfers"][:2]
    second.update({"from": first["from"], "to": first["to"], "amount": str(first["amount"])})
    record = replay(bad, verify_hashes=False)  # (a, b, 100) and (a, b, "100") do not sort
    assert [f.rule for f in record.findings] == ["C-CLAIM"]
    assert "claimed but not due" in record.findings[0].message


def test_handler_table_is_shared_and_follows_the_class():
    table = _handler_table(ClassicRummy)
    assert table is _handler_table(ClassicRummy)
    assert table["Drew"] == (ClassicRummy._handlers["Drew"], False, 2)
    assert table["GameEnded"][1] is True  # the engine's own
    engines = [GameEngine() for _ in range(2)]
    for engine in engines:
        engine.apply(GAMES[0][0])
    assert engines[0]._handlers is engines[1]._handlers is table
