"""The Michigan sample logs in tests/data/michigan/: clean driver games and one breaking
log per rule, each replayed against what it is meant to show.

Each ``<name>.jsonl`` has a ``<name>.expected.json``: ``about`` (what the log shows),
``intent`` (the findings it was built to produce: seq, rule, kind and a phrase of the
message) and ``record`` (the whole ``verify --json`` form of its replay, which must not
drift). Regenerate after a deliberate change with::

    .venv/bin/python tests/test_michigan_data.py

The breaking logs are driver games with one surgical edit; where the edit leaves the
rest of the game unplayable, the log ends at the edited event.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from spec_paths import RULES
from test_michigan_kit import (
    Events,
    cut,
    find,
    game_where,
    lowest_cards,
    play_event,
    reasons,
    record,
    renumber,
    state_before,
)

from rummyguard.events.cards import format_cards
from rummyguard.replay.rules.michigan import FOLLOW, START, Michigan

DATA = Path(__file__).parent / "data" / "michigan"

Intent = list[tuple[int, str, str, str]]
Built = tuple[str, Events, Intent]


def count(events: Events, type_: str) -> int:
    return sum(1 for e in events if e["type"] == type_)


# --- clean games -------------------------------------------------------------------------


def clean_3p() -> Built:
    events = game_where(3, lambda ev: count(ev, "WidowBought") >= 1 and "penalty" in reasons(ev)
                        and "pay cards split" in reasons(ev))
    return ("Three players, three deals, default rules: widow purchases, penalties, pay cards "
            "won and rolled over, the kitty to each first player out, the final split."), events, []


def clean_8p() -> Built:
    events = game_where(8, lambda ev: "pay cards split" in reasons(ev))
    return "Eight players, eight deals, default rules.", events, []


def clean_4p_poker() -> Built:
    events = game_where(4, lambda ev: count(ev, "WidowBought") >= 1, three_in_one=True, pay_ante=2)
    return ("Four players with three_in_one and pay_ante 2: a poker phase every deal "
            "(after a widow purchase in some)."), events, []


# --- breaking logs --------------------------------------------------------------------------


def base() -> Events:
    return clean_3p()[1]


def start_wrong_player() -> Built:
    events = base()
    i = find(events, lambda st, e: e["type"] == "CardPlayed")
    st = state_before(events, i)
    starter = st.due()[1]
    other = (starter + 1) % st.n
    card = lowest_cards(st, other)[0]
    events[i] = play_event(events[i], st.names[other], card)
    return (f"The deal's first card is played by {st.names[other]}, not by {st.names[starter]} "
            "(left of the dealer)."), cut(events, i), [
        (i, "MI-START", "violation", f"{st.names[starter]} should start the sequence")]


def follow_skipped_holder() -> Built:
    events = base()
    i = find(events, lambda st, e: e["type"] == "CardPlayed" and st.started
             and st.due()[0] == FOLLOW and st.due()[1] != st.last_seat)
    st = state_before(events, i)
    _, holder, nxt = st.due()
    other = st.last_seat
    card = lowest_cards(st, other)[0]
    events[i] = play_event(events[i], st.names[other], card)
    return (f"{st.names[holder]} holds {format_cards([nxt])[0]}, the next card, but is skipped: "
            f"{st.names[other]} plays {card}."), cut(events, i), [
        (i, "MI-FOLLOW", "violation", f"{st.names[holder]} holds {format_cards([nxt])[0]}")]


def follow_holder_plays_other() -> Built:
    events = base()
    i = find(events, lambda st, e: e["type"] == "CardPlayed" and st.started
             and st.due()[0] == FOLLOW and st.hand_size[st.due()[1]] > 1)
    st = state_before(events, i)
    _, holder, nxt = st.due()
    card = next(c for c in st.cards_of(holder) if c != nxt)
    events[i] = play_event(events[i], st.names[holder], format_cards([card])[0])
    return (f"{st.names[holder]} holds the next card {format_cards([nxt])[0]} but plays another "
            "card."), cut(events, i), [
        (i, "MI-FOLLOW", "violation", f"should have played it; {st.names[holder]} played")]


def stop_wrong_starter() -> Built:
    events = base()
    i = find(events, lambda st, e: e["type"] == "CardPlayed" and st.started
             and st.due()[0] == START)
    st = state_before(events, i)
    starter = st.due()[1]
    other = next(s for s in range(1, st.n) if st.hand_size[(starter + s) % st.n])
    other = (starter + other) % st.n
    card = lowest_cards(st, other)[0]
    events[i] = play_event(events[i], st.names[other], card)
    return (f"After a stop, {st.names[other]} starts although {st.names[starter]} played the "
            "last card."), cut(events, i), [
        (i, "MI-STOP", "violation", f"{st.names[starter]} should start the sequence")]


def stop_same_suit() -> Built:
    def fits(st: Michigan, e: dict[str, Any]) -> bool:
        if e["type"] != "CardPlayed" or not st.started:
            return False
        kind, who, barred = st.due()
        return kind == START and barred >= 0 and st.suit_count[who][barred] > 0
    events = base()
    i = find(events, fits)
    st = state_before(events, i)
    _, who, barred = st.due()
    card = st.lowest(who, barred)
    assert card is not None
    events[i] = play_event(events[i], st.names[who], format_cards([card])[0])
    return (f"After a stop, {st.names[who]} restarts in the stopped suit although he holds "
            "others."), cut(events, i), [(i, "MI-STOP", "violation", "the stopped suit")]


def widow_second_purchase() -> Built:
    events = base()
    i = next(i for i, e in enumerate(events) if e["type"] == "WidowBought")
    buyer = events[i]["actor"]
    second = copy.deepcopy(events[i])
    second["actor"] = next(p for p in ("p1", "p2", "p3") if p != buyer)
    events = renumber([*events[: i + 1], second, *events[i + 1:]])
    return ("A whole game in which a second player buys the widow after the first; the second "
            "purchase is ignored, so the rest of the game replays as logged."), events, [
        (i + 1, "MI-WIDOW", "violation", f"but {buyer} already bought it")]


def widow_late() -> Built:
    events = game_where(3, lambda ev: count(ev, "WidowBought") < 3)
    i = find(events, lambda st, e: e["type"] == "CardPlayed" and st.widow_buyer is None
             and st.started)
    buyer = events[i]["actor"]
    late = copy.deepcopy(events[i])
    late.update(type="WidowBought", payload={"price": 1})
    events = renumber([*events[:i], late])
    return f"{buyer} buys the widow after the first card of the deal was played.", events, [
        (i, "MI-WIDOW", "violation", "after the first card was played")]


def penalty_unclaimed() -> Built:
    events = base()
    for e in events:
        if e["type"] == "ChipsTransferred":
            ts = e["payload"]["transfers"]
            pen = next((t for t in ts if t["reason"] == "penalty"), None)
            if pen is not None:
                ts.remove(pen)
                break
    end = len(events) - 1
    return ("The platform never charged one MI-PENALTY chip (a start with a card other than the "
            "lowest of its suit)."), events, [
        (end, "C-CLAIM", "discrepancy",
         f"due but not claimed: {pen['from']}->{pen['to']} 1")]


def pay_card_wrong_taker() -> Built:
    events = game_where(3, lambda ev: "pay card" in reasons(ev), deals=1)
    i, t = next((i, t) for i, e in enumerate(events) if e["type"] == "ChipsTransferred"
                for t in e["payload"]["transfers"] if t["reason"] == "pay card")
    right = t["to"]
    t["to"] = next(p for p in ("p1", "p2", "p3") if p != right)
    return (f"The chips on {t['from'][4:]} are paid to {t['to']}; {right} played the card."), \
        events, [(i, "C-CLAIM", "discrepancy", f"due but not claimed: {t['from']}->{right}")]


def out_wrong_winner() -> Built:
    events = base()
    j = next(i for i, e in enumerate(events) if e["type"] == "RoundEnded")
    right = events[j]["payload"]["winners"][0]
    wrong = next(p for p in ("p1", "p2", "p3") if p != right)
    events[j]["payload"]["winners"] = [wrong]
    return f"Deal 1 is claimed won by {wrong}; {right} went out first.", events, [
        (j, "C-CLAIM", "discrepancy", f"claimed ['{wrong}'], recomputed ['{right}']")]


def ante_wrong() -> Built:
    events = game_where(3, lambda ev: True, deals=1)
    i = next(i for i, e in enumerate(events) if e["type"] == "ChipsTransferred")
    t = next(t for t in events[i]["payload"]["transfers"] if t["to"] == "kitty" and t["amount"] == 2)
    t["amount"] = 1
    return f"The dealer {t['from']} is charged a 1-chip ante instead of 2.", events, [
        (i, "C-CLAIM", "discrepancy", f"due but not claimed: {t['from']}->kitty 2")]


def end_split_wrong() -> Built:
    events = base()
    i, t = next((i, t) for i, e in enumerate(events) if e["type"] == "ChipsTransferred"
                for t in e["payload"]["transfers"] if t["reason"] == "pay cards split")
    t["amount"] += 1
    return "The final division of the pay-card chips gives one chip too many.", events, [
        (i, "C-CLAIM", "discrepancy", f"claimed but not due: {t['from']}->{t['to']} {t['amount']}")]


def deal_duplicate_card() -> Built:
    events = base()
    i = [i for i, e in enumerate(events) if e["type"] == "RoundStarted"][1]
    deck = events[i]["payload"]["deck"]
    deck[5] = deck[6]
    return "Deal 2's deck holds a card twice and misses another.", events, [
        (i, "C-DEAL", "violation", "is not the variant's deck"),
        (i, "MI-DEAL", "integrity", "the deck is not the 52 cards")]


def poker_missing_declaration() -> Built:
    events = clean_4p_poker()[1]
    first_play = next(i for i, e in enumerate(events) if e["type"] == "CardPlayed")
    k = max(i for i in range(first_play) if events[i]["type"] == "PokerHandDeclared")
    who = events[k]["actor"]
    events = renumber(events[:k] + events[k + 1:])
    i = first_play - 1
    return f"The stop phase begins before {who} declared his poker hand.", cut(events, i), [
        (i, "MI-POKER", "violation", f"before {who} declared a poker hand")]


def hold_card_not_in_hand() -> Built:
    events = base()
    i = find(events, lambda st, e: e["type"] == "CardPlayed" and len(st.played) == 5)
    st = state_before(events, i)
    seat = st.index[events[i]["actor"]]
    card = next(c for c in range(52) if st.owner[c] not in (seat,) and st.owner[c] >= 0)
    events[i]["payload"]["card"] = format_cards([card])[0]
    return "A player plays a card another player holds: the replay halts.", events, [
        (i, "C-HOLD", "integrity", f"which is held by {st.names[st.owner[card]]}")]


SAMPLES: dict[str, Callable[[], Built]] = {
    "clean-3p": clean_3p,
    "clean-8p": clean_8p,
    "clean-4p-three-in-one": clean_4p_poker,
    "mi-ante-wrong-claim": ante_wrong,
    "mi-deal-duplicate-card": deal_duplicate_card,
    "mi-widow-second-purchase": widow_second_purchase,
    "mi-widow-late": widow_late,
    "mi-start-wrong-player": start_wrong_player,
    "mi-follow-skipped-holder": follow_skipped_holder,
    "mi-follow-holder-plays-other": follow_holder_plays_other,
    "mi-stop-wrong-starter": stop_wrong_starter,
    "mi-stop-stopped-suit": stop_same_suit,
    "mi-penalty-unclaimed": penalty_unclaimed,
    "mi-pay-wrong-taker": pay_card_wrong_taker,
    "mi-out-wrong-winner": out_wrong_winner,
    "mi-end-split-wrong": end_split_wrong,
    "mi-poker-missing-declaration": poker_missing_declaration,
    "c-hold-card-not-in-hand": hold_card_not_in_hand,
}


def check(events: Events, intent: Intent) -> dict[str, Any]:
    """Replay, assert the intent, return the record's JSON form."""
    rec = record(events)
    assert [(f.seq, f.rule, f.kind) for f in rec.findings] == [(s, r, k) for s, r, k, _ in intent], \
        rec.findings
    for f, (_, _, _, phrase) in zip(rec.findings, intent, strict=True):
        assert phrase in f.message, (phrase, f.message)
    return rec.to_dict()


