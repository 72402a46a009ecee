"""Sending orders: one SubmitOrder message per order to the client's own queue (S1, S8, X10).

The service takes the client's identity from the queue ``orders-<clientId>``, never from
the body, so OrderIDs are per client and duplicate detection (per queue) cannot let one
client shadow another's MessageId. The MessageId ``<OrderID>:<content hash>[:r<n>]``
(:func:`message_id_for`) makes the queue drop a resubmission of the same order, lets a
changed order through to submission (which refuses it as a conflict, S1), and gives the
``n``-th resend after "Rejected" (X3) a new id inside the 10-minute duplicate window; a
retry of the same resend keeps its id and is dropped. docs/client.md tells the protocol.
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
"""Body bytes per batch: under the 256 KB Standard tier limit, with room for properties."""

MESSAGE_ID_HASH_HEX_DIGITS = 16
"""Hex digits of the content hash in a MessageId (64 bits)."""

MAX_RESEND = 999_999
"""Most resends of one order (the counter's six digits keep the MessageId short)."""

def submit_queue_for(client_id: str, *, queues_file: str | Path | None = None) -> str:
    """Return a client's own submit queue (``orders-acme``) from ``infra/queues.json`` (X10).

    Raises
    ------
    ValueError
        Naming ``client_id`` and the rule it breaks (:func:`~azurekit.client_ids.check_client_id`).
    """
    from azurekit.queues import load_queue_catalog

    try:
        check_client_id(client_id)
    except ValueError as exc:
        raise ValueError(f"client_id: {exc} (a client with its own submit queue)") from None
    return load_queue_catalog(queues_file).submit_queue_name(client_id)


def reply_queue_for(client_id: str, *, queues_file: str | Path | None = None) -> str:
    """Return a client's reply queue (``replies-acme``) from ``infra/queues.json``.

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
    """Return ``<OrderID>:<hash>[:r<resend>]``, e.g. ``ORD-1:3f2a9c0d5e6b7a81:r2``.

    The hash is the SHA-256 of the submission's canonical JSON (sorted keys, no
    whitespace), so every field counts. At most 89 characters (Service Bus allows 128).
    ``resend`` is 0 for a first send, ``n`` for the ``n``-th resend after "Rejected".
    Equal amounts written differently (``1.5``, ``1.50``) give different ids; submission
    takes the second as the same order (X5).
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
    """Build the submit message for one order: SubmitOrder JSON, CorrelationId the OrderID.

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
    """Send one SubmitOrder per order, in batches, in order; return how many were sent.

    ``orders`` is consumed lazily; ``queue`` defaults to the client's own submit queue;
    ``on_sent`` gets the running total after each batch. A resubmission counts as sent
    even though duplicate detection drops it (as on Azure, the sender cannot tell).

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
