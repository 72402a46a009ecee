"""The HTTP 202 polling pattern for Python orchestrators, the same on Azure and locally.

SDK 1.x's ``context.call_http`` returns a 202 as it is: the extension polls ``Location``
only when asked, and 1.x never asks
(https://github.com/Azure/azure-functions-durable-python/issues/380); the local host
answers alike (D11, L1). Deployed with the app; standard library only.
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
"""Longest polling, in orchestration time, before :class:`TimeoutError`."""


def call_http_polling(context: Any, method: str, uri: str, content: Any = None,
                      headers: dict[str, str] | None = None, *,
                      token_source: Any = None, is_raw_str: bool = False,
                      timeout: timedelta = DEFAULT_TIMEOUT,
                      default_retry_after: timedelta = DEFAULT_RETRY_AFTER
                      ) -> Generator[Any, Any, dict[str, Any]]:
    """Call ``uri`` durably (``yield from``) and follow ``202`` + ``Location`` with durable timers.

    Polls ``GET`` with ``headers`` after ``Retry-After`` (else ``default_retry_after``); returns
    the first answer not 202, or a 202 without ``Location``. Raises TimeoutError past
    ``timeout``, and whatever ``call_http`` raises.
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
    """Parse ``Retry-After`` (RFC 9110 seconds or HTTP-date) as a delay >= 0; None if unusable."""
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
