"""The queue limits the retry budget depends on, read from ``infra/queues.json`` (X2)."""

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
    """``infra/queues.json`` is missing or a property breaks its rule (named); permanent."""


@dataclass(frozen=True)
class QueueLimits:
    """The properties of one queue that bound retries and duplicates (``queues.json`` names)."""

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
    """Return each declared queue's limits; QueueFileError naming a broken field."""
    try:
        return _limits(parse_queue_catalog(data, source=source))
    except QueuePropertiesError as exc:
        raise QueueFileError(str(exc)) from exc


def load_queue_limits(path: str | Path | None = None) -> dict[str, QueueLimits]:
    """Read :func:`parse_queue_limits` from ``path``; QueueFileError if missing or wrong."""
    try:
        return _limits(load_queue_catalog(path))
    except QueuePropertiesError as exc:
        raise QueueFileError(str(exc)) from exc

