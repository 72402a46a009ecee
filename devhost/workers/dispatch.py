"""The durable work loops: claim, run and commit orchestrator episodes and activities.

:class:`DurableWorker` serves a running host's threads and, step by step, drain mode; work
is claimed with a lease first, so many threads and processes share one task hub.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from devhost.app.backends import Backend
from devhost.app.loader import AppIndex, find_function
from devhost.failures.failure_texts import ACTIVITY_FAILED, exception_details
from devhost.failures.host_failures import HostRetryPolicy, describe, host_error_text
from devhost.orchestration import sdk_fastpaths
from devhost.orchestration.entity_calls import EntityCalls
from devhost.orchestration.episode import Episode
from devhost.orchestration.function_names import KnownFunctions
from devhost.orchestration.host_failure import host_failure_commit
from devhost.orchestration.versioning import MISMATCH_MESSAGE, REJECT_DELAY, Versioning
from devhost.taskhub.events import EventType, event
from devhost.taskhub.partitions import PartitionLeases
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

    ``owner`` defaults to a fresh random id; the activity lease is renewed while it runs;
    ``versioning`` None runs every instance; ``host_retries`` (L3) defaults to
    :meth:`HostRetryPolicy.from_settings`.
    """

    def __init__(self, taskhub: TaskHub, index: AppIndex, *, owner: str | None = None,
                 orchestration_lease: timedelta = timedelta(seconds=30),
                 activity_lease: timedelta = timedelta(seconds=60),
                 versioning: Versioning | None = None,
                 host_retries: HostRetryPolicy | None = None,
                 backend: Backend | None = None) -> None:
        self.taskhub = taskhub
        self.backend = backend or Backend()
        self.index = index
        self.owner = owner or uuid.uuid4().hex[:12]
        self.orchestration_lease = orchestration_lease
        self.activity_lease = activity_lease
        self.host_retries = host_retries or HostRetryPolicy.from_settings()
        self.handlers = {name: f.func for name, f in index.orchestrators.items()}
        self.functions = KnownFunctions.of(index.orchestrators, index.activities)
        self.entity_calls = EntityCalls(index.entities)
        self.versioning = versioning
        self.client_binding: Callable[[], Any] | None = None
        """The ``durableClient`` binding JSON for activities that declare one (the host's)."""
        # Instances whose ending commit (after host-side failures) is in flight: its text.
        self._ending: dict[str, str] = {}
        self.partitions: PartitionLeases | None = None
        """Set by :meth:`own_partitions`: :meth:`run_round` then claims orchestrations only in
        the partitions this worker leases; None (drain mode) claims in all."""
        sdk_fastpaths.install()

    def own_partitions(self, count: int, lease: timedelta,
                       expected: int = 1) -> PartitionLeases:
        """Run orchestrations only of the partitions this worker leases, from the next round.

        One of several processes sharing the task hub, as a worker of DTFx's Azure Storage
        backend (:mod:`devhost.taskhub.partitions`); ``count`` is ``partitionCount``,
        ``lease`` DTFx's ``LeaseInterval``, ``expected`` the processes starting together.
        Raises ValueError for a count outside 1 to 16.
        """
        self.partitions = PartitionLeases(self.owner, count, lease, expected)
        return self.partitions

    def release_partitions(self) -> None:
        """Give up this worker's partition leases (a graceful stop): another takes them at once."""
        if self.partitions is not None:
            self.taskhub.release_partitions(self.partitions)

    def run_episodes(self, max_instances: int = 1) -> int:
        """Claim up to ``max_instances``, run an episode each, commit together; return claimed."""
        items = self.taskhub.claim_orchestrations(self.owner, self.orchestration_lease,
                                                  max_instances)
        if not items:
            return 0
        batch = self.run_claimed(items)
        while batch:  # again only for the instances the host ends after failing them
            batch = self.run_round(batch, [], 0, 0)[0]
        return len(items)

    def run_claimed(self, items: list[OrchestrationWorkItem]
                    ) -> list[tuple[OrchestrationWorkItem, EpisodeCommit]]:
        """Run one episode for each claimed instance; return the commits in claim order."""
        batch = []
        for item in items:
            rejected, mismatch = self._check_version(item)
            if rejected:
                continue
            try:
                commit = Episode(item, find_function(self.handlers, item.instance.name),
                                 self.taskhub.clock.now(), version_mismatch=mismatch,
                                 entities=self.entity_calls, functions=self.functions).run()
            except Exception as exc:  # noqa: BLE001 - a host-side failure (L3)
                log.debug("episode of %s failed in the host", item.instance.instance_id,
                          exc_info=True)
                ending = self.episode_failed_in_host(item, describe(exc))
                if ending is None:
                    continue
                commit = ending
            batch.append((item, commit))
        return batch

    def episode_failed_in_host(self, item: OrchestrationWorkItem,
                               error: str) -> EpisodeCommit | None:
        """Count a host-side failure (L3) of a claimed instance's episode.

        Returns the commit that ends it as Failed after ``host_retries.attempts`` failures (logged
        at ERROR), else None while it is held back (WARNING).
        """
        instance_id = item.instance.instance_id
        policy = self.host_retries
        if instance_id in self._ending:  # even the commit that ends it failed
            self._force_fail(item, self._ending.pop(instance_id), error)
            return None
        attempts = self.taskhub.note_episode_failure(item, error, policy)
        what = f"the episode of instance '{instance_id}' ({item.instance.name})"
        if not policy.gives_up(attempts):
            log.warning("%s failed in the host (attempt %d of %d); retrying in %s: %s", what,
                        attempts, policy.attempts, policy.backoff(attempts), error)
            return None
        text = host_error_text(what, attempts, error)
        log.error("instance '%s' failed: %s", instance_id, text)
        self._ending[instance_id] = text
        return host_failure_commit(item, self.taskhub.clock.now(), text)

    def _force_fail(self, item: OrchestrationWorkItem, text: str, error: str) -> None:
        commit = host_failure_commit(item, self.taskhub.clock.now(), text)
        parent = next((m.event for m in commit.messages), None)
        if self.taskhub.force_fail(item, commit.output or "null", parent):
            log.error("instance '%s' failed: the local host could not write its ending "
                      "either (%s); status and output set directly, history left as it was",
                      item.instance.instance_id, error)

    def activities_failed_in_host(self, failed: list[tuple[ActivityWorkItem, str]]
                                  ) -> list[tuple[ActivityWorkItem, dict[str, Any]]]:
        """Count host-side failures of claimed activities (L3).

        Returns TaskFailed completions (the host's text as ``Reason``) for those failed
        ``host_retries.attempts`` times (ERROR); the others are held back (WARNING).
        """
        policy = self.host_retries
        ended = []
        for item, error in failed:
            attempts = self.taskhub.note_activity_failure(item, error, policy)
            what = (f"activity '{item.name}' (task {item.task_id}) of instance "
                    f"'{item.instance_id}'")
            if not policy.gives_up(attempts):
                log.warning("%s failed in the host (attempt %d of %d); retrying in %s: %s",
                            what, attempts, policy.attempts, policy.backoff(attempts), error)
                continue
            text = host_error_text(what, attempts, error)
            log.error("instance '%s': %s", item.instance_id, text)
            # In the extension's shape (TaskActivityShim), so apps parse it as any other.
            ended.append((item, event(EventType.TaskFailed, self.taskhub.clock.now(),
                                      TaskScheduledId=item.task_id,
                                      Reason=ACTIVITY_FAILED.format(name=item.name,
                                                                    message=text),
                                      Details=exception_details(text))))
        return ended

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

        One transaction (:meth:`~devhost.taskhub.store.TaskHub.run_round`); returns this round's
        episode commits, for the next round to write, and the activities claimed to run.
        """
        done = self.taskhub.run_round(
            commits, completions, self.owner, orchestration_lease=self.orchestration_lease,
            max_instances=max_instances, activity_lease=self.activity_lease,
            max_activities=max_activities, partitions=self.partitions)
        refused = {id(item) for item, _ in done.refused}
        _log_lost([c for c in commits if id(c[0]) not in refused],
                  [won for c, won in zip(commits, done.committed, strict=True)
                   if id(c[0]) not in refused], completions, done.settled)
        for item, _ in commits:
            if id(item) not in refused:
                self._ending.pop(item.instance.instance_id, None)
        ending = []
        for item, error in done.refused:  # the host could not serialise these commits
            commit = self.episode_failed_in_host(item, error)
            if commit is not None:
                ending.append((item, commit))
        return self.run_claimed(done.instances) + ending, done.activities

    def claim_activities(self, max_count: int = 1) -> list[ActivityWorkItem]:
        """Lease up to ``max_count`` activity work items."""
        return self.taskhub.claim_activities(self.owner, self.activity_lease, max_count)

    def execute_activities(self, items: list[ActivityWorkItem]) -> list[bool]:
        """Run claimed activities in turn; record completions together (False: another's won).

        Host-side failures are held back or ended (:meth:`activities_failed_in_host`).
        """
        done, failed = [], []
        for item in items:
            try:
                done.append((item, self.run_activity(item)))
            except Exception as exc:  # noqa: BLE001 - a host-side failure (L3)
                log.debug("activity %s failed in the host", item.name, exc_info=True)
                failed.append((item, describe(exc)))
        done += self.activities_failed_in_host(failed)
        return self.taskhub.complete_activities(done)

    def run_activity(self, item: ActivityWorkItem) -> dict[str, Any]:
        """Run one claimed activity; return its TaskCompleted or TaskFailed event."""
        return run_activity(item, self.index.activities, self.taskhub.clock.now,
                            self.backend, self.client_binding)


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
