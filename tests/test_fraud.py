"""The fraud scan end to end on small planted worlds: facts, features, models, flags, CLI.

The worlds are played by the platform driver (sim.driver) with small policies written
here — honest greedy play, a card feeder who sees his partner's hand, a bot with
machine-regular timing, a hidden-card cheater who sees the stock — so each test knows
exactly what was planted and can assert that the scan points at it.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import orjson
import polars as pl
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.cards import format_card, parse_card
from rummyguard.events.store import EventStore
from rummyguard.fraud.facts import SCHEMAS, FactsFolderError, batch_facts, game_facts, read_facts_folder
from rummyguard.fraud.features import PAIR_FEATURES, PLAYER_FEATURES, pair_features, player_features
from rummyguard.fraud.handeval import FAMILIES, gain_vector
from rummyguard.fraud.labels import parse_labels
from rummyguard.fraud.models import FraudModel, ModelError, load_model
from rummyguard.fraud.pipeline import memory_db
from rummyguard.fraud.scan import scan_store, score_facts
from rummyguard.sim.driver import Choice, Turn, play

FAM = FAMILIES["classic"]


def _hand(turn: Turn, player: str) -> list[int]:
    st: Any = turn.state
    return st.hands[st.seat(player)]


def _next_player(turn: Turn) -> str:
    st: Any = turn.state
    return st.player(st.next_active(st.seat(turn.player)))


class Planted:
    """Greedy honest play, with optional planted behaviour per player."""

    def __init__(self, rng: random.Random, feeders: dict[str, str], bots: set[str],
                 cheats: set[str]) -> None:
        self.rng = rng
        self.feeders = feeders  # feeder -> receiver
        self.bots = bots
        self.cheats = cheats

    def think(self, player: str, difficulty: int) -> int:
        if player in self.bots:
            return int(self.rng.gauss(2000, 40))
        return int(self.rng.lognormvariate(7.6 + 0.08 * difficulty, 0.5))

    def __call__(self, turn: Turn) -> Choice:
        moves = [m for m in turn.moves if m[0] != "FreshPressed"]
        p = turn.player
        for kind, payload in moves:
            if kind == "DeclaredRummy":
                return Choice(kind, payload, self.think(p, 3))
        hand = list(_hand(turn, p))
        own = gain_vector(hand, FAM)
        draws = {m[1]["source"]: m for m in moves if m[0] == "Drew"}
        if draws:
            st: Any = turn.state
            take = "discard" if "discard" in draws and own[st.pile[-1]] >= 2 else "stock"
            if p in self.cheats and "discard" in draws and st.stock:
                take = "discard" if own[st.pile[-1]] > own[st.stock[-1]] else "stock"
            if take not in draws:
                take = next(iter(draws))
            kind, payload = draws[take]
            return Choice(kind, payload, self.think(p, 1))
        options = [parse_card(m[1]["card"]) for m in moves if m[0] == "Discarded"]
        keep = []
        for c in options:
            hand[c] -= 1
            keep.append(int(gain_vector(hand, FAM)[c]))
            hand[c] += 1
        cost = [k + self.rng.random() * 0.5 for k in keep]
        nxt = _next_player(turn)
        if self.feeders.get(p) == nxt:
            g = gain_vector(_hand(turn, nxt), FAM)
            cost = [cost[i] - 3 * g[c] for i, c in enumerate(options)]
        elif p in self.cheats:
            g = gain_vector(_hand(turn, nxt), FAM)
            cost = [cost[i] + 2 * g[c] for i, c in enumerate(options)]
        best = min(range(len(options)), key=cost.__getitem__)
        return Choice("Discarded", {"card": format_card(options[best])},
                      self.think(p, sum(1 for k in keep if k == 0)))


def make_world(seed: int, n_players: int = 16, n_games: int = 60) -> tuple[list[list[dict]], dict]:
    """A small world: games of 3-4 seats; p00->p01 feed, p02 is a bot, p03 sees cards."""
    rng = random.Random(seed)
    players = [f"p{i:02d}" for i in range(n_players)]
    feeders = {"p00": "p01", "p01": "p00"}
    policy = Planted(rng, feeders, {"p02"}, {"p03"})
    games = []
    for g in range(n_games):
        k = rng.choice([3, 4])
        seats = rng.sample(players, k)
        if g % 3 == 0 and "p00" not in seats:  # the feeders like sitting together
            seats[0], seats[1 % k] = "p00", "p01"
        if g % 4 == 0 and "p02" not in seats:
            seats[-1] = "p02"
        if g % 4 == 1 and "p03" not in seats:
            seats[-1] = "p03"
        seats = list(dict.fromkeys(seats))
        events = play("classic", seats, seed=seed * 1000 + g, policy=policy,
                      game_id=f"w{seed}-g{g:03d}", max_events=400, table_id=f"t{g % 5}",
                      start_ms=1_795_000_000_000 + g * 600_000,
                      connections={p: (f"ip-{p}", "dev-shared" if p in ("p04", "p05") else f"dev-{p}",
                                       "web") for p in seats})
        games.append(events)
    labels = {
        "seed": seed, "args": {}, "version": 1,
        "players": [{"player_id": p, "person_id": p, "skill": 0.5, "style": "casual",
                     "household": p, "is_bot": p == "p02"} for p in players],
        "mechanisms": [
            {"player_id": "p00", "mechanism": "card_feeding", "group_id": "f1", "intensity": 0.8,
             "role": "feeder"},
            {"player_id": "p01", "mechanism": "card_feeding", "group_id": "f1", "intensity": 0.8,
             "role": "receiver"},
            {"player_id": "p02", "mechanism": "bot", "group_id": "b1", "intensity": 1.0, "role": "bot"},
            {"player_id": "p03", "mechanism": "hidden_card", "group_id": "h1", "intensity": 0.7,
             "role": "cheater"},
            {"player_id": "p04", "mechanism": "multi_account", "group_id": "m1", "intensity": 0.5,
             "role": "member"},
            {"player_id": "p05", "mechanism": "multi_account", "group_id": "m1", "intensity": 0.5,
             "role": "member"},
        ],
        "hard_negatives": [], "planted": [], "faults": [],
    }
    return games, labels


@pytest.fixture(scope="module")
def world() -> tuple[list[list[dict]], dict]:
    return make_world(1)


@pytest.fixture(scope="module")
def facts_con(world: tuple[list[list[dict]], dict]) -> duckdb.DuckDBPyConnection:
    return memory_db(batch_facts(world[0]))


# -- facts -----------------------------------------------------------------------------------------
def test_game_facts_schema_and_content(world: tuple[list[list[dict]], dict]) -> None:
    events = world[0][0]
    tables = game_facts(events)
    assert set(tables) == set(SCHEMAS)
    for name, tbl in tables.items():
        assert tbl.schema == SCHEMAS[name]
    moves = tables["moves"].to_pylist()
    player_moves = [e for e in events if e["actor"] != "system" and e["type"] in ("Drew", "Discarded")]
    assert len([m for m in moves if m["type"] in ("Drew", "Discarded")]) == len(player_moves)
    # think time = ts of the move - ts of the previous event
    first = next(m for m in moves if m["type"] == "Discarded")
    i = next(i for i, e in enumerate(events) if e["seq"] == first["seq"])
    from rummyguard.events.timestamps import ts_millis
    assert first["think_ms"] == ts_millis(events[i]["ts"]) - ts_millis(events[i - 1]["ts"])
    seats = events[0]["payload"]["seats"]
    pg = tables["player_games"].to_pylist()
    assert [r["player"] for r in pg] == seats
    assert sum(r["net"] for r in pg) == 0  # rake 0: chips only move between players
    assert sum(r["won"] for r in pg) == 1
    flows = tables["chip_flows"].to_pylist()
    winner = next(r["player"] for r in pg if r["won"])
    assert {f["dst"] for f in flows} == {winner}
    assert sum(f["amount"] for f in flows) == pytest.approx(next(r["net"] for r in pg if r["won"]))
    sessions = tables["sessions"].to_pylist()
    assert {s["player"] for s in sessions} == set(seats)


def test_discard_rows_read_hidden_hands() -> None:
    """Replaying a hand-checked game: the discard's gain to the next seat is computed
    from that seat's hidden hand at that moment."""
    seen: list[tuple[int, str, int, int]] = []

    def policy(turn: Turn) -> Choice:
        moves = [m for m in turn.moves if m[0] != "FreshPressed"]
        kind, payload = moves[-1] if moves[-1][0] == "Discarded" else moves[0]
        if kind == "Discarded":
            nxt = _next_player(turn)
            card = parse_card(payload["card"])
            seen.append((len(turn.engine.ctx.findings), nxt, card,  # type: ignore[union-attr]
                         int(gain_vector(_hand(turn, nxt), FAM)[card])))
        return Choice(kind, payload, 1500)

    events = play("classic", ["a", "b", "c"], seed=5, policy=policy, max_events=60)
    rows = [r for r in game_facts(events)["discards"].to_pylist() if r["offset"] == 1]
    assert len(rows) >= 5
    for row, (_, nxt, card, gain) in zip(rows, seen, strict=False):
        assert (row["target"], row["card"], row["gain"]) == (nxt, card, gain)


