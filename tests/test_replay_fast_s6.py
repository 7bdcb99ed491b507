"""The sixth round of replay shortcuts gives exactly what the plain code gives.

Each test pits a shortcut against a plain reference: ``ts_millis`` (three table look-ups)
against the parse it replaced, ``event_hash`` (a copied empty SHA-256 state) against
SHA-256 over RFC 8785, :class:`KnownMelds` (each meld checked once) against parsing and
``validate_meld``, and classic's cached turn (``turn_actor`` / ``turn_deadline``, the
hot path of Drew and Discarded) and meld cache against the general code, on every
classic rule log of tests/data and on mutated simulated games.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import pickle
import random
from datetime import date
from pathlib import Path
from typing import Any

import orjson
import pytest
import rfc8785

import rummyguard.replay.rules.classic as classic
from rummyguard.events.cards import format_card, parse_cards
from rummyguard.events.hashing import _SHA256_EMPTY, event_hash
from rummyguard.events.timestamps import format_ts, ts_millis
from rummyguard.replay.engine import replay
from rummyguard.replay.rules.classic import MELD_RULES, ClassicRummy
from rummyguard.replay.rules.melds import KnownMelds, MeldError, MeldRules, validate_meld
from rummyguard.sim.driver import play

DATA = Path(__file__).parent / "data" / "classic"


# -- timestamps -----------------------------------------------------------------------------


def _plain_ts_millis(ts: Any) -> int:
    """ts_millis as it was before the tables: the minute parsed, then SS and mmm read as
    one integer (no caches, so nothing is shared with the code under test)."""
    minute = ts[:16]
    {}.get(minute)  # the old code's first step: a dict look-up (TypeError if unhashable)
    day = date.fromisoformat(ts[:10]).toordinal() - 719163
    base = ((day * 24 + int(ts[11:13])) * 60 + int(ts[14:16])) * 60_000
    return base + int(ts[17:19] + ts[20:23])


def _outcome(fn: Any, arg: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(arg)
    except Exception as exc:  # the exception type is what is compared
        return "raises", type(exc)


ODD_TS = [
    "2026-11-02T00:18:+1.000Z", "2026-11-02T00:18: 1.000Z", "2026-11-02T00:18:60.000Z",
    "2026-11-02T00:18:99.999Z", "2026-11-02T24:00:00.000Z", "2026-11-02T00:60:00.000Z",
    "2026-11-02T00:18:2", "2026-11-02T00:18:22.8Z", "2026-11-02T00:18:22,859Z",
    "2026-11-02 00:18:22.859Z", "2026-11-02T00:18:2\u0663.859Z", "2026-11-02T00:18:1_.000Z",
    "2026-11-02T00:18:22.85_Z", "2026-02-30T00:00:00.000Z", "", "garbage", "2026-11-02",
    "2026-11-02T00:18:22.859", "2026-11-02T00:18:22.859+01:00", "1970-01-01T00:00:00.000Z",
    "9999-12-31T23:59:59.999Z", "0001-01-01T00:00:00.000Z", "2026-W44-1T00:18:22.859Z",
    123, None, ["2026-11-02T00:18:22.859Z"], {"a": 1}, 1.5,
]


@pytest.mark.parametrize("ts", ODD_TS, ids=[repr(t)[:40] for t in ODD_TS])
def test_ts_millis_answers_odd_input_as_the_plain_parse_did(ts):
    """Anything not a plain timestamp gives what the plain parse gave: the same value or
    the same exception, twice (the second time through the caches)."""
    want = _outcome(_plain_ts_millis, ts)
    assert _outcome(ts_millis, ts) == want
    assert _outcome(ts_millis, ts) == want


def test_ts_millis_equals_the_plain_parse_on_valid_timestamps():
    rng = random.Random(6)
    moments = [rng.randrange(0, 253_402_300_800_000) for _ in range(3000)]
    moments += [0, 59_999, 60_000, 86_399_999, 1_793_578_702_859]
    for ms in moments:
        ts = format_ts(ms)
        assert ts_millis(ts) == _plain_ts_millis(ts) == ms
        assert ts_millis(ts) == ms  # again, from the minute cache


# -- hashing ---------------------------------------------------------------------------------


def _reference_hash(event: dict[str, Any]) -> str:
    body = {k: v for k, v in event.items() if k != "hash"}
    return hashlib.sha256(rfc8785.dumps(body)).hexdigest()


EVENTS = [
    {"event_id": "e1", "game_id": "g", "seq": 0, "type": "Drew", "v": 2, "hash": "x",
     "payload": {"source": "stock", "cards": ["4C"]}, "prev_hash": "0" * 64},
    {"b": 1, "a": [True, None, "é", "\u2028", "\x00\x1f\x7f"], "hash": None},
    {"é": 1, "e": {"z": -(2**53 - 1), "ä": [], "A": {}}, "\U0001f600": "x"},
    {"payload": {"melds": [{"kind": "run", "cards": ["JK", "5H"], "as": {"0": "4H"}}]}},
    {},
]


@pytest.mark.parametrize("event", EVENTS, ids=range(len(EVENTS)))
def test_event_hash_is_sha256_over_jcs_and_leaves_the_shared_state_empty(event):
    before = copy.deepcopy(event)
    for _ in range(3):
        assert event_hash(event) == _reference_hash(event)
    assert event == before and list(event) == list(before)  # the event is not touched
    assert _SHA256_EMPTY.hexdigest() == hashlib.sha256(b"").hexdigest()


# -- the meld cache --------------------------------------------------------------------------

RULES = [
    MELD_RULES,
    MeldRules(wild=frozenset({0, 1, 2, 3}), run_min=4, set_min=3, set_max=None,
              run_min_naturals=3, set_min_naturals=2),
]
#: a suit's run material, a set's, two wild kinds and a code that is no card
CODES = ["5H", "6H", "7H", "8H", "AH", "2H", "KH", "QH", "7C", "7S", "7D", "JK", "2C", "1H"]


def _plain_meld(kind: Any, codes: Any, rules: MeldRules) -> tuple[str, Any]:
    try:
        m = validate_meld(kind, parse_cards(codes), None, rules)
    except MeldError as err:
        return "meld-error", (err.code, err.message)
    except Exception as exc:  # the exception type is what is compared
        return "raises", type(exc)
    return "ok", (m.kind, m.cards, m.stands, m.owner, m.suit, m.lo, m.hi, m.rank,
                  m.contributed)


def _cached_meld(known: KnownMelds, kind: Any, codes: Any) -> tuple[str, Any]:
    try:
        m = known.meld(kind, codes)
    except MeldError as err:
        return "meld-error", (err.code, err.message)
    except Exception as exc:  # the exception type is what is compared
        return "raises", type(exc)
    out = (m.kind, list(m.cards), list(m.stands), m.owner, m.suit, m.lo, m.hi, m.rank,
           dict(m.contributed))
    m.cards.append(0)  # a caller may change its meld: the next answer must not see it
    m.stands.append(0)
    m.contributed[0] = [0]
    return "ok", out


@pytest.mark.parametrize("rules", RULES, ids=["classic", "liverpool"])
def test_known_melds_answer_as_parsing_and_checking_do(rules):
    known = KnownMelds(rules)
    answered = 0
    for n in (1, 3, 4):
        for codes in itertools.permutations(CODES, n):
            for kind in ("run", "set"):
                want = _plain_meld(kind, list(codes), rules)
                assert _cached_meld(known, kind, list(codes)) == want, (kind, codes)
                assert _cached_meld(known, kind, list(codes)) == want, (kind, codes)
                answered += want[0] == "ok"
    assert answered > 100


def test_known_melds_odd_payloads_fail_as_before():
    known = KnownMelds(MELD_RULES)
    for kind, codes in [("run", "5H6H7H"), ("run", {"5H": 1, "6H": 1, "7H": 1}), ("run", None),
                        ("run", [["5H"]]), (["run"], ["5H", "6H", "7H"]), ("seq", ["5H", "6H"]),
                        (None, ["7C", "7D", "7S"]), ("set", ("7C", "7D", "7S"))]:
        for _ in range(2):
            assert _cached_meld(known, kind, codes) == _plain_meld(kind, codes, MELD_RULES)


def test_known_melds_are_bounded():
    known = KnownMelds(MELD_RULES, limit=4)
    runs = [[format_card(r * 4 + 1 + 4 * i) for i in range(3)] for r in range(10)]
    for codes in runs:
        known.meld("run", codes)
        assert len(known._known) <= 4
    assert known.meld("run", runs[0]).cards == parse_cards(runs[0])


# -- the cached turn and the meld cache, end to end ------------------------------------------


def _without_shortcuts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every move through _enter_move (no cached turn) and every declared meld parsed and
    checked (no meld cache): the general code the shortcuts must agree with."""
    start_turn = ClassicRummy._start_turn

    def start_turn_uncached(self: ClassicRummy, seat: int, ts_ms: int) -> None:
        start_turn(self, seat, ts_ms)
        self.turn_actor = None

    monkeypatch.setattr(ClassicRummy, "_start_turn", start_turn_uncached)
    monkeypatch.setattr(classic, "_KNOWN_MELDS", None)


