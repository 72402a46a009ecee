"""Every id an order is known by, built in one place (S1, S3, A2, A4, D2, X10).

Every id derives from the *order key*; its client id comes from the queue, never the body:

=========================  ================================  ===============
order key                  ``<clientId>~<OrderID>``          S1, X10 (<= 85)
attempt instance id        ``<key>:<attempt>``               S3, D2
compensation instance id   ``<key>:comp:<attempt>``          S9, D2
idempotency key            ``<key>:<operation>``             A2 (<= 255)
agent request MessageId    ``<instance id>:<operation>``     A4 (<= 128)
agent reply MessageId      ``<request MessageId>:reply``     A4
reply event name           ``<operation>-reply``             A4, D8
status MessageId           ``<OrderID>:<status><suffix>``    S8 (<= 128)
orchestration version      ``<workflow version>.0``          X6
=========================  ================================  ===============

Client id <= 20, OrderID <= 64: within D2's 100. Legacy keys: a plain OrderID (X6).
"""

from __future__ import annotations

from hashlib import sha256

from pydantic import TypeAdapter, ValidationError

from azurekit.client_ids import check_client_id
from azurekit.servicebus import MAX_MESSAGE_ID_LENGTH
from orders.models import check_instance_id
from orders.models._types import ORDER_KEY_SEPARATOR, OrderId, OrderKey

MAX_KEY_LENGTH = 255

_ORDER_ID: TypeAdapter[str] = TypeAdapter(OrderId)
_ORDER_KEY: TypeAdapter[str] = TypeAdapter(OrderKey)


def _rule(exc: ValidationError) -> str:
    return str(exc.errors()[0]["msg"]).removeprefix("Value error, ")


class IdRuleError(ValueError):
    """An id broke its rule: ``part`` names it (``client_id``, ``order_id``, ``order key``)."""

    def __init__(self, part: str, rule: str) -> None:
        super().__init__(f"{part}: {rule}")
        self.part, self.rule = part, rule


def order_key(client_id: str, order_id: str) -> str:
    """Return ``<clientId>~<OrderID>`` (S1, X10); ValueError names the part and rule broken."""
    try:
        check_client_id(client_id)
    except ValueError as exc:
        raise IdRuleError("client_id", str(exc)) from None
    try:
        _ORDER_ID.validate_python(order_id)
    except ValidationError as exc:
        raise IdRuleError("order_id", _rule(exc)) from None
    return f"{client_id}{ORDER_KEY_SEPARATOR}{order_id}"


def split_order_key(key: str) -> tuple[str | None, str]:
    """Return ``(client id or None, OrderID)`` of an order key; ValueError if not one."""
    try:
        _ORDER_KEY.validate_python(key)
    except ValidationError as exc:
        raise IdRuleError("order key", _rule(exc)) from None
    client, separator, order_id = key.rpartition(ORDER_KEY_SEPARATOR)
    return (client if separator else None), order_id


def client_order_id(key: str) -> str:
    """Return the OrderID the client knows the order by (S8); ValueError if not a key."""
    return split_order_key(key)[1]


def attempt_instance_id(order_key: str, attempt: int) -> str:
    """Return attempt ``attempt``'s instance id; ValueError if ``attempt`` < 1 or D2 broken."""
    return _numbered(f"{order_key}:", attempt)


def compensation_instance_id(order_key: str, attempt: int) -> str:
    """Return compensation attempt ``attempt``'s instance id; ValueError as above."""
    return _numbered(f"{order_key}:comp:", attempt)


def split_instance_id(instance_id: str) -> tuple[str, int] | None:
    """Return ``(order key, attempt)`` of an attempt or compensation instance id, else None."""
    head, sep, number = instance_id.rpartition(":")
    key = head.removesuffix(":comp")
    if not sep or not number.isdecimal() or not key:
        return None
    return key, int(number)


def order_key_of_instance(instance_id: str) -> str | None:
    """Return the order key an instance id names, or None."""
    parsed = split_instance_id(instance_id)
    return parsed[0] if parsed else None


def _numbered(prefix: str, attempt: int) -> str:
    if attempt < 1:
        raise ValueError(f"attempt: must be at least 1, got {attempt}")
    return check_instance_id(f"{prefix}{attempt}")


def idempotency_key(order_key: str, operation: str) -> str:
    """Return one operation's key, the same in every retry and attempt (A2); ValueError if bad."""
    if not order_key:
        raise ValueError("order_key: must not be empty")
    if not operation:
        raise ValueError("operation: must not be empty")
    key = f"{order_key}:{operation}"
    if len(key) > MAX_KEY_LENGTH:
        raise ValueError(f"order_key/operation: idempotency key longer than {MAX_KEY_LENGTH} "
                         "characters")
    return key


def request_message_id(instance_id: str, operation: str) -> str:
    """Return the MessageId of an agent request, stable per attempt and step (A4)."""
    return f"{instance_id}:{operation}"


def reply_message_id(request_id: str) -> str:
    """Return the MessageId of the reply to request ``request_id`` (A4)."""
    return f"{request_id}:reply"


def reply_event_name(operation: str) -> str:
    """Return the external event a reply is raised as (A4)."""
    return f"{operation}-reply"


def orchestration_version(workflow_version: int) -> str:
    """Return the orchestration version of ``workflow_version`` (X6); ValueError if < 1."""
    if workflow_version < 1:
        raise ValueError(f"workflow_version: must be at least 1, got {workflow_version}")
    return f"{workflow_version}.0"


def workflow_version_of(version: str | None) -> int | None:
    """Return the workflow version of ``"2.0"`` or ``"2"``; None for none or anything else."""
    major, _, minor = (version or "").strip().partition(".")
    if not major.isdigit() or (minor and minor != "0") or int(major) < 1:
        return None
    return int(major)


def status_message_id(order_id: str, status: str, suffix: str = "") -> str:
    """Return the MessageId of a status message (S8); ``order_id`` is the client's OrderID.

    ``suffix`` tells real repeats apart; past 128 characters it is cut to 16 hex of its SHA-256.
    """
    message_id = f"{order_id}:{status}{suffix}"
    if len(message_id) <= MAX_MESSAGE_ID_LENGTH:
        return message_id
    return f"{order_id}:{status}:{sha256(suffix.encode()).hexdigest()[:16]}"
