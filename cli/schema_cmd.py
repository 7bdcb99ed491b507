"""``rummyguard schema``: the JSON Schema of every event type and version."""

from __future__ import annotations

from pathlib import Path

import orjson
import typer

from ..events.models import event_json_schemas
from .common import fail, one_line, print_json, write_output


def schema(
    out: Path = typer.Option(
        None, "--out", "-o", help="Write one file per type/version into this folder."
    ),
) -> None:
    """Print (or write) the JSON Schema of every event type and version of EVENTS.md."""
    schemas = event_json_schemas()
    if out is None:
        print_json(schemas)
        return
    if out.exists() and not out.is_dir():
        fail(f"{out} exists and is not a folder (--out names the folder to write into)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"cannot write the schemas to {out}: {one_line(exc)}")
    # each file whole or not at all: a disk that fills up midway leaves no half schema
    for name, body in schemas.items():
        target = out / f"{name}.schema.json"
        write_output(target, orjson.dumps(body, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2),
                     "--out", what=f"the schema {target}")
    typer.echo(f"wrote {len(schemas)} schemas to {out}")
