"""Registers the operator dashboard: a page, its two static files and four JSON endpoints.

The JSON endpoints are guarded by :mod:`ops.access`; docs/operations.md, "Dashboard".
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import azure.durable_functions as df
import azure.functions as func

from azurekit.client_ids import check_client_id
from ops.dashboard.detail import DetailRequestError, order_detail, resolve_key, status_json
from ops.dashboard.overview import build_overview
from ops.dashboard.web import (
    Problem,
    boolean,
    check_details,
    int_from,
    json_body,
    json_response,
    operator_of,
    problem_response,
    query,
    require_caller,
    respond,
    text_up_to,
)
from ops.inventory import stock_of
from ops.order_report import attempt_ids
from ops.resubmit import ResubmitOutcome, resubmit
from orders.durable_blueprint import DurableBlueprint
from orders.runtime import services
from orders.stores.errors import PreconditionFailedError
from orders.threads import off_loop

bp = DurableBlueprint()
log = logging.getLogger("orders.ops.dashboard")

STATIC = Path(__file__).resolve().parent / "static"
ASSETS = {"dashboard.js": "text/javascript", "dashboard.css": "text/css"}
DEFAULT_LIMIT = 50
MAX_LIMIT = 1000
RESUBMIT_STATUS = {ResubmitOutcome.RESUBMITTED: 200, ResubmitOutcome.NOT_IN_ERROR: 409,
                   ResubmitOutcome.NOT_FOUND: 404}
ORDER_PARAMS = {"client": check_client_id, "orderId": text_up_to(200), "details": boolean}
"""``client`` is checked by the one client-id rule (S8) the whole app uses."""


@bp.route(route="ops/dashboard", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
def ops_dashboard(req: func.HttpRequest) -> func.HttpResponse:
    """Return the dashboard page (no data: it asks the JSON endpoints)."""
    return respond((STATIC / "index.html").read_bytes(), "text/html")


@bp.route(route="ops/dashboard/assets/{name}", methods=["GET"],
          auth_level=func.AuthLevel.ANONYMOUS)
def ops_dashboard_asset(req: func.HttpRequest) -> func.HttpResponse:
    """Return the page's script or style sheet; 404 for any other name."""
    name = req.route_params.get("name", "")
    if name not in ASSETS:
        return problem_response(Problem(404, f"no such asset; there are: {', '.join(ASSETS)}"))
    return respond((STATIC / name).read_bytes(), ASSETS[name])


@bp.route(route="ops/dashboard/api/overview", methods=["GET"],
          auth_level=func.AuthLevel.ANONYMOUS)
def ops_dashboard_overview(req: func.HttpRequest) -> func.HttpResponse:
    """Return the main view as JSON (``limit``: most orders per attention list, 1-1000).

    ``details=true`` shows dead-lettered bodies whole; it needs the details role (X10).
    """
    try:
        settings = services().settings
        require_caller(req, settings)
        params = query(req, {"limit": int_from(1, MAX_LIMIT), "details": boolean})
        details = check_details(req, params.get("details", False), settings)
    except Problem as problem:
        return problem_response(problem)
    return json_response(build_overview(services(), params.get("limit", DEFAULT_LIMIT),
                                        details=details))


@bp.route(route="ops/dashboard/api/order", methods=["GET"],
          auth_level=func.AuthLevel.ANONYMOUS)
@bp.durable_client_input(client_name="client")
async def ops_dashboard_order(req: func.HttpRequest,
                              client: df.DurableOrchestrationClient) -> func.HttpResponse:
    """Return one order's detail as JSON; 400 for a malformed name, 404 if unknown."""
    try:
        require_caller(req, (await off_loop(services)).settings)
        params = query(req, ORDER_PARAMS)
        if "orderId" not in params:
            raise Problem(400, "query parameter 'orderId' is required (with 'client': the "
                               "client's OrderID; alone: an order key such as acme~ORD-1)")
        key = resolve_key(params.get("client"), params["orderId"])
        svc = await off_loop(services)
        details = check_details(req, params.get("details", False), svc.settings)
    except DetailRequestError as exc:
        return problem_response(Problem(400, str(exc)))
    except Problem as problem:
        return problem_response(problem)
    record = await off_loop(svc.stores.states.get, key)
    statuses = {iid: await _status(client, iid) for iid in
                (attempt_ids(record) if record is not None else [])}
    detail = await off_loop(order_detail, svc, key, statuses, details=details)
    if detail is None:
        return problem_response(Problem(404, f"no order {key}: no state record and no order"))
    return json_response(detail)


