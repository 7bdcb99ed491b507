"""Audit 23: RULES.md §0 (common), §1 (classic) and §5 (findings) sentence by sentence.

Every normative statement of those sections (a "must", a number, a limit, an order, a
default, a condition, an exception, a platform claim we judge), and the parts of EVENTS.md
they lean on, with the test that breaks exactly it and pins rule, kind and ``seq``.
``NEW`` marks a test of this file (the statement was untested, or only its typical case
was); ``xfail`` marks an engine defect (strict: the test fails on the current engine).
Files: cr = test_classic_rules, ac = test_audit_classic, a2 = test_audit2_classic,
a3 = test_audit3_consistency, a9 = test_audit9_corners, a11 = test_audit11_config,
a17 = test_audit17_gaps, cv = test_config_variants, ec = test_engine_claims,
a7 = test_audit7_classic_r500, a6 = test_audit6_classic_r500, a8 = test_audit8_log,
cd = test_corners_diff (generated one-fault logs of corners_kit), ev = test_audit_events.

§0 Common
  0.1  ranks 2..A, suits C D H S, JK -> test_cards, ev (legacy cards)
  0.2  several decks: indistinguishable copies, hands are multisets -> cr
       test_CL_NODISCARD_TAKEN_allows_another_copy_of_the_same_code
  0.3  seats 0..n-1 in GameCreated.seats order; "left of" = next seat, wrapping -> ac
       test_CL_DEAL_circuits_with_three_players; wrap at the last seat with 6 players:
       NEW test_CL_DEAL_six_players_circuits_from_left_of_the_dealer
  0.4  dealer of round 1 = GameCreated.dealer; another RoundStarted.dealer -> cr
       test_C_DEAL_wrong_dealer_in_round_started; a redeal that moves it -> cd
       (redeal_moved_dealer)
  0.5  RoundStarted.deck is the full shuffled deck, top first; another multiset is C-DEAL
       -> cr test_C_DEAL_deck_is_not_the_variant_deck, cv test_classic_deck_from_config
  0.6  dealing from the top, one card at a time, from left of the dealer -> cr
       test_CL_DEAL_first_player_gets_15_in_circuits, NEW six players
  0.7  a replay never calls a random generator / same log same result -> cr
       test_chained_copy_is_clean_and_replays_byte_identically
  0.8  C-TURN: a move by a player not entitled is a violation -> cr test_C_TURN_*, a3;
       a removed player's Fresh is not a move: no finding, no vote -> cd (fresh_by_removed,
       clean), test_audit41 test_CL_FRESH_a_press_by_a_player_who_left_*
  0.9  C-TURN: system events are never out of turn -> ac
       test_CL_RESULT_round_started_after_the_game_ended_is_not_C_TURN
  0.10 C-HOLD: a card taken from the hand / stock top / pile must be there, else an
       integrity halt -> cr test_C_HOLD_*, ac test_C_HOLD_restock_*, a3; by an auto-play:
       NEW test_autoplay_*_is_C_HOLD_only (xfail: engine bug 1) and
       NEW test_autoplay_breaches_that_do_not_depend_on_the_cards_stay_with_the_halt
  0.11 C-RUN: one suit, consecutive; ace low or high, never both; no wrap -> cr
       test_C_RUN_*, ac; ace both ends of a two-deck 14-card run: NEW
       test_C_RUN_ace_low_and_high_in_one_two_deck_run
  0.12 C-SET: one rank -> cr test_C_SET_mixed_ranks
  0.13 C-WILD: a wild stands for one card fixed by its position; ``as`` at an end; a low
       wild stands below only when the high end is A -> cr test_C_WILD_*, ac test_C_WILD_*
  0.14 C-RESTOCK: the pile but its top becomes the stock, in the event's order -> ac
       test_C_RESTOCK_*, cr test_C_RESTOCK_replenished_while_stock_remains, cd
  0.15 C-CLAIM: scores, payouts, removals, auto-plays recomputed; a difference is a
       discrepancy with both values -> cr test_C_CLAIM_*, a2, a3; the strike count of an
       AutoPlayed: NEW test_C_CLAIM_auto_play_strike_count_is_a_claim
  0.16 a claim not logged is not a finding -> a6 test_a_game_without_any_chips_transferred_*
  0.17 ChipsTransferred: all transfers together = the computed multiset; first differing
       event, or GameEnded for a missing one -> cr, a2
       test_wrong_payout_split_over_events_is_one_finding_at_the_first_wrong_event,
       test_missing_doubled_stakes_are_reported_at_game_ended_only
  0.18 GameEnded.net player by player -> cr, a2 test_fix_game_ended_net_may_name_the_house_*
  0.19 chips are integers, no rounding unless a rule names it -> ac
       test_CL_RUMMY_rake_is_floored_and_net_follows_CL_RESULT

§1 Classic
  1.1  players 2-6 (LOG-GAME otherwise) -> NEW test_classic_seats_two_to_six
  1.2  deck 2 x 52 + 4 jokers by default; config decks, jokers -> cv
       test_classic_deck_from_config, a11 test_classic_deck_counts_out_of_range_*
  1.3  CL-DEAL: first player 15, others 14, 14 circuits then his 15th, next card up, rest
       stock -> cr, ac (3 players); NEW six players, dealer last seat and dealer mid-table
  1.4  CL-DEAL: a deck too short to deal halts -> cr test_CL_DEAL_deck_too_short_halts,
       cv test_classic_deck_too_small_for_the_table_halts; the config too small for the
       table (gap a): NEW test_gap_a_one_deck_no_jokers_for_six_players_halts_at_the_deal
  1.5  CL-FIRST: the first player may not draw on his first turn -> cr
       test_CL_FIRST_first_player_may_not_draw; in a redeal: NEW
       test_CL_FIRST_holds_again_after_a_fresh_redeal; for the seat that became first
       after a leave: NEW test_CL_FIRST_binds_the_seat_that_is_first_after_a_leave
  1.6  CL-DRAW: every later turn starts with one draw (stock top or pile top) -> cr
       test_CL_DRAW_*; two stock cards in one draw: NEW
       test_CL_DRAW_two_stock_cards_in_one_draw
  1.7  CL-NODISCARD-TAKEN -> cr test_CL_NODISCARD_TAKEN*; the discard of a declaration:
       NEW test_CL_NODISCARD_TAKEN_binds_the_discard_of_a_declaration
  1.8  CL-NODISCARD-JOKER -> cr, ac; the discard of a declaration: NEW
       test_CL_NODISCARD_JOKER_binds_the_discard_of_a_declaration
  1.9  CL-DISCARD: exactly one discard -> cr test_CL_DISCARD_*
  1.10 CL-MELDS: runs >= 3; sets 3-4, distinct suits; jokers wild in both -> cr
       test_CL_MELDS_*; set sizes with a joker (4 ok, 5 not): NEW
       test_CL_MELDS_a_set_with_a_joker_is_three_or_four_cards
  1.11 CL-LONGRUN: a run of >= 4 (exactly 4 passes, 3 fails); config
       long_run_allows_joker default true -> cr, ac, cv
  1.12 CL-RUMMY: in his turn after his draw; first player on his first turn without one
       -> cr test_CL_RUMMY_*; by the second player, non-default rules: NEW
       test_CL_RUMMY_second_player_declares_under_house_rules
  1.13 CL-RUMMY: the 15 minus one discard partitioned into melds covering all 14; an
       invalid declaration is a violation -> cr test_CL_RUMMY_melds_do_not_cover_the_hand
  1.14 CL-RUMMY: rake = floor(pot x rake_bps / 10000) to house, default 0 -> cr, ac, cv
       test_classic_rake (0..10000), a11 (out of range LOG-RULES)
  1.15 CL-POT: each player stakes at GameCreated -> cr
       test_CL_POT_wrong_stake_claim_is_a_C_CLAIM_discrepancy
  1.16 CL-FRESH: any player, any moment of a round, in turn or not -> a2, a9
       test_a_fresh_press_after_the_deadline_is_not_a_late_move; outside a round -> a9
       and NEW test_CL_FRESH_pressed_before_the_deal
  1.17 CL-FRESH: every active player in the same round -> redeal, same first player; the
       first doubles the stakes, later ones only redeal; votes cleared -> cr, a2, ac;
       with six players and a rake: NEW test_CL_FRESH_six_players_with_a_rake
  1.18 CL-FRESH: redeal number, redeal without unanimity, a move instead of the redeal
       -> cr, a9 test_redeal_number_is_the_count_of_unanimous_fresh, a2
  1.19 CL-TIMER: base 60 s (first turn of the round) / 30 s, extra 60 s; the deadline is
       inclusive -> cr, ac test_CL_TIMER_first_turn_deadline_is_inclusive, a9
  1.20 CL-TIMER: turn start = ts of the discard / declaration / auto-play / removal that
       ended the previous turn, or RoundStarted -> cr (discard), cr strikes_game
       (auto-play), a2 (leave); removal for strikes with play going on: NEW
       test_CL_STRIKES_play_goes_on_and_the_next_clock_starts_at_the_removal; clocks
       across midnight and a year end (EVENTS.md ts): NEW
       test_CL_TIMER_clock_across_midnight_at_the_year_end
  1.21 CL-TIMER: every late move of the player in turn -> a7
  1.22 CL-AUTOPLAY: draw and discard the drawn card; a joker: the highest non-joker
       (ranks, then C < D < H < S); first turn: no draw -> cr test_CL_AUTOPLAY_*, a9, a17
  1.23 CL-AUTOPLAY: earlier than the clocks, or other cards -> violation -> cr, ac, a9, cd
  1.24 CL-STRIKES: timeouts 1-3 auto-played, the 4th removes, stake lost, cards leave
       play -> cr test_CL_STRIKES_*, a2 (across a redeal); with three players play goes
       on with the next player: NEW (above); the 4th auto-played (cr's log for it halts
       on C-HOLD: its auto-play draws deck[32], not the stock top): NEW
       test_CL_STRIKES_fourth_timeout_auto_played_is_CL_STRIKES_only; a removal at a
       later timeout: NEW test_CL_STRIKES_removal_after_a_fourth_auto_play_is_not_a_second_breach
       (xfail: engine bug 2), NEW test_CL_STRIKES_removal_before_the_clocks_ran_out_after_a_fourth_auto_play
  1.25 CL-STRIKES: one active player left wins the pot at once -> cr
       test_CL_STRIKES_fourth_timeout_removes_and_last_player_wins
  1.26 CL-LEAVE: removed at once, forfeits his stake; his turn: the next starts then ->
       cr test_CL_LEAVE_*, ac, a2; the player in turn leaves after his draw: NEW
       test_CL_LEAVE_in_turn_after_the_draw_the_next_turn_starts_at_the_leave
  1.27 CL-RESULT: one round; winners; net = pot - rake - own stakes; RoundEnded.scores {}
       -> cr test_CL_RESULT_*, a2 test_fix_a_redeal_is_still_round_1
  1.28 CL-NEXT -> cr test_CL_NEXT_previous_winner_must_start, a2

§5 Findings
  5.1  {seq, rule, kind, message}; kinds violation / discrepancy / integrity -> every test
  5.2  integrity: hash chain, sequence gap, duplicate, unknown event of the variant, a
       card not where the event says -> cr test_LOG_*, a8 (event ids), cr C-HOLD
  5.3  a violation is recorded and play goes on; a break the state cannot follow halts ->
       cr (every violation test replays on), cr C-HOLD tests (halted)
  5.4  clean = no findings; the same log gives the same result -> cr
  5.5  results: winners, net, scores ({} for classic) -> cr, a2

EVENTS.md relied on
  E.1  GameCreated.rules: missing keys take the defaults; null = default; a bad key or
       value -> LOG-RULES (project id) -> cr test_LOG_RULES_unknown_config_key, ec
       test_null_rules_value_takes_the_default, cv test_log_rules
  E.2  RoundStarted.round 1-based, redeal 0 or n -> a2, a9
  E.3  AutoPlayed.drew null on a turn with no draw; strike 1-based count -> a17, NEW
  E.4  PlayerRemoved.reason strikes / left / bust -> a3, ac
  E.5  Drew.cards deepest first, one for the stock -> cr, NEW two stock cards
  E.6  ts RFC 3339 UTC with milliseconds: the clocks -> ac, NEW across the year end
  E.7  PlayerConnected / PlayerDisconnected / PlayerLeft / FreshPressed at any moment;
       the rest are moves made in turn -> a2, a9; an account not seated (gap b): NEW
       test_gap_b_connection_events_of_an_account_not_seated_are_no_finding
  E.8  seq contiguous from 0; prev_hash 64 zeros at seq 0 -> cr test_LOG_SEQ_*, test_hashing

Count: 60 statements (0.1-0.19, 1.1-1.28, 5.1-5.5, E.1-E.8; several with sub-clauses).
22 of them get a NEW test here: untested before (1.1 the seat limits, E.7 / gap b, 0.10 on
an auto-play, 1.24 a removal after a fourth auto-play, E.3's strike count outside the
generated faults) or tested in their typical case only (the others). Engine defects: 2
(auto-play C-HOLD reported with CL-AUTOPLAY; a removal after a fourth auto-play reported
as a second CL-STRIKES); proposed fixes /tmp/s9_a/fix_1.diff, fix_2.diff (+ the results
oracle's twin, fix_2_oracle.diff). Results as ``verify --json`` prints them: NEW
test_verify_json_prints_the_replayed_results_of_these_corners.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from logkit import Log, findings, stacked_deck
from test_classic_rules import (
    DECK,
    P1_HAND,
    P2_HAND,
    STOCK_TOP,
    UP,
    WIN_MELDS,
    autoplay,
    opening,
    strikes_game,
)

from rummyguard.events.cards import JOKER, format_cards, parse_cards, standard_deck
from rummyguard.events.timestamps import ts_millis
from rummyguard.replay.engine import replay, state_at
from rummyguard.replay.verify import verify_files

P3_HAND = ["AC", "2H", "3C", "4C", "5S", "6C", "7S", "8H", "TS", "JS", "KS", "4S", "6H", "7D"]
SIX = ["p1", "p2", "p3", "p4", "p5", "p6"]


def three(**created: object) -> Log:
    """p1 (seat 0) first, dealer p3 (seat 2); stock top AH 2D JK QC QH."""
    log = Log()
    log.created("classic", ["p1", "p2", "p3"], dealer=2, **created)  # type: ignore[arg-type]
    log.round(stacked_deck([P1_HAND, P2_HAND, P3_HAND], UP, STOCK_TOP), dealer=2)
    return log


def stock_top(log: Log) -> str:
    """The stock's top card after the last event of ``log``."""
    return state_at(log.events, len(log.events) - 1)["stock"][0]


