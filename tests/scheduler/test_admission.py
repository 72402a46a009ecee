"""Admission control of the submission function, on SQLite stores (X3)."""

import pytest

from clocks import ManualClock
from orders.models import Order, ProcessState
from orders.models.messages import SubmitOrder
from scheduler import submission
from tests.e2e.harness import make_order
from tests.support.stores import (
    count_store_operations,
    counted_store_operations,
    put,
    sqlite_stores,
)


class Sent:
    def __init__(self):
        self.messages = []

    def send(self, queue, message):
        self.messages.append((queue, message))

    def statuses(self):
        return [(m.body["orderId"], m.body["status"], m.message_id) for q, m in self.messages
                if q == "replies-acme"]


@pytest.fixture
def env(tmp_path):
    stores = sqlite_stores(tmp_path)
    yield stores, Sent(), ManualClock().now()
    stores.close()


def submit(message, stores, sent, now, *, max_in_flight=None, per_client=None,
           client_id="acme", **options):
    """Submit ``message`` from ``client_id``'s own queue, under the given limits."""
    quota = None if max_in_flight is None else submission.Quota(
        max_in_flight, per_client or max_in_flight)
    return submission.submit(message, stores, sent, now, client_id=client_id, quota=quota,
                             **options)


def body(n, client_id="acme"):
    return SubmitOrder(client_id=client_id, reply_to=f"replies-{client_id}",
                       order=make_order(n)).model_dump_json(by_alias=True).encode()


def test_orders_past_the_limit_are_rejected_before_any_write(env, readings):
    stores, sent, now = env
    put(stores.states, "OLD-1", ProcessState.PROCESSING, attempt=1, complete_in_s=30)
    put(stores.states, "OLD-2", ProcessState.COMPENSATING, attempt=1, complete_in_s=30)
    put(stores.states, "DONE", ProcessState.PROCESSED, attempt=1)  # not in flight
    first = submit(body(1), stores, sent, now, max_in_flight=3, message_id="m1")
    assert isinstance(first, submission.Accepted)
    refused = submit(body(2), stores, sent, now, max_in_flight=3, message_id="m2")
    assert isinstance(refused, submission.AdmissionRefused)
    assert stores.states.get("acme~ORD-00002") is None
    assert stores.orders.get("acme~ORD-00002") is None
    statuses = sent.statuses()
    assert [s[:2] for s in statuses] == [("ORD-00001", "RequestReceived"),
                                        ("ORD-00002", "Rejected")]
    rejected = sent.messages[-1][1].body
    # The global count is not the client's to know (issue: fair shares).
    assert "at capacity (MAX_IN_FLIGHT)" in rejected["reason"]
    assert "3" not in rejected["reason"]
    assert readings.points()["orders.in_flight"] == {(): 3}


def test_a_redelivery_of_an_accepted_order_is_never_rejected(env):
    stores, sent, now = env
    assert isinstance(submit(body(1), stores, sent, now, max_in_flight=1),
                      submission.Accepted)
    again = submit(body(1), stores, sent, now, max_in_flight=1, message_id="resend")
    assert again == submission.Accepted("acme~ORD-00001", created=False)
    # Only the order row survived a crash between the two writes: also a redelivery.
    stores.orders.create_if_absent(Order.of_client(make_order(5), "acme~ORD-00005"))
    partial = submit(body(5), stores, sent, now, max_in_flight=1)
    assert partial == submission.Accepted("acme~ORD-00005", created=True)
    assert "Rejected" not in [s[1] for s in sent.statuses()]


def test_each_refused_message_gets_its_own_answer_and_a_redelivery_the_same(env):
    stores, sent, now = env
    put(stores.states, "OLD", ProcessState.PENDING)
    for message_id in ("a", "a", "b"):
        submit(body(3), stores, sent, now, max_in_flight=1, message_id=message_id)
    ids = [s[2] for s in sent.statuses()]
    assert ids[0] == ids[1] != ids[2]  # the queue's duplicate detection drops the 2nd
    assert all(i.startswith("ORD-00003:Rejected:") and len(i) <= 128 for i in ids)


def test_without_a_limit_nothing_is_counted(env):
    stores, sent, now = env
    for n in range(3):
        put(stores.states, f"OLD-{n}", ProcessState.PENDING)
    assert isinstance(submit(body(1), stores, sent, now), submission.Accepted)


def test_a_clients_quota_counts_its_own_orders_only_and_its_reason_names_them(env):
    stores, sent, now = env
    for n in range(1, 5):
        assert isinstance(submit(body(n), stores, sent, now, max_in_flight=10, per_client=4),
                          submission.Accepted)
    refused = submit(body(5), stores, sent, now, max_in_flight=10, per_client=4)
    assert isinstance(refused, submission.AdmissionRefused)
    assert refused.reason.startswith("admission control: client acme has 4 orders in flight")
    assert "MAX_IN_FLIGHT_PER_CLIENT=4" in refused.reason
    assert "MAX_IN_FLIGHT=" not in refused.reason and "10" not in refused.reason
    # Another client is admitted beside the full one, and hears on its own queue only.
    other = submit(body(5, "shop-b"), stores, sent, now, client_id="shop-b",
                   max_in_flight=10, per_client=4)
    assert other == submission.Accepted("shop-b~ORD-00005", created=True,
                                        record=other.record)
    assert [q for q, _ in sent.messages][-1] == "replies-shop-b"


