import re
from datetime import UTC, datetime, timedelta

import pytest
from rich.console import Console
from typer.testing import CliRunner

from client.cli import app, summary_table
from client.receivers import LocalReplyReceiver
from client.watch import INVALID_STATUS_REASON, LockLostError, WatchResult, watch
from orders.models.messages import StatusKind, StatusMessage
from sqlitebus import open_engine

QUEUE = "replies-acme"
T0 = datetime(2030, 1, 1, tzinfo=UTC)


def _status(order_id, kind, second=0, reason=None):
    return StatusMessage(order_id=order_id, status=kind, at=T0 + timedelta(seconds=second),
                         reason=reason).model_dump_json()


def _advance(clock):
    return lambda seconds: clock.advance(timedelta(seconds=seconds))


@pytest.fixture
def receiver(engine):
    return LocalReplyReceiver(engine, QUEUE)


def test_watch_records_statuses_dead_letters_invalid_and_stops_at_n(engine, clock, receiver):
    bodies = [
        _status("A", StatusKind.REQUEST_RECEIVED, 1),
        '{"schemaVersion": 1, "orderId": "B", "status": "Shipped", "at": "2030-01-01T00:00:00Z"}',
        _status("A", StatusKind.ORDER_COMPLETED, 5),
        "not json at all",
        _status("B", StatusKind.ORDER_FAILED, 3, reason="payment declined"),
        _status("C", StatusKind.REQUEST_RECEIVED, 2),
        _status("C", StatusKind.REJECTED, 4, reason="backlog full"),
        _status("D", StatusKind.REQUEST_RECEIVED, 6),
    ]
    for body in bodies:
        engine.send(QUEUE, body)
    progress = []
    result = watch(receiver, 3, timedelta(seconds=60), clock=clock, sleep=_advance(clock),
                   on_progress=progress.append, max_count=3)
    assert not result.timed_out
    assert result.terminal == 3
    assert result.received == 8
    assert result.dead_lettered == 2
    assert {k: (s.status, s.reason) for k, s in result.statuses.items()} == {
        "A": (StatusKind.ORDER_COMPLETED, None),
        "B": (StatusKind.ORDER_FAILED, "payment declined"),
        "C": (StatusKind.REJECTED, "backlog full"),
        "D": (StatusKind.REQUEST_RECEIVED, None),
    }
    assert result.counts() == {StatusKind.ORDER_COMPLETED: 1, StatusKind.ORDER_FAILED: 1,
                               StatusKind.REJECTED: 1, StatusKind.REQUEST_RECEIVED: 1}
    assert [p.terminal for p in progress] == [1, 2, 3]
    assert clock.now() == T0  # never slept: messages were waiting
    counts = engine.counts(QUEUE)
    assert (counts.active, counts.dead_letter) == (0, 2)
    dead = engine.peek(QUEUE, 10, dead_letter=True)
    assert [m.dead_letter_reason for m in dead] == [INVALID_STATUS_REASON] * 2
    assert dead[0].dead_letter_error_description.startswith("status: Input should be ")
    assert dead[1].dead_letter_error_description.startswith("(body): Invalid JSON")


def test_watch_stops_after_the_batch_that_reaches_n(engine, clock, receiver):
    for name in "ABCDE":
        engine.send(QUEUE, _status(name, StatusKind.ORDER_COMPLETED))
    result = watch(receiver, 3, timedelta(seconds=60), clock=clock, sleep=_advance(clock),
                   max_count=2)
    assert result.terminal == 4  # two full batches
    assert engine.counts(QUEUE).active == 1


def test_late_non_terminal_status_does_not_undo_a_terminal_one(engine, clock, receiver):
    engine.send(QUEUE, _status("A", StatusKind.ORDER_COMPLETED, 5))
    engine.send(QUEUE, _status("A", StatusKind.REQUEST_RECEIVED, 1))
    engine.send(QUEUE, _status("B", StatusKind.COMPENSATED, 9))
    engine.send(QUEUE, _status("B", StatusKind.ORDER_FAILED, 7))
    engine.send(QUEUE, _status("B", StatusKind.ORDER_COMPLETED, 5))  # redelivery-like noise
    result = watch(receiver, 3, timedelta(seconds=10), clock=clock, sleep=_advance(clock))
    assert result.timed_out
    assert result.terminal == 2  # each order counted once
    assert result.statuses["A"].status is StatusKind.ORDER_COMPLETED
    assert result.statuses["B"].status is StatusKind.COMPENSATED


