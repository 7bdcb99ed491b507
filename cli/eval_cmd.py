"""``rummyguard eval``: train on one simulated world, score another, report honestly."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer

from .common import console, fail, print_json


def _world(source: list[Path], labels: Path, workers: int) -> Any:
    """Facts + features + truth of one world (JSONL files, or one .duckdb store)."""
    from ..events.store import EventStore, StoreError
    from ..fraud.evaluate import World
    from ..fraud.labels import LabelsError, read_labels
    from ..fraud.pipeline import jsonl_game_batches, memory_db, run_facts, store_game_batches

    try:
        truth = read_labels(labels)
    except LabelsError as exc:
        fail(str(exc))
    for path in source:
        if not path.exists():
            fail(f"no such file: {path}")
    if len(source) == 1 and source[0].suffix == ".duckdb":
        try:
            store = EventStore.open(source[0], read_only=True)
        except StoreError as exc:
            fail(str(exc))
        try:
            total, batches = store_game_batches(store)
            tables = run_facts(batches, workers=workers if total > 400 else 0)
        finally:
            store.close()
    else:
        total, batches = jsonl_game_batches(source)
        tables = run_facts(batches, workers=workers if total > 400 else 0)
    return World.from_con(memory_db(tables), truth)


def eval_(
    test: list[Path] = typer.Option(..., "--test", help="The held-out world (another seed)."),
    test_labels: Path = typer.Option(..., "--test-labels", help="The held-out world's labels JSON."),
    train: list[Path] | None = typer.Option(
        None, "--train", help="The training world: JSONL logs or a .duckdb store.", show_default=False),
    train_labels: Path | None = typer.Option(None, "--train-labels",
                                             help="The training world's labels JSON.",
                                             show_default=False),
    model_path: Path | None = typer.Option(
        None, "--model", help="Score the test world with this saved model instead of training "
        "(no leave-one-mechanism-out without --train).", show_default=False),
    save_model: Path | None = typer.Option(None, "--save-model", help="Write the trained model here.",
                                           show_default=False),
    report: Path | None = typer.Option(None, "--report", help="Write the report tables (Markdown) here.",
                                       show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print the full report as one JSON object."),
    boots: int = typer.Option(200, "--boots", help="Bootstrap resamples for the 95% intervals."),
    lomo: bool = typer.Option(True, "--lomo/--no-lomo", help="Run the leave-one-mechanism-out refits."),
    workers: int = typer.Option(min(2, os.cpu_count() or 1), "--workers", help="Processes for the facts map."),
) -> None:
    """Train on one simulated world, score a held-out one, and report per mechanism:
    PR-AUC, precision@10/50/100, recall at 1% FPR (bootstrap CIs), detection vs intensity
    and games played, leave-one-mechanism-out, two naive baselines, found groups vs
    labelled groups, and the share of flag evidence that is planted."""
    from ..fraud.evaluate import evaluate, render_markdown
    from ..fraud.models import FraudModel, ModelError, load_model

    if (train is None) != (train_labels is None):
        fail("give --train and --train-labels together")
    if not train and model_path is None:
        fail("give a training world (--train, --train-labels) or a saved model (--model)")
    model = None
    if model_path is not None:
        try:
            model = load_model(model_path)
        except ModelError as exc:
            fail(str(exc))
    tr = _world(train, train_labels, workers) if train and train_labels else None
    te = _world(test, test_labels, workers)
    if model is None:
        assert tr is not None
        model = FraudModel().fit(tr.players, tr.pairs, tr.truth.player_pos, tr.truth.pair_pos)
        model.trained_on["world"] = {"seed": tr.truth.seed, "players": tr.players.height}
    result = evaluate(tr, te, boots=boots, lomo=lomo, model=model)
    if save_model is not None:
        model.save(save_model)
    text = render_markdown(result)
    if report is not None:
        report.write_text(text)
    if as_json:
        print_json(result)
    else:
        console.print(text, highlight=False, markup=False)
