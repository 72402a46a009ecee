"""The queue limits the retry budget depends on, read from ``infra/queues.json`` (SPEC X2).

``infra/queues.json`` is the one source of queue properties: Bicep deploys it, the local host
emulates it. The deployed app must not import the local host (``devhost`` is not deployed,
see ``.funcignore``), so this module parses the few properties the budget needs itself:
``maxDeliveryCount`` (every delivery of an agent request may run the agent's whole retry
loop again), duplicate detection and its window (a resent request must not be delivered
twice), and ``lockDuration``. ``infra/queues.json`` is deployed with the app (only
``infra/*.bicep`` is excluded), so the same file is read locally and in Azure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

DEFAULT_QUEUES_FILE = Path(__file__).resolve().parents[1] / "infra" / "queues.json"
"""``infra/queues.json`` next to the app (the deployment root in Azure)."""

_DURATION = re.compile(
    r"P(?:(?P<d>\d+)D)?(?:T(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?")


class QueueFileError(ValueError):
    """``infra/queues.json`` is missing or a property breaks its rule; the message names it."""


@dataclass(frozen=True)
class QueueLimits:
    """The properties of one queue that bound retries and duplicates.

    Attributes
    ----------
    name : str
        Queue name.
    max_delivery_count : int
        Deliveries before Service Bus dead-letters a message (``maxDeliveryCount``), >= 1.
    requires_duplicate_detection : bool
        Whether a resend with the same MessageId is dropped (``requiresDuplicateDetection``).
    duplicate_detection_window : timedelta
        How long MessageIds are remembered (``duplicateDetectionHistoryTimeWindow``).
    lock_duration : timedelta
        Peek-lock duration (``lockDuration``).
    """

    name: str
    max_delivery_count: int
    requires_duplicate_detection: bool
    duplicate_detection_window: timedelta
    lock_duration: timedelta


def parse_duration(text: Any, field: str) -> timedelta:
    """Parse an ISO 8601 duration of the ``PnDTnHnMnS`` form used by ARM (e.g. ``PT10M``).

    Parameters
    ----------
    text : str
        The duration.
    field : str
        Where it came from, for the error message.

    Returns
    -------
    timedelta

    Raises
    ------
    QueueFileError
        If ``text`` is not such a duration.
    """
    match = _DURATION.fullmatch(text) if isinstance(text, str) else None
    if match is None or text in ("P", "PT") or text.endswith("T"):
        raise QueueFileError(f"{field}: must be an ISO 8601 duration such as 'PT30S' or "
                             f"'P14D'; got {text!r}")
    parts = {k: float(v) for k, v in match.groupdict().items() if v}
    return timedelta(days=parts.get("d", 0), hours=parts.get("h", 0),
                     minutes=parts.get("m", 0), seconds=parts.get("s", 0))


def _limits(name: str, props: Mapping[str, Any], source: str) -> QueueLimits:
    where = f"{source}: queues.{name}"
    count = props.get("maxDeliveryCount")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise QueueFileError(f"{where}.maxDeliveryCount: must be an integer >= 1; got {count!r}")
    dedupe = props.get("requiresDuplicateDetection", False)
    if not isinstance(dedupe, bool):
        raise QueueFileError(f"{where}.requiresDuplicateDetection: must be true or false; "
                             f"got {dedupe!r}")
    window = props.get("duplicateDetectionHistoryTimeWindow", "PT10M")
    lock = props.get("lockDuration", "PT1M")
    return QueueLimits(
        name=name, max_delivery_count=count, requires_duplicate_detection=dedupe,
        duplicate_detection_window=parse_duration(
            window, f"{where}.duplicateDetectionHistoryTimeWindow"),
        lock_duration=parse_duration(lock, f"{where}.lockDuration"))


def parse_queue_limits(data: Any, source: str = "queues.json") -> dict[str, QueueLimits]:
    """Merge ``defaults`` into each entry of ``queues`` as Bicep's ``union()`` does.

    Parameters
    ----------
    data : dict
        The decoded JSON document (``{"defaults": {...}, "queues": {name: {...}}}``).
    source : str
        File name for error messages.

    Returns
    -------
    dict of str to QueueLimits
        One entry per declared queue (client reply queues are not declared here).

    Raises
    ------
    QueueFileError
        If the document's shape or a property is wrong (the message names the field).
    """
    if not isinstance(data, dict) or not isinstance(data.get("queues"), dict):
        raise QueueFileError(f"{source}: must be an object with a 'queues' object")
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise QueueFileError(f"{source}: defaults: must be an object")
    result = {}
    for name, props in data["queues"].items():
        if not isinstance(props, dict):
            raise QueueFileError(f"{source}: queues.{name}: must be an object")
        result[name] = _limits(name, {**defaults, **props}, source)
    return result


def load_queue_limits(path: str | Path | None = None) -> dict[str, QueueLimits]:
    """Read :func:`parse_queue_limits` from ``path`` (default :data:`DEFAULT_QUEUES_FILE`).

    Raises
    ------
    QueueFileError
        If the file is missing, not JSON, or a property is wrong.
    """
    path = Path(path) if path is not None else DEFAULT_QUEUES_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise QueueFileError(f"{path.name}: cannot read the queue properties: {exc}") from exc
    except ValueError as exc:
        raise QueueFileError(f"{path.name}: not valid JSON ({exc})") from exc
    return parse_queue_limits(data, path.name)
