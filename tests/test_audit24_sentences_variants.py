"""Audit 24: RULES.md §2 (Rummy 500), §3 (Liverpool) and §4 (Michigan) sentence by sentence.

Every normative statement of those sections (a "must", a number, a limit, an order, a
default, a condition, an exception, a platform claim we judge), read with §0, §5 and the
parts of EVENTS.md they lean on, with the test that breaks exactly it and pins rule, kind
and ``seq`` (or the results it fixes). ``NEW`` marks a test of this file: the statement was
untested, or only its typical case was (the boundary, the second player, after a leave,
the last round or deal, a config value off its default). No engine defect was found in
these sections, so this file has no ``xfail``; the decisions taken where RULES.md is
silent are in the tests' docstrings. Files: r5r = test_r500_rules, r5g = test_r500_games,
arl = test_audit_r500_liverpool, a4rl = test_audit4_r500_liverpool, a2v =
test_audit2_variants, a3 = test_audit3_consistency, a6 = test_audit6_classic_r500, a7 =
test_audit7_classic_r500, a9 = test_audit9_corners, a11 = test_audit11_config, a17 =
test_audit17_gaps, lv = test_liverpool (``case_X`` = its test_breaking_log[X]), a7lm =
test_audit7_liverpool_michigan, a6lm = test_audit6_liverpool_michigan, mi = test_michigan,
ami = test_audit_michigan, a4mf = test_audit4_michigan_fresh, pk = test_poker, cd =
test_corners_diff (one-fault logs of corners_kit).

§2 Rummy 500
  2.1  players 2-4 (LOG-GAME otherwise) -> NEW test_seat_counts_outside_the_variant_range_*
  2.2  deck 52 + 2 jokers -> r5r test_C_DEAL_deck_is_not_the_variant_deck,
       test_C_DEAL_deck_too_short_halts
  2.3  deal 13 each with 2 players, 7 with 3-4 -> r5r test_C_DEAL_hand_sizes_by_player_count;
       2 left of 3 after a leave (decided: players dealt in): NEW
       test_r5_leaver_then_a_two_player_round_of_13_cards_in_the_last_round; 2 left of 4
       after busts: NEW test_r5_tournament_empty_stock_tied_round_winners_*
  2.4  then one card face up starts the pile -> r5r test_C_DEAL_hand_sizes_by_player_count
       (stock count); that card taken as the deepest of the whole pile: NEW
       test_r5_whole_pile_by_the_second_player_deepest_laid_off_on_anothers_meld
  2.5  the dealer moves left each round -> r5r test_C_DEAL_dealer_moves_left_each_round,
       test_C_DEAL_wrong_dealer_in_round_started; past a busted dealer: NEW (tournament)
  2.6  the player left of the dealer starts -> r5r test_C_DEAL_hand_sizes_by_player_count,
       test_C_DEAL_dealer_moves_left_each_round (in_turn); NEW (leaver, round 2)
  2.7  R5-DRAW-STOCK: a turn starts with a draw (stock top, one card) -> r5r
       test_R5_DRAW_STOCK_discard_without_drawing / _meld_before_drawing /
       _two_draws_in_one_turn / _takes_one_card; C-HOLD wrong stock card -> r5r
       test_C_HOLD_wrong_stock_card_halts
  2.8  R5-DRAW-PILE: any pile card with every card above it -> r5r
       test_R5_DRAW_PILE_taking_a_card_without_those_above_it, arl
       test_r500_pile_draw_listing_a_gap_is_R5_DRAW_PILE; the whole pile by the second of
       three players: NEW test_r5_whole_pile_by_the_second_player_*
  2.9  Drew.cards deepest first -> r5r test_R5_DRAW_PILE_cards_listed_top_first, a4rl
       test_r500_deep_draw_listed_top_first_or_past_the_pile
  2.10 R5-USE-BOTTOM: more than one card taken -> the deepest used in that turn -> r5r
       test_R5_USE_BOTTOM_deepest_card_not_used_by_the_discard, _when_the_turn_ends_without_
       a_discard, a4rl test_r500_deepest_card_left_unused_is_one_finding_*, cd
       (deepest_unused); by the second player: NEW test_r5_whole_pile_by_the_second_player_*
  2.11 "used" = melded / laid off / swapped for a table joker -> r5r
       test_deep_pile_draw_used_by_a_meld_is_clean, test_R5_USE_BOTTOM_laying_the_deepest_off_
       on_another_players_meld, arl test_r500_deepest_card_swapped_for_a_table_joker_is_used,
       a9 test_deepest_card_laid_off_where_it_does_not_fit_is_used; a deepest joker -> arl
       test_r500_deepest_joker_*
  2.12 R5-NODISCARD-TOP: a single pile card may not be discarded that turn -> r5r
       test_R5_NODISCARD_TOP_single_pile_card, cd (single_pile_discarded; a second copy of a
       joker in hand may be discarded: r500.py decision, a9
       test_deep_draw_with_a_joker_deepest_and_another_held)
  2.13 ... but may be kept -> r5r test_R5_NODISCARD_TOP_single_pile_card_may_be_kept
  2.14 after several, any but the deepest may be discarded -> r5r
       test_R5_NODISCARD_TOP_deepest_of_several, a4rl test_r500_discarding_the_deepest_card_
       taken_breaks_both_pile_rules_once, cd (deep_top_discarded); the discarder's own
       earlier discard among them: NEW test_r5_whole_pile_by_the_second_player_*
  2.15 R5-MELD sets 3-4 of a rank -> r5r test_invalid_melds_name_their_rule,
       test_R5_MELD_set_of_five_with_a_joker
  2.16 runs >= 3, one suit, consecutive (C-RUN, no wrap) -> r5r
       test_invalid_melds_name_their_rule, test_C_RUN_no_wrap_around
  2.17 no minimum value for a first meld -> NEW test_r5_values_joker_worth_its_card_* (A-JK-3,
       6 points, opens)
  2.18 jokers are wild (C-WILD positions, ``as``) -> r5r test_C_WILD_as_names_a_card_the_
       joker_cannot_be, r5g test_joker_runs_name_leading_wilds, arl test_r500_unnamed_low_
       joker_*; an invalid meld stays on the table -> r5r test_invalid_meld_stays_on_the_
       table_worth_its_naturals, a17 test_broken_meld_and_misfit_layoff_*
  2.19 R5-LAYOFF in his turn (C-TURN otherwise) -> r5r test_C_TURN_move_out_of_turn, a3
  2.20 ... after drawing -> r5r test_R5_LAYOFF_before_drawing
  2.21 ... on any meld, his own or another's, even before he has melded -> r5r
       test_R5_LAYOFF_on_another_players_meld_before_melding_scores_for_the_layer; NEW
       test_r5_whole_pile_by_the_second_player_*
  2.22 the card must fit (end, set size) -> r5r test_R5_LAYOFF_card_that_does_not_fit,
       test_R5_LAYOFF_fifth_card_on_a_set, arl test_r500_natural_laid_off_at_the_wrong_end_*,
       test_r500_natural_without_end_goes_where_it_fits, a7 test_R5_LAYOFF_onto_a_run_broken_*
  2.23 points of a laid-off card go to the layer -> r5r test_R5_SCORE_laid_off_points_
       belong_to_who_laid_them_off
  2.24 R5-SWAP: give the natural the table joker stands for, the joker to hand -> r5r
       test_R5_SWAP_clean_swap_moves_the_points_to_the_giver, test_R5_SWAP_card_the_joker_
       does_not_stand_for, test_R5_SWAP_set_joker_stands_for_any_missing_suit
  2.25 R5-DISCARD: every turn ends with one discard -> r5r test_R5_DISCARD_turn_ends_without_
       a_discard, test_R5_DISCARD_two_discards_in_one_turn
  2.26 out by discarding the last card -> r5r test_clean_scripted_game_*; on the first turn,
       3 players: NEW test_r5_out_on_the_first_turn_of_three_scores_the_round_and_pays_the_pot
  2.27 he may not meld his last card without a discard -> r5r test_R5_DISCARD_melding_the_
       last_card_without_a_discard
  2.28 R5-END: the round ends when a player goes out -> r5r test_clean_scripted_game_*; NEW
       (first turn)
  2.29 ... or the stock is empty after a discard -> r5r test_R5_END_the_round_ends_on_an_
       empty_stock_after_the_discard; four players, nobody melding: NEW test_r5_tournament_*
  2.30 the drawer of the last stock card finishes his turn first -> r5r
       test_R5_END_the_drawer_of_the_last_stock_card_finishes_his_turn; he leaves instead ->
       a2v test_r500_leaver_who_drew_the_last_stock_card_ends_the_round
  2.31 (r500 does not restock: "unless a variant says otherwise") -> r5r
       test_R5_END_r500_does_not_replenish_the_stock, a3 test_a_restock_in_r500_and_michigan_*
  2.32 a deal while a round is live -> arl test_r500_redeal_of_the_same_round_is_one_R5_END_
       finding, test_r500_redeal_logged_as_the_next_round_*, r5r test_R5_END_redeal_*
  2.33 R5-VALUES 2-10 face, J Q K 10, ace 11 -> r5g test_R5_VALUES_card_values
  2.34 ace 1 in a run A 2 3 -> r5r test_R5_VALUES_a_laid_off_ace_is_1_below_a_2_and_11_above_
       a_king, test_R5_VALUES_ace_low_counted_as_eleven_is_a_discrepancy; melded A-JK-3: NEW
       test_r5_values_joker_worth_its_card_*
  2.35 a melded joker is worth the card it stands for -> a7 test_R5_VALUES_a_misnamed_joker_*,
       a4rl (JK laid off as the ace: 11); standing for an ace in a set (11) and for the 2 of
       a low-ace run (2): NEW test_r5_values_joker_worth_its_card_*
  2.36 left in hand: ace and joker -15, others face value -> r5r test_R5_VALUES_aces_and_
       jokers, r5g test_round_scores_sum_from_the_table_and_hands; NEW (4 aces + 2 jokers)
  2.37 R5-SCORE = melded/laid off - hand; can be negative -> r5r test_clean_scripted_game_*,
       arl test_r500_round_scores_claim_of_a_negative_score; every score negative: NEW
       test_r5_tournament_*
  2.38 R5-GAME config ``mode``; RULES.md gives no default (decided: ``target``, the first
       listed) -> r5r test_config_defaults_and_bad_values; NEW test_r5_default_mode_is_
       target_500_so_one_round_does_not_end_the_game
  2.39 target: rounds until a total >= ``target`` (default 500) -> r5r test_R5_GAME_target_
       not_reached_the_game_goes_on, arl test_r500_target_is_reached_at_exactly_the_target;
       the default 500 and target at exactly the score: NEW test_r5_default_mode_*
  2.40 the highest total wins -> r5r test_R5_GAME_target_reached
  2.41 tied leaders: lower players eliminated, the tied play on until the tie breaks -> r5r
       test_R5_GAME_tie_playoff_scripted, a2v test_r500_target_tie_eliminates_the_rest_*
  2.42 rounds: a fixed number (config ``rounds``; RULES.md gives no default: 1) -> r5r
       test_R5_GAME_rounds_mode_wrong_winner_claim; ``rounds`` 2, the last round: NEW
       test_r5_leaver_then_a_two_player_round_*; "1-3 for quick games" as a bound: open
       (a11 config_kit.OPEN)
  2.43 rounds: highest total wins; a tie splits, remainder one chip each in seat order ->
       r5r test_R5_GAME_rounds_tie_splits_the_pot_remainder_in_seat_order, a2v
       test_r500_rounds_mode_leaver_and_split_prize_with_remainder
  2.44 tournament: chips after every round; no chips -> out; the last player wins -> r5r
       test_R5_CHIPS_capped_at_the_stack_and_bust_ends_the_tournament, arl
       test_r500_tournament_stack_of_exactly_zero_is_out_and_one_chip_stays, a2v
       test_r500_tournament_capped_split_payments_busting_and_views; two busts in one round,
       then heads-up to the last: NEW test_r5_tournament_*
  2.45 R5-POT: target/rounds: everyone stakes, the winner takes the pot (split on a tie) ->
       r5r test_R5_POT_wrong_payout_is_a_discrepancy; a leaver's stake stays: NEW
       test_r5_leaver_*
  2.46 tournament: ``stake`` = starting stack; chips only between players; net = final
       stack - stake -> r5r test_R5_POT_tournament_has_no_pot_and_net_is_the_stack_change;
       NEW test_r5_tournament_*
  2.47 R5-CHIPS: the round winner = highest round score; others pay (winner - own) x
       ``chip_ratio`` (RULES.md gives no default: 1) -> r5g test_R5_CHIPS_seed_vectors, r5r
       test_R5_CHIPS_uncapped_claim_is_a_discrepancy; default ratio: NEW test_r5_tournament_*
  2.48 capped at what he holds -> r5g test_R5_CHIPS_capped_at_what_the_loser_holds, r5r; two
       capped losers and two winners: NEW test_r5_tournament_*
  2.49 the seed's test vectors (ratio 3: 90 and 120; ratio 2: 120 and 140) -> r5g
       test_R5_CHIPS_seed_vectors (doctest too)
  2.50 tied round winners split the losers' payments, remainder in seat order -> r5g
       test_R5_CHIPS_tied_round_winners_split_remainder_in_seat_order, arl
       test_r500_chips_tied_winners_split_each_capped_payment_remainder_in_seat_order, a9
  2.51 removals: bust / left are confirmations, others C-CLAIM -> r5r
       test_removal_claims_the_rules_do_not_give, a6 test_r500_bust_player_who_leaves_*, cd
       (bust_claimed, bust_claimed_wrongly); NEW (two bust claims in one round)
  2.52 config: missing / null keys take the defaults; bad values LOG-RULES -> r5r
       test_config_defaults_and_bad_values, arl test_r500_null_rules_values_take_the_defaults

§3 Liverpool
  3.1  players 2-8 (LOG-GAME otherwise) -> NEW test_seat_counts_outside_the_variant_range_*
  3.2  2 x 52 up to 5 players, 3 x 52 for more -> lv case_deck_size_six_players, stored
       clean-5p / clean-8p games; after a leave (decided: players dealt in): NEW
       test_lv_decks_are_counted_over_the_players_dealt_in
  3.3  no jokers -> NEW test_lv_a_joker_in_the_deck_is_C_DEAL
  3.4  every 2 is wild (never natural) -> lv test_two_is_never_natural_and_set_distinct_
       suits_is_config, test_round_3_runs_wilds_and_shapes
  3.5  ace low or high -> NEW test_lv_ace_low_and_high_runs_and_no_wrap (and the wrap: C-RUN)
  3.6  six rounds; a deal after them -> lv test_stored_clean_six_round_games, a4rl
       test_lv_moves_and_a_seventh_deal_after_the_round_6_lay_down
  3.7  the dealer moves left each round; left of the dealer starts -> lv case_wrong_dealer,
       test_clean_opening_and_who_may_act_at_each_moment, a7lm test_lv_expected_dealer_after_
       a_leave_deals_clean, test_lv_deal_logged_by_a_dealer_who_left_*
  3.8  deal 10 cards in rounds 1-4, 12 in 5-6; one card face up -> lv test_player_view_
       shows_only_his_hand (10), test_round_5_all_out_clean_and_broken (12, lv.deal_first)
  3.9  LV-CONTRACT: exactly the round's contract, at once; the six contracts -> lv
       case_contract_shape (round 1), test_round_3_runs_wilds_and_shapes, test_round_5_*,
       test_round_6_*, a4rl test_lv_six_rounds_every_contract_*; rounds 2 and 4 broken: NEW
       test_lv_round_2_and_round_4_contracts_are_per_round; laying down twice -> lv
       case_contract_twice
  3.10 sets >= 3 of a rank, naturals of different suits (config ``set_distinct_suits``,
       default true) -> lv case_contract_repeated_suit, test_two_is_never_natural_and_set_
       distinct_suits_is_config
  3.11 runs >= 4, one suit, consecutive -> lv test_round_3_runs_wilds_and_shapes
  3.12 LV-WILD: a set needs >= 2 naturals -> lv case_wild_set_one_natural; exactly 2 with 3
       wilds (no maximum of wilds): NEW test_lv_wild_minimums_at_their_boundary
  3.13 ... a run >= 3 naturals -> lv test_round_3_runs_wilds_and_shapes (2 naturals); exactly
       3 in a run of five: NEW test_lv_wild_minimums_at_their_boundary
  3.14 LV-ALLOUT round 5: all cards but the discard; round 6: every card, no discard -> lv
       test_round_5_all_out_clean_and_broken, test_round_6_goes_out_without_discard_and_
       ends_the_game
  3.15 LV-BUY: the next player may take the discard as his draw -> lv test_clean_buy_and_
       clean_rummy_call
  3.16 ... drawing from the stock opens buying until he discards -> lv case_buy_before_draw,
       case_buy_after_window_closed, arl test_lv_buy_window_stays_open_after_the_player_in_
       turn_lays_down, a9 test_liverpool_buy_window_passes_to_the_new_next_player_after_a_
       leave, cd (buy_after_pile_draw, buy_after_out)
  3.17 the first other player to buy takes it + the top stock card (penalty) -> lv
       test_clean_buy_and_clean_rummy_call, a4rl test_lv_buy_after_a_restock_takes_the_new_
       stock_top_as_penalty, test_lv_buy_with_an_empty_stock_halts_*, cd (buy_wrong_penalty,
       buy_buried, buy_extra_legal)
  3.18 buys per player per round unlimited, config ``max_buys`` -> a4rl
       test_lv_buys_are_counted_per_round, lv case_buy_over_limit, test_max_buys_zero_turns_
       buying_off, a9 test_liverpool_buy_limit_is_per_round, cd (buy_over_cap)
  3.19 a player who has laid down may not buy -> lv case_buy_after_laying_down
  3.20 the discarder may not buy back his own card -> lv case_buy_back_own_discard, arl
       test_lv_caller_may_not_buy_back_his_own_rummy_discard
  3.21 (the next player is not an "other" buyer) -> lv case_buy_by_player_in_turn
  3.22 LV-DRAW: one draw, stock top or discard top -> lv case_draw_missing, case_draw_twice,
       case_draw_two_cards
  3.23 LV-LAYOFF: after he has laid down, in later turns, on any meld -> lv
       case_layoff_before_laying_down, case_layoff_same_turn, case_layoff_does_not_fit, arl
       test_lv_*_laid_off_*; on a low-ace run in a later round (meld numbers per round): NEW
       test_lv_ace_low_and_high_runs_and_no_wrap
  3.24 LV-RUMMY: a discard that could be laid off; another player who has laid down; before
       the next player draws or a buy; takes, lays off, discards his own -> lv
       case_rummy_card_does_not_fit, case_rummy_not_laid_down, case_rummy_own_discard,
       case_rummy_after_draw, case_rummy_by_next_player, test_clean_buy_and_clean_rummy_call,
       arl test_lv_rummy_callers_discard_is_live_*, a4rl test_lv_rummy_call_that_empties_
       the_callers_hand_ends_the_round, test_lv_windows_and_views_around_the_rummy_call
  3.25 LV-DISCARD: one discard, except going out in round 6 -> lv case_discard_missing,
       case_discard_twice, case_out_without_discard, test_round_6_*
  3.26 LV-OUT: the round ends when a player has no cards -> lv test_going_out_ends_the_
       round_with_the_scores, case_move_after_going_out, case_redeal_before_anyone_out
  3.27 LV-SCORE: A and 2 = 25, 3-9 = 5, T-K = 10 for the others -> lv test_points_and_pot_
       split, test_going_out_ends_the_round_with_the_scores
  3.28 lowest total after round 6 wins; a tie shares (pot split, remainder in seat order,
       decided) -> a4rl test_lv_six_rounds_every_contract_buys_a_call_and_tied_winners,
       test_lv_odd_chip_of_a_shared_pot_to_the_wrong_winner_is_one_C_CLAIM
  3.29 chips (decided: stakes into a pot, the winners take it); leavers -> lv
       test_mutation_wrong_payout_and_claims, a2v test_liverpool_round_then_two_leavers_*
  3.30 removals: only ``left`` confirms -> lv test_removal_claims_are_checked

§4 Michigan
  4.1  players 3-8 -> mi test_seat_count_outside_three_to_eight_is_reported
  4.2  deck 52, 2 low, A high, no wilds -> mi test_deck_that_is_not_the_52_cards_*,
       test_stop_after_the_ace_and_at_a_played_card
  4.3  pay cards JS QD KC AH (config ``pay_cards``) -> mi test_house_pay_cards_config
  4.4  MI-ANTE: kitty 1 each, the dealer 2; ``pay_ante`` (default 1) on each pay card -> mi
       test_antes_dealer_two_others_one_and_pay_ante_on_each_pay_card, ami
       test_antes_as_a_reader_of_MI_ANTE_claims_them_are_exactly_due; after a leave (the
       leaver antes no more): NEW test_mi_last_deal_after_a_leave_*
  4.5  chips on a pay card stay until won -> mi test_unplayed_pay_card_chips_roll_over; NEW
       test_mi_kitty_of_an_abandoned_deal_* (AH 3 + 3)
  4.6  MI-DEAL: every card, one at a time from left of the dealer, the widow after the dealer
       -> mi test_deal_goes_one_at_a_time_from_left_of_dealer_with_the_widow_after_the_dealer;
       hands may differ -> mi test_eight_players_hands_may_differ_in_size; two players left
       (18/17/17): NEW test_mi_last_deal_after_a_leave_*
  4.7  MI-WIDOW: before the first card, any one player, ``widow_price`` (default 1) to the
       kitty; the first buyer takes it, his hand is dead -> mi test_widow_purchase_swaps_
       hands_and_the_old_hand_is_dead, test_widow_price_config, a9 test_widow_bought_by_
       anyone_before_the_first_card_*, ami test_widow_price_goes_to_the_kitty_*
  4.8  a second purchase / one after the first card -> mi test_second_widow_purchase_is_
       MI_WIDOW, test_widow_purchase_after_the_first_card_is_MI_WIDOW_and_applied
  4.9  MI-START: left of the dealer starts, any suit, his lowest of it -> mi
       test_left_of_dealer_starts_with_his_lowest_card, test_wrong_first_starter_is_MI_START_*
  4.10 MI-FOLLOW: the holder of the next card plays it; no rotation; anyone else / a skipped
       holder -> mi test_holder_of_the_next_card_plays_it_turns_do_not_rotate,
       test_play_by_someone_else_is_MI_FOLLOW_naming_the_holder, test_holder_who_skips_*
  4.11 MI-STOP: next card in the widow / dead hand / played, or the ace -> mi
       test_stop_at_widow_card_*, test_stop_after_the_ace_and_at_a_played_card, a4mf
       test_the_holder_of_the_next_card_leaving_makes_a_stop; NEW (ace stop, deal 2)
  4.12 the last player restarts in another suit with his lowest card; none -> the right
       passes left -> mi test_restart_in_the_stopped_suit_is_MI_STOP, test_wrong_restarter_*,
       test_last_player_without_another_suit_passes_the_right_left,
       test_passed_over_last_player_playing_anyway_is_MI_STOP, test_suit_restriction_lapses_*
  4.13 MI-PENALTY: a dear start pays 1 to every other player; not a finding -> mi
       test_start_not_with_lowest_card_pays_a_chip_to_every_other_player,
       test_penalty_not_claimed_is_C_CLAIM_at_game_end, ami test_penalty_goes_to_every_other_
       player_on_a_restart_too
  4.14 MI-PAY: whoever plays a pay card takes its chips -> mi test_pay_card_chips_go_to_
       whoever_plays_it, test_pay_card_claim_to_wrong_player_is_C_CLAIM; rolled chips: NEW
  4.15 MI-OUT: the first out wins the kitty -> mi test_kitty_to_first_out_and_round_claims;
       a kitty carried over from an abandoned deal: NEW test_mi_kitty_of_an_abandoned_deal_*
  4.16 unplayed pay-card chips roll over -> mi test_unplayed_pay_card_chips_roll_over
  4.17 MI-END: ``deals`` (default one per player); a deal beyond -> mi test_deals_dealer_
       rotation_and_game_winners_by_net, test_deal_beyond_the_configured_deals_*; ``deals``
       2 with a leaver: NEW test_mi_last_deal_after_a_leave_*
  4.18 the dealer moves left each deal -> mi test_wrong_dealer_is_MI_END_*, a7lm
       test_mi_expected_dealer_after_a_leave_deals_clean
  4.19 a deal's winner = the player out; the game's winners = highest net -> mi
       test_kitty_to_first_out_and_round_claims, test_game_winners_claim_wrong_is_C_CLAIM,
       a6lm test_mi_end_winners_are_the_highest_net_of_every_player_even_one_who_left; a tie
       for the highest net: NEW test_mi_last_deal_after_a_leave_*
  4.20 after the last deal, pay-card chips divided equally, remainder one each in seat order
       from left of the last dealer -> mi test_game_end_split_of_pay_card_chips_remainder_
       from_left_of_last_dealer (state), a2v test_michigan_three_deals_*; in a replayed log
       with a remainder and a leaver (decided: among the players still in): NEW
  4.21 a new deal before anyone went out -> mi test_new_deal_before_anyone_went_out_is_MI_END
       (kitty rolled); its kitty won by the next deal's first out: NEW
  4.22 MI-POKER (``three_in_one`` default false): after any widow purchase, 1 chip each,
       five declared cards -> mi test_declaration_without_three_in_one_is_MI_POKER,
       test_widow_is_bought_before_poker, test_widow_after_poker_began_is_MI_WIDOW,
       test_second_declaration_is_MI_POKER, test_stop_phase_before_everyone_declared_*,
       test_repeated_card_declaration_*, test_declaring_a_card_not_held_halts_C_HOLD
  4.23 best hand (A high, A2345 lowest straight) wins; ties split, remainder from left of
       the dealer -> pk test_wheel_is_the_lowest_straight, test_ordering, mi
       test_poker_best_hand_takes_the_pot, test_poker_tie_splits_with_the_odd_chip_*, a2v
       test_michigan_poker_ties_over_two_deals_*
  4.24 declared cards stay in the hand -> mi test_poker_tie_splits_* (plays a declared card)
  4.25 leaving: cards dead, no more antes, the last player wins the deal -> mi
       test_player_who_leaves_mid_deal_is_out_and_the_game_goes_on, test_last_player_
       standing_wins_the_deal_and_the_game, test_leaving_during_the_poker_phase_*

§5 / EVENTS.md claims used by the three sections
  5.1  RoundEnded winners / scores recomputed (C-CLAIM at its seq, both values) -> a3
       test_round_ended_before_the_round_ended_is_C_CLAIM_at_its_seq; r500 scores: NEW
       test_r5_out_on_the_first_turn_*, test_r5_values_*; a Michigan deal that never
       ended: NEW test_mi_kitty_of_an_abandoned_deal_*
  5.2  GameEnded: the game over, winners, net player by player -> a3 test_game_ended_claims_
       are_C_CLAIM_at_its_seq, mi test_wrong_net_claim_is_C_CLAIM; a game not over by the
       default target: NEW test_r5_default_mode_*; tied Michigan winners: NEW
  5.3  ChipsTransferred as one multiset; the first differing event, or GameEnded for a
       missing one -> a3 test_a_transfer_not_due_*, test_a_transfer_due_but_not_logged_*;
       an uncapped tournament payment: NEW test_r5_tournament_*; a Michigan end split that
       pays a leaver: NEW test_mi_last_deal_after_a_leave_*
  5.4  RoundStarted round / dealer / redeal claims -> a3 test_a_wrong_round_number_*,
       test_a_wrong_dealer_is_a_deal_violation, r5r test_C_DEAL_redeal_must_be_zero, mi
       test_redeal_is_a_MI_DEAL_violation
  5.5  LaidOff.meld numbers the round's melds from 0 -> NEW test_r5_leaver_* (round 2),
       test_lv_ace_low_and_high_runs_and_no_wrap (round 3)

Count: 112 numbered statements (52 + 30 + 25 + 5; several items hold two or three
sentences of one rule). 8 had no test: 2.1, 2.17, 3.1, 3.3, 3.5, 5.5, 3.2 after a leave,
and 4.15 / 4.21's rolled kitty being won. About 40 more were tested only in their typical
case and get a NEW corner here (marked NEW above).
"""
from __future__ import annotations

