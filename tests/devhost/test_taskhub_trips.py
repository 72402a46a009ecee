"""The task hub's operations in few statements: each trip counted, the result unchanged."""

import json
from datetime import timedelta

import pytest

from devhost.taskhub import store
from devhost.taskhub.events import EventType
from devhost.taskhub.records import (
    InstanceGoneError,
    InstanceNotFoundError,
    RefusedOperationError,
)
from tests.devhost.conftest import start


def statements(host):
    """Statements this thread's task hub connection runs from now on."""
    seen: list[str] = []
    host.taskhub._conn().set_trace_callback(seen.append)
    return seen


def test_an_event_for_a_running_instance_is_one_statement_and_refusals_write_nothing(host):
    start(host, "race", 60, "r1")
    start(host, "chain", "Ann", "done")
    host.run_until_idle()
    seen = statements(host)
    host.taskhub.raise_event("r1", "Approval", json.dumps("yes"))
    assert len(seen) == 1 and seen[0].startswith("INSERT INTO inbox")
    queued = host.taskhub._conn().execute("SELECT COUNT(*) FROM inbox").fetchone()[0]
    with pytest.raises(InstanceGoneError, match="is gone: it is Completed"):
        host.taskhub.raise_event("done", "Approval", None)
    with pytest.raises(InstanceNotFoundError):
        host.taskhub.raise_event("nobody", "Approval", None)
    with pytest.raises(RefusedOperationError, match="instance is in the Running state"):
        host.taskhub.resume("r1", "not suspended")
    assert host.taskhub._conn().execute("SELECT COUNT(*) FROM inbox").fetchone()[0] == queued
    host.run_until_idle()
    assert host.taskhub.get_instance("r1").output == json.dumps(
        {"outcome": "approved", "value": "yes"})


def test_a_claim_of_many_instances_and_activities_is_one_statement_each(host):
    for k in range(5):
        start(host, "fan", 3, f"f{k}")
    seen = statements(host)
    pending, _ = host.worker.run_round([], [], 10, 0)
    claim = seen[seen.index("BEGIN IMMEDIATE") + 1:seen.index("COMMIT")]
    assert len(claim) == 1 and claim[0].startswith("UPDATE instances")
    assert not [s for s in seen if s.startswith("SELECT") and "FROM inbox" in s
                and "m JOIN" not in s]  # the messages came with the claim, not read after
    assert [item.instance.instance_id for item, _ in pending] == [f"f{k}" for k in range(5)]

    seen.clear()
    _, activities = host.worker.run_round(pending, [], 0, 64)
    assert sum(s.startswith("UPDATE activities") for s in seen) == 1
    assert sorted((a.instance_id, json.loads(a.input)) for a in activities) == sorted(
        (f"f{k}", i) for k in range(5) for i in range(3))
    assert {a.dequeue_count for a in activities} == {1}

    seen.clear()
    done = [(a, host.worker.run_activity(a)) for a in activities]
    assert host.taskhub.complete_activities(done) == [True] * 15
    settle = seen[seen.index("BEGIN IMMEDIATE") + 1:seen.index("COMMIT")]
    assert [s.split()[0] for s in settle] == ["DELETE", "INSERT"]
    assert host.taskhub.complete_activities(done[:2]) == [False, False]  # recorded once


def test_an_expired_activity_lease_counts_a_second_delivery(host, clock):
    start(host, "chain", "Ann", "c1")
    host.worker.run_episodes(1)
    first = host.worker.claim_activities(1)
    clock.advance(host.worker.activity_lease + timedelta(seconds=1))
    again = host.worker.claim_activities(1)
    assert [(a.id, a.dequeue_count) for a in first + again] == [(first[0].id, 1),
                                                                (first[0].id, 2)]


def test_an_episode_deletes_its_messages_and_cancelled_timer_in_one_statement(host):
    start(host, "race", 60, "r1")
    host.run_until_idle()
    host.taskhub.raise_event("r1", "Approval", json.dumps("yes"))
    seen = statements(host)
    host.run_until_idle()
    assert sum(s.startswith("DELETE FROM inbox") for s in seen) == 1
    # Nothing left: the event went into history, the timer's TimerFired was cancelled.
    assert host.taskhub._conn().execute("SELECT COUNT(*) FROM inbox").fetchone()[0] == 0
    assert json.loads(host.taskhub.get_instance("r1").output)["outcome"] == "approved"


def test_a_new_instance_is_returned_as_written_without_reading_it_back(host):
    seen = statements(host)
    record = host.taskhub.create_instance("chain", "c1", json.dumps("Ann"))
    assert not any(s.startswith("SELECT *") for s in seen)
    assert record == host.taskhub.get_instance("c1")
    assert (record.runtime_status, record.name, record.history_version) == (
        "Pending", "chain", 0)


def test_a_claim_brings_the_first_visible_messages_in_the_order_they_came(host, clock):
    start(host, "race", 600, "r1")
    host.run_until_idle()
    for k in range(4):
        clock.advance(timedelta(seconds=1))
        host.taskhub.raise_event("r1", f"e{k}", json.dumps(k))
    (item,) = host.taskhub.claim_orchestrations("w", timedelta(seconds=30), 5, max_messages=3)
    assert [m.event["Name"] for m in item.messages] == ["e0", "e1", "e2"]
    assert [json.loads(m.event["Input"]) for m in item.messages] == [0, 1, 2]
    assert item.history_end == len(host.taskhub.get_history("r1"))


def test_an_activity_settled_twice_in_one_call_is_recorded_once(host, clock):
    start(host, "chain", "Ann", "c1")
    host.worker.run_episodes(1)
    first = host.taskhub.claim_activities("p", timedelta(seconds=5), 1)
    clock.advance(timedelta(seconds=6))  # its lease ran out while it ran: delivered again
    second = host.taskhub.claim_activities("p", timedelta(seconds=5), 1)
    assert first[0].id == second[0].id
    done = [(a, host.worker.run_activity(a)) for a in first + second]
    assert host.taskhub.complete_activities(done) == [True, False]
    host.run_until_idle()
    assert sum(e["EventType"] == EventType.TaskCompleted
               for e in host.taskhub.get_history("c1")) == 3


def test_a_claim_brings_messages_up_to_its_size_bound_and_the_rest_come_next(host, clock,
                                                                            monkeypatch):
    start(host, "race", 600, "r1")
    host.run_until_idle()
    for k in range(5):
        clock.advance(timedelta(seconds=1))
        host.taskhub.raise_event("r1", f"e{k}", json.dumps("x" * 100))
    size = len(host.taskhub._conn().execute("SELECT event FROM inbox WHERE instance_id='r1'"
                                            " ORDER BY id DESC").fetchone()[0])
    monkeypatch.setattr(store, "CLAIM_MESSAGE_CHARS", 2 * size)  # two messages a claim
    names = []
    for _ in range(4):
        items = host.taskhub.claim_orchestrations("w", timedelta(seconds=30), 1)
        names.append([m.event.get("Name") for item in items for m in item.messages])
        if items:
            host.taskhub.release_orchestration(items[0])
            host.taskhub._conn().execute(  # as if the episode consumed them
                f"DELETE FROM inbox WHERE id IN ({','.join(str(m.id) for m in items[0].messages)})")
    assert names == [["e0", "e1"], ["e2", "e3"], ["e4"], []]
