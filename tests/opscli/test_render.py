"""The operator CLI's tables put first what an operator reads first (S9, D5)."""

import json
from datetime import UTC, datetime

from rich.console import Console

from opscli.render import (
    alerts_table,
    business_input,
    compensation_table,
    history_table,
    report_tables,
)
from orders.models.messages import OperatorAlert

TRACE = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def rendered(table, width=100):
    console = Console(record=True, width=width)
    console.print(table)
    return console.export_text()


def test_the_compensation_log_starts_with_the_step_name_and_never_cuts_it():
    rows = [{"classification": "Internal", "instanceId": "acme~ORD-1:1", "orderId": "acme~ORD-1",
             "outcome": None, "recordedAt": "2030-01-01T00:00:01.000000Z",
             "retainUntil": "2030-01-31T00:00:01.000000Z", "retentionDays": 30,
             "schemaVersion": 2, "seq": 1, "step": "payment_charge_requested",
             "workflowVersion": 1},
            {"classification": "Internal", "instanceId": "acme~ORD-1:comp:1",
             "orderId": "acme~ORD-1", "outcome": "NothingToUndo",
             "recordedAt": "2030-01-01T00:00:09.000000Z",
             "retainUntil": "2030-01-31T00:00:09.000000Z", "retentionDays": 30,
             "schemaVersion": 2, "seq": 2, "step": "payment_refund", "workflowVersion": 1}]
    table = compensation_table(rows)
    assert [c.header for c in table.columns] == [
        "step", "outcome", "seq", "recordedAt", "instanceId", "classification", "retainUntil",
        "workflowVersion"]
    text = rendered(table)
    assert "payment_charge_requested" in text and "NothingToUndo" in text


def test_a_newer_entry_field_is_shown_after_the_known_ones():
    table = compensation_table([{"step": "reserve_stock", "seq": 1, "zone": "eu"}])
    assert [c.header for c in table.columns] == ["step", "seq", "zone"]


def test_history_inputs_show_the_business_input_not_the_trace_envelope():
    activity = json.dumps({"traceParent": TRACE, "instanceId": "acme~ORD-1:1",
                           "input": {"orderId": "acme~ORD-1", "attempt": 1}})
    orchestration = {"traceParent": TRACE, "orderId": "acme~ORD-1", "attempt": 1}
    assert business_input(activity) == {"orderId": "acme~ORD-1", "attempt": 1}
    assert list(business_input(orchestration)) == ["orderId", "attempt", "traceParent"]
    assert business_input("not json") == "not json"
    status = {"instanceId": "acme~ORD-1:1", "runtimeStatus": "Completed", "historyEvents": [
        {"EventType": "TaskScheduled", "Timestamp": "t", "Name": "load_order",
         "Input": activity}]}
    text = rendered(history_table(status), width=200)
    assert '{"orderId": "acme~ORD-1", "attempt": 1}' in text
    assert "traceParent" not in text


def test_one_orders_state_record_shows_a_long_failure_reason_whole():
    reason = ("payment charge: remote answered 503 five times; the supervisor gave the attempt "
              "up after CompleteBy 2030-01-01T00:00:10Z and started compensation (S5) END")
    report = {"record": {"processState": "Error", "failureReason": reason}, "order": None,
              "compensation": [], "attempts": []}
    text = " ".join(rendered(report_tables(report), width=60).replace("│", " ").split())
    assert "up after CompleteBy" in text and "(S5) END" in text and "…" not in text


def test_an_order_alert_names_the_client_its_order_key_holds():
    at = datetime(2030, 1, 1, tzinfo=UTC)
    alerts = [json.loads(OperatorAlert(**fields).model_dump_json(by_alias=True)) for fields in (
        {"kind": "OrderError", "reason": "payment declined", "at": at,
         "order_key": "shop-a~TPCH-163", "instance_id": "shop-a~TPCH-163:1"},
        {"kind": "UseClientQueue", "reason": "sent to the shared queue", "at": at,
         "client_id": "shop-b"},
        {"kind": "UnknownWorkflowVersion", "reason": "version 99", "at": at})]
    table = alerts_table(alerts)
    client = next(c for c in table.columns if c.header == "Client")
    assert list(client.cells) == ["shop-a", "shop-b", ""]