from typing import Any

import pytest
import test_liverpool as lv
from logkit import Log, findings
from r500kit import Script
from test_michigan_kit import michigan_deck

from rummyguard.events.cards import RANKS, format_cards
from rummyguard.replay.engine import GameRecord, replay
from rummyguard.replay.rules.liverpool import Liverpool
from rummyguard.replay.rules.michigan import Michigan
from rummyguard.replay.rules.r500 import Rummy500

Events = list[dict[str, Any]]


def rec_of(events: Events) -> GameRecord:
    return replay(events, verify_hashes=False)


def stake_claims(s: Script, stake: int, winners: dict[str, int]) -> int:
    """R5-POT as the platform logs it: every stake into the pot, the pot to the winners."""
    transfers = [{"from": p, "to": "pot", "amount": stake, "reason": "stake"} for p in s.seats]
    transfers += [{"from": "pot", "to": p, "amount": a, "reason": "pot"} for p, a in winners.items()]
    return s.sys("ChipsTransferred", {"transfers": transfers})


def moves(*pairs: tuple[str, int]) -> list[dict[str, Any]]:
    """A ChipsTransferred payload's transfers from ``("p3>p1", 15)`` pairs."""
    out = []
    for spec, amount in pairs:
        src, dst = spec.split(">")
        out.append({"from": src, "to": dst, "amount": amount, "reason": "chips"})
    return out


