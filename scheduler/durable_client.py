"""Raise an external event through the Durable Functions client, with typed failures.

Why this module: ``DurableOrchestrationClient.raise_event`` (azure-functions-durable 1.x)
reports 404 (no such instance) and 410 (instance completed, failed or terminated) by
raising a plain ``Exception`` whose only content is English text, so its caller could tell
a late reply from a failure only by reading that text. STYLE 15 forbids that, so
:func:`raise_event` makes the very request the SDK makes (the SDK's own URL builder, HTTP
helper and invocation-id header) and maps the HTTP status it returns, once, in
:func:`error_for_status`.

Why not ask ``get_status`` first: that costs a second round trip on every reply, and the
answer can change between the two calls. The status of the one request that raised the
event is the answer, in one round trip, common case or not. The price is three
underscore members of the SDK client (``_get_raise_event_url``, ``_post_async_request``,
``_function_invocation_id``, present from 1.2 to 1.7); the tests run this function
against the real SDK client and the local host's HTTP API, so an SDK upgrade that
changes them fails a test, not production.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp

from orders.errors import OrderServiceError


class DurableClientError(OrderServiceError):
    """The Durable Functions extension refused or failed a request.

    Permanent unless ``retryable``: 408, 429 and 5xx answers, and no answer at all, are
    retryable; any other status is permanent.

    Parameters
    ----------
    message : str
        What failed.
    status : int or None
        The HTTP status the extension answered with; None if it did not answer.
    retryable : bool, optional
        Overrides the class default (False).

    Attributes
    ----------
    status : int or None
        As given.
    """

    def __init__(self, message: str, *, status: int | None = None,
                 retryable: bool | None = None) -> None:
        super().__init__(message, retryable=retryable)
        self.status = status


class InstanceNotFoundError(DurableClientError):
    """No orchestration instance has that id (HTTP 404); permanent."""


class InstanceGoneError(DurableClientError):
    """The instance is completed, failed or terminated (HTTP 410); permanent."""


_RETRYABLE_STATUSES = frozenset({408, 429})
"""Client-error statuses that pass by themselves (timeout, throttled); 5xx are too."""


def error_for_status(status: int, what: str) -> DurableClientError | None:
    """Map an HTTP status of the Durable Functions HTTP API to an error, by code only.

    Parameters
    ----------
    status : int
        The HTTP status of the answer.
    what : str
        The request, for the message (e.g. ``raise event Reply on instance-O1-1``).

    Returns
    -------
    DurableClientError or None
        None for 2xx. 404 -> :class:`InstanceNotFoundError`, 410 ->
        :class:`InstanceGoneError` (both permanent); 408, 429 and 5xx ->
        :class:`DurableClientError` with ``retryable`` True; any other status ->
        :class:`DurableClientError`, permanent (400: the request itself is wrong).
    """
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
    """Raise an external event on an instance, as ``client.raise_event`` does.

    Parameters
    ----------
    client : azure.durable_functions.DurableOrchestrationClient
        The client from the function's durable client binding.
    instance_id : str
        The orchestration instance to deliver to.
    event_name : str
        The event the orchestration waits for.
    data : Any
        JSON-serialisable event data.

    Raises
    ------
    ValueError
        If ``event_name`` is empty (as the SDK refuses it).
    InstanceNotFoundError
        Permanent: HTTP 404, no instance with that id.
    InstanceGoneError
        Permanent: HTTP 410, the instance ended; the event was not queued.
    DurableClientError
        Retryable for 408, 429, 5xx and for no answer (connection failed, timed out);
        permanent for any other status.
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