def test_facts_are_deterministic(world: tuple[list[list[dict]], dict]) -> None:
    a = batch_facts(world[0][:5])
    b = batch_facts(world[0][:5])
    assert all(a[k].equals(b[k]) for k in a)


# -- features ------------------------------------------------------------------------------------------
def test_features_point_at_the_planted(facts_con: duckdb.DuckDBPyConnection) -> None:
    players = player_features(facts_con)
    pairs = pair_features(facts_con)
    assert set(PLAYER_FEATURES) <= set(players.columns)
    assert set(PAIR_FEATURES) <= set(pairs.columns)
    # bot: the most regular timing of all
    bot = players.sort("think_sd", nulls_last=True).row(0, named=True)
    assert bot["player"] == "p02"
    # feeders: the strongest feeding statistic of all pairs
    top = pairs.sort("feed_t", descending=True, nulls_last=True).row(0, named=True)
    assert (top["p1"], top["p2"]) == ("p00", "p01")
    assert top["co_lift"] > 1.5
    # multi-account: the only pair sharing a device
    shared = pairs.filter(pl.col("shared_devices") > 0)
    assert shared.select(["p1", "p2"]).rows() == [("p04", "p05")]
    # hidden-card cheater: his draws follow the hidden stock top
    informed = players.sort("stock_informed", descending=True, nulls_last=True).row(0, named=True)
    assert informed["player"] == "p03"


