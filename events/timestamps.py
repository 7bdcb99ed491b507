"""The ``ts`` field: RFC 3339 UTC with milliseconds <-> integer milliseconds since 1970.

>>> ts_millis("1970-01-02T00:00:01.500Z")
86401500
>>> format_ts(86401500)
'1970-01-02T00:00:01.500Z'
"""

from __future__ import annotations

from datetime import UTC, date, datetime

#: "YYYY-MM-DDTHH:MM" -> milliseconds at that minute; a game's events share a few
#: minutes, so the replay parses a date and an hour once per minute, not per event
_MINUTE_CACHE: dict[str, int] = {}
_MINUTE_CACHE_MAX = 1 << 16  # cleared when full: a bound, not an LRU (misses are cheap)
_EPOCH_ORDINAL = 719163  # date(1970, 1, 1).toordinal()
#: "SS.mmm" -> milliseconds into the minute (one slice and a look-up instead of two
#: slices, a join and an int per event; at most 60,000 valid keys)
_SECOND_CACHE: dict[str, int] = {}
_SECOND_CACHE_MAX = 1 << 17


def ts_millis(ts: str) -> int:
    """Exact and fast (the replay calls it per event). ``ts`` is a validated
    ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (EVENTS.md); ``SS`` and ``mmm`` read as one integer."""
    base = _MINUTE_CACHE.get(ts[:16])
    if base is None:
        base = _minute_millis(ts)
    part = _SECOND_CACHE.get(ts[17:23])
    if part is None:
        part = _second_millis(ts)
    return base + part


def _second_millis(ts: str) -> int:
    part = int(ts[17:19] + ts[20:23])  # the character between them is checked upstream
    if len(_SECOND_CACHE) >= _SECOND_CACHE_MAX:
        _SECOND_CACHE.clear()
    _SECOND_CACHE[ts[17:23]] = part
    return part


def _minute_millis(ts: str) -> int:
    day = date.fromisoformat(ts[:10]).toordinal() - _EPOCH_ORDINAL
    base = ((day * 24 + int(ts[11:13])) * 60 + int(ts[14:16])) * 60_000
    if len(_MINUTE_CACHE) >= _MINUTE_CACHE_MAX:
        _MINUTE_CACHE.clear()
    _MINUTE_CACHE[ts[:16]] = base
    return base


#: day number since 1970 -> "YYYY-MM-DDT" (the simulator formats every event's time)
_DAY_TEXT: dict[int, str] = {}


def format_ts(ms: int) -> str:
    """Milliseconds since the epoch -> ``YYYY-MM-DDTHH:MM:SS.mmmZ``."""
    day, in_day = divmod(ms, 86_400_000)
    text = _DAY_TEXT.get(day)
    if text is None:
        text = datetime.fromtimestamp(day * 86_400, tz=UTC).strftime("%Y-%m-%dT")
        if len(_DAY_TEXT) < 1 << 16:
            _DAY_TEXT[day] = text
    secs, milli = divmod(in_day, 1000)
    hours, rest = divmod(secs, 3600)
    return f"{text}{hours:02d}:{rest // 60:02d}:{rest % 60:02d}.{milli:03d}Z"
