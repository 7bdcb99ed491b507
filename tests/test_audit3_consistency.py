"""Third spec audit: the shared rules of RULES.md §0 and §5 give the same finding in every
variant.

One small log per situation per variant (three seats ``a b c``, dealer seat 0, the
variant's deck unshuffled), and the four outputs compared: the same kind of breach must
give the same rule ID, the same kind (violation / discrepancy / integrity), the same seq
and the same halting in classic, r500, Liverpool and Michigan, unless the variant's own
section of RULES.md says otherwise. Where it does, the test names the exception and the
section it comes from.

Tests marked "fixed" failed before this audit's change:

- ``RoundStarted.round`` that differs from the recomputed round was C-DEAL (violation) in
  Liverpool and MI-END (violation) in Michigan; it is a number the platform claims, so it
  is a C-CLAIM discrepancy, as classic and r500 already reported.
- a deck that is not the variant's deck was only an MI-DEAL halt in Michigan; it is the
  C-DEAL violation of §0 first, then the halt (Michigan cannot follow such a deal).
- a ``PlayerRemoved`` naming someone not seated halted classic with C-HOLD; no card moves,
  it is a claim about nobody at the table: a C-CLAIM discrepancy, as in the other three.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from logkit import Log, findings

from rummyguard.events.cards import format_cards, standard_deck
from rummyguard.replay.engine import replay

VARIANTS = ["classic", "r500", "liverpool", "michigan"]
#: (decks, jokers) of each variant's deck (RULES.md §1-§4 headers)
DECKS = {"classic": (2, 4), "r500": (1, 2), "liverpool": (2, 0), "michigan": (1, 0)}
SEATS = ["a", "b", "c"]
#: the variant's own deal rule, named by the halt when a deal cannot be done (§1 CL-DEAL,
#: §4 MI-DEAL; r500 and Liverpool give their deal in the header, without an ID: C-DEAL)
DEAL_HALT = {"classic": "CL-DEAL", "r500": "C-DEAL", "liverpool": "C-DEAL", "michigan": "MI-DEAL"}

Triple = tuple[int, str, str]


def deck_of(variant: str) -> list[str]:
    return format_cards(standard_deck(*DECKS[variant]))


def dealt(variant: str, *, round_no: int = 1, dealer: int = 0, deck: list[str] | None = None) -> Log:
    """GameCreated (seq 0) and the first RoundStarted (seq 1)."""
    log = Log()
    log.created(variant, SEATS)
    log.round(deck if deck is not None else deck_of(variant), round_no=round_no, dealer=dealer)
    return log


def card_move(log: Log, variant: str, actor: str, card: str) -> int:
    """A move that puts one card from the actor's hand into play."""
    if variant == "michigan":
        return log.add("CardPlayed", actor, {"card": card})
    return log.discard(actor, card)


def run(log: Log) -> tuple[list[Triple], bool]:
    rec = replay(log.events)
    return findings(rec), rec.halted


every_variant = pytest.mark.parametrize("variant", VARIANTS)


# -- C-TURN ---------------------------------------------------------------------------------------
@every_variant
def test_a_move_by_a_player_not_seated_is_C_TURN(variant: str) -> None:
    log = dealt(variant)
    seq = card_move(log, variant, "zed", "2C")
    assert run(log) == ([(seq, "C-TURN", "violation")], False)


@every_variant
def test_a_move_by_a_player_who_left_is_C_TURN(variant: str) -> None:
    log = dealt(variant)
    log.add("PlayerLeft", "c", {})
    seq = card_move(log, variant, "c", "2C")
    assert run(log) == ([(seq, "C-TURN", "violation")], False)


@every_variant
def test_a_move_after_the_game_ended_by_the_rules_is_C_TURN(variant: str) -> None:
    log = dealt(variant)
    log.add("PlayerLeft", "b", {})
    log.add("PlayerLeft", "c", {})  # one player left: the game is over in every variant
    seq = card_move(log, variant, "a", "2C")
    assert run(log) == ([(seq, "C-TURN", "violation")], False)


@every_variant
def test_player_left_by_someone_not_seated_is_C_TURN(variant: str) -> None:
    log = dealt(variant)
    seq = log.add("PlayerLeft", "zed", {})
    assert run(log) == ([(seq, "C-TURN", "violation")], False)


@every_variant
def test_a_second_player_left_is_no_finding(variant: str) -> None:
    log = dealt(variant)
    log.add("PlayerLeft", "c", {})
    log.add("PlayerLeft", "c", {})
    assert run(log) == ([], False)