# ============================================================================================
# §2 Rummy 500
# ============================================================================================

# Three players, dealer seat 2: p1 (seat 0) starts; 7 cards each (R5 deal with 3-4 players).
R5_THREE = [["3H", "4H", "5H", "6H", "7C", "7D", "7S"],
            ["AS", "JK", "2D", "KD", "QC", "9C", "4S"],
            ["AC", "AD", "TS", "TH", "JS", "QH", "5S"]]
# p1 39 (3H-6H 18, three 7s 21); p2 -(15+15+2+10+10+9+4) = -65; p3 -(15+15+10+10+10+10+5) = -75
R5_THREE_SCORES = {"p1": 39, "p2": -65, "p3": -75}


def r5_out_on_the_first_turn(rules: dict[str, Any] | None = None, stake: int = 100) -> Script:
    s = Script(hands=R5_THREE, up="2S", stock=["8C", "KS"], dealer=2, seats=["p1", "p2", "p3"],
               rules=rules if rules is not None else {"mode": "rounds"}, stake=stake)
    s.draw("p1")
    s.meld("p1", {"kind": "run", "cards": ["3H", "4H", "5H", "6H"]})
    s.meld("p1", {"kind": "set", "cards": ["7C", "7D", "7S"]})
    s.log.discard("p1", "8C")
    return s


