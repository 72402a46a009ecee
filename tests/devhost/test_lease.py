"""One thread renews every lease of the process, each while its block runs."""

import threading
from datetime import timedelta

from devhost.workers.lease import SharedRenewer, renewing


def test_leases_held_at_once_are_each_renewed_and_a_failing_renewal_stops_none():
    renewed = [threading.Event(), threading.Event()]

    def failing():
        renewed[1].set()
        raise RuntimeError("lock lost")  # logged, never raised into the work

    with renewing(renewed[0].set, timedelta(milliseconds=30)), \
            renewing(failing, timedelta(milliseconds=60)):
        assert renewed[0].wait(5) and renewed[1].wait(5)
        renewed[0].clear()
        assert renewed[0].wait(5)  # still renewed after the other's failure


def test_a_lease_is_dropped_when_its_block_ends():
    renewer = SharedRenewer()
    renewed = threading.Event()
    with renewer.holding(renewed.set, timedelta(milliseconds=30)):
        assert renewed.wait(5)
    assert renewer._leases == {}
