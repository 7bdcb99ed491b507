"""Michigan hidden-card starts, round 4: the ``starts`` fact names the start a player who
sees every hand picks (``hb``), and ``mi_hb_z`` pools how often a player chose it beyond
the population's rate for starts that looked the same.

- A hand-made deal (seats a, b, c, dealer c: a starts) where a's visibly best start (the
  longest run of his own cards) is not the one that plays the most of his cards before
  the stop, and where two starts reach equally far (the seeing pick takes the lower card).
- The pay-card part of the look: a pay card already played is no longer ahead.
- Games played by the simulator's own Michigan brain: a hidden-card cheater (intensity 1)
  against honest players. Every start the simulator labels as planted is the start the
  fact ranks first, and the cheater tops ``mi_hb_z``.
"""

from __future__ import annotations

import random
from typing import Any

import polars as pl
import pytest
from factkit import facts_db
from logkit import Log
from test_michigan_kit import michigan_deck

from rummyguard.events.cards import parse_card, parse_cards
from rummyguard.fraud.facts import SCHEMAS, _Observer, batch_facts, game_facts
from rummyguard.fraud.features import PLAYER_FEATURES, player_features
from rummyguard.fraud.models import SIGNATURES
from rummyguard.fraud.pipeline import memory_db
from rummyguard.replay.rules.michigan import PLAYED, WIDOW
from rummyguard.sim.agents import Act, Agent
from rummyguard.sim.brain_michigan import MichiganBrain
from rummyguard.sim.driver import Platform
from rummyguard.sim.timing import human_timing

# -- a hand-made deal ------------------------------------------------------------------------------
# a (seat 0) starts. His lowest card of each suit and where its sequence goes:
#   2C: 3C in the widow                      -> run 1, reach 1
#   2D 3D: 4D in the widow                    -> run 2, reach 2  (the visibly best start)
#   2H: 3H b, 4H a, 5H in the widow           -> run 1, reach 2
#   2S: 3S b, 4S c, 5S a, 6S a, 7S widow      -> run 1, reach 3  (the seeing player's start)
# Every pay card (JS QD KC AH) is still ahead of every 2: the pay part of the look is equal.
A = ["2C", "2D", "3D", "2H", "4H", "2S", "5S", "6S", "9C", "TC", "9D", "TD", "9H"]
PLACED = {"b": ["3H", "3S"], "c": ["4S"], "w": ["5H", "3C", "4D", "7S"]}


def _deal(a: list[str] = A) -> list[str]:
    """Fill b, c and the widow up to 13 cards each with the cards nobody placed."""
    used = set(parse_cards(a + [c for cs in PLACED.values() for c in cs]))
    rest = [c for c in range(52) if c not in used]
    hands = {k: list(v) for k, v in PLACED.items()}
    for card in rest:
        k = min(hands, key=lambda h: (len(hands[h]), "bcw".index(h)))
        hands[k].append(f"{'23456789TJQKA'[card >> 2]}{'CDHS'[card & 3]}")
    return michigan_deck([a, hands["b"], hands["c"], hands["w"]])


def _game(script: str, a: list[str] = A) -> list[dict[str, Any]]:
    log = Log("mi-hand")
    log.created("michigan", ["a", "b", "c"], dealer=2)
    log.round(_deal(a), dealer=2)
    for step in script.split():
        who, card = step.split(":")
        log.add("CardPlayed", who, {"card": card})
    return log.events


