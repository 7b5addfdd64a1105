"""Connect's Date/Time/Timestamp values in Python and Java's millisecond view of them.

The JSON converter gives a Timestamp as an aware UTC ``datetime``, a Date as a ``date`` and a Time
as a ``time``; Java holds all three as ``java.util.Date`` (epoch milliseconds). Transforms that
convert between them (TimestampConverter, Cast, InsertField) go through epoch milliseconds, in UTC.
"""

from __future__ import annotations

import datetime as dt

MILLIS_PER_DAY = 86_400_000
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def epoch_millis(value: dt.date | dt.time) -> int:
    """``java.util.Date.getTime()`` of a Connect temporal value (naive datetimes are UTC)."""
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
        delta = aware - _EPOCH
        return delta.days * MILLIS_PER_DAY + delta.seconds * 1000 + delta.microseconds // 1000
    if isinstance(value, dt.date):
        return (value - _EPOCH.date()).days * MILLIS_PER_DAY
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000


def timestamp_of(millis: int) -> dt.datetime:
    """A Connect Timestamp value (aware, UTC) for epoch milliseconds."""
    return _EPOCH + dt.timedelta(milliseconds=millis)


def date_of(millis: int) -> dt.date:
    """A Connect Date value: the UTC day of ``millis`` (Java's TimestampConverter truncates to midnight)."""
    return timestamp_of(millis).date()


def time_of(millis: int) -> dt.time:
    """A Connect Time value: the UTC time of day of ``millis``."""
    return timestamp_of(millis).time()


def iso_text_for(value: dt.date | dt.time) -> str:
    """Java's ``Values.dateFormatFor(d).format(d)``: time-of-day text below one day after the epoch
    (negative instants too), a date at exact midnights, else a full timestamp, all in UTC."""
    millis = epoch_millis(value)
    t = timestamp_of(millis)
    time_text = f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}.{t.microsecond // 1000:03d}Z"
    if millis < MILLIS_PER_DAY:
        return time_text
    date_text = f"{t.year:04d}-{t.month:02d}-{t.day:02d}"
    if millis % MILLIS_PER_DAY == 0:
        return date_text
    return f"{date_text}T{time_text}"
