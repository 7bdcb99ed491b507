"""The fraud scan's hand measures, free-choice and public-record discard facts, round
ends, streaming input, determinism, the evaluation's ring and evidence metrics, and the
eval command's one-line errors.

Reference values are recomputed independently here: the meld gain by a numpy pass over
the 13x4 rank/suit grid (the first implementation, kept as the oracle), and the
discard facts by replaying each game event by event and reading the hidden hands.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import polars as pl
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.cards import JOKER, NCARDS, parse_card
from rummyguard.fraud.evaluate import World, evidence_precision, ring_metrics
from rummyguard.fraud.facts import batch_facts, batch_facts_raw, game_facts
from rummyguard.fraud.handeval import (
    FAMILIES,
    Family,
    gain_masks,
    gain_of,
    gain_vector,
    hand_masks,
    own_values,
)
from rummyguard.fraud.labels import parse_labels
from rummyguard.fraud.pipeline import jsonl_game_batches, memory_db, run_facts
from rummyguard.fraud.scan import score_facts
from rummyguard.replay.engine import GameEngine
from tests.test_fraud import make_world

ACE = 12


def reference_gain(hand: list[int], fam: Family) -> np.ndarray:
    """The meld gain of each card by a numpy pass (the oracle for the bit-mask code)."""
    counts = np.asarray(hand[:52], dtype=np.int16).reshape(13, 4)
    held = counts > 0
    natural = held.copy()
    if fam.wild_rank is not None:
        natural[fam.wild_rank, :] = False
    per_rank = natural.sum(axis=1, keepdims=True)
    others = per_rank - natural
    set_gain = np.where(others == 2, 2, np.where((others == 1) | (others == 3), 1, 0))
    k = fam.run_min
    ladder = np.vstack([natural[ACE:ACE + 1], natural]).astype(np.int16)
    pad = np.zeros((k - 1, 4), dtype=np.int16)
    lp = np.vstack([pad, ladder, pad])
    csum = np.vstack([np.zeros((1, 4), dtype=np.int16), np.cumsum(lp, axis=0)])
    windows = csum[k:] - csum[:-k]
    best = np.zeros((14, 4), dtype=np.int16)
    for off in range(k):
        w = windows[off:off + 14] - ladder
        best = np.maximum(best, np.where(w >= k - 1, 2, np.where(w >= max(k - 2, 1), 1, 0)))
    run_gain = best[1:14].copy()
    run_gain[ACE] = np.maximum(run_gain[ACE], best[0])
    gain = np.maximum(set_gain, run_gain)
    gain[held] = 0
    out = np.zeros(NCARDS, dtype=np.int8)
    out[:52] = gain.reshape(52)
    if fam.wild_rank is not None:
        out[fam.wild_rank * 4:fam.wild_rank * 4 + 4] = 2
    if fam.jokers_wild:
        out[JOKER] = 2
    return out


@pytest.mark.parametrize("family", ["classic", "r500", "liverpool"])
def test_gain_masks_match_the_numpy_oracle(family: str) -> None:
    fam = FAMILIES[family]
    rng = random.Random(family)
    for _ in range(1500):
        hand = [0] * NCARDS
        for _ in range(rng.randint(0, 16)):
            hand[rng.randrange(53 if fam.jokers_wild else 52)] += 1
        want = reference_gain(hand, fam)
        assert (gain_vector(hand, fam) == want).all(), hand
        masks = gain_masks(hand, fam)
        for c in range(52):
            if not hand[c]:
                assert gain_of(masks, c, fam) == want[c]
        nat, _ = hand_masks(hand, fam)
        for card, value in own_values(nat, fam).items():
            rest = list(hand)
            rest[card] = 0
            assert value == reference_gain(rest, fam)[card], (hand, card)


def test_discard_facts_recomputed_from_hidden_hands() -> None:
    """Every discard row's gain, option means (all options, equal-value options) and
    public-record gain, recomputed here from the hidden hands at that event."""
    games, _ = make_world(3, n_games=6)
    fam = FAMILIES["classic"]
    checked = 0
    for events in games:
        rows = {(r["seq"], r["target"]): r for r in game_facts(events)["discards"].to_pylist()}
        public: dict[str, dict[int, int]] = {}
        engine = GameEngine(verify_hashes=False)
        for ev in events:
            before = [list(h) for h in engine.variant.hands] if engine.variant is not None and \
                hasattr(engine.variant, "hands") else None
            engine.apply(ev)
            if ev["type"] == "RoundStarted":
                public = {}
            if ev["type"] == "Drew" and ev["payload"]["source"] == "discard":
                for c in ev["payload"]["cards"]:
                    known = public.setdefault(ev["actor"], {})
                    known[parse_card(c)] = known.get(parse_card(c), 0) + 1
            if ev["type"] != "Discarded" or before is None:
                continue
            st: Any = engine.variant
            seats = st.ctx.seats
            me = seats.index(ev["actor"])
            card = parse_card(ev["payload"]["card"])
            own = before[me]
            options = [c for c in range(52) if own[c]]
            value = {}
            for c in options:
                rest = list(own)
                rest[c] = 0
                value[c] = int(reference_gain(rest, fam)[c])
            tie = [c for c in options if value[c] == value[card]]
            for target in seats:
                if target == ev["actor"] or (ev["seq"], target) not in rows:
                    continue
                row = rows[(ev["seq"], target)]
                hidden = st.hands[seats.index(target)]
                g = reference_gain(hidden, fam)
                assert row["gain"] == g[card]
                assert row["alt_gain"] == pytest.approx(np.mean([g[c] for c in options]), abs=1e-5)
                assert row["keep_gain"] == value[card]
                assert row["tie_n"] == len(tie)
                assert row["tie_alt"] == pytest.approx(np.mean([g[c] for c in tie]), abs=1e-5)
                pub = [0] * NCARDS
                for c in public.get(target, {}):
                    if hidden[c]:
                        pub[c] = 1
                pg = reference_gain(pub, fam) if any(pub) else np.zeros(NCARDS, dtype=np.int8)
                assert row["pub_gain"] == (pg[card] if any(pub) else 0)
                assert row["pub_flat"] == (len({int(pg[c]) for c in tie}) == 1)
                checked += 1
            known = public.get(ev["actor"], {})
            if known.get(card):
                known[card] -= 1
                if not known[card]:
                    del known[card]
    assert checked > 100


@pytest.mark.parametrize(("variant", "games"), [("r500", 3), ("liverpool", 2)])
def test_round_ends_in_a_points_variant(variant: str, games: int) -> None:
    """Simulated r500 and Liverpool games through the facts: every round end names the
    move that ended it, and the platform's claim that follows agrees."""
    from rummyguard.sim.world import WorldConfig, build_world, run_world

    chunks: list[bytes] = []
    run_world(build_world(WorldConfig(games=games, seed=11, variants=(variant,), players=4)),
              chunks.append)
    lines = [ln for ln in b"".join(chunks).decode().splitlines() if ln]
    _, batches = jsonl_game_batches_from_lines(lines)
    tables = run_facts(batches, workers=0)
    ends = tables["round_ends"].to_pylist()
    assert ends
    events = [orjson.loads(ln) for ln in lines]
    by_seq = {(e["game_id"], e["seq"]): e for e in events}
    rounds: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in ends:
        rounds.setdefault((r["game_id"], r["seq"]), []).append(r)
        assert (r["cards_left"] == 0) == (r["points_left"] == 0)
    went_out = 0
    for (gid, seq), rows in rounds.items():
        ev = by_seq[(gid, seq)]
        assert rows[0]["ender"] == (ev["actor"] if ev["actor"] != "system" else None)
        ender = [r for r in rows if r["player"] == rows[0]["ender"]]
        went_out += bool(ender and ender[0]["cards_left"] == 0)
        # the platform's next claim or move is the round's end: it agrees the round ended
        k = seq + 1
        while by_seq[(gid, k)]["type"] in ("ChipsTransferred", "PlayerConnected",
                                            "PlayerDisconnected"):
            k += 1
        assert by_seq[(gid, k)]["type"] == "RoundEnded"
    assert went_out >= 1