def six_hands() -> list[list[str]]:
    """P1_HAND for the first player and five 14-card hands of the other cards (no joker,
    none of UP or STOCK_TOP), in deal order."""
    used = [c for c in parse_cards([*P1_HAND, UP, *STOCK_TOP]) if c != JOKER]
    left = sorted(standard_deck(2, 0))
    for c in used:
        left.remove(c)
    rest = format_cards(left)
    return [P1_HAND] + [rest[i * 14:(i + 1) * 14] for i in range(5)]


# == §1 players, deal ==========================================================================


@pytest.mark.parametrize(("n", "flagged"), [(1, True), (2, False), (6, False), (7, True)])
def test_classic_seats_two_to_six(n: int, flagged: bool) -> None:
    """RULES.md §1 "Players 2-6 (decided)": a table outside it is a LOG-GAME integrity
    finding at GameCreated (seq 0; the replay goes on), the limits themselves are clean."""
    log = Log()
    log.created("classic", [f"p{i + 1}" for i in range(n)], dealer=0)
    assert findings(replay(log.events)) == ([(0, "LOG-GAME", "integrity")] if flagged else [])


@pytest.mark.parametrize("dealer", [5, 2])
def test_CL_DEAL_six_players_circuits_from_left_of_the_dealer(dealer: int) -> None:
    """§0 "left of = next seat, wrapping"; CL-DEAL "14 circuits of one card each starting
    with the first player, then a 15th card to him. The next card is turned face up; the
    rest is stock". Six players, 2 decks + 4 jokers: 85 cards dealt, 1 up, 22 in stock; dealer the last seat (the first player wraps to seat 0) and mid-table."""
    deck = format_cards(standard_deck(2, 4))
    log = Log()
    log.created("classic", SIX, dealer=dealer)
    log.round(deck, dealer=dealer)
    first = (dealer + 1) % 6
    order = [(first + i) % 6 for i in range(6)]
    want: dict[int, list[str]] = {s: [] for s in range(6)}
    pos = 0
    for _ in range(14):
        for s in order:
            want[s].append(deck[pos])
            pos += 1
    want[first].append(deck[pos])
    pos += 1
    snap = state_at(log.events, 1)
    for s in range(6):
        assert sorted(snap["hands"][SIX[s]]) == sorted(want[s]), s
    assert snap["discard_pile"] == [deck[pos]]
    assert snap["stock"] == deck[pos + 1:] and snap["stock_count"] == 22
    assert snap["in_turn"] == SIX[first]
    assert findings(replay(log.events)) == []