def test_watch_times_out_on_the_injected_clock(engine, clock, receiver):
    engine.send(QUEUE, _status("A", StatusKind.ORDER_COMPLETED))
    pauses = []

    def sleep(seconds):
        pauses.append(seconds)
        clock.advance(timedelta(seconds=seconds))

    result = watch(receiver, 2, timedelta(seconds=10), clock=clock, sleep=sleep,
                   poll_interval=timedelta(seconds=3))
    assert result.timed_out
    assert result.terminal == 1
    assert pauses == [3, 3, 3, 1]  # the last pause is capped at the time left
    assert clock.now() == T0 + timedelta(seconds=10)


def test_watch_picks_up_messages_that_arrive_while_polling(engine, clock, receiver):
    arrivals = iter([_status("A", StatusKind.ORDER_COMPLETED),
                     _status("B", StatusKind.ORDER_FAILED)])

    def sleep(seconds):
        clock.advance(timedelta(seconds=seconds))
        engine.send(QUEUE, next(arrivals))

    result = watch(receiver, 2, timedelta(seconds=60), clock=clock, sleep=sleep,
                   poll_interval=timedelta(seconds=2))
    assert not result.timed_out
    assert clock.now() == T0 + timedelta(seconds=4)
    assert set(result.statuses) == {"A", "B"}


def test_lost_lock_is_counted_and_the_status_still_recorded():
    from client.watch import ReplyMessage

    class LosingReceiver:
        def __init__(self):
            self.messages = [ReplyMessage(_status("A", StatusKind.ORDER_COMPLETED).encode(),
                                          "m1", 1, "token"),
                             ReplyMessage(b"{}", "m2", 1, "token2")]

        def receive(self, max_count):
            batch, self.messages = self.messages[:max_count], self.messages[max_count:]
            return batch

        def complete(self, message):
            raise LockLostError("lock expired")

        def dead_letter(self, message, reason, description):
            raise LockLostError("lock expired")

    result = watch(LosingReceiver(), 1, timedelta(seconds=5))
    assert result.statuses["A"].status is StatusKind.ORDER_COMPLETED
    assert (result.lock_lost, result.dead_lettered) == (2, 0)


def test_zero_expected_returns_at_once(receiver, clock):
    result = watch(receiver, 0, timedelta(seconds=1), clock=clock, sleep=_advance(clock))
    assert (result.received, result.timed_out) == (0, False)


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"expect": -1}, "expect"),
    ({"timeout": timedelta(0)}, "timeout"),
    ({"poll_interval": timedelta(0)}, "poll_interval"),
    ({"max_count": 0}, "max_count"),
])
def test_watch_rejects_out_of_range_arguments(receiver, kwargs, field):
    args = {"expect": 1, "timeout": timedelta(seconds=1), **kwargs}
    with pytest.raises(ValueError, match=f"^{field}: "):
        watch(receiver, **args)


def test_local_receiver_translates_lock_lost(engine, clock, receiver):
    engine.send(QUEUE, _status("A", StatusKind.ORDER_COMPLETED))
    [message] = receiver.receive(1)
    clock.advance(timedelta(minutes=1))  # past the 30 s lockDuration of infra/queues.json
    with pytest.raises(LockLostError):
        receiver.complete(message)


def test_summary_table_counts_per_status():
    from client.watch import OrderStatus

    statuses = {f"O{i}": OrderStatus(f"O{i}", kind, T0) for i, kind in enumerate(
        [StatusKind.ORDER_COMPLETED] * 3 + [StatusKind.COMPENSATION_FAILED])}
    table = summary_table(WatchResult(statuses, expect=4, received=6, dead_lettered=1,
                                      invalid=1), ("orders-acme", 2))
    console = Console(record=True, width=80)
    console.print(table)
    text = console.export_text()
    assert "4 of 4 orders terminal" in text
    rows = [[c.strip() for c in line.split("│")[1:3]] for line in text.splitlines()
            if line.startswith("│")]
    assert rows == [["OrderCompleted", "3"], ["CompensationFailed", "1"],
                    ["messages received", "6"], ["invalid replies dead-lettered", "1"],
                    ["orders dead-lettered by the service (orders-acme)", "2"]]


