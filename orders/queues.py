"""The queue limits the retry budget depends on, read from ``infra/queues.json`` (SPEC X2).

``infra/queues.json`` is the one source of queue properties: Bicep deploys it, and the app
and the local host read it through the one parser, :func:`azurekit.queues.load_queue_catalog`.
The budget needs a few properties of each declared queue: ``maxDeliveryCount`` (every
delivery of an agent request may run the agent's whole retry loop again), duplicate
detection and its window (a resent request must not be delivered twice), and
``lockDuration``. ``infra/queues.json`` is deployed with the app (only ``infra/*.bicep``
is excluded), so the same file is read locally and in Azure.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from azurekit.queues import (
    DEFAULT_QUEUES_FILE,
    QueueCatalog,
    QueuePropertiesError,
    load_queue_catalog,
    parse_queue_catalog,
)
from orders.errors import OrderServiceError

__all__ = ["DEFAULT_QUEUES_FILE", "QueueFileError", "QueueLimits", "load_queue_limits",
           "parse_queue_limits"]


class QueueFileError(OrderServiceError, ValueError):
    """``infra/queues.json`` is missing or a property breaks its rule; the message names it.

    Permanent: the file must change.
    """


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


def _limits(catalog: QueueCatalog) -> dict[str, QueueLimits]:
    return {name: QueueLimits(
        name=name, max_delivery_count=props.max_delivery_count,
        requires_duplicate_detection=props.requires_duplicate_detection,
        duplicate_detection_window=props.duplicate_detection_history_time_window,
        lock_duration=props.lock_duration) for name, props in catalog.queues.items()}


def parse_queue_limits(data: Any, source: str = "queues.json") -> dict[str, QueueLimits]:
    """Return the limits of each declared queue of a decoded ``queues.json`` document.

    Parameters
    ----------
    data : dict
        The decoded JSON document, as :func:`azurekit.queues.parse_queue_catalog` takes it.
    source : str
        File name for error messages.

    Returns
    -------
    dict of str to QueueLimits
        One entry per declared queue (per-client queues are not declared by name).

    Raises
    ------
    QueueFileError
        If the document breaks a rule of the catalog (the message names the field).
    """
    try:
        return _limits(parse_queue_catalog(data, source=source))
    except QueuePropertiesError as exc:
        raise QueueFileError(str(exc)) from exc


def load_queue_limits(path: str | Path | None = None) -> dict[str, QueueLimits]:
    """Read :func:`parse_queue_limits` from ``path`` (default :data:`DEFAULT_QUEUES_FILE`).

    Raises
    ------
    QueueFileError
        If the file is missing, not JSON, or a property is wrong.
    """
    try:
        return _limits(load_queue_catalog(path))
    except QueuePropertiesError as exc:
        raise QueueFileError(str(exc)) from exc

