"""SQLite stores with records in chosen states, for the ops unit tests."""

import atexit
import json
from datetime import timedelta

from clocks import ManualClock
from orders.lifecycle.ids import order_key
from orders.models import ProcessState, StateRecord
from orders.stores import _sqlite, create_stores


def sqlite_stores(tmp_path, clock=None):
    return create_stores("sqlite", orders_path=tmp_path / "orders.sqlite",
                         state_path=tmp_path / "state.sqlite", clock=clock or ManualClock())


def put(states, order_id, state=ProcessState.PENDING, *, attempt=0, failures=0,
        complete_in_s=None, now=None, client_id=None, **extra):
    """Store a record in ``state``; a legacy one (plain OrderID) unless ``client_id``."""
    now = now or ManualClock().now()
    key = order_id  # a legacy record's key is its OrderID
    first = StateRecord.new(key, "replies-acme", now)
    if client_id is not None:
        key = order_key(client_id, order_id)
        first = first.model_copy(update={"order_key": key, "client_id": client_id,
                                         "client_order_id": first.order_key,
                                         "reply_to": f"replies-{client_id}"})
    record = states.create_if_absent(first).record
    if state is ProcessState.PENDING:
        return record
    locked = f"{key}:{max(attempt, 1)}"
    update = {"process_state": state, "attempt": max(attempt, 1), "failure_count": failures,
              "locked_by": locked if state is not ProcessState.COMPENSATING else
              f"{key}:comp:1",
              "complete_by": now + timedelta(seconds=complete_in_s)
              if complete_in_s is not None else None, **extra}
    return states.replace(record.model_copy(update=update))


def count_store_operations(tmp_path, monkeypatch) -> None:
    """Count this process's store operations from now on (as the benchmark's runs do)."""
    monkeypatch.setenv(_sqlite.COUNTS_DIR_ENV, str(tmp_path / "ops"))
    monkeypatch.setattr(_sqlite, "_counts", None)


def counted_store_operations() -> dict:
    """Write and return the counts since :func:`count_store_operations`: ``counts``, ``callers``."""
    counts = _sqlite.operation_counts()
    assert counts is not None, "count_store_operations was not called"
    atexit.unregister(counts.write)  # its folder, a test's tmp_path, is gone by exit
    counts.write()
    return json.loads(counts.path.read_text())
