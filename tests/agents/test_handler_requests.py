"""What the agent sends: fixed paths, identifiers in the body, the service's error code."""

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from agents.handler import ENDPOINTS, service_url
from azurekit.services import UnknownServiceError
from orders.models.messages import AgentRequest
from orders.settings import Settings

SETTINGS = Settings(DEVHOST_DATA_DIR=".", PAYMENT_API_URL="http://pay.test/v1/",
                    SHIPPING_API_URL="http://ship.test")


def request(order_key, operation, service):
    return AgentRequest(message_id=f"{order_key}:1:{operation}", order_key=order_key,
                        instance_id=f"{order_key}:1", service=service, operation=operation,
                        idempotency_key=f"{order_key}:{operation}",
                        complete_by=datetime(2030, 1, 1, tzinfo=UTC), max_attempts=2,
                        event_name=f"{operation}-reply", payload={"orderId": order_key})


@pytest.mark.parametrize(("operation", "service", "expected"), [
    ("charge", "payment", "http://pay.test/v1/payments"),
    ("refund", "payment", "http://pay.test/v1/payments/refunds"),
    ("ship", "shipping", "http://ship.test/shipments"),
    ("cancel_shipment", "shipping", "http://ship.test/shipments/cancellations"),
])
@pytest.mark.parametrize("order_key", ["..a", "a..b", "a.", "-", "ORD-1"])
def test_no_identifier_ever_reaches_the_url(operation, service, expected, order_key):
    url = service_url(SimpleNamespace(settings=SETTINGS), request(order_key, operation, service))
    assert url == expected


def test_every_operation_has_a_fixed_path():
    assert all("{" not in path for _, path in ENDPOINTS.values())


def test_each_service_gets_its_own_url_setting_never_another_services():
    swapped = Settings(DEVHOST_DATA_DIR=".", PAYMENT_API_URL="http://ship.test",
                       SHIPPING_API_URL="http://pay.test")
    url = service_url(SimpleNamespace(settings=swapped), request("o", "charge", "payment"))
    assert url == "http://ship.test/payments"


def test_an_operation_of_another_service_is_an_error_naming_it():
    bad = request("o", "charge", "payment").model_copy(update={"service": "shipping"})
    with pytest.raises(UnknownServiceError, match="'charge' is not an operation"):
        service_url(SimpleNamespace(settings=SETTINGS), bad)


def test_an_unknown_service_is_an_error_naming_it_not_a_fallback():
    bad = request("o", "charge", "payment").model_copy(update={"service": "telepathy"})
    with pytest.raises(UnknownServiceError, match="service: 'telepathy' is not a service"):
        service_url(SimpleNamespace(settings=SETTINGS), bad)
