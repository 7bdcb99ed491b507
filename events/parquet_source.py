"""Parquet input: one event per row, read as the JSON lines the rest of ingest takes.

ARCHITECTURE.md lets a platform hand over its log as JSON Lines *or Parquet*, and
EVENTS.md ("Files") lets the project add "other inputs, e.g. Parquet, with the same
fields". Ingest
(and ``verify``/``replay`` on files) read a Parquet file through this module, which turns
each row back into the line a JSONL producer would have written; from there every line
takes the one path of :mod:`.ingest`: the same validation, hash checks, quarantine
reasons and ``read = stored + duplicates + quarantined`` accounting. A row's "line
number" is its 1-based row number in the file.

How a row becomes a line (decisions; EVENTS.md defines events as JSON objects only):

- A row with a non-null ``raw`` column (text or binary) is that text, byte for byte:
  the original line. ``rummyguard export --parquet`` writes ``raw``, so an export
  ingested into another store stores exactly the same bytes and hashes.
- Any other row is rebuilt from its columns, one key per column, in the file's column
  order: the envelope fields of EVENTS.md plus ``payload``. ``payload`` may be JSON
  text (what a mixed-type column has to be: our export writes it so) or a struct/map,
  taken as is (so a struct column shared by several event types, whose rows carry the
  other types' fields as nulls, is quarantined for those extra fields: nothing guesses
  which nulls were meant; write such a payload as JSON text). A null ``hash``/``prev_hash`` means the field is absent (an unchained
  log); any other null stays ``null`` and validation decides. A ``ts`` stored as a
  Parquet timestamp is written as EVENTS.md's ``YYYY-MM-DDTHH:MM:SS.mmmZ`` when it is a
  whole millisecond (else in ISO form, which validation rejects as a bad timestamp:
  nothing is rounded). Columns outside the contract stay in the object, so validation
  quarantines the row for its extra field, as it would a JSONL line.
- A ``payload`` given as JSON text goes into the line *as written*, not parsed and
  re-serialised: a text that repeats a key is then quarantined ``not_json`` exactly as
  the same JSONL line is (parsing would have kept the last value silently; audit 42).
- Values JSON has no form for (audit 42: they ended the run with a TypeError): a
  ``binary`` value holding UTF-8 text is that text (a string column written without
  Parquet's UTF8 annotation, as the ``raw`` column is read); one that is not UTF-8 goes
  into the line as its bytes, so the line is not UTF-8 and is quarantined ``not_json``
  with those bytes kept; a row holding a decimal, date, time, duration, UUID or (outside
  ``ts``) timestamp value, at any depth, is quarantined ``not_json`` with the row as read
  (EVENTS.md's numbers are integers and its strings are strings: nothing is converted into
  either; audit 49: orjson writes dates, times and UUIDs as strings by itself).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from .timestamps import format_ts

#: the first bytes of every Parquet file
PARQUET_MAGIC = b"PAR1"
#: envelope fields whose null means "absent" (an unchained event has neither)
_OPTIONAL = ("prev_hash", "hash")
_ROWS_PER_READ = 16_384
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class ParquetSourceError(OSError):
    """A Parquet file that cannot be read (no footer, a truncated or corrupt file)."""


def is_parquet(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(4) == PARQUET_MAGIC


def open_parquet(path: Path) -> pq.ParquetFile:
    """Open ``path`` (its footer read), or raise :class:`ParquetSourceError` saying why."""
    try:
        return pq.ParquetFile(path)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise ParquetSourceError(f"{path}: not a readable Parquet file ({exc})") from None


class ParquetLines:
    """The rows of one Parquet file as JSON lines, with progress in bytes of the file
    (by row groups read), as :class:`~rummyguard.events.ingest._Source` gives them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.size = path.stat().st_size
        self._file = open_parquet(path)
        self._groups_done = 0

    def position(self) -> int:
        groups = self._file.metadata.num_row_groups
        return self.size if groups == 0 else self.size * self._groups_done // groups

    def lines(self) -> Iterator[bytes]:
        try:
            for group in range(self._file.metadata.num_row_groups):
                table = self._file.read_row_group(group)
                for batch in table.to_batches(max_chunksize=_ROWS_PER_READ):
                    yield from _batch_lines(batch)
                self._groups_done = group + 1
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise ParquetSourceError(
                f"{self.path}: the Parquet file is corrupt ({exc}); the rows before the "
                "damage were read"
            ) from None

    def close(self) -> None:
        self._file.close()


def _batch_lines(batch: pa.RecordBatch) -> Iterator[bytes]:
    names = batch.schema.names
    raw = batch.column(names.index("raw")).to_pylist() if "raw" in names else None
    rows: list[dict[str, Any]] | None = None
    uuids = False
    for i in range(batch.num_rows):
        text = raw[i] if raw is not None else None
        if isinstance(text, str):
            yield text.encode("utf-8")
            continue
        if isinstance(text, bytes):
            yield text
            continue
        if text is not None:
            # a ``raw`` column of numbers, lists or structs is no line: quarantined
            # ``not_json`` with the value as read (``bytes(5)`` would have made 5 NULs)
            yield _UNJSONABLE + repr({"raw": text}).encode("utf-8", "backslashreplace")
            continue
        if rows is None:
            rows = batch.select([n for n in names if n != "raw"]).to_pylist()
            uuids = _nested_uuid(batch.schema)
        yield row_line(rows[i], uuids)


