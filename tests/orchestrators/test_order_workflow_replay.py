"""The order workflow replayed over recorded histories, without a host (S4-S7, X6, D4).

Each test writes the history an attempt would have recorded, in the wire form the activities
and agents produce, hands it to the SDK's orchestrator entry point and checks what the
workflow schedules (activity names and inputs, timers, waits) and what it returns. The
inputs below are literal wire forms: a change to a key the workflow sends fails here.
"""

from datetime import timedelta

import pytest

from orchestrators.order_workflow import order_workflow
from orders import names
from orders.models.activities import (
    ALERT_OPERATOR,
    BEGIN_ATTEMPT,
    FAIL_ORDER,
    FINISH_ATTEMPT,
    LOAD_ORDER,
    PUBLISH_STATUS,
    RECORD_STEP,
    RESERVE_INVENTORY,
    SEND_AGENT_REQUEST,
)
from tests.orchestrators.history import T0, History, replay

IID = "ORD-1:1"
DEADLINE = "2030-01-01T00:00:30.000000Z"
INPUT = {"orderId": "ORD-1", "attempt": 1, "workflowVersion": 1, "deadlineS": 30.0,
         "agentMaxAttempts": 4}
LINES = [{"sku": "SKU-A", "quantity": 2, "unitPrice": "10.00", "discount": "0", "tax": "0"}]
ORDER = {"orderId": "ORD-1", "customerId": "CUST-1", "currency": "USD", "lines": LINES,
         "totalPrice": "20.00", "createdAt": "2029-12-31T00:00:00.000000Z", "schemaVersion": 1}
RESERVATION = {"reservationId": "RES-ORD-1", "lines": [{"sku": "SKU-A", "quantity": 2}]}
PAID = {"paymentId": "pay_1", "orderId": "ORD-1", "amount": "20.00", "currency": "USD",
        "status": "captured"}
SHIPPED = {"shipmentId": "shp_1", "orderId": "ORD-1", "status": "created"}

BEGIN = ("call", BEGIN_ATTEMPT.name,
         {"orderId": "ORD-1", "instanceId": IID, "completeBy": DEADLINE})
LOAD = ("call", LOAD_ORDER.name, "ORD-1")
RESERVE = ("call", RESERVE_INVENTORY.name, {"orderId": "ORD-1", "lines": LINES})


def record(step, result, version=1):
    return ("call", RECORD_STEP.name, {"orderId": "ORD-1", "instanceId": IID,
                                       "workflowVersion": version, "step": step,
                                       "result": result})


def send(operation, version=1):
    service, payload = {
        "charge": ("payment", {"orderId": "ORD-1", "amount": "20.00", "currency": "USD"}),
        "ship": ("shipping", {"orderId": "ORD-1", "lines": [{"sku": "SKU-A", "quantity": 2}]}),
    }[operation]
    return ("call", SEND_AGENT_REQUEST.name, {
        "schemaVersion": 1, "messageId": f"{IID}:{operation}", "orderId": "ORD-1",
        "instanceId": IID, "service": service, "operation": operation,
        "idempotencyKey": f"ORD-1:{operation}", "completeBy": DEADLINE, "maxAttempts": 4,
        "eventName": f"{operation}-reply", "replyTo": "agent-replies", "payload": payload,
        "workflowVersion": version})


def race(operation, cancelled):
    """The wait for the reply raced against the timer at CompleteBy (S6)."""
    return ("any", [("wait", f"{operation}-reply"), ("timer", DEADLINE, cancelled)])


def reply(operation, outcome="Succeeded", result=None, **fields):
    """An agent's reply as the reply handler raises it (AgentReply, JSON form)."""
    return {"schemaVersion": 1, "messageId": f"{IID}:{operation}:reply", "orderId": "ORD-1",
            "instanceId": IID, "operation": operation, "eventName": f"{operation}-reply",
            "outcome": outcome, "attempts": 1, "circuitOpen": False, "retryAt": None,
            "statusCode": fields.get("statusCode", 201), "errorCode": fields.get("errorCode"),
            "result": result, "reason": fields.get("reason")}


