"""The store reads of a submission (S1, X5): a new order's record is read once.

Counted with SQLite's trace callback on the state file: ``already_stored`` reads the record
(None: a new order), the order is then created, and a record can only have appeared since
from a send of the same order, so it is not read again. A resend reads it as before: in
``already_stored``, after the order write (to refuse other data), and in the record's
create that finds it.
"""

from __future__ import annotations

from scheduler import submission
from tests.scheduler.test_admission import body, submit
from tests.scheduler.test_pricing import env  # noqa: F401 - fixture
from tests.support.statements import traced


def record_reads(stores, run):
    """Run ``run()``; return it and the state record's point reads it made."""
    with traced(stores.states._db.conn) as seen:
        result = run()
    return result, [s for s in seen if s.startswith("SELECT * FROM state_records WHERE")]


def test_a_new_order_reads_its_record_once_and_a_resend_as_before(env):  # noqa: F811
    stores, sent, now = env
    first, new_reads = record_reads(stores, lambda: submit(body(1), stores, sent, now))
    again, resend_reads = record_reads(stores, lambda: submit(body(1), stores, sent, now))
    assert isinstance(first, submission.Accepted) and first.created
    assert isinstance(again, submission.Accepted) and not again.created
    assert (len(new_reads), len(resend_reads)) == (1, 3)
    assert stores.states.get(first.order_key) == first.record
    assert [status for _, status, _ in sent.statuses()] == ["RequestReceived"] * 2
