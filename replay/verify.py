"""Verify many games: replay each, add the rules that span games (CL-NEXT), summarise,
and persist findings and results into the store for SQL (views ``findings`` and
``player_games``).

Input is whole games (lists of event dicts in seq order), from JSONL files or the
store. Lines that are not valid events are folded into their game as ``LOG-EVENT``
integrity findings when their game can be told, so nothing read is silently lost.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..events.gcpause import paused_gc
from ..events.models import IngestLinked
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
    #: in seq order; a line of the store's quarantine gets it from
    #: :func:`merge_store_lines` (None before: :func:`fold` then places it by seq)
    position: int | None = None
    #: a line of the store's quarantine (:func:`read_store_bad_lines`), not of a file
    quarantined: bool = False
    #: a quarantined line that this release reads as a valid event (kept back by ingest
    #: only for its place in the game: behind a gap, a chain break, at a taken seq; or a
    #: version an older release did not know): the replay takes it as the event it is,
    #: as a replay of the file meets it (:func:`merge_store_lines`)
    event: bool = False
    #: a quarantined line: its game's next free seq when ingest read it (None: a row of
    #: an older release, placed by :func:`_store_place`)
    head: int | None = None
    #: a quarantined line: how the store chains its game (``producer``/``ingest``/None)
    chained_by: str | None = None
    #: a quarantined line: the SHA-256 of its raw bytes (``store.quarantine.raw_sha256``),
    #: which names the row (a dispute bundle carries the line's bytes: replay.bundle)
    raw_sha256: str | None = None


@dataclass
class VerifyRun:
    records: list[GameRecord] = field(default_factory=list)
    bad_lines: list[BadLine] = field(default_factory=list)
    created: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the stored events of the games with quarantined lines to fold in, for
    #: :func:`attach_bad_lines` (records replayed elsewhere from the stored events only)
    store_games: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

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
    and seq, so the replay can take it in its place). Its ids are read as ingest reads
    them, so the line is placed alike from the file and from the store (audit 49)."""
    from ..events.ingest import salvage_ids

    _, game_id, seq = salvage_ids(raw)
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


def fold_order(events: list[dict[str, Any]], bad: Iterable[BadLine]
               ) -> Iterator[tuple[dict[str, Any], BadLine | None]]:
    """A game's valid events with its placed bad lines (``obj`` set) in the order the
    replay takes them: ``(event, None)`` or ``(line's object, line)``. Lines of files
    (and quarantined lines placed by :func:`merge_store_lines`) where the input had them
    among the game's events (``position``), other lines in seq order (before the first
    event of a greater seq). :func:`fold` and the HTML page (``replay.html``) both follow
    it, so the page shows what ``verify`` and ``replay --json`` say."""
    placed = [b for b in bad if b.obj is not None]
    by_position = all(b.position is not None for b in placed)

    def place(b: BadLine) -> int:
        return (b.position if by_position else b.seq) or 0

    pending = sorted(placed, key=place)  # stable: read order kept among equal places
    k = 0
    for i, event in enumerate(events):
        # before this event: a line read before it (position <= i), or one of a lower seq
        at = i + 1 if by_position else event["seq"]
        while k < len(pending) and place(pending[k]) < at:
            yield pending[k].obj or {}, pending[k]
            k += 1
        yield event, None
    for b in pending[k:]:
        yield b.obj or {}, b


def fold(events: list[dict[str, Any]], bad: list[BadLine]) -> GameRecord:
    """Replay a game's valid events with its placed bad lines (``obj`` set), as
    :func:`verify_files` does in one pass (the order of :func:`fold_order`)."""
    engine = GameEngine()
    for item, line in fold_order(events, bad):
        if line is None:
            engine.apply(item)
        else:
            engine.unreadable(item, line.code, bad_line_message(line))
    return engine.record()


#: quarantine reasons of a line that is not one unambiguous JSON object (a key repeated,
#: say): never read as an event, whatever it decodes to
_NOT_READ = frozenset({"not_json", "not_object"})


def _reads_as_event(obj: dict[str, Any], reason: str) -> bool:
    """Whether this release reads a quarantined line as a valid event, as the file
    readers would (``read_jsonl_events``): a line kept back only for its place (a gap, a
    chain break, a taken seq) is one; so is a line an older release could not read (a
    ``future_version`` it now knows) until the file is ingested again."""
    if reason in _NOT_READ:
        return False
    from ..events.ingest import check_event
    from ..events.models import EventError

    try:
        check_event(obj)
    except EventError:
        return False
    return True


