"""Registers the operations functions: the ops summary, metrics snapshot and retention pass.

``GET api/ops/summary`` answers :func:`ops.summary.build_summary` as JSON (in Azure for
callers signed in through App Service authentication, :mod:`ops.access`; the local host
serves it under ``/api/ops/summary``). The timer
``ops_snapshot`` (``OPS_SNAPSHOT_SCHEDULE``) computes the same figures and sets the backlog
gauges, so orders by state, the in-flight backlog, stuck orders and dead-letter depth reach
the metrics exporter even when nobody asks for the summary. The timer ``retention_purge``
(``RETENTION_SCHEDULE``) deletes compensation log entries past their retention and
purges ended orchestration instances older than ``RETENTION_DAYS`` through the durable
client (:mod:`ops.retention`).
"""

import asyncio
import json
import logging

import azure.durable_functions as df
import azure.functions as func

from ops.access import AccessDenied, caller_of
from ops.retention import purge_compensation_log, purge_instances
from ops.summary import build_summary, record_summary
from orders.durable_blueprint import DurableBlueprint
from orders.runtime import services

log = logging.getLogger("orders.ops")
bp = DurableBlueprint()

SUMMARY_ROUTE = "ops/summary"


@bp.route(route=SUMMARY_ROUTE, methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
def ops_summary(req: func.HttpRequest) -> func.HttpResponse:
    """Return the ops summary as JSON (``?deadLetters=false`` skips the queue reads).

    401 or 403 with ``{"error": reason}`` for a caller :func:`ops.access.caller_of` refuses.
    """
    try:
        caller_of(req.headers, services().settings)
    except AccessDenied as denied:
        return func.HttpResponse(json.dumps({"error": denied.reason}),
                                 status_code=denied.status, mimetype="application/json")
    with_dead_letters = req.params.get("deadLetters", "true").lower() != "false"
    summary = build_summary(services(), with_dead_letters=with_dead_letters)
    record_summary(summary)
    return func.HttpResponse(json.dumps(summary), status_code=200, mimetype="application/json")


@bp.timer_trigger(arg_name="timer", schedule="%OPS_SNAPSHOT_SCHEDULE%")
def ops_snapshot(timer: func.TimerRequest) -> None:
    """Refresh the backlog metrics from the state store and the queues (SPEC X8)."""
    summary = build_summary(services())
    record_summary(summary)
    log.info("ops snapshot: in_flight=%d/%d stuck=%d error=%d compensation_failed=%d "
             "dead_letters=%s", summary["inFlight"], summary["maxInFlight"], summary["stuck"],
             summary["counts"]["Error"], summary["counts"]["CompensationFailed"],
             summary["deadLetters"])


@bp.timer_trigger(arg_name="timer", schedule="%RETENTION_SCHEDULE%")
@bp.durable_client_input(client_name="client")
async def retention_purge(timer: func.TimerRequest, client: df.DurableOrchestrationClient) -> None:
    """Delete compensation log entries and ended instances past their retention (S9, X10)."""
    svc = await asyncio.to_thread(services)
    await asyncio.to_thread(purge_compensation_log, svc)
    await purge_instances(client, svc.clock.now(), svc.settings.RETENTION_DAYS,
                          svc.stores.states)
