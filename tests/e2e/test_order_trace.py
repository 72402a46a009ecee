"""One order, one trace (X8): the spans of every step, across attempts, in the store.

Orders run through the real app under the local host; the spans reach the local trace store
(``traces.sqlite`` in the data folder) through the batch span processor and are read back
as ``python -m opscli trace`` reads them.
"""

import pytest
from typer.testing import CliRunner

from opscli.cli import app as ops_app
from orders.models.messages import SubmitOrder
from orders.observability.telemetry import flush_traces
from orders.observability.trace_store import TraceStore
from orders.observability.tracing import ATTEMPT, OPERATION
from tests.e2e.harness import ProcessState, key, make_order

SHIP_DECLINE = {"status": 422, "reason": "address_undeliverable"}


def order_spans(tmp_path, order):
    assert flush_traces()
    return TraceStore(tmp_path / "data" / "traces.sqlite").spans_of(key(order))


def children(spans, parent):
    return [s for s in spans if s.parent_id == parent.span_id]


def named(spans, name, **attributes):
    return [s for s in spans if s.name == name
            and all(s.attributes.get(k) == v for k, v in attributes.items())]


def test_retries_are_child_spans_and_a_compensated_order_is_one_trace(make_system, tmp_path):
    flaky, declined = make_order(61), make_order(62)
    system = make_system(faults={
        "payment": {"black_hole_order_ids": [key(flaky)], "black_hole_first_n": 1},
        "shipping": {"decline": {key(declined): SHIP_DECLINE}}})
    system.submit(flaky)
    system.submit(declined)
    system.run(30)
    assert system.state(flaky.order_id).process_state == ProcessState.PROCESSED
    assert system.state(declined.order_id).process_state == ProcessState.COMPENSATED

    spans = order_spans(tmp_path, flaky)
    assert len({s.trace_id for s in spans}) == 1
    [agent] = named(spans, "agent payment charge")
    tries = [s for s in children(spans, agent) if s.kind == "CLIENT"]
    assert [(t.name, t.status) for t in tries] == [("POST payment try 1", "ERROR"),
                                                   ("POST payment try 2", "UNSET")]
    assert [s.name for s in children(spans, agent) if s.kind != "CLIENT"] == ["reply routing"]
    # The payment service continued the trace of the try that reached it, at the path the
    # harness gives payment (each service its own prefix) and the catalogue gives charge.
    assert [s.name for s in children(spans, tries[1])] == ["POST /payment/payments"]
    # The charge is the first remote step: version 7's begin_attempt sends it.
    [send] = [s for s in spans if s.span_id == agent.parent_id]
    assert send.name == "activity begin_attempt"

    spans = order_spans(tmp_path, declined)
    assert len({s.trace_id for s in spans}) == 1
    [root] = [s for s in spans if s.parent_id is None]
    assert root.name == "submission"
    starts = children(spans, root)
    assert [s.name for s in starts] == ["starter: claim and start",
                                        "compensation starter: claim and start"]
    forward = [s.attributes[OPERATION] for s in children(spans, starts[0])]
    # Version 7: begin also reserves and sends the charge.
    assert forward == ["begin_attempt", "send_agent_request", "fail_order", "alert_operator"]
    undo = [s.attributes[OPERATION] for s in children(spans, starts[1])]
    assert undo[:2] == ["begin_compensation", "pending_undos"]
    assert undo[-2:] == ["finish_compensation", "publish_status"]
    assert [s.name for s in spans if s.name.startswith("agent ")] == [
        "agent payment charge", "agent shipping ship", "agent shipping cancel_shipment",
        "agent payment refund"]
    assert named(spans, "activity release_inventory")[0].parent_id == starts[1].span_id
    assert starts[1].links == [(starts[0].trace_id, starts[0].span_id)]


