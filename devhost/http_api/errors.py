"""Error answers of the Durable HTTP API, in the shape the Python SDK reads.

The extension answers a refused request with ``{"Message": ..., "ExceptionMessage": ...}``;
the SDK's ``start_new`` raises ``ExceptionMessage`` on HTTP 400, so the detail (naming the
field and the rule broken) goes there. Task hub errors carry their own HTTP status
(:class:`devhost.taskhub.store.TaskHubError` and subclasses: 400, 404, 409, 410).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse

from devhost.taskhub.store import TaskHubError

SUMMARIES = {
    400: "One or more of the arguments submitted is incorrect",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    410: "Gone",
    412: "Precondition failed",
    501: "Not implemented",
}
"""The ``Message`` of an error body, by HTTP status."""


class BadRequest(ValueError):
    """A request the API refuses with HTTP 400; the message names the field and the rule."""

    status = 400


def error_response(status: int, detail: str) -> JSONResponse:
    """Build an error answer.

    Parameters
    ----------
    status : int
        HTTP status code.
    detail : str
        What was wrong, naming the field and the rule (becomes ``ExceptionMessage``).

    Returns
    -------
    JSONResponse
        Body ``{"Message": <summary for the status>, "ExceptionMessage": detail}``.
    """
    summary = SUMMARIES.get(status, "The request failed")
    return JSONResponse({"Message": summary, "ExceptionMessage": detail}, status_code=status)


async def handle_error(request: Request, exc: Exception) -> JSONResponse:
    """Starlette exception handler for :class:`BadRequest` and task hub errors."""
    if isinstance(exc, BadRequest | TaskHubError):
        return error_response(exc.status, str(exc))
    raise exc
