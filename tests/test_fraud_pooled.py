"""Round 3 of the detector: pooled-evidence signals and the signature learner.

- The pooled pair signals (``tie_z``, ``take_z``, ``gain_z``) sum a pair's evidence in
  both directions against the population's null. A hand-built fact world checks the
  confound they remove: a feeder who plays *only* with his partner has no "toward
  others" baseline, so the old two-sample ``tie_t`` sees nothing there, while ``tie_z``
  grows with every game the pair plays — more evidence must mean a stronger signal.
- Michigan starts (``fraud.starts``): the hidden-card fact of a stops game, checked
  against a replay of a real Michigan game and its hidden owners.
- The signature learner is a candidate in the training-world cross-validation, and its
  signals are real feature columns; a model of an older format is refused.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from modelkit import coarse

from rummyguard.events.cards import parse_card
from rummyguard.fraud.facts import SCHEMAS, batch_facts, game_facts
from rummyguard.fraud.features import PAIR_FEATURES, PLAYER_FEATURES, pair_features, player_features
from rummyguard.fraud.models import (
    MODEL_VERSION,
    POOLED,
    POOLED_BELOW,
    SIGNATURES,
    FraudModel,
    ModelError,
    level_of,
    load_model,
    pair_columns,
)
from rummyguard.fraud.pipeline import memory_db
from rummyguard.sim.driver import Choice, Turn, play
from tests.test_fraud import make_world

T0 = 1_795_000_000_000


# -- a hand-built fact world --------------------------------------------------------------------
class Facts:
    """Rows per fact table, turned into Arrow tables with the real schemas."""

    def __init__(self) -> None:
        self.rows: dict[str, list[tuple[Any, ...]]] = {t: [] for t in SCHEMAS}

    def game(self, gid: str, seats: list[str], start: int, winner: str) -> None:
        for s, p in enumerate(seats):
            self.rows["player_games"].append(
                (gid, p, s, len(seats), "classic", "t", 10, start, start + 60_000, p == winner,
                 10 if p == winner else -10, 6.0, False, False, 0, 0, 20, False, 0))

    def discard(self, gid: str, seq: int, a: str, b: str, gain: int, tie_alt: float) -> None:
        self.rows["discards"].append((gid, seq, a, b, 1, 7, gain, tie_alt, 0, tie_alt, 3, 0, 0.0,
                                      True, False, None, None))

    def pickup(self, gid: str, seq: int, a: str, b: str, took: bool) -> None:
        self.rows["pickups"].append((gid, seq, a, "discard" if took else "stock", 1, 1, 1, 0, b))

    def con(self) -> duckdb.DuckDBPyConnection:
        tables = {}
        for t, schema in SCHEMAS.items():
            cols = list(zip(*self.rows[t], strict=True)) if self.rows[t] else [() for _ in schema]
            tables[t] = pa.Table.from_arrays(
                [pa.array(c, type=f.type) for c, f in zip(cols, schema, strict=True)], schema=schema)
        return memory_db(tables)


def feeding_world(n_together: int, seed: int = 0) -> duckdb.DuckDBPyConnection:
    """Honest heads-up pairs (free choices at random: excess +-0.5 around 0, pile cards of
    gain 1 taken 30 % of the time), plus a feeder pair a/b that plays only together: in
    each of its games a's free choices help b (gain 1 on 7 of 10 where the equal options
    averaged 0.5) and b takes a's gain-1 discards 8 times in 10."""
    rng = random.Random(seed)
    f = Facts()
    for h in range(40):
        c, d = f"h{h:02d}c", f"h{h:02d}d"
        for k in range(3):
            gid = f"hon-{h:02d}-{k}"
            f.game(gid, [c, d], T0 + (h * 3 + k) * 120_000, c if k % 2 else d)
            for i in range(10):
                f.discard(gid, 10 + 2 * i, c, d, rng.choice([0, 1]), 0.5)
                f.discard(gid, 11 + 2 * i, d, c, rng.choice([0, 1]), 0.5)
                f.pickup(gid, 40 + 2 * i, d, c, rng.random() < 0.3)
                f.pickup(gid, 41 + 2 * i, c, d, rng.random() < 0.3)
    for k in range(n_together):
        gid = f"feed-{k:03d}"
        f.game(gid, ["a", "b"], T0 + k * 120_000, "b")
        for i in range(10):
            f.discard(gid, 10 + i, "a", "b", 1 if i < 7 else 0, 0.5)
            f.pickup(gid, 40 + i, "b", "a", i < 8)
    return f.con()