def test_gap_a_one_deck_no_jokers_for_six_players_halts_at_the_deal() -> None:
    """Gap (a), decided: CL-DEAL integrity at RoundStarted, not LOG-RULES at GameCreated.

    ``decks: 1, jokers: 0`` with six seats: the deal needs 15 + 5 x 14 + 1 = 86 cards of
    a 52-card deck. Why CL-DEAL at the deal:
    - LOG-RULES is the project's id for "GameCreated.rules holds a key or value the
      variant does not know" (replay/findings.py). Each value here is one RULES.md
      allows on its own (§1 "config decks, jokers": a count of decks >= 1, of jokers
      >= 0); no sentence bounds them by the number of seats, and a rule of ours that did
      would be a reading the spec does not make.
    - The break is the deal: §0 "Dealing takes cards from the top, one at a time"; the
      35th card onwards is not there. §5 integrity: "a card that is not where the event
      says it is", reported at the event that says it (RoundStarted), under the rule that
      deals (CL-DEAL), and the replay halts (the state cannot follow). The deck itself
      is the config's deck, so C-DEAL (deck composition) is not broken.
    - A log cut after GameCreated holds no broken event; it must stay clean.
    - LOG-RULES at GameCreated would not spare the deal its finding: a rejected value
      reads as its default (2 decks, 4 jokers), so the recorded 52-card deck would then
      be C-DEAL and the deal still short: three findings for one fault, not one.
    Results of the halted game: the stakes (CL-POT, at GameCreated) are in the pot, no
    winner."""
    rules = {"decks": 1, "jokers": 0}
    log = Log()
    log.created("classic", SIX, dealer=5, rules=rules)
    assert findings(replay(log.events)) == []
    seq = log.round(format_cards(standard_deck(1, 0)), dealer=5)
    rec = replay(log.events)
    assert findings(rec) == [(seq, "CL-DEAL", "integrity")] and rec.halted
    assert "52 cards; the deal needs 86" in rec.findings[0].message
    assert rec.results.to_dict() == {"winners": [], "net": dict.fromkeys(SIX, -100), "scores": {}}
    # three seats need 15 + 2 x 14 + 1 = 44 cards: the deal is made
    three_seats = Log()
    three_seats.created("classic", SIX[:3], dealer=2, rules=rules)
    three_seats.round(format_cards(standard_deck(1, 0)), dealer=2)
    assert findings(replay(three_seats.events)) == []
    assert state_at(three_seats.events, 1)["stock_count"] == 52 - 44