def _starts(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    table = pl.from_arrow(game_facts(events)["starts"])
    assert isinstance(table, pl.DataFrame)
    return table.sort("seq").to_dicts()


SPADES = "a:2S b:3S c:4S a:5S a:6S"  # stops at 7S (widow); a restarts, spades barred


def test_the_seeing_start_is_the_furthest_reach_not_the_longest_run() -> None:
    first, second = _starts(_game(SPADES + " a:2D a:3D"))
    # first start: a plays 2S, the start that plays most of his cards (3) though it looked
    # worse (run 1) than 2D (run 2); 2C and 2H looked exactly like it
    assert (first["seq"], first["player"], first["n_opt"], first["n_clean"]) == (2, "a", 4, 4)
    assert (first["run"], first["reach"], first["reach_max"]) == (1, 3, 3)
    assert first["hb"] is True
    assert (first["hb_run"], first["hb_pay"], first["hb_same"]) == (-1, 0, 2)
    # second start (spades barred): 2D and 2H both reach 2; the seeing pick is the lower
    # card, 2D, which is also the visibly best (run 2 against 1 and 1)
    assert (second["player"], second["n_clean"], second["run"], second["reach"]) == ("a", 3, 2, 2)
    assert second["hb"] is True
    assert (second["hb_run"], second["hb_pay"], second["hb_same"]) == (1, 0, 0)


def test_an_honest_looking_start_is_not_the_seeing_one() -> None:
    # a starts 2D, his visibly best start: reach 2 of a possible 3 (2S)
    (row,) = _starts(_game("a:2D a:3D"))
    assert (row["run"], row["reach"], row["reach_max"], row["hb"]) == (2, 2, 3, False)
    assert (row["hb_run"], row["hb_pay"], row["hb_same"]) == (-1, 0, 2)  # 2S's look, as above
    # after the spades, 2H reaches as far as 2D but is not the seeing pick (the lower card is)
    rows = _starts(_game(SPADES + " a:2H b:3H a:4H"))
    assert (rows[1]["reach"], rows[1]["reach_max"], rows[1]["hb"]) == (2, 2, False)


def test_look_alike_starts_match_the_run_and_his_cards_in_the_suit() -> None:
    """``tie_n`` / ``tie_reach``: the starts that looked the same to him. With the deal
    above, 2C, 2H and 2S each show a run of 1 and 3 of his cards in the suit: 2S (reach 3)
    is compared with all three (mean reach 2), the hidden-card pattern. Move his 9H to 9S
    and spades hold 4 of his cards against 3 and 2: an honest player may start the suit he
    holds most of, and that start has no look-alike to be compared with (session 15: by
    the run alone, such a start read as reaching further than its look-alikes)."""
    (row,) = _starts(_game("a:2S"))
    assert (row["run"], row["reach"], row["tie_n"], row["tie_reach"]) == (1, 3, 3, 2.0)
    more_spades = [c if c != "9H" else "9S" for c in A]
    (row,) = _starts(_game("a:2S", more_spades))
    assert (row["run"], row["reach"], row["tie_n"], row["tie_reach"]) == (1, 3, 1, 3.0)
    (row,) = _starts(_game("a:2C", more_spades))  # 2C: run 1, 3 clubs; 2H: run 1, 2 hearts
    assert (row["run"], row["reach"], row["tie_n"], row["tie_reach"]) == (1, 1, 1, 1.0)


def test_a_dearer_start_is_an_option_but_never_the_seeing_pick() -> None:
    # a starts 3D (not his lowest diamond: MI-PENALTY): five options, four clean
    (row,) = _starts(_game("a:3D"))
    assert (row["n_opt"], row["n_clean"], row["hb"]) == (5, 4, False)


def test_a_played_pay_card_is_no_longer_ahead() -> None:
    """The pay part of the look: the suit's pay card still to be played above the start.
    With 5S a pay card and already played, a spade start below it no longer has it ahead."""
    owner = [WIDOW] * 52
    seat = 0
    for c in parse_cards(["2S", "3S", "2H", "3H"]):
        owner[c] = seat
    pay = tuple(parse_cards(["5S", "AH"]))
    measured = {parse_card("2S"): (2, 2), parse_card("2H"): (2, 2)}
    clean = sorted(measured)
    # both look the same (run 2, pay ahead): the seeing pick is the lower card, 2H
    assert _Observer._seeing_start(parse_card("2H"), clean, measured, owner, pay) == (True, 0, 0, 1)
    owner[parse_card("5S")] = PLAYED
    # 5S played: 2S has no pay card ahead any more; 2H (AH ahead) now looks better
    measured[parse_card("2S")] = (2, 3)  # and 2S reaches further: the seeing pick
    assert _Observer._seeing_start(parse_card("2H"), clean, measured, owner, pay) == (False, 0, -1, 0)
    assert _Observer._seeing_start(parse_card("2S"), clean, measured, owner, pay) == (True, 0, -1, 0)


def test_schema_and_feature_registration() -> None:
    names = SCHEMAS["starts"].names
    assert names[-6:] == ["n_clean", "hb", "hb_run", "hb_pay", "hb_same", "held"]
    assert "mi_hb_z" in PLAYER_FEATURES and "mi_hb_z" in SIGNATURES["hidden_card"]


def test_held_counts_his_cards_of_the_chosen_suit_from_the_start_up() -> None:
    """``held``: what he sees of the suit he started. 2S: 2S 5S 6S (3); 2D: 2D 3D 9D TD
    (4); a dearer 3D start counts from 3D up (3)."""
    assert _starts(_game("a:2S"))[0]["held"] == 3
    assert _starts(_game("a:2D"))[0]["held"] == 4
    assert _starts(_game("a:3D"))[0]["held"] == 3


# -- mi_reach_z: the hidden part of the reach, given the cards he sees above the run ----------
def _seat_rows(players: list[str], seats: int = 3) -> list[dict[str, Any]]:
    return [{"game_id": f"g-{p}", "player": p, "seat": 0, "n_seats": seats, "variant": "michigan",
             "stake": 10, "won": False, "net": -10, "deal_dist": 8.0, "left_game": False,
             "removed": False, "autoplays": 0, "fresh": 0, "moves": 10, "halted": False,
             "findings": 0} for p in players]


def _start_rows(player: str, looks: list[tuple[int, int, int]], options_hidden: float
                ) -> list[dict[str, Any]]:
    """His starts as ``(run, held, reach)``, each against options whose mean hidden part
    (reach - run) is ``options_hidden``."""
    return [{"game_id": f"g-{player}", "seq": i + 1, "player": player, "n_opt": 3, "run": run,
             "reach": reach, "reach_mean": 1.0 + options_hidden, "reach_max": reach,
             "run_mean": 1.0, "tie_n": 1, "tie_reach": float(reach), "n_clean": 3, "hb": False,
             "hb_run": 0, "hb_pay": 0, "hb_same": 0, "held": held}
            for i, (run, held, reach) in enumerate(looks)]


def test_a_player_who_starts_the_suit_he_holds_most_of_is_not_hidden_card_evidence() -> None:
    """Session 16's open doubt, fixed in session 18 (features version 12). Cards of his
    above the visible run are what a hidden reach is made of: with one such card a start
    reaches one card further half the time, with four cards three further. An honest player
    who always starts the suit he holds most of (``long``) has four above the run where his
    other options have one: against his options (the old ``mi_reach_z``) that was a
    hidden-card z of 3.3 here. Against the starts with as many cards above the run, it is
    chance. A player who sees the hands (``seer``) reaches further than his cards above the
    run explain, and stands out."""
    honest = [f"h{i}" for i in range(40)]
    rows: list[dict[str, Any]] = []
    for n, p in enumerate(honest):  # half the starts with one card above the run, half four
        rows += _start_rows(p, [(1, 2, 1 + (n + k) % 2) for k in range(6)]
                            + [(1, 5, 2 + (n + k) % 3) for k in range(6)], 0.5)
    rows += _start_rows("long", [(1, 5, 2 + k % 3) for k in range(24)], 0.5)
    rows += _start_rows("seer", [(1, 2, 2) for _ in range(12)] + [(1, 5, 5) for _ in range(12)], 1.5)
    f = player_features(facts_db(starts=rows, player_games=_seat_rows([*honest, "long", "seer"])))
    z = dict(zip(f.get_column("player"), f.get_column("mi_reach_z"), strict=True))
    assert abs(z["long"]) < 1.0, z["long"]
    assert z["seer"] > 5.0, z["seer"]
    assert max(abs(z[p]) for p in honest) < 2.0
    # the old statistic, his hidden part against his options', read him as a cheater
    old = sum((r["reach"] - r["run"]) - (r["reach_mean"] - r["run_mean"]) for r in rows
              if r["player"] == "long")
    assert old / 24 > 1.0


def test_a_player_at_bigger_tables_is_compared_with_bigger_tables() -> None:
    """More hands dealt, fewer cards dead in the widow: sequences run further at a table
    of six than of three. A player who always sits at six-seat tables (``big``) reaches
    as far as the other six-seat players, and is compared with them, not with everyone."""
    small = [f"s{i}" for i in range(30)]
    large = [f"l{i}" for i in range(30)]
    rows: list[dict[str, Any]] = []
    for n, p in enumerate(small):
        rows += _start_rows(p, [(1, 3, 1 + (n + k) % 2) for k in range(10)], 0.5)
    for n, p in enumerate(large):
        rows += _start_rows(p, [(1, 3, 2 + (n + k) % 2) for k in range(10)], 0.5)
    rows += _start_rows("big", [(1, 3, 2 + k % 2) for k in range(20)], 0.5)
    f = player_features(facts_db(starts=rows, player_games=_seat_rows(small)
                                 + _seat_rows([*large, "big"], seats=6)))
    z = dict(zip(f.get_column("player"), f.get_column("mi_reach_z"), strict=True))
    assert abs(z["big"]) < 1.0, z["big"]


def test_a_start_with_nothing_above_the_run_carries_no_hidden_part() -> None:
    """Every card of his in the suit is in the visible run: the reach is the run, there is
    nothing hidden to know, and the statistic is 0, not a division by a floor variance."""
    rows = _start_rows("a", [(2, 2, 2)] * 5, 0.0) + _start_rows("b", [(1, 3, 2)] * 5, 0.0)
    f = player_features(facts_db(starts=rows, player_games=_seat_rows(["a", "b"])))
    z = dict(zip(f.get_column("player"), f.get_column("mi_reach_z"), strict=True))
    assert z["a"] == 0.0


# -- the simulator's own brain ---------------------------------------------------------------------
SEATS = ["p0", "p1", "p2", "p3"]
SKILL = {"p0": 1.0, "p1": 0.3, "p2": 0.6, "p3": 0.9}


def _agents(game: int) -> dict[str, Agent]:
    agents = {}
    for i, pid in enumerate(SEATS):
        rng = random.Random(1000 * game + i)
        acts = {}
        if pid == "p0":  # sees every hand and uses it at every start (intensity 1)
            acts["hidden_card"] = Act("hidden_card", "hi1", 1.0, "cheater")
        agents[pid] = Agent(pid, SKILL[pid], "steady", human_timing(rng, SKILL[pid]), rng,
                            MichiganBrain(), acts=acts)
    return agents


@pytest.fixture(scope="module")
def simulated() -> tuple[list[list[dict[str, Any]]], set[tuple[str, int]]]:
    games, planted = [], set()
    for g in range(6):
        order = SEATS[g % 4:] + SEATS[:g % 4]  # the cheater in every seat in turn
        platform = Platform(f"sim-{g}", "michigan", order, seed=500 + g, dealer=g % 3,
                            start_ms=1_795_000_000_000 + g * 900_000)
        games.append(platform.run(_agents(g)))
        planted |= {(f"sim-{g}", seq) for seq, pid, mech in platform.planted
                    if mech == "hidden_card" and pid == "p0"}
    return games, planted


def test_every_planted_start_is_the_one_the_fact_ranks_first(simulated: Any) -> None:
    games, planted = simulated
    starts = pl.from_arrow(batch_facts(games)["starts"])
    assert isinstance(starts, pl.DataFrame)
    assert len(planted) >= 10
    keyed = {(r["game_id"], r["seq"]): r for r in starts.to_dicts()}
    for key in sorted(planted):
        row = keyed[key]  # a planted start is a start row
        assert row["player"] == "p0" and row["hb"] and row["reach"] == row["reach_max"], row
    # the cheater (skill 1, intensity 1) takes the seeing start every time he has a choice
    mine = starts.filter((pl.col("player") == "p0") & (pl.col("n_clean") >= 2))
    assert mine.height >= 30 and mine.get_column("hb").all()
    # honest players do not: they go by what they see
    honest = starts.filter((pl.col("player") != "p0") & (pl.col("n_clean") >= 2))
    assert honest.height >= 60
    assert honest.get_column("hb").mean() < 0.85  # type: ignore[operator]


def test_the_cheater_tops_mi_hb_z(simulated: Any) -> None:
    games, _ = simulated
    players = player_features(memory_db(batch_facts(games)))
    z = dict(zip(players.get_column("player"), players.get_column("mi_hb_z"), strict=True))
    assert max(z, key=lambda p: z[p]) == "p0"
    assert z["p0"] > 3.0
    assert all(z[p] < 1.5 for p in SEATS[1:]), z
    hc = dict(zip(players.get_column("player"), players.get_column("hc_z"), strict=True))
    assert hc["p0"] == pytest.approx(z["p0"])  # Michigan only: hc_z is his start evidence
