"""Payload limits the Durable extension enforces on an orchestrator's episode.

The extension refuses a custom status whose JSON is larger than 16 KB of UTF-16 text
(azure-functions-durable-extension ``ContextImplementations/DurableOrchestrationContext.cs``,
``SetCustomStatus`` with ``MaxCustomStatusPayloadSizeInKB = 16``; the check is
``MessagePayloadDataConverter.Serialize(value, maxSizeInKB)`` in
``MessagePayloadDataConverter.cs``). For an out-of-process orchestrator the custom status
is set from the episode's state before its actions are replayed
(``OutOfProcOrchestrationShim.ScheduleDurableTaskEvents``), so the ``ArgumentException``
fails the instance: ``Orchestrator function '<name>' failed: The UTF-16 size of the
JSON-serialized payload must not exceed 16 KB. The current payload size is 17 KB.``, no
action of that episode scheduled and the stored custom status left as it was.

Other payloads have no limit on the Azure Storage backend the app deploys to: inputs,
outputs, event data and activity results too large for a queue message or a table
column go to blobs (DTFx ``DurableTask.AzureStorage`` large-message support). Instance
ids, entity keys and task hub names are checked where they arrive
(:mod:`azurekit.instance_ids`, :mod:`devhost.taskhub.entity_messages`,
:mod:`devhost.app.host_config`).
"""

from __future__ import annotations

import json
from typing import Any

MAX_CUSTOM_STATUS_KB = 16
"""The extension's ``MaxCustomStatusPayloadSizeInKB``."""

PAYLOAD_TOO_LARGE = ("The UTF-16 size of the JSON-serialized payload must not exceed {limit:,} "
                     "KB. The current payload size is {size:,} KB.")
"""``MessagePayloadDataConverter.Serialize``'s message (``{0:N0}`` formats, invariant culture)."""

ARGUMENT_EXCEPTION = "System.ArgumentException, System.Private.CoreLib"
"""``$type`` of the exception the extension throws for it."""


def compact_json(value: Any) -> str:
    """Serialise a JSON value as Newtonsoft's ``Formatting.None`` does (no spaces, raw UTF-8)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def utf16_kb(text: str) -> int:
    """Return ``(int)(Encoding.Unicode.GetByteCount(text) / 1024.0)``: whole KB, truncated."""
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 1024


def custom_status_problem(value: Any) -> str | None:
    """Return the extension's refusal of a custom status, or None if it is within the limit.

    Parameters
    ----------
    value : Any
        The custom status as the SDK's state carries it (a JSON value; None is no status).
    """
    if value is None:
        return None
    size = utf16_kb(compact_json(value))
    if size > MAX_CUSTOM_STATUS_KB:
        return PAYLOAD_TOO_LARGE.format(limit=MAX_CUSTOM_STATUS_KB, size=size)
    return None