# == §1 CL-FIRST, CL-DRAW ========================================================================


def test_CL_FIRST_holds_again_after_a_fresh_redeal() -> None:
    """CL-FRESH: the redeal is "a new RoundStarted, same first player"; CL-FIRST: "the
    first player may not draw on the first turn" - the redealt round's first turn too."""
    log = opening()
    log.discard("p1", "2C")
    log.add("FreshPressed", "p1")
    log.add("FreshPressed", "p2")
    log.round(DECK, dealer=1, redeal=1)
    seq = log.draw("p1", "stock", "AH")
    assert findings(replay(log.events)) == [(seq, "CL-FIRST", "violation")]


def test_CL_FIRST_binds_the_seat_that_is_first_after_a_leave() -> None:
    """p1 (left of the dealer) leaves before the deal: p2 is the first player (15 cards)
    and may not draw on his first turn; p3, next, draws as usual."""
    log = Log()
    log.created("classic", ["p1", "p2", "p3"], dealer=2)
    log.add("PlayerLeft", "p1")
    log.round(stacked_deck([P1_HAND, P2_HAND], UP, STOCK_TOP), dealer=2)
    clean = log.events[:]
    seq = log.draw("p2", "stock", "AH")
    assert findings(replay(log.events)) == [(seq, "CL-FIRST", "violation")]
    log.events = clean
    log.discard("p2", "2C")
    log.draw("p3", "stock", "AH")
    log.discard("p3", "AH")
    assert findings(replay(log.events)) == []


def test_CL_DRAW_two_stock_cards_in_one_draw() -> None:
    """CL-DRAW "one draw: the top of the stock"; EVENTS.md Drew.cards "1 for stock": two
    cards off the stock (both where the event says) is one CL-DRAW violation, applied."""
    log = opening()
    log.discard("p1", "2C")
    seq = log.draw("p2", "stock", "AH", "2D")
    rec = replay(log.events)
    assert findings(rec) == [(seq, "CL-DRAW", "violation")] and not rec.halted
    assert state_at(log.events, seq)["hand_counts"]["p2"] == 16


# == §1 discards and declarations ================================================================


def test_CL_NODISCARD_TAKEN_binds_the_discard_of_a_declaration() -> None:
    """CL-NODISCARD-TAKEN: "a card taken from the discard pile may not be discarded in the
    same turn" - the discard of a Rummy declaration too. p1 takes AH from the pile and
    declares with AH as the discard: one violation; the declaration stands (p1 wins)."""
    log = opening()
    log.discard("p1", "2C")
    log.draw("p2", "stock", "AH")
    log.discard("p2", "AH")
    log.draw("p1", "discard", "AH")
    seq = log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "AH"})
    rec = replay(log.events)
    assert findings(rec) == [(seq, "CL-NODISCARD-TAKEN", "violation")]
    assert rec.results.winners == ["p1"]


def test_CL_NODISCARD_JOKER_binds_the_discard_of_a_declaration() -> None:
    """CL-NODISCARD-JOKER: "a joker may never be discarded" - not as the declaration's
    discard either (the first player declares on his first turn)."""
    hand = [*P1_HAND[:-1], "JK"]
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(stacked_deck([hand, P2_HAND], UP, STOCK_TOP), dealer=1)
    seq = log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "JK"})
    rec = replay(log.events)
    assert findings(rec) == [(seq, "CL-NODISCARD-JOKER", "violation")]
    assert rec.results.winners == ["p1"]