def test_r5_out_on_the_first_turn_of_three_scores_the_round_and_pays_the_pot() -> None:
    """R5-DISCARD "a player goes out by discarding his last card" on the very first turn of a
    3-player round (7 cards: draw, meld seven, discard): the round ends at that discard
    (R5-END), R5-SCORE gives the others their hands negative (ace and joker -15), and in
    ``rounds`` mode (rounds 1) the one round ends the game: the pot (3 x 100) to p1. The
    claims are judged: a round score that counts p2's ace as 1 in hand is C-CLAIM at its
    RoundEnded, naming both values."""
    s = r5_out_on_the_first_turn()
    out = s.last()
    stake_claims(s, 100, {"p1": 300})
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": R5_THREE_SCORES})
    s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 200, "p2": -100, "p3": -100}})
    rec = rec_of(s.log.events)
    assert findings(rec) == [] and not rec.halted
    assert rec.results.scores == R5_THREE_SCORES and rec.results.winners == ["p1"]
    assert rec.results.net == {"p1": 200, "p2": -100, "p3": -100}
    assert isinstance(rec.state, Rummy500) and rec.state.is_over()
    assert rec.state.round_result(1) == (["p1"], R5_THREE_SCORES)

    s = r5_out_on_the_first_turn()
    assert s.last() == out
    seq = s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {**R5_THREE_SCORES, "p2": -51}})
    rec = rec_of(s.log.events)
    assert findings(rec) == [(seq, "C-CLAIM", "discrepancy")]
    assert "p2: claimed -51, recomputed -65" in rec.findings[0].message


