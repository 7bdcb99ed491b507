"""Differential test: the independent referee of tests/referee_liverpool_michigan.py
against ``rummyguard.replay.engine.replay`` on Liverpool and Michigan logs.

Three sources of logs, as in the audit that built the referee:

* every stored log of the two variants in tests/data (clean ones and ones that break one
  rule): the full findings lists and the halt flag must be equal;
* clean games of a small seeded simulated world and of the platform driver (random
  policy, house rules, leavers, buys, Rummy calls, poker): both must say clean;
* mutants of those clean games, one move altered (a card not held, a move out of turn,
  an invalid meld, a wrong ``as``, a lay-off that does not fit, a draw of the wrong count,
  a buy outside its window, a Rummy call onto the wrong meld, a wrong follow, a wrong
  restart after a stop, a late or second widow purchase, a missing poker hand ...). The
  log is cut right after the first event the alteration makes wrong, so the halt flag is
  that event's, and the first findings (rule, kind, seq) must be equal.

The mutants are built from the referee's own state (who holds what, who is in turn), so a
mutant never depends on the engine's reading.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from referee_liverpool_michigan import (
    Halt,
    Liverpool,
    Michigan,
    Verdict,
    is_wild,
    referee,
    walk,
)

from rummyguard.replay.engine import GameRecord, replay
from rummyguard.sim.driver import play

Event = dict[str, Any]
Events = list[Event]
DATA = Path(__file__).parent / "data"


# == comparing ============================================================================


def engine_verdict(events: Events) -> Verdict:
    rec: GameRecord = replay(events, verify_hashes=False)
    return Verdict(sorted((f.seq, f.rule, f.kind) for f in rec.findings), rec.halted)


def games_in(path: Path) -> list[Events]:
    by_game: dict[str, Events] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            e = json.loads(line)
            by_game.setdefault(e["game_id"], []).append(e)
    return [sorted(g, key=lambda e: e["seq"]) for g in by_game.values()]


# == mutants ==============================================================================


def _event(like: Event, type_: str, actor: str, payload: dict[str, Any]) -> Event:
    e = copy.deepcopy(like)
    e["type"], e["actor"], e["payload"] = type_, actor, payload
    e["v"] = 2 if type_ in ("Drew", "Discarded") else 1
    e.pop("hash", None)
    e.pop("prev_hash", None)
    return e


def _renumber(events: Events) -> Events:
    out = []
    for seq, event in enumerate(events):
        e = dict(event)
        e["seq"] = seq
        e["event_id"] = f"{e['game_id']}-m{seq:05d}"
        e.pop("hash", None)
        e.pop("prev_hash", None)
        out.append(e)
    return out


def _replace(events: Events, i: int, new: Event) -> Events:
    """The log up to ``events[i]``, with ``events[i]`` replaced by ``new``."""
    return _renumber([*copy.deepcopy(events[:i]), new])


def _insert(events: Events, i: int, new: Event) -> Events:
    """The log up to ``events[i - 1]`` and then ``new``."""
    return _renumber([*copy.deepcopy(events[:i]), new])


def _not_held(hands: dict[str, Counter[str]], player: str) -> str | None:
    for q, hand in sorted(hands.items()):
        if q != player:
            for card in sorted(hand):
                if hand[card] > 0 and player in hands and hands[player][card] == 0:
                    return card
    return None


Mutant = tuple[str, Events]


def card_of_draw(event: Event) -> str | None:
    cards = event["payload"].get("cards") or []
    return cards[-1] if cards else None


def lv_mutants(events: Events, budget: int = 2) -> Iterator[Mutant]:
    """Liverpool mutants: at most ``budget`` of each kind per game, spread over the game."""
    made: Counter[str] = Counter()
    moves = [i for i, e in enumerate(events) if e["actor"] != "system"
             and e["type"] not in ("PlayerConnected", "PlayerDisconnected", "PlayerLeft")]
    step = max(1, len(moves) // 40)
    wanted = set(moves[::step]) | {i for i in moves if events[i]["type"] in
                                   ("LaidDown", "LaidOff", "Bought", "RummyCalled")}
    for i, state in walk(events):
        if i not in wanted:
            continue
        e = events[i]
        assert isinstance(state, Liverpool)
        if not state.in_round or e["actor"] not in state.hands:
            continue
        actor, t, p = e["actor"], e["type"], e["payload"]
        others = [q for q in state.active if q != actor and q in state.hands]

        def emit(kind: str, log: Events) -> Iterator[Mutant]:
            if made[kind] < budget:
                made[kind] += 1
                yield kind, log

        if t == "Discarded":
            card = _not_held(state.hands, actor)
            if card:
                yield from emit("lv-discard-not-held", _replace(events, i, _event(e, t, actor, {"card": card})))
            for q in others:
                held = sorted(state.hands[q])
                if held:
                    yield from emit("lv-discard-out-of-turn",
                                    _replace(events, i, _event(e, t, q, {"card": held[0]})))
                    break
            # discard before drawing: the draw just before it removed
            prev = events[i - 1]
            if prev["type"] == "Drew" and prev["actor"] == actor and card_of_draw(prev) != p["card"]:
                log = _renumber([*copy.deepcopy(events[:i - 1]), copy.deepcopy(e)])
                yield from emit("lv-discard-without-draw", log)
        elif t == "Drew" and actor == state.turn:
            if len(state.pile) >= 2:
                two = [state.pile[-2], state.pile[-1]]
                yield from emit("lv-draw-two-from-pile",
                                _replace(events, i, _event(e, t, actor, {"source": "discard", "cards": two})))
            if len(state.stock) >= 2:
                yield from emit("lv-draw-two-from-stock", _replace(events, i, _event(
                    e, t, actor, {"source": "stock", "cards": state.stock[:2]})))
            if state.pile and state.live is not None and state.live.state == "open":
                for q in others:
                    if q != state.live.discarder and q not in state.laid and state.stock:
                        yield from emit("lv-buy-before-the-draw", _insert(events, i, _event(
                            e, "Bought", q, {"card": state.pile[-1], "penalty": state.stock[0]})))
                        break
            for q in others:
                if state.pile:
                    yield from emit("lv-draw-out-of-turn", _replace(events, i, _event(
                        e, t, q, {"source": "discard", "cards": [state.pile[-1]]})))
                    break
        elif t == "LaidDown":
            melds = p["melds"]
            for k, m in enumerate(melds):
                if len(m["cards"]) == (3 if m["kind"] == "set" else 4):  # one card too few
                    bad = copy.deepcopy(melds)
                    bad[k]["cards"] = bad[k]["cards"][:-1] if m["kind"] == "set" else bad[k]["cards"][1:]
                    yield from emit("lv-meld-short", _replace(events, i, _event(e, t, actor, {"melds": bad})))
                bad = copy.deepcopy(melds)
                bad[k]["kind"] = "run" if m["kind"] == "set" else "set"
                yield from emit("lv-meld-wrong-kind", _replace(events, i, _event(e, t, actor, {"melds": bad})))
                nat = [j for j, c in enumerate(m["cards"]) if not is_wild(c)]
                if m["kind"] == "run" and len(nat) >= 2:
                    bad = copy.deepcopy(melds)
                    a, b = nat[0], nat[-1]
                    bad[k]["cards"][a], bad[k]["cards"][b] = bad[k]["cards"][b], bad[k]["cards"][a]
                    yield from emit("lv-run-out-of-order", _replace(events, i, _event(e, t, actor, {"melds": bad})))
                wild = [j for j, c in enumerate(m["cards"]) if is_wild(c)]
                if wild:
                    bad = copy.deepcopy(melds)
                    j = wild[0]
                    natural = m["cards"][nat[0]]
                    wrong = ("K" if natural[0] != "K" else "Q") + ("S" if natural[1] != "S" else "H")
                    bad[k]["as"] = {str(j): wrong}
                    yield from emit("lv-wrong-as", _replace(events, i, _event(e, t, actor, {"melds": bad})))
                bad = copy.deepcopy(melds)
                bad[k]["as"] = {str(nat[0]): m["cards"][nat[0]]}
                yield from emit("lv-as-on-a-natural", _replace(events, i, _event(e, t, actor, {"melds": bad})))
            if len(melds) > 1:
                yield from emit("lv-contract-missing-meld",
                                _replace(events, i, _event(e, t, actor, {"melds": melds[1:]})))
        elif t == "LaidOff":
            for k in range(len(state.melds)):
                if k != p["meld"]:
                    ok, _ = state.fits(state.melds[k], p["card"], None)
                    if not ok:
                        yield from emit("lv-layoff-no-fit", _replace(events, i, _event(
                            e, t, actor, {"card": p["card"], "meld": k})))
                        break
            meld = state.melds[p["meld"]]
            if meld.kind == "run" and not is_wild(p["card"]):
                ok, end = state.fits(meld, p["card"], None)
                if ok:
                    other_end = "low" if end == "high" else "high"
                    yield from emit("lv-layoff-wrong-end", _replace(events, i, _event(
                        e, t, actor, {"card": p["card"], "meld": p["meld"], "end": other_end})))
        elif t == "Bought":
            if state.live is not None:
                if state.live.discarder in state.hands and state.live.discarder != actor:
                    yield from emit("lv-buy-back-own", _replace(events, i, _event(
                        e, t, state.live.discarder, p)))
                for q in sorted(state.laid):
                    if q != actor and q in state.hands:
                        yield from emit("lv-buy-after-laying-down", _replace(events, i, _event(e, t, q, p)))
                        break
                if state.turn and state.turn != actor:
                    yield from emit("lv-buy-by-the-player-in-turn",
                                    _replace(events, i, _event(e, t, state.turn, p)))
        elif t == "RummyCalled":
            for k in range(len(state.melds)):
                if k != p["meld"] and not state.fits(state.melds[k], p["card"], None)[0]:
                    yield from emit("lv-rummy-no-fit", _replace(events, i, _event(
                        e, t, actor, {**p, "meld": k, "end": None} if "end" in p else {**p, "meld": k})))
                    break
            for q in others:
                if q not in state.laid and state.hands[q][p["discard"]] > 0:
                    yield from emit("lv-rummy-not-laid-down", _replace(events, i, _event(e, t, q, p)))
                    break


def lv_window_mutants(events: Events, budget: int = 2) -> Iterator[Mutant]:
    """Liverpool mutants around windows and lay-offs: a Rummy call by the next player
    before his draw, a Rummy call or a buy after the window closed, a lay-off before
    laying down, a wild laid off at an end with no room, a natural of a repeated suit laid
    off on a set, a buy past ``max_buys``."""
    made: Counter[str] = Counter()

    def emit(kind: str, log: Events) -> Iterator[Mutant]:
        if made[kind] < budget:
            made[kind] += 1
            yield kind, log

    for i, state in walk(events):
        e = events[i]
        t, actor = e["type"], e["actor"]
        if actor == "system" or t not in ("Drew", "Discarded", "Bought", "LaidOff"):
            continue
        assert isinstance(state, Liverpool)
        if not state.in_round or actor not in state.hands:
            continue
        live = state.live
        if t == "Drew" and actor == state.turn and live is not None and live.state == "open":
            # the next player, laid down, calls Rummy on the live card instead of drawing
            for k, meld in enumerate(state.melds):
                own = sorted(state.hands[actor])
                if actor in state.laid and own and live.discarder != actor \
                        and state.fits(meld, live.card, None)[0]:
                    yield from emit("lv-rummy-by-the-next-player", _insert(events, i, _event(
                        e, "RummyCalled", actor, {"card": live.card, "meld": k, "discard": own[0]})))
                    break
            # a laid-down player calls Rummy after the next player drew from the stock
            if e["payload"].get("source") == "stock":
                for q in sorted(state.laid):
                    if q in state.hands and q not in (actor, live.discarder) and state.hands[q]:
                        for k, meld in enumerate(state.melds):
                            if state.fits(meld, live.card, None)[0]:
                                yield from emit("lv-rummy-after-the-draw", _renumber([
                                    *copy.deepcopy(events[:i + 1]), _event(e, "RummyCalled", q, {
                                        "card": live.card, "meld": k,
                                        "discard": sorted(state.hands[q])[0]})]))
                                break
                        break
        if t == "Discarded" and actor == state.turn and state.drawn:
            # the discarder discards again right away
            held = sorted(c for c in state.hands[actor] if c != e["payload"]["card"])
            if held:
                yield from emit("lv-discard-twice", _renumber([*copy.deepcopy(events[:i + 1]),
                                                               _event(e, t, actor, {"card": held[0]})]))
            # a laid-down player who is not in turn lays off a card that fits
            for q in sorted(state.laid):
                if q in state.hands and q != actor and state.laid[q] != state.turn_no:
                    card = next((c for c in sorted(state.hands[q]) for m in state.melds
                                 if state.fits(m, c, None)[0]), None)
                    if card is not None:
                        k = next(k for k, m in enumerate(state.melds) if state.fits(m, card, None)[0])
                        yield from emit("lv-layoff-out-of-turn", _insert(events, i, _event(
                            e, "LaidOff", q, {"card": card, "meld": k})))
                        break
        if t == "Discarded" and actor == state.turn and state.drawn and actor not in state.laid:
            for card in sorted(state.hands[actor]):
                k = next((k for k, m in enumerate(state.melds) if state.fits(m, card, None)[0]), None)
                if k is not None and card != e["payload"]["card"]:
                    yield from emit("lv-layoff-before-laying-down", _insert(events, i, _event(
                        e, "LaidOff", actor, {"card": card, "meld": k})))
                    break
        if t == "Discarded" and actor == state.turn and state.drawn and actor in state.laid \
                and state.laid[actor] != state.turn_no:
            for k, meld in enumerate(state.melds):
                wild = next((c for c in sorted(state.hands[actor]) if is_wild(c)), None)
                if meld.kind == "run" and wild and meld.good:
                    for end, full in (("high", meld.values[-1] == 14), ("low", meld.values[0] == 1)):
                        if full:
                            yield from emit("lv-layoff-wild-no-room", _insert(events, i, _event(
                                e, "LaidOff", actor, {"card": wild, "meld": k, "end": end})))
                if meld.kind == "set" and meld.good:
                    suits = {c[1] for c in meld.cards if not is_wild(c)}
                    dup = next((c for c in sorted(state.hands[actor]) if not is_wild(c)
                                and rank_of(c) == rank_of(meld.cards[[not is_wild(x) for x in meld.cards].index(True)])
                                and c[1] in suits), None)
                    if dup:
                        yield from emit("lv-layoff-repeated-suit", _insert(events, i, _event(
                            e, "LaidOff", actor, {"card": dup, "meld": k})))
        if t == "Bought":
            # the same buy once more by someone who already bought in this round
            for q in sorted(state.buys):
                if state.buys[q] and q in state.hands and q not in state.laid and q != actor \
                        and q != state.turn and (live is None or q != live.discarder) \
                        and state.max_buys is not None:
                    yield from emit("lv-buy-past-max-buys", _replace(events, i, _event(e, t, q, e["payload"])))
                    break
            # a second buy of the same card right after this one
            after = copy.deepcopy(state)
            try:
                after.apply(e)
            except Halt:  # the buy cannot be followed: no second buy to build
                continue
            for q in state.active:
                if q in after.hands and q not in (actor, state.turn) and q not in after.laid \
                        and (live is None or q != live.discarder) and after.stock and after.pile:
                    yield from emit("lv-second-buy-of-one-discard", _renumber([
                        *copy.deepcopy(events[:i + 1]), _event(e, t, q, {
                            "card": after.pile[-1], "penalty": after.stock[0]})]))
                    break


def rank_of(card: str) -> str:
    return card[0]


def mi_mutants(events: Events, budget: int = 2) -> Iterator[Mutant]:
    """Michigan mutants: at most ``budget`` of each kind per game."""
    made: Counter[str] = Counter()

    def emit(kind: str, log: Events) -> Iterator[Mutant]:
        if made[kind] < budget:
            made[kind] += 1
            yield kind, log

    for i, state in walk(events):
        e = events[i]
        t, actor, p = e["type"], e["actor"], e["payload"]
        if t not in ("CardPlayed", "WidowBought", "PokerHandDeclared"):
            continue
        assert isinstance(state, Michigan)
        if not state.in_deal or actor not in state.hands:
            continue
        others = [q for q in state.active if q != actor and state.hands.get(q)]
        if t == "CardPlayed":
            card = p["card"]
            if state.last is None:
                for q in others:
                    yield from emit("mi-start-wrong-player", _replace(events, i, _event(
                        e, t, q, {"card": sorted(state.hands[q])[0]})))
                    break
                yield from emit("mi-widow-late", _insert(events, i + 1, _event(e, "WidowBought", others[0] if others else actor, {"price": 1})))
                if state.three_in_one:
                    decl = [k for k in range(i) if events[k]["type"] == "PokerHandDeclared"
                            and events[k]["seq"] > max(x["seq"] for x in events[:i] if x["type"] == "RoundStarted")]
                    if decl:
                        k = decl[0]
                        log = _renumber([*copy.deepcopy(events[:k]), *copy.deepcopy(events[k + 1:i + 1])])
                        yield from emit("mi-poker-missing", log)
                        yield from emit("mi-poker-after-play", _insert(events, i + 1, _event(
                            events[k], "PokerHandDeclared", events[k]["actor"], events[k]["payload"])))
            due = state.next_card()
            if due is not None and card == due:
                rest = sorted(c for c in state.hands[actor] if c != card)
                if rest:
                    yield from emit("mi-follow-holder-plays-other", _replace(events, i, _event(
                        e, t, actor, {"card": rest[0]})))
                for q in others:
                    yield from emit("mi-follow-non-holder", _replace(events, i, _event(
                        e, t, q, {"card": sorted(state.hands[q])[0]})))
                    break
            elif due is None and state.last is not None:
                for q in others:
                    yield from emit("mi-stop-wrong-starter", _replace(events, i, _event(
                        e, t, q, {"card": sorted(state.hands[q])[0]})))
                    break
                same = sorted(c for c in state.hands[actor] if c[1] == state.last[1])
                if same and card[1] != state.last[1]:
                    yield from emit("mi-stop-stopped-suit", _replace(events, i, _event(
                        e, t, actor, {"card": same[0]})))
            for q in others:
                held = sorted(state.hands[q])
                if held:
                    yield from emit("mi-play-not-held", _replace(events, i, _event(
                        e, t, actor, {"card": held[-1]})))
                    break
        elif t == "WidowBought":
            for q in others:
                yield from emit("mi-widow-second", _insert(events, i + 1, _event(e, t, q, p)))
                break
        elif t == "PokerHandDeclared":
            yield from emit("mi-poker-twice", _insert(events, i + 1, copy.deepcopy(e)))
            yield from emit("mi-poker-four-cards", _replace(events, i, _event(
                e, t, actor, {"cards": p["cards"][:4]})))
            card = _not_held(state.hands, actor)
            if card:
                yield from emit("mi-poker-not-held", _replace(events, i, _event(
                    e, t, actor, {"cards": [*p["cards"][:4], card]})))


def mutants(events: Events, budget: int = 2) -> Iterator[Mutant]:
    variant = events[0]["payload"]["variant"]
    if variant == "liverpool":
        yield from lv_mutants(events, budget)
        yield from lv_window_mutants(events, budget)
    else:
        yield from mi_mutants(events, budget)


def compare_first(log: Events) -> tuple[tuple[list, bool], tuple[list, bool]]:
    return referee(log).first(), engine_verdict(log).first()


# == the tests ============================================================================

STORED = sorted((DATA / "liverpool").glob("*.jsonl")) + sorted((DATA / "michigan").glob("*.jsonl"))


@pytest.mark.parametrize("path", STORED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_stored_logs_referee_and_engine_agree(path: Path) -> None:
    for events in games_in(path):
        ours, theirs = referee(events), engine_verdict(events)
        assert (sorted(ours.findings), ours.halted) == (theirs.findings, theirs.halted)


def test_stored_breaking_logs_are_caught_by_the_referee_at_their_named_rule() -> None:
    """Guard on the referee itself: each stored Liverpool breaking log's named finding."""
    expected = json.loads((DATA / "liverpool" / "expected.json").read_text())
    for name, (seq, rule, kind, _message) in expected.items():
        (events,) = games_in(DATA / "liverpool" / name)
        assert (seq, rule, kind) in referee(events).findings, name