def _pair(df: pl.DataFrame, p1: str, p2: str) -> dict[str, Any]:
    return df.filter((pl.col("p1") == p1) & (pl.col("p2") == p2)).row(0, named=True)


def test_pooled_feeding_grows_with_shared_games() -> None:
    """The lead-1 confound: a pair that only plays together. The two-sample tie_t has no
    third-party baseline (0), the pooled tie_z / take_z grow like sqrt(games)."""
    few = _pair(pair_features(feeding_world(4)), "a", "b")
    many = _pair(pair_features(feeding_world(36)), "a", "b")
    assert few["tie_t"] == 0 and many["tie_t"] == 0  # no discards of a toward anyone else
    assert 0 < few["tie_z"] < many["tie_z"]
    assert many["tie_z"] > 5 and many["take_z"] > 5
    # ~sqrt(36 / 4) = 3: a little less, as the population's null takes in some of the
    # feeder's own excess when he is a tenth of all discards
    assert 2.4 < many["tie_z"] / few["tie_z"] <= 3.0
    assert many["collude_z"] == pytest.approx((many["tie_z"] + many["take_z"]) / np.sqrt(2))
    # the honest pairs stay near the null: no drift with their shared games
    honest = pair_features(feeding_world(36)).filter(pl.col("p1").str.starts_with("h"))
    assert honest.height == 40
    assert abs(honest.get_column("tie_z").mean()) < 0.5  # type: ignore[arg-type]
    assert honest.get_column("tie_z").max() < many["tie_z"] / 2  # type: ignore[operator]
    assert honest.get_column("take_z").max() < many["take_z"] / 2  # type: ignore[operator]


def test_pooled_signals_point_at_the_planted() -> None:
    """make_world: p00/p01 feed each other, p03 sees every hand and the stock."""
    games, _ = make_world(1)
    con = memory_db(batch_facts(games))
    pairs = pair_features(con)
    for col in ("tie_z", "collude_z"):
        top = pairs.sort(col, descending=True, nulls_last=True).row(0, named=True)
        assert (top["p1"], top["p2"]) == ("p00", "p01"), col
    players = player_features(con)
    for col in ("hc_z", "stock_z"):
        top = players.sort(col, descending=True, nulls_last=True).row(0, named=True)
        assert top["player"] == "p03", col


