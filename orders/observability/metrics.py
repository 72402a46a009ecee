"""The service's OpenTelemetry metrics, behind small ``record_*`` functions (X8).

Instruments come from the global provider, a no-op until one is configured, so recording
is always safe; tests bind their own with :func:`install`. Names, attributes and alerts:
docs/operations.md.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from opentelemetry import metrics

METER_NAME = "orders"

CIRCUIT_STATE_VALUES = {"closed": 0, "half_open": 1, "open": 2}


_INSTRUMENTS: tuple[tuple[str, str, str, str], ...] = (
    ("gauge", "orders.state.count", "{order}", "Orders by ProcessState"),
    ("gauge", "orders.in_flight", "{order}",
     "Pending + Processing + Compensating orders (admission backlog)"),
    ("gauge", "orders.in_flight.limit", "{order}", "MAX_IN_FLIGHT"),
    ("gauge", "orders.stuck", "{order}",
     "Processing or Compensating orders whose CompleteBy has passed"),
    ("counter", "orders.submissions", "{message}",
     "Order messages by outcome (accepted, rejected, dead_lettered)"),
    ("counter", "orders.recoveries", "{order}",
     "Supervisor recoveries by outcome (retried, held_back, gave_up, overdue, skipped)"),
    ("counter", "orders.compensations", "{order}", "Compensations by outcome"),
    ("counter", "orders.resubmissions", "{order}", "Operator resubmissions"),
    ("counter", "inventory.out_of_stock", "{order}",
     "Orders failed because a line asked for more units than its SKU had"),
    ("counter", "agent.requests", "{request}",
     "Agent requests handled, by service, operation and outcome"),
    ("counter", "agent.calls", "{call}", "HTTP calls to remote services"),
    ("counter", "agent.replies.ignored", "{reply}",
     "Replies raised on an attempt's event that answer no request it has outstanding"),
    ("counter", "agent.retries", "{call}", "Calls after the first per request"),
    ("gauge", "agent.circuit.state", "1", "Circuit breaker state: 0 closed, 1 half-open, 2 open"),
    ("histogram", "supervisor.scan.rows_read", "{row}", "Rows read per scan"),
    ("histogram", "supervisor.scan.request_charge", "RU", "Cosmos DB request units per scan"),
    ("histogram", "supervisor.scan.duration", "s", "Duration of one scan"),
    ("gauge", "servicebus.dead_letter.depth", "{message}",
     "Messages in a queue's dead-letter subqueue"),
)


def _create_instruments(meter: metrics.Meter) -> dict[str, Any]:
    return {name: getattr(meter, f"create_{kind}")(name, unit=unit, description=description)
            for kind, name, unit, description in _INSTRUMENTS}


_lock = threading.Lock()
_instruments = _create_instruments(metrics.get_meter(METER_NAME))


def install(provider: Any | None) -> None:
    """Bind the instruments to ``provider`` (tests), or to the global provider if None."""
    global _instruments
    meter = (provider.get_meter(METER_NAME) if provider is not None
             else metrics.get_meter(METER_NAME))
    with _lock:
        _instruments = _create_instruments(meter)


def record_submission(accepted: bool, reason: str | None = None) -> None:
    """Count one order message; a refusal's ``reason``: ``AdmissionControl`` (X3) or dead-letter."""
    if accepted:
        outcome = "accepted"
    else:
        outcome = "rejected" if reason == "AdmissionControl" else "dead_lettered"
    _instruments["orders.submissions"].add(1, {"outcome": outcome, "reason": reason or ""})


def record_backlog(in_flight: int, limit: int) -> None:
    """Set the admission backlog and its limit (X3)."""
    _instruments["orders.in_flight"].set(in_flight)
    _instruments["orders.in_flight.limit"].set(limit)


def record_state_counts(counts: Mapping[Any, int]) -> None:
    """Set the number of orders in each ProcessState."""
    for state, count in counts.items():
        _instruments["orders.state.count"].set(
            count, {"state": str(getattr(state, "value", state))})


def record_stuck(count: int) -> None:
    """Set the number of supervised orders whose CompleteBy has passed."""
    _instruments["orders.stuck"].set(count)


def record_recovery(outcome: str, count: int = 1) -> None:
    """Count supervisor recoveries (V2) by ``outcome``, as docs/operations.md lists them."""
    if count:
        _instruments["orders.recoveries"].add(count, {"outcome": outcome})


def record_compensation(outcome: str) -> None:
    """Count one finished compensation (S9): ``"compensated"`` or ``"failed"``."""
    _instruments["orders.compensations"].add(1, {"outcome": outcome})


def record_out_of_stock() -> None:
    """Count one order whose reservation found a SKU short (a permanent failure)."""
    _instruments["inventory.out_of_stock"].add(1)


def record_ignored_reply(operation: str) -> None:
    """Count one reply an orchestration ignored: it answers no outstanding request (A4)."""
    _instruments["agent.replies.ignored"].add(1, {"operation": operation})


def record_resubmission(outcome: str) -> None:
    """Count one operator resubmission by outcome."""
    _instruments["orders.resubmissions"].add(1, {"outcome": outcome})


def record_agent_call(service: str, attempts: int, outcome: str = "",
                      operation: str = "") -> None:
    """Count one agent request with its HTTP calls and retries (A1, A5, X2)."""
    _instruments["agent.requests"].add(1, {"service": service, "operation": operation,
                                           "outcome": outcome})
    if attempts:
        _instruments["agent.calls"].add(attempts, {"service": service})
    if attempts > 1:
        _instruments["agent.retries"].add(attempts - 1, {"service": service})


def record_circuit_state(service: str, state: str) -> None:
    """Set a service's circuit state as this process sees it (A5)."""
    _instruments["agent.circuit.state"].set(CIRCUIT_STATE_VALUES.get(str(state), -1),
                                            {"service": service})


def record_scan(rows: int, duration_s: float, request_charge: float | None = None) -> None:
    """Record one supervisor scan's cost (V1)."""
    _instruments["supervisor.scan.rows_read"].record(rows)
    _instruments["supervisor.scan.duration"].record(duration_s)
    if request_charge is not None:
        _instruments["supervisor.scan.request_charge"].record(request_charge)


def record_dead_letters(queue: str, depth: int) -> None:
    """Set a queue's dead-letter depth."""
    _instruments["servicebus.dead_letter.depth"].set(depth, {"queue": queue})
