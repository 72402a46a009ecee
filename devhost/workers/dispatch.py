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
from typing import Any

from devhost.app_loader import AppIndex
from devhost.entities.calls import EntityCalls
from devhost.orchestration import sdk_fastpaths
from devhost.orchestration.episode import Episode
from devhost.orchestration.versioning import MISMATCH_MESSAGE, REJECT_DELAY, Versioning
from devhost.taskhub.store import (
    TERMINAL_STATUSES,
    ActivityWorkItem,
    EpisodeCommit,
    OrchestrationWorkItem,
    TaskHub,
)
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
    versioning : Versioning, optional
        host.json's versioning settings, checked before every episode; None runs every
        instance.
    """

    def __init__(self, taskhub: TaskHub, index: AppIndex, *, owner: str | None = None,
                 orchestration_lease: timedelta = timedelta(seconds=30),
                 activity_lease: timedelta = timedelta(seconds=60),
                 sleep: Callable[[float], None] = time.sleep,
                 versioning: Versioning | None = None) -> None:
        self.taskhub = taskhub
        self.index = index
        self.owner = owner or uuid.uuid4().hex[:12]
        self.orchestration_lease = orchestration_lease
        self.activity_lease = activity_lease
        self.sleep = sleep
        self.handlers = {name: f.func for name, f in index.orchestrators.items()}
        self.entity_calls = EntityCalls(index.entities)
        self.versioning = versioning
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
        batch = self.run_claimed(items)
        _log_lost(batch, self.taskhub.commit_episodes(batch), [], [])
        return len(items)

    def run_claimed(self, items: list[OrchestrationWorkItem]
                    ) -> list[tuple[OrchestrationWorkItem, EpisodeCommit]]:
        """Run one episode for each claimed instance; release the ones that crash.

        Returns
        -------
        list of (OrchestrationWorkItem, EpisodeCommit)
            The commits to write, in claim order.
        """
        batch = []
        for item in items:
            rejected, mismatch = self._check_version(item)
            if rejected:
                continue
            try:
                commit = Episode(item, self.handlers.get(item.instance.name),
                                 self.taskhub.clock.now(), version_mismatch=mismatch,
                                 entities=self.entity_calls).run()
            except Exception:  # noqa: BLE001 - a host bug; others in the batch go on
                log.exception("episode of %s crashed; releasing it", item.instance.instance_id)
                self.taskhub.release_orchestration(item)
                continue
            batch.append((item, commit))
        return batch

    def _check_version(self, item: OrchestrationWorkItem) -> tuple[bool, str | None]:
        """Apply the versioning settings: (rejected and abandoned, failure message or None)."""
        inst = item.instance
        if self.versioning is None or inst.runtime_status in TERMINAL_STATUSES \
                or self.versioning.complies(inst.version):
            return False, None
        log.warning("%s", self.versioning.explain(inst.instance_id, inst.version))
        if self.versioning.failure == "Fail":
            return False, MISMATCH_MESSAGE
        try:
            self.taskhub.abandon_orchestration(item, REJECT_DELAY)
        except Exception:  # noqa: BLE001 - the lease expires and the check runs again
            log.exception("could not abandon %s; its lease expires instead", inst.instance_id)
        return True, None

    def run_round(self, commits: list[tuple[OrchestrationWorkItem, EpisodeCommit]],
                  completions: list[tuple[ActivityWorkItem, dict[str, Any]]],
                  max_instances: int, max_activities: int
                  ) -> tuple[list[tuple[OrchestrationWorkItem, EpisodeCommit]],
                             list[ActivityWorkItem]]:
        """Write the last round's results, claim new work, and run the claimed episodes.

        One transaction per round (:meth:`~devhost.taskhub.store.TaskHub.run_round`); the
        episodes' commits are written by the next round.

        Parameters
        ----------
        commits : list of (OrchestrationWorkItem, EpisodeCommit)
            The previous round's episodes.
        completions : list of (ActivityWorkItem, dict)
            Activities that finished since the previous round.
        max_instances, max_activities : int
            How much new work to claim.

        Returns
        -------
        (list of (OrchestrationWorkItem, EpisodeCommit), list of ActivityWorkItem)
            This round's episode commits (to pass to the next round) and the activities
            claimed for the caller to run.
        """
        done = self.taskhub.run_round(
            commits, completions, self.owner, orchestration_lease=self.orchestration_lease,
            max_instances=max_instances, activity_lease=self.activity_lease,
            max_activities=max_activities)
        _log_lost(commits, done.committed, completions, done.settled)
        return self.run_claimed(done.instances), done.activities

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
        return self.taskhub.complete_activities([(item, self.run_activity(item))
                                                 for item in items])

    def run_activity(self, item: ActivityWorkItem) -> dict[str, Any]:
        """Run one claimed activity; return its TaskCompleted or TaskFailed event."""
        return run_activity(item, self.index.activities, self.taskhub.clock.now, self.sleep)


def _log_lost(commits: list[tuple[OrchestrationWorkItem, EpisodeCommit]],
              committed: list[bool],
              completions: list[tuple[ActivityWorkItem, dict[str, Any]]],
              settled: list[bool]) -> None:
    """Warn about episodes and activity results that were refused for a lost lease."""
    for (item, _), won in zip(commits, committed, strict=True):
        if not won:
            log.warning("lease on %s was lost; episode discarded", item.instance.instance_id)
    for (activity, _), won in zip(completions, settled, strict=True):
        if not won:
            log.warning("activity %s of %s finished after its lease was lost; another "
                        "worker's result stands", activity.name, activity.instance_id)
