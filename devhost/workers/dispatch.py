"""The durable work loops: claim, run and commit orchestrator episodes and activities.

:class:`DurableWorker` is used both by the background threads of a running host and, step
by step, by drain mode. Every step claims its work with a lease first, so several threads
and several host processes can run these loops on one task hub.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from datetime import timedelta

from devhost.app_loader import AppIndex
from devhost.orchestration import sdk_fastpaths
from devhost.orchestration.episode import Episode
from devhost.taskhub.store import ActivityWorkItem, TaskHub
from devhost.workers.activities import run_activity

log = logging.getLogger("devhost.worker")


class DurableWorker:
    """Runs orchestrator episodes and activities for one app against one task hub.

    Parameters
    ----------
    taskhub : TaskHub
        The shared task hub.
    index : AppIndex
        The app's functions.
    owner : str, optional
        Lease owner id; defaults to a fresh random id (one per worker).
    orchestration_lease : timedelta
        How long an episode may hold its instance.
    activity_lease : timedelta
        Lease of an activity work item; renewed while the activity runs.
    sleep : callable
        Waits between HTTP 202 polls (seconds).
    """

    def __init__(self, taskhub: TaskHub, index: AppIndex, *, owner: str | None = None,
                 orchestration_lease: timedelta = timedelta(seconds=30),
                 activity_lease: timedelta = timedelta(seconds=60),
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.taskhub = taskhub
        self.index = index
        self.owner = owner or uuid.uuid4().hex[:12]
        self.orchestration_lease = orchestration_lease
        self.activity_lease = activity_lease
        self.sleep = sleep
        self.handlers = {name: f.func for name, f in index.orchestrators.items()}
        sdk_fastpaths.install()

    def run_episodes(self, max_instances: int = 1) -> int:
        """Claim up to ``max_instances`` instances, run one episode each, commit them together.

        Returns
        -------
        int
            Instances claimed (whether or not each commit won).
        """
        items = self.taskhub.claim_orchestrations(self.owner, self.orchestration_lease,
                                                  max_instances)
        if not items:
            return 0
        batch = []
        for item in items:
            try:
                commit = Episode(item, self.handlers.get(item.instance.name),
                                 self.taskhub.clock.now()).run()
            except Exception:  # noqa: BLE001 - a host bug; others in the batch go on
                log.exception("episode of %s crashed; releasing it", item.instance.instance_id)
                self.taskhub.release_orchestration(item)
                continue
            batch.append((item, commit))
        for (item, _), won in zip(batch, self.taskhub.commit_episodes(batch), strict=True):
            if not won:
                log.warning("lease on %s was lost; episode discarded",
                            item.instance.instance_id)
        return len(items)

    def run_one_episode(self) -> bool:
        """Claim one instance with visible messages and run one episode for it.

        Returns
        -------
        bool
            True if an instance was claimed.
        """
        return self.run_episodes(1) > 0

    def claim_activities(self, max_count: int = 1) -> list[ActivityWorkItem]:
        """Lease up to ``max_count`` activity work items."""
        return self.taskhub.claim_activities(self.owner, self.activity_lease, max_count)

    def execute_activities(self, items: list[ActivityWorkItem]) -> list[bool]:
        """Run claimed activities one after another; record their completions together.

        Returns
        -------
        list of bool
            Per item: True if this worker's completion was recorded (False if another
            worker completed it after this one's lease expired).
        """
        done = [(item, run_activity(item, self.index.activities, self.taskhub.clock.now,
                                    self.sleep)) for item in items]
        return self.taskhub.complete_activities(done)

    def execute_activity(self, item: ActivityWorkItem) -> bool:
        """Run one claimed activity and record its completion."""
        return self.execute_activities([item])[0]
