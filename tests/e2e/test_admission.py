"""Admission control under a downstream outage: a bounded backlog, nothing lost (X3).

Shipping is down (simulator outage) while orders keep arriving. Submission admits new
orders only while Pending + Processing + Compensating stay below MAX_IN_FLIGHT; the rest
are told "Rejected" with the reason and their messages completed. A hook checks the
backlog after every submission invocation, so a momentary overshoot would be caught, not
only the state after each drain step. When shipping returns, every accepted order ends
terminal, and new orders are admitted again.
"""

import json
import time
from collections import Counter

import pytest

from orders.models import IN_FLIGHT_STATES
from scheduler import submission
from tests.e2e.harness import ProcessState, make_order

TERMINAL = {ProcessState.PROCESSED, ProcessState.ERROR, ProcessState.COMPENSATED,
            ProcessState.COMPENSATION_FAILED}


def in_flight(system) -> int:
    return sum(system.services.stores.states.count_by_state(IN_FLIGHT_STATES).values())


def run_outage(make_system, monkeypatch, orders: int, limit: int, wave: int) -> None:
    started = time.perf_counter()
    system = make_system(faults={"shipping": {"outage_for_s": 60}},
                         # One client: its share is the whole of MAX_IN_FLIGHT.
                         settings={"MAX_IN_FLIGHT": str(limit), "ORDER_CLIENTS": "acme"})
    seen: list[int] = []
    real_submit = submission.submit

    def observed(body, stores, *args, **kwargs):
        result = real_submit(body, stores, *args, **kwargs)
        seen.append(sum(stores.states.count_by_state(IN_FLIGHT_STATES).values()))
        return result

    monkeypatch.setattr(submission, "submit", observed)
    batch = [make_order(n) for n in range(orders)]
    for start in range(0, orders, wave):
        for order in batch[start:start + wave]:
            system.submit(order)
        system.run(1)
        assert in_flight(system) <= limit
    assert len(seen) == orders and max(seen) == limit

    ids = [o.order_id for o in batch]
    records = {i: system.state(i) for i in ids}
    accepted = {i for i, r in records.items() if r is not None}
    replies = system.replies()
    rejected = Counter(m["orderId"] for m in replies if m["status"] == "Rejected")
    received = {m["orderId"] for m in replies if m["status"] == "RequestReceived"}
    assert len(accepted) == limit
    assert set(rejected) == set(ids) - accepted and set(rejected.values()) == {1}
    assert received == accepted  # every order has a record or got Rejected, never both
    reasons = {m["reason"] for m in replies if m["status"] == "Rejected"}
    # The only client's quota is all of MAX_IN_FLIGHT; the reason names its own count only.
    assert reasons == {f"admission control: client acme has {limit} orders in flight "
                       "(Pending, Processing, Compensating), its quota "
                       f"MAX_IN_FLIGHT_PER_CLIENT={limit}; nothing was stored, submit the "
                       "order again later with a new MessageId"}
    for order_key in list(rejected)[:20]:
        assert system.services.stores.orders.get(order_key) is None
    counts = system.engine.counts("orders")
    assert (counts.active, counts.dead_letter) == (0, 0)
    assert system.engine.counts("replies-acme").dead_letter == 0

    system.run(150)  # shipping is back after 60 s; attempt 3 starts at about 66 s
    finals = system.states(accepted)
    assert set(finals) <= TERMINAL, finals
    assert finals == {ProcessState.PROCESSED: limit}
    assert in_flight(system) == 0

    fresh = [make_order(n) for n in range(orders, orders + limit)]
    for order in fresh:
        system.submit(order)
    system.run(30)
    assert system.states(o.order_id for o in fresh) == {ProcessState.PROCESSED: limit}
    print(f"\nadmission {orders}/{limit}: {time.perf_counter() - started:.1f}s")


def test_backlog_stays_bounded_during_an_outage(make_system, monkeypatch):
    run_outage(make_system, monkeypatch, orders=200, limit=30, wave=20)


@pytest.mark.slow(expected_s=15)
@pytest.mark.timeout(900)
def test_backlog_stays_bounded_during_an_outage_at_scale(make_system, monkeypatch):
    run_outage(make_system, monkeypatch, orders=1000, limit=150, wave=100)


def test_redelivery_of_an_accepted_order_is_not_rejected_at_the_limit(make_system):
    system = make_system(faults={"shipping": {"outage_for_s": 60}},
                         settings={"MAX_IN_FLIGHT": "2", "ORDER_CLIENTS": "acme"})
    first, second, third = (make_order(n) for n in (1, 2, 3))
    for order in (first, second, third):
        system.submit(order)
    system.run(0.5)
    system.submit(first, message_id="client-resend")  # the limit is reached now
    system.run(0.5)
    statuses = [(m["orderId"], m["status"]) for m in system.replies()]
    assert statuses == [(first.order_id, "RequestReceived"),
                        (second.order_id, "RequestReceived"),
                        (third.order_id, "Rejected")]
    assert system.state(first.order_id).process_state in IN_FLIGHT_STATES
    assert system.engine.counts("orders").dead_letter == 0


