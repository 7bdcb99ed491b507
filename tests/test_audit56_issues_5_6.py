"""Audit 56: acceptance re-check of issue 5 (Liverpool rummy) and issue 6 (Michigan rummy
with the three-in-one poker phase) on the current code, by a reviewer who did not write it.

Every point of both issues' Deliver text, its verdict and the evidence (commands run in
/tmp/audit56; earlier audits' tests that already pin a point are named, not repeated):

Issue 5 (Liverpool, RULES.md §3)
  L1  decks by player count (2 x 52 up to 5, 3 x 52 beyond): HOLDS. Stored clean games
      deal 104 / 104 / 156 cards for 2 / 5 / 8 players; simulated games of 2-8 players
      deal 104 for up to five players dealt in and 156 beyond (the count is over players dealt in,
      a documented decision; test_liverpool case_deck_size_six_players,
      test_audit24 test_lv_decks_are_counted_over_the_players_dealt_in).
  L2  2s wild, natural minimums (set >= 2, run >= 3): HOLDS (validate_meld probes: "5C 2H
      2S" -> LV-WILD, "3H 2C 2D 6H" -> LV-WILD, "5C 5D 2H 2S" clean; a 2 is never natural,
      documented).
  L3  six rounds, dealer moves left, 10/12-card deals: HOLDS (state_at after each deal of
      the stored 2/5/8-player games: hands of 10 in rounds 1-4, 12 in rounds 5-6, dealer one
      seat left each round, the player left of the dealer in turn, one card face up).
  L4  six contracts at once; sets distinct suits (config); runs >= 4: HOLDS (contract text
      per round in the states above; LV-CONTRACT cases in test_liverpool).
  L5  all-out duty rounds 5 and 6: HOLDS (test_liverpool test_round_5_*, test_round_6_*).
  L6  buy window (next player's priority, seat order, penalty = top stock card, max_buys,
      no buy after laying down, no buy-back): HOLDS. For 16,628 probe moments of simulated
      3/5/8-player games, Variant.can(Bought) is true exactly for entitled_buyers(); a
      penalty that is not the stock top halts C-HOLD.
  L7  lay-offs in later turns only; Rummy call; going out; scoring A/2 = 25, 3-9 = 5,
      T-K = 10; lowest total wins over six rounds: HOLDS (an independent scorer over
      simulated 2-8-player games gave the engine's scores and winners; can(RummyCalled)
      agrees with entitled_callers() at every probe).
  L8  who may act at each moment; a buy or call by the wrong player or after the window
      closed is LV-BUY / LV-RUMMY: HOLDS. `rummyguard replay lv5-1 clean-5p.jsonl --at 10
      --json`: in_turn lv5-p1, buy_window {card TS, entitled [lv5-p2, lv5-p3, lv5-p4]};
      --at 65: rummy_window {card KH, entitled [lv5-p4, lv5-p0, lv5-p1]}; pinned below over
      every move of the stored games.
  L9  legal moves with buys and calls: HOLDS (for every player at every move of simulated
      games, legal_moves is non-empty exactly for the players in to_act()).
  L10 a breaking log per rule ID, clean 2/5/8-player six-round games in tests/data, mutation
      tests: HOLDS (test_liverpool CASES + STORED; `rummyguard verify` of each stored
      breaking log gives its expected first finding, exit 1; the clean games verify clean).
  L11 replay benchmark covers it: HOLDS (pinned below at 10 games; RESULTS.md rows).

Issue 6 (Michigan, RULES.md §4)
  M1  antes (kitty: dealer 2, others 1; pay_ante on each pay card): HOLDS (clean-8p --at 1:
      kitty 9, each pay card 8; clean-4p-three-in-one with pay_ante 2: kitty 5, 8 per card).
  M2  all 52 dealt into hands + widow after the dealer: HOLDS (8 players: seven hands of 6,
      the dealer's and the widow 5).
  M3  widow bought in seat order: HOLDS as documented (to_act lists the offer order from
      left of the dealer; a purchase by any player while offered is accepted, since EVENTS.md
      has no refusal event).
  M4-M10  lowest-card duty and its penalty, following, stops and restarts with the right
      passing left, pay cards, kitty to the first out, roll-over, final split with the
      remainder from left of the last dealer: HOLDS. An independent chip referee written
      from §4 for this audit reproduced net and winners of 72 simulated games (3-8
      players, with and without three_in_one, pay_ante 3 / widow_price 2 / deals 2),
      with 1,907 penalties, 132 poker pots and 140 final splits among them (not pinned: the
      oracle of tests/oracle_liverpool_michigan.py already does this).
  M11 five-card evaluator: HOLDS (test_poker counts all 2,598,960 hands and 7,462
      values); pinned below: the order of all 7,462 classes equals an independent reading.
  M12 a play by a non-holder or a skipped holder names who should have played: HOLDS
      (MI-FOLLOW naming the holder; a play of a card the actor does not hold halts C-HOLD
      naming where the card is, a documented and tested reading).
  M13 legal moves, a breaking log per rule ID, clean multi-deal 3 and 8-player games,
      mutations: HOLDS (can(CardPlayed/WidowBought) equals legal_moves for 38,690 probes;
      stored logs verify to their expected findings through the CLI).
  M14 the interface carries Michigan without special cases in the core: HOLDS (pinned
      below: replay/engine.py names no variant).
  M15 replay benchmark covers it: HOLDS (pinned below).

Rule IDs of §3 and §4: every ID the engine reports (LV-CONTRACT, LV-WILD, LV-ALLOUT, LV-BUY,
LV-DRAW, LV-LAYOFF, LV-RUMMY, LV-DISCARD, LV-OUT; MI-DEAL, MI-WIDOW, MI-START, MI-FOLLOW,
MI-STOP, MI-END, MI-POKER) has a test that breaks it and expects it. The definitional ones
(LV-SCORE, MI-ANTE, MI-PAY, MI-OUT, MI-PENALTY) are broken by wrong claims and expected as
C-CLAIM, the documented decision (tests/data/michigan/mi-*-wrong-*.jsonl, test_liverpool).

Defects found: none.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections import Counter
from itertools import combinations, combinations_with_replacement, pairwise
from pathlib import Path

from oracle_liverpool_michigan import poker_rank

from rummyguard.events.cards import parse_cards
from rummyguard.replay.engine import GameEngine
from rummyguard.replay.rules.poker import evaluate

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
PLAYER_MOVES = {"Drew", "Discarded", "LaidDown", "LaidOff", "Bought", "RummyCalled",
                "WidowBought", "PokerHandDeclared", "CardPlayed"}


def _load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_every_move_of_the_stored_clean_games_was_made_by_a_player_the_replay_listed() -> None:
    """Issue 5: "a replay can say who was entitled to act at each moment"; issue 6: the holder
    of the next card plays. Before each move of the stored clean games, the mover is in
    ``to_act()``; in Liverpool a buyer is in the view's ``buy_window`` and a caller in its
    ``rummy_window``, and the view's in-turn player plus the open window's list is
    ``to_act()``."""
    files = [DATA / "liverpool" / f"clean-{n}p.jsonl" for n in (2, 5, 8)] + [
        DATA / "michigan" / f for f in ("clean-3p.jsonl", "clean-8p.jsonl", "clean-4p-three-in-one.jsonl")]
    seen = Counter()
    for path in files:
        engine = GameEngine(verify_hashes=False)
        for event in _load(path):
            state = engine.variant
            if state is not None and event["type"] in PLAYER_MOVES:
                to_act = state.to_act()
                assert event["actor"] in to_act, (path.name, event["seq"], to_act)
                if state.name == "liverpool":
                    view = state.snapshot()
                    window = view["buy_window"] or view["rummy_window"] or {"entitled": []}
                    assert [view["in_turn"], *window["entitled"]] == to_act, (path.name, event["seq"])
                    if event["type"] == "Bought":
                        assert event["actor"] in view["buy_window"]["entitled"]
                    if event["type"] == "RummyCalled":
                        assert event["actor"] in view["rummy_window"]["entitled"]
                seen[event["type"]] += 1
            engine.apply(event)
        assert engine.record().clean, path.name
    assert seen["Bought"] >= 50 and seen["RummyCalled"] >= 15 and seen["WidowBought"] >= 10


def test_cli_replay_json_names_who_may_buy_and_who_may_call() -> None:
    """Issue 5 through `rummyguard replay GAME FILE --at SEQ [--as P] --json`."""
    path = DATA / "liverpool" / "clean-5p.jsonl"
    cli = [sys.executable, "-m", "rummyguard.cli", "replay", "lv5-1", str(path), "--json"]
    buy = json.loads(subprocess.run([*cli, "--at", "10"], capture_output=True, check=True).stdout)
    assert buy["state"]["in_turn"] == "lv5-p1"  # p0 discarded TS, p1 drew from the stock
    assert buy["state"]["buy_window"] == {"card": "TS", "entitled": ["lv5-p2", "lv5-p3", "lv5-p4"]}
    seen = json.loads(subprocess.run([*cli, "--at", "10", "--as", "lv5-p3"], capture_output=True,
                                     check=True).stdout)
    assert seen["state"]["buy_window"] == buy["state"]["buy_window"]  # public knowledge
    call = json.loads(subprocess.run([*cli, "--at", "65"], capture_output=True, check=True).stdout)
    assert call["state"]["in_turn"] == "lv5-p3" and call["state"]["buy_window"] is None
    assert call["state"]["rummy_window"] == {"card": "KH", "entitled": ["lv5-p4", "lv5-p0", "lv5-p1"]}


def test_cli_replay_michigan_widow_offer_and_antes_at_the_deal() -> None:
    """Issue 6: antes (dealer 2) and pay-card antes; the widow offered in seat order from
    left of the dealer; 52 cards into eight hands and the widow after the dealer."""
    path = DATA / "michigan" / "clean-8p.jsonl"
    out = subprocess.run([sys.executable, "-m", "rummyguard.cli", "replay", "mi8-100", str(path),
                          "--at", "1", "--json"], capture_output=True, check=True)
    state = json.loads(out.stdout)["state"]
    assert state["phase"] == "widow" and state["dealer"] == "p1"
    assert state["to_act"] == ["p2", "p3", "p4", "p5", "p6", "p7", "p8", "p1"]
    assert state["pots"]["kitty"] == 9 and all(state["pots"][f"pay:{c}"] == 8 for c in ("JS", "QD", "KC", "AH"))
    sizes = [len(state["hands"][p]) for p in state["to_act"]]
    assert sizes == [6] * 7 + [5] and state["widow_count"] == 5


def test_poker_order_of_all_7462_classes_matches_an_independent_reading() -> None:
    """Issue 6: "a five-card poker evaluator (standard ranking, A high, A-2-3-4-5 straight
    allowed)": one hand per rank class (non-flush multisets and flush rank sets); the
    evaluator's keys sort them exactly as the independent referee's ranking
    (tests/oracle_liverpool_michigan.py ``poker_rank``, written from RULES.md MI-POKER) does,
    ties included."""
    ranks, suits = "23456789TJQKA", "CDHS"
    hands = []
    for combo in combinations_with_replacement(range(13), 5):
        if max(Counter(combo).values()) > 4:
            continue
        used: Counter[int] = Counter()
        hand = []
        for i, r in enumerate(combo):
            suit = used[r] if len(set(combo)) < 5 else i % 4
            hand.append(ranks[r] + suits[suit])
            used[r] += 1
        hands.append(hand)
    hands += [[ranks[r] + "H" for r in combo] for combo in combinations(range(13), 5)]
    project = [evaluate(parse_cards(h)) for h in hands]
    mine = [poker_rank(h) for h in hands]
    assert len(set(project)) == len(set(mine)) == 7462
    order = sorted(range(len(hands)), key=lambda i: project[i])
    assert all(mine[a] < mine[b] for a, b in pairwise(order))


def test_the_replay_core_names_no_variant() -> None:
    """Issue 6: "The interface must carry it without special cases in the core": the engine
    module holds no variant name outside comments and docstrings."""
    tree = ast.parse((ROOT / "replay" / "engine.py").read_text(encoding="utf-8"))
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef)
                  and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    names = {"classic", "r500", "liverpool", "michigan"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            assert not (set(re.findall(r"[a-z0-9]+", node.value.lower())) & names), node.value
        if isinstance(node, ast.Name | ast.Attribute):
            text = node.id if isinstance(node, ast.Name) else node.attr
            assert text.lower() not in names | {"liverpool", "michigan"}, text


def test_bench_replay_runs_at_its_smallest_size_for_liverpool_and_michigan(tmp_path: Path) -> None:
    """Issues 5 and 6: "the replay benchmark covers it". The harness at 10 games per variant,
    its corpus in a temporary folder, one core (no --record: RESULTS.md is not touched)."""
    code = (
        "import os, sys; sys.path.insert(0, sys.argv[1]); os.cpu_count = lambda: 1\n"
        "from pathlib import Path\nimport benchmarks.bench_replay as b\n"
        "b.WORK = Path(sys.argv[2])\n"
        "sys.argv = ['bench_replay', '--games', '10', '--variants', 'liverpool,michigan', '--repeat', '1']\n"
        "b.main()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RUMMYGUARD_PURE"}
    out = subprocess.run([sys.executable, "-c", code, str(ROOT), str(tmp_path)], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300, check=True)
    doc = json.loads(out.stdout)
    assert doc["command"] == "python -m benchmarks.bench_replay --games 10 --variants liverpool,michigan --repeat 1"
    for variant in ("liverpool", "michigan"):
        row = doc["variants"][variant]
        assert row["games"] == 10 and row["events"] > 100 and row["games_with_findings"] == 0
        assert row["replay_events_per_cpu_s"] > 0 and row["ratio_to_parse_cpu"] > 0


def test_results_md_records_liverpool_and_michigan_replay_rows_with_machine_and_command() -> None:
    """Issues 5 and 6: the replay benchmark's figures for both variants are recorded in
    benchmarks/RESULTS.md under a run naming its command and machine."""
    text = (ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    section = text[text.index("## Replay + verify"):]
    runs = re.split(r"\n### ", section)
    good = [run for run in runs
            if re.search(r"bench_replay[^`]*--variants [a-z0-9,]*liverpool,michigan", run)
            and re.search(r"core", run) and re.search(r"Python 3\.\d+", run)
            and re.search(r"\n\| liverpool \| [\d,]+ \|", run) and re.search(r"\n\| michigan \| [\d,]+ \|", run)]
    assert good, "no recorded replay run with Liverpool and Michigan rows, machine and command"
