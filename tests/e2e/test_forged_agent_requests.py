"""A well-formed request put on a request queue for an order no attempt holds is never
carried out (S4 fencing at the agents): the agent replies without calling the service. One
naming the attempt that holds its order, but another order in its payload or a fresh
idempotency key, is dead-lettered: the service would act on it (A2)."""

import json
from datetime import timedelta

from tests.e2e.harness import ProcessState, key, make_order

SHIP_DECLINE = {"status": 422, "reason": "address_undeliverable"}
ONE_TRY = {"AGENT_CALL_TIMEOUT_S": "10"}
"""The harness's 0.5 s try timeout, outlived by a charge on a loaded machine, would retry it
and count two requests: the requests counted here are to be the order's own one charge."""


def forged_charge(system, order, instance_id: str, *, payload_order=None,
                  idempotency_key: str | None = None) -> bytes:
    k = key(order)
    complete_by = system.clock.now() + timedelta(minutes=5)
    return json.dumps({
        "schemaVersion": 1, "messageId": f"{instance_id}:charge:forged", "orderId": k,
        "instanceId": instance_id, "service": "payment", "operation": "charge",
        "idempotencyKey": idempotency_key or f"{k}:charge",
        "completeBy": complete_by.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "maxAttempts": 2,
        "eventName": "charge-reply",
        "payload": {"orderId": key(payload_order or order), "amount": str(order.total_price),
                    "currency": "USD"},
    }).encode()


def test_a_forged_charge_for_a_compensated_order_charges_nothing(make_system):
    order = make_order(47)
    system = make_system(faults={"shipping": {"decline": {key(order): SHIP_DECLINE}}},
                         settings=ONE_TRY)
    system.submit(order)
    system.run(20)
    assert system.state(order.order_id).process_state is ProcessState.COMPENSATED
    calls = system.ledger.request_count("payment", key(order), "charge")
    for n, instance in enumerate((f"{key(order)}:2", f"{key(order)}:comp:1")):
        system.engine.send("payment-requests", forged_charge(system, order, instance),
                           message_id=f"forged-{n}")
        system.run(5)
    assert system.ledger.request_count("payment", key(order), "charge") == calls == 1
    assert len(system.effects(kind="charge", order_id=order.order_id)) == 1
    counts = system.engine.counts("payment-requests")
    assert (counts.active, counts.dead_letter) == (0, 0)
    assert system.state(order.order_id).process_state is ProcessState.COMPENSATED


def test_a_forged_charge_naming_the_live_holder_is_dead_lettered_and_charges_nothing(
        make_system):
    held, done = make_order(48), make_order(49)
    system = make_system(settings=ONE_TRY)
    system.submit(done)
    system.run(20)
    with system.paused("shipping-requests"):  # ``held`` waits for its shipment, Processing
        system.submit(held)
        system.run(5)
        assert system.state(held.order_id).process_state is ProcessState.PROCESSING
        holder = system.state(held.order_id).locked_by
        for n, forged in enumerate((
                forged_charge(system, held, holder, payload_order=done),
                forged_charge(system, held, holder, idempotency_key=f"{key(held)}:charge:2"))):
            system.engine.send("payment-requests", forged, message_id=f"forged-{n}")
            system.run(1)
        counts = system.engine.counts("payment-requests")
        assert (counts.active, counts.dead_letter) == (0, 2)
    for order in (done, held):
        assert system.ledger.request_count("payment", key(order), "charge") == 1
        assert len(system.effects(kind="charge", order_id=order.order_id)) == 1
