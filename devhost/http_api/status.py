"""The instance status payload of the Durable HTTP API and its HTTP status code.

Shape and codes follow the documented "Get instance status" API: ``name``, ``instanceId``,
``runtimeStatus``, ``input``, ``customStatus``, ``output``, ``createdTime``,
``lastUpdatedTime`` (UTC, whole seconds, ``Z``) and, when asked for, ``historyEvents``;
HTTP 202 while the instance can still make progress, 200 once it has ended.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from devhost.taskhub.inputs import json_value
from devhost.taskhub.store import InstanceRecord

IN_PROGRESS = frozenset({"Pending", "Running", "ContinuedAsNew", "Suspended"})
"""Runtime statuses answered with HTTP 202 (the client should poll again)."""

RETRY_AFTER_S = 5
"""``Retry-After`` of a 202 status answer, in seconds (the extension's value)."""


def api_time(when: datetime) -> str:
    """Format a time as the status API does: UTC, whole seconds, ``Z`` suffix."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def status_json(record: InstanceRecord, *, show_input: bool = True,
                history: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Build the status payload of one instance.

    Parameters
    ----------
    record : InstanceRecord
        The stored instance.
    show_input : bool
        Include the input (otherwise ``input`` is null).
    history : list of dict, optional
        ``historyEvents`` already converted (see
        :func:`devhost.http_api.history_view.history_events_json`); the key is added only
        when given.

    Returns
    -------
    dict
        JSON-ready payload; ``input``, ``output`` and ``customStatus`` are JSON values.
    """
    payload: dict[str, Any] = {
        "name": record.name,
        "instanceId": record.instance_id,
        "runtimeStatus": record.runtime_status,
        "input": json_value(record.input) if show_input else None,
        "customStatus": json_value(record.custom_status),
        "output": json_value(record.output),
        "createdTime": api_time(record.created_at),
        "lastUpdatedTime": api_time(record.last_updated_at),
    }
    if history is not None:
        payload["historyEvents"] = history
    return payload


def status_code(runtime_status: str, *, internal_error_on_failure: bool = False) -> int:
    """Return the HTTP status of a status answer.

    Parameters
    ----------
    runtime_status : str
        The instance's runtime status.
    internal_error_on_failure : bool
        Query parameter ``returnInternalServerErrorOnFailure``: answer 500 for Failed.

    Returns
    -------
    int
        202 for Pending, Running, ContinuedAsNew and Suspended; 500 for Failed if asked;
        200 otherwise (Completed, Failed, Terminated).
    """
    if runtime_status in IN_PROGRESS:
        return 202
    if runtime_status == "Failed" and internal_error_on_failure:
        return 500
    return 200