def _declare_first_turn(melds: list[dict[str, object]], hand: list[str], discard: str,
                        stock: tuple[str, ...] = tuple(STOCK_TOP)) -> tuple[Log, int]:
    """p1 (first player, ``hand``) declares on his first turn (no draw)."""
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    log.round(stacked_deck([hand, P2_HAND], UP, list(stock)), dealer=1)
    seq = log.add("DeclaredRummy", "p1", {"melds": melds, "discard": discard})
    return log, seq


def test_C_RUN_ace_low_and_high_in_one_two_deck_run() -> None:
    """§0 C-RUN: "Ace is low (A23) or high (QKA) but never both". Two decks hold two AH:
    a 14-card run AH 2H ... KH AH covers the hand (and is a long run) but uses the ace at
    both ends: C-RUN, and nothing else."""
    run = ["AH", "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH", "AH"]
    log, seq = _declare_first_turn([{"kind": "run", "cards": run}], [*run, "2C"], "2C", stock=())
    rec = replay(log.events)
    assert findings(rec) == [(seq, "C-RUN", "violation")]
    assert "both low and high" in rec.findings[0].message


#: (melds, discard): three kings and a joker (14 cards covered); four kings and a joker
SET_OF_FOUR = ([{"kind": "run", "cards": ["3H", "4H", "5H", "6H"]},
                {"kind": "set", "cards": ["9C", "9D", "9S"]},
                {"kind": "run", "cards": ["TD", "JD", "QD"]},
                {"kind": "set", "cards": ["KC", "KD", "KH", "JK"]}], "2C")
SET_OF_FIVE = ([{"kind": "run", "cards": ["3H", "4H", "5H", "6H", "7H", "8H"]},
                {"kind": "set", "cards": ["9C", "9D", "9S"]},
                {"kind": "set", "cards": ["KC", "KD", "KH", "KS", "JK"]}], "2C")


@pytest.mark.parametrize(("declared", "bad"), [(SET_OF_FOUR, False), (SET_OF_FIVE, True)],
                         ids=["four", "five"])
def test_CL_MELDS_a_set_with_a_joker_is_three_or_four_cards(
        declared: tuple[list[dict[str, object]], str], bad: bool) -> None:
    """CL-MELDS: "sets (3-4 cards, one rank, all suits different) ... Jokers are wild in
    both": three kings and a joker are a set; four kings and a joker are five cards, one
    CL-MELDS violation (the declaration still covers 14 cards with a long run)."""
    melds, discard = declared
    hand = [c for m in melds for c in m["cards"]] + [discard]  # type: ignore[attr-defined]
    assert len(hand) == 15
    log, seq = _declare_first_turn(melds, hand, discard)
    assert findings(replay(log.events)) == ([(seq, "CL-MELDS", "violation")] if bad else [])


def test_CL_RUMMY_second_player_declares_under_house_rules() -> None:
    """CL-RUMMY for the second player ("in his turn after his draw"), under non-default
    rules: one deck, no jokers, rake 250 bps, three players. p1 opens (discards 2C), p2
    draws 8H from the stock and declares AS-4S, 8C 8D 8S 8H, 5C-7C, QS QH QC with 2D as
    the discard. Pot 300, rake floor(300 x 250 / 10000) = 7 to ``house``, 293 to p2:
    net p2 = 293 - 100 = 193, p1 and p3 -100 (CL-RESULT)."""
    p2 = ["AS", "2S", "3S", "4S", "8C", "8D", "8S", "5C", "6C", "7C", "QS", "QH", "QC", "2D"]
    p3 = ["AC", "2H", "3C", "4C", "5S", "6D", "7S", "JS", "KS", "4D", "6S", "7D", "9H", "TH"]
    deck = stacked_deck([P1_HAND, p2, p3], "TC", ["8H"], decks=1, jokers=0)
    log = Log()
    log.created("classic", ["p1", "p2", "p3"], dealer=2,
                rules={"decks": 1, "jokers": 0, "rake_bps": 250})
    log.round(deck, dealer=2)
    log.discard("p1", "2C")
    log.draw("p2", "stock", "8H")
    log.add("DeclaredRummy", "p2", {"melds": [
        {"kind": "run", "cards": ["AS", "2S", "3S", "4S"]},
        {"kind": "set", "cards": ["8C", "8D", "8S", "8H"]},
        {"kind": "run", "cards": ["5C", "6C", "7C"]},
        {"kind": "set", "cards": ["QS", "QH", "QC"]}], "discard": "2D"})
    log.sys("ChipsTransferred", {"transfers": [
        *({"from": p, "to": "pot", "amount": 100, "reason": "stake"} for p in ("p1", "p2", "p3")),
        {"from": "pot", "to": "house", "amount": 7, "reason": "rake"},
        {"from": "pot", "to": "p2", "amount": 293, "reason": "pot"}]})
    log.sys("RoundEnded", {"round": 1, "winners": ["p2"], "scores": {}})
    log.sys("GameEnded", {"winners": ["p2"], "net": {"p1": -100, "p2": 193, "p3": -100}})
    rec = replay(log.events)
    assert findings(rec) == [] and not rec.halted
    assert rec.results.to_dict() == {"winners": ["p2"], "net": {"p1": -100, "p2": 193, "p3": -100},
                                     "scores": {}}


# == §1 CL-FRESH =================================================================================


