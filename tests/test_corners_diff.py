"""Fast differential test of the odd corners of the four variants: the engine against the
independent judges (tests/referee_*.py, which merge tests/oracle_*.py's claim findings) on
a seeded sample of tests/corners_kit.py's corner games and one-fault logs.

The corner games lean on the rare paths (classic Fresh votes in and out of turn, unanimous
Fresh twice and more, votes then leaves, leaves between a unanimous vote and its redeal,
moves and auto-plays on the clock edge, the fourth strike, the last player standing;
Rummy 500 deep pile draws in every mode; Liverpool buys and Rummy calls; Michigan widow
purchases and dear starts). Compared:

- clean corner games: every finding and halting, and both say clean;
- corner faults the spec leaves clean (a second press, a move exactly on its deadline,
  the top card of a deep draw discarded, a legal extra buy or widow purchase ...): every
  finding and halting;
- corner faults that break a rule: the findings at the first finding's seq and halting
  (later findings may cascade), and the rule the spec names is among them.

The large run behind this sample (thousands of games per variant) is in the audit-9
report; this file keeps a seeded slice of it under 30 s.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from corners_kit import corner_faults, corner_game
from referee_classic_r500 import referee as referee_cr
from referee_liverpool_michigan import referee as referee_lm

from rummyguard.replay.engine import replay

Event = dict[str, Any]
Events = list[Event]
Finding = tuple[int, str, str]
#: cross-game (CL-NEXT) and log-shape (LOG-*) rules are not move legality: not compared
NOT_COMPARED = ("LOG-", "CL-NEXT")
#: seeds per variant (Liverpool: short games rich in buys, calls and max_buys limits)
SAMPLE: dict[str, Any] = {"classic": range(0, 36), "r500": range(0, 30), "liverpool": (0, 6, 9, 10, 15),
          "michigan": range(0, 30)}


def engine_view(events: Events) -> tuple[list[Finding], bool]:
    rec = replay(events, verify_hashes=False)
    # a set: the engine may word two findings of one rule at one seq (both values of a
    # claim, say); the judges name each (seq, rule, kind) once
    return sorted({(f.seq, f.rule, f.kind) for f in rec.findings
                   if not f.rule.startswith(NOT_COMPARED)}), rec.halted


def judge_view(events: Events) -> tuple[list[Finding], bool]:
    variant = events[0]["payload"]["variant"]
    verdict = referee_cr(events) if variant in ("classic", "r500") else referee_lm(events)
    return sorted({f for f in verdict.findings if not f[1].startswith(NOT_COMPARED)}), verdict.halted


def first(view: tuple[list[Finding], bool]) -> tuple[list[Finding], bool]:
    found, halted = view
    if not found:
        return [], halted
    return [f for f in found if f[0] == found[0][0]], halted


@pytest.fixture(scope="module")
def games() -> dict[str, list[tuple[Events, list[tuple[int, str]]]]]:
    return {v: [(ev, inj) for ev, _, inj in (corner_game(v, s) for s in seeds)]
            for v, seeds in SAMPLE.items()}


@pytest.mark.parametrize("variant", sorted(SAMPLE))
def test_clean_corner_games_are_clean_for_both(games, variant: str) -> None:
    for events, _ in games[variant]:
        assert engine_view(events) == ([], False), events[0]["game_id"]
        assert judge_view(events) == ([], False), events[0]["game_id"]


@pytest.mark.parametrize("variant", sorted(SAMPLE))
def test_corner_faults_agree(games, variant: str) -> None:
    kinds: Counter[str] = Counter()
    for events, _ in games[variant]:
        for kind, rule, log in corner_faults(events):
            kinds[kind] += 1
            ours, theirs = engine_view(log), judge_view(log)
            where = (kind, events[0]["game_id"], len(log))
            if rule is None:
                assert ours == theirs, where
                assert ours == ([], False), where
                continue
            assert first(ours) == first(theirs), where
            # "A|B": the spec names either (or both) for this fault
            assert set(rule.split("|")) & {f[1] for f in first(theirs)[0]}, where
    want = {
        "classic": {"fresh_double_press", "fresh_by_removed", "redeal_moved_dealer",
                    "redeal_wrong_count", "autoplay_wrong_strike", "removed_before_fourth",
                    "autoplay_on_deadline", "autoplay_1ms_early", "autoplay_at_fourth",
                    "move_on_deadline", "move_after_deadline", "first_player_leaves",
                    "first_player_leaves_next_discards", "fresh_stake_twice",
                    "fresh_stake_missing", "vote_then_leave_no_redeal", "autoplay_fresh_pending",
                    "autoplay_missing_draw", "autoplay_extra_draw", "restock_reordered",
                    "restock_missing_card", "restock_with_the_top"},
        "r500": {"single_pile_discarded", "deep_top_discarded", "deepest_unused",
                 "deepest_discarded", "bust_claimed", "bust_claimed_wrongly"},
        "liverpool": {"buy_wrong_penalty", "buy_buried", "buy_extra_legal", "buy_after_pile_draw",
                      "buy_after_out", "next_leaves_buy_before_draw", "next_leaves_buy_after_draw",
                      "buy_over_cap", "buy_by_leaver", "restock_reordered", "restock_missing_card",
                      "restock_with_the_top"},
        "michigan": {"widow_wrong_price", "widow_extra_legal", "dead_hand_play",
                     "due_player_leaves", "widow_by_leaver"},
    }[variant]
    assert want <= set(kinds), sorted(want - set(kinds))


def test_the_sample_reaches_the_rare_paths(games) -> None:
    """Guard on the generator: the slice still holds the corners it exists for."""
    seen: Counter[str] = Counter()
    for variant, played in games.items():
        for events, injected in played:
            seen.update(f"inj:{k}" for _, k in injected)
            redeals = 0
            for e in events:
                t, p = e["type"], e["payload"]
                if t == "RoundStarted" and p["redeal"]:
                    redeals += 1
                    seen["redeal"] += 1
                elif t == "PlayerRemoved":
                    seen[f"removed:{p['reason']}"] += 1
                elif t == "Drew" and len(p["cards"]) > 1:
                    seen["deep draw"] += 1
                elif t in ("AutoPlayed", "Bought", "RummyCalled", "WidowBought"):
                    seen[t] += 1
                elif t == "ChipsTransferred":
                    seen.update(f"chips:{x['reason'].split()[0]}" for x in p["transfers"])
                elif t == "GameEnded" and len(p["winners"]) == 1 and variant == "classic" \
                        and not any(x["type"] == "DeclaredRummy" for x in events):
                    seen["last player standing"] += 1
            if redeals >= 2:
                seen["two or more redeals"] += 1
    need = {"redeal": 30, "two or more redeals": 5, "removed:strikes": 10, "removed:left": 20,
            "AutoPlayed": 100, "inj:fresh_out": 10, "inj:leave_current": 3,
            "inj:leave_fresh_pending": 1, "deep draw": 100, "Bought": 40, "RummyCalled": 2,
            "WidowBought": 15, "chips:penalty": 3, "last player standing": 5}
    short = {k: (seen[k], n) for k, n in need.items() if seen[k] < n}
    assert not short, short
