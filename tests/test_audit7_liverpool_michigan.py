"""Audit 7 (differential: the independent move-legality referee of
tests/referee_liverpool_michigan.py against the engine) — the disagreement it found in
Liverpool and Michigan that the spec decides, pinned on hand-built logs.

A deal whose logged dealer has left the game. RULES.md §0: "Dealing takes cards from the
top, one at a time, seat by seat starting left of the dealer (C-DEAL)"; §3 and §4: the
dealer moves left each round / deal; ARCHITECTURE: "A violation is recorded and the move
applied as the platform applied it". When the platform names the wrong dealer, the engine
reports it (C-DEAL in Liverpool, MI-END in Michigan) and deals from the seat the platform
named — "the hands follow it" (tests/test_audit3_consistency.py
``test_a_wrong_dealer_is_a_deal_violation``) — except when the named seat belongs to a
player who has left: then it deals from the seat it expected instead. The cards then sit
in other hands than the platform's, and the next move of the platform's first player
halts the replay on C-HOLD although the log follows the logged deal exactly. "Left of the
dealer" is as well defined from an empty seat as from a full one (the next seat still in,
as for every other "left of"), so nothing forces the switch; the independent results
oracle (tests/oracle_liverpool_michigan.py) deals from the logged seat too.

Fixed (both in the engine's variant modules; each test failed before the fix):
``replay/rules/liverpool.py`` ``Liverpool.apply_RoundStarted`` and
``replay/rules/michigan.py`` ``Michigan.apply_RoundStarted``: fall back to the expected
dealer only for a seat number outside the table, not for a seat whose player left.

The guards pin what held before the fix and still holds: the expected
dealer deals clean, and a wrong dealer who is still in is followed.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from logkit import Log, findings
from test_michigan_kit import HAND_A, HAND_B, HAND_C, STACKED, WIDOW, michigan_deck

from rummyguard.events.cards import RANKS
from rummyguard.replay.engine import replay

Events = list[dict[str, Any]]
LV_DATA = Path(__file__).parent / "data" / "liverpool"

# -- Michigan: seats a, b, c; deal 1 dealt by c, so a (all the hearts) starts and goes out
#    by playing 2H..AH; b holds the clubs, c the diamonds, the widow the spades.
HEARTS = [r + "H" for r in RANKS]
CLUBS = [r + "C" for r in RANKS]
DIAMONDS = [r + "D" for r in RANKS]
SPADES = [r + "S" for r in RANKS]
SUITED = michigan_deck([HEARTS, CLUBS, DIAMONDS, SPADES])


def mi_deal_two(dealer: int, leaver: str | None) -> tuple[Log, int]:
    """Deal 1 (dealer c) played out by a; ``leaver`` leaves; deal 2 of the STACKED deck
    logged with ``dealer``. Returns the log and the seq of deal 2's RoundStarted."""
    log = Log("mi")
    log.created("michigan", ["a", "b", "c"], dealer=2)
    log.round(SUITED, dealer=2)
    for card in HEARTS:
        log.add("CardPlayed", "a", {"card": card})
    if leaver:
        log.add("PlayerLeft", leaver, {})
    seq = log.round(STACKED, round_no=2, dealer=dealer)
    return log, seq


def mi_hands(dealer: int, seats: list[str], active: list[str]) -> dict[str, list[str]]:
    """RULES.md MI-DEAL: one card at a time from left of ``dealer`` (the players still
    in), the widow last."""
    n = len(seats)
    order = [seats[(dealer + k) % n] for k in range(1, n + 1) if seats[(dealer + k) % n] in active]
    hands: list[list[str]] = [[] for _ in range(len(order) + 1)]
    for i, card in enumerate(STACKED):
        hands[i % len(hands)].append(card)
    return dict(zip(order, hands[:-1], strict=True))


def lowest(cards: list[str]) -> str:
    return min(cards, key=lambda c: (RANKS.index(c[0]), c[1]))


def test_the_suited_deal_one_is_a_clean_out_by_a() -> None:
    """Guard on the builder: a plays the 13 hearts and goes out; nobody else moved."""
    assert sorted(SUITED) == sorted(HAND_A + HAND_B + HAND_C + WIDOW)
    log, _ = mi_deal_two(0, None)
    log.events.pop()
    rec = replay(log.events, verify_hashes=False)
    assert findings(rec) == [] and not rec.halted


def test_mi_expected_dealer_after_a_leave_deals_clean() -> None:
    """Guard: a leaves after going out; the dealer moves left of c, past a, to b (seat 1),
    and c (left of b) starts with his lowest card."""
    log, _ = mi_deal_two(1, "a")
    hands = mi_hands(1, ["a", "b", "c"], ["b", "c"])
    log.add("CardPlayed", "c", {"card": lowest(hands["c"])})
    rec = replay(log.events, verify_hashes=False)
    assert findings(rec) == [] and not rec.halted