def _clean_games() -> list[Events]:
    games = []
    for seed in range(6):
        games.append(play("liverpool", [f"p{i}" for i in range(2 + seed)], seed=seed,
                          game_id=f"lv{seed}", rules={"max_buys": 1} if seed % 3 == 0 else {}))
        rules: dict[str, Any] = {"deals": 2, "three_in_one": bool(seed % 2)}
        games.append(play("michigan", [f"p{i}" for i in range(3 + seed)], seed=seed,
                          game_id=f"mi{seed}", rules=rules))
    return games


@pytest.fixture(scope="module")
def clean_games() -> list[Events]:
    return _clean_games()


def test_clean_driver_games_are_clean_for_both(clean_games: list[Events]) -> None:
    for events in clean_games:
        ours, theirs = referee(events), engine_verdict(events)
        assert ours.findings == [] and not ours.halted, events[0]["game_id"]
        assert theirs.findings == [] and not theirs.halted, events[0]["game_id"]


@pytest.fixture(scope="module")
def world_games() -> list[Events]:
    """A small seeded simulated world of both variants (three_in_one and house deals)."""
    from rummyguard.sim.world import WorldConfig, build_world, run_world

    chunks: list[bytes] = []
    # 16 games: seed 3 seats 4 Liverpool and 12 Michigan tables (12 games gave 1 Liverpool)
    run_world(build_world(WorldConfig(games=16, seed=3, variants=("liverpool", "michigan"))),
              chunks.append)
    by_game: dict[str, Events] = {}
    for line in b"".join(chunks).splitlines():
        e = json.loads(line)
        by_game.setdefault(e["game_id"], []).append(e)
    return list(by_game.values())


