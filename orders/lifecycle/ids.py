"""Every id an order is known by, built in one place (SPEC S1, S3, A2, A4, D2, X10).

A client names its order with an OrderID, unique among that client's orders only. Inside
the service the order is known by its *order key*, the client id (from the queue the order
arrived on, never from the body) and the OrderID: two clients may use the same OrderID
without meeting. Every id below is derived from the key, so records, instances,
idempotency keys and MessageIds are all per client. Each attempt has an orchestration
instance id; each remote step an idempotency key (the same in every attempt) and, per
attempt, a request MessageId whose reply carries a MessageId derived from it. Formats:

===========================  ===========================================  ===============
what                         format                                       rule
===========================  ===========================================  ===============
order key                    ``<clientId>~<OrderID>``                     S1, X10 (<= 85)
attempt instance id          ``<key>:<attempt>``                          S3, D2
compensation instance id     ``<key>:comp:<attempt>``                     S9, D2
idempotency key              ``<key>:<operation>``                        A2 (<= 255)
agent request MessageId      ``<instance id>:<operation>``                A4 (<= 128)
agent reply MessageId        ``<request MessageId>:reply``                A4
reply event name             ``<operation>-reply``                        A4, D8
status MessageId             ``<OrderID>:<status><suffix>``               S8 (<= 128)
orchestration version        ``<workflow version>.0``                     X6
===========================  ===========================================  ===============

Length budget (SPEC D2: an instance id has at most 100 characters): a client id has at
most 20 characters (:data:`~azurekit.client_ids.CLIENT_ID_MAX_LENGTH`), an OrderID at
most 64, so a key has at most 85 and ``<key>:comp:<n>`` at most 91 + the digits of ``n``;
an agent request MessageId at most 100 + 16 (``:cancel_shipment``) = 116 of Service Bus's
128. A status message goes to its client's own queue and carries the client's OrderID,
never the key (:func:`client_order_id`); its MessageId is shortened when the suffix would
take it past 128 characters (:func:`status_message_id`).

Legacy keys (SPEC X6): orders submitted on the shared ``orders`` queue, before each client
had its own, are keyed on their plain OrderID (no ``~``, no client id in their state
record); every function here accepts them, so those orders and their in-flight attempts
keep their ids.

The orchestration version is the platform's (Durable Functions orchestration versioning):
``N.0`` so that versions compare as versions (``10.0`` after ``9.0``), not as text.

OrderIDs are at most 64 characters of ``[A-Za-z0-9._-]`` (:mod:`orders.models`), so every
instance id built here is valid under SPEC D2. Pure functions: orchestrators may call them.
"""

from __future__ import annotations

from hashlib import sha256

from pydantic import TypeAdapter, ValidationError

from azurekit.client_ids import check_client_id
from azurekit.servicebus import MAX_MESSAGE_ID_LENGTH
from orders.models import check_instance_id
from orders.models._types import ORDER_KEY_SEPARATOR, OrderId, OrderKey

MAX_KEY_LENGTH = 255
"""Longest idempotency key the services accept (Stripe's limit)."""

_ORDER_ID: TypeAdapter[str] = TypeAdapter(OrderId)
_ORDER_KEY: TypeAdapter[str] = TypeAdapter(OrderKey)


def _rule(exc: ValidationError) -> str:
    return str(exc.errors()[0]["msg"]).removeprefix("Value error, ")


def order_key(client_id: str, order_id: str) -> str:
    """Return the key of client ``client_id``'s order ``order_id``: ``<clientId>~<OrderID>``.

    The one place an order key is built (SPEC S1, X10). The client id comes from the queue
    the order arrived on (``orders-<clientId>``), never from the message body.

    Parameters
    ----------
    client_id : str
        1 to 20 lower-case letters, digits or ``-``, alphanumeric at both ends.
    order_id : str
        The client's OrderID, 1 to 64 characters from ``A-Z a-z 0-9 . _ -``.

    Returns
    -------
    str
        At most 85 characters, e.g. ``acme~ORD-1``.

    Raises
    ------
    ValueError
        Naming ``client_id`` or ``order_id`` and the rule it breaks.
    """
    try:
        check_client_id(client_id)
    except ValueError as exc:
        raise ValueError(f"client_id: {exc}") from None
    try:
        _ORDER_ID.validate_python(order_id)
    except ValidationError as exc:
        raise ValueError(f"order_id: {_rule(exc)}") from None
    return f"{client_id}{ORDER_KEY_SEPARATOR}{order_id}"


def split_order_key(key: str) -> tuple[str | None, str]:
    """Return ``(client id, OrderID)`` of an order key; the client id is None for a legacy key.

    Raises
    ------
    ValueError
        If ``key`` is neither ``<clientId>~<OrderID>`` nor a plain OrderID.
    """
    try:
        _ORDER_KEY.validate_python(key)
    except ValidationError as exc:
        raise ValueError(f"order key: {_rule(exc)}") from None
    client, separator, order_id = key.rpartition(ORDER_KEY_SEPARATOR)
    return (client if separator else None), order_id


def client_order_id(key: str) -> str:
    """Return the OrderID the client knows an order by: the key without its client part.

    What every status message carries (SPEC S8): a client never sees another client's id.

    Raises
    ------
    ValueError
        If ``key`` is not an order key.
    """
    return split_order_key(key)[1]


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


def split_instance_id(instance_id: str) -> tuple[str, int] | None:
    """Return the order key and attempt number an instance id names, or None.

    The inverse of :func:`attempt_instance_id` and :func:`compensation_instance_id`:
    ``acme~ORD-1:2`` gives ``("acme~ORD-1", 2)`` and ``acme~ORD-1:comp:1`` gives
    ``("acme~ORD-1", 1)``; an instance id of another form (not an order's) gives None.
    """
    head, sep, number = instance_id.rpartition(":")
    key = head.removesuffix(":comp")
    if not sep or not number.isdecimal() or not key:
        return None
    return key, int(number)


def order_key_of_instance(instance_id: str) -> str | None:
    """Return the order key an instance id names, or None (:func:`split_instance_id`)."""
    parsed = split_instance_id(instance_id)
    return parsed[0] if parsed else None


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

    ``order_id`` is the client's OrderID (the queue is the client's own, so it is unique
    there). ``suffix`` tells apart repeats that are real (a resubmitted order completing
    again). An id that would exceed Service Bus's 128 characters (a long OrderID with an
    instance id as suffix) keeps ``<OrderID>:<status>:`` and replaces the suffix by the
    first 16 hex digits of its SHA-256: still stable per suffix; ids that fit are as before.
    """
    message_id = f"{order_id}:{status}{suffix}"
    if len(message_id) <= MAX_MESSAGE_ID_LENGTH:
        return message_id
    return f"{order_id}:{status}:{sha256(suffix.encode()).hexdigest()[:16]}"
