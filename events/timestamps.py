"""The ``ts`` field: RFC 3339 UTC with milliseconds <-> integer milliseconds since 1970.

>>> ts_millis("1970-01-02T00:00:01.500Z")
86401500
>>> format_ts(86401500)
'1970-01-02T00:00:01.500Z'
"""

from __future__ import annotations

from datetime import date

#: "YYYY-MM-DDTHH:MM" -> milliseconds at that minute; a game's events share a few
#: minutes, so the replay parses a date and an hour once per minute, not per event
_MINUTE_CACHE: dict[str, int] = {}
_MINUTE_CACHE_MAX = 1 << 16  # cleared when full: a bound, not an LRU (misses are cheap)
_EPOCH_ORDINAL = 719163  # date(1970, 1, 1).toordinal()
#: "SS" -> its milliseconds and "mmm" -> its integer, every valid value: two look-ups in
#: tables that stay in the CPU cache (a one-key "SS.mmm" cache held 60,000 keys, and its
#: cache misses cost more per event than the int parse it saved: 0.5 µs/event measured)
_SECONDS: dict[str, int] = {f"{s:02d}": s * 1000 for s in range(60)}
_MILLIS: dict[str, int] = {f"{m:03d}": m for m in range(1000)}
#: the three tables of :func:`ts_millis`'s common case, for the replay's hot loop, which
#: inlines it (a call per event costs as much as its look-ups); a miss must go to
#: :func:`ts_millis`, which fills the minute table (cleared in place, never rebound)
TS_TABLES = (_MINUTE_CACHE, _SECONDS, _MILLIS)


def ts_millis(ts: str) -> int:
    """Exact and fast (the replay calls it per event). ``ts`` is a validated
    ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (EVENTS.md); ``SS`` and ``mmm`` read as one integer.

    The common case is three look-ups (subscripts: no method calls); a minute not yet
    cached, or seconds that are not plain digits, take :func:`_slow_millis`."""
    try:
        return _MINUTE_CACHE[ts[:16]] + _SECONDS[ts[17:19]] + _MILLIS[ts[20:23]]
    except KeyError:
        return _slow_millis(ts)


def _slow_millis(ts: str) -> int:
    """:func:`ts_millis` step by step: the minute (parsed and cached), then ``SS`` and
    ``mmm`` read as one integer (the character between them is checked upstream), which
    is what the tables hold for plain digits."""
    base = _MINUTE_CACHE.get(ts[:16])
    if base is None:
        base = _minute_millis(ts)
    return base + int(ts[17:19] + ts[20:23])


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
        # not strftime: its "%Y" gives "1", not "0001", for year 1
        d = date.fromordinal(_EPOCH_ORDINAL + day)
        text = f"{d.year:04d}-{d.month:02d}-{d.day:02d}T"
        if len(_DAY_TEXT) < 1 << 16:
            _DAY_TEXT[day] = text
    secs, milli = divmod(in_day, 1000)
    hours, rest = divmod(secs, 3600)
    return f"{text}{hours:02d}:{rest // 60:02d}:{rest % 60:02d}.{milli:03d}Z"
