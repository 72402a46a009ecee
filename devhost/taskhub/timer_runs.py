"""Timer functions as singletons across host processes (L2).

On Azure a timer function runs on one instance at a time under a renewed lock: a run longer
than the interval delays the next occurrence, a crashed holder's lock expires. ``timer_runs``
holds per function the lock (owner, until when) and the last run's end; an occurrence starts
only while the lock is free and after that end, so none runs twice across processes.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import sqlitekit as db
from devhost.taskhub.events import format_time, parse_time
from devhost.taskhub.hub_file import HubPart


class TimerRuns(HubPart):
    """Per-function run locks of timer triggers (a part of the task hub)."""

    def begin_timer_run(self, function: str, owner: str, occurrence: datetime,
                        lock: timedelta) -> str:
        """Take a timer function's run lock for ``occurrence``, if it may run now.

        ``lock`` holds unless renewed (host.json ``singleton.lockPeriod``). Returns ``"run"`` (the
        lock is ``owner``'s), ``"busy"`` (a run holds it) or ``"passed"`` (not after the last run's
        end: it ran already, or fell inside a longer run).
        """
        now = self.clock.now()
        with db.write(self._conn()) as conn:
            row = conn.execute("SELECT owner, lock_expires, last_end FROM timer_runs"
                               " WHERE function=?", (function,)).fetchone()
            if row is not None:
                if row["owner"] is not None and parse_time(row["lock_expires"]) > now:
                    return "busy"
                if row["last_end"] is not None and occurrence <= parse_time(row["last_end"]):
                    return "passed"
            conn.execute(
                "INSERT INTO timer_runs (function, owner, lock_expires, last_start)"
                " VALUES (?,?,?,?) ON CONFLICT (function) DO UPDATE SET owner=excluded.owner,"
                " lock_expires=excluded.lock_expires, last_start=excluded.last_start",
                (function, owner, format_time(now + lock), format_time(occurrence)))
            return "run"

    def renew_timer_run(self, function: str, owner: str, lock: timedelta) -> bool:
        """Extend ``owner``'s run lock to now + ``lock``; False if it is not held any more."""
        expires = format_time(self.clock.now() + lock)
        with db.write(self._conn()) as conn:
            return conn.execute("UPDATE timer_runs SET lock_expires=? WHERE function=?"
                                " AND owner=?", (expires, function, owner)).rowcount == 1

    def end_timer_run(self, function: str, owner: str, ended: datetime) -> bool:
        """Release ``owner``'s run lock, record the run's end; False if another took it."""
        with db.write(self._conn()) as conn:
            return conn.execute(
                "UPDATE timer_runs SET owner=NULL, lock_expires=NULL, last_end=?"
                " WHERE function=? AND owner=?",
                (format_time(ended), function, owner)).rowcount == 1
