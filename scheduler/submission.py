"""Submission (SPEC S1, S2, S8, X10): the order message becomes an order and a state record.

The client is the one whose queue ``orders-<clientId>`` the message arrived on
(:mod:`scheduler.identity`); a body naming another client is dead-lettered as
``ClientMismatch``. The order is stored under its order key ``<clientId>~<OrderID>``
(:func:`orders.lifecycle.ids.order_key`), so OrderIDs are scoped per client: two clients
may use the same OrderID, and neither can take or shadow the other's orders.

The two writes share no transaction; each is idempotent on the order key (SPEC X5), so a
message delivered twice writes nothing new. An existing record is accepted only if it holds the same
submission; other data under the same OrderID is a conflict: nothing is overwritten, the
message is dead-lettered with the reason and an operator is alerted. A message that is not
valid JSON or breaks the contract is dead-lettered with the field and rule it broke.

Admission control (SPEC X3): before any write, a new order is refused while the in-flight
orders (Pending + Processing + Compensating) reach ``MAX_IN_FLIGHT``. The client gets
"Rejected" with the reason on its reply queue and the message is completed: the backlog in
the state store stays bounded when a downstream service fails, and nothing piles up in the
queue either. A redelivery of an order already stored is never refused. The count and the
writes are not one transaction, so concurrent submissions can overshoot the limit by at
most the number of submission invocations running at once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from hashlib import sha256

from orders.lifecycle.ids import order_key, split_order_key
from orders.messaging import MessageSender, QueueNotFoundError
from orders.models import IN_FLIGHT_STATES, Order, StateRecord, wire
from orders.models.messages import OperatorAlert, StatusKind, StatusMessage, SubmitOrder
from orders.models.money import maximum_problem
from orders.notify import send_alert, send_status
from orders.observability.logs import log_context
from orders.observability.metrics import record_backlog
from orders.observability.tracing import current_traceparent, tag_order
from orders.stores import Stores
from orders.stores.errors import ConflictError
from scheduler.identity import CLIENT_MISMATCH, alert_mismatch, client_mismatch

log = logging.getLogger("orders.submission")


@dataclass(frozen=True)
class Rejected:
    """Why a message cannot be accepted; it is dead-lettered with this reason."""

    reason: str
    description: str


@dataclass(frozen=True)
class AdmissionRefused:
    """Admission control refused a new order (SPEC X3); the client was told "Rejected".

    The message is completed (not dead-lettered): the refusal is the answer.
    """

    order_id: str
    reason: str
    in_flight: int
    limit: int


@dataclass(frozen=True)
class Accepted:
    """The order and its state record are stored (``created`` False on a redelivery).

    ``order_id`` is the order key, ``<clientId>~<OrderID>``; ``record`` the state record
    as stored (with its ETag), for the starter the submission wakes (SPEC S3).
    """

    order_id: str
    created: bool
    record: StateRecord | None = field(default=None, compare=False)


def parse_submission(body: bytes, client_id: str, *,
                     max_amount: Decimal | None = None) -> SubmitOrder | Rejected:
    """Parse and validate an order message; never raise for anything the body holds (S1).

    Parameters
    ----------
    body : bytes
        The Service Bus message body.
    client_id : str
        The client whose submit queue the message arrived on (SPEC X10).
    max_amount : Decimal, optional
        ``MAX_ORDER_AMOUNT``: the largest ``totalPrice`` and ``unitPrice``; None, no limit.

    Returns
    -------
    SubmitOrder or Rejected
        ``Rejected("InvalidJson" | "SchemaViolation", ...)`` naming the field and rule for
        every form of bad body: not UTF-8, not strict JSON (NaN, 1e999, integers past 64
        bits, duplicate names, unpaired surrogates, nesting past
        :data:`~orders.models.wire.MAX_DEPTH`, however deep), or breaking the SubmitOrder
        contract, including any exception a validator raises, a ``totalPrice`` finer than
        its currency's minor unit (:mod:`orders.models.money`) and an amount above
        ``max_amount``.
        ``Rejected("ClientMismatch", ...)`` if the body names another client in
        ``clientId`` or ``replyTo`` (checked before the contract, so a foreign ``replyTo``
        is a mismatch, not a schema violation). Parsing is a pure function of the body and
        the queue, so the message is dead-lettered on its first delivery instead of being
        retried into ``MaxDeliveryCountExceeded``.
    """
    try:
        data = wire.loads(body)
        mismatch = client_mismatch(data, client_id)
        if mismatch is not None:
            return Rejected(CLIENT_MISMATCH, mismatch)
        parsed = wire.validate(data, SubmitOrder)
    except wire.InvalidMessage as exc:
        return Rejected(exc.reason, exc.description)
    too_large = maximum_problem(parsed.order, max_amount) if max_amount is not None else None
    if too_large is not None:
        return Rejected(wire.SCHEMA_VIOLATION, f"order.{too_large[0]}: {too_large[1]}")
    return parsed


def admit(stores: Stores, order_id: str, max_in_flight: int) -> tuple[bool, int]:
    """Decide whether a submission may create a new order (SPEC X3).

    Parameters
    ----------
    stores : Stores
        Order database and state store.
    order_id : str
        The submitted OrderID.
    max_in_flight : int
        ``MAX_IN_FLIGHT``: the cap on Pending + Processing + Compensating orders.

    Returns
    -------
    (bool, int)
        Whether to admit, and the in-flight count (-1 if not counted). An order already in
        the state store or the order database (a redelivery, or a retry after a crash
        between the two writes) is always admitted without counting.
    """
    if stores.states.get(order_id) is not None or stores.orders.get(order_id) is not None:
        return True, -1
    in_flight = sum(stores.states.count_by_state(IN_FLIGHT_STATES).values())
    record_backlog(in_flight, max_in_flight)
    return in_flight < max_in_flight, in_flight


def submit(body: bytes, stores: Stores, sender: MessageSender, now: datetime, *,
           client_id: str, max_in_flight: int | None = None,
           message_id: str | None = None,
           max_amount: Decimal | None = None) -> Accepted | Rejected | AdmissionRefused:
    """Store a submitted order idempotently and tell the client it was received.

    Parameters
    ----------
    body : bytes
        The Service Bus message body.
    client_id : str
        The client whose submit queue ``orders-<clientId>`` the message arrived on: the
        only source of the client's identity (SPEC X10). A body naming another client is
        refused as ``ClientMismatch`` (nothing stored, an operator alerted).
    stores : Stores
        Order database and state store.
    sender : MessageSender
        For the RequestReceived / Rejected status and operator alerts.
    now : datetime
        Submission time (state record timestamps).
    max_in_flight : int, optional
        ``MAX_IN_FLIGHT`` (SPEC X3); None disables admission control.
    message_id : str, optional
        The order message's MessageId: a refusal's status message id is derived from it,
        so a redelivered message is answered once and a later resend gets its own answer.
    max_amount : Decimal, optional
        ``MAX_ORDER_AMOUNT`` (see :func:`parse_submission`); None, no limit.

    Returns
    -------
    Accepted, Rejected or AdmissionRefused
        Rejected results must be dead-lettered by the caller with their reason;
        AdmissionRefused ones completed (the client has been told).

    Raises
    ------
    ValueError
        If ``client_id`` is not a valid client id (the app registers triggers only for
        valid ones, ``ORDER_CLIENTS``).
    """
    parsed = parse_submission(body, client_id, max_amount=max_amount)
    if isinstance(parsed, Rejected):
        if parsed.reason == CLIENT_MISMATCH:
            alert_mismatch(sender, client_id, body, parsed.description, now)
        return parsed
    key = order_key(client_id, parsed.order.order_id)
    tag_order(key)
    with log_context(key):
        if max_in_flight is not None:
            admitted, in_flight = admit(stores, key, max_in_flight)
            if not admitted:
                return refuse(parsed, sender, now, in_flight, max_in_flight, message_id)
        return store(parsed, key, body, stores, sender, now)


def keyed(parsed: SubmitOrder, key: str, now: datetime) -> tuple[Order, StateRecord]:
    """Return the order and the first state record as stored under ``key`` (SPEC S1, S2).

    The record's client is the key's (the queue's), never the body's; its trace is the
    current span's, the submission's (SPEC X8).
    """
    client_id, client_order_id = split_order_key(key)
    record = StateRecord(order_id=key, client_id=client_id,
                         client_order_id=client_order_id, reply_to=parsed.reply_to,
                         created_at=now, updated_at=now, trace_parent=current_traceparent())
    return parsed.order.model_copy(update={"order_id": key}), record


def store(parsed: SubmitOrder, key: str, body: bytes, stores: Stores, sender: MessageSender,
          now: datetime) -> Accepted | Rejected:
    """Write the order and its state record idempotently; RequestReceived to the client (S1).

    Parameters
    ----------
    parsed : SubmitOrder
        The message, its client checked against the queue.
    key : str
        The order key ``<clientId>~<OrderID>``: both writes are keyed on it.

    Returns
    -------
    Accepted or Rejected
        ``Rejected("ConflictingOrder", ...)`` if other data is stored under the key.
    """
    order, record = keyed(parsed, key, now)
    client_order_id = parsed.order.order_id
    try:
        # Order first, then RequestReceived, then the state record: an order whose reply
        # queue does not exist gets no state record, so it never starts, and the message is
        # dead-lettered naming replyTo (a valid resend with the same data is accepted).
        stored = stores.orders.create_if_absent(order)
        existing = stores.states.get(order.order_id)
        if existing is not None and not existing.same_submission(record):
            stores.states.create_if_absent(record)  # raises ConflictError, writes nothing
        try:
            send_status(sender, parsed.reply_to, StatusMessage(
                order_id=client_order_id, status=StatusKind.REQUEST_RECEIVED, at=now))
        except QueueNotFoundError as exc:
            return Rejected("UnknownReplyQueue", f"replyTo: queue '{parsed.reply_to}' does "
                                                 f"not exist ({exc}); nothing was started")
        state = stores.states.create_if_absent(record)
    except ConflictError as exc:
        alert = OperatorAlert(kind="ConflictingOrder", order_id=key, at=now,
                              reason=f"a message with other data for OrderID "
                                     f"{client_order_id} of client {parsed.client_id} was "
                                     f"refused: {exc}")
        digest = sha256(body).hexdigest()[:16]
        send_alert(sender, alert, message_id=f"conflict:{key}:{digest}")
        answer_conflict(sender, parsed, now, str(exc), digest)
        return Rejected("ConflictingOrder", str(exc))
    return Accepted(order.order_id, stored.created or state.created, state.record)


def answer_conflict(sender: MessageSender, parsed: SubmitOrder, now: datetime, why: str,
                    digest: str) -> None:
    """Tell the submitter its changed order was refused: "ChangeRefused" with the reason (S1, S8).

    The stored order stands and is answered as usual; this answers the refused message,
    so a client that resent an order with other data hears why instead of waiting. Sent to
    the submitter's own reply queue only; a queue that does not exist is skipped (the
    message is dead-lettered anyway). ``digest`` (of the body) makes the MessageId stable
    for a redelivery and distinct for another refused change.
    """
    reason = (f"ConflictingOrder: OrderID {parsed.order.order_id} is stored with other data; "
              f"this message was refused and nothing was changed ({why})")
    try:
        send_status(sender, parsed.reply_to, StatusMessage(
            order_id=parsed.order.order_id, status=StatusKind.CHANGE_REFUSED, at=now,
            reason=reason[:1000]), dedupe_suffix=f":conflict:{digest}")
    except QueueNotFoundError:
        log.warning("order %s: conflict not answered, reply queue %s does not exist",
                    parsed.order.order_id, parsed.reply_to)


def refuse(parsed: SubmitOrder, sender: MessageSender, now: datetime, in_flight: int,
           limit: int, message_id: str | None) -> AdmissionRefused:
    """Tell the client its order was rejected by admission control; write nothing (SPEC X3)."""
    order_id = parsed.order.order_id
    reason = (f"admission control: {in_flight} orders in flight (Pending, Processing, "
              f"Compensating) reached MAX_IN_FLIGHT={limit}; nothing was stored, submit the "
              "order again later")
    suffix = f":{sha256((message_id or '').encode()).hexdigest()[:16]}"
    send_status(sender, parsed.reply_to,
                StatusMessage(order_id=order_id, status=StatusKind.REJECTED, at=now,
                              reason=reason), dedupe_suffix=suffix)
    log.info("order %s rejected: %s", order_id, reason)
    return AdmissionRefused(order_id, reason, in_flight, limit)
