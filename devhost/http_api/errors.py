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

INTERNAL_ERROR = "Something went wrong while processing your request"
"""``HttpApiHandler``'s ``Message`` for an exception it does not answer otherwise (500)."""

SUMMARIES = {
    400: "One or more of the arguments submitted is incorrect",
    500: INTERNAL_ERROR,
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    410: "Gone",
    412: "Precondition failed",
    501: "Not implemented",
}
"""The ``Message`` of an error body, by HTTP status."""


class BadRequest(ValueError):
    """A request the API refuses with HTTP 400; the message names the field and the rule.

    ``summary`` replaces the body's ``Message`` where the extension writes another one
    (``Invalid JSON content``, ``InstanceId does not match a valid orchestration
    instance.``).
    """

    status = 400

    def __init__(self, detail: str, summary: str | None = None) -> None:
        super().__init__(detail)
        self.summary = summary


def error_response(status: int, detail: str, summary: str | None = None,
                   exception_type: str | None = None) -> JSONResponse:
    """Build an error answer.

    Parameters
    ----------
    status : int
        HTTP status code.
    detail : str
        What was wrong, naming the field and the rule (becomes ``ExceptionMessage``).
    summary : str, optional
        The body's ``Message``; default the one for the status (:data:`SUMMARIES`).
    exception_type : str, optional
        ``ExceptionType`` of the extension's answer, when it names the .NET exception.

    Returns
    -------
    JSONResponse
        Body ``{"Message": <summary>, "ExceptionMessage": detail[, "ExceptionType": ...]}``
        (the shape of ``HttpRequestMessage.CreateErrorResponse(status, message, exception)``).
    """
    body = {"Message": summary or SUMMARIES.get(status, "The request failed"),
            "ExceptionMessage": detail}
    if exception_type:
        body["ExceptionType"] = exception_type
    return JSONResponse(body, status_code=status)


async def handle_error(request: Request, exc: Exception) -> JSONResponse:
    """Starlette exception handler for :class:`BadRequest` and task hub errors."""
    if isinstance(exc, BadRequest):
        return error_response(exc.status, str(exc), exc.summary)
    if isinstance(exc, TaskHubError):
        return error_response(exc.status, str(exc), exc.summary, exc.exception_type)
    raise exc