async def _status(client: df.DurableOrchestrationClient, instance_id: str
                  ) -> dict[str, Any] | Exception | None:
    """Return an attempt's status JSON, or the exception that kept it from being read."""
    try:
        status = await client.get_status(instance_id, show_history=True,
                                         show_history_output=True, show_input=True)
    except Exception as exc:  # noqa: BLE001 - shown on its attempt; the others still show
        log.warning("dashboard: cannot read the status of %s", instance_id, exc_info=True)
        return exc
    return status_json(status)


@bp.route(route="ops/dashboard/api/stock", methods=["GET"],
          auth_level=func.AuthLevel.ANONYMOUS)
def ops_dashboard_stock(req: func.HttpRequest) -> func.HttpResponse:
    """Return one SKU's stock as JSON; 400 for a missing or malformed SKU, 404 if unknown.

    ``details=true`` adds each hold's units (an order's line, X10); it needs the details role.
    """
    try:
        settings = services().settings
        require_caller(req, settings)
        params = query(req, {"sku": text_up_to(64), "details": boolean})
        if "sku" not in params:
            raise Problem(400, "query parameter 'sku' is required (e.g. P1-S2)")
        details = check_details(req, params.get("details", False), settings)
    except Problem as problem:
        return problem_response(problem)
    stock = stock_of(services(), params["sku"], details=details)
    if stock is None:
        return problem_response(Problem(404, f"no stock item for sku {params['sku']}"))
    return json_response(stock)


@bp.route(route="ops/dashboard/api/resubmit", methods=["POST"],
          auth_level=func.AuthLevel.ANONYMOUS)
def ops_dashboard_resubmit(req: func.HttpRequest) -> func.HttpResponse:
    """Resubmit an order in Error, as ``python -m opscli resubmit`` does (S7).

    200 when resubmitted, 409 when the order is not in Error or its record kept changing
    under other writers, 404 when unknown; 400, 401, 403, 413 or 415 for a malformed or
    unauthorised request (in Azure the caller needs the app role ``Orders.Operator``).
    """
    try:
        query(req, {})
        operator = operator_of(req, services().settings)
        body = json_body(req)
        unknown = set(body) - {"client", "orderId", "reason"}
        if unknown:
            raise Problem(400, f"unknown field(s) {sorted(unknown)}; send client, orderId "
                               "and reason")
        order_id, client_id, reason = body.get("orderId"), body.get("client"), body.get(
            "reason", "")
        if not isinstance(order_id, str) or not isinstance(client_id, str | None) or \
                not isinstance(reason, str) or len(reason) > 500 or \
                any(ch < " " or ch == "\x7f" for ch in reason):
            raise Problem(400, "orderId must be text, client text or null, reason text of at "
                               "most 500 characters with no control characters (no line "
                               "breaks: it is written to the log as one line)")
        key = resolve_key(client_id, order_id)
    except DetailRequestError as exc:
        return problem_response(Problem(400, str(exc)))
    except Problem as problem:
        return problem_response(problem)
    try:
        result = resubmit(services().stores.states, key, operator=operator,
                          reason=reason or "dashboard")
    except PreconditionFailedError:
        return problem_response(Problem(409, f"order {key}: its record kept changing under "
                                             "other writers; nothing was resubmitted, try "
                                             "again"))
    answer = {"outcome": result.outcome.value, "orderId": result.order_key,
              "state": result.state.value if result.state else None,
              "nextAttempt": result.next_attempt, "message": result.message}
    if result.outcome is not ResubmitOutcome.RESUBMITTED:
        answer["error"] = result.message
    return json_response(answer, RESUBMIT_STATUS[result.outcome])
