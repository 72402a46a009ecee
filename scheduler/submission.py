"""Submission (S1, S2, S8, X10): the order message becomes an order and a state record.

The client is the queue's (:mod:`scheduler.identity`); the order is stored under the order
key (:func:`orders.lifecycle.ids.order_key`). Both writes are idempotent on that key and
share no transaction (X5); other data under a stored key is refused, nothing overwritten.
Admission control (X3) runs before any write: see docs/operations.md, "Admission control
(X3) and fair shares between clients".
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from hashlib import sha256

from orders.lifecycle.ids import order_key, split_order_key
from orders.messaging import MessageSender, QueueNotFoundError
from orders.models import IN_FLIGHT_STATES, Order, OrderContent, StateRecord, wire
from orders.models.messages import (
    StatusKind,
    StatusMessage,
    SubmitOrder,
    reply_queue,
    submit_queue,
)
from orders.models.money import maximum_problem
from orders.models.order_size import size_problem
from orders.models.state import WORK_LINES, work_of
from orders.notify import send_status
from orders.observability.logs import log_context
from orders.observability.metrics import record_backlog
from orders.observability.tracing import current_traceparent, tag_order
from orders.pricing import price_problem
from orders.stores import Stores
from orders.stores.errors import ConflictError
from scheduler.identity import (
    CLIENT_MISMATCH,
    alert_client_caused,
    alert_mismatch,
    client_mismatch,
)

log = logging.getLogger("orders.submission")

NOTHING_STORED = "nothing was stored"
"""How a refusal's answer ends: the client may resend a corrected message (S1)."""

MAX_REASON_CHARS = 1000
"""Longest reason a Rejected answer to a refused message carries."""


@dataclass(frozen=True)
class Rejected:
    """Why a message cannot be accepted; it is dead-lettered with this reason."""

    reason: str
    description: str


@dataclass(frozen=True)
class AdmissionRefused:
    """Admission control refused a new order (X3); the client was told, the message is completed."""

    order_id: str
    reason: str


@dataclass(frozen=True)
class Accepted:
    """The order and its state record are stored (``created`` False on a redelivery).

    ``record`` is the state record as stored, with its ETag (S3).
    """

    order_key: str
    created: bool
    record: StateRecord | None = field(default=None, compare=False)


def parse_submission(body: bytes, client_id: str) -> SubmitOrder | Rejected:
    """Parse and validate an order message; never raise for anything the body holds (S1).

    Every bad body is ``Rejected("InvalidJson" | "SchemaViolation")`` naming the field and
    rule (:mod:`orders.models.wire`), or ``ClientMismatch`` if it names another client.
    Pure, so the message is dead-lettered on its first delivery. The limits of a new order
    (``MAX_ORDER_AMOUNT``: :func:`amount_problem`) are :func:`submit`'s, after the check
    for a stored one.
    """
    try:
        parsed = wire.parse(body, SubmitOrder)
    except wire.InvalidMessage as exc:
        return Rejected(exc.reason, exc.description)
    mismatch = client_mismatch(parsed, client_id)
    if mismatch is not None:
        return Rejected(CLIENT_MISMATCH, mismatch)
    return parsed


def amount_problem(parsed: SubmitOrder, max_amount: Decimal | None) -> Rejected | None:
    """Return ``SchemaViolation`` naming the field over ``max_amount`` (``MAX_ORDER_AMOUNT``).

    None when every amount is within it, or ``max_amount`` is None (no limit).
    """
    too_large = maximum_problem(parsed.order, max_amount) if max_amount is not None else None
    if too_large is None:
        return None
    return Rejected(wire.SCHEMA_VIOLATION, f"order.{too_large[0]}: {too_large[1]}")


@dataclass(frozen=True)
class Quota:
    """Admission control's limits (X3): ``MAX_IN_FLIGHT`` and ``MAX_IN_FLIGHT_PER_CLIENT``."""

    max_in_flight: int
    per_client: int


def already_stored(stores: Stores, order_key: str) -> bool:
    """Say whether an order or a state record is stored under ``order_key`` (X5)."""
    return stores.states.get(order_key) is not None or stores.orders.get(order_key) is not None


def admit(stores: Stores, client_id: str, quota: Quota, work: int = 1) -> str | None:
    """Return why a new order is refused (X3), or None.

    For an order not stored yet (:func:`submit` admits a stored one before any check). The
    client's quota counts work, not orders: ``work`` is the new order's weight
    (:func:`orders.models.state.work_of`), and each order in flight weighs its own.
    """
    mine = stores.states.count_of_client(client_id, IN_FLIGHT_STATES, quota.per_client)
    if mine + work - 1 >= quota.per_client:
        weight = (f"; an order counts one per {WORK_LINES} lines or part, this one {work}"
                  if work > 1 else "")
        return (f"admission control: client {client_id} has {mine} orders in flight "
                f"(Pending, Processing, Compensating{weight}), its quota "
                f"MAX_IN_FLIGHT_PER_CLIENT={quota.per_client}; nothing was stored, submit the "
                "order again later with a new MessageId")
    in_flight = stores.states.count_in(IN_FLIGHT_STATES)
    record_backlog(in_flight, quota.max_in_flight)
    if in_flight >= quota.max_in_flight:
        return ("admission control: the service is at capacity (MAX_IN_FLIGHT); nothing was "
                "stored, submit the order again later with a new MessageId")
    return None