# -- C-HOLD ---------------------------------------------------------------------------------------
@every_variant
def test_a_card_that_is_not_there_halts_with_C_HOLD_integrity(variant: str) -> None:
    """b (first to act: left of the dealer) plays AS, which the unshuffled deal does not give
    him (Michigan: it is in the widow). Rule findings of the same move may come first
    (r500 and Liverpool: no draw before the discard); the last is the C-HOLD halt."""
    log = dealt(variant)
    seq = card_move(log, variant, "b", "AS")
    log.add("PlayerLeft", "c", {})  # not folded: the replay has halted
    found, halted = run(log)
    assert found[-1] == (seq, "C-HOLD", "integrity") and halted
    assert [f for f in found if f[2] == "integrity"] == [(seq, "C-HOLD", "integrity")]


# -- C-DEAL ---------------------------------------------------------------------------------------
@every_variant
def test_a_deck_that_is_not_the_variants_deck_is_C_DEAL(variant: str) -> None:
    """fixed (Michigan). A card twice, another missing: C-DEAL violation at the deal in all
    four. Exception (§4 MI-DEAL, every card dealt to one owner): Michigan cannot follow
    such a deal and halts after it, as every variant does for a deck too short to deal."""
    deck = deck_of(variant)
    deck[-1] = deck[0]
    found, halted = run(dealt(variant, deck=deck))
    assert found[0] == (1, "C-DEAL", "violation")
    if variant == "michigan":
        assert found == [(1, "C-DEAL", "violation"), (1, "MI-DEAL", "integrity")] and halted
    else:
        assert found == [(1, "C-DEAL", "violation")] and not halted


@every_variant
def test_a_short_deck_is_C_DEAL_then_a_halt(variant: str) -> None:
    found, halted = run(dealt(variant, deck=deck_of(variant)[:12]))
    assert found == [(1, "C-DEAL", "violation"), (1, DEAL_HALT[variant], "integrity")]
    assert halted


@every_variant
def test_a_wrong_round_number_is_a_C_CLAIM_discrepancy(variant: str) -> None:
    """fixed (Liverpool: C-DEAL violation; Michigan: MI-END violation). The round number
    is the platform's claim; the replay recomputes it (§0 C-CLAIM, §5 discrepancy)."""
    log = dealt(variant, round_no=2)
    log.add("PlayerLeft", "c", {})
    rec = replay(log.events)
    assert (findings(rec), rec.halted) == ([(1, "C-CLAIM", "discrepancy")], False)
    assert "claims" in rec.findings[0].message and "2" in rec.findings[0].message


@every_variant
def test_a_wrong_dealer_is_a_deal_violation(variant: str) -> None:
    """The platform dealt from another seat (the hands follow it): a violation of the deal,
    C-DEAL. Exception: §4 puts the dealer's rotation in MI-END ("the dealer moves left
    each deal"), so Michigan names MI-END."""
    rule = "MI-END" if variant == "michigan" else "C-DEAL"
    assert run(dealt(variant, dealer=1)) == ([(1, rule, "violation")], False)


# -- C-RESTOCK ------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["classic", "liverpool"])
def test_a_restock_that_breaks_the_rule_is_C_RESTOCK(variant: str) -> None:
    """The draw-and-discard variants that restock share the rule (§0). r500 never restocks
    (§2 R5-END decision) and Michigan has no stock (LOG-EVENT), checked below."""
    log = dealt(variant)
    seq = log.sys("StockReplenished", {"stock": []})
    assert run(log) == ([(seq, "C-RESTOCK", "violation")], False)


def test_a_restock_in_r500_and_michigan_follows_their_sections() -> None:
    r500 = dealt("r500")
    seq = r500.sys("StockReplenished", {"stock": []})
    assert run(r500)[0][0] == (seq, "R5-END", "violation")
    mich = dealt("michigan")
    seq = mich.sys("StockReplenished", {"stock": []})
    assert run(mich) == ([(seq, "LOG-EVENT", "integrity")], False)


# -- C-CLAIM --------------------------------------------------------------------------------------
@every_variant
def test_round_ended_before_the_round_ended_is_C_CLAIM_at_its_seq(variant: str) -> None:
    log = dealt(variant)
    seq = log.sys("RoundEnded", {"round": 1, "winners": ["a"], "scores": {}})
    assert run(log) == ([(seq, "C-CLAIM", "discrepancy")], False)


@every_variant
def test_game_ended_claims_are_C_CLAIM_at_its_seq(variant: str) -> None:
    """Not over, wrong winners, wrong net: three discrepancies at GameEnded."""
    log = dealt(variant)
    seq = log.sys("GameEnded", {"winners": ["a"], "net": {"a": 5}})
    assert run(log) == ([(seq, "C-CLAIM", "discrepancy")] * 3, False)


@every_variant
def test_a_transfer_not_due_is_C_CLAIM_at_its_event(variant: str) -> None:
    log = dealt(variant)
    seq = log.sys("ChipsTransferred", {"transfers": [
        {"from": "a", "to": "b", "amount": 7, "reason": "payout"}]})
    log.add("PlayerLeft", "c", {})
    assert run(log) == ([(seq, "C-CLAIM", "discrepancy")], False)