def test_r5_default_mode_is_target_500_so_one_round_does_not_end_the_game() -> None:
    """RULES.md R5-GAME names the modes and ``target`` "(default 500)" but gives no default
    for ``mode`` itself; the engine's decision (r500.py config_defaults) is ``target``, the
    first mode listed. With ``rules`` {} the same first-turn out scores 39 for p1, far
    below 500: the game goes on, so a GameEnded claim after round 1 is C-CLAIM at that
    event (the game has not ended, nobody has won, the pot is not paid: three
    discrepancies at one seq)."""
    for rules in ({}, {"mode": "target"}, {"mode": "target", "target": 500}):
        s = r5_out_on_the_first_turn(rules)
        rec = rec_of(s.log.events)
        assert findings(rec) == [] and not rec.state.is_over()  # type: ignore[union-attr]
        assert rec.state.deal_due()["round"] == 2  # type: ignore[union-attr,index]
        seq = s.sys("GameEnded", {"winners": ["p1"], "net": {"p1": 200, "p2": -100, "p3": -100}})
        rec = rec_of(s.log.events)
        assert findings(rec) == [(seq, "C-CLAIM", "discrepancy")] * 3
        assert rec.findings[0].message == "GameEnded claims the game ended; by the rules it has not"
    s = r5_out_on_the_first_turn({"mode": "target", "target": 39})  # exactly the target
    rec = rec_of(s.log.events)
    assert rec.state.is_over() and rec.results.winners == ["p1"]  # type: ignore[union-attr]


def test_r5_leaver_then_a_two_player_round_of_13_cards_in_the_last_round() -> None:
    """R5 deal "13 cards each with 2 players, 7 each with 3-4" after a leave: p3 leaves in
    round 1 (his stake stays in the pot, R5-POT / the engine's leaving decision), so round
    2 is dealt to the two players still in. RULES.md does not say whether "players" counts
    the seats or the players dealt in; decided (engine and both judges): the players dealt
    in, so 13 each. ``rules.rounds`` 2 (not the default): round 2 is the last and ends the
    game; the pot of 3 x 101 goes whole to p2 (totals p1 39 - 99 = -60, p2 -65 + 95 = 30).
    EVENTS.md "meld (table meld number, 0-based in order of creation in the round)": p2's
    lay-off on meld 0 in round 2 is on his own 2C-5C, not on round 1's 3H-6H."""
    s = Script(hands=R5_THREE, up="2S", stock=["8C", "KS"], dealer=2, seats=["p1", "p2", "p3"],
               rules={"mode": "rounds", "rounds": 2}, stake=101)
    s.draw("p1")
    s.log.add("PlayerLeft", "p3", {})
    s.sys("PlayerRemoved", {"player": "p3", "reason": "left"})
    s.meld("p1", {"kind": "run", "cards": ["3H", "4H", "5H", "6H"]})
    s.meld("p1", {"kind": "set", "cards": ["7C", "7D", "7S"]})
    s.log.discard("p1", "8C")
    s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 39, "p2": -65}})
    p2 = ["2C", "3C", "4C", "5C", "6C", "7H", "8H", "9H", "TH", "JH", "QH", "KH", "AH"]
    p1 = ["2H", "3D", "4D", "5D", "6D", "7C", "8C", "9C", "TC", "JC", "QC", "KC", "AC"]
    deal = s.deal([p2, p1], "2S", ["KS"], dealer=0)  # the dealer moves left: seat 0
    view = rec_of(s.log.events).state.snapshot()  # type: ignore[union-attr]
    assert view["hand_counts"] == {"p1": 13, "p2": 13, "p3": 0} and view["in_turn"] == "p2"
    s.draw("p2")
    s.meld("p2", {"kind": "run", "cards": p2[:4]})
    s.layoff("p2", "6C", 0, "high")  # EVENTS.md LaidOff.meld: round 2's melds count from 0
    s.meld("p2", {"kind": "run", "cards": p2[5:]})
    s.log.discard("p2", "KS")
    stake_claims(s, 101, {"p2": 303})
    s.sys("RoundEnded", {"round": 2, "winners": ["p2"], "scores": {"p1": -99, "p2": 95}})
    s.sys("GameEnded", {"winners": ["p2"], "net": {"p1": -101, "p2": 202, "p3": -101}})
    rec = rec_of(s.log.events)
    assert findings(rec) == [] and deal > 0
    assert rec.results.scores == {"p1": -60, "p2": 30, "p3": 0}
    assert rec.results.net == {"p1": -101, "p2": 202, "p3": -101} and rec.results.winners == ["p2"]


# Four players, dealer seat 3: p1 starts. Nobody melds: the round ends on the empty stock.
R5_FOUR = [["2C", "3D", "4H", "5S", "6C", "7D", "8H"],      # -35
           ["2D", "3H", "4S", "5C", "6D", "7H", "8S"],      # -35
           ["KC", "KD", "KH", "KS", "QC", "QD", "QH"],      # -70
           ["AC", "AD", "AH", "AS", "JK", "JK", "TC"]]      # -(6 x 15 + 10) = -100
R5_HEADS_UP = [["2C", "2D", "2H", "2S", "3C", "3D", "3H", "3S", "4C", "4D", "4H", "4S", "5C"],  # p2 -41
               ["AC", "AD", "AH", "AS", "JK", "JK", "KC", "KD", "KH", "KS", "QC", "QD", "QH"]]  # p1 -160


