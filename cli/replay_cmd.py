"""``rummyguard replay GAME_ID``: one game as a readable timeline, its state at any move,
and what any player could see — the support agent's view of a dispute."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from rich.text import Text

from ..events.cards import is_card_code, parse_card, pretty_card
from ..replay.engine import GameRecord
from ..replay.engine import replay as replay_game
from ..replay.timeline import timeline
from ..replay.verify import (
    BadLine,
    VerifyRun,
    read_games_from_files,
    read_store_bad_lines,
    verify_games,
)
from .common import (
    READ_ERRORS,
    DbOption,
    check_input_files,
    check_output_file,
    console,
    db_path,
    fail,
    one_line,
    print_json,
)

#: Events whose timeline sentence names cards only some players saw (a stock draw, a
#: penalty card, an auto-play's draw, a poker hand): re-described, redacted, for --as.
_HIDDEN_CARD_TYPES = frozenset({"Drew", "Bought", "AutoPlayed", "PokerHandDeclared"})


def load_events(game_id: str, files: list[Path] | None,
                db: Path | None) -> tuple[list[dict[str, Any]], list[BadLine]]:
    """The game's valid events, and its lines that are not valid events (quarantined by
    ingest, or unreadable in FILES), from JSONL files or the store; or a one-line error.

    The bad lines are read exactly as ``rummyguard verify`` reads them, so the replay of
    a game shows the same LOG-EVENT findings as its verification.
    """
    run = VerifyRun()
    if files:
        check_input_files(files)
        try:
            events = read_games_from_files(files, run).get(game_id, [])
        except READ_ERRORS as exc:
            fail(f"cannot read the logs: {one_line(exc)}")
    else:
        from ..events.store import EventStore, StoreError

        try:
            with EventStore.open(db_path(db), read_only=True) as store:
                events = store.load_game(game_id)
                read_store_bad_lines(store.con, run)
        except StoreError as exc:
            fail(str(exc))
    bad = [b for b in run.bad_lines if b.game_id == game_id]
    if not events:
        if bad:
            fail(f"game {game_id!r} has no valid event; {len(bad)} line(s) of it are not "
                 f"valid events (first: {bad[0].source}:{bad[0].line_no}: {bad[0].reason})")
        fail(f"game {game_id!r} not found")
    return events, bad


def replay_record(events: list[dict[str, Any]], bad: list[BadLine]) -> GameRecord:
    """The game's record as ``verify`` makes it: the replay plus a LOG-EVENT integrity
    finding for each of its lines that is not a valid event."""
    run = verify_games([events], VerifyRun(bad_lines=list(bad)), keep_state=True)
    return next(r for r in run.records if r.game_id == events[0]["game_id"])


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
    if html is not None:
        check_output_file(html, "--html")
    events, bad = load_events(game_id, files, db)
    record = replay_record(events, bad)
    seats = record.state.ctx.seats if record.state else []
    if as_player is not None and as_player not in seats:
        fail(f"{as_player!r} is not a player of game {game_id}")
    last = max(e["seq"] for e in events)
    if at is not None and not 0 <= at <= last:
        fail(f"--at {at} is outside the game (seq 0..{last})")
    upto = last if at is None else at
    partial = replay_game(events, until_seq=upto) if at is not None else record
    state = partial.state.snapshot(as_player) if partial.state is not None else {}
    # Without --at every finding shows, also those past the last stored event (lines of
    # the game that ingest quarantined after its first bad one).
    rows = _in_place(r for r in timeline(events, record) if at is None or r["seq"] <= upto)
    if as_player is not None:
        _redact_rows(rows, events, as_player, seats)
    if html is not None:
        from ..replay.html import render_html

        page = render_html(events, viewer=as_player, at=at)
        try:
            html.write_text(page, encoding="utf-8")
        except OSError as exc:  # a missing folder, a directory, no permission: one line
            fail(f"cannot write the HTML page to {html}: {one_line(exc)}")
    if as_json:
        print_json({"game_id": game_id, "variant": record.variant, "viewer": as_player, "at": upto,
                    "timeline": rows, "state": state, "record": record.to_dict()})
        return
    _print(record, rows, state, upto, as_player)
    if html is not None:
        console.print(f"HTML replay written to {html}", markup=False, highlight=False)


def _in_place(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Timeline rows in log order, with each finding at a seq no event holds (a line that
    was not a valid event, a gap) moved to where that seq belongs, not left at the end."""
    events: list[dict[str, Any]] = []
    orphans: list[dict[str, Any]] = []
    for row in rows:
        (orphans if row["ts"] is None else events).append(row)
    for row in orphans:
        at = next((i for i, e in enumerate(events) if e["seq"] > row["seq"]), len(events))
        events.insert(at, row)
    return events


def _redact_rows(rows: list[dict[str, Any]], events: list[dict[str, Any]], viewer: str,
                 seats: list[str]) -> None:
    """Re-describe, in place, the rows whose sentence shows cards ``viewer`` could not see
    (another player's stock draw, ...): the per-player view hides them everywhere, not
    only in the state. Redaction is the HTML page's, so both views hide the same cards."""
    from ..replay.html import HIDDEN, describe, redact

    by_seq = {e["seq"]: e for e in events}
    for row in rows:
        event = by_seq.get(row["seq"])
        if event is None or row["type"] not in _HIDDEN_CARD_TYPES:
            continue
        shown = redact(event, viewer)
        if not shown.get("redacted"):
            continue
        parts: list[str] = []
        after_card = False
        for segment in describe(shown, seats):
            if isinstance(segment, str):
                parts.append(segment)
                after_card = False
            else:  # a card: spaced from the card before it, as cards_text spaces them
                code = segment["c"]
                card = pretty_card(parse_card(code)) if is_card_code(code) else HIDDEN
                parts.append(f" {card}" if after_card else card)
                after_card = True
        row["text"] = "".join(parts)


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
        table.add_row(str(r["seq"]), t, Text(r["text"]))  # log data, never markup
        for f in r["findings"]:
            style = "red" if f["kind"] != "integrity" else "magenta"
            text = f"⚠ {f['rule']} ({f['kind']}): {f['message']}"
            if f["rule_text"]:
                text += f"\n   {f['rule_text']}"
            table.add_row("", "", Text(text, style=style))
    console.print(table)
    who = f" as seen by {viewer}" if viewer else ""
    console.print(Text(f"State after seq {upto}{who}:", style="bold"))
    for key in ("round", "in_turn", "stock_count", "pots", "scores", "winners"):
        if key in state:
            console.print(f"  {key}: {state[key]}", markup=False, highlight=False)
    if state.get("discard_pile"):
        console.print(f"  discard pile (top last): {_pretty_list(state['discard_pile'][-10:])}",
                      markup=False, highlight=False)
    for player, cards in state.get("hands", {}).items():
        console.print(f"  {player}: {_pretty_list(cards)}", markup=False, highlight=False)
    others = {p: n for p, n in state.get("hand_counts", {}).items() if p not in state.get("hands", {})}
    if others:
        console.print(f"  others hold: {others}", markup=False, highlight=False)
    console.print(f"Results: winners {record.results.winners}; net {record.results.net}",
                  markup=False, highlight=False)
