"""A host process's turn at the task hub: commit, settle and claim in one transaction."""

import json
import threading
from datetime import timedelta

import pytest

from devhost.taskhub.events import EventType
from devhost.workers.activity_pool import ActivityPool
from tests.devhost.conftest import output, start


def transactions(host):
    """Count the write transactions opened on the task hub connection of this thread."""
    seen = []
    host.taskhub._conn().set_trace_callback(
        lambda sql: seen.append(sql) if sql.startswith("BEGIN") else None)
    return seen


def claimed_activities(host, *inputs):
    """Start one chain per input and run the rounds that claim each chain's first activity."""
    for k, value in enumerate(inputs):
        start(host, "chain", value, f"c{k}" if len(inputs) > 1 else "c1")
    pending, _ = host.worker.run_round([], [], 10, 0)
    return host.worker.run_round(pending, [], 0, 10)[1]


def test_one_round_commits_settles_and_claims_together(host):
    worker = host.worker
    start(host, "chain", "Ann", "c1")
    pending, activities = worker.run_round([], [], 10, 10)
    assert [item.instance.instance_id for item, _ in pending] == ["c1"] and activities == []

    begins = transactions(host)
    pending, activities = worker.run_round(pending, [], 10, 10)
    # The episode's commit scheduled the first activity; the same transaction claimed it.
    assert len(begins) == 1 and pending == []
    assert [(a.instance_id, a.name, json.loads(a.input)) for a in activities] == [
        ("c1", "hello", "Ann-Tokyo")]

    finished = [(activities[0], worker.run_activity(activities[0]))]
    pending, activities = worker.run_round([], finished, 10, 10)
    # Settling queued TaskCompleted, and the same transaction claimed the instance again.
    assert len(begins) == 2 and [i.instance.instance_id for i, _ in pending] == ["c1"]
    assert [m.event["EventType"] for m in pending[0][0].messages] == [EventType.TaskCompleted]

    while pending or activities:
        finished = [(a, worker.run_activity(a)) for a in activities]
        pending, activities = worker.run_round(pending, finished, 10, 10)
    assert output(host, "c1") == ("Completed", ["Hello Ann-Tokyo!", "Hello Ann-Seattle!",
                                                "Hello Ann-London!"])


def test_an_idle_round_opens_no_transaction(host):
    begins = transactions(host)
    assert host.worker.run_round([], [], 10, 10) == ([], [])
    assert begins == []


def test_a_commit_whose_lease_was_lost_writes_nothing_and_the_round_goes_on(host, clock):
    worker = host.worker
    start(host, "chain", "Ann", "c1")
    start(host, "chain", "Paris", "c2")
    pending, _ = worker.run_round([], [], 1, 0)
    assert [i.instance.instance_id for i, _ in pending] == ["c1"]
    clock.advance(worker.orchestration_lease + timedelta(seconds=1))
    taken = host.taskhub.claim_orchestrations("other-worker", timedelta(minutes=5), 1)
    assert [i.instance.instance_id for i in taken] == ["c1"]

    pending, activities = worker.run_round(pending, [], 1, 10)
    assert host.taskhub.get_history("c1") == []  # the stale episode wrote nothing
    assert [i.instance.instance_id for i, _ in pending] == ["c2"]  # claimed all the same
    assert activities == []


def test_a_completion_is_recorded_once(host):
    activities = claimed_activities(host, "Ann")
    done = (activities[0], host.worker.run_activity(activities[0]))
    assert host.taskhub.run_round([], [done], "w", orchestration_lease=timedelta(0),
                                  max_instances=0, activity_lease=timedelta(0),
                                  max_activities=0).settled == [True]
    assert host.taskhub.run_round([], [done], "w", orchestration_lease=timedelta(0),
                                  max_instances=0, activity_lease=timedelta(0),
                                  max_activities=0).settled == [False]
    completions = [m for m in host.taskhub._conn().execute(
        "SELECT event FROM inbox WHERE instance_id='c1'")]
    assert len(completions) == 1


class FakeHub:
    def __init__(self):
        self.renewed = []

    def renew_activities(self, items, lease):
        self.renewed.append(([i.id for i in items], lease))
        return [True] * len(items)


def test_pool_runs_claimed_activities_and_hands_back_their_outcomes(host):
    activities = claimed_activities(host, "Ann")
    woken = threading.Event()
    release = threading.Event()

    def run(item):
        release.wait(30)
        return host.worker.run_activity(item)

    pool = ActivityPool(run, 2, on_finished=woken.set, monotonic=lambda: 0.0)
    assert pool.room() == 2 * ActivityPool.FIRST_CLAIMED_PER_THREAD  # nothing timed yet
    pool.submit(activities)
    assert pool.room() == 2 * ActivityPool.FIRST_CLAIMED_PER_THREAD - 1
    release.set()
    assert woken.wait(30)
    assert pool.shutdown() == []
    [(item, result)] = pool.take_finished()
    assert item is activities[0]
    assert result["EventType"] == EventType.TaskCompleted
    assert json.loads(result["Result"]) == "Hello Ann-Tokyo!"
    assert pool.room() == 2 * ActivityPool.MAX_CLAIMED_PER_THREAD  # it took no time


