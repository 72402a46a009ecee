from orders.models import ProcessState
from orders.observability import metrics


def test_submissions_are_counted_by_outcome(readings):
    metrics.record_submission(True)
    metrics.record_submission(True)
    metrics.record_submission(False, "AdmissionControl")
    metrics.record_submission(False, "InvalidJson")
    assert readings.points()["orders.submissions"] == {
        (("outcome", "accepted"), ("reason", "")): 2,
        (("outcome", "rejected"), ("reason", "AdmissionControl")): 1,
        (("outcome", "dead_lettered"), ("reason", "InvalidJson")): 1,
    }


def test_agent_calls_count_requests_calls_and_retries_by_service(readings):
    metrics.record_agent_call("payment", 4, "TransientFailure", "charge")
    metrics.record_agent_call("payment", 1, "Succeeded", "charge")
    metrics.record_agent_call("shipping", 0, "TransientFailure", "ship")
    metrics.record_circuit_state("payment", "open")
    points = readings.points()
    assert points["agent.calls"] == {(("service", "payment"),): 5}
    assert points["agent.retries"] == {(("service", "payment"),): 3}
    assert points["agent.requests"][(("operation", "ship"), ("outcome", "TransientFailure"),
                                      ("service", "shipping"))] == 1
    assert points["agent.circuit.state"] == {(("service", "payment"),): 2}


def test_backlog_states_scan_recovery_and_dead_letters(readings):
    metrics.record_state_counts({ProcessState.ERROR: 2, "Pending": 7})
    metrics.record_backlog(7, 30)
    metrics.record_stuck(1)
    metrics.record_recovery("retried", 3)
    metrics.record_recovery("gave_up", 0)
    metrics.record_compensation("failed")
    metrics.record_resubmission("not_in_error")
    metrics.record_scan(rows=40, duration_s=0.25, request_charge=12.5)
    metrics.record_dead_letters("orders", 4)
    points = readings.points()
    assert points["orders.state.count"] == {(("state", "Error"),): 2, (("state", "Pending"),): 7}
    assert points["orders.in_flight"] == {(): 7} and points["orders.in_flight.limit"] == {(): 30}
    assert points["orders.stuck"] == {(): 1}
    assert points["orders.recoveries"] == {(("outcome", "retried"),): 3}
    assert points["orders.compensations"] == {(("outcome", "failed"),): 1}
    assert points["orders.resubmissions"] == {(("outcome", "not_in_error"),): 1}
    assert points["supervisor.scan.rows_read"] == {(): (1, 40)}
    assert points["supervisor.scan.duration"] == {(): (1, 0.25)}
    assert points["supervisor.scan.request_charge"] == {(): (1, 12.5)}
    assert points["servicebus.dead_letter.depth"] == {(("queue", "orders"),): 4}
