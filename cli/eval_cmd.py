"""``rummyguard eval``: train on one simulated world, score another, report honestly."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer

from .common import (
    PARQUET_MAGIC,
    check_input_files,
    check_output_file,
    console,
    err_console,
    fail,
    one_line,
    print_json,
    write_output,
)


def _world(source: list[Path], labels: Path, workers: int, save: Path | None = None) -> Any:
    """Facts + features + truth of one world: JSONL files, one .duckdb store, or one
    folder of fact Parquet files (written by ``--save-facts`` or ``scan --parquet``).
    ``save``: also write the facts there as Parquet, so a later run skips the replay."""

    from ..events.store import EventStore, StoreError
    from ..fraud.evaluate import World
    from ..fraud.facts import FactsFolderError, read_facts_folder
    from ..fraud.labels import LabelsError, read_labels
    from ..fraud.pipeline import (
        jsonl_game_batches,
        memory_db,
        run_facts,
        store_game_batches,
        write_parquet,
    )

    try:
        truth = read_labels(labels)
    except LabelsError as exc:
        fail(str(exc))
    for path in source:
        if not path.exists():
            fail(f"no such file: {path}")
    if len(source) == 1 and source[0].is_dir():
        try:
            tables = read_facts_folder(source[0])
        except FactsFolderError as exc:
            fail(f"{exc} (give `eval` the log, or `scan --parquet DIR`)")
    elif len(source) == 1 and source[0].suffix == ".duckdb":
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
        check_input_files(source)
        for path in source:
            with path.open("rb") as head:
                if head.read(len(PARQUET_MAGIC)) == PARQUET_MAGIC:
                    # ingest reads Parquet; eval's own reader is for JSONL (audit 50)
                    fail(f"{path} is a Parquet event log; eval reads JSONL logs, a store or a "
                         f"facts folder: ingest it first (`rummyguard ingest {path} --db "
                         "world.duckdb`) and give eval the .duckdb")
        try:
            total, batches = jsonl_game_batches(source)
            tables = run_facts(batches, workers=workers if total > 400 else 0)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            # orjson.JSONDecodeError is a ValueError; a JSON array or a line that is not an
            # event object fails as TypeError/KeyError/AttributeError in the game grouping.
            fail(f"cannot read {', '.join(map(str, source))} as a JSONL event log: "
                 f"{one_line(exc)} (validate it with `rummyguard ingest` or `verify`)")
    if save is not None:
        write_parquet(tables, save)
    return World.from_con(memory_db(tables), truth)


def eval_(
    test: list[Path] = typer.Option(..., "--test", help="The held-out world (another seed)."),
    test_labels: Path = typer.Option(..., "--test-labels", help="The held-out world's labels JSON."),
    train: list[Path] | None = typer.Option(
        None, "--train", help="The training world: JSONL logs, a .duckdb store or a facts folder.",
        show_default=False),
    train_labels: Path | None = typer.Option(None, "--train-labels",
                                             help="The training world's labels JSON.",
                                             show_default=False),
    model_path: str | None = typer.Option(
        None, "--model", help="Score the test world with this saved model instead of training, "
        "or with 'builtin', the model `scan` uses by default. Without --train there is no "
        "leave-one-mechanism-out run.", show_default=False),
    save_model: Path | None = typer.Option(None, "--save-model", help="Write the trained model here.",
                                           show_default=False),
    report: Path | None = typer.Option(None, "--report", help="Write the report tables (Markdown) here.",
                                       show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print the full report as one JSON object."),
    boots: int = typer.Option(200, "--boots", min=0, help="Bootstrap resamples for the 95% intervals."),
    lomo: bool = typer.Option(True, "--lomo/--no-lomo", help="Run the leave-one-mechanism-out refits."),
    workers: int = typer.Option(min(2, os.cpu_count() or 1), "--workers", min=0, help="Processes for the facts map."),
    save_facts: Path | None = typer.Option(
        None, "--save-facts", help="Write each world's facts as Parquet into DIR/train and DIR/test; "
        "pass such a folder as --train/--test later to skip the replay.", show_default=False),
) -> None:
    """Score the detector honestly: train on one simulated world, report on another.

    Per mechanism: PR-AUC, precision@10/50/100, recall at 1% FPR (bootstrap CIs),
    detection vs intensity and games played, leave-one-mechanism-out, two naive
    baselines, found groups vs labelled groups, and the share of flag evidence that is
    planted. The per-mechanism metrics come twice: over all labelled subjects, and over
    the labelled subjects that acted in the test world (at least one planted event of
    the mechanism; the others left out, and counted)."""
    from ..fraud.builtin import BUILTIN, builtin_model
    from ..fraud.evaluate import evaluate, fit_on_world, render_markdown
    from ..fraud.labels import LabelsError, read_labels
    from ..fraud.models import ModelError, load_model

    if (train is None) != (train_labels is None):
        fail("give --train and --train-labels together")
    if not train and model_path is None:
        fail("give a training world (--train, --train-labels) or a saved model (--model)")
    for path, option in ((save_model, "--save-model"), (report, "--report")):
        if path is not None:
            check_output_file(path, option)
    if save_facts is not None and save_facts.exists() and not save_facts.is_dir():
        fail(f"--save-facts {save_facts} is a file; give a folder (its train/ and test/ "
             "subfolders are made)")
    # the inputs are checked before anything slow starts (fitting the built-in model on
    # first use takes about 15 seconds): a mistyped path or a bad labels file fails at once
    for path in [*(train or []), *(test or [])]:
        if not path.exists():
            fail(f"no such file: {path}")
    for labels in (train_labels, test_labels):
        if labels is not None:
            try:
                read_labels(labels)
            except LabelsError as exc:
                fail(str(exc))
    # honest means held out: the test world must be another simulation than the one the
    # model learned from (the same seed replays the same accounts, fraud and games)
    test_seed = read_labels(test_labels).seed
    if (test_seed is not None and train_labels is not None
            and read_labels(train_labels).seed == test_seed):
        fail(f"--test is the training world again (seed {test_seed} in both labels files): "
             "score a world simulated with another --seed")
    # the worlds first: an unreadable one fails before the model is loaded or fitted
    tr = (_world(train, train_labels, workers, save_facts / "train" if save_facts else None)
          if train and train_labels else None)
    te = _world(test, test_labels, workers, save_facts / "test" if save_facts else None)
    model = None
    if model_path is not None:
        try:
            model = (builtin_model(note=lambda text: err_console.print(text))
                     if model_path == BUILTIN else load_model(model_path))
        except ModelError as exc:
            fail(str(exc))
        if test_seed is not None and model.trained_on.get("world", {}).get("seed") == test_seed:
            fail(f"--test is the world {model_path} was trained on (seed {test_seed}): score a "
                 "world simulated with another --seed")
    if model is None:
        assert tr is not None
        model = fit_on_world(tr)
        model.trained_on["world"] = {"seed": tr.truth.seed, "players": tr.players.height}
    result = evaluate(tr, te, boots=boots, lomo=lomo, model=model)
    if save_model is not None:
        try:
            model.save(save_model)
        except OSError as exc:
            fail(f"cannot write --save-model {save_model}: {one_line(exc)}")
    text = render_markdown(result)
    if report is not None:
        write_output(report, text.encode(), "--report")
    if as_json:
        print_json(result)
    else:
        console.print(text, highlight=False, markup=False)
