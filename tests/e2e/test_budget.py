"""The retry budget holds end to end: calls to a service that never heals (X2, X1).

The simulator's ledger counts every request the payment service received for the order;
it never exceeds :func:`max_calls_per_service`. The second test also makes the agent fail
after its calls, so Service Bus redelivers the request up to maxDeliveryCount: every
retry layer is exhausted and the count is exactly the product of the layers that apply.
"""

from agents import handler
from orders.budget import max_calls_per_service
from orders.queues import load_queue_limits
from tests.e2e.harness import ProcessState, key, make_order

TERMINAL = {ProcessState.ERROR, ProcessState.COMPENSATED, ProcessState.COMPENSATION_FAILED}


def test_payment_failing_forever_never_exceeds_the_computed_maximum(make_system):
    doomed = make_order(81)
    system = make_system(faults={"payment": {"fail_forever_order_ids": [key(doomed)]}})
    others = [make_order(n) for n in range(82, 86)]
    for order in [doomed, *others]:
        system.submit(order)
    system.run(300)
    settings = system.services.settings
    maximum = max_calls_per_service(settings, load_queue_limits())
    calls = system.ledger.request_count("payment", key(doomed))
    assert system.state(doomed.order_id).process_state in TERMINAL
    assert calls <= maximum["payment"]
    # No redelivery was needed: the agent and supervisor layers alone, plus the one refund
    # compensation asks for because the charge requests went out (answered nothing_to_undo).
    assert calls == settings.MAX_FAILURES * settings.AGENT_MAX_ATTEMPTS + 1
    assert system.ledger.request_count("payment", key(doomed), "refund") == 1
    assert system.ledger.request_count("shipping", key(doomed)) == 0
    assert system.states(o.order_id for o in others) == {ProcessState.PROCESSED: 4}


def test_redeliveries_multiply_but_stay_within_the_maximum(make_system, monkeypatch):
    doomed = make_order(91)
    system = make_system(faults={"payment": {"fail_forever_order_ids": [key(doomed)]}},
                         # The circuit breaker only lowers the count (it opened after 50
                         # failures); keep it closed to reach the bound of the other layers.
                         settings={"ORDER_DEADLINE_S": "120",
                                   "CIRCUIT_FAILURE_THRESHOLD": "1000"})
    real_reply = handler.reply

    def crash_after_calls(services, request, answer):
        if request.order_key == key(doomed):
            raise RuntimeError("agent host crashed before replying")
        real_reply(services, request, answer)

    monkeypatch.setattr(handler, "reply", crash_after_calls)
    system.submit(doomed)
    system.run(600)
    settings = system.services.settings
    queues = load_queue_limits()
    deliveries = queues["payment-requests"].max_delivery_count
    calls = system.ledger.request_count("payment", key(doomed))
    assert system.state(doomed.order_id).process_state in TERMINAL
    # Every charge request and, since the agent never replies, every compensation attempt's
    # refund request (one call each: nothing_to_undo is final) is redelivered to the limit.
    compensations = settings.MAX_COMPENSATION_FAILURES
    assert system.engine.counts("payment-requests").dead_letter == \
        settings.MAX_FAILURES + compensations
    assert calls == (settings.MAX_FAILURES * settings.AGENT_MAX_ATTEMPTS
                     + compensations) * deliveries
    assert calls <= max_calls_per_service(settings, queues)["payment"]


def test_an_outage_longer_than_every_hold_stays_within_the_computed_maximum(make_system):
    """Shipping down far longer than every hold-back and cool-down: payment calls stay bounded.

    Version 1 charges, then ships. The first attempt's shipment fails and opens the
    shipping circuit (threshold 1) for longer than the test runs; every later attempt
    charges again and is refused at the shipment without a call. Such an attempt must
    count as a failure: held back uncounted, it would come back every hold-back (at most
    CIRCUIT_HOLD_MAX_S) and charge again for as long as the outage lasts.
    """
    order = make_order(95)
    outage_s, hold_max_s = 3000, 30
    system = make_system(
        faults={"shipping": {"outage_for_s": outage_s}},
        settings={"AGENT_MAX_ATTEMPTS": "1", "MAX_FAILURES": "2",
                  "MAX_COMPENSATION_FAILURES": "1", "CIRCUIT_FAILURE_THRESHOLD": "1",
                  "CIRCUIT_COOL_DOWN_S": str(2 * outage_s),
                  "CIRCUIT_HOLD_MAX_S": str(hold_max_s)})
    system.submit(order)
    system.run(outage_s / 2)  # 50 times the longest hold-back
    settings = system.services.settings
    maximum = max_calls_per_service(settings, load_queue_limits())["payment"]
    record = system.state(order.order_id)
    charges = system.ledger.request_count("payment", key(order), "charge")
    assert maximum == 1 * 5 * (2 + 1)  # A_agent * maxDeliveryCount * (MAX_FAILURES + C)
    assert system.ledger.request_count("payment", key(order)) <= maximum
    # One charge per counted attempt, and the order was given up on (its compensation
    # waits for the shipping circuit, holding back without a call).
    assert charges == settings.MAX_FAILURES
    assert record.failure_count == settings.MAX_FAILURES
    assert record.process_state in {ProcessState.COMPENSATING, *TERMINAL}