# -- models ---------------------------------------------------------------------------------------------
def test_model_fit_predict_save_load(tmp_path: Path, facts_con: duckdb.DuckDBPyConnection,
                                     world: tuple[list[list[dict]], dict]) -> None:
    truth = parse_labels(world[1])
    players = player_features(facts_con)
    pairs = pair_features(facts_con)
    model = FraudModel().fit(players, pairs, truth.player_pos, truth.pair_pos)
    assert "card_feeding" not in model.supervised  # one positive pair: too few to train on
    assert model.trained_on["card_feeding"]["positives"] == 1
    assert "any_pair" in model.supervised
    ps, qs = model.predict(players, pairs)
    assert ps.height == players.height and qs.height == pairs.height
    assert ((ps.get_column("anomaly") > 0) & (ps.get_column("anomaly") <= 1)).all()
    path = tmp_path / "m.joblib"
    model.save(path)
    again = load_model(path)
    ps2, _ = again.predict(players, pairs)
    assert ps2.equals(ps)
    again.sklearn_version = "0.0"
    again.save(path)
    with pytest.raises(ModelError, match=r"scikit-learn 0\.0"):
        load_model(path)
    # a model fitted when a feature meant something else (session 18: mi_reach_z redefined
    # under its name in features version 12) is refused, as is one that did not record it
    again.sklearn_version = model.sklearn_version
    again.features_version = 11
    again.save(path)
    with pytest.raises(ModelError, match=r"features version 11; this rummyguard computes"):
        load_model(path)
    del again.__dict__["features_version"]
    again.save(path)
    with pytest.raises(ModelError, match=r"not recorded"):
        load_model(path)
    path.write_bytes(b"not a model")
    with pytest.raises(ModelError, match="not a rummyguard model"):
        load_model(path)


