"""The ``rummyguard`` command: thin typer commands over the packages.

Each command lives in its own module under ``cli/`` and is registered here. Errors a
user can cause are printed as one clear line (see :func:`rummyguard.cli.common.fail`),
never as a traceback.
"""

from __future__ import annotations

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

@app.callback()
def _root() -> None:
    """Keeps rummyguard a command group even while it has a single command."""


app.command("schema")(schema_cmd.schema)
app.command("checkpoint")(checkpoint_cmd.checkpoint)
app.command("prove")(checkpoint_cmd.prove)
app.command("dispute")(dispute_cmd.dispute)
app.command("check-bundle")(dispute_cmd.check_bundle_cmd)
app.command("ingest")(ingest_cmd.ingest)
app.command("verify-log")(verify_log_cmd.verify_log)
app.command("export")(export_cmd.export)
app.command("sql")(sql_cmd.sql)
app.command("verify")(verify_cmd.verify)
app.command("replay")(replay_cmd.replay)
app.command("demo")(demo_cmd.demo)
app.command("scan")(scan_cmd.scan)
app.command("flags")(flags_cmd.flags)
app.command("eval")(eval_cmd.eval_)
app.command("simulate")(simulate_cmd.simulate)
