"""The operations summary: backlog, states, stuck orders, dead letters, budget (X3, X8).

One function builds what ``api/ops/summary``, the CLI and the metrics snapshot show, so
they cannot disagree.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ops.dead_letters import dead_letter_depths
from ops.queries import count_stuck
from orders.budget import max_calls_per_service
from orders.models import IN_FLIGHT_STATES, ProcessState, format_utc
from orders.models.messages import submit_queue
from orders.observability import metrics
from orders.queues import load_queue_limits


def watched_queues(settings: Any) -> list[str]:
    """Return the queues whose dead letters the summary counts (with each ``orders-<clientId>``)."""
    return [*load_queue_limits(), *(submit_queue(c) for c in settings.order_clients)]


def build_summary(services: Any, *, with_dead_letters: bool = True) -> dict[str, Any]:
    """Collect the figures of the ops summary (JSON-ready; docs/operations.md, "api/ops/summary").

    ``with_dead_letters`` reads the depths: one request per queue in Azure.
    """
    settings = services.settings
    now = services.clock.now()
    counts = services.stores.states.count_by_state(None)
    in_flight = sum(counts.get(state, 0) for state in IN_FLIGHT_STATES)
    stuck, truncated = count_stuck(services.stores.states, now)
    queues = load_queue_limits()
    depths, note = (dead_letter_depths(services.depths, watched_queues(settings))
                    if with_dead_letters else (None, "not read"))
    limit = settings.MAX_IN_FLIGHT
    return {
        "at": format_utc(now),
        "counts": {state.value: counts.get(state, 0) for state in ProcessState},
        "total": sum(counts.values()),
        "inFlight": in_flight,
        "maxInFlight": limit,
        "inFlightUtilization": round(in_flight / limit, 4),
        "stuck": stuck,
        "stuckTruncated": truncated,
        "deadLetters": depths,
        "deadLetterNote": note,
        "circuits": {name: state.value for name, state in services.breakers.states().items()},
        "retryBudget": {"budget": settings.RETRY_BUDGET_CALLS_PER_SERVICE,
                        "maxCallsPerService": max_calls_per_service(settings, queues)},
    }


SNAPSHOT = "ops-summary"
"""Name of the summary snapshot in the state store (``ops_snapshot`` saves it)."""

SNAPSHOT_MAX_AGE = timedelta(seconds=90)
"""Oldest snapshot whose final-state counts the dashboard shows; older, it builds a new one."""


def current_summary(services: Any) -> dict[str, Any]:
    """Return the summary with its in-flight figures read now and its final counts saved.

    The figures the dashboard shows beside its tables (the in-flight states' counts,
    ``inFlight``, ``stuck``, circuits) are read at the moment of the call, so a count
    cannot disagree with the list under it. Those reads are bounded by ``MAX_IN_FLIGHT``
    whatever the store holds. The final states' counts grow with the store: they come
    from the saved snapshot while it is at most :data:`SNAPSHOT_MAX_AGE` old (else one
    is built and saved), and ``finalCountsAt`` says when they were read (X8).
    """
    states = services.stores.states
    saved = states.load_snapshot(SNAPSHOT)
    now = services.clock.now()
    if saved is None or now - datetime.fromisoformat(saved["at"]) > SNAPSHOT_MAX_AGE:
        summary = build_summary(services)
        states.save_snapshot(SNAPSHOT, summary)
        return {**summary, "finalCountsAt": summary["at"]}
    live = states.count_by_state(IN_FLIGHT_STATES)
    counts = {**saved["counts"], **{state.value: live.get(state, 0) for state in live}}
    in_flight = sum(live.values())
    stuck, truncated = count_stuck(states, now)
    limit = services.settings.MAX_IN_FLIGHT
    return {**saved, "at": format_utc(now), "finalCountsAt": saved["at"], "counts": counts,
            "total": sum(counts.values()), "inFlight": in_flight,
            "inFlightUtilization": round(in_flight / limit, 4), "maxInFlight": limit,
            "stuck": stuck, "stuckTruncated": truncated,
            "circuits": {name: state.value
                         for name, state in services.breakers.states().items()}}


def record_summary(summary: dict[str, Any]) -> None:
    """Set the backlog gauges from a summary (the periodic snapshot's metrics, X8)."""
    metrics.record_state_counts(summary["counts"])
    metrics.record_backlog(summary["inFlight"], summary["maxInFlight"])
    metrics.record_stuck(summary["stuck"])
    for queue, depth in (summary["deadLetters"] or {}).items():
        metrics.record_dead_letters(queue, depth)
    for service, state in summary["circuits"].items():
        metrics.record_circuit_state(service, state)
