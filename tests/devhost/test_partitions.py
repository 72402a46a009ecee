"""Partitioned host processes: each runs the orchestrations of the partitions it leases.

Two workers of one task hub in this process, with one injected clock: what two host processes
do, round by round (the real processes: ``test_partition_failover.py``).
"""

import json
from datetime import timedelta

import pytest

from devhost.app.host_config import load_host_config
from devhost.app.load_errors import AppLoadError
from devhost.taskhub.events import EventType
from devhost.taskhub.partitions import LOOK_INTERVAL, fnv1a_32, instance_hash, partition_of
from devhost.taskhub.store import TaskHub
from devhost.workers.dispatch import DurableWorker
from tests.devhost.apps import write_app

LEASE = timedelta(seconds=30)
"""The partition lease (DTFx ``LeaseInterval``); passes every third of it."""

INSTANCE_LEASE = timedelta(minutes=10)
"""Longer than any wait here: only a partition takeover frees a frozen worker's claims."""


@pytest.mark.parametrize(("data", "expected"), [
    (b"", 0x811C9DC5), (b"a", 0xE40C292C), (b"foobar", 0xBF9CF968)])
def test_the_hash_is_fnv1a_32_as_dtfx_computes_it(data, expected):
    # The published FNV-1a 32-bit test vectors; DTFx's Fnv1aHashHelper is that function.
    assert fnv1a_32(data) == expected


@pytest.mark.parametrize(("instance_id", "count"), [
    ("foobar", 4), ("foobar", 16), ("a", 3), ("acme~order-1:1", 4), ("Zürich-7", 4),
    ("@counter@k1", 4)])
def test_an_instance_lands_in_the_partition_of_its_ids_utf8_hash(instance_id, count):
    assert partition_of(instance_id, count) == fnv1a_32(instance_id.encode("utf-8")) % count
    assert partition_of("foobar", 4) == 0xBF9CF968 % 4 == 0


@pytest.mark.parametrize(("provider", "environ", "expected"), [
    (None, {}, 4),
    ({"partitionCount": 1}, {}, 1),
    ({"partitionCount": 16}, {}, 16),
    ({"PartitionCount": "8"}, {}, 8),
    ({"partitionCount": 8},
     {"AzureFunctionsJobHost__extensions__durableTask__storageProvider__partitionCount": "2"},
     2),
])
def test_the_partition_count_is_host_jsons_storage_provider_setting(
        tmp_path, provider, environ, expected):
    durable = {"storageProvider": provider} if provider is not None else {}
    app = write_app(tmp_path, {}, host_json={"version": "2.0",
                                             "extensions": {"durableTask": durable}})
    assert load_host_config(app, environ=environ).durable.partition_count == expected


@pytest.mark.parametrize("count", [0, 17, -1, "four", 2.5])
def test_a_partition_count_outside_1_to_16_is_refused_at_start_up(tmp_path, count):
    app = write_app(tmp_path, {}, host_json={
        "version": "2.0", "extensions": {"durableTask": {"storageProvider": {
            "partitionCount": count}}}})
    with pytest.raises(AppLoadError, match=r"storageProvider\.partitionCount .*PartitionCount "
                                           r"must be an integer value between 1 and 16"):
        load_host_config(app, environ={})


@pytest.fixture
def workers(host):
    """Two workers on one task hub file, as two host processes, each with its partitions."""
    first = host.worker
    first.orchestration_lease = INSTANCE_LEASE
    second = DurableWorker(TaskHub(host.taskhub.path, host.clock), host.index,
                           orchestration_lease=INSTANCE_LEASE)
    for worker in (first, second):
        worker.own_partitions(4, LEASE)
    return first, second


def owners(worker):
    rows = worker.taskhub._conn().execute("SELECT partition, owner FROM partitions")
    return {p: owner for p, owner in rows}


def run_to_idle(worker):
    """Run rounds of ``worker`` until it has nothing left to claim or write."""
    pending, activities = [], []
    while True:
        finished = [(a, worker.run_activity(a)) for a in activities]
        pending, activities = worker.run_round(pending, finished, 10, 10)
        if not (pending or activities or finished):
            return


def balance(first, second, clock):
    """Start both; the second asks for its share, which the first hands over within a second.

    Each looks at the table once a second between its passes (every third of the lease).
    """
    first.run_round([], [], 0, 0)
    assert first.partitions.owned == {0, 1, 2, 3}  # alone: all four
    second.run_round([], [], 0, 0)
    assert second.partitions.owned == set()  # live leases are asked for, never taken
    clock.advance(LOOK_INTERVAL)
    first.run_round([], [], 0, 0)  # its look finds the request: it hands two over
    second.run_round([], [], 0, 0)  # its look finds them handed over: it claims them


def start_chains(host, count):
    ids = [f"order-{k:02d}" for k in range(count)]
    for k, instance_id in enumerate(ids):
        host.taskhub.create_instance("chain", instance_id, json.dumps(f"n{k}"))
    return ids


def statuses(host, ids):
    return {i: host.taskhub.get_instance(i).runtime_status for i in ids}


