"""Submission (SPEC S1, S2, S8): the order message becomes an order and a state record.

The two writes share no transaction; each is idempotent on OrderID (SPEC X5), so a message
delivered twice writes nothing new. An existing record is accepted only if it holds the same
submission; other data under the same OrderID is a conflict: nothing is overwritten, the
message is dead-lettered with the reason and an operator is alerted. A message that is not
valid JSON or breaks the contract is dead-lettered with the field and rule it broke.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime
from hashlib import sha256

from pydantic import ValidationError

from orders.messaging import MessageSender
from orders.models import StateRecord
from orders.models.messages import OperatorAlert, StatusKind, StatusMessage, SubmitOrder
from orders.scheduler.notify import send_alert, send_status
from orders.stores import Stores
from orders.stores.errors import ConflictError

log = logging.getLogger("orders.submission")


@dataclass(frozen=True)
class Rejected:
    """Why a message cannot be accepted; it is dead-lettered with this reason."""

    reason: str
    description: str


@dataclass(frozen=True)
class Accepted:
    """The order and its state record are stored (``created`` False on a redelivery)."""

    order_id: str
    created: bool


def parse_submission(body: bytes) -> SubmitOrder | Rejected:
    """Parse and validate an order message.

    Returns
    -------
    SubmitOrder or Rejected
        ``Rejected("InvalidJson" | "SchemaViolation", ...)`` naming the field and rule.
    """
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        return Rejected("InvalidJson", f"body: not valid JSON ({exc})")
    try:
        return SubmitOrder.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}"
                             for e in exc.errors())
        return Rejected("SchemaViolation", problems)


def submit(body: bytes, stores: Stores, sender: MessageSender,
           now: datetime) -> Accepted | Rejected:
    """Store a submitted order idempotently and tell the client it was received.

    Parameters
    ----------
    body : bytes
        The Service Bus message body.
    stores : Stores
        Order database and state store.
    sender : MessageSender
        For the RequestReceived status and operator alerts.
    now : datetime
        Submission time (state record timestamps).

    Returns
    -------
    Accepted or Rejected
        Rejected results must be dead-lettered by the caller with their reason.
    """
    parsed = parse_submission(body)
    if isinstance(parsed, Rejected):
        return parsed
    order = parsed.order
    record = StateRecord(order_id=order.order_id, reply_to=parsed.reply_to,
                         created_at=now, updated_at=now)
    try:
        stored = stores.orders.create_if_absent(order)
        state = stores.states.create_if_absent(record)
    except ConflictError as exc:
        alert = OperatorAlert(kind="ConflictingOrder", order_id=order.order_id, at=now,
                              reason=f"a message with other data for OrderID "
                                     f"{order.order_id} was refused: {exc}")
        send_alert(sender, alert,
                   message_id=f"conflict:{order.order_id}:{sha256(body).hexdigest()[:16]}")
        return Rejected("ConflictingOrder", str(exc))
    send_status(sender, state.record.reply_to,
                StatusMessage(order_id=order.order_id, status=StatusKind.REQUEST_RECEIVED,
                              at=now))
    return Accepted(order.order_id, stored.created or state.created)
