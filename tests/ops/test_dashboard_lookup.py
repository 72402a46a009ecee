"""The dashboard's order lookup, its lists of compensated orders and its alerts' links (S7, S9).

Against the real app under the local host: two orders whose shipment is declined after
payment, so both are compensated (refund, release) and each raised an ``OrderError``
alert, and one plain order. The lookup by client and OrderID answers what
``python -m opscli show`` reports, with the same redaction; the overview lists the
compensated orders newest first and each alert names its order for the page's link.
"""

import re

import pytest

from ops.order_report import order_report
from tests.e2e.harness import ProcessState, key, make_order
from tests.ops.test_dashboard_api import get, values_of

SHIP_DECLINE = {"status": 422, "reason": "address_undeliverable"}
FIRST, SECOND, PLAIN = make_order(41), make_order(43), make_order(1)


@pytest.fixture(scope="module")
def system(tmp_path_factory):
    from clocks import ManualClock
    from tests.e2e.harness import System

    monkeypatch = pytest.MonkeyPatch()
    system = System(tmp_path_factory.mktemp("lookup"), ManualClock(), monkeypatch, faults={
        "shipping": {"decline": {key(FIRST): SHIP_DECLINE, key(SECOND): SHIP_DECLINE}}})
    for order in (PLAIN, FIRST, SECOND):
        system.submit(order)
        system.run(20)
    assert [system.state(o.order_id).process_state for o in (PLAIN, FIRST, SECOND)] == [
        ProcessState.PROCESSED, ProcessState.COMPENSATED, ProcessState.COMPENSATED]
    yield system
    system.close()
    monkeypatch.undo()


def test_the_lookup_by_client_and_order_id_shows_state_trace_and_compensation_log(system):
    answer = get(system, "/api/order", client="acme", orderId=FIRST.order_id)
    assert answer.status_code == 200, answer.text
    shown = answer.json()
    assert shown["record"]["processState"] == "Compensated"
    assert [(e["seq"], e["step"]) for e in shown["compensation"]] == [
        (1, "reserve_inventory"), (2, "charge_requested"), (3, "charge"),
        (4, "ship_requested"), (5, "cancel_shipment"), (6, "refund"),
        (7, "release_inventory")]
    assert [a["instanceId"] for a in shown["attempts"]] == [f"{key(FIRST)}:1",
                                                             f"{key(FIRST)}:comp:1"]
    assert all(a["timeline"] for a in shown["attempts"])
    trace = shown["trace"]
    assert re.fullmatch("[0-9a-f]{32}", trace["traceId"])
    assert trace["traceParent"] == system.state(FIRST.order_id).trace_parent
    data_dir = system.services.settings.DEVHOST_DATA_DIR  # where the traces are
    assert trace["command"] == (f"python -m opscli --data-dir {data_dir} trace "
                                f"{FIRST.order_id} --client acme")
    # The same compensation log and record as the operator CLI's report.
    cli = order_report(system.services, key(FIRST))
    assert (shown["compensation"], shown["record"]) == (cli["compensation"], cli["record"])


def test_the_lookup_withholds_the_compensation_logs_classified_data_unless_asked(system):
    charge, = system.effects(kind="charge", order_id=FIRST.order_id)
    refund, = system.effects(kind="refund", order_id=FIRST.order_id)
    shown = get(system, "/api/order", client="acme", orderId=FIRST.order_id).json()
    assert all("details" not in entry for entry in shown["compensation"])
    text = str(shown["compensation"]) + str([a["timeline"] for a in shown["attempts"]])
    assert charge.resource_id not in text and refund.resource_id not in text
    assert set(values_of(shown["attempts"], {"paymentId", "amount"})) == {"<Restricted>"}
    asked = get(system, "/api/order", client="acme", orderId=FIRST.order_id,
                details="true").json()
    by_step = {entry["details"]["step"]: entry["details"] for entry in asked["compensation"]}
    assert (by_step["charge"]["paymentId"], by_step["charge"]["amount"]) == (
        charge.resource_id, charge.amount)
    assert by_step["refund"]["refundId"] == refund.resource_id


@pytest.mark.parametrize("params, status, says", [
    ({"client": "acme", "orderId": "ORD-77777"}, 404,
     "no order acme~ORD-77777: no state record and no order"),
    ({"client": "globex", "orderId": FIRST.order_id}, 404, f"no order globex~{FIRST.order_id}"),
    ({"client": "Acme!", "orderId": FIRST.order_id}, 400, "'client': must be 1 to 20"),
    ({"client": "acme", "orderId": "ORD 41"}, 400, "'orderId': must be 1 to 64 characters"),
    ({"client": "acme"}, 400, "query parameter 'orderId' is required"),
    ({"client": "acme", "orderId": ""}, 400, "query parameter 'orderId': must be 1 to 200"),
    ({"client": "acme", "orderId": FIRST.order_id, "details": "1"}, 400,
     "query parameter 'details': must be true or false"),
])
def test_the_lookup_answers_an_unknown_order_404_and_bad_input_400_naming_the_field(
        system, params, status, says):
    answer = get(system, "/api/order", **params)
    assert answer.status_code == status and says in answer.json()["error"], answer.text


def test_the_overview_lists_compensated_orders_newest_first(system):
    overview = get(system, "/api/overview", limit="1").json()
    compensated = overview["compensations"]["Compensated"]
    assert [r["orderId"] for r in compensated["orders"]] == [key(SECOND)]
    assert compensated["more"] is True
    full = get(system, "/api/overview").json()["compensations"]
    assert [r["orderId"] for r in full["Compensated"]["orders"]] == [key(SECOND), key(FIRST)]
    assert full["CompensationFailed"] == {"orders": [], "more": False}


def test_each_alert_names_the_order_it_is_about(system):
    alerts = get(system, "/api/overview").json()["messaging"]["alerts"]
    (row,) = [a for a in alerts if a["body"]["kind"] == "OrderError"]
    # One OrderError alert per client and 10 minutes (collapsed at the source): the first
    # order's, which says further ones raise no new alert.
    assert row["count"] == 1
    assert row["order"] == {"key": key(FIRST), "client": "acme", "orderId": FIRST.order_id}
    assert "raise no new alert" in row["body"]["reason"]