def row_line(row: dict[str, Any], uuids: bool = False) -> bytes:
    """One row (column -> value, as pyarrow gives it) -> the event's JSON line.

    ``uuids``: the batch's schema holds a UUID type inside a struct, list or map (a
    top-level UUID value is always caught; a nested one is looked for only then).

    >>> row_line({"seq": 3, "ts": datetime(2026, 11, 2, 0, 18, 22, 859000, tzinfo=UTC),
    ...           "payload": '{"card": "7H"}', "prev_hash": None, "hash": None})
    b'{"seq":3,"ts":"2026-11-02T00:18:22.859Z","payload":{"card": "7H"}}'
    >>> row_line({"event_id": b"e1", "type": b"\\xff"})
    b'{"event_id":"e1","type":"\\xff"}'
    >>> from decimal import Decimal
    >>> row_line({"seq": Decimal(3)})[:40]
    b'<a Parquet row with a value JSON cannot '
    """
    obj: dict[str, Any] = {}
    verbatim: list[bytes] = []  # texts spliced into the line as they are

    def splice(text: bytes) -> str:
        verbatim.append(text)
        return _slot(len(verbatim) - 1)

    for key, value in row.items():
        if value is None and key in _OPTIONAL:
            continue
        if key == "payload" and isinstance(value, str | bytes):
            text = value.encode("utf-8") if isinstance(value, str) else value
            try:
                orjson.loads(text)
                # JSON text: as written, so a repeated key stays seen; a line break in
                # valid JSON can only be whitespace between tokens, and a line has none
                value = splice(text.replace(b"\r", b" ").replace(b"\n", b" "))
            except orjson.JSONDecodeError:
                value = _text_or_splice(text, splice)  # validation: not an object
        elif key == "payload":
            value = _payload(value)
        elif key == "ts" and isinstance(value, datetime):
            value = _ts_text(value)
        elif isinstance(value, bytes | bytearray | memoryview):
            value = _text_or_splice(bytes(value), splice)
        if isinstance(value, UUID) or (uuids and _holds_uuid(value)):
            # a UUID: orjson would write its text; nothing is converted (see above)
            return _UNJSONABLE + repr(row).encode("utf-8", "backslashreplace")
        obj[key] = value
    try:
        # dates, times and datetimes go to ``default`` too (orjson would write them as
        # strings itself), and so does everything else JSON has no form for
        line = orjson.dumps(obj, default=_no_json_form, option=orjson.OPT_PASSTHROUGH_DATETIME)
    except TypeError:
        # a value JSON has no form for (a decimal, a date, a time, a duration): no number,
        # string or timestamp is made of it; the row goes to the quarantine as it was read
        return _UNJSONABLE + repr(row).encode("utf-8", "backslashreplace")
    for i, text in enumerate(verbatim):
        line = line.replace(orjson.dumps(_slot(i)), text, 1)
    return line


def _no_json_form(value: Any) -> Any:
    raise TypeError(f"no JSON form for {type(value).__name__}")


def _holds_uuid(value: Any) -> bool:
    if isinstance(value, UUID):
        return True
    if isinstance(value, dict):
        return any(_holds_uuid(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_uuid(v) for v in value)
    return False


def _nested_uuid(schema: pa.Schema) -> bool:
    """Whether a struct, list or map column of ``schema`` holds a UUID type."""
    def inner(t: pa.DataType, top: bool) -> bool:
        if isinstance(t, pa.UuidType):
            return not top
        return any(inner(t.field(i).type, False) for i in range(t.num_fields))
    return any(inner(f.type, True) for f in schema)


def _text_or_splice(data: bytes, splice: Any) -> str:
    """Binary holding UTF-8 text -> that text; other bytes go into the line quoted, as
    they are, so the line is not UTF-8 and ingest quarantines it (``not_json``) with
    those very bytes as its raw text."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return str(splice(b'"' + data + b'"'))


def _slot(i: int) -> str:
    """A placeholder for a text spliced in after serialising: NUL-delimited, so a column
    would have to hold this very text, NULs included, to be mistaken for it."""
    return f"\x00rummyguard-verbatim-{i}\x00"


#: the start of the line of a row that holds a value JSON has no form for: not JSON, so
#: ingest quarantines it (``not_json``), with the row as pyarrow read it after this
_UNJSONABLE = b"<a Parquet row with a value JSON cannot hold (a decimal, date or time)> "


def _payload(value: Any) -> Any:
    """A map column (a list of pairs) -> an object; a struct (a dict) as it is."""
    if isinstance(value, list) and all(isinstance(p, tuple) and len(p) == 2 for p in value):
        return dict(value)
    return value


def _ts_text(value: datetime) -> str:
    """A Parquet timestamp -> EVENTS.md's text, when it is a whole UTC millisecond."""
    if value.tzinfo is None:  # a naive timestamp column: Parquet's "UTC-normalised" = false
        value = value.replace(tzinfo=UTC)
    if value.microsecond % 1000:
        return value.isoformat()  # not a whole millisecond: validation says bad timestamp
    delta = value - _EPOCH
    return format_ts((delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000)