# -- Michigan starts ------------------------------------------------------------------------------
class SeeingStarter:
    """Michigan: p0 starts the suit whose sequence reaches furthest (hidden owners);
    the others start their lowest card of a random allowed suit."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def __call__(self, turn: Turn) -> Choice | None:
        moves = turn.moves
        st: Any = turn.state
        kinds = [m[0] for m in moves]
        if "PokerHandDeclared" in kinds:
            return Choice(*moves[kinds.index("PokerHandDeclared")], 3000)
        plays = [m for m in moves if m[0] == "CardPlayed"]
        if not plays:
            return None if all(k == "WidowBought" for k in kinds) else Choice(*moves[0], 3000)
        seat = st.index[turn.player]
        cheap: dict[int, tuple[str, dict[str, Any]]] = {}
        for m in plays:
            c = parse_card(m[1]["card"])
            if c & 3 not in cheap or c < parse_card(cheap[c & 3][1]["card"]):
                cheap[c & 3] = m
        options = list(cheap.values())
        if turn.player == "p0" and len(options) > 1:
            def reach(m: tuple[str, dict[str, Any]]) -> int:
                c, n = parse_card(m[1]["card"]), 0
                while c < 52 and st.owner[c] >= 0:
                    n += st.owner[c] == seat
                    c += 4
                return n
            return Choice(*max(options, key=reach), 3000)
        return Choice(*self.rng.choice(options), 3000)


def test_michigan_starts_read_hidden_owners() -> None:
    """Each start row's reach is what the sequence really played before it stopped (the
    replay's next events), and the seeing starter's starts reach furthest."""
    rng = random.Random(3)
    games = [play("michigan", ["p0", "p1", "p2"], seed=100 + g, policy=SeeingStarter(rng),
                  game_id=f"mi-{g}", max_events=600, start_ms=T0 + g * 600_000)
             for g in range(6)]
    facts = batch_facts(games)
    starts = pl.from_arrow(facts["starts"])
    assert isinstance(starts, pl.DataFrame) and starts.height >= 20
    assert (starts.get_column("n_opt") >= 2).all()
    assert (starts.get_column("reach") >= starts.get_column("run")).all()
    assert (starts.get_column("reach") <= starts.get_column("reach_max")).all()
    # reach = the starter's own cards played from this start until the next start
    by_game = {g[0]["game_id"]: g for g in games}
    checked = 0
    for row in starts.head(30).iter_rows(named=True):
        events = by_game[row["game_id"]]
        plays = [e for e in events if e["type"] == "CardPlayed" and e["seq"] >= row["seq"]]
        run = [plays[0]]
        for e in plays[1:]:
            prev, card = parse_card(run[-1]["payload"]["card"]), parse_card(e["payload"]["card"])
            if card != prev + 4:
                break
            run.append(e)
        assert sum(e["actor"] == row["player"] for e in run) == row["reach"], row
        checked += 1
    assert checked >= 20
    mine = starts.filter(pl.col("player") == "p0")
    assert (mine.get_column("reach") == mine.get_column("reach_max")).all()
    players = player_features(memory_db(facts))
    top = players.sort("mi_tie_z", descending=True, nulls_last=True).row(0, named=True)
    assert top["player"] == "p0" and top["n_starts"] >= 5


def test_starts_only_for_michigan() -> None:
    """Meld games have no starts (their hidden-card facts are discards and draws)."""
    games, _ = make_world(2, n_games=3)
    assert all(game_facts(g)["starts"].num_rows == 0 for g in games)
    assert all(game_facts(g)["discards"].num_rows > 0 for g in games)


# -- models ------------------------------------------------------------------------------------------
def test_signatures_are_feature_columns() -> None:
    for mech, cols in SIGNATURES.items():
        pool = pair_columns() if level_of(mech) == "pair" else PLAYER_FEATURES
        assert set(cols) <= set(pool), mech
        assert len(set(cols)) == len(cols)
    assert {"tie_z", "take_z", "collude_z", "left_z"} <= set(PAIR_FEATURES)
    assert {"hc_z", "stock_z", "mi_tie_z"} <= set(PLAYER_FEATURES)


def test_signature_learner_is_a_candidate(tmp_path: Path) -> None:
    """With a dozen positives whose only trace is in their signature signals (bots:
    think_sd, think_sd_draw) and 40 noise columns, the training-world CV weighs
    the signature learner too, and the fitted model ranks the positives on top."""
    rng = np.random.default_rng(0)
    n = 400
    data = {c: rng.normal(size=n) for c in PLAYER_FEATURES}
    y = np.zeros(n, dtype=bool)
    y[:12] = True
    data["think_sd"] = np.where(y, 4.0, 0.0) + rng.normal(size=n)
    data["think_sd_draw"] = np.where(y, 3.0, 0.0) + rng.normal(size=n)
    players = pl.DataFrame({"player": [f"q{i:03d}" for i in range(n)], **coarse(data)})
    pairs = pl.DataFrame({"p1": ["q000"], "p2": ["q001"], **{c: [0.0] for c in PAIR_FEATURES}})
    model = FraudModel().fit(players, pairs, {"bot": {f"q{i:03d}" for i in range(12)}}, {})
    cv = model.trained_on["bot"]["cv_ap"]
    assert set(cv) == {"boosting", "logistic", "signature"}
    assert cv["signature"] > 0.8
    ps, _ = model.predict(players, pairs)
    top = set(ps.sort("bot", descending=True).head(12).get_column("player"))
    assert len(top & {f"q{i:03d}" for i in range(12)}) >= 11
    path = tmp_path / "m.joblib"
    model.save(path)
    assert load_model(path).predict(players, pairs)[0].equals(ps)
    old = FraudModel()
    old.version = MODEL_VERSION - 1
    old.save(path)
    with pytest.raises(ModelError, match=f"model format {MODEL_VERSION - 1}"):
        load_model(path)


def _hidden_card_world(n_pos: int, seed: int = 1) -> tuple[pl.DataFrame, pl.DataFrame, set[str]]:
    """Players whose hidden-card positives show in hc_lr (pooled) and, for all but the
    last, in stock_z too; the last is a 'Michigan-only' cheater: hc_lr and nothing else
    (his other signals missing), as a player of one context is."""
    rng = np.random.default_rng(seed)
    n = 600
    data: dict[str, Any] = {c: rng.normal(size=n) for c in PLAYER_FEATURES}
    y = np.zeros(n, dtype=bool)
    y[:n_pos] = True
    data["stock_z"] = np.where(y, 2.5, 0.0) + rng.normal(size=n)
    data["hc_lr"] = np.where(y, 3.5, 0.0) + rng.normal(size=n)
    players = pl.DataFrame({"player": [f"q{i:03d}" for i in range(n)], **coarse(data)})
    lone = f"q{n_pos - 1:03d}"
    players = players.with_columns(
        [pl.when(pl.col("player") == lone).then(None).otherwise(pl.col(c)).alias(c)
         for c in PLAYER_FEATURES if c != "hc_lr"]
        + [pl.when(pl.col("player") == lone).then(4.0).otherwise(pl.col("hc_lr")).alias("hc_lr")]
    )
    pairs = pl.DataFrame({"p1": ["q000"], "p2": ["q001"], **{c: [0.0] for c in PAIR_FEATURES}})
    return players, pairs, {f"q{i:03d}" for i in range(n_pos)}


def test_thin_hidden_card_positives_are_scored_by_the_pooled_z() -> None:
    """Fewer than POOLED_BELOW training positives: the hidden-card model is the pooled z
    alone (no cross-validation), its score increases with hc_lr, and the lone cheater
    with nothing but hc_lr ranks with the others."""
    players, pairs, pos = _hidden_card_world(12)
    assert POOLED_BELOW > 12 and POOLED["hidden_card"] == "hc_lr"
    model = FraudModel().fit(players, pairs, {"hidden_card": pos}, {})
    assert model.trained_on["hidden_card"]["learner"] == "pooled"
    assert "cv_ap" not in model.trained_on["hidden_card"]
    ps, _ = model.predict(players, pairs)
    ranked = ps.join(players.select("player", "hc_lr"), on="player").sort("hc_lr")
    scores = ranked.get_column("hidden_card").to_numpy()
    assert (np.diff(scores) >= -1e-12).all()  # monotone in the pooled z
    top = ps.sort("hidden_card", descending=True).head(15).get_column("player").to_list()
    assert "q011" in top


def test_many_hidden_card_positives_choose_a_learner_by_cross_validation() -> None:
    players, pairs, pos = _hidden_card_world(POOLED_BELOW + 5)
    model = FraudModel().fit(players, pairs, {"hidden_card": pos}, {})
    trained = model.trained_on["hidden_card"]
    # session 12: the pooled z races the learners instead of leaving the race
    assert set(trained["cv_ap"]) == {"boosting", "logistic", "signature", "pooled"}
    best = max(trained["cv_ap"].values())
    assert trained["cv_ap"][trained["learner"]] == best
