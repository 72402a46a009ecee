"""Scenarios and checks several end-to-end modules share."""

import sqlite3
from collections import Counter

from orders.models import format_utc
from scheduler import starter
from tests.e2e.harness import key, make_order


def declined_order(make_system, number: int, seconds: float):
    """Run a system whose payment service declines order ``number``: (system, order)."""
    declined = make_order(number)
    system = make_system(faults={"payment": {"decline": {key(declined): {
        "status": 402, "reason": "card_declined"}}}})
    system.submit(declined)
    system.run(seconds)
    return system, declined


def assert_timer_won_and_late_reply_changed_nothing(system, instance_id: str, record,
                                                    kind: str, seconds: float) -> None:
    """``instance_id`` ended timed out; ``seconds`` later its held payment request was
    redelivered and answered, and neither ``record`` nor the ``kind`` effect changed.
    ``record.order_key`` is the order key, which the harness takes as it is.
    """
    first = system.host.taskhub.get_instance(instance_id)
    assert first.runtime_status == "Completed" and '"timedOut"' in first.output
    system.run(seconds)
    assert system.engine.counts("payment-requests").active == 0
    assert system.state(record.order_key) == record
    assert len(system.effects(kind=kind, order_id=record.order_key)) == 1


def direct_counts(system) -> tuple[Counter, int]:
    """Orders by ProcessState and the stuck count, straight from the state store's file."""
    now = format_utc(system.clock.now())
    with sqlite3.connect(system.host.data_dir / "state.sqlite") as conn:
        rows = conn.execute("SELECT process_state, COUNT(*) FROM state_records "
                            "GROUP BY process_state").fetchall()
        stuck = conn.execute("SELECT COUNT(*) FROM state_records WHERE process_state IN "
                             "('Processing', 'Compensating') AND complete_by < ?",
                             (now,)).fetchone()[0]
    return Counter(dict(rows)), stuck


def lose_order_row(system, order_key):
    """Delete the order row of ``order_key`` (a key): every attempt then fails reading it."""
    with sqlite3.connect(system.host.data_dir / "orders.sqlite") as conn:
        assert conn.execute("DELETE FROM orders WHERE order_id = ?", (order_key,)).rowcount == 1


def not_started(services, record):
    """A submission that stores its order but stops before starting it (the timer starts it)."""
    return False


def submit_unstarted(system, monkeypatch, orders):
    """Submit ``orders`` and run 0.5 s: stored, not started (the starter has not run yet)."""
    with monkeypatch.context() as patched:
        patched.setattr(starter, "may_start_now", not_started)
        for order in orders:
            system.submit(order)
        system.run(0.5)