def jsonl_game_batches_from_lines(lines: list[str]) -> tuple[int, Any]:
    games: dict[str, list[str]] = {}
    for ln in lines:
        games.setdefault(orjson.loads(ln)["game_id"], []).append(ln)
    return len(games), iter([list(games.values())])


def test_jsonl_streaming_matches_grouping(tmp_path: Path) -> None:
    games, _ = make_world(4, n_games=8)
    lines = [orjson.dumps(e) for g in games for e in g]
    contiguous = tmp_path / "a.jsonl"
    contiguous.write_bytes(b"\n".join(lines) + b"\n")
    shuffled = tmp_path / "b.jsonl"
    mixed = list(lines)
    random.Random(0).shuffle(mixed)  # games interleaved (seq order broken too: sorted back)
    by_game: dict[str, list[bytes]] = {}
    for ln in mixed:
        by_game.setdefault(orjson.loads(ln)["game_id"], []).append(ln)
    interleaved = [ln for row in itertools.zip_longest(*[sorted(v, key=lambda x: orjson.loads(x)["seq"])
                                                         for v in by_game.values()])
                   for ln in row if ln is not None]
    shuffled.write_bytes(b"\n".join(interleaved) + b"\n")
    n1, b1 = jsonl_game_batches([contiguous], batch_games=3)
    n2, b2 = jsonl_game_batches([shuffled], batch_games=3)
    first = list(b1)
    assert n1 == n2 == 8 and [len(b) for b in first] == [3, 3, 2]
    c1, c2 = memory_db(run_facts(iter(first), workers=0)), memory_db(run_facts(b2, workers=0))
    for table in ("moves", "discards", "player_games"):
        a = c1.execute(f"SELECT * FROM fraud.{table}").fetchall()
        b = c2.execute(f"SELECT * FROM fraud.{table}").fetchall()
        assert a == b and a


