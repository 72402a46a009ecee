import logging
import threading
from types import SimpleNamespace

import pytest

from orders.observability.logs import (
    LOG_FORMAT,
    current_ids,
    install_log_record_factory,
    log_context,
    order_logger,
    replay_safe_logger,
)

log = logging.getLogger("orders.test.ops")


@pytest.fixture(autouse=True)
def factory():
    install_log_record_factory()


def ids(record):
    return record.order_id, record.instance_id, record.attempt


def test_every_record_inside_a_context_carries_the_ids(caplog):
    caplog.set_level(logging.INFO, logger="orders")
    with log_context(instance_id="ORD-1:2"):
        log.info("inside")
        with log_context(order_key="ORD-1", attempt=3):
            logging.getLogger("orders.other").info("nested")
    log.info("outside")
    inside, nested, outside = caplog.records
    assert ids(inside) == ("ORD-1", "ORD-1:2", 2)
    assert ids(nested) == ("ORD-1", "ORD-1:2", 3)
    assert ids(outside) == ("-", "-", "-")
    assert inside.log_ids == "order=ORD-1 instance=ORD-1:2 attempt=2"
    assert current_ids().order_key is None


def test_text_format_shows_the_ids(caplog):
    caplog.set_level(logging.INFO, logger="orders")
    with log_context("ORD-9"):
        log.info("hello %s", "x")
    text = logging.Formatter(LOG_FORMAT).format(caplog.records[0])
    assert "[order=ORD-9 instance=- attempt=-] hello x" in text


def test_contexts_do_not_leak_between_threads(caplog):
    caplog.set_level(logging.INFO, logger="orders")
    inside = threading.Event()
    done = threading.Event()

    def worker():
        with log_context("ORD-T", "ORD-T:1"):
            inside.set()
            done.wait(5)
            log.info("worker")

    thread = threading.Thread(target=worker)
    thread.start()
    inside.wait(5)
    log.info("main")
    done.set()
    thread.join(5)
    by_message = {r.getMessage(): ids(r) for r in caplog.records}
    assert by_message == {"main": ("-", "-", "-"), "worker": ("ORD-T", "ORD-T:1", 1)}


def test_order_logger_binds_ids_and_reports_the_callers_line(caplog):
    caplog.set_level(logging.INFO, logger="orders")
    bound = order_logger(log, "ORD-2", attempt=4)
    bound.warning("charged")
    (record,) = caplog.records
    assert ids(record) == ("ORD-2", "-", 4)
    assert record.filename == "test_logs.py" and record.funcName.startswith("test_order_logger")


def test_replay_safe_logger_is_silent_while_replaying(caplog):
    caplog.set_level(logging.INFO, logger="orders")
    context = SimpleNamespace(instance_id="ORD-3:1", is_replaying=True)
    wlog = replay_safe_logger(context, log)
    wlog.info("first episode")  # replaying: dropped
    context.is_replaying = False
    wlog.info("new work")
    assert [(r.getMessage(), *ids(r)) for r in caplog.records] == [
        ("new work", "ORD-3", "ORD-3:1", 1)]


def test_unparseable_instance_ids_keep_only_what_is_known(caplog):
    caplog.set_level(logging.INFO, logger="orders")
    with log_context(instance_id="0f3c-guid"):
        log.info("x")
    assert ids(caplog.records[0]) == ("-", "0f3c-guid", "-")
