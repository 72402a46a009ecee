"""The compensation workflow replayed over recorded histories, without a host (S9, D4).

Like :mod:`tests.orchestrators.test_order_workflow_replay`: literal wire forms in, the
scheduled actions and the output checked.
"""

from datetime import timedelta

import pytest

from orchestrators.compensation_workflow import compensation_workflow
from orders import names
from orders.models.activities import (
    ALERT_OPERATOR,
    BEGIN_COMPENSATION,
    FINISH_COMPENSATION,
    PENDING_UNDOS,
    PUBLISH_STATUS,
    RECORD_STEP,
    RELEASE_INVENTORY,
    SEND_AGENT_REQUEST,
)
from tests.orchestrators.history import T0, History, replay
from tests.support.records import CHARGE, RESERVE, entry

IID = "ORD-1:comp:1"
DEADLINE = "2030-01-01T00:00:30.000000Z"
INPUT = {"orderId": "ORD-1", "workflowVersion": 1, "deadlineS": 30.0, "agentMaxAttempts": 4}
WHY = "attempt ORD-1:1: charge failed permanently: card declined"
LOGGED = T0 - timedelta(minutes=1)
CHARGED = entry(CHARGE, LOGGED, seq=2).model_dump(mode="json")
RESERVED = entry(RESERVE, LOGGED, seq=1).model_dump(mode="json")
REFUNDED = {"refundId": "re_1", "paymentId": "pay_1", "orderId": "ORD-1", "amount": "20.00",
            "currency": "USD", "status": "refunded"}

BEGIN = ("call", BEGIN_COMPENSATION.name,
         {"orderId": "ORD-1", "instanceId": IID, "completeBy": DEADLINE})
PENDING = ("call", PENDING_UNDOS.name, "ORD-1")
SEND_REFUND = ("call", SEND_AGENT_REQUEST.name, {
    "schemaVersion": 1, "messageId": f"{IID}:refund", "orderId": "ORD-1", "instanceId": IID,
    "service": "payment", "operation": "refund", "idempotencyKey": "ORD-1:refund",
    "completeBy": DEADLINE, "maxAttempts": 4, "eventName": "refund-reply",
    "replyTo": "agent-replies",
    "payload": {"orderId": "ORD-1", "chargeKey": "ORD-1:charge", "paymentId": "pay_1",
                "amount": "20.00", "currency": "USD"}})
RELEASE = ("call", RELEASE_INVENTORY.name, {"orderId": "ORD-1", "reservationId": "RES-ORD-1"})


def race(cancelled):
    return ("any", [("wait", "refund-reply"), ("timer", DEADLINE, cancelled)])


def record(step, result, outcome):
    return ("call", RECORD_STEP.name, {"orderId": "ORD-1", "instanceId": IID,
                                       "workflowVersion": 1, "step": step, "result": result,
                                       "outcome": outcome})


def reply(outcome="Succeeded", result=None, status=200, error_code=None, reason=None):
    return {"schemaVersion": 1, "messageId": f"{IID}:refund:reply", "orderId": "ORD-1",
            "instanceId": IID, "operation": "refund", "eventName": "refund-reply",
            "outcome": outcome, "attempts": 1, "circuitOpen": False, "retryAt": None,
            "statusCode": status, "errorCode": error_code, "result": result, "reason": reason}


def begun(pending):
    h = History(names.COMPENSATION_WORKFLOW, IID, INPUT)
    h.activity(BEGIN_COMPENSATION.name, {"fenced": False, "replyTo": "replies-acme",
                                         "failureReason": WHY})
    h.activity(PENDING_UNDOS.name, pending)
    return h


def refund_answered(h, answer):
    h.activity(SEND_AGENT_REQUEST.name, f"{IID}:refund")
    h.timer(T0 + timedelta(seconds=30))
    h.raised("refund-reply", answer)


def finish(state, reason):
    return [("call", FINISH_COMPENSATION.name, {"orderId": "ORD-1", "instanceId": IID,
                                                "state": state}),
            ("call", PUBLISH_STATUS.name, {"orderId": "ORD-1", "instanceId": IID,
                                           "replyTo": "replies-acme", "status": state,
                                           "reason": reason})]


