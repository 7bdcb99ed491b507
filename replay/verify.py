"""Verify many games: replay each, add the rules that span games (CL-NEXT), summarise,
and persist findings and results into the store for SQL (views ``findings`` and
``player_games``).

Input is whole games (lists of event dicts in seq order), from JSONL files or the
store. Lines that are not valid events are folded into their game as ``LOG-EVENT``
integrity findings when their game can be told, so nothing read is silently lost.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..events.gcpause import paused_gc
from ..events.timestamps import ts_millis
from .engine import GameEngine, GameRecord, Results, replay
from .findings import Finding
from .rules.classic import check_next_games


@dataclass
class BadLine:
    """A line of an input file that is not a valid event."""

    source: str
    line_no: int
    reason: str
    game_id: str | None
    seq: int | None
    #: the line's JSON object when it names its game and seq (a line of a file, not of
    #: the quarantine): the replay then takes it in its place in the game (seq and chain
    #: links checked, LOG-EVENT reported by the engine), instead of reading past a "gap"
    obj: dict[str, Any] | None = None
    code: str = "invalid"  # the quarantine reason code
    #: a placed line of a file (``obj`` set): how many valid events of its game the file
    #: held before it, so the grouped replay (:func:`fold`) takes it where the file had
    #: it, as the streaming :func:`verify_files` does, also in a game whose lines are not
    #: in seq order; None for a line of the quarantine, which :func:`fold` places by seq
    position: int | None = None


@dataclass
class VerifyRun:
    records: list[GameRecord] = field(default_factory=list)
    bad_lines: list[BadLine] = field(default_factory=list)
    created: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def unattributed(self) -> list[BadLine]:
        return [b for b in self.bad_lines if b.game_id is None]

    def summary(self) -> dict[str, Any]:
        by_rule = Counter(f.rule for r in self.records for f in r.findings)
        return {
            "games": len(self.records),
            "clean": sum(1 for r in self.records if r.clean),
            "findings_by_rule": dict(sorted(by_rule.items())),
        }

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "games": [r.to_dict() for r in self.records],
            "summary": self.summary(),
        }
        if self.unattributed:
            out["unreadable_lines"] = [
                {"source": b.source, "line": b.line_no, "reason": b.reason} for b in self.unattributed
            ]
        return out


def read_games_from_files(paths: Iterable[Path], run: VerifyRun) -> dict[str, list[dict[str, Any]]]:
    """Group the events of JSONL files by game (file order kept within a game)."""
    games: dict[str, list[dict[str, Any]]] = {}
    with paused_gc():  # a million small dicts: no cyclic-GC scans over them
        for path, line_no, raw, event in _read_lines(paths):
            if isinstance(event, dict):
                games.setdefault(event["game_id"], []).append(event)
                continue
            bad = _bad_line(run, path, line_no, raw, event)
            if bad.game_id is not None:
                bad.position = len(games.setdefault(bad.game_id, []))
    return games


def verify_files(
    paths: Iterable[Path],
    run: VerifyRun | None = None,
    progress: Callable[[int], None] | None = None,
    keep_state: bool = False,
) -> VerifyRun:
    """:func:`verify_games` over :func:`read_games_from_files`, in one streaming pass:
    each event goes to its game's engine as it is read (games may interleave in a
    file; each still sees its own events in file order), so no game's events are held
    in memory. Same records, findings and order as the two-step form (tested).
    ``progress`` is called with the number of events read since its last call (every
    few thousand events: a progress bar's update costs more than a replayed event)."""
    run = run or VerifyRun()
    unreported = 0
    engines: dict[str, GameEngine] = {}
    order: list[str] = []  # games in order of first appearance, as the two-step form
    firsts: dict[str, dict[str, Any]] = {}
    with paused_gc():
        for path, line_no, raw, event in _read_lines(paths):
            if isinstance(event, dict):
                game_id = event["game_id"]
                engine = engines.get(game_id)
                if engine is None:  # the events are read for this pass only: given up
                    engine = engines[game_id] = GameEngine(consume=True)
                    order.append(game_id)
                if game_id not in firsts:  # the game's first *valid* event, as events[0]
                    firsts[game_id] = event
                engine.apply(event)
            else:
                bad = _bad_line(run, path, line_no, raw, event)
                if bad.obj is not None:
                    engine = engines.get(bad.obj["game_id"])
                    if engine is None:
                        engine = engines[bad.obj["game_id"]] = GameEngine()
                        order.append(bad.obj["game_id"])
                    engine.unreadable(bad.obj, bad.code, bad_line_message(bad))
            unreported += 1
            if unreported == _PROGRESS_EVERY and progress is not None:
                progress(unreported)
                unreported = 0
        if unreported and progress is not None:
            progress(unreported)
        bad_by_game = _bad_lines_by_game(run)
        for game_id in order:
            _add_record(run, engines.pop(game_id).record(), firsts.get(game_id), bad_by_game,
                        keep_state)
        _finish(run, bad_by_game)
    return run


_PROGRESS_EVERY = 4096


def _read_lines(paths: Iterable[Path]) -> Iterator[tuple[Path, int, str, Any]]:
    """Every line of ``paths`` in read order, as ``(path, line_no, raw, event or error)``.

    EVENTS.md: ``event_id`` is globally unique, and ingest rejects an id already used with
    other content as ``conflict_event_id``. An id first read in one game and then in
    *another* is that conflict, so it is given here as a line that is not a valid event,
    with the same code: ``verify FILES`` and ``replay GAME FILES`` then report it at its seq
    (LOG-EVENT, the game halted there) exactly as ``verify --db`` does after ingest
    quarantined it. The first use, in read order, keeps the id, as in the store. An id
    used twice within one game is the engine's own check (LOG-EVENT, play goes on).
    The owners are held for the whole read: about 100 bytes per event.
    """
    from ..events.ingest import read_jsonl_events
    from ..events.models import EventError

    owners: dict[str, str] = {}  # event_id -> the game that used it first
    for path in paths:
        for line_no, raw, event in read_jsonl_events(path):
            if type(event) is dict:
                game_id = event["game_id"]
                owner = owners.setdefault(event["event_id"], game_id)
                if owner != game_id:
                    event = EventError(
                        "conflict_event_id",
                        f"event_id {event['event_id']!r} is already used by game {owner!r} "
                        "(event ids are globally unique)")
            yield path, line_no, raw, event


def _bad_line(run: VerifyRun, path: Path, line_no: int, raw: str, error: object) -> BadLine:
    """Record a line that is not a valid event (with its object when it names its game
    and seq, so the replay can take it in its place)."""
    game_id, seq = _salvage_ids(raw)
    obj = None
    if game_id is not None and seq is not None and seq >= 0:  # a place in its game
        obj = orjson.loads(raw)
    bad = BadLine(str(path), line_no, str(error), game_id, seq, obj,
                  getattr(error, "reason", "invalid"))
    run.bad_lines.append(bad)
    return bad


def bad_line_message(b: BadLine) -> str:
    """The LOG-EVENT message of a line that is not a valid event."""
    return f"{b.source}:{b.line_no} is not a valid event: {b.reason}"


def fold(events: list[dict[str, Any]], bad: list[BadLine]) -> GameRecord:
    """Replay a game's valid events with its placed bad lines (``obj`` set), as
    :func:`verify_files` does in one pass: lines of files where the file had them among
    the game's events (``position``), lines of the quarantine in seq order (the order of
    a log in seq order, which the store is)."""
    engine = GameEngine()
    by_position = all(b.position is not None for b in bad)

    def place(b: BadLine) -> int:
        return (b.position if by_position else b.seq) or 0

    pending = sorted(bad, key=place)  # stable: read order kept among equal places
    k = 0
    for i, event in enumerate(events):
        # before this event: a file's line read before it (position <= i), or a quarantined
        # line of a lower seq
        at = i + 1 if by_position else event["seq"]
        while k < len(pending) and place(pending[k]) < at:
            engine.unreadable(pending[k].obj or {}, pending[k].code, bad_line_message(pending[k]))
            k += 1
        engine.apply(event)
    for b in pending[k:]:
        engine.unreadable(b.obj or {}, b.code, bad_line_message(b))
    return engine.record()


def read_store_bad_lines(con: Any, run: VerifyRun, game_id: str | None = None) -> None:
    """Add the store's quarantined lines that name a game (``game_id``: only that game's)
    to ``run.bad_lines``.

    Ingest stores a game only up to its first gap, chain break or unreadable event and
    quarantines the rest, so the stored game alone can replay as a clean, shorter game.
    Reading the quarantine makes a replay of the store report what a replay of the file
    reports: a LOG-EVENT integrity finding per bad line, at its seq; lines stored by a
    later ingest (files ingested out of order) are left out. ``con`` is the store's
    DuckDB connection.

    A single-game reader (``replay GAME``) passes ``game_id``: the filter is then on
    both tables, so the cost is that game's rows, not the whole quarantine joined
    against the whole event log (which made one game's replay grow with the store).
    """
    params = {} if game_id is None else {"game": game_id}
    in_quarantine = "" if game_id is None else "AND q.game_id = $game"
    in_events = "" if game_id is None else "AND e.game_id = $game"
    rows = con.execute(f"""
        SELECT source, line_no, reason, detail, game_id, seq FROM store.quarantine q
        WHERE game_id IS NOT NULL {in_quarantine}
          -- a line quarantined (say, after a gap) and stored by a later ingest is resolved:
          -- the game is then complete and verify-log calls it intact
          AND NOT EXISTS (SELECT 1 FROM store.events e
                          WHERE e.event_id = q.event_id AND e.game_id = q.game_id
                            AND e.seq = q.seq AND e.raw = q.raw {in_events})
        ORDER BY game_id, seq NULLS FIRST, source, line_no
    """, params).fetchall()
    for source, line_no, reason, detail, game_id, seq in rows:
        why = f"{reason}: {detail}" if detail else reason
        run.bad_lines.append(BadLine(source, line_no, why, game_id, seq))


def _salvage_ids(raw: str) -> tuple[str | None, int | None]:
    """The game id and seq of a line that failed validation, if they can be read."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None, None
    if not isinstance(obj, dict):
        return None, None
    game_id = obj.get("game_id")
    seq = obj.get("seq")
    return (game_id if isinstance(game_id, str) and game_id else None,
            seq if type(seq) is int else None)


def verify_games(
    games: Iterable[list[dict[str, Any]]],
    run: VerifyRun | None = None,
    progress: Callable[[int], None] | None = None,
    keep_state: bool = False,
) -> VerifyRun:
    """Replay every game; then add bad-line and cross-game (CL-NEXT) findings.

    A record's final state (hands, table: most of its memory) is dropped unless
    ``keep_state``: a nightly verify of a million games keeps only results and findings.
    """
    with paused_gc():  # records pile up by the million: no cyclic-GC scans over them
        return _verify_games(games, run or VerifyRun(), progress, keep_state)


def _verify_games(
    games: Iterable[list[dict[str, Any]]],
    run: VerifyRun,
    progress: Callable[[int], None] | None,
    keep_state: bool,
) -> VerifyRun:
    bad_by_game = _bad_lines_by_game(run)
    for events in games:
        if not events:
            continue
        placed = [b for b in bad_by_game.get(events[0]["game_id"], ()) if b.obj is not None]
        record = fold(events, placed) if placed else replay(events)
        _add_record(run, record, events[0], bad_by_game, keep_state)
        if progress is not None:
            progress(1)
    _finish(run, bad_by_game)
    return run


def _bad_lines_by_game(run: VerifyRun) -> dict[str, list[BadLine]]:
    bad_by_game: dict[str, list[BadLine]] = {}
    for b in run.bad_lines:
        if b.game_id is not None:
            bad_by_game.setdefault(b.game_id, []).append(b)
    return bad_by_game


def _add_record(
    run: VerifyRun,
    record: GameRecord,
    first: dict[str, Any] | None,
    bad_by_game: dict[str, list[BadLine]],
    keep_state: bool,
) -> None:
    """One replayed game into the run, with its bad lines as LOG-EVENT findings.
    ``first`` is the game's first valid event (None: no line of it is one)."""
    if not keep_state:
        record.state = None  # 6x the memory of the rest of a classic record
    _attach(record, bad_by_game.pop(record.game_id, []))
    if first is not None and first["type"] == "GameCreated":
        run.created[record.game_id] = {**first["payload"], "ts": first["ts"]}
    run.records.append(record)


def _attach(record: GameRecord, bads: list[BadLine]) -> None:
    """A replayed game's bad lines as LOG-EVENT findings at their seq (a line the replay
    took in its place, ``obj`` set, was reported there)."""
    added = False
    for b in bads:
        if b.obj is not None:
            continue
        seq = b.seq if b.seq is not None else record.last_seq
        record.findings.append(Finding(seq, "LOG-EVENT", "integrity", bad_line_message(b)))
        added = True
    if added:  # in seq order, as the engine gives them (stable within a seq)
        record.findings.sort(key=lambda f: f.seq)


def attach_bad_lines(run: VerifyRun) -> None:
    """Add ``run.bad_lines`` to records replayed elsewhere (the Ray scan's map), as
    :func:`verify_games` adds them while it replays: each game's lines as LOG-EVENT
    findings, and a record for a game none of whose lines was stored."""
    bad_by_game = _bad_lines_by_game(run)
    for record in run.records:
        _attach(record, bad_by_game.pop(record.game_id, []))
    _add_unreplayed(run, bad_by_game)
    run.records.sort(key=lambda r: r.game_id)


def _finish(run: VerifyRun, bad_by_game: dict[str, list[BadLine]]) -> None:
    """Games with no valid event at all, the cross-game rules, the final order."""
    _add_unreplayed(run, bad_by_game)
    check_tables(run)
    run.records.sort(key=lambda r: r.game_id)


def _add_unreplayed(run: VerifyRun, bad_by_game: dict[str, list[BadLine]]) -> None:
    """A record for each game left in ``bad_by_game``: no line of it is a valid event."""
    for game_id, bads in sorted(bad_by_game.items()):
        placed = [b for b in bads if b.obj is not None]
        if placed:  # a game of which no line is a valid event, but some can be placed
            record = fold([], placed)
            record.findings.extend(Finding(b.seq or 0, "LOG-EVENT", "integrity", bad_line_message(b))
                                   for b in bads if b.obj is None)
            record.findings.sort(key=lambda f: f.seq)
            run.records.append(record)
            continue
        findings = [Finding(b.seq or 0, "LOG-EVENT", "integrity", bad_line_message(b)) for b in bads]
        run.records.append(GameRecord(game_id, "", findings, True, Results([], {}, {}), [], 0, -1))


def check_tables(run: VerifyRun) -> None:
    """CL-NEXT: at each table, the next classic game starts with the last winner."""
    by_id = {r.game_id: r for r in run.records}
    tables: dict[str, list[tuple[int, str]]] = {}
    for game_id, created in run.created.items():
        if created.get("variant") == "classic":
            tables.setdefault(created["table_id"], []).append((ts_millis(created["ts"]), game_id))
    for games in tables.values():
        games.sort()
        rows = [
            (gid, run.created[gid]["dealer"], run.created[gid]["seats"], by_id[gid].results.winners)
            for _, gid in games
        ]
        for game_id, message in check_next_games(rows):
            by_id[game_id].findings.insert(0, Finding(0, "CL-NEXT", "violation", message))


# --- persistence -------------------------------------------------------------------------------

_DDL = """
CREATE SCHEMA IF NOT EXISTS store;
CREATE TABLE IF NOT EXISTS store.replay_games (
    game_id VARCHAR PRIMARY KEY, variant VARCHAR, clean BOOLEAN, halted BOOLEAN,
    winners VARCHAR[], findings INTEGER, events INTEGER, last_seq INTEGER, verified_at TIMESTAMP
);
CREATE TABLE IF NOT EXISTS store.replay_findings (
    game_id VARCHAR, seq INTEGER, rule VARCHAR, kind VARCHAR, message VARCHAR, n INTEGER
);
CREATE TABLE IF NOT EXISTS store.replay_player_games (
    game_id VARCHAR, player VARCHAR, seat INTEGER, variant VARCHAR, net BIGINT,
    score BIGINT, won BOOLEAN
);
CREATE OR REPLACE VIEW main.findings AS
    SELECT f.game_id, f.seq, f.rule, f.kind, f.message, g.variant
    FROM store.replay_findings f JOIN store.replay_games g USING (game_id);
ALTER TABLE store.replay_games ADD COLUMN IF NOT EXISTS finished BOOLEAN;
CREATE OR REPLACE VIEW main.player_games AS
    SELECT p.game_id, p.player, p.seat, p.variant, p.net, p.score, p.won,
           g.clean, g.halted, g.finished
    FROM store.replay_player_games p JOIN store.replay_games g USING (game_id);
"""


def save_run(con: Any, run: VerifyRun) -> None:
    """Write (replace) the results of every verified game into the store, in one
    transaction; the views ``findings`` and ``player_games`` read them."""
    import pyarrow as pa

    con.execute(_DDL)
    ids = [r.game_id for r in run.records]
    games, findings, players = [], [], []
    for r in run.records:
        variant = r.variant or None  # no GameCreated: unknown, NULL as in the `games` view
        games.append((r.game_id, variant, r.clean, r.halted, r.results.winners, len(r.findings),
                      r.events_read, r.last_seq, r.finished))
        for n, f in enumerate(r.findings):
            findings.append((r.game_id, f.seq, f.rule, f.kind, f.message, n))
        seats = run.created.get(r.game_id, {}).get("seats", list(r.results.net))
        for seat, player in enumerate(seats):
            players.append((r.game_id, player, seat, variant, r.results.net.get(player, 0),
                            r.results.scores.get(player), player in r.results.winners))
    con.execute("BEGIN TRANSACTION")
    try:
        con.register("_rg_ids", pa.table({"game_id": pa.array(ids, pa.string())}))
        for table in ("replay_games", "replay_findings", "replay_player_games"):
            con.execute(f"DELETE FROM store.{table} WHERE game_id IN (SELECT game_id FROM _rg_ids)")
        con.unregister("_rg_ids")
        _insert(con, "replay_games", games,
                ["game_id", "variant", "clean", "halted", "winners", "findings", "events", "last_seq",
                 "finished"], extra=("verified_at", "now() AT TIME ZONE 'UTC'"))
        _insert(con, "replay_findings", findings, ["game_id", "seq", "rule", "kind", "message", "n"])
        _insert(con, "replay_player_games", players,
                ["game_id", "player", "seat", "variant", "net", "score", "won"])
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise


def _insert(con: Any, table: str, rows: list[tuple], columns: list[str],
            extra: tuple[str, str] | None = None) -> None:
    """Insert ``rows`` (tuples in ``columns`` order) by column name; ``extra`` is one more
    (column, SQL expression) pair, such as the time of the run."""
    if not rows:
        return
    import pyarrow as pa

    data = pa.table({c: [row[i] for row in rows] for i, c in enumerate(columns)})
    con.register("_rg_rows", data)
    cols = ", ".join(columns)
    if extra:
        con.execute(f"INSERT INTO store.{table} ({cols}, {extra[0]}) "
                    f"SELECT {cols}, {extra[1]} FROM _rg_rows")
    else:
        con.execute(f"INSERT INTO store.{table} ({cols}) SELECT {cols} FROM _rg_rows")
    con.unregister("_rg_rows")

