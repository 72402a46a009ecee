"""Timer-trigger schedules: NCRONTAB six-field expressions (seconds first) and TimeSpan intervals.

NCRONTAB is evaluated with croniter (seconds-first mode), in UTC.
"""

from __future__ import annotations

import re
import threading
from datetime import datetime, timedelta

from croniter import croniter

_TIMESPAN = re.compile(r"^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})$")


class ScheduleError(ValueError):
    """The schedule expression is neither a six-field NCRONTAB nor a TimeSpan."""


class Schedule:
    """Next-occurrence calculator for one timer trigger (``*/5 * * * * *`` or ``[d.]hh:mm:ss``).

    Raises
    ------
    ScheduleError
        If the expression is malformed; the message names the expression and the rule.
    """

    def __init__(self, expression: str) -> None:
        self.expression = expression.strip()
        match = _TIMESPAN.match(self.expression)
        if match:
            days, hours, minutes, seconds = (int(g or 0) for g in match.groups())
            self.interval: timedelta | None = timedelta(days=days, hours=hours,
                                                        minutes=minutes, seconds=seconds)
            if self.interval <= timedelta(0):
                raise ScheduleError(f"schedule '{expression}': TimeSpan must be positive")
            return
        self.interval = None
        if len(self.expression.split()) != 6:
            raise ScheduleError(
                f"schedule '{expression}': NCRONTAB needs six fields "
                "'{second} {minute} {hour} {day} {month} {day-of-week}'")
        if not croniter.is_valid(self.expression, second_at_beginning=True):
            raise ScheduleError(f"schedule '{expression}': not a valid NCRONTAB expression")
        # Parsed once: building a croniter is about two thirds of a next-occurrence call.
        self._cron = croniter(self.expression, second_at_beginning=True)
        self._cron_guard = threading.Lock()

    def next_after(self, when: datetime) -> datetime:
        """Return the first occurrence strictly after the timezone-aware ``when``, in UTC."""
        if self.interval is not None:
            return when + self.interval
        with self._cron_guard:
            self._cron.set_current(when, force=True)
            return self._cron.get_next(datetime)
