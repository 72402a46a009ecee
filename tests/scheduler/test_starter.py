"""The starter a submission wakes: the same ETag claim as the timer's, for one order (S3, V4)."""

import asyncio
from datetime import timedelta

from orders.models import ProcessState
from orders.names import ORDER_WORKFLOW
from scheduler.starter import run_starter
from tests.support.durable_client import StartRecorder, start_submitted
from tests.support.records import record_in


def with_settings(services, **changes):
    settings = services.settings.model_copy(update=changes)
    return type(services)(**{**vars(services), "settings": settings})


def test_a_submitted_order_is_claimed_and_started_at_once(services, stores, clock):
    record = record_in(stores.states, clock, ProcessState.PENDING)
    client = StartRecorder()
    report = asyncio.run(start_submitted(client, services, record))
    assert (report.claimed, report.started, report.lost_races) == (1, 1, 0)
    [(name, instance_id, data)] = client.started
    assert (name, instance_id, data["orderId"], data["attempt"]) == (
        ORDER_WORKFLOW, "ORD-1:1", "ORD-1", 1)
    stored = stores.states.get("ORD-1")
    assert stored.process_state is ProcessState.PROCESSING
    assert stored.locked_by == "ORD-1:1"
    assert stored.complete_by == clock.now() + timedelta(seconds=60)  # START_GRACE_S
    assert asyncio.run(run_starter(client, services)).claimed == 0  # nothing left for the timer


def test_the_timer_and_a_submission_with_the_same_etag_start_one_attempt(services, stores,
                                                                          clock):
    record = record_in(stores.states, clock, ProcessState.PENDING)
    client = StartRecorder()
    assert asyncio.run(run_starter(client, services)).started == 1
    report = asyncio.run(start_submitted(client, services, record))  # read before the claim
    assert (report.claimed, report.started, report.lost_races) == (0, 0, 1)
    assert [iid for _, iid, _ in client.started] == ["ORD-1:1"]


def test_nothing_is_claimed_while_max_processing_attempts_run(services, stores, clock):
    record_in(stores.states, clock, ProcessState.PROCESSING, order_key="ORD-0")
    record = record_in(stores.states, clock, ProcessState.PENDING)
    client = StartRecorder()
    full = with_settings(services, MAX_PROCESSING=1)
    assert asyncio.run(start_submitted(client, full, record)).claimed == 0
    assert stores.states.get("ORD-1").process_state is ProcessState.PENDING
    assert client.started == []
    roomy = with_settings(services, MAX_PROCESSING=2)
    assert asyncio.run(start_submitted(client, roomy, record)).started == 1


def test_held_back_locked_or_unknown_version_records_are_left_to_the_timer(services, stores,
                                                                           clock):
    client = StartRecorder()
    pending = record_in(stores.states, clock, ProcessState.PENDING)
    held = stores.states.replace(pending.model_copy(
        update={"not_before": clock.now() + timedelta(seconds=4)}))
    assert asyncio.run(start_submitted(client, services, held)).claimed == 0
    running = record_in(stores.states, clock, ProcessState.PROCESSING, order_key="ORD-2")
    assert asyncio.run(start_submitted(client, services, running)).claimed == 0
    fresh = record_in(stores.states, clock, ProcessState.PENDING, order_key="ORD-3")
    unknown = with_settings(services, WORKFLOW_VERSION=99)
    assert asyncio.run(start_submitted(client, unknown, fresh)).claimed == 0
    assert client.started == []
    clock.advance(timedelta(seconds=4))
    assert asyncio.run(start_submitted(client, services, held)).started == 1


def test_a_start_that_fails_leaves_the_claim_for_the_supervisor(services, stores, clock):
    record = record_in(stores.states, clock, ProcessState.PENDING)
    report = asyncio.run(start_submitted(StartRecorder(fail=True), services, record))
    assert (report.claimed, report.started) == (1, 0)
    assert stores.states.get("ORD-1").complete_by == clock.now() + timedelta(seconds=60)


def test_duplicate_deliveries_at_once_and_the_timer_start_one_attempt(services, stores, clock):
    record = record_in(stores.states, clock, ProcessState.PENDING)
    client = StartRecorder()

    async def together():
        return await asyncio.gather(*(start_submitted(client, services, record)
                                      for _ in range(5)), run_starter(client, services))

    reports = asyncio.run(together())
    assert sum(r.started for r in reports) == 1
    assert [iid for _, iid, _ in client.started] == ["ORD-1:1"]
    assert stores.states.get("ORD-1").locked_by == "ORD-1:1"
