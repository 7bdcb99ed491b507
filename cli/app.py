"""The ``rummyguard`` command: thin typer commands over the packages.

Each command lives in its own module under ``cli/`` and is registered here. Errors a
user can cause are printed as one clear line (see :func:`rummyguard.cli.common.fail`),
never as a traceback.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import typer

from . import (
    checkpoint_cmd,
    demo_cmd,
    dispute_cmd,
    eval_cmd,
    export_cmd,
    flags_cmd,
    ingest_cmd,
    replay_cmd,
    scan_cmd,
    schema_cmd,
    simulate_cmd,
    sql_cmd,
    verify_cmd,
    verify_log_cmd,
)

app = typer.Typer(
    name="rummyguard",
    help=(
        "Event-sourced replay and anti-fraud analytics for online rummy.\n\n"
        "Store a platform's event log (schema, ingest, verify-log, export, sql), replay any "
        "game to settle a dispute (verify, replay) and hand over the proof (checkpoint, "
        "prove, dispute, check-bundle), and scan the log for collusion and unfair play "
        "(simulate, scan, flags, eval). `rummyguard demo` runs it all on a small world."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

def _version(value: bool) -> None:
    if value:
        from .. import __version__, _compiled

        typer.echo(f"rummyguard {__version__} (engine: {_compiled.STATUS})")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True,
        help="Print the version and whether the engine runs compiled (setup.py), then exit.",
    ),
) -> None:
    """Keeps rummyguard a command group even while it has a single command."""


def _flowing(doc: str) -> str:
    """A command's docstring as help text that rewraps to the terminal's width.

    Typer keeps the single line breaks of every paragraph after the first, so help
    wrapped in the source at ~90 columns came out ragged in an 80-column terminal (a
    one-word line after each full one). Lines of a paragraph are joined; a paragraph
    whose later lines are indented (an example block) keeps its breaks.
    """
    paragraphs = []
    for para in doc.split("\n\n"):
        lines = para.split("\n")
        if para.startswith("\b") or any(line[:1] in (" ", "\t") for line in lines[1:]):
            paragraphs.append(para)
        else:
            paragraphs.append(" ".join(line.strip() for line in lines))
    return "\n\n".join(paragraphs)


def _register(name: str, command: Callable[..., Any]) -> None:
    app.command(name, help=_flowing(inspect.getdoc(command) or ""))(command)


_register("schema", schema_cmd.schema)
_register("checkpoint", checkpoint_cmd.checkpoint)
_register("prove", checkpoint_cmd.prove)
_register("dispute", dispute_cmd.dispute)
_register("check-bundle", dispute_cmd.check_bundle_cmd)
_register("ingest", ingest_cmd.ingest)
_register("verify-log", verify_log_cmd.verify_log)
_register("export", export_cmd.export)
_register("sql", sql_cmd.sql)
_register("verify", verify_cmd.verify)
_register("replay", replay_cmd.replay)
_register("demo", demo_cmd.demo)
_register("scan", scan_cmd.scan)
_register("flags", flags_cmd.flags)
_register("eval", eval_cmd.eval_)
_register("simulate", simulate_cmd.simulate)
