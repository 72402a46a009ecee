"""Log steps and undo payloads derive from services.json, unchanged on the wire (S9, X6).

``stored_log.json`` was written by the code before the derivation: entries as the log
stored them, the undo requests, *requested* and step details built from them.
"""

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Literal

import pytest
from pydantic import ValidationError

from azurekit.services import DEFAULT_SERVICES_FILE, UnknownServiceError, parse_services
from orders.compensation.plan import pending_undos, request_details, step_details, undo_request
from orders.models import CompensationEntry, Order, OrderLine, Step, UndoOutcome, agent_io
from orders.models import compensation as log
from orders.remote_steps import RemoteStep

STORED = json.loads((Path(__file__).parent / "stored_log.json").read_text())
NOW = datetime(2030, 1, 1, tzinfo=UTC)
DEADLINE = NOW + timedelta(seconds=30)
KEY = "acme~ORD-1"


def stored_entries():
    return [CompensationEntry.model_validate_json(body) for body in STORED["entries"]]


@pytest.mark.parametrize("body", STORED["entries"], ids=lambda b: json.loads(b)["details"]["step"]
                         + ("-" + json.loads(b)["details"].get("outcome", "")))
def test_a_stored_entry_loads_and_dumps_byte_identically(body):
    entry = CompensationEntry.model_validate_json(body)
    assert entry.model_dump_json() == body  # the SQLite log's body
    assert entry.model_dump(mode="json") == json.loads(body)  # the Cosmos DB document
    assert CompensationEntry.model_validate(entry.model_dump(mode="json")) == entry


def test_the_undo_of_each_stored_entry_is_the_request_built_before():
    undoable = [e for e in stored_entries() if e.step.value in
                ("charge_requested", "charge", "ship_requested", "ship")]
    built = [undo_request("acme~ORD-1:comp:1", e, DEADLINE, 3).model_dump(mode="json")
             for e in undoable]
    assert built == STORED["undo"]
    assert [b["payload"] for b in built] == [
        {"orderId": KEY, "chargeKey": "acme~ORD-1:charge"},
        {"orderId": KEY, "chargeKey": "acme~ORD-1:charge", "paymentId": "pay_1",
         "amount": "12.50", "currency": "EUR"},
        {"orderId": KEY, "shipmentKey": "acme~ORD-1:ship"},
        {"orderId": KEY, "shipmentKey": "acme~ORD-1:ship", "shipmentId": "shp_1"}]


def test_requests_and_their_requested_details_are_those_built_before():
    order = Order(order_key=KEY, customer_id="C-1", currency="EUR",
                  lines=(OrderLine(sku="SKU-1", quantity=2, unit_price=Decimal("6.25")),),
                  total_price=Decimal("12.50"), created_at=NOW)
    for service, operation in (("payment", "charge"), ("shipping", "ship")):
        request = RemoteStep(service, operation).request("acme~ORD-1:1", order, DEADLINE, 3)
        expected = STORED["requests"][operation]
        assert request.model_dump(mode="json") == expected["request"]
        assert request_details(request) == expected["requestedDetails"]


def test_step_details_are_those_built_before():
    assert {
        "charge": step_details(Step.CHARGE, {"paymentId": "pay_1", "amount": "12.50",
                                             "currency": "EUR", "status": "captured"}),
        "ship": step_details(Step.SHIP, {"shipmentId": "shp_1", "orderId": KEY}),
        "refund": step_details(Step.REFUND, {"refundId": "re_1", "amount": "12.50",
                                             "currency": "EUR"}),
        "refundNothing": step_details(Step.REFUND, None, UndoOutcome.NOTHING_TO_UNDO),
        "cancel_shipment": step_details(Step.CANCEL_SHIPMENT, {"shipmentId": "shp_1"}),
    } == STORED["stepDetails"]


def test_a_version_1_log_gets_the_requested_entries_it_got_before():
    (reserve,) = [e for e in stored_entries() if e.step is Step.RESERVE_INVENTORY]
    legacy = reserve.model_copy(update={"workflow_version": 1, "schema_version": 1})
    assert [e.model_dump(mode="json") for e in pending_undos([legacy])] == \
        STORED["legacyPending"]