def test_cli_watch_prints_summary_and_writes_statuses(tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()  # the local host makes it
    with open_engine(data_dir) as eng:
        eng.send(QUEUE, _status("A", StatusKind.ORDER_COMPLETED))
        eng.send(QUEUE, _status("B", StatusKind.ORDER_FAILED, reason="no stock"))
        eng.send(QUEUE, "garbage")
    out = tmp_path / "statuses.jsonl"
    result = CliRunner().invoke(app, ["watch", "--client-id", "acme", "--expect", "2",
                                      "--data-dir", str(data_dir), "--out", str(out)],
                                terminal_width=120)
    assert result.exit_code == 0, result.output
    assert "2 of 2 orders terminal" in result.output
    assert re.search(r"│ invalid replies dead-lettered +│ +1 │", result.output)
    assert out.read_text().splitlines() == [
        '{"orderId": "A", "status": "OrderCompleted", "at": "2030-01-01T00:00:00.000000Z", '
        '"reason": null}',
        '{"orderId": "B", "status": "OrderFailed", "at": "2030-01-01T00:00:00.000000Z", '
        '"reason": "no stock"}',
    ]
    with open_engine(data_dir) as eng:
        assert eng.counts(QUEUE).dead_letter == 1


def test_a_status_keeps_the_enqueued_time_of_the_message_that_carried_it(engine, clock,
                                                                          receiver):
    engine.send(QUEUE, _status("A", StatusKind.REQUEST_RECEIVED, 1))
    clock.advance(timedelta(seconds=2))
    engine.send(QUEUE, _status("A", StatusKind.ORDER_COMPLETED, 5))
    result = watch(receiver, 1, timedelta(seconds=10), clock=clock, sleep=_advance(clock))
    assert result.statuses["A"].enqueued_time == T0 + timedelta(seconds=2)


def test_a_change_refused_answer_ends_the_wait_for_that_order(engine, clock, receiver):
    engine.send(QUEUE, _status("A", StatusKind.REQUEST_RECEIVED, 1))
    engine.send(QUEUE, _status("A", StatusKind.CHANGE_REFUSED, 2))
    engine.send(QUEUE, _status("B", StatusKind.ORDER_COMPLETED, 3))
    result = watch(receiver, 2, timedelta(seconds=600), clock=clock, sleep=_advance(clock))
    assert not result.timed_out
    assert clock.now() == T0  # answered at once, not at the 600 s timeout
    assert result.answered == {"A", "B"}
    assert result.statuses["A"].status is StatusKind.CHANGE_REFUSED
    # The stored order's own outcome, if it comes later, still wins and counts once.
    engine.send(QUEUE, _status("A", StatusKind.ORDER_COMPLETED, 9))
    again = watch(receiver, 1, timedelta(seconds=5), clock=clock, sleep=_advance(clock))
    assert again.answered == {"A"} and again.statuses["A"].terminal


def test_peeking_watchers_each_see_every_status_and_consume_nothing(engine, clock, receiver):
    from client.watch import PeekingReceiver

    engine.send(QUEUE, _status("A", StatusKind.ORDER_COMPLETED))
    engine.send(QUEUE, "garbage")
    engine.send(QUEUE, _status("B", StatusKind.REJECTED, reason="quantity: must be > 0"))
    first = watch(PeekingReceiver(receiver.peek), 2, timedelta(seconds=5), clock=clock,
                  sleep=_advance(clock))
    second = watch(PeekingReceiver(receiver.peek), 2, timedelta(seconds=5), clock=clock,
                   sleep=_advance(clock), max_count=1)
    for seen in (first, second):
        assert seen.answered == {"A", "B"} and seen.invalid == 1 and seen.dead_lettered == 0
    counts = engine.counts(QUEUE)
    assert (counts.active, counts.dead_letter) == (3, 0)
    consumed = watch(receiver, 2, timedelta(seconds=5), clock=clock, sleep=_advance(clock))
    assert consumed.answered == {"A", "B"} and consumed.dead_lettered == 1


def test_a_second_consuming_watcher_is_refused_and_told_about_peek(tmp_path):
    import fcntl

    from client.cli import WATCH_LOCK_FILE

    data_dir = tmp_path / "data"
    data_dir.mkdir()  # the local host makes it
    with open_engine(data_dir) as eng:
        eng.send(QUEUE, _status("A", StatusKind.ORDER_COMPLETED))
    with open(data_dir / WATCH_LOCK_FILE.format(queue=QUEUE), "a") as first_watcher:
        fcntl.flock(first_watcher, fcntl.LOCK_EX | fcntl.LOCK_NB)
        refused = CliRunner().invoke(app, ["watch", "--client-id", "acme", "--expect", "1",
                                           "--data-dir", str(data_dir), "--timeout-s", "1"])
        peeked = CliRunner().invoke(app, ["watch", "--client-id", "acme", "--expect", "1",
                                          "--data-dir", str(data_dir), "--peek"],
                                    terminal_width=120)
    assert refused.exit_code == 1
    assert "another watcher is consuming 'replies-acme'" in refused.output
    assert "--peek" in refused.output
    assert peeked.exit_code == 0 and "1 of 1 orders terminal" in peeked.output
    with open_engine(data_dir) as eng:
        assert eng.counts(QUEUE).active == 1  # the peeking watcher left it


def test_watch_counts_the_orders_the_service_dead_lettered_for_this_client(tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()  # the local host makes it
    with open_engine(data_dir) as eng:
        eng.send(QUEUE, _status("A", StatusKind.ORDER_COMPLETED))
        eng.send("orders-acme", "not json")
        (bad,) = eng.receive("orders-acme", 1, "submission")
        eng.dead_letter("orders-acme", bad.lock_token, "InvalidMessage", "(body): must be JSON")
    result = CliRunner().invoke(app, ["watch", "--client-id", "acme", "--expect", "1",
                                      "--data-dir", str(data_dir)], terminal_width=120)
    assert result.exit_code == 0, result.output
    assert re.search(r"│ orders dead-lettered by the service \(orders-acme\) +│ +1 │",
                     result.output)


def test_send_raw_puts_the_body_on_the_submit_queue_unchanged(tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()  # the local host makes it
    body = '{"schemaVersion": 1, "clientId": "acme", "order": {"orderId": "X", "lines": []}}'
    from_stdin = CliRunner().invoke(app, ["send-raw", "-", "--client-id", "acme",
                                          "--data-dir", str(data_dir)], input=body)
    assert from_stdin.exit_code == 0, from_stdin.output
    path = tmp_path / "body.txt"
    path.write_text("not json at all", encoding="utf-8")
    from_file = CliRunner().invoke(app, ["send-raw", str(path), "--client-id", "acme",
                                         "--data-dir", str(data_dir), "--message-id", "m-1"])
    assert from_file.exit_code == 0, from_file.output
    assert "sent 15 bytes to 'orders-acme' as MessageId m-1" in from_file.output
    with open_engine(data_dir) as eng:
        peeked = eng.peek("orders-acme", 10)
    assert [m.body for m in peeked] == [body.encode(), b"not json at all"]
    assert peeked[1].message_id == "m-1"


def test_send_raw_refuses_a_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "body.bin"
    path.write_bytes(b"\xff\xfe")
    result = CliRunner().invoke(app, ["send-raw", str(path), "--client-id", "acme",
                                      "--data-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "must be UTF-8 text" in result.output


def test_a_rejected_answer_without_a_readable_order_id_is_counted_and_consumed(engine, clock,
                                                                              receiver):
    engine.send(QUEUE, _status(None, StatusKind.REJECTED, 1,
                               reason="InvalidJson: body: not valid JSON; nothing was stored"))
    engine.send(QUEUE, _status("B", StatusKind.ORDER_COMPLETED, 2))
    result = watch(receiver, 1, timedelta(seconds=5), clock=clock, sleep=_advance(clock))
    assert result.unread_rejected == ["InvalidJson: body: not valid JSON; nothing was stored"]
    assert set(result.statuses) == {"B"} and result.invalid == 0
    assert engine.counts(QUEUE).active == 0
    console = Console(width=120, record=True)
    console.print(summary_table(result))
    assert re.search(r"Rejected, no readable OrderID\s+│\s+1", console.export_text())


def test_a_full_disk_is_waited_out_and_each_order_counted_once(clock):
    """The local queues' disk fills (the nemesis's disk_full): the watcher retries, loses none."""
    import sqlite3

    from client.watch import ReplyMessage

    full = sqlite3.OperationalError("database or disk is full")
    full.sqlite_errorcode = sqlite3.SQLITE_FULL  # as SQLite sets it

    class FillingReceiver:
        def __init__(self):
            self.receives = 0
            self.completes = 0

        def receive(self, max_count):
            self.receives += 1
            if self.receives == 1:
                raise full
            # Not completed the first time: the same message comes again after its lock.
            return [ReplyMessage(_status("A", StatusKind.ORDER_COMPLETED).encode(), "m1", 1,
                                 f"token{self.receives}")]

        def complete(self, message):
            self.completes += 1
            if self.completes == 1:
                raise full

    receiver = FillingReceiver()
    result = watch(receiver, 1, timedelta(seconds=60), clock=clock, sleep=_advance(clock))
    assert result.statuses["A"].status is StatusKind.ORDER_COMPLETED
    assert (result.terminal, result.disk_full_waits, result.timed_out) == (1, 2, False)


def test_send_raw_help_says_a_refused_body_is_answered_rejected():
    result = CliRunner().invoke(app, ["send-raw", "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "answered 'Rejected'" in text and "never answered" not in text
