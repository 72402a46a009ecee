"""A slot freed by an ending attempt starts the next claimable order (S3, X3).

With ``MAX_PROCESSING`` 1 and the clock standing still, the starter's timer never runs:
only the submission of the first order and the slots its ending frees start the others.
"""

from orders.models import ProcessState
from tests.e2e.harness import key, make_order


def test_each_ending_attempt_starts_the_next_waiting_order(make_system):
    system = make_system(settings={"MAX_PROCESSING": "1", "ORDER_CLIENTS": "acme"})
    batch = [make_order(n) for n in range(3)]
    for order in batch:
        system.submit(order)
    system.host.run_until_idle()  # no clock advance: the starter's timer stays unfired
    assert system.states([o.order_id for o in batch]) == {ProcessState.PROCESSED: 3}


def test_a_failed_order_frees_its_slot_for_the_next(make_system):
    # Shipping declines the first order for good: fail_order takes it out of Processing
    # (to Compensating), and that frees the slot the next order starts in.
    batch = [make_order(n) for n in range(2)]
    decline = {key(batch[0].order_id): {"status": 422, "reason": "address_undeliverable"}}
    system = make_system(faults={"shipping": {"decline": decline}},
                         settings={"MAX_PROCESSING": "1", "ORDER_CLIENTS": "acme"})
    for order in batch:
        system.submit(order)
    system.host.run_until_idle()
    # Its undo waits for the compensation starter's timer, which the still clock never runs.
    assert system.state(batch[0].order_id).process_state is ProcessState.COMPENSATING
    assert system.state(batch[1].order_id).process_state is ProcessState.PROCESSED
