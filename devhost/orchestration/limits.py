"""Payload limits the Durable extension enforces on an orchestrator's episode.

A custom status over 16 KB of UTF-16 JSON is refused (azure-functions-durable-extension
``ContextImplementations/DurableOrchestrationContext.cs``, ``SetCustomStatus``,
``MaxCustomStatusPayloadSizeInKB = 16``; ``MessagePayloadDataConverter.Serialize`` in
``MessagePayloadDataConverter.cs``), before the actions are replayed
(``OutOfProcOrchestrationShim.ScheduleDurableTaskEvents``): the instance fails, nothing of
the episode scheduled. Other payloads have no limit on Azure Storage (DTFx
``DurableTask.AzureStorage`` moves large messages to blobs).
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
    """Return the extension's refusal of a custom status (a JSON value, None: none), or None."""
    if value is None:
        return None
    size = utf16_kb(compact_json(value))
    if size > MAX_CUSTOM_STATUS_KB:
        return PAYLOAD_TOO_LARGE.format(limit=MAX_CUSTOM_STATUS_KB, size=size)
    return None
