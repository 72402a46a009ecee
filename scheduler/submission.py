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
from orders.models.messages import (
    StatusKind,
    StatusMessage,
    SubmitOrder,
    reply_queue,
    submit_queue,
)
from orders.models.money import maximum_problem
from orders.notify import send_status
from orders.observability.logs import log_context
from orders.observability.metrics import record_backlog
from orders.observability.tracing import current_traceparent, tag_order
from orders.stores import Stores
from orders.stores.errors import ConflictError
from scheduler.identity import (
    CLIENT_MISMATCH,
    alert_client_caused,
    alert_mismatch,
    client_mismatch,
)

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
        :data:`~orders.models.wire.MAX_DEPTH`, however deep), a field under any name but
        its wire name or a field the contract does not have (``client_id`` for
        ``clientId``), or breaking the SubmitOrder contract, including any exception a
        validator raises, a ``totalPrice`` finer than its currency's minor unit
        (:mod:`orders.models.money`) and an amount above ``max_amount``.
        ``Rejected("ClientMismatch", ...)`` if the validated body names another client in
        ``clientId`` or ``replyTo``. Parsing is a pure function of the body and the queue,
        so the message is dead-lettered on its first delivery instead of being retried
        into ``MaxDeliveryCountExceeded``.
    """
    try:
        parsed = wire.parse(body, SubmitOrder)
    except wire.InvalidMessage as exc:
        return Rejected(exc.reason, exc.description)
    mismatch = client_mismatch(parsed, client_id)
    if mismatch is not None:
        return Rejected(CLIENT_MISMATCH, mismatch)
    too_large = maximum_problem(parsed.order, max_amount) if max_amount is not None else None
    if too_large is not None:
        return Rejected(wire.SCHEMA_VIOLATION, f"order.{too_large[0]}: {too_large[1]}")
    return parsed


@dataclass(frozen=True)
class Quota:
    """Admission control's limits (SPEC X3): the global cap and each client's share.

    Attributes
    ----------
    max_in_flight : int
        ``MAX_IN_FLIGHT``: Pending + Processing + Compensating orders of all clients.
    per_client : int
        ``MAX_IN_FLIGHT_PER_CLIENT``: the same count for one client's orders, so one
        client's backlog cannot get every other client's orders rejected.
    """

    max_in_flight: int
    per_client: int


def admit(stores: Stores, order_id: str, client_id: str, quota: Quota) -> str | None:
    """Decide whether a submission may create a new order (SPEC X3); None admits it.

    Parameters
    ----------
    stores : Stores
        Order database and state store.
    order_id : str
        The order key.
    client_id : str
        The client whose queue the order came on.
    quota : Quota
        The limits.

    Returns
    -------
    str or None
        The refusal reason, naming only what the client may know: its own count and
        quota, or that the service as a whole is at capacity (never the other clients'
        count). An order already in the state store or the order database (a redelivery,
        or a retry after a crash between the two writes) is always admitted without
        counting.
    """
    if stores.states.get(order_id) is not None or stores.orders.get(order_id) is not None:
        return None
    mine = stores.states.count_of_client(client_id, IN_FLIGHT_STATES, quota.per_client)
    if mine >= quota.per_client:
        return (f"admission control: client {client_id} has {mine} orders in flight "
                f"(Pending, Processing, Compensating), its quota "
                f"MAX_IN_FLIGHT_PER_CLIENT={quota.per_client}; nothing was stored, submit the "
                "order again later with a new MessageId")
    in_flight = sum(stores.states.count_by_state(IN_FLIGHT_STATES).values())
    record_backlog(in_flight, quota.max_in_flight)
    if in_flight >= quota.max_in_flight:
        return ("admission control: the service is at capacity (MAX_IN_FLIGHT); nothing was "
                "stored, submit the order again later with a new MessageId")
    return None


def submit(body: bytes, stores: Stores, sender: MessageSender, now: datetime, *,
           client_id: str, quota: Quota | None = None,
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
    quota : Quota, optional
        Admission control's limits (SPEC X3); None disables admission control.
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
            alert_mismatch(sender, client_id, parsed.description, now)
        return parsed
    key = order_key(client_id, parsed.order.order_id)
    tag_order(key)
    with log_context(key):
        if quota is not None:
            refusal = admit(stores, key, client_id, quota)
            if refusal is not None:
                return refuse(parsed, client_id, sender, now, refusal, message_id)
        return store(parsed, key, body, stores, sender, now)


def keyed(parsed: SubmitOrder, key: str, now: datetime) -> tuple[Order, StateRecord]:
    """Return the order and the first state record as stored under ``key`` (SPEC S1, S2).

    The record's client and reply queue are the key's (the queue's), never the body's;
    its trace is the current span's, the submission's (SPEC X8).
    """
    client_id, client_order_id = split_order_key(key)
    if client_id is None:
        raise ValueError(f"key: {key!r} names no client; submissions are keyed per client")
    record = StateRecord(order_id=key, client_id=client_id,
                         client_order_id=client_order_id, reply_to=reply_queue(client_id),
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
    client_id, reply_to = str(record.client_id), record.reply_to
    try:
        # Order first, then RequestReceived, then the state record: an order whose reply
        # queue does not exist gets no state record, so it never starts, and the message is
        # dead-lettered naming replyTo (a valid resend with the same data is accepted).
        stored = stores.orders.create_if_absent(order)
        existing = stores.states.get(order.order_id)
        if existing is not None and not existing.same_submission(record):
            stores.states.create_if_absent(record)  # raises ConflictError, writes nothing
        try:
            send_status(sender, reply_to, StatusMessage(
                order_id=client_order_id, status=StatusKind.REQUEST_RECEIVED, at=now))
        except QueueNotFoundError as exc:
            return Rejected("UnknownReplyQueue", f"the reply queue '{reply_to}' of client "
                                                 f"{client_id} does not exist ({exc}); "
                                                 "nothing was started")
        state = stores.states.create_if_absent(record)
    except ConflictError as exc:
        # Collapsed per client and window: a client cannot bury other alerts (X10).
        alert_client_caused(sender, "ConflictingOrder", client_id, submit_queue(client_id),
                            f"other data for OrderID {client_order_id} of client {client_id} "
                            f"was refused: {exc}", now, order_id=key)
        answer_conflict(sender, parsed, reply_to, now, str(exc), sha256(body).hexdigest()[:16])
        return Rejected("ConflictingOrder", str(exc))
    return Accepted(order.order_id, stored.created or state.created, state.record)


def answer_conflict(sender: MessageSender, parsed: SubmitOrder, reply_to: str, now: datetime,
                    why: str, digest: str) -> None:
    """Tell the submitter its changed order was refused: "ChangeRefused" with the reason (S1, S8).

    The stored order stands and is answered as usual; this answers the refused message,
    so a client that resent an order with other data hears why instead of waiting. Sent to
    ``reply_to``, the reply queue of the queue's client, only; a queue that does not exist
    is skipped (the message is dead-lettered anyway). ``digest`` (of the body) makes the
    MessageId stable for a redelivery and distinct for another refused change.
    """
    reason = (f"ConflictingOrder: OrderID {parsed.order.order_id} is stored with other data; "
              f"this message was refused and nothing was changed ({why})")
    try:
        send_status(sender, reply_to, StatusMessage(
            order_id=parsed.order.order_id, status=StatusKind.CHANGE_REFUSED, at=now,
            reason=reason[:1000]), dedupe_suffix=f":conflict:{digest}")
    except QueueNotFoundError:
        log.warning("order %s: conflict not answered, reply queue %s does not exist",
                    parsed.order.order_id, reply_to)


def refuse(parsed: SubmitOrder, client_id: str, sender: MessageSender, now: datetime,
           reason: str, message_id: str | None) -> AdmissionRefused:
    """Tell the client its order was rejected by admission control; write nothing (SPEC X3).

    The answer goes to the reply queue of ``client_id``, the queue's client.
    """
    order_id = parsed.order.order_id
    suffix = f":{sha256((message_id or '').encode()).hexdigest()[:16]}"
    send_status(sender, reply_queue(client_id),
                StatusMessage(order_id=order_id, status=StatusKind.REJECTED, at=now,
                              reason=reason), dedupe_suffix=suffix)
    log.info("order %s rejected: %s", order_id, reason)
    return AdmissionRefused(order_id, reason)