def test_an_order_the_supervisor_recovered_is_one_trace_across_its_attempts(make_system,
                                                                            tmp_path):
    system = make_system()
    order = make_order(63)
    system.submit(order)
    with system.paused("payment-requests"):
        system.run(1.5)
        system.engine.receive("payment-requests", 1, lock_owner="crashed-agent")
    system.run(31)
    system.run(20)
    assert system.state(order.order_id).process_state == ProcessState.PROCESSED

    spans = order_spans(tmp_path, order)
    assert len({s.trace_id for s in spans}) == 1
    [root] = [s for s in spans if s.parent_id is None]
    steps = [(s.name, s.attributes.get(ATTEMPT), s.attributes.get(OPERATION))
             for s in children(spans, root)]
    assert steps == [("starter: claim and start", 1, "order_workflow"),
                     ("supervisor recovery", 1, "retried"),
                     ("starter: claim and start", 2, "order_workflow")]
    first, recovery, second = children(spans, root)
    assert second.links == [(first.trace_id, first.span_id)]
    assert recovery.links == [(first.trace_id, first.span_id)]
    assert [s.attributes[OPERATION] for s in children(spans, second)][-2:] == [
        "send_agent_request", "finish_attempt"]  # version 3: finish_attempt tells the client
    assert {s.attributes.get(ATTEMPT) for s in children(spans, second)} == {2}

    result = CliRunner().invoke(ops_app, ["--data-dir", str(tmp_path / "data"), "trace",
                                          order.order_id], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == key(order)
    assert "supervisor recovery" in result.output and "ms" in lines[1]
    assert sum("-> follows starter: claim and start" in line for line in lines) == 2



def send_with_traceparent(system, order, traceparent):
    msg = SubmitOrder(client_id="acme", reply_to="replies-acme", order=order)
    system.engine.send("orders-acme", msg.model_dump_json(by_alias=True),
                       message_id=order.order_id,
                       application_properties={"traceparent": traceparent})


@pytest.mark.parametrize("traceparent", ["garbage", "", 42,
                                         "00-" + "0" * 32 + "-" + "0" * 16 + "-01"])
def test_a_malformed_traceparent_on_a_submission_starts_the_order_s_own_trace(
        make_system, tmp_path, traceparent):
    system = make_system()
    order = make_order(63)
    send_with_traceparent(system, order, traceparent)
    system.run(10)
    assert system.state(order.order_id).process_state == ProcessState.PROCESSED
    spans = order_spans(tmp_path, order)
    assert len({s.trace_id for s in spans}) == 1
    assert [s.name for s in spans if s.parent_id is None] == ["submission"]


def test_a_client_s_unsampled_traceparent_does_not_turn_the_order_s_tracing_off(
        make_system, tmp_path):
    system = make_system()  # TRACE_SAMPLE_RATIO 1: every order traced
    order = make_order(64)
    send_with_traceparent(system, order,
                          "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00")
    system.run(10)
    assert system.state(order.order_id).process_state == ProcessState.PROCESSED
    assert order_spans(tmp_path, order) != []


def test_a_refund_with_nothing_to_undo_reads_so_in_the_trace(make_system, tmp_path):
    declined = make_order(68)
    system = make_system(faults={"payment": {"decline": {key(declined): {
        "status": 402, "reason": "card_declined"}}}})
    system.submit(declined)
    system.run(30)
    assert system.state(declined.order_id).process_state == ProcessState.COMPENSATED
    spans = order_spans(tmp_path, declined)
    [refund] = named(spans, "agent payment refund")
    # The service never charged, so it answered nothing_to_undo: the undo is done, and an
    # operator reading the trace is not told of a failure.
    assert refund.attributes["orders.outcome"] == "NothingToUndo"
    assert [s.attributes["orders.outcome"] for s in children(spans, refund)
            if s.name == "reply routing"] == ["NothingToUndo"]
    [charge] = named(spans, "agent payment charge")
    assert charge.attributes["orders.outcome"] == "PermanentFailure"