#: the detail of a ``sequence_gap`` (events/ingest.py): the seq the game expected then
_EXPECTED = re.compile(r"expected seq (\d+), got -?\d+$")


def _store_place(b: BadLine) -> int:
    """Where a quarantined line stood among its game's stored events: before the stored
    event of seq ``head`` (ingest read it when the game's stored events ended just before
    it). A row of an older release has no ``head``: a gap's detail names it; a chain
    problem is only ever found at the next free seq; a conflict most likely came right
    after the event it conflicts with; any other line is placed at its own seq."""
    if b.head is not None:
        return b.head
    seq = b.seq or 0
    if b.code == "sequence_gap":
        found = _EXPECTED.search(b.reason)
        if found:
            return int(found.group(1))
    if b.code in ("conflict_seq", "conflict_event_id"):
        return seq + 1
    return seq


def merge_store_lines(events: list[dict[str, Any]], lines: Iterable[BadLine]
                      ) -> tuple[list[dict[str, Any]], list[BadLine], dict[int, BadLine]]:
    """A stored game (``events``, in seq order) with its quarantined lines folded in where
    ingest read them, so the replay of the store meets the game's lines as the replay of
    the file does (RULES.md §5: "Replaying the same log always gives the same result").

    Ingest stores a game only up to its first gap, chain break or unreadable line and
    quarantines the rest, raw text kept: replaying the stored events alone would judge a
    shorter game (no winner, stakes in the pot) and say nothing of the gap itself. Here
    a quarantined line that is a valid event (:func:`_reads_as_event`) becomes an event of
    the game again, at its place: a gap is then the LOG-SEQ finding it is in the file, a
    tampered line the LOG-CHAIN one, and the moves and claims behind them are replayed.
    A line that is not a valid event stays a bad line, placed (``position``) where it
    stood, as a file's line is (a LOG-EVENT finding; a halt unless its type is unknown).
    In a game the store chained itself (``chained_by = 'ingest'``) the stored events are
    marked :class:`~rummyguard.events.models.IngestLinked`: the replay checks their links
    as the store's own chain and judges the producer's chain as the file's replay does,
    where these events carry none. A quarantined line keeps the links its producer gave it
    (none, or a producer's chain: the mixed chain ingest quarantined it for, LOG-CHAIN as
    in the file) and leaves the store's chain as it was (a line at a stored seq is not a
    link of it); one without links is marked too, so a copy of it is compared by content
    as a copy of a stored event is.

    Returns the events (stored and quarantined, in that order), the game's other bad
    lines, and the quarantine line behind each event taken from it, by index (for the
    "not stored" marks of ``replay``). Lines that are not from the quarantine, or already
    placed, are returned as they are.
    """
    lines = list(lines)
    todo = [b for b in lines if b.quarantined and b.obj is not None and b.position is None]
    if not todo:
        return events, lines, {}
    picked = {id(b) for b in todo}
    rest = [b for b in lines if id(b) not in picked]
    pending = sorted(todo, key=_store_place)  # stable: ingest's read order among equals
    ingest_chained = any(b.chained_by == "ingest" for b in todo)
    if ingest_chained:
        events = [IngestLinked(e) for e in events]
    merged: list[dict[str, Any]] = []
    bad: list[BadLine] = []
    origin: dict[int, BadLine] = {}

    def take(item: dict[str, Any], line: BadLine | None) -> None:
        if line is None or line.event:
            if line is not None:
                origin[len(merged)] = line
                if ingest_chained and "hash" not in item and "prev_hash" not in item:
                    item = IngestLinked(item)  # a line of the game, as unchained as in the file
            merged.append(item)
        else:
            line.obj = item
            line.position = len(merged)
            bad.append(line)

    k = 0
    for event in events:
        while k < len(pending) and _store_place(pending[k]) <= event["seq"]:
            take(pending[k].obj or {}, pending[k])
            k += 1
        take(event, None)
    for b in pending[k:]:
        take(b.obj or {}, b)
    return merged, [*rest, *bad], origin


