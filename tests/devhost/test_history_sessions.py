"""Host-side sessions: an instance's history kept between its episodes, checked by version.

The paths a history can take to an episode (kept from the last commit, read from the file
because none is kept, because another process wrote it, because the session was evicted)
must give every orchestration the same history and the same result.
"""

import json
import sqlite3
from collections import Counter
from datetime import timedelta

import pytest

from devhost.run.host import LocalHost
from devhost.taskhub.events import EventType
from devhost.taskhub.sessions import HistorySessions
from tests.devhost.conftest import SAMPLE_APP, start

ORCHESTRATIONS = [
    ("chain", "Ann"),  # three activities in turn
    ("counter", 3),  # continue-as-new: the history starts again twice
    ("race", 60),  # an external event wins over a timer, which is cancelled
    ("race", 1),  # the timer fires
    ("parent", "ok"),  # three sub-orchestrations
    ("charge", True),  # a failed activity, caught
    ("fan", 4),  # four activities at once
]


def history_reads(host):
    """Statements of this thread's task hub connection, for counting the history's reads."""
    seen: list[str] = []
    host.taskhub._conn().set_trace_callback(seen.append)
    return seen


def drive(hosts, clock):
    """Run every host's work in turn, one episode at a time each, moving the clock when idle."""
    for _ in range(10_000):
        worked = 0
        for h in hosts:
            worked += h.worker.run_episodes(1)
            if items := h.worker.claim_activities(2):
                h.worker.execute_activities(items)
                worked += len(items)
        if not worked:
            due = hosts[0].taskhub.next_due()
            if due is None or due <= clock.now():
                return
            clock.set(due)
    raise AssertionError("the hosts did not become idle")


def outcome(host, instance_id):
    """Status, output, event kinds and whether positions run 0, 1, 2 ... of one instance."""
    inst = host.taskhub.get_instance(instance_id)
    positions = [r[0] for r in host.taskhub._conn().execute(
        "SELECT position FROM history WHERE instance_id=? ORDER BY position", (instance_id,))]
    kinds = Counter(e["EventType"] for e in host.taskhub.get_history(instance_id))
    return (inst.runtime_status, json.loads(inst.output) if inst.output else None, kinds,
            positions == list(range(len(positions))))


def run_all(tmp_path, clock, path):
    """Run :data:`ORCHESTRATIONS` together along ``path``; return each one's outcome."""
    hosts = [LocalHost(SAMPLE_APP, tmp_path / "data", clock=clock, serve_http=False)]
    if path == "two processes":
        hosts.append(LocalHost(SAMPLE_APP, tmp_path / "data", clock=clock, serve_http=False))
    if path in ("none kept", "evicted"):
        hosts[0].taskhub.sessions = HistorySessions(capacity=0 if path == "none kept" else 1)
    try:
        ids = [start(hosts[0], name, value, f"{name}-{k}")
               for k, (name, value) in enumerate(ORCHESTRATIONS)]
        hosts[0].taskhub.raise_event("race-2", "Approval", json.dumps("yes"))
        drive(hosts, clock)
        return {i: outcome(hosts[0], i) for i in ids}
    finally:
        for h in hosts:
            h.stop()


@pytest.mark.parametrize("path", ["kept", "two processes", "evicted"])
def test_every_path_of_a_history_gives_the_same_histories_and_results(tmp_path, clock, path):
    reference = run_all(tmp_path / "reference", clock, "none kept")
    assert reference["chain-0"][:2] == ("Completed", ["Hello Ann-Tokyo!", "Hello Ann-Seattle!",
                                                      "Hello Ann-London!"])
    assert reference["counter-1"][:2] == ("Completed", 5)
    assert reference["race-2"][:2] == ("Completed", {"outcome": "approved", "value": "yes"})
    assert reference["race-3"][:2] == ("Completed", {"outcome": "timeout"})
    assert reference["fan-6"][:2] == ("Completed", 0 + 1 + 4 + 9)
    assert all(contiguous for *_, contiguous in reference.values())
    assert run_all(tmp_path / path.replace(" ", "-"), clock, path) == reference


def test_the_next_episodes_of_an_instance_read_no_history_and_write_it_in_one_statement(host):
    start(host, "chain", "Ann", "c1")
    seen = history_reads(host)
    host.run_until_idle()
    reads = [s for s in seen if "FROM history" in s]
    inserts = [s for s in seen if s.startswith("INSERT INTO history")]
    episodes = sum(1 for e in host.taskhub.get_history("c1")
                   if e["EventType"] == EventType.OrchestratorStarted)
    assert episodes == 4  # started, then one per activity result
    # The first claim reads the (empty) history; the three after it use the kept one, and
    # each commit writes its events in one statement at the position the claim knew.
    assert len(reads) == 1 and len(inserts) == episodes
    assert host.taskhub.sessions.find("c1", host.taskhub.get_instance("c1").execution_id,
                                      host.taskhub.get_instance("c1").history_version) is None


