"""finish_attempt notes the final status on the record it has just written (S6, S8).

Counted with SQLite's trace callback: one read of the state record (the fenced update's),
where the status note read it a second time; a record changed in between is read again.
"""

from __future__ import annotations

from activities import steps
from orders.models import ProcessState
from tests.activities.test_merged_steps import FINISH
from tests.support.records import record_in
from tests.support.statements import traced


def record_reads(stores, run):
    """Run ``run()``; return the state record's point reads it made on ``state.sqlite``."""
    with traced(stores.states._db.conn) as seen:
        run()
    return [s for s in seen if s.startswith("SELECT * FROM state_records WHERE order_id")]


def test_finish_notes_the_status_on_the_record_it_wrote_reading_it_once(services, stores,
                                                                       clock, sender):
    record_in(stores.states, clock)
    reads = record_reads(stores, lambda: steps.finish_attempt(FINISH, services))
    assert len(reads) == 1
    record = stores.states.get("ORD-1")
    assert (record.process_state, record.complete_by) == (ProcessState.PROCESSED, None)
    assert [m.body["status"] for _, m in sender.sent] == ["OrderCompleted"]


def test_a_record_changed_before_the_note_is_read_again_and_noted(services, stores, clock,
                                                                 sender, monkeypatch):
    record_in(stores.states, clock)
    send = sender.send

    def another_writer_first(queue, message):
        send(queue, message)
        current = stores.states.get("ORD-1")  # still pending: Processed, CompleteBy set
        stores.states.replace(current.model_copy(update={"failure_reason": "noted elsewhere"}))

    monkeypatch.setattr(sender, "send", another_writer_first)
    reads = record_reads(stores, lambda: steps.finish_attempt(FINISH, services))
    assert len(reads) == 1 + 1 + 1  # the fenced update's, the other writer's, the re-read
    record = stores.states.get("ORD-1")
    assert (record.process_state, record.complete_by) == (ProcessState.PROCESSED, None)
    assert record.failure_reason == "noted elsewhere"  # its write kept, the note on top