def test_one_clients_backlog_does_not_get_another_clients_order_rejected(make_system):
    """MAX_IN_FLIGHT=10, MAX_IN_FLIGHT_PER_CLIENT=4, payment not answering for a while."""
    system = make_system(settings={"MAX_IN_FLIGHT": "10", "MAX_IN_FLIGHT_PER_CLIENT": "4"})
    flood = [make_order(n) for n in range(1, 13)]
    mine = make_order(50)
    with system.paused("payment-requests"):  # acme's orders stay in flight
        for order in flood:
            system.submit(order, client_id="acme")
        system.run(1)
        system.submit(mine, client_id="globex")
        system.run(1)
        acme = system.replies("acme")
        rejected = [m for m in acme if m["status"] == "Rejected"]
        assert len(rejected) == 8 and len(system.states(
            [o.order_id for o in flood[:4]])) == 1  # the first four are stored
        assert {m["reason"] for m in rejected} == {
            "admission control: client acme has 4 orders in flight (Pending, Processing, "
            "Compensating), its quota MAX_IN_FLIGHT_PER_CLIENT=4; nothing was stored, submit "
            "the order again later with a new MessageId"}
    system.run(30)
    assert system.state(mine.order_id, "globex").process_state == ProcessState.PROCESSED
    assert [m["status"] for m in system.replies("globex")] == ["RequestReceived",
                                                               "OrderCompleted"]
    assert system.states([o.order_id for o in flood[:4]]) == {ProcessState.PROCESSED: 4}


def test_the_starter_shares_processing_slots_between_clients(make_system):
    """MAX_PROCESSING=2: acme's six orders do not hold every slot ahead of globex's one."""
    system = make_system(settings={"MAX_PROCESSING": "2", "MAX_IN_FLIGHT": "100"})
    backlog = [make_order(n) for n in range(1, 7)]
    late = make_order(60)
    with system.paused("payment-requests"):
        for order in backlog:
            system.submit(order, client_id="acme")
        system.run(2)
        system.submit(late, client_id="globex")
        system.run(2)
        # Two clients, two slots: acme's backlog leaves one slot for globex (slot_cap).
        assert system.states([o.order_id for o in backlog]) == {
            ProcessState.PROCESSING: 1, ProcessState.PENDING: 5}
    system.run(60)
    done = {}
    for client_id in ("acme", "globex"):
        for m in system.engine.peek(f"replies-{client_id}", 100):
            body = json.loads(m.body)
            if body["status"] == "OrderCompleted":
                # In send order: a freed slot starts the next order at once, so several
                # complete at one instant of the test's clock; the local engine numbers
                # the sends of every queue from one sequence.
                done[(client_id, body["orderId"])] = (m.enqueued_time, m.sequence_number)
    assert len(done) == 7
    acme_times = sorted(t for (c, _), t in done.items() if c == "acme")
    # globex's order took the first slot that came free, ahead of acme's 4 waiting ones.
    assert done[("globex", late.order_id)] < acme_times[3]


def test_a_quota_set_above_the_equal_share_is_lowered_to_it(make_system):
    """MAX_IN_FLIGHT=10 for two clients, MAX_IN_FLIGHT_PER_CLIENT left at 1000: 5 each."""
    system = make_system(settings={"MAX_IN_FLIGHT": "10", "MAX_IN_FLIGHT_PER_CLIENT": "1000"})
    assert system.services.settings.in_flight_quota == 5
    with system.paused("payment-requests"):
        for order in (make_order(n) for n in range(1, 13)):
            system.submit(order, client_id="acme")
        system.run(1)
        others = [make_order(n) for n in range(70, 75)]
        for order in others:
            system.submit(order, client_id="globex")
        system.run(1)
        rejected = [m for m in system.replies("acme") if m["status"] == "Rejected"]
        assert len(rejected) == 7
        assert [m["status"] for m in system.replies("globex")] == ["RequestReceived"] * 5


def test_one_client_never_holds_every_slot_and_anothers_order_starts_at_once(make_system):
    """MAX_PROCESSING=4: acme's backlog may take 3 slots; globex's order takes the 4th."""
    system = make_system(settings={"MAX_PROCESSING": "4", "MAX_IN_FLIGHT": "100"})
    backlog = [make_order(n) for n in range(1, 9)]
    late = make_order(80)
    with system.paused("payment-requests"):
        for order in backlog:
            system.submit(order, client_id="acme")
        system.run(3)
        assert system.states([o.order_id for o in backlog]) == {
            ProcessState.PROCESSING: 3, ProcessState.PENDING: 5}
        system.submit(late, client_id="globex")
        system.run(0.5)
        assert system.state(late.order_id, "globex").process_state == ProcessState.PROCESSING
