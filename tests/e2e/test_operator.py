"""Operator actions against the running system (S7, X8, D5).

An order whose order row is lost fails every attempt and ends in Error; the operator finds
it with the CLI, reads each attempt's history over the Durable HTTP API, restores the row
and resubmits: one new attempt starts and completes, a second resubmit changes nothing.
The ``api/ops/summary`` endpoint answers the same counts as a direct count over the
state store.
"""

import json
from datetime import timedelta

import httpx
from typer.testing import CliRunner

from opscli.cli import app
from orders.models import Order, StateRecord
from tests.e2e.checks import declined_order, direct_counts, lose_order_row, submit_unstarted
from tests.e2e.harness import ProcessState, key, make_order

runner = CliRunner()


def ops(system, *args):
    return runner.invoke(app, ["--data-dir", str(system.host.data_dir), *args],
                         env={"COLUMNS": "200"})


def words(result) -> str:
    return " ".join(result.stdout.split())


def ops_json(system, *args):
    result = ops(system, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_operator_finds_inspects_and_resubmits_an_order_in_error_once(make_system, monkeypatch):
    system = make_system()
    order, other = make_order(41), make_order(42)
    submit_unstarted(system, monkeypatch, [order, other])
    lose_order_row(system, key(order))  # every attempt now fails reading it (begin_attempt)
    system.run(200)
    record = system.state(order.order_id)
    assert (record.process_state, record.attempt, record.failure_count) == \
        (ProcessState.ERROR, 3, 3)

    listed = ops_json(system, "list", "error")
    assert [o["orderId"] for o in listed["orders"]] == [key(order)]
    assert [o["orderId"] for o in ops_json(system, "list", "error", "--client", "acme")[
        "orders"]] == [key(order)]
    assert ops_json(system, "list", "error", "--client", "globex")["orders"] == []
    assert ops_json(system, "list", "stuck")["orders"] == []

    report = ops_json(system, "show", order.order_id, "--client", "acme",
                      "--host-url", system.host.base_url)
    assert report["record"]["processState"] == "Error" and report["order"] is None
    attempts = report["attempts"]
    assert [a["instanceId"] for a in attempts] == [f"{key(order)}:{n}" for n in (1, 2, 3)]
    for attempt in attempts:
        assert attempt["status"]["runtimeStatus"] == "Failed", attempt
        events = attempt["status"]["historyEvents"]
        assert [e["FunctionName"] for e in events if e["EventType"] == "TaskFailed"] == \
            ["begin_attempt"]

    # The operator restores the row (under the order's key, as submission stored it).
    system.services.stores.orders.create_if_absent(Order.of_client(order, key(order)))
    first = ops(system, "resubmit", key(order), "--by", "alice", "--reason", "row restored")
    assert first.exit_code == 0, first.output
    assert f"attempt 4 ({key(order)}:4)" in words(first)
    second = ops(system, "resubmit", order.order_id, "--client", "acme")
    assert second.exit_code == 1 and "Pending, not Error" in words(second)

    system.run(30)
    record = system.state(order.order_id)
    assert (record.process_state, record.attempt, record.locked_by, record.failure_count) == \
        (ProcessState.PROCESSED, 4, f"{key(order)}:4", 0)
    assert system.host.taskhub.get_instance(f"{key(order)}:5") is None
    assert len(system.effects(kind="charge", order_id=order.order_id)) == 1
    third = ops(system, "resubmit", key(order))
    assert third.exit_code == 1 and "Processed, not Error" in words(third)

    report = ops_json(system, "show", key(order), "--host-url", system.host.base_url)
    assert [a["status"]["runtimeStatus"] for a in report["attempts"]] == \
        ["Failed", "Failed", "Failed", "Completed"]
    tables = ops(system, "show", key(order), "--host-url", system.host.base_url)
    assert tables.exit_code == 0 and "TaskFailed" in tables.stdout
    assert "begin_attempt" in tables.stdout
    statuses = [m["status"] for m in system.replies() if m["orderId"] == order.order_id]
    assert statuses[0] == "RequestReceived" and statuses[-1] == "OrderCompleted"


def test_ops_summary_endpoint_counts_equal_a_direct_count_over_the_state_store(make_system,
                                                                               monkeypatch):
    declined, stuck_one = make_order(51), make_order(52)
    system = make_system(faults={"payment": {
        "decline": {key(declined): {"status": 402, "reason": "card_declined"}},
        "black_hole_order_ids": [key(stuck_one)]}},
        settings={"MAX_IN_FLIGHT": "40", "AGENT_CALL_TIMEOUT_S": "0.2"})
    for order in [declined, stuck_one, *(make_order(n) for n in range(60, 70))]:
        system.submit(order)
    system.engine.send("orders", b"{not json", message_id="poison")
    system.run(45)  # the black-holed order's attempt 1 has missed its CompleteBy by now
    forgotten = system.services.stores.states.create_if_absent(
        StateRecord.new("FORGOTTEN", "replies-acme", system.clock.now() - timedelta(days=3))).record
    system.services.stores.states.replace(forgotten.model_copy(update={
        "process_state": ProcessState.PROCESSING, "locked_by": "FORGOTTEN:1", "attempt": 1,
        "complete_by": system.clock.now() - timedelta(days=2)}))  # outside the supervisor's window
    submit_unstarted(system, monkeypatch, [make_order(n) for n in range(70, 75)])

    url = f"{system.host.base_url}/api/ops/summary"
    unknown = httpx.get(url, params={"foo": "1"}, timeout=30)
    assert unknown.status_code == 400 and "unknown query parameter 'foo'" in unknown.json()["error"]
    malformed = httpx.get(url, params={"deadLetters": "maybe"}, timeout=30)
    assert malformed.status_code == 400 and "true or false" in malformed.json()["error"]
    summary = httpx.get(url, timeout=30).json()
    expected, stuck = direct_counts(system)
    assert {k: v for k, v in summary["counts"].items() if v} == dict(expected)
    assert summary["total"] == sum(expected.values()) == 18
    in_flight = sum(expected[s] for s in ("Pending", "Processing", "Compensating"))
    assert summary["inFlight"] == in_flight and in_flight >= 5
    assert summary["maxInFlight"] == 40
    assert summary["stuck"] == stuck >= 1
    assert summary["deadLetters"]["orders"] == 1  # the shared queue: UseClientQueue
    assert set(summary["deadLetters"]) >= {"payment-requests", "agent-replies",
                                           "orders-acme", "orders-globex"}
    assert summary["retryBudget"]["maxCallsPerService"]["payment"] <= \
        summary["retryBudget"]["budget"]

    stuck_list = ops_json(system, "list", "stuck")["orders"]
    assert "FORGOTTEN" in [o["orderId"] for o in stuck_list]
    cli = ops_json(system, "summary")
    assert cli["counts"] == summary["counts"] and cli["inFlight"] == summary["inFlight"]
    table = ops(system, "summary")
    assert table.exit_code == 0 and "MAX_IN_FLIGHT" in table.stdout


def test_show_lists_the_compensation_log_details_only_on_request(make_system):
    system, declined = declined_order(make_system, 53, 20)
    assert system.state(declined.order_id).process_state == ProcessState.COMPENSATED
    report = ops_json(system, "show", key(declined), "--host-url", system.host.base_url)
    steps = [e["step"] for e in report["compensation"]]
    assert steps == ["reserve_inventory", "charge_requested", "refund", "release_inventory"]
    assert all("details" not in e for e in report["compensation"])
    ids = [a["instanceId"] for a in report["attempts"]]
    assert ids == [f"{key(declined)}:1", f"{key(declined)}:comp:1"]
    assert [a["status"]["runtimeStatus"] for a in report["attempts"]] == ["Completed"] * 2
    detailed = ops_json(system, "show", key(declined), "--no-history", "--details")
    assert detailed["compensation"][0]["details"]["reservationId"]


def test_ops_alerts_lists_the_newest_first(make_system):
    system = make_system()
    for n in range(40):
        system.engine.send("operator-alerts", json.dumps({
            "schemaVersion": 1, "kind": "OrderError", "reason": f"alert {n}",
            "at": "2030-01-01T00:00:00Z"}).encode(), message_id=f"a-{n}")
    answer = ops(system, "alerts", "--limit", "3", "--json")
    assert answer.exit_code == 0, answer.output
    assert [a["reason"] for a in json.loads(answer.stdout)] == ["alert 39", "alert 38",
                                                                "alert 37"]
    assert ops(system, "alerts", "--limit", "0").exit_code == 2