def test_clean_world_games_are_clean_for_both(world_games: list[Events]) -> None:
    assert len(world_games) == 16
    for events in world_games:
        ours, theirs = referee(events), engine_verdict(events)
        assert (ours.findings, ours.halted) == (theirs.findings, theirs.halted) == ([], False)


STORED_CLEAN = [p for p in STORED if p.name.startswith("clean")]


def test_mutants_first_findings_agree(world_games: list[Events]) -> None:
    """One mutant of each kind per clean game (world games and the stored clean logs, which
    hold buys, Rummy calls and poker hands): the first findings and the halt agree, and
    the referee sees a break in every mutant."""
    kinds: Counter[str] = Counter()
    games = world_games + [g for p in STORED_CLEAN for g in games_in(p)]
    for events in games:
        for kind, log in mutants(events, budget=1):
            ours, theirs = compare_first(log)
            assert ours[0], f"{kind}: the referee saw no break"
            assert ours == theirs, (kind, events[0]["game_id"], ours, theirs)
            kinds[kind] += 1
    assert len(kinds) >= 38, sorted(kinds)
    assert sum(kinds.values()) >= 250, kinds


# == hand-built situations ================================================================
#
# Each case is a short log whose findings were worked out from RULES.md before either side
# ran it; both the referee and the engine must give exactly them. ``seq`` -1 stands for the
# last event of the log.

