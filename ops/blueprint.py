"""Registers the operations functions: the ops summary, metrics snapshot and retention pass.

See docs/operations.md, "``api/ops/summary``" and "Retention: what is deleted, and when".
"""

import json
import logging

import azure.durable_functions as df
import azure.functions as func

from ops.access import AccessDenied, reader_of
from ops.dashboard.web import query
from ops.retention import purge_compensation_log, purge_instances
from ops.summary import SNAPSHOT, build_summary, record_summary
from orders.durable_blueprint import DurableBlueprint
from orders.runtime import services
from orders.threads import off_loop

log = logging.getLogger("orders.ops")
bp = DurableBlueprint()

SUMMARY_ROUTE = "ops/summary"


def _true_or_false(text: str) -> bool:
    """Parse ``true`` or ``false`` (any case)."""
    if text.lower() not in ("true", "false"):
        raise ValueError("must be true or false")
    return text.lower() == "true"


@bp.route(route=SUMMARY_ROUTE, methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
def ops_summary(req: func.HttpRequest) -> func.HttpResponse:
    """Return the ops summary as JSON (``?deadLetters=false`` skips the queue reads); 401/403."""
    try:
        reader_of(req.headers, services().settings)
    except AccessDenied as denied:
        return func.HttpResponse(json.dumps({"error": denied.reason}),
                                 status_code=denied.status, mimetype="application/json")
    try:
        asked = query(req, {"deadLetters": _true_or_false})
    except AccessDenied as bad:
        return func.HttpResponse(json.dumps({"error": bad.reason}), status_code=bad.status,
                                 mimetype="application/json")
    with_dead_letters = asked.get("deadLetters", True)
    summary = build_summary(services(), with_dead_letters=with_dead_letters)
    record_summary(summary)
    return func.HttpResponse(json.dumps(summary), status_code=200, mimetype="application/json")


@bp.timer_trigger(arg_name="timer", schedule="%OPS_SNAPSHOT_SCHEDULE%")
def ops_snapshot(timer: func.TimerRequest) -> None:
    """Refresh the backlog metrics and the summary snapshot the dashboard reads (X8)."""
    svc = services()
    summary = build_summary(svc)
    svc.stores.states.save_snapshot(SNAPSHOT, summary)
    record_summary(summary)
    log.info("ops snapshot: in_flight=%d/%d stuck=%d error=%d compensation_failed=%d "
             "dead_letters=%s", summary["inFlight"], summary["maxInFlight"], summary["stuck"],
             summary["counts"]["Error"], summary["counts"]["CompensationFailed"],
             summary["deadLetters"])


@bp.timer_trigger(arg_name="timer", schedule="%RETENTION_SCHEDULE%")
@bp.durable_client_input(client_name="client")
async def retention_purge(timer: func.TimerRequest, client: df.DurableOrchestrationClient) -> None:
    """Delete compensation log entries and ended instances past their retention (S9, X10)."""
    svc = await off_loop(services)
    await off_loop(purge_compensation_log, svc)
    await purge_instances(client, svc.clock.now(), svc.settings.RETENTION_DAYS,
                          svc.stores.states)
