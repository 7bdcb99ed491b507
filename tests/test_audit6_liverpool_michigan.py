"""Audit 6 (differential: the independent oracle of tests/oracle_liverpool_michigan.py
against the engine) — the disagreements it found in Liverpool and Michigan, each as a
hand-built log with every figure computed by hand from RULES.md.

Over ~9,000 compared games (simulated worlds, platform-driver games with house rules
and leavers, claim mutants, logs cut short, legacy v1 events) the engine and the oracle
agreed on every figure but one reading, now fixed in the engine:

- MI-END: "the game's winners are the players with the highest net". The engine took
  the highest net among the players *still in the game*; the sentence names every
  player, and ``net`` has one for every seat, a player who left included (his net is
  final: he pays no more antes and wins nothing more). By the letter, a player who left
  with the best net is among the winners, and the engine now says so.
"""

from __future__ import annotations

from logkit import Log, findings
from oracle_liverpool_michigan import oracle
from test_michigan_kit import michigan_deck

from rummyguard.replay.engine import replay


def suit(s: str, ranks: str = "23456789TJQKA") -> list[str]:
    return [r + s for r in ranks]


def richest_player_leaves() -> Log:
    """Three players a b c, dealer c (seat 2), two deals, ``pay_ante`` 0 (the pay cards
    hold nothing, so the kitty alone moves chips), stake 0 (Michigan has no stake).

    Deal 1 (dealer c; hands a clubs, b diamonds, c hearts, widow spades): antes a 1, b 1,
    c 2 = kitty 4. a plays 2C..AC and is out: kitty 4 to a.  a leaves.
    Deal 2 (dealer b: left of c is a, who left, so b; hands from left of b: c, b, widow):
    c holds 2C..AC 2D..6D (18), b 2H..AH 2S..5S (17), the widow 7D..AD 6S..AS (17).
    Antes b 2, c 1 = kitty 3. c plays 2C..AC (the ace stops), restarts with 2D, his
    lowest diamond (no penalty), 3D..6D (7D is in the widow) and is out: kitty 3 to c.
    No pay-card chips to split. net a -1+4 = 3, b -1-2 = -3, c -2-1+3 = 0.
    """
    log = Log("a6-mi")
    log.created("michigan", ["a", "b", "c"], dealer=2, stake=0, rules={"deals": 2, "pay_ante": 0})
    log.round(michigan_deck([suit("C"), suit("D"), suit("H"), suit("S")]), round_no=1, dealer=2)
    for card in suit("C"):
        log.add("CardPlayed", "a", {"card": card})
    log.sys("RoundEnded", {"round": 1, "winners": ["a"], "scores": {}})
    log.add("PlayerLeft", "a")
    log.sys("PlayerRemoved", {"player": "a", "reason": "left"})
    log.round(michigan_deck([suit("C") + suit("D", "23456"), suit("H") + suit("S", "2345"),
                             suit("D", "789TJQKA") + suit("S", "6789TJQKA")]), round_no=2, dealer=1)
    for card in suit("C") + suit("D", "23456"):
        log.add("CardPlayed", "c", {"card": card})
    log.sys("RoundEnded", {"round": 2, "winners": ["c"], "scores": {}})
    log.sys("ChipsTransferred", {"transfers": [
        {"from": "a", "to": "kitty", "amount": 1, "reason": "ante"},
        {"from": "b", "to": "kitty", "amount": 1, "reason": "ante"},
        {"from": "c", "to": "kitty", "amount": 2, "reason": "ante"},
        {"from": "kitty", "to": "a", "amount": 4, "reason": "kitty"},
        {"from": "b", "to": "kitty", "amount": 2, "reason": "ante"},
        {"from": "c", "to": "kitty", "amount": 1, "reason": "ante"},
        {"from": "kitty", "to": "c", "amount": 3, "reason": "kitty"}]})
    return log


NET = {"a": 3, "b": -3, "c": 0}


def test_richest_player_leaves_chips_and_claims_by_hand() -> None:
    """What engine and oracle agree on in that game: every chip, each deal's winner."""
    log = richest_player_leaves()
    rec = replay(log.events)
    assert findings(rec) == [] and not rec.halted
    assert rec.results.net == NET and rec.results.scores == {}
    assert sorted(t.key() for t in rec.transfers if t.src == "kitty") == [("kitty", "a", 4), ("kitty", "c", 3)]
    # the oracle: the same chips; the winners by the letter, and by the old engine reading
    assert oracle(log.events).results() == {"winners": ["a"], "net": NET, "scores": {}}
    assert oracle(log.events, mi_winners_still_in=True).winners == ["c"]


def test_mi_end_winners_are_the_highest_net_of_every_player_even_one_who_left() -> None:
    """MI-END: a has the highest net (3) although he left after deal 1: the game's winners
    are [a]. The engine used to say [c] (0, the best of b and c) and call the claim wrong."""
    log = richest_player_leaves()
    ended = log.sys("GameEnded", {"winners": ["a"], "net": dict(NET)})
    rec = replay(log.events)
    assert rec.results.winners == ["a"]
    assert findings(rec) == [], f"GameEnded at seq {ended} claims the letter's winners"
