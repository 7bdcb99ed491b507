"""``format_ts`` (a cached day text plus arithmetic) gives exactly what strftime gives."""

from __future__ import annotations


def test_format_ts_matches_strftime_and_round_trips() -> None:
    """events/timestamps.format_ts (cached day text + arithmetic) against strftime."""
    import random
    from datetime import UTC, datetime

    from rummyguard.events.timestamps import format_ts, ts_millis

    rng = random.Random(7)
    for ms in [0, 86_399_999, 86_400_000, 951_782_400_000, *(rng.randrange(4_102_444_800_000)
                                                            for _ in range(20_000))]:
        dt = datetime.fromtimestamp(ms // 1000, tz=UTC)
        assert format_ts(ms) == dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
        assert ts_millis(format_ts(ms)) == ms


def test_format_ts_pads_years_before_1000() -> None:
    """EVENTS.md's ``ts`` is ``YYYY-...``: four digits always. strftime's ``%Y`` gives "1"
    for year 1 on glibc, so the day text is formatted from the date's fields."""
    from rummyguard.events.timestamps import format_ts, ts_millis

    for text in ("0001-01-01T00:00:00.000Z", "0999-12-31T23:59:59.999Z",
                 "1969-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"):
        assert format_ts(ts_millis(text)) == text
