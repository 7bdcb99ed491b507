"""The ``ts`` field: RFC 3339 UTC with milliseconds <-> integer milliseconds since 1970.

>>> ts_millis("1970-01-02T00:00:01.500Z")
86401500
>>> format_ts(86401500)
'1970-01-02T00:00:01.500Z'
"""

from __future__ import annotations

from datetime import UTC, date, datetime

_DAY_CACHE: dict[str, int] = {}
_EPOCH_ORDINAL = 719163  # date(1970, 1, 1).toordinal()


def ts_millis(ts: str) -> int:
    """Exact and fast (the replay calls it per event): the date part is cached."""
    day = _DAY_CACHE.get(ts[:10])
    if day is None:
        day = date.fromisoformat(ts[:10]).toordinal() - _EPOCH_ORDINAL
        _DAY_CACHE[ts[:10]] = day
    return (
        ((day * 24 + int(ts[11:13])) * 60 + int(ts[14:16])) * 60 + int(ts[17:19])
    ) * 1000 + int(ts[20:23])


def format_ts(ms: int) -> str:
    """Milliseconds since the epoch -> ``YYYY-MM-DDTHH:MM:SS.mmmZ``."""
    dt = datetime.fromtimestamp(ms // 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