def submit(body: bytes, stores: Stores, sender: MessageSender, now: datetime, *,
           client_id: str, quota: Quota | None = None,
           message_id: str | None = None,
           max_amount: Decimal | None = None,
           priced: bool = False) -> Accepted | Rejected | AdmissionRefused:
    """Store a submitted order idempotently and tell the client it was received.

    ``client_id`` is the queue's client (X10); ``quota`` None disables admission control;
    ``priced`` (``PRICE_FROM_CATALOGUE``) checks every line's price against the catalogue
    (:mod:`orders.pricing`). An order too large (:mod:`orders.models.order_size`) or priced
    otherwise than the catalogue is refused as admission control refuses one.
    The caller dead-letters a Rejected result and completes an AdmissionRefused one.

    A resend of an order already stored is the same submission (X5): it goes straight to
    :func:`store` (accepted again, or ``ConflictingOrder`` if its data differ), never through
    the checks for new orders (``max_amount``, size, prices, admission), which it passed when
    it was stored and a later price or setting must not turn into a "nothing was stored"
    answer for an order that runs.

    Raises
    ------
    ValueError
        If ``client_id`` is not a valid client id.
    """
    parsed = parse_submission(body, client_id)
    if isinstance(parsed, Rejected):
        if parsed.reason == CLIENT_MISMATCH:
            alert_mismatch(sender, client_id, parsed.description, now)
        answer_refused(body, client_id, sender, now, parsed, message_id)
        return parsed
    key = order_key(client_id, parsed.client_order_id)
    tag_order(key)
    with log_context(key):
        if already_stored(stores, key):
            return store(parsed, key, body, stores, sender, now)
        too_large = amount_problem(parsed, max_amount)
        if too_large is not None:
            answer_refused(body, client_id, sender, now, too_large, message_id)
            return too_large
        problem = order_problem(parsed.order, stores, priced)
        if problem is not None:
            return refuse(parsed, client_id, sender, now, problem[0], message_id,
                          logged=problem[1])
        if quota is not None:
            refusal = admit(stores, client_id, quota, work_of(len(parsed.order.lines)))
            if refusal is not None:
                return refuse(parsed, client_id, sender, now, refusal, message_id)
        return store(parsed, key, body, stores, sender, now)


def readable_order_id(body: bytes, client_id: str) -> str | None:
    """Return the body's ``order.orderId`` if it is JSON and a valid OrderID, else None."""
    try:
        data = wire.loads(body)
    except wire.InvalidMessage:
        return None
    order = data.get("order") if isinstance(data, dict) else None
    candidate = order.get("orderId") if isinstance(order, dict) else None
    if not isinstance(candidate, str):
        return None
    try:
        order_key(client_id, candidate)
    except ValueError:
        return None
    return candidate


def answer_refused(body: bytes, client_id: str, sender: MessageSender, now: datetime,
                   refused: Rejected, message_id: str | None) -> None:
    """Tell the queue's client its message was refused for its shape: ``Rejected`` (S1, S8).

    To ``replies-<clientId>`` of the queue's client, never a client the body names (X10),
    with the OrderID where the body holds a readable one and the field and rule; the
    MessageId names the refused message (or the body's hash), so a redelivery answers once.
    A missing reply queue is logged: the dead letter still holds the reason.
    """
    order_id = readable_order_id(body, client_id)
    digest = sha256((message_id or "").encode() or body).hexdigest()[:16]
    reason = f"{refused.reason}: {refused.description}"
    if not reason.endswith(NOTHING_STORED):  # a ClientMismatch description says it already
        reason = f"{reason}; {NOTHING_STORED}"
    try:
        send_status(sender, reply_queue(client_id), StatusMessage(
            order_id=order_id, status=StatusKind.REJECTED, at=now,
            reason=reason[:MAX_REASON_CHARS]), dedupe_suffix=f":refused:{digest}")
    except QueueNotFoundError:
        log.warning("client %s: refused message %s not answered, reply queue %s does not "
                    "exist", client_id, message_id, reply_queue(client_id))