def r5_tournament(round1_transfers: list[dict[str, Any]]) -> tuple[Script, int, int]:
    s = Script(hands=R5_FOUR, up="9C", stock=[], dealer=3, seats=["p1", "p2", "p3", "p4"],
               rules={"mode": "tournament"}, stake=30)
    last, end1 = s.exhaust(["p1", "p2", "p3", "p4"])
    assert last == "p1" and not s.stock  # 54 - 29 = 25 stock cards: p1 draws the last one
    claim = s.sys("ChipsTransferred", {"transfers": round1_transfers})
    s.sys("RoundEnded", {"round": 1, "winners": ["p1", "p2"],
                         "scores": {"p1": -35, "p2": -35, "p3": -70, "p4": -100}})
    s.sys("PlayerRemoved", {"player": "p3", "reason": "bust"})
    s.sys("PlayerRemoved", {"player": "p4", "reason": "bust"})
    s.deal(R5_HEADS_UP, "9C", [], dealer=0)  # 2 players left: 13 cards each, p2 first
    s.exhaust(["p2", "p1"])
    s.sys("ChipsTransferred", {"transfers": moves(("p1>p2", 60))})
    s.sys("RoundEnded", {"round": 2, "winners": ["p2"], "scores": {"p1": -160, "p2": -41}})
    s.sys("PlayerRemoved", {"player": "p1", "reason": "bust"})
    s.sys("GameEnded", {"winners": ["p2"], "net": {"p1": -30, "p2": 90, "p3": -30, "p4": -30}})
    return s, end1, claim


def test_r5_tournament_empty_stock_tied_round_winners_capped_payments_two_busts_then_the_last() -> None:
    """R5-END "the stock is empty after a discard" with four players and nobody melding:
    every round score is negative (R5-SCORE "it can be negative"; aces and jokers -15).
    R5-CHIPS in ``tournament`` mode with the default ratio (RULES.md gives none; the
    engine's decision is 1) and two tied round winners: p3 owes 35 and p4 65, each capped
    at his stack of 30 and split 15/15 between p1 and p2 ("remainder in seat order": none
    here). p3 and p4 then hold nothing and are out at once, both in one round; the two left
    play 13 cards each (the dealer moves left to seat 0) and p1, capped at his 60, busts:
    "the last player at the table wins"; net = final stack - stake (R5-POT). A platform that
    does not cap (p4 pays 65, split 33/32) is C-CLAIM at that ChipsTransferred."""
    right = moves(("p3>p1", 15), ("p3>p2", 15), ("p4>p1", 15), ("p4>p2", 15))
    s, end1, _ = r5_tournament(right)
    rec = rec_of(s.log.events)
    assert findings(rec) == [] and not rec.halted
    st = rec.state
    assert isinstance(st, Rummy500) and st.is_over()
    assert st.round_result(1) == (["p1", "p2"], {"p1": -35, "p2": -35, "p3": -70, "p4": -100})
    assert st.snapshot()["out"] == {"p1": "bust", "p3": "bust", "p4": "bust"}
    assert rec.results.winners == ["p2"]
    assert rec.results.net == {"p1": -30, "p2": 90, "p3": -30, "p4": -30}
    assert rec.results.scores == {"p1": -195, "p2": -76, "p3": -70, "p4": -100}
    assert rec_of(s.log.events[:end1 + 1]).state.round_result(1) is not None  # type: ignore[union-attr]
    assert rec_of(s.log.events[:end1]).state.round_result(1) is None  # type: ignore[union-attr]

    uncapped = moves(("p3>p1", 15), ("p3>p2", 15), ("p4>p1", 33), ("p4>p2", 32))
    s, _, claim = r5_tournament(uncapped)
    rec = rec_of(s.log.events)
    assert findings(rec) == [(claim, "C-CLAIM", "discrepancy")]
    assert "claimed but not due: p4->p1 33, p4->p2 32" in rec.findings[0].message


# p1 (13 cards) melds everything on his first turn: the first meld is A-JK-3 (6 points; no
# minimum for a first meld), a joker stands for an ace in a set of aces (11).
R5_VALUES_P1 = ["AH", "JK", "3H", "AC", "AD", "JK", "4C", "5C", "6C", "7C", "9S", "TS", "JS"]
R5_VALUES_P2 = ["2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD", "JD", "QD", "KD", "AS"]


def r5_values_round() -> Script:
    s = Script(hands=[R5_VALUES_P1, R5_VALUES_P2], up="2S", stock=["KS"], dealer=1)
    s.draw("p1")
    s.meld("p1", {"kind": "run", "cards": ["AH", "JK", "3H"]})
    s.meld("p1", {"kind": "set", "cards": ["AC", "AD", "JK"]})
    s.meld("p1", {"kind": "run", "cards": ["4C", "5C", "6C", "7C"]})
    s.meld("p1", {"kind": "run", "cards": ["9S", "TS", "JS"]})
    s.log.discard("p1", "KS")
    return s


def test_r5_values_joker_worth_its_card_ace_one_in_a_low_run_and_no_first_meld_minimum() -> None:
    """R5-VALUES "ace 11, but 1 in a run A 2 3...; a melded joker is worth the card it
    stands for" and R5-MELD "no minimum value for a first meld": A-JK-3 opens (1 + 2 + 3),
    the joker of AC AD JK stands for an ace (11), so p1 scores 6 + 33 + 22 + 29 = 90 on a
    first-turn out; p2's hand costs 2+3+...+9 + 10 x 4 + 15 = 99. A RoundEnded that counts
    the low ace as 11 (p1 100) is C-CLAIM at its seq."""
    s = r5_values_round()
    rec = rec_of(s.log.events)
    assert findings(rec) == []
    assert rec.state.round_result(1) == (["p1"], {"p1": 90, "p2": -99})  # type: ignore[union-attr]
    seq = s.sys("RoundEnded", {"round": 1, "winners": ["p1"], "scores": {"p1": 100, "p2": -99}})
    rec = rec_of(s.log.events)
    assert findings(rec) == [(seq, "C-CLAIM", "discrepancy")]
    assert "p1: claimed 100, recomputed 90" in rec.findings[0].message


# Three players, dealer seat 2; the up-card 7H fits p1's run 3H-6H.
R5_DEEP = [["3H", "4H", "5H", "6H", "9C", "TD", "JS"],
           ["AS", "KD", "QC", "9D", "4S", "8C", "2D"],
           ["AC", "AD", "TS", "TH", "JH", "QH", "5S"]]


def r5_whole_pile_by_the_second_player() -> Script:
    """p1 draws KS, melds 3H-6H, discards KS; p2 takes the whole pile, 7H (the up-card,
    deepest) and KS."""
    s = Script(hands=R5_DEEP, up="7H", stock=["KS", "QS", "2H"], dealer=2, seats=["p1", "p2", "p3"])
    s.draw("p1")
    s.meld("p1", {"kind": "run", "cards": ["3H", "4H", "5H", "6H"]})
    s.log.discard("p1", "KS")
    s.log.draw("p2", "discard", "7H", "KS")
    return s


def test_r5_whole_pile_by_the_second_player_deepest_laid_off_on_anothers_meld() -> None:
    """R5-DRAW-PILE at its deepest: the second of three players takes the whole pile, the
    turned-up card included (``Drew.cards`` deepest first). R5-USE-BOTTOM: the deepest,
    7H, is laid off on p1's run (R5-LAYOFF: another's meld, before p2 has melded), and
    R5-NODISCARD-TOP lets p2 discard KS, which is not the deepest: clean. Left unused,
    the deepest is R5-USE-BOTTOM at the discard that ends the turn; discarded, it breaks
    R5-NODISCARD-TOP and R5-USE-BOTTOM at that seq."""
    s = r5_whole_pile_by_the_second_player()
    s.layoff("p2", "7H", 0, "high")
    s.log.discard("p2", "KS")
    s.turn("p3")
    rec = rec_of(s.log.events)
    assert findings(rec) == []
    view = rec.state.snapshot()  # type: ignore[union-attr]
    assert view["melds"][0]["cards"] == ["3H", "4H", "5H", "6H", "7H"]
    assert view["melds"][0]["by"] == ["p1"] * 4 + ["p2"]

    s = r5_whole_pile_by_the_second_player()
    seq = s.log.discard("p2", "KS")
    assert findings(rec_of(s.log.events)) == [(seq, "R5-USE-BOTTOM", "violation")]
    s = r5_whole_pile_by_the_second_player()
    seq = s.log.discard("p2", "7H")
    assert findings(rec_of(s.log.events)) == [(seq, "R5-NODISCARD-TOP", "violation"),
                                             (seq, "R5-USE-BOTTOM", "violation")]


