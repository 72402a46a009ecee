"""Each service at its own base URL: an agent calling another service's URL fails."""

from tests.e2e.harness import ProcessState, make_order


def test_orders_succeed_with_each_service_at_its_own_url(make_system):
    system = make_system()
    order = make_order(1)
    system.submit(order)
    system.run(10)
    assert system.state(order.order_id).process_state == ProcessState.PROCESSED


def test_swapped_url_settings_fail_the_order_and_charge_nothing(make_system):
    system = make_system(service_paths={"payment": "/shipping", "shipping": "/payment"})
    order = make_order(1)
    system.submit(order)
    system.run(10)
    record = system.state(order.order_id)
    # The charge (logged as requested) met 404; its refund, at the wrong URL too, as well.
    assert record.process_state == ProcessState.COMPENSATION_FAILED
    assert "charge failed permanently: HTTP 404" in record.failure_reason
    assert system.effects(order_id=order.order_id) == []
