"""call_remote against the real simulator (uvicorn on a loopback port): with 30 % transient
faults and lost answers, every order's side effect happens exactly once (A2, X7) and
the simulator saw exactly the calls the agent reports (X2)."""

from datetime import timedelta

import httpx

from agents.backoff import BackoffPolicy
from agents.remote_call import (
    OutcomeKind,
    RemoteRequest,
    call_remote,
)
from clocks import ManualClock
from orders.circuit import BreakerRegistry
from orders.lifecycle.ids import idempotency_key
from simulator import Ledger, ServiceFaults, SimulatorConfig, create_app, serve_in_thread

ORDERS = [f"order-{n:02d}" for n in range(30)]
LOST_ANSWERS = ["order-03", "order-17"]  # first charge is performed but never answered


def test_one_side_effect_per_order_under_30_percent_transient_faults(tmp_path):
    ledger_path = tmp_path / "ledger.sqlite"
    config = SimulatorConfig(
        seed=2024,
        payment=ServiceFaults(
            transient_rate=0.3, retry_after_s=2, black_hole_order_ids=LOST_ANSWERS,
            black_hole_first_n=1, black_hole_performs_effect=True,
        ),
        shipping=ServiceFaults(transient_rate=0.3, retry_after_s=2),
    )
    app = create_app(config, ManualClock(), ledger_path)
    agent_clock = ManualClock()
    breakers = BreakerRegistry(clock=agent_clock, failure_threshold=10,
                               cool_down=timedelta(seconds=30))
    deadline = agent_clock.now() + timedelta(minutes=10)
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        agent_clock.advance(timedelta(seconds=seconds))

    outcomes = {}
    with serve_in_thread(app) as base_url, httpx.Client(base_url=base_url) as client:
        for order in ORDERS:
            for service, step, url, body in [
                ("payment", "charge", "/payments",
                 {"orderId": order, "amount": "25.00", "currency": "EUR"}),
                ("shipping", "ship", "/shipments",
                 {"orderId": order, "lines": [{"sku": "SKU-1", "quantity": 1}]}),
            ]:
                request = RemoteRequest(
                    service=service, method="POST", url=url, json=body, order_key=order,
                    idempotency_key=idempotency_key(order, step),
                )
                outcomes[(service, order)] = call_remote(
                    client, request, deadline=deadline, max_attempts=10,
                    breaker=breakers.get(service), clock=agent_clock, sleep=sleep,
                    backoff=BackoffPolicy(), try_timeout=timedelta(seconds=0.5),
                )

    assert {o.kind for o in outcomes.values()} == {OutcomeKind.SUCCEEDED}
    with Ledger(ledger_path) as ledger:
        expected = {("payment", "charge", o): 1 for o in ORDERS}
        expected |= {("shipping", "ship", o): 1 for o in ORDERS}
        assert ledger.effect_counts() == expected
        for (service, order), outcome in outcomes.items():
            assert ledger.request_count(service, order) == outcome.tries
        for order in LOST_ANSWERS:
            [charge] = ledger.side_effects(service="payment", order_key=order)
            assert outcomes[("payment", order)].body["paymentId"] == charge.resource_id
            assert outcomes[("payment", order)].tries >= 2
    retried = sum(o.tries - 1 for o in outcomes.values())
    assert retried >= 10  # the faults really were injected
    assert 2.0 in slept  # and some Retry-After was honoured
