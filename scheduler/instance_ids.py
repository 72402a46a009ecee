"""Attempt-specific orchestration instance ids (SPEC S3, D2).

``<OrderID>:<attempt>``: OrderIDs are limited to 64 characters of ``[A-Za-z0-9._-]``, so
the id is always valid under SPEC D2 (1-100 characters; no slash, backslash, ``#`` or
``?``; no leading ``@``).
"""

from __future__ import annotations

from orders.models import check_instance_id


def instance_id(order_id: str, attempt: int) -> str:
    """Return the instance id of one attempt.

    Parameters
    ----------
    order_id : str
        A valid OrderID.
    attempt : int
        Attempt number, from 1.

    Returns
    -------
    str
        ``f"{order_id}:{attempt}"``.

    Raises
    ------
    ValueError
        If ``attempt`` < 1 or the result is not a valid instance id.
    """
    if attempt < 1:
        raise ValueError(f"attempt: must be at least 1, got {attempt}")
    return check_instance_id(f"{order_id}:{attempt}")


def parse_instance_id(value: str) -> tuple[str, int]:
    """Split an instance id made by :func:`instance_id` into OrderID and attempt.

    Raises
    ------
    ValueError
        If ``value`` has no ``:<attempt>`` suffix.
    """
    order_id, sep, attempt = value.rpartition(":")
    if not sep or not attempt.isdigit():
        raise ValueError(f"instanceId: '{value}' is not '<OrderID>:<attempt>'")
    return order_id, int(attempt)