def test_flags_are_deterministic_and_point_at_real_moves() -> None:
    games, _ = make_world(5, n_games=40)
    raw = [[orjson.dumps(e).decode() for e in g] for g in games]
    con1 = memory_db(batch_facts_raw(raw))
    con2 = memory_db(batch_facts(games))
    flags1 = score_facts(con1, None)[4]
    flags2 = score_facts(con2, None)[4]
    assert flags1.equals(flags2) and flags1.height > 0
    events = {(e["game_id"], e["seq"]): e for g in games for e in g}
    n_ev = 0
    for row in flags1.iter_rows(named=True):
        for item in orjson.loads(row["evidence"]):
            ev = events[(item["game_id"], item["seq"])]  # a real move of the log
            n_ev += 1
            actor = ev["actor"] if ev["actor"] != "system" else ev["payload"].get("player")
            assert actor in row["players"], (row["subject"], ev)
    assert n_ev > 0


def _planted_feeding(games: list[list[dict]]) -> list[dict[str, Any]]:
    """Every discard p00 made right before p01 (or p01 before p00): the feeder's acts."""
    out = []
    for g in games:
        seats = g[0]["payload"]["seats"]
        for e in g:
            if e["type"] == "Discarded" and e["actor"] in ("p00", "p01"):
                nxt = seats[(seats.index(e["actor"]) + 1) % len(seats)]
                if {e["actor"], nxt} == {"p00", "p01"}:
                    out.append({"game_id": e["game_id"], "seq": e["seq"], "player_id": e["actor"],
                                "mechanism": "card_feeding", "group_id": "f1"})
    return out


def test_ring_metrics_and_evidence_precision() -> None:
    games, labels = make_world(6, n_games=60)
    labels = dict(labels, planted=_planted_feeding(games))
    truth = parse_labels(labels)
    world = World.from_con(memory_db(batch_facts(games)), truth)
    pairs = world.pairs.select(["p1", "p2", "shared_devices"])
    is_feed = (pl.col("p1") == "p00") & (pl.col("p2") == "p01")
    qscore = pairs.with_columns(
        pl.when(is_feed).then(0.9).otherwise(0.01).alias("card_feeding"),
        pl.lit(0.0).alias("soft_play"), pl.lit(0.0).alias("chip_dumping"),
        pl.when(pl.col("shared_devices") > 0).then(0.8).otherwise(0.0).alias("multi_account"),
        pl.lit(0.5).alias("anomaly")).drop("shared_devices")
    pscore = world.players.select("player").with_columns(
        pl.lit(0.0).alias("bot"), pl.lit(0.0).alias("hidden_card"),
        pl.lit(0.0).alias("timeout_abuse"), pl.lit(0.5).alias("anomaly"))
    rings = ring_metrics(world, qscore)
    # found: the feeding pair (link) and the shared-device pair; both labelled groups
    assert rings["found"] == 2 and rings["labelled"] == 2
    assert rings["precision"] == 1.0 and rings["recall_pairs"] == 1.0 and rings["purity"] == 1.0
    # a model that clears the shared-device pair (multi_account 0): its device link
    # weighs what the model says, so that group is no longer found (fraud/rings.py)
    cleared = ring_metrics(world, qscore.with_columns(pl.lit(0.0).alias("multi_account")))
    assert cleared["found"] == 1 and cleared["recall_pairs"] == 0.5
    ev = evidence_precision(world, pscore, qscore)
    feed = ev["by_mechanism"]["card_feeding"]
    assert feed["flags"] == 1 and feed["true_subjects"] == 1 and feed["evidence"] >= 3
    assert feed["precision"] == 1.0  # every evidence move is one of the planted discards