@every_variant
def test_a_transfer_due_but_not_logged_is_C_CLAIM_at_game_ended(variant: str) -> None:
    """The log claims one of the due transfers (stakes, antes), then ends the game when
    two players have left: the others are missing, reported at GameEnded."""
    log = dealt(variant)
    log.add("PlayerLeft", "b", {})
    log.add("PlayerLeft", "c", {})
    rec = replay(log.events)
    first = rec.transfers[0]
    log.sys("ChipsTransferred", {"transfers": [
        {"from": first.src, "to": first.dst, "amount": first.amount, "reason": first.reason}]})
    end = log.sys("GameEnded", {"winners": rec.results.winners, "net": rec.results.net})
    rec = replay(log.events)
    assert len(rec.transfers) > 1
    assert (findings(rec), rec.halted) == ([(end, "C-CLAIM", "discrepancy")], False)
    assert "due but not claimed" in rec.findings[0].message


# -- PlayerRemoved claims -------------------------------------------------------------------------
@every_variant
def test_a_removal_of_someone_not_seated_is_C_CLAIM(variant: str) -> None:
    """fixed (classic halted with C-HOLD)."""
    log = dealt(variant)
    seq = log.sys("PlayerRemoved", {"player": "zed", "reason": "strikes"})
    log.add("PlayerLeft", "c", {})
    assert run(log) == ([(seq, "C-CLAIM", "discrepancy")], False)


@every_variant
def test_left_removals_confirming_a_leave_are_no_finding(variant: str) -> None:
    log = dealt(variant)
    log.add("PlayerLeft", "c", {})
    log.sys("PlayerRemoved", {"player": "c", "reason": "left"})
    log.sys("PlayerRemoved", {"player": "c", "reason": "left"})
    assert run(log) == ([], False)


@every_variant
def test_a_removal_of_someone_already_out_for_another_reason_is_C_CLAIM(variant: str) -> None:
    log = dealt(variant)
    log.add("PlayerLeft", "c", {})
    seq = log.sys("PlayerRemoved", {"player": "c", "reason": "strikes"})
    assert run(log) == ([(seq, "C-CLAIM", "discrepancy")], False)


@every_variant
def test_a_bust_removal_of_a_player_still_in_is_C_CLAIM(variant: str) -> None:
    log = dealt(variant)
    seq = log.sys("PlayerRemoved", {"player": "c", "reason": "bust"})
    assert run(log) == ([(seq, "C-CLAIM", "discrepancy")], False)


@every_variant
def test_a_left_removal_of_a_player_who_did_not_leave(variant: str) -> None:
    """C-CLAIM, except in classic, whose section has the removal rule (§1 CL-LEAVE: who
    leaves is removed); the other variants have none, so §0 C-CLAIM applies."""
    log = dealt(variant)
    seq = log.sys("PlayerRemoved", {"player": "c", "reason": "left"})
    want = ("CL-LEAVE", "violation") if variant == "classic" else ("C-CLAIM", "discrepancy")
    assert run(log) == ([(seq, *want)], False)


# -- LOG-EVENT ------------------------------------------------------------------------------------
OTHER_VARIANTS_EVENT: dict[str, Callable[[Log], int]] = {
    "classic": lambda log: log.add("Bought", "b", {"discard": "2C", "penalty": "3C"}),
    "r500": lambda log: log.add("FreshPressed", "b", {}),
    "liverpool": lambda log: log.add("CardPlayed", "b", {"card": "2C"}),
    "michigan": lambda log: log.draw("b", "stock", "2C"),
}


@every_variant
def test_an_event_of_another_variant_is_LOG_EVENT_integrity_and_skipped(variant: str) -> None:
    log = dealt(variant)
    seq = OTHER_VARIANTS_EVENT[variant](log)
    log.add("PlayerLeft", "c", {})
    assert run(log) == ([(seq, "LOG-EVENT", "integrity")], False)


# -- the four outputs side by side ----------------------------------------------------------------
def _same_everywhere(build: Callable[[str], Log]) -> dict[str, Any]:
    return {v: run(build(v)) for v in VARIANTS}


def test_shared_situations_give_identical_outputs_in_all_four() -> None:
    """The situations with no variant exception, compared output for output."""
    situations: list[Callable[[str], Log]] = [
        lambda v: dealt(v, round_no=3),
        lambda v: _then(dealt(v), lambda log: log.sys(
            "PlayerRemoved", {"player": "nobody", "reason": "bust"})),
        lambda v: _then(dealt(v), lambda log: log.sys(
            "GameEnded", {"winners": [], "net": {"a": 1}})),
    ]
    for build in situations:
        outputs = _same_everywhere(build)
        assert len({repr(o) for o in outputs.values()}) == 1, outputs


def _then(log: Log, step: Callable[[Log], object]) -> Log:
    step(log)
    return log
