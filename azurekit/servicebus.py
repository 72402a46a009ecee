"""Service Bus's rules for a message being sent, checked alike by the app and the local host."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

MAX_MESSAGE_ID_LENGTH = 128

PROPERTY_TYPES = (str, int, float, bool, type(None))


def check_application_properties(properties: Mapping[Any, Any]) -> None:
    """Check that application properties have str keys and :data:`PROPERTY_TYPES` values.

    Raises
    ------
    ValueError
        Naming the first property that breaks the rule.
    """
    for key, value in properties.items():
        if not isinstance(key, str) or not isinstance(value, PROPERTY_TYPES):
            raise ValueError(
                f"application_properties[{key!r}]: keys must be str and values "
                f"str, int, float, bool or None, got {type(value).__name__}"
            )


def check_delivery_times(scheduled_enqueue_time: Any, time_to_live: Any) -> None:
    """Check a message's schedule and time to live, either of which may be None.

    Raises
    ------
    ValueError
        If ``scheduled_enqueue_time`` is not a timezone-aware datetime, or
        ``time_to_live`` is not a positive timedelta.
    """
    when = scheduled_enqueue_time
    if when is not None and (not isinstance(when, datetime) or when.tzinfo is None):
        raise ValueError("scheduled_enqueue_time: must be a timezone-aware datetime")
    ttl = time_to_live
    if ttl is not None and (not isinstance(ttl, timedelta) or ttl <= timedelta(0)):
        raise ValueError(f"time_to_live: must be a positive timedelta, got {ttl!r}")