def test_two_workers_take_two_partitions_each_and_run_only_their_instances(
        host, clock, workers):
    first, second = workers
    balance(first, second, clock)
    assert len(first.partitions.owned) == len(second.partitions.owned) == 2
    assert first.partitions.owned | second.partitions.owned == {0, 1, 2, 3}
    assert set(owners(first).values()) == {first.owner, second.owner}

    ids = start_chains(host, 16)
    run_to_idle(first)
    done = {i for i, s in statuses(host, ids).items() if s == "Completed"}
    assert done == {i for i in ids if partition_of(i, 4) in first.partitions.owned}
    assert 0 < len(done) < len(ids)
    run_to_idle(second)
    assert set(statuses(host, ids).values()) == {"Completed"}


def test_a_worker_that_stops_renewing_loses_its_partitions_and_the_other_finishes_them(
        host, clock, workers):
    first, second = workers
    balance(first, second, clock)
    ids = start_chains(host, 16)
    theirs = [i for i in ids if partition_of(i, 4) in second.partitions.owned]
    # The second claims its instances' first episodes, then freezes before committing them.
    frozen, _ = second.run_round([], [], 10, 0)
    assert {item.instance.instance_id for item, _ in frozen} == set(theirs)

    clock.advance(LEASE / 3)
    run_to_idle(first)  # its lease still holds: the first leaves its partitions alone
    assert {i for i, s in statuses(host, ids).items() if s != "Completed"} == set(theirs)

    clock.advance(LEASE)  # the second's leases expire
    run_to_idle(first)
    assert first.partitions.owned == {0, 1, 2, 3}
    assert set(statuses(host, ids).values()) == {"Completed"}  # its claims were freed

    # Woken, the second finds its partitions gone and its late commits refused.
    second.run_round(frozen, [], 10, 10)
    assert second.partitions.owned == set()
    for instance_id in theirs:
        events = [e["EventType"] for e in host.taskhub.get_history(instance_id)]
        assert events.count(EventType.ExecutionStarted) == 1
        assert events.count(EventType.ExecutionCompleted) == 1


def test_a_graceful_stop_hands_the_partitions_over_without_waiting_for_the_lease(
        host, clock, workers):
    first, second = workers
    balance(first, second, clock)
    ids = start_chains(host, 8)
    second.release_partitions()
    assert set(owners(first).values()) == {first.owner, None}

    clock.advance(LOOK_INTERVAL)  # the first's next look, well inside the released leases
    run_to_idle(first)
    assert first.partitions.owned == {0, 1, 2, 3}
    assert set(statuses(host, ids).values()) == {"Completed"}


def test_processes_started_together_start_balanced(host, clock, workers):
    first, second = workers
    for worker in workers:
        worker.own_partitions(4, LEASE, expected=2)
    first.run_round([], [], 0, 0)
    assert len(first.partitions.owned) == 2  # its share among the two expected
    second.run_round([], [], 0, 0)
    assert second.partitions.owned == {0, 1, 2, 3} - first.partitions.owned

    # The expected count holds for one lease period; then only live owners count.
    clock.advance(LEASE + LEASE / 3)
    first.run_round([], [], 0, 0)
    assert first.partitions.owned == {0, 1, 2, 3}


def test_an_idle_worker_renews_with_one_transaction_a_pass_and_one_read_a_second(
        host, clock, workers):
    first, _ = workers
    first.run_round([], [], 0, 0)
    seen = []
    first.taskhub._conn().set_trace_callback(seen.append)
    for _ in range(9):  # a look each second; the pass (a transaction) every 10 s
        clock.advance(LOOK_INTERVAL)
        assert first.run_round([], [], 10, 10) == ([], [])
    assert sum(sql.startswith("BEGIN") for sql in seen) == 0
    assert sum(sql.startswith("SELECT 1 FROM partitions") for sql in seen) == 9
    clock.advance(LOOK_INTERVAL)
    first.run_round([], [], 10, 10)
    assert sum(sql.startswith("BEGIN") for sql in seen) == 1


def test_an_older_task_hub_file_gets_the_hash_column_and_the_partition_table(tmp_path, clock):
    path = tmp_path / "taskhub.sqlite"
    hub = TaskHub(path, clock)
    ids = [f"old-{k}" for k in range(6)]
    for instance_id in ids:
        hub.create_instance("chain", instance_id, json.dumps(instance_id))
    with hub._conn() as conn:  # as a file of the code before partitions
        conn.execute("ALTER TABLE instances DROP COLUMN id_hash")
        conn.execute("DROP TABLE partitions")

    reopened = TaskHub(path, clock)
    rows = reopened._conn().execute("SELECT instance_id, id_hash FROM instances").fetchall()
    assert dict(rows) == {i: instance_hash(i) for i in ids}
    assert reopened._conn().execute("SELECT COUNT(*) FROM partitions").fetchone()[0] == 0
    TaskHub(path, clock)  # opening it again adds nothing twice


def test_drain_mode_runs_every_partition(host):
    ids = start_chains(host, 8)
    host.run_until_idle()
    assert set(statuses(host, ids).values()) == {"Completed"}
    assert owners(host.worker) == {}  # no lease taken
