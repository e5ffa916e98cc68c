"""§4.6 timestamps: an RFC 3339 string or epoch milliseconds, normalised to epoch-ms."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

__all__ = ["MAX_SAFE_INTEGER", "epoch_ms"]

# §4.6: integers must be exact in an IEEE-754 double.
MAX_SAFE_INTEGER = 2**53 - 1

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MILLISECOND = timedelta(milliseconds=1)

# RFC 3339 `date-time` (T, t or space as separator, as RFC 3339 §5.6 allows), or a
# bare `full-date` meaning midnight UTC. re.ASCII: `\d` must not match other digits.
_TIMESTAMP = re.compile(
    r"(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})"
    r"(?:[Tt ](?P<hour>\d{2}):(?P<minute>\d{2}):(?P<second>\d{2})"
    r"(?:\.(?P<fraction>\d+))?"
    r"(?P<offset>[Zz]|[+-]\d{2}:\d{2})?)?",
    re.ASCII,
)


def epoch_ms(raw: object) -> int | None:
    """Milliseconds since the Unix epoch for a §4.6 timestamp, or None if it is not one.

    Accepted: integral epoch-ms numbers within the 53-bit range (not booleans), and
    RFC 3339 strings. A date-time without an offset is read as UTC (§4.6 recommends
    UTC); a bare date is midnight UTC; fractions below a millisecond are truncated;
    a leap second ``:60`` is the first millisecond of the next minute.
    """
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        return _integral(raw)
    if isinstance(raw, str):
        return _parse_timestamp(raw)
    return None


def _integral(number: int | float) -> int | None:
    if isinstance(number, float) and not number.is_integer():
        return None  # also rejects NaN and the infinities
    value = int(number)
    return value if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else None


def _parse_timestamp(text: str) -> int | None:
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        return None
    second = int(match["second"] or 0)
    if second > 60:
        return None
    offset = _offset(match["offset"])
    if offset is None:
        return None
    try:
        moment = datetime(
            int(match["year"]),
            int(match["month"]),
            int(match["day"]),
            int(match["hour"] or 0),
            int(match["minute"] or 0),
            min(second, 59),
            tzinfo=offset,
        )
    except ValueError:
        return None
    fraction = int((match["fraction"] or "").ljust(3, "0")[:3])
    leap = 1000 if second == 60 else 0
    return (moment - _EPOCH) // _MILLISECOND + fraction + leap


def _offset(text: str | None) -> timezone | None:
    if text is None or text in ("Z", "z"):
        return UTC
    hours, minutes = int(text[1:3]), int(text[4:6])
    if hours > 23 or minutes > 59:
        return None
    delta = timedelta(hours=hours, minutes=minutes)
    return timezone(-delta if text[0] == "-" else delta)
