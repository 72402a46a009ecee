import asyncio

import anyio
import pytest

from simulator import Ledger
from simulator.config import FaultUpdate

from .helpers import charge, ship

pytestmark = pytest.mark.anyio


async def test_charge_answers_201_and_records_one_side_effect(make_client, ledger_path):
    client = make_client()
    response = await charge(client, "order-1", "order-1:charge", amount="12.50")
    assert response.status_code == 201
    body = response.json()
    assert body["orderId"] == "order-1"
    assert body["amount"] == "12.50"
    assert body["currency"] == "EUR"
    assert body["status"] == "captured"
    assert body["paymentId"].startswith("pay_")
    assert "Idempotent-Replayed" not in response.headers
    with Ledger(ledger_path) as ledger:
        [effect] = ledger.side_effects()
    assert (effect.service, effect.kind, effect.order_key) == ("payment", "charge", "order-1")
    assert effect.idempotency_key == "order-1:charge"
    assert (effect.amount, effect.currency) == ("12.50", "EUR")
    assert effect.resource_id == body["paymentId"]


async def test_same_key_replays_stored_answer_without_second_side_effect(make_client, ledger_path):
    client = make_client()
    first = await charge(client, "order-1", "k-1")
    second = await charge(client, "order-1", "k-1")
    assert second.status_code == 201
    assert second.json() == first.json()
    assert second.headers["Idempotent-Replayed"] == "true"
    with Ledger(ledger_path) as ledger:
        assert ledger.effect_counts() == {("payment", "charge", "order-1"): 1}
        assert ledger.request_count("payment", "order-1") == 2


async def test_same_key_with_different_body_is_refused_with_422(make_client, ledger_path):
    client = make_client()
    assert (await charge(client, "order-1", "k-1", amount="10.00")).status_code == 201
    reused = await charge(client, "order-1", "k-1", amount="99.00")
    assert reused.status_code == 422
    assert reused.json()["error"] == "idempotency_key_reused"
    with Ledger(ledger_path) as ledger:
        assert [e.amount for e in ledger.side_effects()] == ["10.00"]


async def test_same_key_on_another_endpoint_is_refused_with_422(make_client):
    client = make_client()
    assert (await charge(client, "order-1", "k-1")).status_code == 201
    refund = await undo(client, "/payments/refunds", "order-1", "k-1", chargeKey="k-1")
    assert refund.status_code == 422


async def test_keys_are_scoped_per_service(make_client, ledger_path):
    client = make_client()
    assert (await charge(client, "order-1", "shared-key")).status_code == 201
    assert (await ship(client, "order-1", "shared-key")).status_code == 201
    with Ledger(ledger_path) as ledger:
        assert ledger.effect_counts() == {
            ("payment", "charge", "order-1"): 1, ("shipping", "ship", "order-1"): 1,
        }


async def test_different_keys_for_one_order_charge_twice_and_the_ledger_shows_it(
    make_client, ledger_path
):
    client = make_client()
    await charge(client, "order-1", "k-1")
    await charge(client, "order-1", "k-2")
    with Ledger(ledger_path) as ledger:
        assert ledger.effect_counts() == {("payment", "charge", "order-1"): 2}


@pytest.mark.parametrize("headers", [{}, {"Idempotency-Key": "  "}, {"Idempotency-Key": "x" * 256}])
async def test_missing_or_invalid_key_answers_400_without_side_effect(
    make_client, ledger_path, headers
):
    client = make_client()
    response = await client.post(
        "/payments", json={"orderId": "order-1", "amount": "1", "currency": "EUR"}, headers=headers
    )
    assert response.status_code == 400
    assert "Idempotency-Key" in response.json()["message"]
    with Ledger(ledger_path) as ledger:
        assert ledger.side_effects() == []
        assert ledger.request_count("payment", "order-1", "charge") == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"orderId": "order-1", "amount": "-5", "currency": "EUR"}, "amount"),
        ({"orderId": "order-1", "amount": "5", "currency": "eur"}, "currency"),
        ({"amount": "5", "currency": "EUR"}, "orderId"),
    ],
)
async def test_invalid_charge_body_answers_400_naming_the_field(make_client, body, field):
    client = make_client()
    response = await client.post("/payments", json=body, headers={"Idempotency-Key": "k"})
    assert response.status_code == 400
    assert response.json()["message"].startswith(field)


async def test_invalid_json_and_empty_shipment_lines_answer_400(make_client):
    client = make_client()
    bad_json = await client.post(
        "/payments", content=b"{not json", headers={"Idempotency-Key": "k"}
    )
    assert bad_json.status_code == 400
    assert bad_json.json()["error"] == "invalid_body"
    no_lines = await client.post(
        "/shipments", json={"orderId": "order-1", "lines": []}, headers={"Idempotency-Key": "k"}
    )
    assert no_lines.status_code == 400
    assert no_lines.json()["message"].startswith("lines")


async def undo(client, path, order_key, key, **body):
    return await client.post(path, json={"orderId": order_key, **body},
                             headers={"Idempotency-Key": key})