def read_store_bad_lines(con: Any, run: VerifyRun, game_id: str | None = None, *,
                         load_games: bool = True, unattributed: bool = False) -> None:
    """Add the store's quarantined lines that name a game (``game_id``: only that game's)
    to ``run.bad_lines``, in the order ingest read them.

    Ingest stores a game only up to its first gap, chain break or unreadable event and
    quarantines the rest, so the stored game alone can replay as a clean, shorter game.
    Each line that names its game and seq comes with its object (the raw line), and the
    replay folds it in where ingest read it (:func:`merge_store_lines`): a replay of the
    store then reports what a replay of the file reports. A line whose seq cannot be read
    is a LOG-EVENT finding at the game's last seq, as in a file. Lines stored by a later
    ingest (files ingested out of order) are left out, and so is a later copy, from
    another file, of a line already quarantined (the same line again is a no-op, as for
    a stored event). ``con`` is the store's DuckDB connection.

    ``load_games``: also keep the stored events of the games with such lines in
    ``run.store_games``, for :func:`attach_bad_lines` (a caller that replays every
    stored game itself, as ``verify`` does, passes False). ``unattributed``: also add
    the quarantined lines that name no game (``run.unattributed``), as ``verify FILES``
    lists a file's lines that name none.

    A single-game reader (``replay GAME``) passes ``game_id``: the filter is then on
    both tables, so the cost is that game's rows, not the whole quarantine joined
    against the whole event log (which made one game's replay grow with the store).
    """
    params = {} if game_id is None else {"game": game_id}
    in_quarantine = "" if game_id is None else "AND q.game_id = $game"
    in_events = "" if game_id is None else "AND e.game_id = $game"
    in_owner = "" if game_id is None else "AND o.game_id = $game"
    has_head = con.execute(
        "SELECT count(*) FROM duckdb_columns() WHERE schema_name = 'store' AND "
        "table_name = 'quarantine' AND column_name = 'head'").fetchall()[0][0]
    head = "q.head" if has_head else "NULL::BIGINT"
    rows = con.execute(f"""
        SELECT q.source, q.line_no, q.reason, q.detail, q.game_id, q.seq, q.raw,
               q.raw_sha256, {head}, c.chained_by,
               -- a conflict of event_id: whether a stored event of this very game holds
               -- the id (if another game's does, the line is not an event of this one,
               -- as the file readers say; ingest only calls a stored id a conflict)
               q.reason = 'conflict_event_id' AND EXISTS (
                   SELECT 1 FROM store.events o WHERE o.event_id = q.event_id
                     AND o.game_id = q.game_id {in_owner}) AS own_id
        FROM store.quarantine q LEFT JOIN store.games_chain c ON c.game_id = q.game_id
        WHERE q.game_id IS NOT NULL {in_quarantine}
          -- a line quarantined (say, after a gap) and stored by a later ingest is resolved:
          -- the game is then complete and verify-log calls it intact
          AND NOT EXISTS (SELECT 1 FROM store.events e
                          WHERE e.event_id = q.event_id AND e.game_id = q.game_id
                            AND e.seq = q.seq AND e.raw = q.raw {in_events})
        ORDER BY q.game_id, q.batch_id, q.line_no
    """, params).fetchall()
    seen: dict[tuple[str, str], str] = {}  # (game, raw sha) -> the source that had it first
    read: set[tuple[str, int, str]] = set()  # (source, line, sha): one verdict a line
    foldable: set[str] = set()
    for (source, line_no, reason, detail, game, seq, raw, sha, head_seq, chained_by,
         own_id) in rows:
        first = seen.setdefault((game, sha), source)
        if first != source or (source, line_no, sha) in read:
            # the very line again, from another file (a no-op, as for a stored event), or
            # the same line of the same file read again under another verdict
            continue
        read.add((source, line_no, sha))
        why = f"{reason}: {detail}" if detail else reason
        obj = None
        if seq is not None and seq >= 0:
            try:
                parsed = orjson.loads(raw)
            except orjson.JSONDecodeError:
                parsed = None
            if isinstance(parsed, dict) and parsed.get("game_id") == game \
                    and parsed.get("seq") == seq:
                obj = parsed
                foldable.add(game)
        event = obj is not None and _reads_as_event(obj, reason) and (
            reason != "conflict_event_id" or bool(own_id))
        run.bad_lines.append(BadLine(source, line_no, why, game, seq, obj, reason,
                                     quarantined=True, event=event, head=head_seq,
                                     chained_by=chained_by, raw_sha256=sha))
    if unattributed and game_id is None:
        for source, line_no, reason, detail in con.execute(
                "SELECT source, line_no, reason, detail FROM store.quarantine "
                "WHERE game_id IS NULL ORDER BY batch_id, line_no").fetchall():
            why = f"{reason}: {detail}" if detail else reason
            run.bad_lines.append(BadLine(source, line_no, why, None, None, code=reason,
                                         quarantined=True))
    if load_games and foldable:
        import pyarrow as pa

        from ..events.store import event_from_row

        con.register("_rg_games", pa.table({"game_id": pa.array(sorted(foldable), pa.string())}))
        try:
            stored = con.execute(
                "SELECT e.game_id, e.raw, e.prev_hash, e.hash FROM store.events e "
                "SEMI JOIN _rg_games g ON e.game_id = g.game_id ORDER BY e.game_id, e.seq"
            ).fetchall()
        finally:
            con.unregister("_rg_games")
        for game, raw, prev, h in stored:
            run.store_games.setdefault(game, []).append(event_from_row(raw, prev, h))


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
        game_id = events[0]["game_id"]
        if game_id in bad_by_game:  # the store's quarantined lines, where ingest read them
            events, bad_by_game[game_id], _ = merge_store_lines(events, bad_by_game[game_id])
        placed = [b for b in bad_by_game.get(game_id, ()) if b.obj is not None]
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
    refolded = False
    for i, record in enumerate(run.records):
        bads = bad_by_game.pop(record.game_id, [])
        stored = run.store_games.pop(record.game_id, None)
        if stored is not None and any(b.quarantined and b.obj is not None for b in bads):
            # replayed from the stored events only: again, with the quarantined lines
            # folded in, as verify_games replays it (read_store_bad_lines kept the events)
            events, bads, _ = merge_store_lines(stored, bads)
            record = fold(events, [b for b in bads if b.obj is not None])
            record.state = None
            run.records[i] = record
            refolded = True
        _attach(record, bads)
    known = len(run.created)
    _add_unreplayed(run, bad_by_game)
    if refolded or len(run.created) != known:
        # CL-NEXT reads each game's winners and the tables' games: judged again
        for record in run.records:
            record.findings = [f for f in record.findings if f.rule != "CL-NEXT"]
        check_tables(run)
    run.records.sort(key=lambda r: r.game_id)