def test_every_step_is_undone_newest_first_and_the_client_told():
    h = begun([CHARGED, RESERVED])
    refund_answered(h, reply(result=REFUNDED))
    h.activity(RECORD_STEP.name, {"seq": 3, "created": True})
    h.activity(RELEASE_INVENTORY.name, {"reservationId": "RES-ORD-1"})
    h.activity(RECORD_STEP.name, {"seq": 4, "created": True})
    h.activity(PENDING_UNDOS.name, [])
    h.activity(FINISH_COMPENSATION.name, {"fenced": False})
    h.activity(PUBLISH_STATUS.name, None)
    decision = replay(compensation_workflow, h)
    detail = "undone: refund (Undone), release_inventory (Undone)"
    assert decision.actions == [
        BEGIN, PENDING, SEND_REFUND, race(cancelled=True),
        record("refund", REFUNDED, "Undone"), RELEASE,
        record("release_inventory", {"reservationId": "RES-ORD-1"}, "Undone"), PENDING,
        *finish("Compensated", f"{WHY}; {detail}")]
    assert decision.done and decision.output == {"outcome": "compensated", "detail": detail}


def test_nothing_to_undo_counts_as_undone():
    h = begun([CHARGED])
    refund_answered(h, reply("PermanentFailure", status=409, error_code="nothing_to_undo",
                             reason="409 nothing_to_undo"))
    h.activity(RECORD_STEP.name, {"seq": 3, "created": True})
    h.activity(PENDING_UNDOS.name, [])
    decision = replay(compensation_workflow, h)
    assert decision.actions[3:] == [race(cancelled=True),
                                    record("refund", None, "NothingToUndo"), PENDING,
                                    finish("Compensated", "")[0]]


def test_a_refused_undo_fails_the_compensation_and_alerts_an_operator():
    h = begun([CHARGED, RESERVED])
    refund_answered(h, reply("PermanentFailure", status=402, error_code="refund_refused",
                             reason="refund refused"))
    h.activity(FINISH_COMPENSATION.name, {"fenced": False})
    h.activity(ALERT_OPERATOR.name, None)
    h.activity(PUBLISH_STATUS.name, None)
    decision = replay(compensation_workflow, h)
    detail = "refund refused: 402 refund refused"
    reason = f"{WHY}; {detail}"
    finished, told = finish("CompensationFailed", reason)
    assert decision.actions == [
        BEGIN, PENDING, SEND_REFUND, race(cancelled=True), finished,
        ("call", ALERT_OPERATOR.name, {"kind": "CompensationFailed", "orderId": "ORD-1",
                                       "instanceId": IID, "reason": reason}),
        told]
    assert decision.output == {"outcome": "compensationFailed", "detail": detail}


def test_timer_first_leaves_the_compensation_for_the_supervisor():
    h = begun([CHARGED, RESERVED])
    h.activity(SEND_AGENT_REQUEST.name, f"{IID}:refund")
    timer_id = h.timer(T0 + timedelta(seconds=30))
    h.timer_fired(timer_id, T0 + timedelta(seconds=30))
    decision = replay(compensation_workflow, h)
    assert decision.actions == [BEGIN, PENDING, SEND_REFUND, race(cancelled=False)]
    assert decision.output == {"outcome": "timedOut", "step": "refund"}


def test_a_superseded_compensation_schedules_nothing_after_begin():
    h = History(names.COMPENSATION_WORKFLOW, IID, INPUT)
    h.activity(BEGIN_COMPENSATION.name, {"fenced": True, "replyTo": None,
                                         "failureReason": None})
    decision = replay(compensation_workflow, h)
    assert decision.actions == [BEGIN]
    assert decision.output == {"outcome": "superseded"}


def test_nothing_logged_is_compensated_at_once():
    h = begun([])
    h.activity(FINISH_COMPENSATION.name, {"fenced": False})
    h.activity(PUBLISH_STATUS.name, None)
    decision = replay(compensation_workflow, h)
    assert decision.actions == [BEGIN, PENDING, *finish("Compensated", f"{WHY}; undone: nothing")]
    assert decision.output == {"outcome": "compensated", "detail": "undone: nothing"}


