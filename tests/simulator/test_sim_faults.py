from datetime import timedelta

import pytest

from clocks import ManualClock
from simulator import Decline, FaultUpdate, Ledger, ServiceFaults, SimulatorConfig
from simulator.faults import FaultInjector, FaultKind

from .helpers import charge, ship

pytestmark = pytest.mark.anyio


async def test_transient_429_carries_retry_after_and_performs_no_side_effect(
    make_client, ledger_path
):
    faults = ServiceFaults(transient_rate=1.0, transient_statuses=[429], retry_after_s=7)
    client = make_client(SimulatorConfig(payment=faults))
    response = await charge(client, "order-1", "k-1")
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "7"
    assert response.json()["error"] == "transient"
    with Ledger(ledger_path) as ledger:
        assert ledger.side_effects() == []
        assert ledger.request_count("payment", "order-1") == 1


async def test_transient_503_has_no_retry_after(make_client):
    client = make_client(SimulatorConfig(payment=ServiceFaults(transient_rate=1.0,
                                                               transient_statuses=[503])))
    response = await charge(client, "order-1", "k-1")
    assert response.status_code == 503
    assert "Retry-After" not in response.headers


async def _statuses(client, orders, rounds):
    """Charge every order `rounds` times (same key), returning statuses per order."""
    result = {order: [] for order in orders}
    for _ in range(rounds):
        for order in orders:
            result[order].append((await charge(client, order, f"{order}:charge")).status_code)
    return result


async def test_transient_errors_are_reproducible_per_seed_whatever_the_interleaving(
    make_client, tmp_path
):
    config = SimulatorConfig(seed=7, payment=ServiceFaults(transient_rate=0.5))
    orders = [f"order-{n}" for n in range(10)]
    first = await _statuses(make_client(config, path=tmp_path / "a.db"), orders, 4)
    second = await _statuses(make_client(config, path=tmp_path / "b.db"), orders[::-1], 4)
    assert first == second
    seen = {status for statuses in first.values() for status in statuses}
    assert seen == {201, 429, 503}
    other_seed = config.model_copy(update={"seed": 8})
    third = await _statuses(make_client(other_seed, path=tmp_path / "c.db"), orders, 4)
    assert third != first


async def test_latency_is_added_before_every_answer_of_that_service(make_client):
    sleeps: list[float] = []

    async def record(seconds: float) -> None:
        sleeps.append(seconds)

    client = make_client(SimulatorConfig(payment=ServiceFaults(latency_s=0.25)), sleep=record)
    await charge(client, "order-1", "k-1")
    await charge(client, "order-2", "k-2")
    await ship(client, "order-1", "s-1")
    assert sleeps == [0.25, 0.25]


async def test_outage_window_answers_503_between_start_and_end(make_client, clock: ManualClock):
    start = clock.now() + timedelta(seconds=10)
    config = SimulatorConfig(
        payment=ServiceFaults(outage_start=start, outage_end=start + timedelta(seconds=10))
    )
    client = make_client(config)
    assert (await charge(client, "order-1", "k-1")).status_code == 201
    clock.advance(timedelta(seconds=10))
    during = await charge(client, "order-2", "k-2")
    assert during.status_code == 503
    assert during.json()["error"] == "outage"
    assert during.headers["Retry-After"] == "10"
    assert (await ship(client, "order-2", "s-2")).status_code == 201  # shipping is up
    clock.advance(timedelta(seconds=9.5))
    assert (await charge(client, "order-2", "k-2")).headers["Retry-After"] == "1"
    clock.advance(timedelta(seconds=0.5))
    assert (await charge(client, "order-2", "k-2")).status_code == 201


async def test_outage_for_next_n_seconds_set_at_runtime(make_client, clock: ManualClock):
    client = make_client()
    clock.advance(timedelta(seconds=5))
    answer = await client.post("/_admin/faults", json={"all": {"outage_for_s": 30}})
    assert answer.status_code == 200
    assert answer.json()["payment"]["outage_start"] == clock.now().isoformat().replace(
        "+00:00", "Z"
    )
    during = await charge(client, "order-1", "k-1")
    assert (during.status_code, during.headers["Retry-After"]) == (503, "30")
    assert (await ship(client, "order-1", "s-1")).status_code == 503
    clock.advance(timedelta(seconds=30))
    assert (await charge(client, "order-1", "k-1")).status_code == 201