# ============================================================================================
# §3 Liverpool
# ============================================================================================


def lv_round(round_no: int, hand: str, stock: str) -> tuple[lv.Log, str]:
    """Round ``round_no`` of the stored clean two-player game, the first player's hand given."""
    return lv.deal_first(round_no, hand, stock)


def test_lv_round_2_and_round_4_contracts_are_per_round() -> None:
    """LV-CONTRACT "exactly the round's contract": two sets, the round-1 contract, laid down
    in round 2 (one set + one run) and two sets + a run (round 5's) in round 4 (three sets)
    are LV-CONTRACT at the lay-down; round 4's own contract is clean."""
    log, who = lv_round(2, "5C 5D 5H 9C 9D 9H 3S 4S 6S KH", "7S 4D 3H")
    log.drew(who)
    seq = log.laid(who, ("set", "5C 5D 5H"), ("set", "9C 9D 9H"))
    rec = rec_of(log.events)
    assert findings(rec) == [(seq, "LV-CONTRACT", "violation")]
    assert "round 2's contract is 1 set + 1 run" in rec.findings[0].message

    hand = "5C 5D 5H 9C 9D 9H 3S 4S 5S 6S"
    log, who = lv_round(4, hand, "KH")
    log.drew(who)
    seq = log.laid(who, ("set", "5C 5D 5H"), ("set", "9C 9D 9H"), ("run", "3S 4S 5S 6S"))
    rec = rec_of(log.events)
    assert findings(rec) == [(seq, "LV-CONTRACT", "violation")]
    assert "round 4's contract is 3 sets" in rec.findings[0].message

    log, who = lv_round(4, "5C 5D 5H 9C 9D 9H KC KD 3S 4S", "KH")
    log.drew(who)
    log.laid(who, ("set", "5C 5D 5H"), ("set", "9C 9D 9H"), ("set", "KC KD KH"))
    log.disc(who, "3S")
    assert findings(rec_of(log.events)) == []


def test_lv_wild_minimums_at_their_boundary() -> None:
    """LV-WILD "a set needs >= 2 natural cards, a run >= 3", read to the letter: a set of
    two naturals and three 2s (5C 5D + 2H 2S 2C) and a run of five with three naturals and
    two 2s in the middle (3H . 5H . 7H) are clean; nothing caps the wilds beyond the
    natural minimum (RULES.md is silent on a maximum, so none is invented)."""
    log = lv.Log(["p0", "p1", "p2"], dealer=2)
    log.deal(1, 2, {0: "5C 5D 2H 2S 2C 9C 9D 9H QS 4C", 1: lv.H1, 2: lv.H2}, lv.UP, lv.STOCK)
    log.drew("p0")
    log.laid("p0", ("set", "5C 5D 2H 2S 2C"), ("set", "9C 9D 9H"))
    log.disc("p0", "4C")
    rec = rec_of(log.events)
    assert findings(rec) == []
    assert isinstance(rec.state, Liverpool) and rec.state.hand_size(0) == 2

    log, who = lv_round(3, "3H 2C 5H 2D 7H 9S TS JS QS KD", "KS")
    log.drew(who)
    log.laid(who, ("run", "3H 2C 5H 2D 7H"), ("run", "9S TS JS QS"))
    log.disc(who, "KD")
    rec = rec_of(log.events)
    assert findings(rec) == []
    assert format_cards(rec.state.melds[-2].stands) == ["3H", "4H", "5H", "6H", "7H"]  # type: ignore[union-attr]


def test_lv_ace_low_and_high_runs_and_no_wrap() -> None:
    """§3 "Ace low or high": A-(2)-3-4 (the 2 wild in the middle stands for 2H; three
    naturals) and J-Q-K-A are clean runs, and in a later turn 5H goes on the low-ace run
    (LV-LAYOFF; meld 0 is this round's first meld); K-A-(2)-3 wraps round the ace: C-RUN
    (§0)."""
    log, who = lv_round(3, "AH 2C 3H 4H JS QS KS AS 8D 9C", "KC 9S 5H")
    other = next(p for p in log.seats if p != who)
    log.drew(who)
    log.laid(who, ("run", "AH 2C 3H 4H"), ("run", "JS QS KS AS"))
    log.disc(who, "KC")
    log.drew(other)
    log.disc(other, "9S")
    log.drew(who)
    log.off(who, "5H", 0, "high")  # LaidOff.meld counts the round's melds from 0 (EVENTS.md)
    log.disc(who, "8D")
    rec = rec_of(log.events)
    assert findings(rec) == []
    assert format_cards(rec.state.melds[0].stands) == ["AH", "2H", "3H", "4H", "5H"]  # type: ignore[union-attr]
    log, who = lv_round(3, "KD AD 2C 3D JS QS KS AS 8D 9C", "KC")
    log.drew(who)
    seq = log.laid(who, ("run", "KD AD 2C 3D"), ("run", "JS QS KS AS"))
    assert findings(rec_of(log.events)) == [(seq, "C-RUN", "violation")]


def test_lv_decks_are_counted_over_the_players_dealt_in() -> None:
    """§3 "Decks: 2 x 52 for up to 5 players, 3 x 52 for more". RULES.md does not say
    whether a player who has left counts. Decided (replay/rules/liverpool.py, "counted at
    each deal"): the players dealt in. Six seats, one leaves before the first deal: the five
    left are dealt from two decks, clean; three decks there is C-DEAL. Note: the in-repo
    referee (tests/referee_liverpool_michigan.py) counts the seats instead and reports
    C-DEAL for every later deal of a 6-8 seat game with a leaver (config_kit.differences
    over sim_game("liverpool", 6, ...) shows it); the two readings disagree there only."""
    seats = [f"p{i}" for i in range(6)]
    for decks, expected in ((2, []), (3, [(2, "C-DEAL", "violation")])):
        log = lv.Log(seats, dealer=5)
        log.add("PlayerLeft", "p5", {})
        deck = format_cards(sorted(c for _ in range(decks) for c in range(52)))
        log.add("RoundStarted", "system", {"round": 1, "dealer": 5, "deck": deck, "redeal": 0})
        log.add("Drew", "p0", {"source": "stock", "cards": [deck[5 * 10 + 1]]})  # after the up-card
        rec = rec_of(log.events)
        assert findings(rec) == expected
        view = rec.state.snapshot()  # type: ignore[union-attr]
        assert view["hand_counts"] == {**{p: 10 for p in seats[:5]}, "p0": 11, "p5": 0}
    log = lv.Log(seats, dealer=5)  # nobody left: six players, three decks, clean
    deck = format_cards(sorted(c for _ in range(3) for c in range(52)))
    log.add("RoundStarted", "system", {"round": 1, "dealer": 5, "deck": deck, "redeal": 0})
    assert findings(rec_of(log.events)) == []


def test_lv_a_joker_in_the_deck_is_C_DEAL() -> None:
    """§3 "no jokers": two decks with a joker in place of a card are not the variant's deck
    (C-DEAL at the RoundStarted); the deal is still followed (the joker sits in a hand)."""
    log = lv.Log(["p0", "p1", "p2"], dealer=2)
    deck = format_cards(sorted(c for _ in range(2) for c in range(52)))
    deck[deck.index("KS")] = "JK"
    seq = log.add("RoundStarted", "system", {"round": 1, "dealer": 2, "deck": deck, "redeal": 0})
    rec = rec_of(log.events)
    assert findings(rec) == [(seq, "C-DEAL", "violation")] and not rec.halted
    assert "extra JK" in rec.findings[0].message and "missing KS" in rec.findings[0].message