def test_CL_FRESH_pressed_before_the_deal() -> None:
    """CL-FRESH: "any player may press Fresh at any moment of a round": before the first
    deal there is no round (classic module decision: CL-FRESH, no vote counted). The deal
    after it is the ordinary deal (redeal 0): no finding."""
    log = Log()
    log.created("classic", ["p1", "p2"], dealer=1)
    seq = log.add("FreshPressed", "p1")
    log.round(DECK, dealer=1)
    log.add("FreshPressed", "p2")  # one vote of two: no redeal due
    log.discard("p1", "2C")
    assert findings(replay(log.events)) == [(seq, "CL-FRESH", "violation")]


def test_CL_FRESH_six_players_with_a_rake() -> None:
    """CL-FRESH with six players, pressed in any order (the player in turn among them):
    the sixth press makes it unanimous, every player stakes again (pot 600 -> 1200), the
    redeal keeps p1 first; p1 declares on his first turn. Rake 100 bps: 12 to ``house``,
    1188 to p1: net p1 = 1188 - 200 = 988, everyone else -200."""
    hands = six_hands()
    deck = stacked_deck(hands, UP, STOCK_TOP)
    log = Log()
    log.created("classic", SIX, dealer=5, rules={"rake_bps": 100})
    log.round(deck, dealer=5)
    for p in ("p3", "p1", "p6", "p2", "p5"):
        log.add("FreshPressed", p)
    last = log.add("FreshPressed", "p4")
    assert state_at(log.events, last)["pots"] == {"pot": 1200}
    redeal = log.round(deck, dealer=5, redeal=1)
    assert state_at(log.events, redeal)["in_turn"] == "p1"
    log.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2C"})
    rec = replay(log.events)
    assert findings(rec) == []
    net = dict.fromkeys(SIX, -200)
    net["p1"] = 988
    assert rec.results.to_dict() == {"winners": ["p1"], "net": net, "scores": {}}
    assert ("pot", "house", 12) in [t.key() for t in rec.transfers]


# == §1 CL-TIMER, CL-STRIKES, CL-LEAVE ===========================================================


def _strikes_three(last_dt: float) -> tuple[Log, int, int]:
    """p2 is auto-played three times, then removed at his fourth timeout; p3 moves next,
    ``last_dt`` seconds after the removal (his later turn: 30 s + 60 s)."""
    log = three()
    log.discard("p1", "2C")
    autoplay(log, "p2", "AH", "AH", 1, dt=120)
    log.draw("p3", "stock", "2D")
    log.discard("p3", "2D")
    log.draw("p1", "stock", "JK")
    log.discard("p1", "KH")
    autoplay(log, "p2", "QC", "QC", 2, dt=90)
    log.draw("p3", "stock", "QH")
    log.discard("p3", "QH")
    log.draw("p1", "discard", "QH")
    log.discard("p1", "9S")
    top = stock_top(log)
    autoplay(log, "p2", top, top, 3, dt=90)
    for p in ("p3", "p1"):
        top = stock_top(log)
        log.draw(p, "stock", top)
        log.discard(p, top)
    removed = log.sys("PlayerRemoved", {"player": "p2", "reason": "strikes"}, dt=90)
    move = log.draw("p3", "stock", stock_top(log), dt=last_dt)
    return log, removed, move


@pytest.mark.parametrize(("dt", "late"), [(90.0, False), (90.001, True)])
def test_CL_STRIKES_play_goes_on_and_the_next_clock_starts_at_the_removal(dt: float,
                                                                          late: bool) -> None:
    """CL-STRIKES "at the fourth he is removed instead ... Otherwise play goes on with the
    next player"; CL-TIMER "the turn starts at the ts of the event that ended the previous
    turn (... a removal)". With three players p2's removal passes the turn to p3, whose
    clock starts at the removal: 90 s is on time, 90.001 s late. p2's cards leave play,
    his stake stays in the pot (no winner yet)."""
    log, removed, move = _strikes_three(dt)
    rec = replay(log.events)
    assert findings(rec) == ([(move, "CL-TIMER", "violation")] if late else [])
    snap = state_at(log.events, removed)
    assert snap["in_turn"] == "p3" and snap["active"] == ["p1", "p3"]
    assert snap["hand_counts"]["p2"] == 0 and snap["strikes"] == {"p2": 3}
    assert not snap["over"] and snap["pots"] == {"pot": 300}


def _fourth_timeout_auto_played() -> tuple[Log, int]:
    """test_classic_rules.strikes_game up to p2's fourth timeout, auto-played with the
    cards CL-AUTOPLAY gives (the stock top drawn and discarded). strikes_game("autoplay")
    logs deck[32], which is not the stock top: that log halts with C-HOLD."""
    log, _ = strikes_game("remove")
    log.events.pop()  # the removal
    top = stock_top(log)
    seq = autoplay(log, "p2", top, top, 4, dt=90)
    return log, seq


def test_CL_STRIKES_fourth_timeout_auto_played_is_CL_STRIKES_only() -> None:
    """CL-STRIKES "at the fourth he is removed instead": the fourth auto-play, on time
    and with the rule's cards, is one CL-STRIKES violation (its strike count 4 is the
    true count: no C-CLAIM); play goes on as the platform applied it."""
    log, seq = _fourth_timeout_auto_played()
    rec = replay(log.events)
    assert findings(rec) == [(seq, "CL-STRIKES", "violation")] and not rec.halted
    assert state_at(log.events, seq)["strikes"] == {"p2": 4}