def test_pool_hands_back_an_activity_whose_runner_crashed_as_a_host_failure(host):
    activities = claimed_activities(host, "Ann")

    def crash(item):
        raise RuntimeError("host bug")

    ran = threading.Event()
    pool = ActivityPool(crash, 1, on_finished=ran.set, monotonic=lambda: 0.0)
    pool.submit(activities)
    assert ran.wait(30)
    pool.shutdown()
    assert pool.take_finished() == []  # not a completion: the host counts it (L3)
    assert pool.take_failed() == [(activities[0], "RuntimeError: host bug")]
    assert pool.take_failed() == []
    assert pool.room() == ActivityPool.MAX_CLAIMED_PER_THREAD  # and no longer counted


def test_pool_renews_running_leases_every_third_of_the_lease(host):
    now = [0.0]
    release = threading.Event()
    pool = ActivityPool(lambda item: release.wait(30) and {}, 1, on_finished=lambda: None,
                        monotonic=lambda: now[0])
    activities = claimed_activities(host, "Ann")
    pool.submit(activities)
    hub, lease = FakeHub(), timedelta(seconds=60)
    now[0] = 19.9
    pool.renew_if_due(hub, lease)
    assert hub.renewed == []
    now[0] = 20.0
    pool.renew_if_due(hub, lease)
    assert hub.renewed == [([activities[0].id], lease)]
    release.set()
    pool.shutdown()


@pytest.mark.parametrize(("run_s", "per_thread"), [
    (0.25, 4),  # a second of work per runner (1 each before anything was timed)
    (5.0, 1),  # slow activities: one each, none hoarded from other processes
    (0.0001, 64),  # fast ones: claimed in large batches, capped
])
def test_pool_claims_about_a_second_of_work_per_runner(host, run_s, per_thread):
    now = [0.0]

    def run(item):
        now[0] += run_s
        return {"EventType": EventType.TaskCompleted}

    activities = claimed_activities(host, "Ann")
    ran = threading.Event()
    pool = ActivityPool(run, 3, on_finished=ran.set, monotonic=lambda: now[0])
    pool.submit(activities)
    assert ran.wait(30)
    pool.shutdown()
    assert len(pool.take_finished()) == 1
    assert pool.room() == 3 * per_thread


def test_pool_shutdown_hands_back_unstarted_work_and_bounds_its_wait(host):
    activities = claimed_activities(host, "P0", "P1", "P2")
    assert len(activities) == 3
    started, release = threading.Event(), threading.Event()

    def stuck(item):
        started.set()
        release.wait(30)
        return {"EventType": EventType.TaskCompleted}

    pool = ActivityPool(stuck, 1, on_finished=lambda: None)
    pool.submit(activities)
    assert started.wait(30)
    unstarted = pool.shutdown(timeout_s=0.05)  # the running one does not finish in time
    assert [a.id for a in unstarted] == [a.id for a in activities[1:]]
    assert pool.take_finished() == []
    host.taskhub.release_activities(unstarted)
    again = host.taskhub.claim_activities("another", timedelta(minutes=1), 10)
    assert sorted(a.id for a in again) == sorted(a.id for a in unstarted)
    assert all(a.dequeue_count == 1 for a in again)  # a release is not a delivery
    release.set()


def test_pool_refuses_zero_threads():
    with pytest.raises(ValueError, match="threads"):
        ActivityPool(lambda item: {}, 0, on_finished=lambda: None)


def _host_failure_statements(host):
    seen = []
    host.taskhub._conn().set_trace_callback(
        lambda sql: seen.append(sql) if "host_failures" in sql and "DELETE" in sql else None)
    return seen


def test_work_that_never_failed_in_the_host_clears_no_count(host):
    deletes = _host_failure_statements(host)
    start(host, "chain", "Ann", "c1")
    pending, activities = host.worker.run_round([], [], 10, 10)
    while pending or activities:
        finished = [(a, host.worker.run_activity(a)) for a in activities]
        pending, activities = host.worker.run_round(pending, finished, 10, 10)
    assert output(host, "c1")[0] == "Completed"
    assert deletes == []


def test_a_count_another_process_recorded_is_cleared_by_the_commit_here(host, tmp_path):
    from devhost.failures.host_failures import HostRetryPolicy
    from devhost.taskhub.store import TaskHub

    # Another process (its own TaskHub over the same file) counted a failure of the
    # instance's episode and of its first activity, then let both go.
    other = TaskHub(host.taskhub.path, host.clock, name=host.taskhub.name)
    policy = HostRetryPolicy(retries=5, first_backoff=timedelta(seconds=1))
    start(host, "chain", "Bo", "c1")
    [item] = other.claim_orchestrations("other", timedelta(minutes=1))
    other.note_episode_failure(item, "OSError: disk", policy)
    host.clock.advance(timedelta(seconds=2))
    assert host.taskhub.host_failure_count("episode:c1") == 1

    pending, activities = host.worker.run_round([], [], 10, 0)
    pending, activities = host.worker.run_round(pending, [], 0, 0)
    assert host.taskhub.host_failure_count("episode:c1") == 0

    pending, activities = host.worker.run_round([], [], 0, 10)
    [activity] = activities
    host.taskhub.release_activities(activities)
    [taken] = other.claim_activities("other", timedelta(minutes=1))
    other.note_activity_failure(taken, "OSError: disk", policy)
    host.clock.advance(timedelta(seconds=2))
    [again] = host.taskhub.claim_activities("host", timedelta(minutes=1))
    assert host.taskhub.host_failure_count(f"activity:{again.id}") == 1
    host.taskhub.complete_activities([(again, host.worker.run_activity(again))])
    assert host.taskhub.host_failure_count(f"activity:{again.id}") == 0
