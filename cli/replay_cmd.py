"""``rummyguard replay GAME_ID``: one game as a readable timeline, its state at any move,
and what any player could see — the support agent's view of a dispute."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from rich.text import Text

from ..events.cards import parse_card, pretty_card
from ..replay.engine import replay as replay_game
from ..replay.timeline import timeline
from .common import DbOption, console, db_path, fail, print_json


def load_events(game_id: str, files: list[Path] | None, db: Path | None) -> list[dict[str, Any]]:
    """The game's events from JSONL files or the store, or a one-line error."""
    if files:
        from ..events.ingest import read_jsonl_events

        events = []
        for path in files:
            if not path.is_file():
                fail(f"no such file: {path}")
            for _, _, event in read_jsonl_events(path):
                if isinstance(event, dict) and event["game_id"] == game_id:
                    events.append(event)
    else:
        from ..events.store import EventStore, StoreError

        try:
            with EventStore.open(db_path(db), read_only=True) as store:
                events = store.load_game(game_id)
        except StoreError as exc:
            fail(str(exc))
    if not events:
        fail(f"game {game_id!r} not found")
    return events


def replay(
    game_id: str = typer.Argument(..., help="The game to replay."),
    files: list[Path] = typer.Argument(None, help="JSONL logs holding the game (default: the store).",
                                       show_default=False),
    db: Path | None = DbOption,
    at: int | None = typer.Option(None, "--at", help="Show the state right after this seq."),
    as_player: str | None = typer.Option(None, "--as", help="Show only what this player could see."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    html: Path | None = typer.Option(None, "--html", help="Write a self-contained HTML replay page."),
) -> None:
    """Print a game move by move, with every finding next to the move that caused it.

    Examples:
      rummyguard replay g-000123 --at 57           the table right after seq 57
      rummyguard replay g-000123 --at 57 --as bob  what bob could see then
      rummyguard replay g-000123 --html g.html     a page to step through in a browser
    """
    events = load_events(game_id, files, db)
    record = replay_game(events)
    if as_player is not None and as_player not in (record.state.ctx.seats if record.state else []):
        fail(f"{as_player!r} is not a player of game {game_id}")
    last = events[-1]["seq"]
    if at is not None and not 0 <= at <= last:
        fail(f"--at {at} is outside the game (seq 0..{last})")
    upto = last if at is None else at
    partial = replay_game(events, until_seq=upto) if at is not None else record
    state = partial.state.snapshot(as_player) if partial.state is not None else {}
    rows = [r for r in timeline(events, record) if r["seq"] <= upto]
    if html is not None:
        from ..replay.html import render_html

        html.write_text(render_html(events, viewer=as_player, at=at), encoding="utf-8")
    if as_json:
        print_json({"game_id": game_id, "variant": record.variant, "viewer": as_player, "at": upto,
                    "timeline": rows, "state": state, "record": record.to_dict()})
        return
    _print(record, rows, state, upto, as_player)
    if html is not None:
        console.print(f"HTML replay written to {html}")


def _pretty_list(codes: list[str]) -> str:
    return " ".join(pretty_card(parse_card(c)) for c in codes)


def _print(record, rows, state, upto, viewer) -> None:
    head = Text(f"{record.game_id} · {record.variant} · ", style="bold")
    head.append("clean" if record.clean else f"{len(record.findings)} finding(s)",
                style="green" if record.clean else "bold red")
    if record.halted:
        head.append(" · replay halted", style="bold red")
    console.print(head)
    table = Table(show_header=True, header_style="bold", expand=True)
    for col, kw in (("seq", {"justify": "right"}), ("t (s)", {"justify": "right"}),
                    ("event", {"overflow": "fold", "ratio": 1})):
        table.add_column(col, **kw)
    for r in rows:
        t = "" if r["t"] is None else f"{r['t']:.1f}"
        table.add_row(str(r["seq"]), t, r["text"])
        for f in r["findings"]:
            style = "red" if f["kind"] != "integrity" else "magenta"
            table.add_row("", "", Text(f"⚠ {f['rule']} ({f['kind']}): {f['message']}\n   {f['rule_text']}",
                                       style=style))
    console.print(table)
    who = f" as seen by {viewer}" if viewer else ""
    console.print(Text(f"State after seq {upto}{who}:", style="bold"))
    for key in ("round", "in_turn", "stock_count", "pots", "scores", "winners"):
        if key in state:
            console.print(f"  {key}: {state[key]}")
    if state.get("discard_pile"):
        console.print(f"  discard pile (top last): {_pretty_list(state['discard_pile'][-10:])}")
    for player, cards in state.get("hands", {}).items():
        console.print(f"  {player}: {_pretty_list(cards)}")
    others = {p: n for p, n in state.get("hand_counts", {}).items() if p not in state.get("hands", {})}
    if others:
        console.print(f"  others hold: {others}")
    console.print(f"Results: winners {record.results.winners}; net {record.results.net}")