async def test_decline_is_permanent_with_status_and_reason(make_client, ledger_path):
    config = SimulatorConfig(
        payment=ServiceFaults(decline={"order-1": Decline(status=402, reason="card_declined")}),
        shipping=ServiceFaults(decline={"order-1": Decline(status=422,
                                                           reason="address_undeliverable")}),
    )
    client = make_client(config)
    for _ in range(2):
        declined = await charge(client, "order-1", "k-1")
        assert (declined.status_code, declined.json()["error"]) == (402, "card_declined")
    refused = await ship(client, "order-1", "s-1")
    assert (refused.status_code, refused.json()["error"]) == (422, "address_undeliverable")
    assert (await charge(client, "order-2", "k-2")).status_code == 201
    with Ledger(ledger_path) as ledger:
        assert ledger.effect_counts() == {("payment", "charge", "order-2"): 1}


async def test_fail_forever_answers_503_on_every_request(make_client, ledger_path):
    client = make_client(SimulatorConfig(payment=ServiceFaults(fail_forever_order_ids=["order-1"])))
    statuses = [(await charge(client, "order-1", "k-1")).status_code for _ in range(5)]
    assert statuses == [503] * 5
    assert (await charge(client, "order-2", "k-2")).status_code == 201
    with Ledger(ledger_path) as ledger:
        assert ledger.request_count("payment", "order-1") == 5
        assert ledger.side_effects(order_key="order-1") == []


def test_black_hole_first_n_counts_per_order_and_resets_when_knobs_change():
    clock = ManualClock()
    faults = ServiceFaults(black_hole_order_ids=["order-1"], black_hole_first_n=2)
    injector = FaultInjector(SimulatorConfig(payment=faults), clock)
    kinds = [injector.decide("payment", "order-1", n).kind for n in range(1, 5)]
    assert kinds == [FaultKind.BLACK_HOLE, FaultKind.BLACK_HOLE, FaultKind.PASS, FaultKind.PASS]
    assert injector.decide("shipping", "order-1", 1).kind is FaultKind.PASS
    assert injector.decide("payment", "order-2", 1).kind is FaultKind.PASS
    injector.update(FaultUpdate(payment=faults))
    assert injector.decide("payment", "order-1", 5).kind is FaultKind.BLACK_HOLE


def test_rule_order_fail_forever_before_outage_before_decline():
    clock = ManualClock()
    faults = ServiceFaults(
        fail_forever_order_ids=["order-1"], outage_for_s=60,
        decline={"order-1": Decline(), "order-2": Decline()},
    )
    injector = FaultInjector(SimulatorConfig().updated(FaultUpdate(payment=faults), clock.now()),
                             clock)
    assert injector.decide("payment", "order-1", 1).kind is FaultKind.FAIL_FOREVER
    assert injector.decide("payment", "order-2", 1).kind is FaultKind.OUTAGE
    clock.advance(timedelta(seconds=60))
    assert injector.decide("payment", "order-2", 1).kind is FaultKind.DECLINE


async def test_delete_faults_puts_every_knob_back_to_no_faults(make_client):
    client = make_client()
    await client.post("/_admin/faults", json={
        "seed": 7, "payment": {"fail_forever_order_ids": ["order-1"], "latency_s": 2}})
    assert (await charge(client, "order-1", "k-1")).status_code == 503
    reset = await client.delete("/_admin/faults")
    assert reset.status_code == 200
    assert reset.json() == (await client.get("/_admin/faults")).json()
    assert reset.json()["seed"] == 0
    assert reset.json()["payment"]["fail_forever_order_ids"] == []
    assert reset.json()["payment"]["latency_s"] == 0
    assert (await charge(client, "order-1", "k-2")).status_code == 201