def test_CL_STRIKES_removal_after_a_fourth_auto_play_is_not_a_second_breach() -> None:
    """CL-STRIKES: "a player's first three timeouts in a game are auto-played (strikes
    1-3); at the fourth he is removed instead". The platform auto-played p2's fourth
    timeout (the violation, reported there) and removes him at the fifth, in his turn,
    with both clocks run out. From the fourth timeout on, removal is what the rule does
    with a timeout; the removal is that rule applied, late, and the lateness is the
    breach already reported. The engine reports it again ("he had 4 auto-plays, not
    3"), as if a removal needed exactly three. The game then ends: p1 is the last
    player standing and takes the pot (net 100 / -100)."""
    log, fourth = _fourth_timeout_auto_played()
    top = stock_top(log)
    log.draw("p1", "stock", top)
    log.discard("p1", top)
    log.sys("PlayerRemoved", {"player": "p2", "reason": "strikes"}, dt=90)
    rec = replay(log.events)
    assert rec.results.to_dict() == {"winners": ["p1"], "net": {"p1": 100, "p2": -100}, "scores": {}}
    assert findings(rec) == [(fourth, "CL-STRIKES", "violation")]


def test_CL_STRIKES_removal_before_the_clocks_ran_out_after_a_fourth_auto_play() -> None:
    """The removal after a fourth auto-play is still judged on the turn and the clocks
    (CL-STRIKES with CL-TIMER: a timeout is both clocks run out): 1 ms early is a
    violation, before and after the fix."""
    log, fourth = _fourth_timeout_auto_played()
    top = stock_top(log)
    log.draw("p1", "stock", top)
    log.discard("p1", top)
    seq = log.sys("PlayerRemoved", {"player": "p2", "reason": "strikes"}, dt=89.999)
    assert findings(replay(log.events)) == [(fourth, "CL-STRIKES", "violation"),
                                            (seq, "CL-STRIKES", "violation")]


def test_C_CLAIM_auto_play_strike_count_is_a_claim() -> None:
    """EVENTS.md AutoPlayed.strike is "1-based count of this player's auto-plays"; a wrong
    count is a platform claim that differs (C-CLAIM discrepancy), the play itself stands."""
    log = opening()
    seq = autoplay(log, "p1", None, "KH", 2, dt=120)
    rec = replay(log.events)
    assert findings(rec) == [(seq, "C-CLAIM", "discrepancy")]
    assert "claimed 2, recomputed 1" in rec.findings[0].message


def test_CL_LEAVE_in_turn_after_the_draw_the_next_turn_starts_at_the_leave() -> None:
    """CL-LEAVE: "removed at once and forfeits his stake; if it was his turn, the next turn
    starts then". p2 draws AH and leaves before discarding: his cards (AH too) leave
    play, p3's first turn starts at the leave (60 s + 60 s): his discard 120 s later is
    on time, 1 ms more is late."""
    log = three()
    log.discard("p1", "2C")
    log.draw("p2", "stock", "AH")
    left = log.add("PlayerLeft", "p2", dt=50)
    log.sys("PlayerRemoved", {"player": "p2", "reason": "left"}, dt=10)
    log.draw("p3", "stock", "2D", dt=100)
    log.discard("p3", "2D", dt=10)  # 120 s after the leave: the last legal millisecond
    snap = state_at(log.events, left)
    assert snap["in_turn"] == "p3" and snap["hand_counts"]["p2"] == 0
    assert snap["stock_count"] == 108 - 43 - 1 - 1  # dealt, turned up, drawn by p2
    assert findings(replay(log.events)) == []
    late = Log()
    late.events = log.events[:-1]
    late.clock = ts_millis(late.events[-1]["ts"])
    seq = late.discard("p3", "2D", dt=10.001)
    assert findings(replay(late.events)) == [(seq, "CL-TIMER", "violation")]


@pytest.mark.parametrize(("dt", "late"), [(120.0, False), (120.001, True)])
def test_CL_TIMER_clock_across_midnight_at_the_year_end(dt: float, late: bool) -> None:
    """EVENTS.md ts: RFC 3339 UTC with milliseconds; CL-TIMER compares instants, so a
    first turn dealt at 23:59:30.000 on 31 December ends its clocks at 00:01:30.000 on
    1 January (inclusive)."""
    log = Log(start=1_798_761_570_000 - 200)  # RoundStarted at 2026-12-31T23:59:30.000Z
    log.created("classic", ["p1", "p2"], dealer=1)
    deal = log.round(DECK, dealer=1)
    assert log.events[deal]["ts"] == "2026-12-31T23:59:30.000Z"
    seq = log.discard("p1", "2C", dt=dt)
    assert log.events[seq]["ts"].startswith("2027-01-01T00:01:30.00")
    assert findings(replay(log.events)) == ([(seq, "CL-TIMER", "violation")] if late else [])


# == §0 C-HOLD on an auto-play ===================================================================


def test_autoplay_drawing_a_card_not_on_the_stock_is_C_HOLD_only() -> None:
    """§0 C-HOLD: "a card an event takes from somewhere (hand, stock top ...) must be there;
    if not, the log and the state have parted and the replay halts with an integrity
    finding". The auto-play for p2 (on time, strike 1, a draw owed) says it drew QC; the
    stock top is AH. That one fact is the break: a Drew of QC gives C-HOLD alone, and so
    must the auto-play. The engine also reports CL-AUTOPLAY ("the rule gives draw AH"),
    a judgement on cards that are not where the event says (the classic module's own
    decision: C-HOLD comes after the findings of the event that do not depend on it)."""
    log = opening()
    log.discard("p1", "2C")
    seq = autoplay(log, "p2", "QC", "QC", 1, dt=120)
    rec = replay(log.events)
    assert rec.halted
    assert findings(rec) == [(seq, "C-HOLD", "integrity")]


