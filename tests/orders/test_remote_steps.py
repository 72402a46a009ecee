"""Remote steps: the request each builds (the wire shape in-flight orders replay), its undo."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from azurekit.services import UnknownServiceError
from orders.models import Order, OrderLine, Step
from orders.remote_steps import WORKFLOW_STEPS, RemoteStep

ORDER = Order(order_key="acme~ORD-1", customer_id="C-1", currency="EUR",
              lines=(OrderLine(sku="SKU-1", quantity=2, unit_price=Decimal("5.00")),),
              total_price=Decimal("10.00"), created_at=datetime(2030, 1, 1, tzinfo=UTC))
DEADLINE = datetime(2030, 1, 1, 0, 1, tzinfo=UTC)


def test_a_charge_request_keeps_the_ids_and_payload_histories_recorded():
    request = RemoteStep("payment", "charge").request("acme~ORD-1:1", ORDER, DEADLINE, 3)
    assert (request.message_id, request.idempotency_key, request.event_name) == (
        "acme~ORD-1:1:charge", "acme~ORD-1:charge", "charge-reply")
    assert request.payload == {"orderId": "acme~ORD-1", "amount": "10.00", "currency": "EUR"}
    assert (request.service, request.max_attempts, request.complete_by) == ("payment", 3,
                                                                            DEADLINE)


@pytest.mark.parametrize("written, currency, sent", [
    ("2E+1", "USD", "20"), ("2.000E+1", "USD", "20.00"), ("20.00", "USD", "20.00"),
    ("20", "USD", "20"), ("1E+6", "JPY", "1000000"), ("20.5", "BHD", "20.5")])
def test_a_charge_is_sent_in_fixed_point_with_the_digits_as_written(written, currency, sent):
    order = ORDER.model_copy(update={"total_price": Decimal(written), "currency": currency})
    request = RemoteStep("payment", "charge").request("acme~ORD-1:1", order, DEADLINE, 3)
    assert request.payload["amount"] == sent


def test_a_ship_request_carries_the_lines():
    request = RemoteStep("shipping", "ship").request("i", ORDER, DEADLINE, 1)
    assert request.payload == {"orderId": "acme~ORD-1",
                               "lines": [{"sku": "SKU-1", "quantity": 2}]}


def test_each_step_knows_its_undo_and_log_entry():
    assert (RemoteStep("payment", "charge").undo, RemoteStep("payment", "charge").log_step) \
        == ("refund", Step.CHARGE)
    assert RemoteStep("shipping", "ship").undo == "cancel_shipment"


def test_the_versions_run_their_steps_in_order():
    assert [s.operation for s in WORKFLOW_STEPS[1]] == ["charge", "ship"]
    assert [s.operation for s in WORKFLOW_STEPS[2]] == ["ship", "charge"]


@pytest.mark.parametrize(("service", "operation", "message"), [
    ("payment", "ship", "'ship' is not a forward operation"),
    ("payment", "refund", "'refund' is not a forward operation"),
    ("telepathy", "guess", "service: 'telepathy' is not a service"),
])
def test_an_unknown_or_undo_operation_is_not_a_step(service, operation, message):
    with pytest.raises(UnknownServiceError, match=message):
        RemoteStep(service, operation)