def load(name: str) -> tuple[Events, dict[str, Any]]:
    events = [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text().splitlines()]
    expected = json.loads((DATA / f"{name}.expected.json").read_text())
    return events, expected


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_replays_as_expected(name: str) -> None:
    events, expected = load(name)
    intent = [tuple(x) for x in expected["intent"]]
    assert check(events, intent) == expected["record"]  # type: ignore[arg-type]
    if name.startswith("clean"):
        rec = record(events)
        assert rec.clean and rec.state is not None and rec.state.is_over()
        seats = events[0]["payload"]["seats"]
        assert count(events, "RoundStarted") == len(seats)
        end = events[-1]["payload"]
        assert end["winners"] == rec.results.winners and end["net"] == rec.results.net


def test_the_issue_asks_for_three_and_eight_players() -> None:
    sizes = {len(load(n)[0][0]["payload"]["seats"]) for n in SAMPLES if n.startswith("clean")}
    assert {3, 8} <= sizes


def test_every_rule_id_of_the_section_is_checked_in_the_module() -> None:
    """A newcomer greps a rule ID of RULES.md §4 and finds its check."""
    section = RULES.read_text().split("## 4.")[1].split("## 5.")[0]
    ids = sorted(set(re.findall(r"MI-[A-Z]+", section)))
    assert len(ids) == 11
    module = (Path(__file__).parents[1] / "replay" / "rules" / "michigan.py").read_text()
    code = module.split('"""', 2)[2]  # after the docstring
    assert [i for i in ids if i not in code] == []


def regenerate() -> None:
    DATA.mkdir(parents=True, exist_ok=True)
    for name, build in SAMPLES.items():
        about, events, intent = build()
        rec = check(events, intent)
        with (DATA / f"{name}.jsonl").open("w") as fh:
            for e in events:
                fh.write(json.dumps(e, separators=(",", ":"), sort_keys=True) + "\n")
        (DATA / f"{name}.expected.json").write_text(json.dumps(
            {"about": about, "intent": [list(x) for x in intent], "record": rec},
            indent=1, sort_keys=True) + "\n")
        print(f"{name}: {len(events)} events, findings {[x[:3] for x in intent]}")


if __name__ == "__main__":
    regenerate()