LV_SEATS = ["lv2-p0", "lv2-p1"]
A, B = LV_SEATS
OTHER = "3C 3D 8C 8D 9D TD JD KC KD QC"
OTHER12 = "5C 5D 9C 9D TC TD JC JD QC QD KC KS"


def _lv_prefix(round_no: int) -> Events:
    """The stored clean two-player game cut before ``round_no``'s deal."""
    (events,) = games_in(DATA / "liverpool" / "clean-2p.jsonl")
    i = [k for k, e in enumerate(events) if e["type"] == "RoundStarted"][round_no - 1]
    return [{k: v for k, v in e.items() if k not in ("hash", "prev_hash")} | {"game_id": "lv"}
            for e in events[:i]]


def _lv_log(round_no: int, p0: str, p1: str, up: str, stock: str) -> Any:
    from test_liverpool import Log as LvLog

    log = LvLog(LV_SEATS, prefix=_lv_prefix(round_no))
    log.deal(round_no, 1 if round_no % 2 else 0, {0: p0, 1: p1}, up, stock)
    return log


def _runs(run0: str, extra: str, card: str | None = None, end: str | None = None,
          named: dict[str, str] | None = None) -> Any:
    """Round 3 (two runs): p0 lays down ``run0`` and 9S-QS, both draw and discard, then
    p0 lays ``card`` off on ``run0`` (at ``end``)."""
    log = _lv_log(3, f"{run0} 9S TS JS QS {extra}", OTHER, "KS", "AD 4S 5S 6S 7S")
    log.drew(A)
    log.laid(A, ("run", run0, named) if named else ("run", run0), ("run", "9S TS JS QS"))
    log.disc(A, "AD")
    log.drew(B)
    log.disc(B, "4S")
    log.drew(A)
    if card:
        log.off(A, card, 0, end)
    return log


