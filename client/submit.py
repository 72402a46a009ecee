"""Sending orders: one SubmitOrder message per order to the client's own queue (S1, S8, X10).

Each client sends to its own submit queue ``orders-<clientId>`` (:func:`submit_queue_for`),
the only queue its identity may send to: the service takes the client's identity from that
queue, not from the body, and scopes the client's OrderIDs to it (two clients may use the
same OrderID; duplicate detection is per queue, so no other client's MessageId can shadow
this client's). The body still names the client and its reply queue, which must match.

Why a module of its own: the message a client sends is a contract with the submission
function, and two of its properties carry guarantees. The MessageId is
``<OrderID>:<content hash>`` (:func:`message_id_for`): the queue's duplicate detection drops
a resubmission of the same order (within the queue's ``duplicateDetectionHistoryTimeWindow``),
while an order resent with changed data under the same OrderID has another MessageId, so it
reaches submission, which refuses it as a conflict: dead-lettered with the reason and an
operator alert, nothing overwritten (SPEC S1). (With MessageId = OrderID the broker dropped
such a change silently: no dead letter, no answer, no alert.) After the window, the
service's idempotent write on OrderID covers resubmissions (SPEC X5). ``replyTo`` names the
client's own reply queue, the only place its status messages go (SPEC S8, X10).

Resending after "Rejected": admission control (SPEC X3) answers an order it refuses with
"Rejected" and stores nothing, so the client must send the order again later. With the same
MessageId the queue would drop that resend as a duplicate for the whole
``duplicateDetectionHistoryTimeWindow`` (10 minutes): no answer, nothing stored. So a resend
carries a counter, ``<OrderID>:<content hash>:r<n>`` for the ``n``-th resend
(:func:`message_id_for`, ``submit --resend n``): each resend is a new message to duplicate
detection, while a retry of the same resend (the client unsure whether its send went out)
keeps its MessageId and is still dropped. The counter is the client's to keep: one more
per "Rejected" it was told. The service needs nothing else: the order data is the same, so
if an earlier send was stored after all, the resend is accepted as the same submission
(SPEC X5), and each resend's "Rejected" has a MessageId of its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from hashlib import sha256
from pathlib import Path

from azurekit.client_ids import check_client_id
from orders.messaging import MessageSender, OutgoingMessage
from orders.models import Order
from orders.models.messages import SubmitOrder

MAX_BATCH_MESSAGES = 100
"""Messages per send call; one Service Bus batch."""

MAX_BATCH_BYTES = 192 * 1024
"""Body bytes per batch, under the 256 KB Standard tier batch limit with room for the
message properties the broker adds."""

MESSAGE_ID_HASH_HEX_DIGITS = 16
"""Hex digits of the content hash in a MessageId: 64 bits, so two different submissions of
one OrderID share a MessageId with probability about 2**-64."""

MAX_RESEND = 999_999
"""Most resends of one order (the counter's six digits keep the MessageId short)."""

def submit_queue_for(client_id: str, *, queues_file: str | Path | None = None) -> str:
    """Return a client's own submit queue from the pattern in ``infra/queues.json`` (X10).

    Parameters
    ----------
    client_id : str
        1-20 lower-case letters, digits or ``-``, alphanumeric at both ends: the id the
        service lists in ``ORDER_CLIENTS`` (a longer id cannot have a submit queue, since
        its order keys would make instance ids longer than SPEC D2 allows).
    queues_file : str or Path, optional
        Queue catalog; defaults to this checkout's ``infra/queues.json``.

    Returns
    -------
    str
        For example ``orders-acme``.

    Raises
    ------
    ValueError
        Naming ``client_id`` and the rule it breaks.
    """
    from azurekit.queues import load_queue_catalog

    try:
        check_client_id(client_id)
    except ValueError as exc:
        raise ValueError(f"client_id: {exc} (a client with its own submit queue)") from None
    return load_queue_catalog(queues_file).submit_queue_name(client_id)


def reply_queue_for(client_id: str, *, queues_file: str | Path | None = None) -> str:
    """Return a client's reply queue name from the pattern in ``infra/queues.json``.

    Parameters
    ----------
    client_id : str
        A client id (:func:`azurekit.client_ids.check_client_id`: 1 to 20 lower-case
        letters, digits or ``-``, alphanumeric at both ends), the rule of
        :class:`~orders.models.messages.SubmitOrder` and of the queue catalog.
    queues_file : str or Path, optional
        Queue catalog; defaults to this checkout's ``infra/queues.json``.

    Returns
    -------
    str
        For example ``replies-acme``.

    Raises
    ------
    ValueError
        Naming ``client_id`` and the rule it breaks.
    """
    from azurekit.queues import load_queue_catalog

    try:
        check_client_id(client_id)
    except ValueError as exc:
        raise ValueError(f"client_id: {exc}") from None
    return load_queue_catalog(queues_file).reply_queue_name(client_id)


def message_id_for(submission: SubmitOrder, resend: int = 0) -> str:
    """Return the MessageId of a submission: ``<OrderID>:<content hash>[:r<resend>]``.

    The hash is the first :data:`MESSAGE_ID_HASH_HEX_DIGITS` hex digits of the SHA-256 of
    the submission's canonical JSON (its JSON form with sorted keys, no whitespace, UTF-8),
    so every field counts: order data, ``clientId`` and ``replyTo``.

    Parameters
    ----------
    submission : SubmitOrder
        The message body.
    resend : int
        0 for the first send; ``n`` >= 1 for the ``n``-th resend after a "Rejected" (see
        the module docstring), at most :data:`MAX_RESEND`.

    Returns
    -------
    str
        For example ``ORD-1:3f2a9c0d5e6b7a81``, or ``ORD-1:3f2a9c0d5e6b7a81:r2`` for the
        second resend; at most 64 + 1 + 16 + 8 = 89 characters, within Service Bus's
        128-character MessageId limit. The same submission always gets the
        same id (its resend is dropped by duplicate detection); a changed one gets another
        (it reaches submission and is refused as a conflict, SPEC S1). Amounts that are
        equal but written differently (``1.5`` and ``1.50``) give different ids; submission
        accepts the second as the same order (SPEC X5), so nothing changes. Duplicate
        detection is per queue and the queue is the client's own, so another client
        sending this very MessageId drops nothing of this client's.
    """
    if not 0 <= resend <= MAX_RESEND:
        raise ValueError(f"resend: must be 0 (first send) to {MAX_RESEND}; got {resend}")
    canonical = json.dumps(submission.model_dump(mode="json"), sort_keys=True,
                           separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    digest = sha256(canonical.encode("utf-8")).hexdigest()[:MESSAGE_ID_HASH_HEX_DIGITS]
    counter = f":r{resend}" if resend else ""
    return f"{submission.order.order_id}:{digest}{counter}"


def submit_message(client_id: str, reply_to: str, order: Order,
                   resend: int = 0) -> OutgoingMessage:
    """Build the submit queue message for one order.

    Parameters
    ----------
    client_id : str
        The submitting client.
    reply_to : str
        Its reply queue (see :func:`reply_queue_for`).
    order : Order
        A validated order.
    resend : int
        Resends of this order so far after a "Rejected" (see :func:`message_id_for`).

    Returns
    -------
    OutgoingMessage
        Body: the :class:`~orders.models.messages.SubmitOrder` JSON (amounts as strings).
        MessageId: ``<OrderID>:<content hash>[:r<resend>]`` (:func:`message_id_for`). CorrelationId:
        the OrderID. Application properties ``orderId`` and ``clientId`` for diagnostics.

    Raises
    ------
    pydantic.ValidationError
        If ``client_id`` or ``reply_to`` breaks the SubmitOrder rules.
    ValueError
        If ``resend`` is outside 0..:data:`MAX_RESEND`.
    """
    body = SubmitOrder(client_id=client_id, reply_to=reply_to, order=order)
    return OutgoingMessage(
        body.model_dump(mode="json"),
        message_id=message_id_for(body, resend),
        correlation_id=order.order_id,
        application_properties={"orderId": order.order_id, "clientId": client_id},
    )


def submit_orders(
    sender: MessageSender,
    orders: Iterable[Order],
    *,
    client_id: str,
    reply_to: str,
    queue: str | None = None,
    on_sent: Callable[[int], None] | None = None,
    resend: int = 0,
) -> int:
    """Send one SubmitOrder per order, in batches, in iteration order.

    Parameters
    ----------
    sender : MessageSender
        Local or Azure adapter of the messaging port.
    orders : Iterable[Order]
        Consumed lazily; a batch is sent when it reaches :data:`MAX_BATCH_MESSAGES`
        messages or :data:`MAX_BATCH_BYTES` body bytes.
    client_id, reply_to : str
        See :func:`submit_message`.
    queue : str, optional
        Target queue; by default the client's own ``orders-<clientId>``
        (:func:`submit_queue_for`), the only one the service takes its orders from.
    on_sent : callable, optional
        Called with the running total after each batch.
    resend : int
        0 for a first send; ``n`` to resend orders told "Rejected" for the ``n``-th time
        (see the module docstring).

    Returns
    -------
    int
        Messages handed to the broker. A resubmitted order (same data, so same MessageId)
        counts here but is dropped by duplicate detection; the port cannot tell (as in
        Azure).

    Raises
    ------
    orders.messaging.MessagingError
        If a batch cannot be sent; earlier batches stay sent (resending them is safe).
    ValueError
        If ``client_id`` cannot have a submit queue (see :func:`submit_queue_for`).
    """
    target = queue if queue is not None else submit_queue_for(client_id)
    sent = 0
    batch: list[OutgoingMessage] = []
    size = 0

    def flush() -> None:
        nonlocal sent, size
        sender.send_many(target, batch)
        sent += len(batch)
        batch.clear()
        size = 0
        if on_sent is not None:
            on_sent(sent)

    for order in orders:
        message = submit_message(client_id, reply_to, order, resend)
        length = len(message.body_bytes())
        if batch and (len(batch) >= MAX_BATCH_MESSAGES or size + length > MAX_BATCH_BYTES):
            flush()
        batch.append(message)
        size += length
    if batch:
        flush()
    return sent
