"""Timer triggers: fire each occurrence of a schedule once across all host processes.

Like the Functions host, a timer function is a singleton: each occurrence is claimed with a
named lease in the task hub (``timer:<function>:<occurrence>``), so when several host
processes share a task hub exactly one of them runs it. Occurrences missed while no host was
running, or skipped by a clock jump in drain mode, fire once with ``past_due=True``.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from azure.functions.timer import TimerRequest

from devhost import invoke
from devhost.app_loader import FunctionDef
from devhost.taskhub.events import format_time
from devhost.taskhub.store import TaskHub
from devhost.triggers.schedule import Schedule

log = logging.getLogger("devhost.timer")

OCCURRENCE_LEASE = timedelta(days=1)
"""How long a claimed occurrence stays claimed (long after it could matter)."""


class TimerTriggerPoller:
    """Fires the timer functions of an app on their schedules.

    Parameters
    ----------
    functions : list of FunctionDef
        The app's timer-triggered functions.
    taskhub : TaskHub
        Provides the clock and the named leases shared by host processes.
    owner : str
        Lease owner id of this host process.
    client_binding : callable
        Returns the durable client binding JSON for functions that take a client.
    """

    is_schedule = True

    def __init__(self, functions: list[FunctionDef], taskhub: TaskHub, owner: str,
                 client_binding) -> None:
        self.taskhub = taskhub
        self.owner = owner
        self.client_binding = client_binding
        now = taskhub.clock.now()
        self.entries = []
        for f in functions:
            schedule = Schedule(f.trigger["schedule"])
            startup = bool(f.trigger.get("runOnStartup"))
            self.entries.append([f, schedule, now if startup else schedule.next_after(now)])

    def next_due(self) -> datetime | None:
        """Return the earliest next occurrence of any schedule."""
        return min((e[2] for e in self.entries), default=None)

    def poll_once(self) -> int:
        """Run every function whose next occurrence has come; return how many ran."""
        now = self.taskhub.clock.now()
        ran = 0
        for entry in self.entries:
            fdef, schedule, due = entry
            if due > now:
                continue
            past_due = schedule.next_after(due) <= now
            # Straight to the first occurrence after now: a long gap (host down, clock
            # jump) costs one step, not one per missed occurrence.
            following = schedule.next_after(now)
            entry[2] = following
            lease = f"timer:{fdef.name}:{format_time(due)}"
            if not self.taskhub.try_lease(lease, self.owner, OCCURRENCE_LEASE):
                continue
            request = TimerRequest(past_due=past_due, schedule_status={
                "Last": format_time(due), "Next": format_time(following)},
                schedule={"AdjustForDST": False})
            kwargs = {fdef.trigger_param: request}
            if fdef.client_param:
                kwargs[fdef.client_param] = self.client_binding()
            try:
                invoke.call(fdef.func, kwargs)
            except Exception:  # noqa: BLE001 - a failed occurrence is logged, as in Azure
                log.exception("timer function %s failed", fdef.name)
            ran += 1
        return ran