def _everything(events: list[dict[str, Any]], verify_hashes: bool) -> Any:
    record = replay(copy.deepcopy(events), verify_hashes=verify_hashes)
    state = record.state.snapshot() if record.state is not None else None
    return record.to_dict(), record.events_read, record.last_seq, state


def _mutants(events: list[dict[str, Any]], seed: int, n: int) -> list[list[dict[str, Any]]]:
    """Games bent in the ways that leave the hot paths: moves out of turn or by strangers,
    dropped, repeated and swapped events, other cards, late moves, redeals, leaves."""
    rng = random.Random(seed)
    seats = events[0]["payload"]["seats"]
    out = []
    for _ in range(n):
        bad = copy.deepcopy(events)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(2, len(bad))
            e = bad[i]
            what = rng.randrange(8)
            if what == 0:
                e["actor"] = rng.choice([*seats, "stranger", "system"])
            elif what == 1:
                del bad[i]
            elif what == 2:
                bad.insert(i, copy.deepcopy(e))
            elif what == 3 and i + 1 < len(bad):
                bad[i], bad[i + 1] = bad[i + 1], bad[i]
            elif what == 4 and e["type"] == "Discarded":
                e["payload"]["card"] = rng.choice(["JK", "AS", "2C", e["payload"]["card"]])
            elif what == 5:
                e["ts"] = format_ts(ts_millis(e["ts"]) + rng.choice([91_000, 200_000]))
            elif what == 6:  # a unanimous Fresh: only the redeal may come next
                bad[i:i] = [{**e, "type": "FreshPressed", "v": 1, "actor": p, "payload": {}}
                            for p in seats]
            else:
                bad.insert(i, {**e, "type": "PlayerLeft", "v": 1, "payload": {}})
        out.append(_renumbered(bad) if rng.random() < 0.5 else bad)
    return out


