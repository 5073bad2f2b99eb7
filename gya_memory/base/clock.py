"""Clocks that a memory store can be given instead of the wall clock.

A stored notebook output must be the same on every run, so notebooks pass a
:class:`FixedClock`; real programs use :func:`system_clock`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone

Clock = Callable[[], datetime]
"""Anything that returns a timezone-aware ``datetime`` when called."""

CHINA_TZ = timezone(timedelta(hours=8), name="UTC+08:00")


def system_clock() -> datetime:
    """The wall clock, in the machine's local time zone (timezone-aware)."""
    return datetime.now().astimezone()


class FixedClock:
    """A clock that starts at ``start`` and moves ``step`` forward on every call.

    >>> clock = FixedClock(datetime(2026, 9, 1, 9, 0, tzinfo=CHINA_TZ), step=timedelta(minutes=1))
    >>> clock().isoformat(), clock().isoformat()
    ('2026-09-01T09:00:00+08:00', '2026-09-01T09:01:00+08:00')
    """

    def __init__(self, start: datetime, step: timedelta = timedelta(seconds=1)) -> None:
        if start.tzinfo is None:
            raise ValueError("FixedClock needs a timezone-aware start, e.g. tzinfo=CHINA_TZ")
        self._next = start
        self._step = step

    def __call__(self) -> datetime:
        now = self._next
        self._next = now + self._step
        return now

    def advance(self, delta: timedelta) -> None:
        """Jump forward, e.g. three days between two sessions."""
        self._next += delta


def aware_now(clock: Clock) -> datetime:
    """``clock()``, refused if it is naive: a stored time must say its time zone.

    >>> aware_now(lambda: datetime(2026, 9, 1, 9, 0))
    Traceback (most recent call last):
    ...
    ValueError: the clock returned a naive datetime; give it a time zone
    """
    now = clock()
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("the clock returned a naive datetime; give it a time zone")
    return now
