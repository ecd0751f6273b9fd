"""Reading the times of chat exports: ISO 8601 text and seconds since 1970, in a zone.

Times without a zone keep their wall-clock value and are labelled with the chosen zone;
absolute times are converted to it.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from pathlib import Path

from sdtt.errors import InputError

_LAST_EPOCH = 32503680000
"""3000-01-01 in seconds since 1970: later "times" are garbage, not dates."""


def localize(value: datetime, zone: tzinfo) -> datetime:
    """A naive time labelled with ``zone``; an aware one converted to it."""
    if value.tzinfo is None or value.utcoffset() is None:
        return value.replace(tzinfo=zone)
    return value.astimezone(zone)


def parse_iso_time(
    text: str, zone: tzinfo, *, path: str | Path, field: str | None = None, line: int | None = None
) -> datetime:
    """An ISO 8601 time (``Z`` allowed), localized with :func:`localize`."""
    try:
        return localize(datetime.fromisoformat(text.strip()), zone)
    except (ValueError, OverflowError):
        raise InputError(
            f"{text[:40]!r} is not an ISO 8601 time.", path=path, field=field, line=line
        ) from None


def time_from_epoch(
    seconds: float,
    zone: tzinfo,
    *,
    path: str | Path,
    field: str | None = None,
    line: int | None = None,
) -> datetime:
    """The time ``seconds`` after 1970-01-01 UTC, in ``zone``."""
    try:
        if seconds != seconds or not 0 <= seconds < _LAST_EPOCH:  # NaN, or not 1970-2999
            raise ValueError
        return datetime.fromtimestamp(seconds, UTC).astimezone(zone)
    except (ValueError, OverflowError, OSError):
        raise InputError(
            f"{seconds!r} is not a plausible time (seconds since 1970).",
            path=path,
            field=field,
            line=line,
        ) from None