def test_unsupervised_flags_carry_evidence(facts_con: duckdb.DuckDBPyConnection) -> None:
    _, _, _, _, flags = score_facts(facts_con, None)
    assert flags.height >= 1
    for row in flags.iter_rows(named=True):
        ev = orjson.loads(row["evidence"])
        sig = orjson.loads(row["signals"])
        assert sig, row
        if ev:
            assert row["replay"] == f"rummyguard replay {ev[0]['game_id']} --at {ev[0]['seq']}"
            # the evidence move exists in the facts and is the subject's own move
            got = facts_con.execute(
                "SELECT count(*) FROM fraud.moves WHERE game_id = ? AND seq = ?",
                [ev[0]["game_id"], ev[0]["seq"]]).fetchall()[0][0]
            assert got == 1 or row["mechanism"] == "multi_account"


# -- store + CLI ----------------------------------------------------------------------------------------
def _store(tmp_path: Path, games: list[list[dict]]) -> Path:
    path = tmp_path / "s.duckdb"
    with EventStore.open(path) as store:
        store.ingest_lines([orjson.dumps(e) for g in games for e in g])
    return path


def test_scan_writes_tables_views_and_parquet(tmp_path: Path, world: tuple[list[list[dict]], dict]) -> None:
    path = _store(tmp_path, world[0][:20])
    with EventStore.open(path) as store:
        res = scan_store(store, workers=0, parquet_dir=tmp_path / "pq")
        assert res.games == 20
        n_moves = store.con.execute("SELECT count(*) FROM moves").fetchall()[0][0]
        assert n_moves == res.fact_rows["moves"] > 0
        assert store.con.execute("SELECT count(*) FROM chip_flows").fetchall()[0][0] > 0
        assert store.con.execute("SELECT count(*) FROM flags").fetchall()[0][0] == res.flags.height
    assert sorted(p.name for p in (tmp_path / "pq").iterdir()) == sorted(
        f"{t}.parquet" for t in (*SCHEMAS, "flags"))  # the flags beside the facts (audit 38)
    assert pq.read_table(tmp_path / "pq" / "flags.parquet").num_rows == res.flags.height
    # a process pool gives the same facts as one process
    with EventStore.open(path) as store:
        res2 = scan_store(store, workers=2, batch_games=5)
        assert res2.fact_rows == res.fact_rows
        assert res2.flags.equals(res.flags)