def started(input_=INPUT):
    """A history through reserve inventory and its log entry."""
    h = History(names.ORDER_WORKFLOW, IID, input_)
    h.activity(BEGIN_ATTEMPT.name, {"fenced": False, "replyTo": "replies-acme"})
    h.activity(LOAD_ORDER.name, ORDER)
    h.activity(RESERVE_INVENTORY.name, RESERVATION)
    h.activity(RECORD_STEP.name, {"seq": 1, "created": True})
    return h


def answered(h, operation, answer):
    """The request of ``operation`` sent, and ``answer`` raised before the timer fired."""
    h.activity(SEND_AGENT_REQUEST.name, f"{IID}:{operation}")
    h.timer(T0 + timedelta(seconds=30))
    h.raised(f"{operation}-reply", answer)


def timed_out(h, operation):
    h.activity(SEND_AGENT_REQUEST.name, f"{IID}:{operation}")
    timer_id = h.timer(T0 + timedelta(seconds=30))
    h.timer_fired(timer_id, T0 + timedelta(seconds=30))


def finished(fenced):
    """A history through both steps and finish attempt, which answers ``fenced``."""
    h = started()
    answered(h, "charge", reply("charge", result=PAID))
    h.activity(RECORD_STEP.name, {"seq": 3, "created": True})
    answered(h, "ship", reply("ship", result=SHIPPED))
    h.activity(RECORD_STEP.name, {"seq": 5, "created": True})
    h.activity(FINISH_ATTEMPT.name, {"fenced": fenced})
    return h


STARTED = [BEGIN, LOAD, RESERVE, record("reserve_inventory", RESERVATION)]


def test_success_path_schedules_every_step_in_order_and_ends_processed():
    h = finished(fenced=False)
    h.activity(PUBLISH_STATUS.name, None)
    decision = replay(order_workflow, h)
    assert decision.actions == STARTED + [
        send("charge"), race("charge", cancelled=True), record("charge", PAID),
        send("ship"), race("ship", cancelled=True), record("ship", SHIPPED),
        ("call", FINISH_ATTEMPT.name, {"orderId": "ORD-1", "instanceId": IID,
                                       "state": "Processed"}),
        ("call", PUBLISH_STATUS.name, {"orderId": "ORD-1", "instanceId": IID,
                                       "replyTo": "replies-acme",
                                       "status": "OrderCompleted"}),
    ]
    assert decision.done and decision.output == {"outcome": "processed"}


def test_each_episode_schedules_only_the_next_step():
    # Replay after every answer: the actions so far are replayed, one new one is added.
    h = History(names.ORDER_WORKFLOW, IID, INPUT)
    assert replay(order_workflow, h).actions == [BEGIN]
    h.activity(BEGIN_ATTEMPT.name, {"fenced": False, "replyTo": "replies-acme"})
    assert replay(order_workflow, h).actions == [BEGIN, LOAD]
    h.activity(LOAD_ORDER.name, ORDER)
    h.activity(RESERVE_INVENTORY.name, RESERVATION)
    h.activity(RECORD_STEP.name, {"seq": 1, "created": True})
    assert replay(order_workflow, h).actions == STARTED + [send("charge")]
    h.activity(SEND_AGENT_REQUEST.name, f"{IID}:charge")
    waiting = replay(order_workflow, h)
    assert waiting.actions == STARTED + [send("charge"), race("charge", cancelled=False)]
    assert not waiting.done and waiting.output is None


def test_timer_first_ends_timed_out_without_touching_the_record(caplog):
    h = started()
    timed_out(h, "charge")
    with caplog.at_level("INFO", logger="orders.workflow"):
        decision = replay(order_workflow, h)
    assert decision.actions == STARTED + [send("charge"), race("charge", cancelled=False)]
    assert FINISH_ATTEMPT.name not in decision.calls
    assert decision.done and decision.output == {"outcome": "timedOut", "step": "charge"}
    assert [r.getMessage() for r in caplog.records] == [
        "charge timed out; left for the supervisor"]