def test_autoplay_discarding_a_card_not_held_is_C_HOLD_only() -> None:
    """As above, for the hand: the auto-play draws the stock top AH (right) and discards
    KS, which p2 does not hold. A Discarded of KS gives C-HOLD alone; the auto-play's
    discard is not judged against CL-AUTOPLAY on a hand the log and the state disagree
    on. The findings that do not depend on the cards (1 ms early, a wrong strike count)
    stay, before the halt."""
    log = opening()
    log.discard("p1", "2C")
    seq = autoplay(log, "p2", "AH", "KS", 1, dt=120)
    rec = replay(log.events)
    assert rec.halted
    assert findings(rec) == [(seq, "C-HOLD", "integrity")]
    # 1 ms early as well: the timing breach does not depend on the cards and stays
    log = opening()
    log.discard("p1", "2C")
    seq = autoplay(log, "p2", "AH", "KS", 1, dt=119.999)
    rec = replay(log.events)
    assert findings(rec) == [(seq, "CL-AUTOPLAY", "violation"), (seq, "C-HOLD", "integrity")]
    assert "before the clocks ran out" in rec.findings[0].message
    # a wrong strike count (a claim) with a discard p1 does not hold: the claim stays
    log = opening()
    seq = autoplay(log, "p1", None, "AS", 2, dt=120)
    rec = replay(log.events)
    assert findings(rec) == [(seq, "C-CLAIM", "discrepancy"), (seq, "C-HOLD", "integrity")]


def test_autoplay_breaches_that_do_not_depend_on_the_cards_stay_with_the_halt() -> None:
    """The findings of the same event that do not depend on where the cards are stay
    (before the C-HOLD halt), before and after the fix: a draw on the first player's
    first turn (no draw is owed, whatever the card) of a card that is not the stock top."""
    log = opening()
    seq = autoplay(log, "p1", "QC", "QC", 1, dt=120)
    rec = replay(log.events)
    assert findings(rec) == [(seq, "CL-AUTOPLAY", "violation"), (seq, "C-HOLD", "integrity")]
    assert "the rule gives draw nothing" in rec.findings[0].message


# == EVENTS.md: connections (gap b) ==============================================================


def test_gap_b_connection_events_of_an_account_not_seated_are_no_finding() -> None:
    """Gap (b), decided: no finding, as today.

    EVENTS.md: "PlayerConnected, PlayerDisconnected, PlayerLeft and FreshPressed may come
    at any moment; the others are moves, made in turn". RULES.md C-TURN judges *moves*
    ("a move by a player who is not entitled to act"); a connection is not a move and
    changes no game state. No sentence of RULES.md or EVENTS.md says who may connect,
    and seed 003 has players who give up and stay at the table as spectators (the end
    window's first button), so an account that is not seated may well be connected.
    §5's integrity list (chain, gap, duplicate, unknown event, misplaced card) does not
    cover it either. PlayerLeft and FreshPressed differ: they act on the game (a seat
    leaves, a vote counts), so from an account not seated they are C-TURN (a3, cr).
    The watcher's sessions still reach the facts (fraud/facts.py ``sessions``), where a
    device shared by a watcher and a seated player is worth seeing."""
    log = opening()
    log.add("PlayerConnected", "watcher", {"ip_hash": "i9", "device_hash": "d9", "client": "web"})
    log.discard("p1", "2C")
    log.add("PlayerDisconnected", "watcher")
    log.draw("p2", "stock", "AH")
    log.discard("p2", "AH")
    rec = replay(log.events)
    assert findings(rec) == [] and not rec.halted
    assert rec.results.to_dict() == {"winners": [], "net": {"p1": -100, "p2": -100}, "scores": {}}
    # the same log without the watcher's events: the same state
    plain = opening()
    plain.discard("p1", "2C")
    plain.draw("p2", "stock", "AH")
    plain.discard("p2", "AH")
    assert state_at(log.events, len(log.events) - 1)["hands"] == \
        state_at(plain.events, len(plain.events) - 1)["hands"]


# == what ``verify --json`` prints ===============================================================


def test_verify_json_prints_the_replayed_results_of_these_corners(tmp_path: Path) -> None:
    """The checkers read ``results`` (winners, net, scores) and the findings from
    ``rummyguard verify --json``: for the six-player Fresh game, the one-deck deal too
    small for six seats (gap a) and the watcher's connections (gap b), the verify form is
    the replay's record, game by game (one file, three games, no cross-game finding:
    three tables)."""
    logs = []
    six = Log("v-six")
    six.created("classic", SIX, dealer=5, rules={"rake_bps": 100})
    deck = stacked_deck(six_hands(), UP, STOCK_TOP)
    six.round(deck, dealer=5)
    for p in ("p3", "p1", "p6", "p2", "p5", "p4"):
        six.add("FreshPressed", p)
    six.round(deck, dealer=5, redeal=1)
    six.add("DeclaredRummy", "p1", {"melds": WIN_MELDS, "discard": "2C"})
    short = Log("v-short")
    short.created("classic", SIX, dealer=5, rules={"decks": 1, "jokers": 0})
    short.round(format_cards(standard_deck(1, 0)), dealer=5)
    watched = Log("v-watched")
    watched.created("classic", ["p1", "p2"], dealer=1)
    watched.round(DECK, dealer=1)
    watched.add("PlayerConnected", "watcher", {"ip_hash": "i", "device_hash": "d", "client": "web"})
    watched.discard("p1", "2C")
    for log, table in ((six, "t-six"), (short, "t-short"), (watched, "t-watched")):
        log.events[0]["payload"]["table_id"] = table
        logs.append(log)
    path = tmp_path / "games.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for log in logs for e in log.events))
    printed = {g["game_id"]: g for g in json.loads(json.dumps(verify_files([path]).to_json()))["games"]}
    for log in logs:
        assert printed[log.game_id] == replay(log.events).to_dict()
    net = dict.fromkeys(SIX, -200)
    net["p1"] = 988
    assert printed["v-six"]["results"] == {"winners": ["p1"], "net": net, "scores": {}}
    assert printed["v-short"]["halted"] and [(f["seq"], f["rule"], f["kind"])
                                             for f in printed["v-short"]["findings"]] == [
        (1, "CL-DEAL", "integrity")]
    assert printed["v-watched"]["clean"]
