"""The HTTP 202 polling pattern for Python orchestrators, the same on Azure and locally.

On Azure the Python SDK 1.x's ``context.call_http`` returns a ``202 Accepted`` answer as it
is: the Durable extension polls the ``Location`` of a 202 only when the request asks for it,
and SDK 1.x never asks (https://github.com/Azure/azure-functions-durable-python/issues/380).
The local host answers the same way (SPEC D11, L1). :func:`call_http_polling` implements the
pattern in the orchestrator itself, with durable timers, so it replays deterministically
and behaves identically in both places::

    from durable_http import call_http_polling

    @app.orchestration_trigger(context_name="context")
    def export(context):
        response = yield from call_http_polling(context, "POST", url, content=body)
        return response["statusCode"]

This package is part of the deployed app (it imports nothing of the local host, nor
anything outside the standard library), like ``clocks``.
"""

from __future__ import annotations

from collections.abc import Generator
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urljoin

__all__ = ["DEFAULT_RETRY_AFTER", "DEFAULT_TIMEOUT", "call_http_polling"]

DEFAULT_RETRY_AFTER = timedelta(seconds=30)
"""Pause between polls when a 202 has no usable ``Retry-After`` (the extension's default)."""

DEFAULT_TIMEOUT = timedelta(hours=1)
"""How long, in orchestration time, polling may go on before :class:`TimeoutError`."""


def call_http_polling(context: Any, method: str, uri: str, content: Any = None,
                      headers: dict[str, str] | None = None, *,
                      token_source: Any = None, is_raw_str: bool = False,
                      timeout: timedelta = DEFAULT_TIMEOUT,
                      default_retry_after: timedelta = DEFAULT_RETRY_AFTER
                      ) -> Generator[Any, Any, dict[str, Any]]:
    """Call an HTTP endpoint durably and follow ``202 Accepted`` + ``Location`` to the end.

    Use with ``yield from`` inside an orchestrator. Each step is a durable action: the
    first request is ``context.call_http(method, uri, content, headers)``; while the answer
    is 202 with a ``Location`` header, a durable timer waits ``Retry-After`` (seconds or an
    HTTP date; else ``default_retry_after``), then ``context.call_http("GET", location,
    headers=headers)`` polls (a relative location is resolved against the URL that answered).

    Parameters
    ----------
    context : DurableOrchestrationContext
        The orchestrator's context.
    method, uri : str
        The first request.
    content : str or JSON-serialisable, optional
        Body of the first request (as ``call_http`` takes it).
    headers : dict of str to str, optional
        Sent with the first request and with every poll.
    token_source : ManagedIdentityTokenSource, optional
        As ``call_http`` takes it; used for the first request and every poll.
    is_raw_str : bool
        As ``call_http`` takes it (send a string ``content`` as it is).
    timeout : timedelta
        Polling gives up when the next poll would start later than this after the first
        request (orchestration time, ``context.current_utc_datetime``).
    default_retry_after : timedelta
        Pause when a 202 carries no usable ``Retry-After``.

    Returns
    -------
    dict
        The final answer (``statusCode``, ``headers``, ``content``): the first that is not
        202, or a 202 without ``Location`` (nothing to poll).

    Raises
    ------
    TimeoutError
        If the operation is still answered 202 when ``timeout`` is reached.
    Exception
        What ``call_http`` raises (a network failure), as the SDK raises it.
    """
    deadline = context.current_utc_datetime + timeout
    extra = {"token_source": token_source} if token_source is not None else {}
    first = {**extra, "is_raw_str": True} if is_raw_str else extra
    # The SDK sends back call_http's result untyped: the JSON answer, a dict.
    response: dict[str, Any] = yield context.call_http(method, uri, content, headers, **first)
    polls, poll_uri = 0, uri
    while _status(response) == 202 and (location := _header(response, "Location")):
        now = context.current_utc_datetime
        fire_at = now + _retry_after(response, now, default_retry_after)
        if fire_at > deadline:
            raise TimeoutError(f"{method} {uri}: still 202 Accepted after {polls} polls; "
                               f"the next poll would pass the {timeout} timeout")
        yield context.create_timer(fire_at)
        poll_uri = urljoin(poll_uri, location)
        response = yield context.call_http("GET", poll_uri, None, headers, **extra)
        polls += 1
    return response


def _status(response: Any) -> int | None:
    if isinstance(response, dict):
        return response.get("statusCode")
    return getattr(response, "status_code", None)


def _header(response: Any, name: str) -> str | None:
    headers = response.get("headers") if isinstance(response, dict) else None
    for key, value in (headers or {}).items():
        if key.lower() == name.lower():
            if isinstance(value, list | tuple):
                value = value[0] if value else None
            return str(value) if value else None
    return None


def _retry_after(response: Any, now: datetime, default: timedelta) -> timedelta:
    delay = parse_retry_after(_header(response, "Retry-After"), now)
    return default if delay is None else delay


def parse_retry_after(value: str | None, now: datetime) -> timedelta | None:
    """Parse a ``Retry-After`` header (RFC 9110: delay-seconds or an HTTP-date).

    Parameters
    ----------
    value : str or None
        The header value.
    now : datetime
        Current time (timezone-aware), to turn an HTTP-date into a delay.

    Returns
    -------
    timedelta or None
        The delay (never negative), or None if absent or unparseable.
    """
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return timedelta(seconds=int(value))
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(when - now, timedelta(0))