def test_a_reply_after_the_timer_changes_nothing():
    h = started()
    answered(h, "charge", reply("charge", result=PAID))
    h.activity(RECORD_STEP.name, {"seq": 3, "created": True})
    timed_out(h, "ship")
    assert replay(order_workflow, h).output == {"outcome": "timedOut", "step": "ship"}


def test_a_transient_failure_reply_is_left_for_the_supervisor():
    h = started()
    answered(h, "charge", reply("charge", "TransientFailure", statusCode=503,
                                reason="503 after 4 attempts"))
    decision = replay(order_workflow, h)
    assert decision.actions == STARTED + [send("charge"), race("charge", cancelled=True)]
    assert decision.output == {"outcome": "transientFailure", "step": "charge"}


@pytest.mark.parametrize(("state", "told"), [("Compensating", False), ("Error", True)])
def test_a_permanent_failure_fails_the_order_and_alerts_an_operator(state, told):
    h = started()
    answered(h, "charge", reply("charge", "PermanentFailure", statusCode=402,
                                errorCode="card_declined", reason="card declined"))
    h.activity(FAIL_ORDER.name, {"fenced": False, "state": state})
    h.activity(ALERT_OPERATOR.name, None)
    if told:
        h.activity(PUBLISH_STATUS.name, None)
    decision = replay(order_workflow, h)
    why = "charge failed permanently: card declined"
    expected = STARTED + [
        send("charge"), race("charge", cancelled=True),
        ("call", FAIL_ORDER.name, {"orderId": "ORD-1", "instanceId": IID,
                                   "reason": f"attempt {IID}: {why}"}),
        ("call", ALERT_OPERATOR.name, {"kind": "OrderError", "orderId": "ORD-1",
                                       "instanceId": IID, "reason": why}),
    ]
    if told:
        expected.append(("call", PUBLISH_STATUS.name, {
            "orderId": "ORD-1", "instanceId": IID, "replyTo": "replies-acme",
            "status": "OrderFailed", "reason": why}))
    assert decision.actions == expected
    assert decision.output == {"outcome": "error" if told else "compensating",
                               "step": "charge", "reason": "card declined"}


OUT_OF_STOCK = {**RESERVATION, "outOfStock": {
    "sku": "SKU-A", "line": 0, "requested": 2, "available": 1}}
"""A reservation result whose only line was short."""


def failed_for_stock(h):
    """Record an out-of-stock attempt's fail_order and alert; return the actions expected."""
    h.activity(FAIL_ORDER.name, {"fenced": False, "state": "Compensating"})
    h.activity(ALERT_OPERATOR.name, None)
    why = ("reserve_inventory failed permanently: out of stock: SKU SKU-A (line 1) "
           "requested 2, more than the units available")
    return [("call", FAIL_ORDER.name, {"orderId": "ORD-1", "instanceId": IID,
                                       "reason": f"attempt {IID}: {why}"}),
            ("call", ALERT_OPERATOR.name, {"kind": "OrderError", "orderId": "ORD-1",
                                           "instanceId": IID, "reason": why})]


@pytest.mark.parametrize("version", [1, 2])
def test_out_of_stock_fails_the_order_before_any_remote_step(version):
    h = History(names.ORDER_WORKFLOW, IID, {**INPUT, "workflowVersion": version})
    h.activity(BEGIN_ATTEMPT.name, {"fenced": False, "replyTo": "replies-acme"})
    h.activity(LOAD_ORDER.name, ORDER)
    h.activity(RESERVE_INVENTORY.name, OUT_OF_STOCK)
    expected = failed_for_stock(h)
    decision = replay(order_workflow, h)
    assert decision.actions == [BEGIN, LOAD, RESERVE, *expected]
    assert decision.output == {"outcome": "compensating", "step": "reserve_inventory",
                               "reason": "out of stock: SKU SKU-A (line 1) requested 2, "
                                         "more than the units available"}


def test_a_superseded_attempt_schedules_nothing_after_begin_attempt():
    h = History(names.ORDER_WORKFLOW, IID, INPUT)
    h.activity(BEGIN_ATTEMPT.name, {"fenced": True, "replyTo": None})
    decision = replay(order_workflow, h)
    assert decision.actions == [BEGIN]
    assert decision.done and decision.output == {"outcome": "superseded"}


