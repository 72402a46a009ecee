"""The black hole is only visible through a real client timeout, so these tests run the
simulator under uvicorn on a free loopback port."""

import httpx
import pytest

from clocks import ManualClock
from simulator import Ledger, ServiceFaults, SimulatorConfig, create_app, serve_in_thread

CLIENT_TIMEOUT_S = 0.5
"""How long a black-holed request is waited for; an answered one gets :data:`ANSWER_WAIT_S`."""
ANSWER_WAIT_S = 30.0
"""A request that is to be answered: a loaded machine may take longer than 0.5 s for it."""
CHARGE = {"orderId": "order-1", "amount": "10.00", "currency": "EUR"}


def _post_charge(client: httpx.Client, key: str) -> httpx.Response:
    return client.post("/payments", json=CHARGE, headers={"Idempotency-Key": key})


@pytest.mark.parametrize("performs_effect", [False, True])
def test_black_hole_never_answers_and_a_retry_after_n_gets_through(tmp_path, performs_effect):
    ledger_path = tmp_path / "ledger.sqlite"
    faults = ServiceFaults(
        black_hole_order_ids=["order-1"], black_hole_first_n=1,
        black_hole_performs_effect=performs_effect,
    )
    app = create_app(SimulatorConfig(payment=faults), ManualClock(), ledger_path)
    with (
        serve_in_thread(app) as base_url,
        httpx.Client(base_url=base_url, timeout=CLIENT_TIMEOUT_S) as client,
        Ledger(ledger_path) as ledger,
    ):
        with pytest.raises(httpx.ReadTimeout):
            _post_charge(client, "order-1:charge")
        performed = ledger.side_effects()
        assert len(performed) == (1 if performs_effect else 0)

        retry = client.post("/payments", json=CHARGE, timeout=ANSWER_WAIT_S,
                            headers={"Idempotency-Key": "order-1:charge"})
        assert retry.status_code == 201
        assert (retry.headers.get("Idempotent-Replayed") == "true") is performs_effect
        [effect] = ledger.side_effects()
        assert effect.resource_id == retry.json()["paymentId"]
        assert ledger.request_count("payment", "order-1") == 2


def test_black_hole_without_limit_holds_every_request(tmp_path):
    ledger_path = tmp_path / "ledger.sqlite"
    faults = ServiceFaults(black_hole_order_ids=["order-1"])
    app = create_app(SimulatorConfig(shipping=faults), ManualClock(), ledger_path)
    body = {"orderId": "order-1", "lines": [{"sku": "A", "quantity": 1}]}
    with (
        serve_in_thread(app) as base_url,
        httpx.Client(base_url=base_url, timeout=CLIENT_TIMEOUT_S) as client,
        Ledger(ledger_path) as ledger,
    ):
        for _ in range(2):
            with pytest.raises(httpx.ReadTimeout):
                client.post("/shipments", json=body, headers={"Idempotency-Key": "k"})
        assert client.post("/payments", json=CHARGE, timeout=ANSWER_WAIT_S,
                           headers={"Idempotency-Key": "p"}).status_code == 201
        assert ledger.side_effects(service="shipping") == []
        assert ledger.request_count("shipping", "order-1") == 2