# ============================================================================================
# §4 Michigan
# ============================================================================================

HEARTS = [r + "H" for r in RANKS]
CLUBS = [r + "C" for r in RANKS]
DIAMONDS = [r + "D" for r in RANKS]
SPADES = [r + "S" for r in RANKS]
#: deal 1, dealer c: a (left of c) holds the hearts and goes out 2H..AH
SUITED = michigan_deck([HEARTS, CLUBS, DIAMONDS, SPADES])
#: deal 2 with c gone, dealer a: b (18 cards: the hearts and 2C-6C), a (17), widow (17)
B2 = HEARTS + CLUBS[:5]
A2 = CLUBS[5:] + DIAMONDS[:9]
W2 = DIAMONDS[9:] + SPADES
DEAL2 = michigan_deck([B2, A2, W2])


def mi_two_deals_with_a_leaver(deal2_dealer: int = 0) -> Log:
    log = Log("mi")
    log.created("michigan", ["a", "b", "c"], dealer=2, rules={"deals": 2})
    log.round(SUITED, dealer=2)
    for card in HEARTS:
        log.add("CardPlayed", "a", {"card": card})
    log.sys("RoundEnded", {"round": 1, "winners": ["a"], "scores": {}})
    log.add("PlayerLeft", "c", {})
    log.sys("PlayerRemoved", {"player": "c", "reason": "left"})
    log.round(DEAL2, round_no=2, dealer=deal2_dealer)
    for card in B2:
        log.add("CardPlayed", "b", {"card": card})
    log.sys("RoundEnded", {"round": 2, "winners": ["b"], "scores": {}})
    return log


def test_mi_last_deal_after_a_leave_final_split_remainder_and_tied_winners() -> None:
    """MI-END at its corners, ``deals`` 2 (not the default): c leaves after deal 1, so deal 2
    antes only a (dealer: 2 to the kitty) and b (1), and the deal skips c (b 18 cards, a 17,
    widow 17: "hands may differ in size"). b restarts after the ace stop with his lowest club
    (MI-STOP), goes out (MI-OUT: kitty 3) and takes AH's 2 rolled chips (MI-PAY). After the
    last deal the 15 chips left on JS QD KC are divided between the players still in (the
    engine's reading of "among all players": c left, documented in michigan.py), 8 and 7, the
    odd chip to b, first left of the last dealer a. Nets: a 3, b 3, c -6: the game's winners
    are both (a tie "with the highest net"). A claim naming a alone is C-CLAIM at GameEnded;
    an equal three-way split that pays c is C-CLAIM at its ChipsTransferred."""
    log = mi_two_deals_with_a_leaver()
    end = log.sys("GameEnded", {"winners": ["a", "b"], "net": {"a": 3, "b": 3, "c": -6}})
    rec = rec_of(log.events)
    assert findings(rec) == [] and not rec.halted
    assert rec.results.winners == ["a", "b"] and rec.results.net == {"a": 3, "b": 3, "c": -6}
    assert rec.results.scores == {}
    deal2 = [t.key() for t in rec.transfers if t.seq > 14]
    assert deal2[:10] == [("b", "kitty", 1), ("b", "pay:JS", 1), ("b", "pay:QD", 1), ("b", "pay:KC", 1),
                          ("b", "pay:AH", 1), ("a", "kitty", 2), ("a", "pay:JS", 1), ("a", "pay:QD", 1),
                          ("a", "pay:KC", 1), ("a", "pay:AH", 1)]
    split = [t for t in rec.transfers if t.reason == "pay cards split"]
    assert {p: sum(t.amount for t in split if t.dst == p) for p in ("a", "b")} == {"a": 7, "b": 8}
    assert isinstance(rec.state, Michigan) and rec.state.round_result(2) == (["b"], {})

    log = mi_two_deals_with_a_leaver()
    end = log.sys("GameEnded", {"winners": ["a"], "net": {"a": 3, "b": 3, "c": -6}})
    rec = rec_of(log.events)
    assert findings(rec) == [(end, "C-CLAIM", "discrepancy")]
    assert rec.findings[0].message == "game winners: claimed ['a'], recomputed ['a', 'b']"

    log = mi_two_deals_with_a_leaver()
    seq = log.sys("ChipsTransferred", {"transfers": [
        {"from": f"pay:{card}", "to": p, "amount": 1 + (p == "b"), "reason": "split"}
        for card in ("JS", "QD", "KC") for p in ("a", "b", "c")]})
    rec = rec_of(log.events)
    assert [(f.seq, f.rule, f.kind) for f in rec.findings] == [(seq, "C-CLAIM", "discrepancy")]


def test_mi_kitty_of_an_abandoned_deal_goes_to_the_next_deals_first_out() -> None:
    """MI-OUT "the first player to play all his cards wins the kitty" when the deal before
    had no winner: deal 1 is abandoned by a new RoundStarted after two plays (MI-END at that
    deal), its kitty (1 + 1 + 2) stays and deal 2's antes join it; b, left of deal 2's
    dealer a, plays the 13 hearts and takes all 8. Unplayed AH chips roll over too (3 + 3
    to b). A RoundEnded claim for the abandoned deal is C-CLAIM (by the rules it never
    ended)."""
    log = Log("mi")
    log.created("michigan", ["a", "b", "c"], dealer=2)
    log.round(SUITED, dealer=2)
    log.add("CardPlayed", "a", {"card": "2H"})
    log.add("CardPlayed", "a", {"card": "3H"})
    deal2 = log.round(SUITED, round_no=2, dealer=0)  # dealt from left of a: b holds the hearts
    for card in HEARTS:
        log.add("CardPlayed", "b", {"card": card})
    rec = rec_of(log.events)
    assert findings(rec) == [(deal2, "MI-END", "violation")]
    kitty = [t.key() for t in rec.transfers if t.reason == "kitty"]
    assert kitty == [("kitty", "b", 8)]
    assert [t.key() for t in rec.transfers if t.reason == "pay card"] == [("pay:AH", "b", 6)]
    st = rec.state
    assert isinstance(st, Michigan) and st.round_result(1) is None and st.round_result(2) == (["b"], {})
    seq = log.sys("RoundEnded", {"round": 1, "winners": ["a"], "scores": {}})
    rec = rec_of(log.events)
    assert findings(rec)[-1] == (seq, "C-CLAIM", "discrepancy")
    assert rec.findings[-1].message == "RoundEnded claims round 1 ended; by the rules it has not"


# ============================================================================================
# Seat counts (§2 "Players 2-4", §3 "Players 2-8")
# ============================================================================================


@pytest.mark.parametrize(("variant", "n", "flagged"), [
    ("r500", 1, True), ("r500", 2, False), ("r500", 4, False), ("r500", 5, True),
    ("liverpool", 1, True), ("liverpool", 2, False), ("liverpool", 8, False), ("liverpool", 9, True),
])
def test_seat_counts_outside_the_variant_range_are_LOG_GAME(variant: str, n: int, flagged: bool) -> None:
    """§2 "Players 2-4 (seed)" and §3 "Players 2-8 (decided)" at both boundaries: a table
    outside the range is a LOG-GAME integrity finding at GameCreated (seq 0), and the game
    is still replayed; inside it, nothing."""
    log = Log("seats")
    log.created(variant, [f"p{i}" for i in range(n)], dealer=0)
    rec = rec_of(log.events)
    assert findings(rec) == ([(0, "LOG-GAME", "integrity")] if flagged else [])
    assert not rec.halted
