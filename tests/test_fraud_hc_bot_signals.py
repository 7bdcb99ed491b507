"""Hidden-card and bot signals that hold up on thin evidence (session 4, issue 8).

- ``hc_lr``: the log likelihood ratio "cheater of unknown intensity" vs honest over the
  player's independent hidden-card z's, each expected to shift by its per-decision effect
  times sqrt(decisions). Pinned here: it equals the formula computed independently in
  numpy from the features' own z's and counts; a z of 2.5 on 16 decisions outranks the
  same z on 400 (a cheater with 400 decisions would show far more); a z of 0 gives a
  negative log LR; the contexts add up; free-choice discards and the other next-seat
  discards are two contexts, each at its own shift (session 29; session 28 read the
  free choices only).
- ``think_sd_all``: the spread of log think time within each (variant, move kind), pooled
  over all of them. Pinned: a Michigan-only bot (card plays only: no Drew / Discarded,
  so ``think_sd`` is missing) reads as regular as a classic bot; a bot whose kinds have
  different typical lengths is not made irregular by that; a player of two moves is
  shrunk to the population's spread; abandoned turns, votes and long pauses are left out.
- the models: thin hidden-card training positives are scored by ``hc_lr``
  (``POOLED``); ``think_sd_all`` is a bot signature signal.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from factkit import facts_db
from modelkit import coarse

from rummyguard.fraud.features import PAIR_FEATURES, PLAYER_FEATURES, player_features
from rummyguard.fraud.models import POOLED, POOLED_BELOW, SIGNATURES, FraudModel

#: per-decision shift at intensity 1 (features.py, hcev) and the intensity grid (hcll)
D_STOCK, D_DISC, D_OTHER = 0.27, 0.39, 0.31
GRID = [0.05 + i * 2.95 / 19 for i in range(20)]


def _seat_rows(players: list[str], variant: str = "classic") -> list[dict[str, Any]]:
    """One game row per player (the features' player list comes from player_games)."""
    return [{"game_id": f"g-{p}", "player": p, "seat": 0, "n_seats": 2, "variant": variant,
             "stake": 10, "won": False, "net": -10, "deal_dist": 8.0, "left_game": False,
             "removed": False, "autoplays": 0, "fresh": 0, "moves": 10, "halted": False,
             "findings": 0} for p in players]


def _discards(player: str, xs: list[float], free: bool = True) -> list[dict[str, Any]]:
    """Next-seat discards whose other options would have helped the next player by ``x``
    more than the card he chose (``alt_gain - gain = x``). ``free``: the choice was free
    (two cards worth the same to him, the public record flat: ``tie_alt - gain = x`` too),
    the decisions ``hc_lr`` reads; otherwise one card was best for his own hand."""
    return [{"game_id": f"g-{player}", "seq": i + 1, "player": player, "target": "zz",
             "offset": 1, "card": 0, "gain": 0.0, "alt_gain": x, "keep_gain": 0.0,
             "tie_alt": x if free else 0.0, "tie_n": 2 if free else 1, "pub_gain": 0.0,
             "pub_tie_alt": 0.0, "pub_flat": free, "taken": False} for i, x in enumerate(xs)]


def _log_lr(terms: list[tuple[float, float]]) -> float:
    """Independent oracle: log of the mean over the grid of prod exp(mu z - mu^2 / 2),
    mu = t * w, for (z, w) pairs."""
    lls = [sum(t * w * z - (t * w) ** 2 / 2 for z, w in terms) for t in GRID]
    mx = max(lls)
    return mx + math.log(sum(math.exp(v - mx) for v in lls) / len(lls))


@pytest.fixture(scope="module")
def hc_world() -> dict[str, dict[str, Any]]:
    """An honest population (80 players, x = +-0.5 alternating: mean 0, sd 0.5) and four
    players: ``thin`` z ~ 2.5 on 16 discards, ``heavy`` z ~ 2.5 on 400, ``zero`` z ~ 0 on
    400, ``strong`` z ~ 10 on 400; ``both`` has the thin discards and stock draws too;
    ``feeder`` (x = -0.25 on 540) balances the others' excess, so the population's mean
    stays 0."""
    honest = [f"h{i:02d}" for i in range(80)]
    rows: list[dict[str, Any]] = []
    for p in honest:
        rows += _discards(p, [0.5 if i % 2 else -0.5 for i in range(40)])
    rows += _discards("thin", [0.3125] * 16)
    rows += _discards("heavy", [0.0625] * 400)
    rows += _discards("zero", [0.5 if i % 2 else -0.5 for i in range(400)])
    rows += _discards("strong", [0.25] * 400)
    rows += _discards("both", [0.3125] * 16)
    rows += _discards("feeder", [-0.25] * 540)
    # an excess on discards that were not free choices (one card best for his own hand),
    # and its mirror so the all-options population's mean stays 0
    rows += _discards("blunt", [0.25] * 400, free=False)
    rows += _discards("blunt_mirror", [-0.25] * 400, free=False)
    # stock draws: everyone draws the stock half the time whatever the hidden top is worth;
    # "both" draws the stock exactly when the hidden top is worth 2
    pickups: list[dict[str, Any]] = []
    for p in [*honest, "both"]:
        for i in range(24):
            sg = (i // 2) % 3
            st = (sg == 2) if p == "both" else bool(i % 2)
            pickups.append({"game_id": f"g-{p}", "seq": 100 + i, "player": p,
                            "source": "stock" if st else "discard", "ncards": 1, "gain": 0,
                            "pile_gain": 0, "stock_gain": sg, "from_player": "zz"})
    players = [*honest, "thin", "heavy", "zero", "strong", "both", "feeder", "blunt", "blunt_mirror"]
    f = player_features(facts_db(discards=rows, pickups=pickups, player_games=_seat_rows(players)))
    return {r["player"]: r for r in f.to_dicts()}


def _n_next(player: str) -> int:
    return {"thin": 16, "heavy": 400, "zero": 400, "strong": 400, "both": 16}[player]


def test_hc_lr_is_the_likelihood_ratio_of_the_features_own_z(hc_world: dict[str, Any]) -> None:
    for p in ("thin", "heavy", "zero", "strong"):
        r = hc_world[p]
        assert r["stock_z"] is None and r["mi_hb_z"] is None  # one context: discards
        expected = _log_lr([(r["hc_tie_z"], D_DISC * math.sqrt(_n_next(p)))])
        assert r["hc_lr"] == pytest.approx(expected, rel=1e-9, abs=1e-9)
    both = hc_world["both"]
    n_stock = 24
    expected = _log_lr([(both["hc_tie_z"], D_DISC * math.sqrt(16)),
                        (both["stock_z"], D_STOCK * math.sqrt(n_stock))])
    assert both["hc_lr"] == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_thin_evidence_outranks_the_same_z_on_heavy_evidence(hc_world: dict[str, Any]) -> None:
    thin, heavy = hc_world["thin"], hc_world["heavy"]
    # the same z (~2.5 / sd: the extra rows narrow the population's spread a little) ...
    assert thin["hc_tie_z"] == pytest.approx(heavy["hc_tie_z"], abs=0.05)
    assert 2.3 < thin["hc_tie_z"] < 3.2
    # ... is a mild cheater's on 16 decisions, less than any cheater's on 400
    assert thin["hc_lr"] > 1.0
    assert heavy["hc_lr"] < thin["hc_lr"] - 1.0
    assert hc_world["zero"]["hc_lr"] < 0  # no excess on heavy evidence: evidence against
    assert hc_world["strong"]["hc_lr"] > 10  # a consistent excess on heavy evidence
    assert hc_world["both"]["hc_lr"] > thin["hc_lr"]  # a second context adds evidence
    assert hc_world["h00"]["hc_lr"] < 1.0


def test_free_choices_and_other_discards_are_two_contexts(hc_world: dict[str, Any]) -> None:
    """Session 29: the next-seat discards part into free choices (``hc_tie_z`` over
    ``hc_tie_n``) and the rest (``hc_oth_z`` over ``hc_oth_n``: one card was best for his
    own hand), each against its own population and at its own shift. ``blunt`` spares the
    next player on 400 discards that were no free choice: no free-choice evidence, a
    strong other-discards z, and the ratio of that z alone at ``D_OTHER``; its mirror the
    same z negated, evidence against."""
    blunt, mirror = hc_world["blunt"], hc_world["blunt_mirror"]
    assert blunt["hc_tie_z"] is None and blunt["hc_tie_n"] == 0
    assert blunt["hc_oth_n"] == 400 and blunt["hc_oth_z"] > 5
    assert mirror["hc_oth_z"] == pytest.approx(-blunt["hc_oth_z"], rel=1e-9)
    assert blunt["hc_lr"] == pytest.approx(_log_lr([(blunt["hc_oth_z"], D_OTHER * math.sqrt(400))]),
                                           rel=1e-9)
    assert blunt["hc_lr"] > 10 and mirror["hc_lr"] < 0
    # the all-options z sees both kinds as one, as before
    assert blunt["hc_all_z"] > 5
    # free choices are not read twice: a free-choice player has no other-discards context
    strong = hc_world["strong"]
    assert strong["hc_tie_n"] == 400 and strong["hc_oth_n"] == 0 and strong["hc_oth_z"] is None
    assert strong["hc_lr"] > 10


def test_a_player_without_hidden_card_context_has_a_neutral_lr() -> None:
    f = player_features(facts_db(player_games=_seat_rows(["a", "b"], "michigan")))
    assert f.get_column("hc_lr").to_list() == [0.0, 0.0]


def _moves(player: str, variant: str, kinds: dict[str, float], n: int, sigma: float,
           seed: int) -> list[dict[str, Any]]:
    """``n`` moves per kind, log-normal think times around each kind's median."""
    rng = np.random.default_rng(seed)
    out = []
    for k, (kind, median) in enumerate(kinds.items()):
        for i, lt in enumerate(rng.normal(math.log(median), sigma, n)):
            out.append({"game_id": f"g-{player}", "seq": 1000 * k + i, "player": player,
                        "seat": 0, "variant": variant, "type": kind, "ts_ms": 0,
                        "think_ms": int(math.exp(lt)), "turn": i, "hand_size": 10,
                        "dist": 3, "difficulty": 1, "auto": False})
    return out


@pytest.fixture(scope="module")
def timing_world() -> dict[str, dict[str, Any]]:
    michigan = {"CardPlayed": 1900.0, "PokerHandDeclared": 9000.0}
    classic = {"Drew": 1500.0, "Discarded": 3000.0}
    moves = []
    for i in range(30):  # the population: people
        moves += _moves(f"h{i:02d}", "classic", classic, 30, 0.55, i)
    moves += _moves("mbot", "michigan", michigan, 60, 0.06, 100)
    moves += _moves("cbot", "classic", classic, 60, 0.06, 101)
    moves += _moves("mhuman", "michigan", michigan, 60, 0.55, 102)
    moves += _moves("two", "classic", {"Drew": 1500.0}, 2, 0.06, 103)
    # not routine decisions: a vote, a walk-out, an auto-play, a pause past the clock
    extra = [("FreshPressed", 5, False), ("PlayerLeft", 40_000, False),
             ("AutoPlayed", 90_000, True), ("Discarded", 45_000, False)]
    for j, (kind, ms, auto) in enumerate(extra):
        moves.append({"game_id": "g-cbot", "seq": 9000 + j, "player": "cbot", "seat": 0,
                      "variant": "classic", "type": kind, "ts_ms": 0, "think_ms": ms,
                      "turn": 99, "hand_size": 10, "dist": 3, "difficulty": 1, "auto": auto})
    players = [f"h{i:02d}" for i in range(30)] + ["mbot", "cbot", "mhuman", "two"]
    f = player_features(facts_db(moves=moves, player_games=_seat_rows(players)))
    return {r["player"]: r for r in f.to_dicts()}


def test_a_michigan_only_bot_is_regular(timing_world: dict[str, Any]) -> None:
    mbot, cbot, mhuman = timing_world["mbot"], timing_world["cbot"], timing_world["mhuman"]
    assert mbot["think_sd"] is None and mbot["think_sd_draw"] is None  # the old blind spot
    # shrunk by 3 moves toward ~0.55 over 118 degrees of freedom: ~0.11
    assert mbot["think_sd_all"] < 0.15
    assert cbot["think_sd_all"] < 0.15  # his vote, walk-out, auto-play and pause left out
    assert mhuman["think_sd_all"] > 0.45
    honest = [r["think_sd_all"] for p, r in timing_world.items() if p.startswith("h")]
    assert min(honest) > 0.45
    # the kinds' different typical lengths are not spread: the raw spread over all his
    # moves would be ~0.8 (ln 9000/1900 between the two kinds)
    assert mbot["think_sd_all"] < mhuman["think_sd_all"] / 3


def test_thin_timing_is_shrunk_to_the_population(timing_world: dict[str, Any]) -> None:
    # two regular moves (one degree of freedom) say little: close to the population's spread
    assert timing_world["two"]["think_sd_all"] > 0.4


def test_registration() -> None:
    assert "hc_lr" in PLAYER_FEATURES and "think_sd_all" in PLAYER_FEATURES
    assert "hc_lr" in SIGNATURES["hidden_card"]
    assert "think_sd_all" in SIGNATURES["bot"]
    assert POOLED["hidden_card"] == "hc_lr"


def test_thin_hidden_card_positives_are_scored_by_the_lr() -> None:
    """Fewer than POOLED_BELOW training positives: the hidden-card model is a calibrated,
    increasing map of hc_lr alone (hc_z, which the positives here do not show, is ignored)."""
    rng = np.random.default_rng(3)
    n, n_pos = 500, 10
    data: dict[str, Any] = {c: rng.normal(size=n) for c in PLAYER_FEATURES}
    y = np.zeros(n, dtype=bool)
    y[:n_pos] = True
    data["hc_lr"] = np.where(y, 6.0, -1.0) + rng.normal(size=n)
    players = pl.DataFrame({"player": [f"q{i:03d}" for i in range(n)], **coarse(data)})
    pairs = pl.DataFrame({"p1": ["q000"], "p2": ["q001"], **{c: [0.0] for c in PAIR_FEATURES}})
    pos = {f"q{i:03d}" for i in range(n_pos)}
    assert n_pos < POOLED_BELOW
    model = FraudModel().fit(players, pairs, {"hidden_card": pos}, {})
    assert model.trained_on["hidden_card"]["learner"] == "pooled"
    ps, _ = model.predict(players, pairs)
    ranked = ps.join(players.select("player", "hc_lr"), on="player").sort("hc_lr")
    assert (np.diff(ranked.get_column("hidden_card").to_numpy()) >= -1e-12).all()
    top = set(ps.sort("hidden_card", descending=True).head(n_pos).get_column("player"))
    assert len(top & pos) >= 9
