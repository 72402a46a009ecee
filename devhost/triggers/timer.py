"""Timer triggers: a timer function runs once at a time across all host processes (L2).

Each run holds the function's run lock in the task hub, renewed every third of host.json
``singleton.lockPeriod`` (15 s by default); the singleton rules are in
:mod:`devhost.taskhub.timer_runs`. Occurrences missed while no host ran, or skipped by a
clock jump in drain mode, fire once with ``past_due=True``. A host failure preparing a run
is logged at ERROR and, like a failed occurrence on Azure, not retried (L3).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from azure.functions.timer import TimerRequest

from devhost.app import invoke
from devhost.app.loader import FunctionDef
from devhost.failures.host_failures import describe
from devhost.taskhub.events import format_time
from devhost.taskhub.store import TaskHub
from devhost.triggers.schedule import Schedule
from devhost.workers.lease import renewing

log = logging.getLogger("devhost.timer")

DEFAULT_LOCK_PERIOD = timedelta(seconds=15)
"""host.json ``singleton.lockPeriod`` when not set (the Functions host's default)."""

_TIMESPAN = re.compile(r"^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2}(?:\.\d+)?)$")


def singleton_lock_period(app_dir: str | Path) -> timedelta:
    """Read host.json ``singleton.lockPeriod`` (default :data:`DEFAULT_LOCK_PERIOD`).

    Raises
    ------
    ValueError
        If the value is not a positive ``[d.]hh:mm:ss`` TimeSpan; the message names it.
    """
    try:
        config = json.loads((Path(app_dir) / "host.json").read_text())
    except (OSError, ValueError):
        return DEFAULT_LOCK_PERIOD
    raw = (config.get("singleton") or {}).get("lockPeriod")
    if raw is None:
        return DEFAULT_LOCK_PERIOD
    match = _TIMESPAN.match(str(raw).strip())
    period = timedelta(0)
    if match:
        days, hours, minutes = (int(g or 0) for g in match.groups()[:3])
        period = timedelta(days=days, hours=hours, minutes=minutes,
                           seconds=float(match.group(4)))
    if period <= timedelta(0):
        raise ValueError(f"host.json singleton.lockPeriod: must be a positive TimeSpan "
                         f"such as 00:00:15, got {raw!r}")
    return period


class TimerTriggerPoller:
    """Fires the timer functions of an app on their schedules.

    ``taskhub`` gives the clock and the run locks; ``client_binding`` returns the durable client
    binding JSON; ``lock_period`` is host.json ``singleton.lockPeriod``.
    """

    is_schedule = True

    def __init__(self, functions: list[FunctionDef], taskhub: TaskHub, owner: str,
                 client_binding: Callable[[], str],
                 lock_period: timedelta = DEFAULT_LOCK_PERIOD) -> None:
        self.taskhub = taskhub
        self.owner = owner
        self.client_binding = client_binding
        self.lock_period = lock_period
        now = taskhub.clock.now()
        self.entries: list[list[Any]] = []
        for f in functions:
            schedule = Schedule(f.trigger["schedule"])
            startup = bool(f.trigger.get("runOnStartup"))
            self.entries.append([f, schedule, now if startup else schedule.next_after(now)])

    def next_due(self) -> datetime | None:
        """Return the earliest next occurrence of any schedule."""
        return min((e[2] for e in self.entries), default=None)

    def poll_once(self) -> int:
        """Run every function whose next occurrence has come; return how many ran."""
        ran = 0
        for entry in self.entries:
            fdef, schedule, due = entry
            now = self.taskhub.clock.now()
            if due > now:
                continue
            outcome = self.taskhub.begin_timer_run(fdef.name, self.owner, due,
                                                   self.lock_period)
            if outcome != "run":
                # Another process runs it, or ran this occurrence: wait for the next one.
                entry[2] = schedule.next_after(now)
                continue
            try:
                self._run(fdef, schedule, due, now)
            finally:
                ended = self.taskhub.clock.now()
                if not self.taskhub.end_timer_run(fdef.name, self.owner, ended):
                    log.warning("timer function %s ran past its lock; another process may "
                                "have run it meanwhile", fdef.name)
                # A run longer than the interval delays the next occurrence (L2).
                entry[2] = schedule.next_after(ended)
            ran += 1
        return ran

    def _run(self, fdef: FunctionDef, schedule: Schedule, due: datetime,
             now: datetime) -> None:
        try:
            # Straight to the first occurrence after now: a long gap (host down, clock
            # jump) costs one run, flagged past due, not one per missed occurrence.
            request = TimerRequest(
                past_due=schedule.next_after(due) <= now,
                schedule_status={"Last": format_time(due),
                                 "Next": format_time(schedule.next_after(now))},
                schedule={"AdjustForDST": False})
            kwargs: dict[str, Any] = {fdef.trigger_param: request}
            if fdef.client_param:
                kwargs[fdef.client_param] = self.client_binding()
        except Exception as exc:  # noqa: BLE001 - the host failed, not the function (L3)
            log.error("the local host could not run timer function %s (occurrence %s): %s; "
                      "like a failed occurrence, it is not retried", fdef.name,
                      format_time(due), describe(exc), exc_info=True)
            return
        try:
            with renewing(lambda: self.taskhub.renew_timer_run(fdef.name, self.owner,
                                                               self.lock_period),
                          self.lock_period):
                invoke.call(fdef.func, kwargs)
        except Exception:  # noqa: BLE001 - a failed occurrence is logged, as in Azure
            log.exception("timer function %s failed", fdef.name)
