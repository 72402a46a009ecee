"""The simulator serves what infra/services.json declares, and refuses unknown services."""

import pytest

from azurekit.services import catalogue
from simulator.config import FaultUpdate, SimulatorConfig

pytestmark = pytest.mark.anyio

ORDER = {"orderId": "o-1", "amount": "5.00", "currency": "EUR"}


async def test_each_service_answers_under_its_own_prefix_and_only_there(make_client):
    client = make_client()
    ok = await client.post("/payment/payments", json=ORDER, headers={"Idempotency-Key": "k1"})
    wrong = await client.post("/shipping/payments", json=ORDER,
                              headers={"Idempotency-Key": "k2"})
    assert (ok.status_code, wrong.status_code) == (201, 404)


async def test_every_catalogue_operation_has_a_route(make_client):
    client = make_client()
    for name, spec in catalogue().services.items():
        for op in spec.operations.values():
            answer = await client.post(f"/{name}{op.path}", json={},
                                       headers={"Idempotency-Key": "k"})
            assert answer.status_code == 400, (name, op.path)  # reached, body refused


async def test_faults_for_an_unknown_service_are_refused_naming_it(make_client):
    client = make_client()
    answer = await client.post("/_admin/faults", json={"telepathy": {"latency_s": 1}})
    assert answer.status_code == 400
    assert "telepathy: not a service of services.json" in answer.json()["message"]


def test_the_knobs_of_an_unknown_service_are_an_error_not_another_services():
    with pytest.raises(KeyError, match="'telepathy' is not a simulated service"):
        SimulatorConfig().for_service("telepathy")


def test_an_update_of_one_service_leaves_the_other():
    config = SimulatorConfig().updated(FaultUpdate.model_validate(
        {"shipping": {"latency_s": 2}}), now=None)  # type: ignore[arg-type]
    assert config.for_service("shipping").latency_s == 2
    assert config.for_service("payment").latency_s == 0


def test_an_unknown_order_fault_operation_is_refused():
    with pytest.raises(ValueError, match="'chrage' is not an operation"):
        FaultUpdate.model_validate({"payment": {"order_fault_operations": ["chrage"]}})