def order_problem(order: OrderContent, stores: Stores, priced: bool) -> tuple[str, str] | None:
    """Return why a valid order is refused for its size or prices (X3, S1), or None.

    Two texts: the reason told to the client (its own values quoted) and the one logged,
    naming the line and field with the values withheld (:class:`orders.pricing.PriceProblem`).
    """
    too_large = size_problem(order)
    if too_large is not None:
        reason = f"order size: {too_large}; nothing was stored"
        return reason, reason
    mispriced = None
    if priced:  # the items of the order's SKUs read at once (one query on SQLite)
        items = stores.inventory.get_many(line.sku for line in order.lines)
        mispriced = price_problem(order, items.__getitem__)
    if mispriced is not None:
        return (f"order price: {mispriced.told}; nothing was stored",
                f"order price: {mispriced.logged}; nothing was stored")
    return None


def keyed(parsed: SubmitOrder, key: str, now: datetime) -> tuple[Order, StateRecord]:
    """Return the order to store and its first state record, both under the order ``key``.

    The client's order (named by its OrderID) becomes a stored :class:`Order` (named by
    ``key``, S1, X5); the client's OrderID goes to the state record's ``client_order_id``,
    client and reply queue are the key's (X10).

    Raises
    ------
    ValueError
        If ``key`` names no client (submissions are keyed per client).
    """
    client_id, client_order_id = split_order_key(key)
    if client_id is None:
        raise ValueError(f"key: {key!r} names no client; submissions are keyed per client")
    record = StateRecord(order_key=key, client_id=client_id,
                         client_order_id=client_order_id, reply_to=reply_queue(client_id),
                         created_at=now, updated_at=now, trace_parent=current_traceparent(),
                         work=work_of(len(parsed.order.lines)))
    return Order.of_client(parsed.order, key), record


def store(parsed: SubmitOrder, key: str, body: bytes, stores: Stores, sender: MessageSender,
          now: datetime) -> Accepted | Rejected:
    """Write the order and its state record idempotently; RequestReceived to the client (S1).

    ``Rejected("ConflictingOrder")`` if other data is stored under ``key``.
    """
    order, record = keyed(parsed, key, now)
    client_order_id = parsed.client_order_id
    client_id, reply_to = str(record.client_id), record.reply_to
    try:
        # Order first, then RequestReceived, then the state record: an order whose reply
        # queue does not exist gets no state record, so it never starts, and the message is
        # dead-lettered naming replyTo (a valid resend with the same data is accepted).
        stored = stores.orders.create_if_absent(order)
        # An order this call created had no record before it (the order is written first);
        # a record since is another send's of the same order (its order write matched
        # ours), so of the same submission: only a stored order needs its record read.
        existing = None if stored.created else stores.states.get(order.order_key)
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
                            f"was refused: {exc}", now, order_key=key)
        answer_conflict(sender, parsed, reply_to, now, str(exc), sha256(body).hexdigest()[:16])
        return Rejected("ConflictingOrder", str(exc))
    return Accepted(order.order_key, stored.created or state.created, state.record)


def answer_conflict(sender: MessageSender, parsed: SubmitOrder, reply_to: str, now: datetime,
                    why: str, digest: str) -> None:
    """Tell the submitter its changed order was refused: "ChangeRefused" (S1, S8).

    ``digest`` (of the body) keeps the MessageId stable per refused message; a missing
    reply queue is skipped.
    """
    reason = (f"ConflictingOrder: OrderID {parsed.client_order_id} is stored with other data; "
              f"this message was refused and nothing was changed ({why})")
    try:
        send_status(sender, reply_to, StatusMessage(
            order_id=parsed.client_order_id, status=StatusKind.CHANGE_REFUSED, at=now,
            reason=reason[:1000]), dedupe_suffix=f":conflict:{digest}")
    except QueueNotFoundError:
        log.warning("order %s: conflict not answered, reply queue %s does not exist",
                    parsed.client_order_id, reply_to)


def refuse(parsed: SubmitOrder, client_id: str, sender: MessageSender, now: datetime,
           reason: str, message_id: str | None, *, logged: str | None = None,
           ) -> AdmissionRefused:
    """Tell the queue's client its order was rejected; write nothing (X3).

    Admission control, the order's size (:mod:`orders.models.order_size`) or its prices
    (:mod:`orders.pricing`) refused it; ``reason`` names the rule, and is logged unless
    ``logged`` gives the text to log instead (the client's values withheld, X10).
    """
    order_id = parsed.client_order_id
    suffix = f":{sha256((message_id or '').encode()).hexdigest()[:16]}"
    send_status(sender, reply_queue(client_id),
                StatusMessage(order_id=order_id, status=StatusKind.REJECTED, at=now,
                              reason=reason), dedupe_suffix=suffix)
    log.info("order %s rejected: %s", order_id, reason if logged is None else logged)
    return AdmissionRefused(order_id, reason)