def _finish(run: VerifyRun, bad_by_game: dict[str, list[BadLine]]) -> None:
    """Games with no valid event at all, the cross-game rules, the final order."""
    _add_unreplayed(run, bad_by_game)
    check_tables(run)
    run.records.sort(key=lambda r: r.game_id)


def _add_unreplayed(run: VerifyRun, bad_by_game: dict[str, list[BadLine]]) -> None:
    """A record for each game left in ``bad_by_game``: none of its lines was replayed
    (a file's lines that are not valid events; or the store's quarantined lines of a game
    none of whose lines was stored, which are replayed here as they stand)."""
    for game_id, bads in sorted(bad_by_game.items()):
        # a game none of whose lines was stored: its quarantined lines are all it has
        events, bads, _ = merge_store_lines([], bads)
        placed = [b for b in bads if b.obj is not None]
        if events and events[0]["type"] == "GameCreated":  # as _add_record: CL-NEXT, seats
            run.created[game_id] = {**events[0]["payload"], "ts": events[0]["ts"]}
        if placed or events:  # lines that can be placed, valid events or not
            record = fold(events, placed)
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
    winners VARCHAR[], findings INTEGER, events BIGINT, last_seq BIGINT, verified_at TIMESTAMP
);
CREATE TABLE IF NOT EXISTS store.replay_findings (
    game_id VARCHAR, seq BIGINT, rule VARCHAR, kind VARCHAR, message VARCHAR, n INTEGER
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
    _widen_seq_columns(con)
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


#: columns that hold a seq: BIGINT since audit 50 (a quarantined line folded back into its
#: game may name any seq up to 2**63-1; INTEGER made its finding end ``verify --db`` with
#: a conversion error)
_SEQ_COLUMNS = (("replay_findings", "seq"), ("replay_games", "last_seq"),
                ("replay_games", "events"))


def _widen_seq_columns(con: Any) -> None:
    """Bring a store whose replay tables an earlier version made (seq as INTEGER) to
    BIGINT, once: the table is rewritten only while a column is still INTEGER."""
    narrow = con.execute(
        "SELECT table_name, column_name FROM duckdb_columns() WHERE schema_name = 'store' "
        "AND database_name = current_database() AND data_type = 'INTEGER' "
        "AND (table_name, column_name) IN (SELECT * FROM (VALUES "
        + ", ".join(f"('{t}', '{c}')" for t, c in _SEQ_COLUMNS) + "))"
    ).fetchall()
    for table, column in narrow:
        con.execute(f"ALTER TABLE store.{table} ALTER COLUMN {column} TYPE BIGINT")


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

