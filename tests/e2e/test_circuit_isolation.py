"""One order's fault stays that order's: an open circuit does not fail healthy orders (A5, V2).

A payment service that black-holes a few orders (performs every charge, never answers)
makes the payment agent's calls for them time out until its circuit breaker opens.
Requests of healthy orders that meet the open circuit fail fast without a call; the reply
handler marks those attempts and the supervisor holds them back instead of counting them
against MAX_FAILURES. So the healthy orders all end Processed, charged once, while the
black-holed orders use up their own attempts and are failed.
"""

import logging
from collections import Counter

import pytest

from tests.e2e.harness import ProcessState, key, make_order

HEALTHY = 100
BLACK_HOLED = 5
FAILED = {ProcessState.COMPENSATED, ProcessState.COMPENSATION_FAILED, ProcessState.ERROR}


@pytest.mark.slow(expected_s=15)
def test_black_holed_orders_open_the_circuit_but_healthy_orders_all_complete(make_system,
                                                                            caplog):
    caplog.set_level(logging.WARNING, logger="orders.agents.circuit")
    doomed = [make_order(n) for n in range(900, 900 + BLACK_HOLED)]
    healthy = [make_order(n) for n in range(1000, 1000 + HEALTHY)]
    system = make_system(
        faults={"payment": {"black_hole_order_ids": [key(o) for o in doomed],
                            "black_hole_performs_effect": True}},
        # Three timeouts in a row open the circuit; a black-holed request makes up to 4
        # calls (AGENT_MAX_ATTEMPTS), so each of its attempts that gets a call through
        # opens it (for CIRCUIT_COOL_DOWN_S = 5 s).
        settings={"CIRCUIT_FAILURE_THRESHOLD": "3", "AGENT_CALL_TIMEOUT_S": "0.2"})
    for order in [*doomed, *healthy]:
        system.submit(order)
    system.run(900)

    opened = [r for r in caplog.records if r.getMessage().startswith("circuit payment: ")
              and r.getMessage().split(" after ")[0].endswith("-> open")]
    assert len(opened) >= BLACK_HOLED  # the circuit really opened, again and again
    records = {o.order_id: system.state(o.order_id) for o in healthy}
    assert Counter(r.process_state for r in records.values()) == {
        ProcessState.PROCESSED: HEALTHY}
    assert {r.failure_count for r in records.values()} == {0}
    held = [r for r in records.values() if r.circuit_holds > 0]
    assert len(held) >= HEALTHY // 2  # many met the open circuit; none was failed by it
    assert all(len(system.effects(kind="charge", order_id=o)) == 1 for o in records)
    completed = Counter(m["orderId"] for m in system.replies() if m["status"] ==
                        "OrderCompleted")
    assert completed == {o: 1 for o in records}

    # The black-holed orders used up their own attempts and were failed; how their lost
    # charges are undone is the compensation's business, not asserted here.
    for order in doomed:
        record = system.state(order.order_id)
        assert record.process_state in FAILED and record.failure_count == 3, record
    # Alerts about one client's orders are collapsed per kind and 10 minutes (X10): one
    # RetriesExhausted per window, naming the first doomed order given up in it.
    alerts = system.alerts()
    assert alerts and {a["kind"] for a in alerts} == {"RetriesExhausted"}
    assert {a["orderId"] for a in alerts} <= {key(o) for o in doomed}
    assert no_two_in_one_window(alerts)


def no_two_in_one_window(alerts) -> bool:
    """Whether no two alerts of one kind and client share an alert window (collapsed)."""
    from datetime import datetime

    from orders.notify import collapsed_alert_id

    ids = [collapsed_alert_id(a["kind"], a["clientId"], datetime.fromisoformat(a["at"]))
           for a in alerts]
    return len(ids) == len(set(ids))