def test_an_entry_logged_before_requests_were_logged_is_undone_by_its_stable_key():
    # X6: a schema-1 log names no idempotency key; the refund names the charge by
    # <OrderID>:charge, the key it was sent with.
    old = entry(CHARGE, LOGGED, seq=1).model_copy(update={"schema_version": 1})
    h = begun([old.model_dump(mode="json")])
    assert replay(compensation_workflow, h).actions == [BEGIN, PENDING, SEND_REFUND]


def test_a_reply_recorded_before_error_codes_is_never_nothing_to_undo():
    # A 409 without errorCode (written before the field existed) may be a refusal: the
    # compensation fails for an operator rather than keep the money.
    old = reply("PermanentFailure", status=409, reason="conflict")
    del old["errorCode"]
    h = begun([CHARGED])
    refund_answered(h, old)
    decision = replay(compensation_workflow, h)
    assert decision.actions[-1] == ("call", FINISH_COMPENSATION.name, {
        "orderId": "ORD-1", "instanceId": IID, "state": "CompensationFailed"})


INPUT_V2 = {**INPUT, "compensationVersion": 2}
BOUND = {"requestId": f"{IID}:refund", "idempotencyKey": "ORD-1:refund"}


@pytest.mark.parametrize("answer", [
    reply(result=REFUNDED) | BOUND,
    reply("PermanentFailure", status=409, error_code="nothing_to_undo") | BOUND,
    reply("PermanentFailure", status=402, error_code="refund_refused") | BOUND,
], ids=["undone", "nothing to undo", "refused"])
def test_version_2_acts_on_a_bound_reply_as_version_1_did(answer):
    # A4, X6: a genuine reply schedules the same actions in both versions, so attempts
    # begun on version 1 replay unchanged and version 2 differs only for other replies.
    decisions = []
    for input_ in (INPUT, INPUT_V2):
        h = History(names.COMPENSATION_WORKFLOW, IID, input_)
        h.activity(BEGIN_COMPENSATION.name, {"fenced": False, "replyTo": "replies-acme",
                                             "failureReason": WHY})
        h.activity(PENDING_UNDOS.name, [CHARGED])
        refund_answered(h, answer)
        decisions.append(replay(compensation_workflow, h))
    assert decisions[0].actions == decisions[1].actions
    assert decisions[1].actions[:4] == [BEGIN, PENDING, SEND_REFUND, race(cancelled=True)]
    assert len(decisions[1].actions) == 5


@pytest.mark.parametrize("answer", [
    reply(result=REFUNDED) | {"requestId": "forged-request", "idempotencyKey": "forged-key"},
    reply(result=REFUNDED),
    reply(result={"refundId": "re_1"}) | {"requestId": "forged-request"},
    reply(result=REFUNDED) | BOUND | {"instanceId": "ORD-1:comp:2"},
    reply(result=REFUNDED) | BOUND | {"operation": "cancel_shipment"},
    reply(result=REFUNDED) | BOUND | {"orderId": "ORD-2"},
    {"amount": "20.00"},
    "not json",
], ids=["forged ids", "no request id", "missing fields", "other attempt", "other operation",
        "other order", "not a reply", "not json"])
def test_version_2_ignores_a_reply_not_bound_to_its_undo_request(answer):
    h = History(names.COMPENSATION_WORKFLOW, IID, INPUT_V2)
    h.activity(BEGIN_COMPENSATION.name, {"fenced": False, "replyTo": "replies-acme",
                                         "failureReason": WHY})
    h.activity(PENDING_UNDOS.name, [CHARGED])
    refund_answered(h, answer)
    decision = replay(compensation_workflow, h)
    # No undo logged: the wait goes on, raced against a new timer of its own.
    assert decision.actions == [BEGIN, PENDING, SEND_REFUND, race(cancelled=True),
                                race(cancelled=False)]
    assert not decision.done