def test_orders_of_a_client_that_ended_free_its_quota(env):
    stores, sent, now = env
    for n in range(1, 3):
        submit(body(n), stores, sent, now, max_in_flight=10, per_client=2)
    done = stores.states.get("acme~ORD-00001")
    stores.states.replace(done.model_copy(update={"process_state": ProcessState.ERROR}))
    assert isinstance(submit(body(3), stores, sent, now, max_in_flight=10, per_client=2),
                      submission.Accepted)


def test_admission_reads_its_two_counts_in_one_query_each(tmp_path, monkeypatch):
    # A store query is a cross-partition query on Cosmos DB, billed per request: the
    # client's quota and the in-flight total over three states were six (one per state).
    count_store_operations(tmp_path, monkeypatch)
    stores, sent = sqlite_stores(tmp_path), Sent()
    for n, state in enumerate([ProcessState.PENDING, ProcessState.PROCESSING,
                               ProcessState.COMPENSATING]):
        put(stores.states, f"OLD-{n}", state, client_id="acme")
    now = ManualClock().now()
    refused = submit(body(1), stores, sent, now, max_in_flight=10, per_client=3)
    assert isinstance(refused, submission.AdmissionRefused)  # the client's 3 counted
    admitted = submit(body(2, "shop-b"), stores, sent, now, client_id="shop-b",
                      max_in_flight=10, per_client=3)
    assert isinstance(admitted, submission.Accepted)
    stores.close()
    queries = counted_store_operations()["counts"]["state"]["query"]
    assert queries == 1 + 2  # the refused: its quota; the admitted: its quota and the total


def _sized(lines: int, skus: int, quantity: int):
    from datetime import UTC, datetime
    from decimal import Decimal

    from orders.models import ClientOrder, OrderLine

    order_lines = [OrderLine(sku=f"SKU-{i % skus}", quantity=quantity,
                             unit_price=Decimal("0.01")) for i in range(lines)]
    order = ClientOrder(order_id="BIG-1", customer_id="CUST-1", currency="USD",
                        lines=order_lines,
                        total_price=sum((li.extended_price for li in order_lines), Decimal(0)),
                        created_at=datetime(2029, 12, 31, tzinfo=UTC))
    return SubmitOrder(client_id="acme", reply_to="replies-acme",
                       order=order).model_dump_json(by_alias=True).encode()


@pytest.mark.parametrize(("lines", "skus", "quantity", "field", "limit"), [
    (1000, 1, 1, "order.lines:", "MAX_ORDER_LINES=50"),
    (51, 51, 1, "order.lines:", "MAX_ORDER_LINES=50"),
    (21, 21, 1, "order.lines[].sku:", "MAX_ORDER_SKUS=20"),
    (3, 1, 4000, "order.lines[].quantity:", "MAX_ORDER_UNITS=10000"),
])
def test_an_order_past_a_size_bound_is_rejected_naming_the_field_and_limit(
        env, lines, skus, quantity, field, limit):
    stores, sent, now = env
    refused = submit(_sized(lines, skus, quantity), stores, sent, now, message_id="m1")
    assert isinstance(refused, submission.AdmissionRefused)
    assert stores.orders.get("acme~BIG-1") is None and stores.states.get("acme~BIG-1") is None
    [(order_id, status, _)] = sent.statuses()
    assert (order_id, status) == ("BIG-1", "Rejected")
    reason = sent.messages[-1][1].body["reason"]
    assert field in reason and limit in reason


def test_an_order_at_every_size_bound_is_accepted(env):
    stores, sent, now = env
    accepted = submit(_sized(50, 20, 200), stores, sent, now, message_id="m1")
    assert isinstance(accepted, submission.Accepted)


def test_a_clients_quota_counts_the_work_of_its_orders_not_only_their_number(env):
    """Two 50-line orders are ten orders' work: a quota of 10 is then full for acme alone."""
    stores, sent, now = env
    big = [_sized(50, 1, 1).replace(b"BIG-1", f"BIG-{n}".encode()) for n in range(2)]
    for n, message in enumerate(big):
        assert isinstance(submit(message, stores, sent, now, max_in_flight=100, per_client=10,
                                 message_id=f"m{n}"), submission.Accepted)
    assert stores.states.get("acme~BIG-0").work == 5
    third = submit(_sized(50, 1, 1).replace(b"BIG-1", b"BIG-9"), stores, sent, now,
                   max_in_flight=100, per_client=14, message_id="m3")
    assert "one per 10 lines or part, this one 5" in third.reason  # 10 + 5 > 14
    refused = submit(body(1), stores, sent, now, max_in_flight=100, per_client=10,
                     message_id="m9")
    assert isinstance(refused, submission.AdmissionRefused)
    assert "client acme has 10 orders in flight" in refused.reason
    other = submit(body(2, "globex"), stores, sent, now, max_in_flight=100, per_client=10,
                   client_id="globex", message_id="g1")
    assert isinstance(other, submission.Accepted)
