"""Run one activity work item and turn its outcome into TaskCompleted or TaskFailed.

Inputs and outputs go through the ``azure.functions`` activity trigger converter, as in the
Python worker. The built-in HTTP activity performs ``call_http`` once and returns a
``202 Accepted`` as it is, as on Azure with SDK 1.x (D11, L1;
azure-functions-durable-python#380, see docs/local-host.md), warning once per instance.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime
from typing import Any

import httpx
from azure.functions import meta
from azure.functions.durable_functions import ActivityTriggerConverter

from devhost.app import invoke
from devhost.app.backends import Backend, PayloadTooLarge
from devhost.app.executions import log_failed
from devhost.app.loader import FunctionDef, find_function
from devhost.failures.failure_texts import (
    ACTIVITY_FAILED,
    activity_failure,
    exception_details,
)
from devhost.orchestration.actions import HTTP_ACTIVITY
from devhost.taskhub.events import EventType, event
from devhost.taskhub.store import ActivityWorkItem
from sqlitekit import is_disk_full

log = logging.getLogger("devhost.http")

NO_POLLING_ISSUE = "https://github.com/Azure/azure-functions-durable-python/issues/380"
"""The public issue: the Python SDK 1.x's ``call_http`` does not poll 202 answers."""

_WARNED_MAX = 10_000
_warned: OrderedDict[str, None] = OrderedDict()  # instances warned about a 202, oldest first
_warned_lock = threading.Lock()


def run_activity(item: ActivityWorkItem, activities: dict[str, FunctionDef],
                 now: Callable[[], datetime], backend: Backend | None = None,
                 client_binding: Callable[[], Any] | None = None) -> dict[str, Any]:
    """Execute an activity and return its TaskCompleted or TaskFailed (the extension's texts).

    An output over ``backend``'s payload limit (the Durable Task Scheduler's 1 MB) becomes
    a TaskFailed naming the limit (:func:`oversized_output`). An activity that declares a
    ``durableClient`` input binding gets ``client_binding()``'s JSON there, as on Azure,
    where the client binding may be paired with any trigger (the extension's
    ``DurableClientAttribute``); without ``client_binding`` the activity fails, naming the
    binding.

    Raises
    ------
    Exception
        What the activity raised when it says the disk is full (:func:`sqlitekit.is_disk_full`):
        the host's failure, retried, not the app's.
    """
    started_s = time.monotonic()
    try:
        if item.name == HTTP_ACTIVITY:
            response = call_http(json.loads(item.input or "{}"))
            if response["statusCode"] == 202:
                warn_no_polling(item.instance_id, item.execution_id, response)
            output = json.dumps(response)
        else:
            fdef = find_function(activities, item.name)
            if fdef is None:
                return missing_activity(item, now())
            value = ActivityTriggerConverter.decode(meta.Datum(item.input, "json"),
                                                    trigger_metadata=None) \
                if item.input is not None else None
            result = invoke.call(fdef.func, _arguments(fdef, value, client_binding))
            output = ActivityTriggerConverter.encode(result, expected_type=None).value
        if backend is not None and (problem := backend.payload_problem(
                f"output of activity '{item.name}'", output)) is not None:
            return oversized_output(item, problem, now())
        return event(EventType.TaskCompleted, now(), TaskScheduledId=item.task_id,
                     Result=output)
    except Exception as exc:  # noqa: BLE001 - every failure becomes TaskFailed ...
        if is_disk_full(exc):  # ... but the host's full disk: a host failure (retried)
            raise
        if item.name != HTTP_ACTIVITY:
            log_failed(item.name, started_s, exc)
        reason, details = activity_failure(item.name, exc)
        return event(EventType.TaskFailed, now(), TaskScheduledId=item.task_id,
                     Reason=reason, Details=details)


def _arguments(fdef: FunctionDef, value: Any,
               client_binding: Callable[[], Any] | None) -> dict[str, Any]:
    """Return the activity's keyword arguments: its input and, if it declares one, its client."""
    kwargs = {fdef.trigger_param: value}
    if fdef.client_param:
        if client_binding is None:
            raise RuntimeError(f"activity '{fdef.name}' declares a durableClient binding and "
                               "this worker has no durable client to give it")
        kwargs[fdef.client_param] = client_binding()
    return kwargs


def missing_activity(item: ActivityWorkItem, when: datetime) -> dict[str, Any]:
    """Return the TaskFailed of a work item whose activity the app no longer has.

    For work scheduled before the app changed (calls to unknown names are never scheduled,
    :mod:`devhost.orchestration.function_names`). Host behaviour mirrors
    azure-functions-durable-extension ``Listener/TaskNonexistentActivityShim.cs``.
    """
    message = f"Activity function '{item.name}' does not exist."
    details = exception_details(message, "Microsoft.Azure.WebJobs.FunctionFailedException, "
                                "Microsoft.Azure.WebJobs.Host")
    return event(EventType.TaskFailed, when, TaskScheduledId=item.task_id,
                 Reason=f"Activity function '{item.name}' failed: {message}", Details=details)


def oversized_output(item: ActivityWorkItem, problem: str, when: datetime) -> dict[str, Any]:
    """Return the TaskFailed of an activity whose output the selected backend refuses.

    The orchestrator sees the activity fail (its retry policy applies) instead of an
    instance that never hears back; the text is the local host's, naming the limit (the
    scheduler's service is not public source; docs/fidelity.md, "Backends").
    """
    details = exception_details(problem, f"{PayloadTooLarge.__module__}.PayloadTooLarge")
    return event(EventType.TaskFailed, when, TaskScheduledId=item.task_id,
                 Reason=ACTIVITY_FAILED.format(name=item.name, message=problem), Details=details)


def call_http(request: dict[str, Any]) -> dict[str, Any]:
    """Perform a DurableHttpRequest once; return the DurableHttpResponse dict as it is.

    Raises
    ------
    httpx.HTTPError
        On a network failure (becomes TaskFailed).
    """
    method = request.get("method", "GET").upper()
    headers = {k: v if isinstance(v, str) else ",".join(v)
               for k, v in (request.get("headers") or {}).items()}
    with httpx.Client(timeout=httpx.Timeout(100.0)) as client:
        response = client.request(method, request["uri"], headers=headers,
                                  content=request.get("content"))
        return {"statusCode": response.status_code, "headers": dict(response.headers),
                "content": response.text}


def warn_no_polling(instance_id: str, execution_id: str, response: dict[str, Any]) -> None:
    """Warn once per instance execution that a 202 is returned unpolled, as on Azure (L1)."""
    key = f"{instance_id}\n{execution_id}"
    with _warned_lock:
        if key in _warned:
            return
        _warned[key] = None
        if len(_warned) > _WARNED_MAX:
            _warned.popitem(last=False)
    location = next((v for k, v in (response.get("headers") or {}).items()
                     if k.lower() == "location"), None)
    log.warning("instance '%s': call_http got 202 Accepted%s and returns it as it is: on "
                "Azure the Python SDK 1.x does not poll (the extension polls only when the "
                "request asks for it, and the SDK never does; %s); use "
                "durable_http.call_http_polling to wait for the final answer", instance_id,
                f" (Location: {location})" if location else "", NO_POLLING_ISSUE)