def _r5(melds: list[tuple[str, str]]) -> Any:
    log = _lv_log(5, "3C 3D 3H 8C 8D 8S 4S 5S 6S 7S 9S 2C", OTHER12, "AD", "KD 4D 6D")
    log.drew(A)
    log.laid(A, *melds)
    log.disc(A, "KD")
    return log


def _r6(melds: list[tuple[str, str]], then: str | None = None) -> Any:
    log = _lv_log(6, OTHER12, "3C 3D 3H 4S 5S 6S 7S 9H TH JH QH KH", "AD", "3S 4D 6D")
    log.drew(B)
    log.laid(B, *melds)
    if then:
        log.disc(B, then)
    return log


def _r1(*moves: tuple[str, str, dict[str, Any]]) -> Any:
    from test_liverpool import Log as LvLog

    log = LvLog(LV_SEATS, dealer=1)
    log.deal(1, 1, {0: "5C 5D 5H 9C 9D 9H 4C QS JS 7S", 1: "7C 7D 7H 8C 8D 8H KD KC 3S TH"},
             "6S", "4H 6H TS 2S 9S AC AD")
    for type_, who, payload in moves:
        log.add(type_, who, payload)
    return log


DOWN = ("LaidDown", A, {"melds": [{"kind": "set", "cards": ["5C", "5D", "5H"]},
                                  {"kind": "set", "cards": ["9C", "9D", "9H"]}]})
