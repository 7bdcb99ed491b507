"""``rummyguard replay GAME_ID``: one game as a readable timeline, its state at any move,
and what any player could see — the support agent's view of a dispute."""

from __future__ import annotations

import dataclasses
from itertools import takewhile
from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from rich.text import Text

from ..events.cards import is_card_code, parse_card, pretty_card
from ..replay.engine import GameRecord
from ..replay.engine import replay as replay_game
from ..replay.timeline import describe, finish_timeline, in_place, timeline
from ..replay.verify import (
    BadLine,
    VerifyRun,
    fold,
    merge_store_lines,
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
    write_output,
)

#: Events whose timeline sentence names what only some players saw (a stock draw, a
#: penalty card, an auto-play's draw, a poker hand; another player's IP and device):
#: re-described, redacted, for --as.
_HIDDEN_CARD_TYPES = frozenset({"Drew", "Bought", "AutoPlayed", "PokerHandDeclared",
                                "PlayerConnected"})


def load_events(game_id: str, files: list[Path] | None,
                db: Path | None) -> tuple[list[dict[str, Any]], list[BadLine]]:
    """The game's valid events, and its lines that are not valid events (quarantined by
    ingest, or unreadable in FILES), from JSONL files or the store; or a one-line error.

    The lines are read exactly as ``rummyguard verify`` reads them, so the replay of a
    game shows the same findings as its verification. From the store, the events
    include the game's quarantined lines that are valid events (kept back by ingest
    behind a gap or a chain break, or at a taken seq), where ingest read them
    (:func:`~rummyguard.replay.verify.merge_store_lines`): the replay of the store is the
    replay of the file it was ingested from.
    """
    events, bad, _lines, _kept_back = _load(game_id, files, db)
    return events, bad


def _load(game_id: str, files: list[Path] | None, db: Path | None
          ) -> tuple[list[dict[str, Any]], list[BadLine], dict[int, dict[str, Any]],
                     dict[int, BadLine]]:
    """:func:`load_events`, plus what each of the game's bad lines held, by seq (the
    line's JSON object: the quarantined raw line, or the file's line), and the
    quarantine line behind each event the store did not store, by index in the events
    (its row says so). Only for display: the replay is verify's."""
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
                events = store.load_game_for_replay(game_id)
                read_store_bad_lines(store.con, run, game_id, load_games=False)
        except StoreError as exc:
            fail(str(exc))
    bad = [b for b in run.bad_lines if b.game_id == game_id]
    events, bad, kept_back = merge_store_lines(events, bad)
    if not events:
        if bad:
            fail(f"game {game_id!r} has no valid event; {len(bad)} line(s) of it are not "
                 f"valid events (first: {bad[0].source}:{bad[0].line_no}: {bad[0].reason})")
        fail(f"game {game_id!r} not found")
    lines: dict[int, dict[str, Any]] = {}
    for b in bad:
        if isinstance(b.obj, dict) and b.seq is not None:
            lines.setdefault(b.seq, b.obj)
    return events, bad, lines, kept_back


def replay_record(events: list[dict[str, Any]], bad: list[BadLine]) -> GameRecord:
    """The game's record as ``verify`` makes it: the replay plus a LOG-EVENT integrity
    finding for each of its lines that is not a valid event."""
    run = verify_games([events], VerifyRun(bad_lines=list(bad)), keep_state=True)
    return next(r for r in run.records if r.game_id == events[0]["game_id"])