async def test_refund_flow(make_client, ledger_path):
    client = make_client()
    missing = await undo(client, "/payments/refunds", "order-1", "r-0", chargeKey="c-0")
    assert missing.status_code == 409
    assert missing.json()["error"] == "nothing_to_undo"
    paid = (await charge(client, "order-1", "c-1", amount="30.00")).json()
    other = await undo(client, "/payments/refunds", "order-1", "r-9", chargeKey="c-other")
    assert (other.status_code, other.json()["error"]) == (409, "nothing_to_undo")
    refund = await undo(client, "/payments/refunds", "order-1", "r-1", chargeKey="c-1")
    assert refund.status_code == 200
    assert refund.json()["status"] == "refunded"
    assert refund.json()["paymentId"] == paid["paymentId"]
    assert refund.json()["amount"] == "30.00"
    replay = await undo(client, "/payments/refunds", "order-1", "r-1", chargeKey="c-1")
    assert replay.json() == refund.json()
    assert replay.headers["Idempotent-Replayed"] == "true"
    again = await undo(client, "/payments/refunds", "order-1", "r-2", chargeKey="c-1")
    assert again.status_code == 409
    assert again.json()["error"] == "already_undone"
    with Ledger(ledger_path) as ledger:
        [row] = ledger.side_effects(kind="refund")
        assert (row.ref_id, row.amount, row.idempotency_key) == (paid["paymentId"], "30.00", "r-1")


async def test_refund_without_charge_key_refunds_the_latest_open_charge(make_client, ledger_path):
    # Requests of callers that predate chargeKey still work (X6).
    client = make_client()
    paid = (await charge(client, "order-1", "c-1", amount="12.00")).json()
    refund = await undo(client, "/payments/refunds", "order-1", "r-1")
    assert (refund.status_code, refund.json()["paymentId"]) == (200, paid["paymentId"])


async def test_shipment_and_cancel_flow(make_client, ledger_path):
    client = make_client()
    missing = await undo(client, "/shipments/cancellations", "order-1", "x-0", shipmentKey="s-0")
    assert (missing.status_code, missing.json()["error"]) == (409, "nothing_to_undo")
    created = await ship(client, "order-1", "s-1")
    assert created.status_code == 201
    shipment_id = created.json()["shipmentId"]
    cancel = await undo(client, "/shipments/cancellations", "order-1", "x-1", shipmentKey="s-1")
    assert cancel.status_code == 200
    assert cancel.json() == {"shipmentId": shipment_id, "orderId": "order-1", "status": "cancelled"}
    again = await undo(client, "/shipments/cancellations", "order-1", "x-2", shipmentKey="s-1")
    assert (again.status_code, again.json()["error"]) == (409, "already_undone")
    with Ledger(ledger_path) as ledger:
        assert ledger.effect_counts() == {
            ("shipping", "ship", "order-1"): 1, ("shipping", "cancel", "order-1"): 1,
        }


async def test_identifiers_never_steer_the_path(make_client, ledger_path):
    # An OrderID made of dots travels in the body: the request reaches its own endpoint.
    client = make_client()
    assert (await charge(client, "..", "c-1", amount="5.00")).status_code == 201
    refund = await undo(client, "/payments/refunds", "..", "r-1", chargeKey="c-1")
    assert refund.status_code == 200
    with Ledger(ledger_path) as ledger:
        assert ledger.effect_counts() == {("payment", "charge", ".."): 1,
                                          ("payment", "refund", ".."): 1}


async def test_concurrent_requests_with_one_key_perform_one_side_effect(make_client, ledger_path):
    client = make_client()
    responses = await asyncio.gather(*(charge(client, "order-1", "k-1") for _ in range(20)))
    assert {r.status_code for r in responses} == {201}
    assert len({r.json()["paymentId"] for r in responses}) == 1
    with Ledger(ledger_path) as ledger:
        assert ledger.effect_counts() == {("payment", "charge", "order-1"): 1}
        assert ledger.request_count("payment", "order-1") == 20


async def test_nothing_to_undo_voids_the_forward_request_so_a_late_one_does_nothing(
        make_client, ledger_path):
    # The charge is still on its way inside the service (latency) when compensation asks
    # for the refund: "nothing to undo" must stay true once it has been answered.
    arrived, release = anyio.Event(), anyio.Event()
    answers = {}

    async def held_sleep(seconds):
        arrived.set()
        await release.wait()

    client = make_client(FaultUpdate.model_validate({"payment": {"latency_s": 5}}),
                         sleep=held_sleep)
    plain = make_client()  # the same ledger, without the latency: the undo's path

    async def late_charge():
        answers["late"] = await charge(client, "order-1", "order-1:charge", amount="20.00")

    async with anyio.create_task_group() as group:
        group.start_soon(late_charge)
        await arrived.wait()
        answers["undo"] = await undo(plain, "/payments/refunds", "order-1", "order-1:refund",
                                     chargeKey="order-1:charge")
        release.set()
    assert (answers["undo"].status_code, answers["undo"].json()["error"]) == (
        409, "nothing_to_undo")
    assert (answers["late"].status_code, answers["late"].json()["error"]) == (409, "voided")
    again = await charge(plain, "order-1", "order-1:charge", amount="20.00")
    assert again.status_code == 409  # a retry of the voided request is refused too
    with Ledger(ledger_path) as ledger:
        assert ledger.side_effects() == []


async def test_an_undo_with_something_to_undo_voids_nothing(make_client, ledger_path):
    client = make_client()
    assert (await charge(client, "order-1", "c-1", amount="7.00")).status_code == 201
    assert (await undo(client, "/payments/refunds", "order-1", "r-1",
                       chargeKey="c-1")).status_code == 200
    replay = await charge(client, "order-1", "c-1", amount="7.00")
    assert replay.status_code == 201 and replay.headers["Idempotent-Replayed"] == "true"