FULL6 = [("set", "3C 3D 3H 3S"), ("run", "4S 5S 6S 7S"), ("run", "9H TH JH QH KH")]

LV_CASES: dict[str, tuple[Callable[[], Any], list[tuple[int, str, str]]]] = {
    # C-WILD: an unnamed wild before the first natural stands above the high end...
    "low wild reads above: 4H fits low": (lambda: _runs("2H 5H 6H 7H", "4H 8H", "4H"), []),
    "low wild reads above: 8H is taken": (
        lambda: _runs("2H 5H 6H 7H", "4H 8H", "8H"), [(-1, "LV-LAYOFF", "violation")]),
    "a natural 2 first is a wild too: 6H is taken": (
        lambda: _runs("2H 3H 4H 5H", "AH 6H", "6H"), [(-1, "LV-LAYOFF", "violation")]),
    # ... below it when the high end is the ace
    "low wild under an ace: TH fits low": (lambda: _runs("2C QH KH AH", "TH 8H", "TH"), []),
    "two low wilds read above: 8H is taken": (
        lambda: _runs("2C 2D 5H 6H 7H", "8H", "8H"), [(-1, "LV-LAYOFF", "violation")]),
    "named low wild binds: 8H fits high": (
        lambda: _runs("2C 5H 6H 7H", "8H 4H", "8H", named={"0": "4H"}), []),
    "low wild named as the card above": (
        lambda: _runs("2C 5H 6H 7H", "8H 4H", "4H", named={"0": "8H"}), []),
    "trailing wild named below the low end": (
        lambda: _runs("5H 6H 7H 2C", "8H 4H", named={"3": "4H"}), [(-5, "C-WILD", "violation")]),
    "ace low with a wild 2 inside: 5H fits": (lambda: _runs("AH 2C 3H 4H", "5H 8H", "5H"), []),
    "wild past the ace": (lambda: _runs("JH QH KH AH 2C", "8H"), [(-5, "C-RUN", "violation")]),
    "wild laid off at the low end of a run from 5": (
        lambda: _runs("5H 6H 7H 8H", "AH 2D", "2D", "low"), []),
    # LV-ALLOUT
    "round 5 all but the discard": (lambda: _r5([("set", "3C 3D 3H"), ("set", "8C 8D 8S"),
                                                 ("run", "4S 5S 6S 7S 2C 9S")]), []),
    "round 5 leaving three cards": (lambda: _r5([("set", "3C 3D 3H"), ("set", "8C 8D 8S"),
                                                 ("run", "4S 5S 6S 7S")]),
                                    [(-2, "LV-ALLOUT", "violation")]),
    "round 6 out without a discard": (lambda: _r6(FULL6), []),
    "round 6 leaving one card": (
        lambda: _r6([("set", "3C 3D 3H"), FULL6[1], FULL6[2]], "3S"), [(-2, "LV-ALLOUT", "violation")]),
    "round 6 discard after going out": (lambda: _r6(FULL6, "3S"), [(-1, "C-TURN", "violation")]),
    # windows
    "the up-card bought": (lambda: _r1(("Drew", A, {"source": "stock", "cards": ["4H"]}),
                                       ("Bought", B, {"card": "6S", "penalty": "6H"})), []),
    "the up-card bought with max_buys 0": (lambda: _max_buys_zero(), [(-1, "LV-BUY", "violation")]),
    "a buy before the next player's draw": (
        lambda: _r1(("Drew", A, {"source": "stock", "cards": ["4H"]}), DOWN,
                    ("Discarded", A, {"card": "4H"}), ("Bought", B, {"card": "4H", "penalty": "6H"})),
        [(-1, "LV-BUY", "violation")]),
    "Rummy called by the next player instead of drawing": (
        lambda: _r1(("Drew", A, {"source": "stock", "cards": ["4H"]}), DOWN,
                    ("Discarded", A, {"card": "4H"}), ("Drew", B, {"source": "stock", "cards": ["6H"]}),
                    ("Discarded", B, {"card": "6H"}),
                    ("RummyCalled", A, {"card": "6H", "meld": 0, "discard": "QS"})),
        [(-1, "LV-RUMMY", "violation")]),
    "a Liverpool event of another variant": (
        lambda: _r1(("FreshPressed", A, {})), [(-1, "LOG-EVENT", "integrity")]),
}