def test_eval_cli_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    games, labels = make_world(7, n_games=10)
    log = tmp_path / "w.jsonl"
    log.write_bytes(b"".join(orjson.dumps(e) + b"\n" for g in games for e in g))
    lab = tmp_path / "w.labels.json"
    lab.write_bytes(orjson.dumps(labels))
    cases = [
        (["--test", str(log), "--test-labels", str(lab)], "give a training world"),
        (["--test", str(log), "--test-labels", str(lab), "--train", str(log)],
         "give --train and --train-labels together"),
        (["--test", str(log), "--test-labels", str(lab), "--model",
          str(tmp_path / "m.joblib")], "no model file"),
        # inputs are checked before the model is loaded: a missing labels file comes first
        (["--test", str(log), "--test-labels", str(tmp_path / "none.json"), "--model",
          str(tmp_path / "m.joblib")], "no labels file"),
        (["--test", str(tmp_path / "missing.jsonl"), "--test-labels", str(lab), "--train", str(log),
          "--train-labels", str(lab)], "no such file"),
    ]
    for args, message in cases:
        res = runner.invoke(app, ["eval", *args, "--workers", "0"])
        assert res.exit_code == 2, (args, res.output)
        assert message in res.output and len(res.output.strip().splitlines()) == 1, res.output
    from rummyguard.fraud.models import FraudModel

    old = FraudModel()
    old.version = 1
    old.save(tmp_path / "old.joblib")
    res = runner.invoke(app, ["eval", "--test", str(log), "--test-labels", str(lab), "--model",
                              str(tmp_path / "old.joblib"), "--workers", "0"])
    assert res.exit_code == 2 and "model format 1" in res.output


def test_free_choice_signals_point_at_the_planted() -> None:
    """The free-choice signals single out the planted feeder pair and the player who sees
    the next hand (make_world: p00/p01 feed each other, p03 sees every hand)."""
    from rummyguard.fraud.features import pair_features, player_features

    games, _ = make_world(1)
    con = memory_db(batch_facts(games))
    pairs = pair_features(con).sort("tie_t", descending=True, nulls_last=True)
    top_pair = pairs.row(0, named=True)
    assert (top_pair["p1"], top_pair["p2"]) == ("p00", "p01")
    players = player_features(con).sort("hc_tie_t", descending=True, nulls_last=True)
    top = players.row(0, named=True)
    assert top["player"] == "p03" and top["hc_tie_n"] >= 20


def test_store_batches_regroup_interleaved_games(tmp_path: Path) -> None:
    """One pass over the store in storage order: games whose events were ingested
    interleaved still come out whole, in seq order, each exactly once."""
    from rummyguard.events.store import EventStore
    from rummyguard.fraud.pipeline import store_game_batches

    games, _ = make_world(8, n_games=6)
    rows = [orjson.dumps(e) for row in itertools.zip_longest(*games) for e in row if e is not None]
    path = tmp_path / "s.duckdb"
    with EventStore.open(path) as store:
        store.ingest_lines(rows)
        total, batches = store_game_batches(store, batch_games=4)
        got = [g for b in batches for g in b]
    assert total == 6 and len(got) == 6
    want = {g[0]["game_id"]: [e["seq"] for e in g] for g in games}
    for lines in got:
        evs = [orjson.loads(ln) for ln in lines]
        assert [e["seq"] for e in evs] == want[evs[0]["game_id"]]
    assert {orjson.loads(g[0])["game_id"] for g in got} == set(want)