def test_cli_scan_flags_eval(tmp_path: Path, world: tuple[list[list[dict]], dict]) -> None:
    runner = CliRunner()
    train_games, train_labels = world
    test_games, test_labels = make_world(2, n_games=40)
    db = _store(tmp_path, test_games)
    res = runner.invoke(app, ["scan", "--db", str(db), "--json", "--no-progress", "--workers", "0"])
    assert res.exit_code == 0, res.output
    out = orjson.loads(res.stdout)
    assert out["games"] == 40
    assert len(out["top_flags"]) == min(20, out["flags"])
    res = runner.invoke(app, ["flags", "--db", str(db), "--json", "--top", "3"])
    assert res.exit_code == 0, res.output
    listed = orjson.loads(res.stdout)
    assert listed["total"] == out["flags"] and len(listed["flags"]) == min(3, out["flags"])
    # eval: train on world 1, test on world 2, save the model, then scan with it
    for name, (games, labels) in {"train": (train_games, train_labels),
                                  "test": (test_games, test_labels)}.items():
        with open(tmp_path / f"{name}.jsonl", "wb") as fh:
            for g in games:
                for e in g:
                    fh.write(orjson.dumps(e) + b"\n")
        (tmp_path / f"{name}.labels.json").write_bytes(orjson.dumps(labels))
    model = tmp_path / "model.joblib"
    res = runner.invoke(app, [
        "eval", "--train", str(tmp_path / "train.jsonl"), "--train-labels", str(tmp_path / "train.labels.json"),
        "--test", str(tmp_path / "test.jsonl"), "--test-labels", str(tmp_path / "test.labels.json"),
        "--save-model", str(model), "--json", "--boots", "20", "--no-lomo", "--workers", "0"])
    assert res.exit_code == 0, res.output
    report = orjson.loads(res.stdout)
    bot = report["mechanisms"]["bot"]
    assert bot["unsupervised"]["positives"] == 1
    assert report["mechanisms"]["soft_play"] == {"level": "pair", "absent": True}
    assert model.exists()
    res = runner.invoke(app, ["scan", "--db", str(db), "--model", str(model), "--json", "--no-progress",
                              "--workers", "0"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["scan", "--db", str(db), "--model", str(tmp_path / "nope.joblib")])
    assert res.exit_code == 2 and "no model file" in res.output


def test_metrics_known_values() -> None:
    from rummyguard.fraud.evaluate import metrics, precision_at, recall_at_fpr

    y = np.array([True, True, False, False, False] + [False] * 195)
    s = np.array([0.9, 0.08, 0.8, 0.1, 0.05] + [0.0] * 195)
    assert precision_at(y, s, 2) == 0.5
    # 198 negatives: the 1 % FPR cut is the 2nd-highest negative (0.1); 0.08 falls below it
    assert recall_at_fpr(y, s, 0.01) == 0.5
    m = metrics(y, s, boots=50)
    assert m["pr_auc"] == pytest.approx((1 / 1 + 2 / 4) / 2)
    assert m["positives"] == 2 and len(m["pr_auc_ci"]) == 2


def test_hand_measures() -> None:
    from rummyguard.events.cards import parse_cards
    from rummyguard.fraud.handeval import meld_distance

    def hand(cards: list[str]) -> list[int]:
        h = [0] * 53
        for c in parse_cards(cards):
            h[c] += 1
        return h

    h = hand(["5H", "6H", "7H", "KS", "KD", "2C", "9D"])
    g = gain_vector(h, FAM)
    assert g[parse_card("KC")] == 2 and g[parse_card("8H")] == 2  # complete a set / extend a run
    assert g[parse_card("2D")] == 1 and g[parse_card("JC")] == 0  # a pair / nothing
    assert g[parse_card("5H")] == 0 and g[52] == 2  # a held duplicate / the joker
    assert meld_distance(h, FAM) == 4  # 5H6H7H melded; KS KD 2C 9D left
    assert meld_distance(hand(["5H", "6H", "7H", "KS", "KD", "2C", "9D", "JK"]), FAM) == 2
    r500 = FAMILIES["r500"]
    assert meld_distance(hand(["QH", "KH", "AH", "AS", "2S", "3S"]), r500) == 0  # ace high and low
    # classic: every card melds, but no run of 4 (CL-LONGRUN): not finished
    assert meld_distance(hand(["QH", "KH", "AH", "AS", "2S", "3S"]), FAM) == 1
    liverpool = FAMILIES["liverpool"]
    assert meld_distance(hand(["5H", "6H", "7H"]), liverpool) == 3  # runs need 4 there


def test_a_facts_folder_is_read_whole_and_refused_when_a_table_or_column_is_missing(tmp_path):
    """eval and build_builtin read facts folders through one function: a folder without a
    table, or written before a column existed, is refused with the table or column named."""
    import pyarrow as pa

    for name, schema in SCHEMAS.items():
        pq.write_table(schema.empty_table(), tmp_path / f"{name}.parquet")
    tables = read_facts_folder(tmp_path)
    assert set(tables) == set(SCHEMAS)
    assert all(tables[t].schema.names == SCHEMAS[t].names for t in SCHEMAS)

    old = pa.schema([f for f in SCHEMAS["starts"] if f.name != "held"])
    pq.write_table(old.empty_table(), tmp_path / "starts.parquet")
    with pytest.raises(FactsFolderError, match=r"older rummyguard \(no column starts\.held\)"):
        read_facts_folder(tmp_path)

    (tmp_path / "sessions.parquet").unlink()
    with pytest.raises(FactsFolderError, match=r"no fact table\(s\) sessions"):
        read_facts_folder(tmp_path)
