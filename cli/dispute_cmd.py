"""``rummyguard dispute`` and ``rummyguard check-bundle``: evidence a third party can check.

``dispute`` writes one game's dispute bundle (see :mod:`rummyguard.replay.bundle`);
``check-bundle`` verifies one offline, without the store, and is what a regulator runs.
"""

from __future__ import annotations

import re
import shlex
from functools import partial
from pathlib import Path

import duckdb
import typer
from rich.markup import escape

from ..events.checkpoint import TamperError
from ..events.store import EventStore, StoreError
from ..replay.bundle import (
    BundleCheck,
    BundleError,
    TrustedCheckpoint,
    build_bundle,
    check_bundle,
    read_manifest,
)
from .common import DbOption, console, db_path, err_console, fail, print_json, write_output

_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
_MARK = {"pass": "[green]PASS[/]", "fail": "[bold red]FAIL[/]", "warn": "[yellow]WARN[/]",
         "skip": "[dim]SKIP[/]"}


def dispute(
    game_id: str = typer.Argument(..., help="The game in dispute."),
    bundle: Path = typer.Option(..., "--bundle", "-o", help="The zip file to write.",
                                dir_okay=False),
    db: Path | None = DbOption,
    checkpoint_n: int | None = typer.Option(
        None, "--checkpoint", "-c", min=1,
        help="Prove inclusion in this checkpoint (default: the latest). Use the one the "
             "recipient holds."),
) -> None:
    """Write a dispute bundle: everything needed to check one game without our database.

    The zip holds the game's events exactly as received (events.jsonl), the replay
    report (report.json, and report.html when the page renderer is available), the
    Merkle checkpoint and the game's inclusion proof, a manifest with the SHA-256 of
    every file, and a README telling the recipient how to check it by hand. A game's
    lines that ingest quarantined are added as unproven material (quarantine.json) and
    the report replays them, as `replay --db` does. The same store state always gives a
    byte-identical zip. Check one with `rummyguard check-bundle`.
    """
    path = db_path(db)
    if not path.exists():
        fail(f"no store at {path} (ingest a log first, or pass --db)")
    if not bundle.parent.is_dir():
        fail(f"cannot write {bundle}: no directory {bundle.parent}")
    try:
        with EventStore.open(path, read_only=True) as store:
            data = build_bundle(store, game_id, checkpoint_n)
    except TamperError as exc:
        for problem in exc.problems:
            err_console.print(f"  {problem}", highlight=False, soft_wrap=True)
        fail(f"refused: the store does not match its checkpoints ({len(exc.problems)} problems)",
             code=1)
    except (BundleError, StoreError, duckdb.Error) as exc:
        fail(str(exc))
    # whole or nothing (a half-written bundle must never be mailed); a pipe is written in place
    write_output(bundle, data, "--bundle")
    manifest = read_manifest(data)
    cp = manifest["checkpoint"]
    # game ids and paths are the user's: printed as they are, never read as markup
    say = partial(console.print, markup=False, highlight=False, soft_wrap=True)
    say(f"dispute bundle for game {game_id} written to {bundle} ({len(data)} bytes, "
        f"{len(manifest['members']) + 1} files)")
    say(f"leaf {manifest['leaf_index']} of checkpoint {cp['n']}: {cp['tree_size']} "
        f"games, root {cp['root_hash']}, {cp['created_at']}")
    if not manifest["html"]["included"]:
        say(f"note: report.html left out: {manifest['html']['reason']}")
    quarantine = manifest.get("quarantine")
    if quarantine:
        say(f"note: {quarantine['count']} line(s) of the game that ingest quarantined are in "
            f"{quarantine['member']}, labelled unproven (in no checkpoint); report.json replays "
            "them where ingest read them, as `replay --db` does")
    say(f"the recipient checks it with: rummyguard check-bundle {shlex.quote(bundle.name)} "
        "--root <published root> --size <published size>")


def check_bundle_cmd(
    file: Path = typer.Argument(..., help="The dispute bundle (zip)."),
    root: str | None = typer.Option(
        None, "--root", help="Trusted checkpoint root (hex), as the operator published it."),
    size: int | None = typer.Option(
        None, "--size", min=1, help="Trusted checkpoint tree size, published with the root."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """Verify a dispute bundle offline: files, hash chain, inclusion, trusted root, replay.

    Prints each check with PASS/FAIL (WARN/SKIP do not fail). Without --root and --size
    the bundle's own checkpoint is not compared with anything you trust, which proves
    nothing by itself. Exit 0 if every check passes, 1 if any fails, 2 if the input is
    not a usable bundle.
    """
    if (root is None) != (size is None):
        fail("--root and --size go together: a root means nothing without its tree size")
    trusted = None
    if root is not None and size is not None:
        if not _HEX64.fullmatch(root):
            fail("--root must be 64 hex digits (a SHA-256)")
        trusted = TrustedCheckpoint(size, root.lower())
    if file.is_dir():
        fail(f"{file} is a directory; give the bundle's zip file")
    if not file.is_file():
        fail(f"no such file: {file}")
    result = check_bundle(file.read_bytes(), trusted)
    if not result.usable and not as_json:  # unusable input: one clear line, not a report
        reason = next((c.detail for c in result.checks if c.status == "fail"), "unreadable")
        fail(f"{file} is not a usable dispute bundle: {reason}")
    if as_json:
        print_json({"file": str(file), "trusted_checkpoint": None if trusted is None
                    else trusted.as_mapping(), **result.to_dict()})
    else:
        _print(file, result)
    raise typer.Exit(result.exit_code)


def _print(file: Path, result: BundleCheck) -> None:
    cp = result.checkpoint or {}
    where = f" against checkpoint {cp.get('n')} ({cp.get('tree_size')} games)" if cp else ""
    game = f": game {escape(result.game_id)}{where}" if result.game_id is not None else ""
    console.print(f"bundle {escape(str(file))}{game}", highlight=False, soft_wrap=True)
    width = max(len(c.name) for c in result.checks)
    for c in result.checks:
        console.print(f"  {_MARK[c.status]}  {c.name:<{width}}  {escape(c.detail)}",
                      highlight=False, soft_wrap=True)
    if not result.usable:
        console.print("[bold red]not a usable dispute bundle[/]")
    elif result.failed:
        console.print(f"[bold red]{len(result.failed)} check(s) failed:[/] "
                      f"{', '.join(result.failed)}", highlight=False)
    else:
        trusted = result.get("trusted-checkpoint")
        caveat = (" (but its checkpoint was not compared with a trusted one)"
                  if trusted is not None and trusted.status != "pass" else "")
        console.print(f"[green]all checks passed[/]{caveat}", highlight=False)