def test_mi_wrong_dealer_still_in_is_followed() -> None:
    """Guard: nobody left, deal 2 logged by b instead of a (MI-END); the hands follow b's
    deal: c (left of b) holds what he plays and starts without another finding."""
    log, seq = mi_deal_two(1, None)
    hands = mi_hands(1, ["a", "b", "c"], ["a", "b", "c"])
    log.add("CardPlayed", "c", {"card": lowest(hands["c"])})
    rec = replay(log.events, verify_hashes=False)
    assert findings(rec) == [(seq, "MI-END", "violation")] and not rec.halted


def test_mi_deal_logged_by_a_dealer_who_left_follows_the_logged_seat() -> None:
    """a goes out and leaves; the dealer should move to b (a is out), but the platform logs
    a (seat 0) as deal 2's dealer and deals from his left: b, c, then the widow. MI-END at
    the deal, and b, first from a's left, starts with his lowest club from that deal.
    Today: the engine deals from left of b (c, b, widow), says b plays a card c holds and
    halts (MI-START + C-HOLD)."""
    log, seq = mi_deal_two(0, "a")
    hands = mi_hands(0, ["a", "b", "c"], ["b", "c"])
    assert list(hands) == ["b", "c"]
    log.add("CardPlayed", "b", {"card": lowest(hands["b"])})
    rec = replay(log.events, verify_hashes=False)
    assert (findings(rec), rec.halted) == ([(seq, "MI-END", "violation")], False)


# -- Liverpool: the stored clean five-player game, cut before round 2's deal ------------------


def lv_before_round_two() -> tuple[Events, dict[str, Any]]:
    events = [json.loads(line) for line in (LV_DATA / "clean-5p.jsonl").read_text().splitlines()]
    i = [k for k, e in enumerate(events) if e["type"] == "RoundStarted"][1]
    prefix = [{k: v for k, v in e.items() if k not in ("hash", "prev_hash")} for e in events[:i]]
    return prefix, copy.deepcopy(events[i])


def lv_round_two(dealer: int, leaver_seat: int | None) -> tuple[Events, int, str, list[str]]:
    """Round 2 dealt with ``dealer`` (after the player at ``leaver_seat`` left); returns
    the events, the deal's seq, the first player from the logged dealer's left and his
    hand as the platform dealt it."""
    prefix, deal = lv_before_round_two()
    seats: list[str] = prefix[0]["payload"]["seats"]
    events = list(prefix)
    if leaver_seat is not None:
        left = copy.deepcopy(deal)
        left.update(type="PlayerLeft", actor=seats[leaver_seat], payload={})
        events.append(left)
    deal["payload"]["dealer"] = dealer
    events.append(deal)
    for seq, e in enumerate(events):
        e["seq"], e["event_id"] = seq, f"lv7-{seq:04d}"
    # §3 deal: 10 cards each, one at a time from left of the dealer, players still in
    n = len(seats)
    active = [s for k, s in enumerate(seats) if k != leaver_seat]
    order = [seats[(dealer + k) % n] for k in range(1, n + 1) if seats[(dealer + k) % n] in active]
    deck = deal["payload"]["deck"]
    hand = [deck[i * len(order)] for i in range(10)]
    return events, len(events) - 1, order[0], hand


def lv_first_turn(events: Events, first: str, hand: list[str]) -> Events:
    stock_top = events[-1]["payload"]["deck"][10 * 4 + 1]  # 4 players still in, the up-card
    out = copy.deepcopy(events)
    for type_, payload in (("Drew", {"source": "stock", "cards": [stock_top]}),
                           ("Discarded", {"card": sorted(hand)[0]})):
        e = copy.deepcopy(out[-1])
        e.update(type=type_, v=2, actor=first, payload=payload, seq=len(out),
                 event_id=f"lv7-{len(out):04d}")
        out.append(e)
    return out


def test_lv_builder_round_two_as_stored_is_clean() -> None:
    """Guard on the builder: the stored round-2 deal, cut there, replays clean."""
    prefix, deal = lv_before_round_two()
    rec = replay([*prefix, deal], verify_hashes=False)
    assert findings(rec) == [] and not rec.halted


def test_lv_expected_dealer_after_a_leave_deals_clean() -> None:
    """Guard: the round-2 dealer (left of round 1's) leaves before the deal; the platform
    deals from the next seat still in, whose left-hand player starts."""
    prefix, deal = lv_before_round_two()
    want = deal["payload"]["dealer"]
    n = len(prefix[0]["payload"]["seats"])
    events, _seq, first, hand = lv_round_two((want + 1) % n, want)
    rec = replay(lv_first_turn(events, first, hand), verify_hashes=False)
    assert findings(rec) == [] and not rec.halted


def test_lv_deal_logged_by_a_dealer_who_left_follows_the_logged_seat() -> None:
    """The round-2 dealer leaves before the deal and the platform still logs him as the
    dealer, dealing from his left: C-DEAL at the deal, and the first player from his left
    draws and discards a card of that deal without another finding. Today: the engine
    deals from the next seat's left, calls the move C-TURN and halts on C-HOLD."""
    _prefix, deal = lv_before_round_two()
    want = deal["payload"]["dealer"]
    events, seq, first, hand = lv_round_two(want, want)
    rec = replay(lv_first_turn(events, first, hand), verify_hashes=False)
    assert (findings(rec), rec.halted) == ([(seq, "C-DEAL", "violation")], False)