def test_the_log_steps_of_todays_services_are_those_logged_before():
    values = [s.value for s in Step]
    assert values[:3] == ["reserve_inventory", "charge", "ship"]
    assert {"release_inventory", "refund", "cancel_shipment", "charge_requested",
            "ship_requested"} <= set(values)
    assert {k.value: v.value for k, v in log.UNDO_STEP.items()}.items() >= {
        "reserve_inventory": "release_inventory", "charge": "refund",
        "ship": "cancel_shipment"}.items()
    assert {k.value: v.value for k, v in log.REQUESTED.items()}.items() >= {
        "charge": "charge_requested", "ship": "ship_requested"}.items()


def with_escrow():
    data = json.loads(DEFAULT_SERVICES_FILE.read_text())
    data["services"]["escrow"] = {
        "requestQueue": "escrow-requests", "urlSetting": "ESCROW_API_URL", "operations": {
            "deposit": {"path": "/deposits", "undo": "return_deposit"},
            "return_deposit": {"path": "/deposits/returns", "undo": None}}}
    return parse_services(data)


def test_a_new_service_with_an_undo_gets_its_log_steps_from_the_catalogue(monkeypatch):
    monkeypatch.setattr(log, "catalogue", with_escrow)
    assert log.remote_undos().items() >= {"charge": "refund", "ship": "cancel_shipment",
                                          "deposit": "return_deposit"}.items()
    steps = log._step_members()
    assert (steps["DEPOSIT"], steps["RETURN_DEPOSIT"], steps["DEPOSIT_REQUESTED"]) == (
        "deposit", "return_deposit", "deposit_requested")
    with pytest.raises(UnknownServiceError, match="step 'deposit' .* has no details class"):
        log.check_log_details(steps.values())


def test_details_for_a_step_the_catalogue_does_not_declare_are_refused(monkeypatch):
    monkeypatch.setattr(log, "_DETAILS", dict(log._DETAILS))

    class ReturnDepositDetails(log.LogDetails):
        step: Literal["return_deposit"] = "return_deposit"

    with pytest.raises(UnknownServiceError, match="ReturnDepositDetails: step 'return_deposit' "
                                                  "is no operation of infra/services.json"):
        log.check_log_details()


def test_an_entry_of_an_unknown_step_is_refused_naming_it():
    body = json.loads(STORED["entries"][4])
    body["details"] = {"step": "teleport", "shipmentId": "shp_1"}
    with pytest.raises(ValidationError, match="details.step: 'teleport' is not a step of the "
                                              "compensation log"):
        CompensationEntry.model_validate(body)


def test_an_undo_without_a_payload_contract_is_an_error_naming_it(monkeypatch):
    monkeypatch.delitem(agent_io.PAYLOADS, "refund")
    with pytest.raises(UnknownServiceError, match="undo 'refund' of 'charge' has no payload"):
        RemoteStep("payment", "charge")


def test_an_undo_payload_field_the_log_does_not_keep_is_an_error_naming_it(monkeypatch):
    class WiderRefund(agent_io.RefundPayload):
        card_token: str | None = None

    monkeypatch.setitem(agent_io.PAYLOADS, "refund", WiderRefund)
    with pytest.raises(UnknownServiceError, match=r"fields \['card_token'\] of undo 'refund'"):
        RemoteStep("payment", "charge")


def test_an_operation_named_like_a_local_step_is_refused_naming_it(monkeypatch):
    data = with_escrow().model_dump(by_alias=True)
    data["services"]["escrow"]["operations"] = {
        "release_inventory": {"path": "/deposits", "undo": "return_deposit"},
        "return_deposit": {"path": "/deposits/returns", "undo": None}}
    monkeypatch.setattr(log, "catalogue", lambda: parse_services(data))
    with pytest.raises(UnknownServiceError, match=r"steps \['release_inventory'\] named twice"):
        log._step_members()
