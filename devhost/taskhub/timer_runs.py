"""Timer functions as singletons across host processes (SPEC L2).

On Azure a timer-triggered function runs on one instance at a time, under a lock that is
renewed while it runs: a run longer than the interval delays the next occurrence, and a
crashed holder's lock expires. The ``timer_runs`` table holds, per function, who runs it
now and until when (the lock) and when its last run ended. An occurrence is started only
while nobody holds the lock and only if it falls after the last run's end, so an
occurrence already run (or passed over by a long run) is never run again by another
process.
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
        """Take a timer function's run lock for one occurrence, if it may run now.

        Parameters
        ----------
        function : str
            The timer function's name.
        owner : str
            The host process (poller) asking.
        occurrence : datetime
            The schedule occurrence to run.
        lock : timedelta
            How long the lock holds unless renewed (host.json ``singleton.lockPeriod``).

        Returns
        -------
        str
            ``"run"`` (the lock is ``owner``'s now), ``"busy"`` (a run holds the lock, in
            this process or another) or ``"passed"`` (the occurrence is not after the end
            of the last run: it ran already, or fell inside a longer run).
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
        """Release ``owner``'s run lock and record when the run ended.

        Returns
        -------
        bool
            False, with nothing written, if the lock had expired and another process
            took it meanwhile.
        """
        with db.write(self._conn()) as conn:
            return conn.execute(
                "UPDATE timer_runs SET owner=NULL, lock_expires=NULL, last_end=?"
                " WHERE function=? AND owner=?",
                (format_time(ended), function, owner)).rowcount == 1