def test_a_session_is_not_used_after_a_rewind_rewrote_the_history(host):
    start(host, "charge", False, "c1")
    host.run_until_idle()
    assert host.taskhub.get_instance("c1").runtime_status == "Failed"
    before = host.taskhub.get_instance("c1").history_version
    host.taskhub.rewind("c1", "try again")
    assert host.taskhub.get_instance("c1").history_version == before + 1
    seen = history_reads(host)
    host.run_until_idle()
    assert [s for s in seen if "FROM history" in s]  # read again from the file
    kinds = Counter(e["EventType"] for e in host.taskhub.get_history("c1"))
    assert host.taskhub.get_instance("c1").runtime_status == "Failed"
    assert kinds[EventType.TaskFailed] == 1  # the rewound failure is gone; the new one is there


def test_an_older_task_hub_file_gets_the_version_column_and_its_instances_finish(tmp_path,
                                                                                  clock):
    first = LocalHost(SAMPLE_APP, tmp_path / "data", clock=clock, serve_http=False)
    start(first, "chain", "Ann", "c1")
    first.worker.run_episodes(1)  # one episode written by the code before
    with first.taskhub._conn() as conn:
        conn.execute("ALTER TABLE instances DROP COLUMN history_version")
        conn.execute("ALTER TABLE instances DROP COLUMN id_hash")
    first.stop()

    reopened = LocalHost(SAMPLE_APP, tmp_path / "data", clock=clock, serve_http=False)
    try:
        assert reopened.taskhub.get_instance("c1").history_version == 0
        reopened.run_until_idle()
        assert reopened.taskhub.get_instance("c1").runtime_status == "Completed"
        assert reopened.taskhub.get_instance("c1").history_version == 3  # three commits after
    finally:
        reopened.stop()


def test_an_episode_of_an_older_claim_by_the_same_owner_is_refused(host, clock):
    start(host, "chain", "Ann", "c1")
    worker = host.worker
    stale = worker.run_claimed(host.taskhub.claim_orchestrations(
        worker.owner, timedelta(seconds=1), 1))
    clock.advance(timedelta(seconds=2))  # its lease ran out; the same owner claims again
    fresh = worker.run_claimed(host.taskhub.claim_orchestrations(
        worker.owner, timedelta(seconds=30), 1))
    assert host.taskhub.commit_episodes(fresh) == [True]
    (activity,) = worker.claim_activities(1)
    worker.execute_activities([activity])
    third = worker.run_claimed(host.taskhub.claim_orchestrations(  # holds the lock again
        worker.owner, timedelta(seconds=30), 1))
    assert host.taskhub.commit_episodes(stale) == [False]  # the history moved on since
    assert host.taskhub.commit_episodes(third) == [True]
    host.run_until_idle()
    assert host.taskhub.get_instance("c1").runtime_status == "Completed"
    positions = [r[0] for r in host.taskhub._conn().execute(
        "SELECT position FROM history WHERE instance_id='c1' ORDER BY position")]
    assert positions == list(range(len(positions)))


def test_sessions_are_dropped_when_a_write_fails_and_the_instance_goes_on(host, clock):
    start(host, "chain", "Ann", "c1")
    host.worker.run_episodes(1)
    (activity,) = host.worker.claim_activities(1)
    host.worker.execute_activities([activity])
    # A writer that keeps no version (a host of the code before) appends an event.
    end = len(host.taskhub.get_history("c1"))
    host.taskhub._conn().execute(
        "INSERT INTO history VALUES ('c1', ?, ?)",
        (end, json.dumps({"EventType": EventType.GenericEvent, "EventId": -1,
                          "IsPlayed": True, "Timestamp": "2030-01-01T00:00:00.000000Z"})))
    assert len(host.taskhub.sessions) == 1
    with pytest.raises(sqlite3.IntegrityError):
        host.worker.run_episodes(1)  # its kept history ends one event early
    assert len(host.taskhub.sessions) == 0
    clock.advance(host.worker.orchestration_lease + timedelta(seconds=1))
    host.run_until_idle()  # read from the file again: the position is right
    assert host.taskhub.get_instance("c1").runtime_status == "Completed"
