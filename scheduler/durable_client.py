"""Raise an external event through the Durable Functions client, with typed failures.

``DurableOrchestrationClient.raise_event`` (azure-functions-durable 1.x) reports 404 and
410 as a plain ``Exception`` with English text only, so :func:`raise_event` makes the
SDK's own request (its ``_get_raise_event_url``, ``_post_async_request`` and
``_function_invocation_id``, present from 1.2 to 1.7; tests run it against the real SDK
client) and maps the status once, in :func:`error_for_status`. Asking ``get_status``
first would cost a round trip per reply, and its answer can change before the raise.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp

from orders.errors import OrderServiceError


class DurableClientError(OrderServiceError):
    """The Durable Functions extension refused or failed a request (``status`` None: no answer)."""

    def __init__(self, message: str, *, status: int | None = None,
                 retryable: bool | None = None) -> None:
        super().__init__(message, retryable=retryable)
        self.status = status


class InstanceNotFoundError(DurableClientError):
    """No orchestration instance has that id (HTTP 404); permanent."""


class InstanceGoneError(DurableClientError):
    """The instance is completed, failed or terminated (HTTP 410); permanent."""


_RETRYABLE_STATUSES = frozenset({408, 429})


def error_for_status(status: int, what: str) -> DurableClientError | None:
    """Map an HTTP status to an error by code only (None for 2xx); ``what`` names the request."""
    if 200 <= status < 300:
        return None
    if status == 404:
        return InstanceNotFoundError(f"{what}: no instance with that id (HTTP 404)",
                                     status=status)
    if status == 410:
        return InstanceGoneError(f"{what}: the instance has ended (HTTP 410)", status=status)
    retryable = status in _RETRYABLE_STATUSES or status >= 500
    return DurableClientError(f"{what}: the Durable Functions extension answered HTTP "
                              f"{status}", status=status, retryable=retryable)


async def raise_event(client: Any, instance_id: str, event_name: str, data: Any) -> None:
    """Raise an external event (JSON-serialisable ``data``), as ``client.raise_event`` does.

    Raises
    ------
    ValueError
        If ``event_name`` is empty.
    InstanceNotFoundError, InstanceGoneError
        HTTP 404 (no such instance) or 410 (it ended); permanent.
    DurableClientError
        Retryable for 408, 429, 5xx and no answer; permanent for any other status.
    """
    if not event_name:
        raise ValueError("event_name: must be a non-empty string")
    what = f"raise event {event_name} on {instance_id}"
    url = client._get_raise_event_url(instance_id, event_name, None, None)
    invocation_id = getattr(client, "_function_invocation_id", None)
    extra = {"function_invocation_id": invocation_id} if invocation_id else {}
    try:
        # The body the SDK sends: the value's JSON text, itself sent as a JSON string.
        status, _ = await client._post_async_request(url, json.dumps(data), **extra)
    except (TimeoutError, aiohttp.ClientError) as exc:
        raise DurableClientError(f"{what}: no answer from the Durable Functions extension: "
                                 f"{type(exc).__name__}: {exc}", retryable=True) from exc
    error = error_for_status(status, what)
    if error is not None:
        raise error