def replay(
    game_id: str = typer.Argument(..., help="The game to replay."),
    files: list[Path] = typer.Argument(None, help="Logs holding the game: JSONL, gzip or Parquet (default: the store).",
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
      rummyguard replay g-000123 --html g.html     a page to step through
    """
    if files and db is not None:  # silently reading one and not the other misleads
        fail("give the game's log FILES or --db, not both (with FILES the game is read from "
             "them, not from a store)")
    if html is not None:
        check_output_file(html, "--html")
    events, bad, lines, kept_back = _load(game_id, files, db)
    record = replay_record(events, bad)
    seats = record.state.ctx.seats if record.state else []
    if as_player is not None and as_player not in seats:
        if record.state is None:  # no (usable) GameCreated: nobody is seated
            fail(f"game {game_id} has no seated players (no GameCreated of a known variant "
                 f"replayed): it cannot be viewed as {as_player!r}")
        fail(f"{as_player!r} is not a player of game {game_id} (seats: {', '.join(seats)})")
    last = max(e["seq"] for e in events)
    if at is not None and not 0 <= at <= last:
        if any(b.seq == at for b in bad):  # the timeline lists it, as a line it could not read
            fail(f"--at {at}: that seq is a line of the game that is not a valid event "
                 f"(quarantined; the timeline shows why): the events replayed end at seq {last}")
        later = sorted(b.seq for b in bad if b.seq is not None and b.seq > last)
        if later and last < at <= later[-1]:  # the timeline runs past the replayed events
            fail(f"--at {at}: the events replayed end at seq {last}; the game's later lines "
                 f"(seq {later[0]}..{later[-1]}) were not stored (quarantined, or missing "
                 f"before them: the timeline shows why)")
        end = max([last, *later])
        fail(f"--at {at} is outside the game (seq 0..{end}"
             + (f"; the events replayed end at seq {last})" if end != last else ")"))
    upto = last if at is None else at
    at_note = None if at is None else _missing_at_note(events, bad, at)
    partial = record if at is None else _record_until(events, bad, upto)
    state = partial.state.snapshot(as_player) if partial.state is not None else {}
    # A player's view at --at is the game as he could know it then: nothing after --at
    # (no later row, finding, result or page event); the agent's view keeps the whole
    # game's record and results beside the table at --at.
    cut = as_player is not None and at is not None
    # Without --at every finding shows, also those past the last stored event (lines of
    # the game that ingest quarantined after its first bad one).
    rows = timeline(events, record)
    finish_timeline(rows, len(events), lines, kept_back, bad, as_player)
    shown_record = record.to_dict()
    if cut:
        shown_record["findings"] = [f for f in shown_record["findings"] if f["seq"] <= upto]
        shown_record.update(clean=not shown_record["findings"], halted=partial.halted,
                            results=partial.results.to_dict())
    if as_player is not None:
        from ..replay.html import claims_so_far, mask_findings

        if cut:  # the transfer comparison as it stood at --at, not the whole game's
            claims_so_far([*(f for r in rows if r["seq"] <= upto for f in r["findings"]),
                           *shown_record["findings"]], events, bad, upto)
        _redact_rows(rows[: len(events)], events, as_player)
        mask_findings([*(f for r in rows for f in r["findings"]), *shown_record["findings"]],
                      events, as_player)
    end = rows[-1]["seq"] if rows else upto  # the timeline's last seq, before --at cuts it
    rows = in_place(r for r in rows if at is None or r["seq"] <= upto)
    if html is not None:
        from ..replay.html import render_html

        page = render_html(events, viewer=as_player, at=at, bad=bad, until=at if cut else None,
                           kept_back={i: b.code for i, b in kept_back.items()})
        # whole or not at all: a full disk keeps an earlier page, never half of one
        write_output(html, page.encode("utf-8"), "--html", what=f"the HTML page to {html}")
    # where the replay stopped, if it did at or before ``upto`` (the state is the table
    # there, not at ``upto``); ``finished``: the game reached its end by the rules
    halted_at = partial.halted_at
    if as_json:
        doc = {"game_id": game_id, "variant": record.variant, "viewer": as_player, "at": upto,
               "halted_at": halted_at, "finished": (partial if cut else record).finished,
               "timeline": rows, "state": state, "record": shown_record}
        if at_note is not None:  # only then: every other document keeps its bytes
            doc["at_note"] = at_note
        print_json(doc)
        return
    if at_note is not None:
        console.print(Text(f"note: {at_note}", style="yellow"))
    if cut:  # the game up to --at: its findings so far, its results so far
        record = dataclasses.replace(partial, findings=[f for f in record.findings if f.seq <= upto])
    _print(record, rows, state, upto, as_player, halted_at, upto if cut else end, so_far=cut)
    if html is not None:
        console.print(f"HTML replay written to {html}", markup=False, highlight=False)


def _record_until(events: list[dict[str, Any]], bad: list[BadLine], upto: int) -> GameRecord:
    """The game right after seq ``upto``, replayed as ``verify`` replays it: the game's
    lines that are not valid events take their place (a halt there holds the state where
    it stopped), as in the timeline beside it."""
    placed = sorted((b for b in bad if b.obj is not None and (b.seq or 0) <= upto),
                    key=lambda b: b.seq or 0)
    if not placed:
        return replay_game(events, until_seq=upto)
    return fold(list(takewhile(lambda e: e["seq"] <= upto, events)), placed)


def _redact_rows(rows: list[dict[str, Any]], events: list[dict[str, Any]], viewer: str) -> None:
    """Re-describe, in place, the rows whose sentence shows cards ``viewer`` could not see
    (another player's stock draw, ...): the per-player view hides them everywhere, not
    only in the state. Redaction is the HTML page's, so both views hide the same cards;
    the sentence is the timeline's, with ``??`` for each hidden card. ``rows`` are the
    timeline's rows of ``events``, one each, in order (seqs may repeat in a broken log)."""
    from ..replay.html import redact

    for row, event in zip(rows, events, strict=True):
        if row["type"] not in _HIDDEN_CARD_TYPES:
            continue
        shown = redact(event, viewer)
        if shown.get("redacted"):
            row["text"] = describe(shown)


def _pretty_list(codes: list[str]) -> str:
    return " ".join(pretty_card(parse_card(c)) if is_card_code(c) else str(c) for c in codes)


#: state keys _print_state shows in its own way (or not at all: ``variant`` is in the head)
_SHOWN_FIRST = ("round", "dealer", "in_turn", "active", "stock_count", "pots", "scores",
                "winners")
_SHOWN_APART = frozenset({*_SHOWN_FIRST, "variant", "hands", "hand_counts", "discard_pile",
                          "stock", "melds"})


def _is_cards(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(c, str) and is_card_code(c) for c in value)


def _line(text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def _print_state(state: dict[str, Any]) -> None:
    """The table in ``state`` (a snapshot, a player's view when one was asked for): the
    common keys, the whole discard pile (r500 draws from deep in it), the melds, every
    hand shown, and the variant's extras (widow, buy window, played cards...) — only
    what the snapshot holds, so a player's view prints nothing he could not see."""
    for key in _SHOWN_FIRST:
        if key in state:
            _line(f"  {key}: {state[key]}")
    if "stock" in state:
        _line(f"  stock ({len(state['stock'])} cards, top first): {_pretty_list(state['stock'])}")
    pile = state.get("discard_pile") or []
    if pile:
        _line(f"  discard pile ({len(pile)} cards, top last): {_pretty_list(pile)}")
    for k, meld in enumerate(state.get("melds") or []):
        owner = f" of {meld['owner']}" if meld.get("owner") is not None else ""
        invalid = "" if meld.get("valid", True) else " (not a valid meld)"
        _line(f"  meld #{k}{owner}: {meld.get('kind', '?')} {_pretty_list(meld.get('cards', []))}"
              f"{invalid}")
    hands = state.get("hands", {})
    for player, cards in hands.items():
        _line(f"  {player} holds: {_pretty_list(cards)}")
    others = {p: n for p, n in state.get("hand_counts", {}).items() if p not in hands}
    if others:
        _line(f"  others hold (cards): {others}")
    for key, value in state.items():
        if key in _SHOWN_APART or value in (None, False, [], {}, ""):
            continue
        if isinstance(value, str) and is_card_code(value):
            value = pretty_card(parse_card(value))
        elif _is_cards(value):
            value = _pretty_list(value)
        _line(f"  {key}: {value}")


def _missing_at_note(events: list[dict[str, Any]], bad: list[BadLine], at: int) -> str | None:
    """What to tell a reader whose ``--at`` names a seq that no replayed event holds (a
    gap in the log, or a line that is not a valid event): the table shown is the one
    after the last event before it, which would otherwise pass for the table at ``at``.
    None when an event holds ``at``."""
    if any(e["seq"] == at for e in events):
        return None
    before = [e["seq"] for e in events if e["seq"] < at]
    shown = (f"the table shown is the one after seq {max(before)}, the last event before it"
             if before else "the table shown is the one before the game's first event")
    if any(b.seq == at for b in bad):
        return f"seq {at} is a line of the log that is not a valid event; {shown}"
    return f"the log has no event at seq {at} (a gap); {shown}"


def _print(record: GameRecord, rows: list[dict[str, Any]], state: dict[str, Any], upto: int,
           viewer: str | None, halted_at: int | None, end: int, *, so_far: bool = False) -> None:
    """The text view; ``so_far``: ``record`` is the game up to ``upto`` only (a player's
    view at --at), its results those of that moment."""
    head = Text(f"{record.game_id} · {record.variant or 'no GameCreated'} · ", style="bold")
    head.append("clean" if record.clean else f"{len(record.findings)} finding(s)",
                style="green" if record.clean else "bold red")
    if record.halted:
        head.append(" · replay halted", style="bold red")
    console.print(head)
    table = Table(show_header=True, header_style="bold", expand=True)
    for col, kw in (("seq", {"justify": "right"}), ("t (s)", {"justify": "right"}),
                    ("event", {"overflow": "fold", "ratio": 1})):
        table.add_column(col, **kw)
    explained: set[str] = set()  # a rule's text once, at its first finding: a log with
    for r in rows:               # hundreds of findings of one rule stays readable
        t = "" if r["t"] is None else f"{r['t']:.1f}"
        text = Text(r["text"])  # log data, never markup
        if r.get("quarantined"):
            text.append(f"  [not stored: quarantined by ingest ({r['quarantined']})]",
                        style="yellow")
        table.add_row(str(r["seq"]), t, text)
        for f in r["findings"]:
            style = "red" if f["kind"] != "integrity" else "magenta"
            text = f"⚠ {f['rule']} ({f['kind']}): {f['message']}"
            if f["rule_text"] and f["rule"] not in explained:
                text += f"\n   {f['rule_text']}"
                explained.add(f["rule"])
            table.add_row("", "", Text(text, style=style))
    console.print(table)
    who = f" as seen by {viewer}" if viewer else ""
    stopped = (f" (the replay halted at seq {halted_at}: the table as it stood there)"
               if halted_at is not None else "")
    console.print(Text(f"State after seq {upto}{who}{stopped}:", style="bold"))
    _print_state(state)
    # --at: the state above is mid-game, the results below are the whole game's; say so
    whole = f" of the whole game, after seq {end}" if upto < end else ""
    if so_far and not record.finished:  # a player's view at --at: the game went on after it
        _line(f"Results so far, after seq {upto} (what {viewer} could know then): winners "
              f"{record.results.winners}; net {record.results.net}")
    elif record.finished:
        _line(f"Results{whole}: winners {record.results.winners}; net {record.results.net}")
    else:  # a game cut short, halted or still in progress: stakes are still in the pot
        _line(f"Results so far{whole} (the game did not end by the rules): winners "
              f"{record.results.winners}; net {record.results.net}")
