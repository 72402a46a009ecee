"""Scenarios and checks several end-to-end modules share."""

from tests.e2e.harness import key, make_order


def declined_order(make_system, number: int, seconds: float):
    """Run a system whose payment service declines order ``number``: (system, order)."""
    declined = make_order(number)
    system = make_system(faults={"payment": {"decline": {key(declined): {
        "status": 402, "reason": "card declined"}}}})
    system.submit(declined)
    system.run(seconds)
    return system, declined


def assert_timer_won_and_late_reply_changed_nothing(system, instance_id: str, record,
                                                    kind: str, seconds: float) -> None:
    """``instance_id`` ended timed out; ``seconds`` later its held payment request was
    redelivered and answered, and neither ``record`` nor the ``kind`` effect changed.
    ``record.order_id`` is the order key, which the harness takes as it is.
    """
    first = system.host.taskhub.get_instance(instance_id)
    assert first.runtime_status == "Completed" and '"timedOut"' in first.output
    system.run(seconds)
    assert system.engine.counts("payment-requests").active == 0
    assert system.state(record.order_id) == record
    assert len(system.effects(kind=kind, order_id=record.order_id)) == 1
