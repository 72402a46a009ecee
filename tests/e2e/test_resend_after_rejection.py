"""A client resends an order admission control rejected, within the duplicate window (X3, S1).

The local Service Bus detects duplicates as Azure does (``duplicateDetectionHistoryTimeWindow``
of the submit queue, 10 minutes). An order told "Rejected" and sent again unchanged has the
same MessageId and is dropped there: no answer, nothing stored. Sent again with the resend
counter (``client.submit``, ``--resend 1``) it is a new message, accepted once there is room.
"""

from datetime import timedelta

from client.submit import submit_orders
from orders.messaging.local import LocalMessageSender
from tests.e2e.harness import ProcessState, make_order


def test_a_rejected_order_resent_with_its_counter_is_accepted_within_the_window(make_system):
    # Shipping is down for a minute, so the first order stays in flight and fills the room.
    system = make_system(faults={"shipping": {"outage_for_s": 60}},
                         settings={"MAX_IN_FLIGHT": "1"})
    sender = LocalMessageSender(system.engine)
    first, rejected = make_order(61), make_order(62)

    def send(order, resend=0):
        submit_orders(sender, [order], client_id="acme", reply_to="replies-acme",
                      resend=resend)

    def told(order):
        return [m["status"] for m in system.replies() if m["orderId"] == order.order_id]

    started = system.clock.now()
    send(first)
    system.run(1)
    send(rejected)
    system.run(1)
    assert told(rejected) == ["Rejected"] and system.state(rejected.order_id) is None
    system.run(150)  # shipping is back; the first order ends and leaves room
    assert system.state(first.order_id).process_state is ProcessState.PROCESSED

    send(rejected)  # unchanged: the same MessageId, dropped by duplicate detection
    system.run(5)
    assert told(rejected) == ["Rejected"] and system.state(rejected.order_id) is None
    assert system.engine.counts("orders-acme").dead_letter == 0

    send(rejected, resend=1)
    system.run(60)
    assert system.clock.now() - started < timedelta(minutes=10)  # still within the window
    assert told(rejected) == ["Rejected", "RequestReceived", "OrderCompleted"]
    assert system.state(rejected.order_id).process_state is ProcessState.PROCESSED
    assert len(system.effects(kind="charge", order_id=rejected.order_id)) == 1