def _max_buys_zero() -> Any:
    log = _r1(("Drew", A, {"source": "stock", "cards": ["4H"]}),
              ("Bought", B, {"card": "6S", "penalty": "6H"}))
    log.events[0]["payload"]["rules"] = {"max_buys": 0}
    return log


def _mi(script: str, **rules: Any) -> Events:
    """The stacked Michigan deal of tests/test_michigan_kit.py (a, b, c; dealer c) and a
    script of moves ``who:Type:args`` (P = PokerHandDeclared of the five named cards, W =
    WidowBought, L = PlayerLeft, else a card played)."""
    from logkit import Log as MiLog
    from test_michigan_kit import STACKED

    log = MiLog("mi")
    log.created("michigan", ["a", "b", "c"], dealer=2, rules=rules)
    log.round(STACKED, dealer=2)
    for step in script.split():
        who, what = step.split(":", 1)
        if what.startswith("P"):
            log.add("PokerHandDeclared", who, {"cards": what[1:].split(",")})
        elif what == "W":
            log.add("WidowBought", who, {"price": 1})
        elif what == "L":
            log.add("PlayerLeft", who, {})
        else:
            log.add("CardPlayed", who, {"card": what})
    return log.events


PA, PB, PC = "P2H,3H,7H,JH,AH", "P4H,8H,QH,2C,5C", "P6H,9H,KH,3C,7C"
MI_CASES: dict[str, tuple[Callable[[], Events], list[tuple[int, str, str]]]] = {
    "widow bought after the declarations began": (
        lambda: _mi(f"a:{PA} b:{PB} c:{PC} b:W a:2H", three_in_one=True), [(-2, "MI-WIDOW", "violation")]),
    "a late widow purchase is applied: b's old 4H is dead": (
        lambda: _mi("a:2H a:3H b:W a:4C"), [(-2, "MI-WIDOW", "violation")]),
    "a second widow purchase is ignored": (
        lambda: _mi("b:W c:W a:2H a:3H a:4C"), [(-4, "MI-WIDOW", "violation")]),
    "declared twice": (lambda: _mi(f"a:{PA} a:{PA}", three_in_one=True), [(-1, "MI-POKER", "violation")]),
    "declared after the first card": (
        lambda: _mi(f"a:{PA} b:{PB} c:{PC} a:2H a:{PA}", three_in_one=True), [(-1, "MI-POKER", "violation")]),
    "a card declared twice": (
        lambda: _mi("a:P2H,2H,3H,7H,JH", three_in_one=True), [(-1, "MI-POKER", "violation")]),
    "a declared card not held halts": (
        lambda: _mi("a:P2H,3H,7H,JH,4H", three_in_one=True), [(-1, "C-HOLD", "integrity")]),
    "a declaration without three_in_one": (lambda: _mi(f"a:{PA}"), [(-1, "MI-POKER", "violation")]),
    "the stop phase before everyone declared": (
        lambda: _mi(f"a:{PA} b:{PB} a:2H", three_in_one=True), [(-1, "MI-POKER", "violation")]),
    "the last player leaves at a stop: the right passes left": (
        lambda: _mi("a:2H a:3H b:4H b:L c:3C"), []),
    "the starter leaves before the first card": (lambda: _mi("a:L b:2C"), []),
    "after the ace, a restarts in hearts": (lambda: _mi("a:AH a:2H"), [(-1, "MI-STOP", "violation")]),
    "after the ace, b starts": (lambda: _mi("a:AH b:2C"), [(-1, "MI-STOP", "violation")]),
    "a widow buyer plays from the widow, 6H held by c follows": (lambda: _mi("a:W a:5H c:6H"), []),
}


def _check_case(events: Events, want: list[tuple[int, str, str]]) -> None:
    expected = sorted((events[s]["seq"], rule, kind) for s, rule, kind in want)
    ours, theirs = referee(events), engine_verdict(events)
    halts = any(kind == "integrity" and rule == "C-HOLD" for _, rule, kind in want)
    assert (sorted(ours.findings), ours.halted) == (expected, halts)
    assert (theirs.findings, theirs.halted) == (expected, halts)


@pytest.mark.parametrize("name", sorted(LV_CASES))
def test_liverpool_situations(name: str) -> None:
    build, want = LV_CASES[name]
    _check_case(build().events, want)


@pytest.mark.parametrize("name", sorted(MI_CASES))
def test_michigan_situations(name: str) -> None:
    build, want = MI_CASES[name]
    _check_case(build(), want)
