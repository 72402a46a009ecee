"""Every id an order is known by, built in one place (SPEC S3, A2, A4, D2).

One order has one OrderID; each attempt an orchestration instance id; each remote step an
idempotency key (the same in every attempt) and, per attempt, a request MessageId whose
reply carries a MessageId derived from it. Formats:

===========================  ===========================================  ===============
what                         format                                       rule
===========================  ===========================================  ===============
attempt instance id          ``<OrderID>:<attempt>``                      S3, D2
compensation instance id     ``<OrderID>:comp:<attempt>``                 S9, D2
idempotency key              ``<OrderID>:<operation>``                    A2 (<= 255)
agent request MessageId      ``<instance id>:<operation>``                A4
agent reply MessageId        ``<request MessageId>:reply``                A4
reply event name             ``<operation>-reply``                        A4, D8
status MessageId             ``<OrderID>:<status><suffix>``               S8
orchestration version        ``<workflow version>.0``                     X6
===========================  ===========================================  ===============

The orchestration version is the platform's (Durable Functions orchestration versioning):
``N.0`` so that versions compare as versions (``10.0`` after ``9.0``), not as text.

OrderIDs are at most 64 characters of ``[A-Za-z0-9._-]`` (:mod:`orders.models`), so every
instance id built here is valid under SPEC D2. Pure functions: orchestrators may call them.
"""

from __future__ import annotations

from orders.models import check_instance_id

MAX_KEY_LENGTH = 255
"""Longest idempotency key the services accept (Stripe's limit)."""


def attempt_instance_id(order_id: str, attempt: int) -> str:
    """Return the instance id of attempt ``attempt`` of an order: ``<OrderID>:<attempt>``.

    Raises
    ------
    ValueError
        If ``attempt`` < 1 or the id breaks SPEC D2.
    """
    return _numbered(f"{order_id}:", attempt)


def compensation_instance_id(order_id: str, attempt: int) -> str:
    """Return the instance id of compensation attempt ``attempt``: ``<OrderID>:comp:<n>``.

    Raises
    ------
    ValueError
        If ``attempt`` < 1 or the id breaks SPEC D2.
    """
    return _numbered(f"{order_id}:comp:", attempt)


def _numbered(prefix: str, attempt: int) -> str:
    if attempt < 1:
        raise ValueError(f"attempt: must be at least 1, got {attempt}")
    return check_instance_id(f"{prefix}{attempt}")


def idempotency_key(order_id: str, operation: str) -> str:
    """Return the idempotency key of one remote operation of one order (SPEC A2).

    No attempt number: every retry of the agent and every orchestration attempt sends the
    same key, so the service performs the side effect once; an undo names its forward
    request by this key.

    Parameters
    ----------
    order_id : str
        The order's OrderID.
    operation : str
        ``charge``, ``ship``, ``refund`` or ``cancel_shipment``.

    Returns
    -------
    str
        ``"{order_id}:{operation}"``.

    Raises
    ------
    ValueError
        If either part is empty or the key exceeds 255 characters.
    """
    if not order_id:
        raise ValueError("order_id: must not be empty")
    if not operation:
        raise ValueError("operation: must not be empty")
    key = f"{order_id}:{operation}"
    if len(key) > MAX_KEY_LENGTH:
        raise ValueError(f"order_id/operation: idempotency key longer than {MAX_KEY_LENGTH} "
                         "characters")
    return key


def request_message_id(instance_id: str, operation: str) -> str:
    """Return the MessageId of an agent request: ``<instance id>:<operation>`` (SPEC A4).

    Stable per attempt and step: a resend is dropped by duplicate detection.
    """
    return f"{instance_id}:{operation}"


def reply_message_id(request_id: str) -> str:
    """Return the MessageId of the reply to request ``request_id``: ``<id>:reply`` (A4)."""
    return f"{request_id}:reply"


def reply_event_name(operation: str) -> str:
    """Return the external event a reply is raised as: ``<operation>-reply`` (SPEC A4)."""
    return f"{operation}-reply"


def orchestration_version(workflow_version: int) -> str:
    """Return the orchestration version an attempt of ``workflow_version`` starts with (X6).

    Raises
    ------
    ValueError
        If ``workflow_version`` < 1.
    """
    if workflow_version < 1:
        raise ValueError(f"workflow_version: must be at least 1, got {workflow_version}")
    return f"{workflow_version}.0"


def workflow_version_of(version: str | None) -> int | None:
    """Return the workflow version an orchestration version names; None if it names none.

    ``"2.0"`` and ``"2"`` give 2; None, ``""`` (an instance started without a version,
    before versions were set) and anything else give None.
    """
    major, _, minor = (version or "").strip().partition(".")
    if not major.isdigit() or (minor and minor != "0") or int(major) < 1:
        return None
    return int(major)


def status_message_id(order_id: str, status: str, suffix: str = "") -> str:
    """Return the MessageId of a status message: ``<OrderID>:<status><suffix>`` (SPEC S8).

    ``suffix`` tells apart repeats that are real (a resubmitted order completing again).
    """
    return f"{order_id}:{status}{suffix}"