def test_an_attempt_fenced_at_the_end_does_not_tell_the_client():
    h = finished(fenced=True)
    decision = replay(order_workflow, h)
    assert decision.calls[-1] == FINISH_ATTEMPT.name
    assert decision.output == {"outcome": "superseded"}


def test_a_permanent_failure_of_a_superseded_attempt_alerts_nobody():
    h = started()
    answered(h, "charge", reply("charge", "PermanentFailure", statusCode=402,
                                reason="card declined"))
    h.activity(FAIL_ORDER.name, {"fenced": True, "state": None})
    decision = replay(order_workflow, h)
    assert decision.calls[-1] == FAIL_ORDER.name
    assert decision.output == {"outcome": "superseded"}


def test_version_2_ships_before_it_charges():
    h = started({**INPUT, "workflowVersion": 2})
    answered(h, "ship", reply("ship", result=SHIPPED))
    h.activity(RECORD_STEP.name, {"seq": 3, "created": True})
    decision = replay(order_workflow, h)
    assert decision.actions == [BEGIN, LOAD, RESERVE, record("reserve_inventory", RESERVATION, 2),
                                send("ship", 2), race("ship", cancelled=True),
                                record("ship", SHIPPED, 2), send("charge", 2)]


def test_an_input_recorded_before_versions_runs_version_1():
    # X6: attempts started before workflowVersion existed replay as version 1.
    old = {"orderId": "ORD-1", "deadlineS": 30.0, "agentMaxAttempts": 4}
    h = started(old)
    answered(h, "charge", reply("charge", result=PAID))
    decision = replay(order_workflow, h)
    assert decision.actions == STARTED + [send("charge"), race("charge", cancelled=True),
                                          record("charge", PAID)]


def test_a_reply_recorded_before_circuit_and_error_codes_existed_still_loads():
    # An AgentReply raised before circuitOpen, retryAt and errorCode were added (X6).
    old = reply("charge", result=PAID)
    for key in ("circuitOpen", "retryAt", "errorCode"):
        del old[key]
    h = started()
    answered(h, "charge", old)
    assert replay(order_workflow, h).actions[-1] == record("charge", PAID)


def test_an_unknown_version_alerts_an_operator_and_touches_nothing():
    unknown = max(names.WORKFLOW_VERSIONS) + 1
    h = History(names.ORDER_WORKFLOW, IID, {**INPUT, "workflowVersion": unknown})
    h.activity(ALERT_OPERATOR.name, None)
    decision = replay(order_workflow, h)
    assert decision.actions == [("call", ALERT_OPERATOR.name, {
        "kind": "UnknownWorkflowVersion", "orderId": "ORD-1", "instanceId": IID,
        "reason": f"workflow version {unknown} is not registered; known: "
                  f"{list(names.WORKFLOW_VERSIONS)}"})]
    assert decision.output == {"outcome": "unknownWorkflowVersion"}


def test_a_failed_activity_fails_the_attempt():
    # D9: load_order raised (a broken dual write); the instance ends Failed and the
    # supervisor recovers the record once CompleteBy has passed.
    h = History(names.ORDER_WORKFLOW, IID, INPUT)
    h.activity(BEGIN_ATTEMPT.name, {"fenced": False, "replyTo": "replies-acme"})
    h.failed_activity(LOAD_ORDER.name, "LookupError: orderId: no order ORD-1")
    with pytest.raises(Exception, match="no order ORD-1"):
        replay(order_workflow, h)



def test_a_traced_attempt_wraps_every_activity_input_in_its_trace_context():
    # X8, D4: no span in orchestrator code; the attempt's traceparent (from the
    # input) goes with each activity's input, the same on every replay.
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    history = started({**INPUT, "traceParent": parent})
    wrapped = [("call", name, {"traceParent": parent, "instanceId": IID, "input": data})
               for _, name, data in [*STARTED, send("charge")]]
    assert replay(order_workflow, history).actions == wrapped
    assert replay(order_workflow, history).actions == wrapped
