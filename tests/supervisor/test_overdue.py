"""No order is forgotten: records whose CompleteBy passed before the scan window (V1, V2).

The supervisor's pass scans them too, with its own bounded, index-served scan; each one is
recovered like any expired record and raises an ``OverdueOrder`` alert.
"""

from datetime import timedelta

from orders.models import ProcessState, StateRecord
from orders.names import OPERATOR_ALERTS_QUEUE
from supervisor.supervisor import ScanReport, recover_overdue, supervise
from tests.supervisor.conftest import WINDOW_S, running

WINDOW = timedelta(seconds=WINDOW_S)


def stuck(states, clock, order_key, ago, **changes):
    """A Processing record whose CompleteBy passed ``ago`` before now."""
    return running(states, clock, order_key=order_key,
                   deadline_s=-ago.total_seconds(), **changes)


def test_record_older_than_the_window_is_recovered_with_an_alert_in_one_pass(
        services, stores, clock, sender):
    stuck(stores.states, clock, "ORD-1", timedelta(days=2, hours=3, seconds=5))
    report = supervise(services)
    assert (report.overdue, report.retried, report.expired) == (["ORD-1"], ["ORD-1"], 1)
    record = stores.states.get("ORD-1")
    assert (record.process_state, record.locked_by, record.failure_count) == \
        (ProcessState.PENDING, None, 1)
    assert record.not_before == clock.now() + timedelta(seconds=1)  # as any first failure
    (alert,) = sender.bodies(OPERATOR_ALERTS_QUEUE)
    assert (alert["kind"], alert["orderId"], alert["instanceId"]) == \
        ("OverdueOrder", "ORD-1", "ORD-1:1")
    assert "passed 2d 03:00:05 ago" in alert["reason"]
    assert "SUPERVISOR_SCAN_WINDOW_S=3600 s" in alert["reason"]
    assert alert["reason"].endswith("recovered: retried")
    assert supervise(services).expired == 0  # recovered once; nothing left behind


def test_overdue_record_at_max_failures_is_given_up_with_both_alerts(services, stores, clock,
                                                                     sender):
    stuck(stores.states, clock, "ORD-1", timedelta(days=3), failure_count=2)
    report = supervise(services)
    assert (report.overdue, report.gave_up) == (["ORD-1"], ["ORD-1"])
    assert stores.states.get("ORD-1").process_state is ProcessState.ERROR
    assert [a["kind"] for a in sender.bodies(OPERATOR_ALERTS_QUEUE)] == \
        ["RetriesExhausted", "OverdueOrder"]
    assert [m["status"] for m in sender.bodies("replies-acme")] == ["OrderFailed"]


def test_pass_reads_only_the_expired_rows_among_many_others(services, stores, clock):
    for n in range(3):
        stuck(stores.states, clock, f"OLD-{n}", WINDOW + timedelta(hours=n + 1))
    for n in range(2):
        stuck(stores.states, clock, f"RECENT-{n}", timedelta(minutes=n + 1))
    now = clock.now()
    for n in range(1500):
        running(stores.states, clock, order_key=f"RUNNING-{n}")  # CompleteBy ahead
        done = running(stores.states, clock, order_key=f"DONE-{n}", deadline_s=-2 * WINDOW_S)
        stores.states.replace(done.model_copy(update={"process_state": ProcessState.PROCESSED,
                                                      "complete_by": None}))  # client told
        stores.states.create_if_absent(StateRecord.new(f"NEW-{n}", "replies-acme", now))
    report = supervise(services)
    assert sorted(report.overdue) == ["OLD-0", "OLD-1", "OLD-2"]
    assert sorted(report.retried) == ["OLD-0", "OLD-1", "OLD-2", "RECENT-0", "RECENT-1"]
    assert report.rows_read == report.expired == 5  # of 4,505 records
    # One page per scan (page size 10): overdue and window, of the supervised states and of
    # the final states whose status is still to be sent (none here).
    assert report.pages == 4


def test_both_scans_share_the_record_budget_overdue_first(services, stores, clock, sender):
    bounded = services.settings.model_copy(update={"SUPERVISOR_MAX_RECORDS": 3,
                                                    "SUPERVISOR_PAGE_SIZE": 2})
    services.settings = bounded
    for n in range(2):
        stuck(stores.states, clock, f"OLD-{n}", WINDOW + timedelta(minutes=n + 1))
    for n in range(3):
        stuck(stores.states, clock, f"RECENT-{n}", timedelta(minutes=n + 1))
    first = supervise(services)
    assert first.expired == 3 and sorted(first.overdue) == ["OLD-0", "OLD-1"]
    second = supervise(services)
    assert second.expired == 2 and second.overdue == []
    assert sorted(first.retried + second.retried) == \
        ["OLD-0", "OLD-1", "RECENT-0", "RECENT-1", "RECENT-2"]
    assert len(sender.bodies(OPERATOR_ALERTS_QUEUE)) == 2


def test_two_supervisors_recover_an_overdue_record_once_with_one_alert(services, stores,
                                                                       clock, sender):
    record = stuck(stores.states, clock, "ORD-1", timedelta(days=2))
    first, second = ScanReport(), ScanReport()
    assert recover_overdue(record, services, first) == "retried"
    assert recover_overdue(record, services, second) is None  # its ETag is stale now
    assert (first.overdue, second.overdue, second.skipped) == (["ORD-1"], [], 1)
    assert stores.states.get("ORD-1").failure_count == 1
    assert len(sender.bodies(OPERATOR_ALERTS_QUEUE)) == 1
