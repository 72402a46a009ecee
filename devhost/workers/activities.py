"""Run one activity work item and turn its outcome into TaskCompleted or TaskFailed.

Inputs and outputs go through the ``azure.functions`` activity trigger converter, exactly as
in the Python worker. The host's built-in HTTP activity performs ``context.call_http`` and
follows ``202 Accepted`` + ``Location`` until a final answer (SPEC D11; the Python SDK 1.x
leaves that polling to the host).
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Callable
from datetime import datetime
from typing import Any

import httpx
from azure.functions import meta
from azure.functions.durable_functions import ActivityTriggerConverter

from devhost import invoke
from devhost.app_loader import FunctionDef
from devhost.orchestration.actions import HTTP_ACTIVITY
from devhost.taskhub.events import EventType, event
from devhost.taskhub.store import ActivityWorkItem

DEFAULT_POLL_INTERVAL_S = 1.0
"""Wait between 202 polls when the answer has no Retry-After header."""
MAX_POLLS = 10_000


def run_activity(item: ActivityWorkItem, activities: dict[str, FunctionDef],
                 now: Callable[[], datetime],
                 sleep: Callable[[float], None] = time.sleep) -> dict[str, Any]:
    """Execute an activity and return its completion event.

    Parameters
    ----------
    item : ActivityWorkItem
        The claimed work item.
    activities : dict
        The app's activity functions by name.
    now : callable
        Time source for the event timestamp.
    sleep : callable
        Waits between HTTP 202 polls (seconds).

    Returns
    -------
    dict
        TaskCompleted (``Result`` is the JSON output) or TaskFailed (``Reason`` is
        ``"<ExceptionType>: <message>"``, ``Details`` the traceback).
    """
    try:
        if item.name == HTTP_ACTIVITY:
            output = json.dumps(call_http(json.loads(item.input or "{}"), sleep))
        else:
            fdef = activities.get(item.name)
            if fdef is None:
                raise LookupError(f"The function '{item.name}' doesn't exist, is disabled, "
                                  "or is not an activity function.")
            value = ActivityTriggerConverter.decode(meta.Datum(item.input, "json"),
                                                    trigger_metadata=None) \
                if item.input is not None else None
            result = invoke.call(fdef.func, {fdef.trigger_param: value})
            output = ActivityTriggerConverter.encode(result, expected_type=None).value
        return event(EventType.TaskCompleted, now(), TaskScheduledId=item.task_id,
                     Result=output)
    except Exception as exc:  # noqa: BLE001 - every failure becomes TaskFailed
        return event(EventType.TaskFailed, now(), TaskScheduledId=item.task_id,
                     Reason=f"{type(exc).__name__}: {exc}",
                     Details="".join(traceback.format_exception(exc)))


def call_http(request: dict[str, Any], sleep: Callable[[float], None]) -> dict[str, Any]:
    """Perform a DurableHttpRequest, following 202 + Location until a final answer.

    Parameters
    ----------
    request : dict
        ``{"method", "uri", "content", "headers"}`` as the SDK serialises it.
    sleep : callable
        Waits between polls; honours ``Retry-After`` (seconds) when present.

    Returns
    -------
    dict
        ``{"statusCode", "headers", "content"}`` (the extension's DurableHttpResponse).

    Raises
    ------
    httpx.HTTPError
        On a network failure (becomes TaskFailed).
    """
    method = request.get("method", "GET").upper()
    uri = request["uri"]
    headers = {k: v if isinstance(v, str) else ",".join(v)
               for k, v in (request.get("headers") or {}).items()}
    content = request.get("content")
    with httpx.Client(timeout=httpx.Timeout(100.0)) as client:
        response = client.request(method, uri, headers=headers, content=content)
        polls = 0
        while response.status_code == 202 and "location" in response.headers \
                and polls < MAX_POLLS:
            wait = response.headers.get("retry-after")
            sleep(float(wait) if wait and wait.isdigit() else DEFAULT_POLL_INTERVAL_S)
            location = httpx.URL(uri).join(response.headers["location"])
            response = client.get(location, headers=headers)
            polls += 1
        return {"statusCode": response.status_code, "headers": dict(response.headers),
                "content": response.text}
