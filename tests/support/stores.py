"""SQLite stores with records in chosen states, for the ops unit tests."""

from datetime import timedelta

from clocks import ManualClock
from orders.models import ProcessState, StateRecord
from orders.stores import create_stores


def sqlite_stores(tmp_path, clock=None):
    return create_stores("sqlite", orders_path=tmp_path / "orders.sqlite",
                         state_path=tmp_path / "state.sqlite", clock=clock or ManualClock())


def put(states, order_id, state=ProcessState.PENDING, *, attempt=0, failures=0,
        complete_in_s=None, now=None, **extra):
    now = now or ManualClock().now()
    record = states.create_if_absent(StateRecord.new(order_id, "replies-acme", now)).record
    if state is ProcessState.PENDING:
        return record
    locked = f"{order_id}:{max(attempt, 1)}"
    update = {"process_state": state, "attempt": max(attempt, 1), "failure_count": failures,
              "locked_by": locked if state is not ProcessState.COMPENSATING else
              f"{order_id}:comp:1",
              "complete_by": now + timedelta(seconds=complete_in_s)
              if complete_in_s is not None else None, **extra}
    return states.replace(record.model_copy(update=update))
