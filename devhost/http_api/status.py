"""The documented instance status payload (times UTC, whole seconds, ``Z``) and its HTTP code."""

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
    """Build one instance's payload (JSON values; ``input`` null unless ``show_input``)."""
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
    """Return 202 while in progress, 500 for Failed if asked, else 200."""
    if runtime_status in IN_PROGRESS:
        return 202
    if runtime_status == "Failed" and internal_error_on_failure:
        return 500
    return 200
