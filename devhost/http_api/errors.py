"""Error answers of the Durable HTTP API: ``{"Message", "ExceptionMessage"}``, as the extension.

The SDK's ``start_new`` raises ``ExceptionMessage`` on 400, so the detail naming the field and
the rule goes there; task hub errors carry their own status.
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


class BadRequest(ValueError):
    """An HTTP 400; ``summary`` replaces ``Message`` where the extension writes another."""

    status = 400

    def __init__(self, detail: str, summary: str | None = None) -> None:
        super().__init__(detail)
        self.summary = summary


def error_response(status: int, detail: str, summary: str | None = None,
                   exception_type: str | None = None) -> JSONResponse:
    """Build an error answer, ``Message`` by status unless ``summary``.

    The shape of ``HttpRequestMessage.CreateErrorResponse(status, message, exception)``.
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