def _renumbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """seq 0, 1, 2... in list order: the inserted events are then read, not skipped."""
    return [{**e, "seq": i} for i, e in enumerate(events)]


def _edges(events: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The turn's edges, one at a time: a first turn 100 s long (late only past the
    first turn's longer clock), moves after the declaration (the game is over), moves
    after a unanimous Fresh, a leave of the player in turn."""
    seats = events[0]["payload"]["seats"]
    moves = [i for i, e in enumerate(events) if e["type"] in ("Drew", "Discarded")]
    out = []
    for k in (0, 1, 2, 3):  # the first moves: first turns
        bad = copy.deepcopy(events)
        for e in bad[moves[k]:]:
            e["ts"] = format_ts(ts_millis(e["ts"]) + 100_000)
        out.append(bad)
    ends = [i for i, e in enumerate(events) if e["type"] == "DeclaredRummy"]
    for end in ends:  # (a game may end otherwise)
        winner = events[end]["actor"]
        late = [copy.deepcopy(events[i]) for i in moves if events[i]["actor"] == winner][-2:]
        out.append([*events[: end + 1], *late, *events[end + 1:]])
    for k in (2, 5):
        i = moves[k]
        fresh = [{**events[i], "type": "FreshPressed", "v": 1, "actor": p, "payload": {}}
                 for p in seats]
        out.append(events[:i] + fresh + events[i:])
        left = {**events[i], "type": "PlayerLeft", "v": 1, "payload": {}}
        out.append([*events[:i], left, *events[i:]])
    return [_renumbered(g) for g in out]


LOGS = sorted(DATA.glob("*.jsonl"))


@pytest.mark.pure_source  # monkeypatches the engine's classes, or reads vars()
@pytest.mark.parametrize("path", LOGS, ids=[p.stem for p in LOGS])
def test_classic_rule_logs_replay_the_same_without_the_shortcuts(path, monkeypatch):
    events = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    games: dict[str, list[dict[str, Any]]] = {}
    for e in events:
        games.setdefault(e["game_id"], []).append(e)
    fast = [_everything(g, True) for g in games.values()]
    _without_shortcuts(monkeypatch)
    assert [_everything(g, True) for g in games.values()] == fast


@pytest.mark.pure_source  # monkeypatches the engine's classes, or reads vars()
def test_mutated_games_replay_the_same_without_the_shortcuts(monkeypatch):
    base = [play("classic", ["ann", "bob", "cy", "dee"][: 2 + seed % 3], seed=seed,
                 game_id=f"m{seed}", max_events=2000) for seed in range(6)]
    assert sum(1 for g in base if any(e["type"] == "DeclaredRummy" for e in g)) >= 3
    games = [g for seed, events in enumerate(base)
             for g in [*_mutants(events, seed, 25), *_edges(events)]]
    fast = [_everything(g, False) for g in games]
    assert sum(1 for f in fast if f[0]["findings"]) > len(games) // 2  # they do leave it
    _without_shortcuts(monkeypatch)
    assert [_everything(g, False) for g in games] == fast


@pytest.mark.pure_source  # monkeypatches the engine's classes, or reads vars()
def test_classic_state_copies_and_pickles_with_its_slots():
    events = play("classic", ["ann", "bob"], seed=3, game_id="s3", max_events=2000)
    state = replay(events).state
    assert isinstance(state, ClassicRummy) and "turn_actor" not in vars(state)
    for other in (copy.deepcopy(state), pickle.loads(pickle.dumps(state))):
        assert other.snapshot() == state.snapshot()
        assert (other.turn_actor, other.turn_deadline, other.taken, other.over) == \
            (state.turn_actor, state.turn_deadline, state.taken, state.over)


def test_late_moves_on_the_hot_path_are_still_late():
    """The cached deadline is the clocks' deadline: every move of a game shifted past it
    is CL-TIMER, every move of the late turn (RULES.md: "a move ... is late"), as the
    general code says (see the tests above)."""
    events = play("classic", ["ann", "bob"], seed=5, game_id="j5", max_events=2000)
    bad = copy.deepcopy(events)
    draw = next(i for i, e in enumerate(bad) if e["type"] == "Drew")
    bad[draw]["ts"] = format_ts(ts_millis(bad[draw]["ts"]) + 120_000)
    for e in bad[draw + 1:]:
        e["ts"] = format_ts(ts_millis(e["ts"]) + 120_000)
    findings = replay(bad, verify_hashes=False).findings
    turn_end = next(i for i in range(draw, len(bad)) if bad[i]["type"] == "Discarded")
    late = [e["seq"] for e in bad[draw:turn_end + 1]]
    assert len(late) >= 2  # the draw and the discard at least
    assert [f.seq for f in findings if f.rule == "CL-TIMER"] == late
