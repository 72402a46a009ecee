"""Sending orders: one SubmitOrder message per order to the client's own queue (S1, S8, X10).

MessageIds and resending after "Rejected": docs/client.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from hashlib import sha256
from pathlib import Path

from azurekit.client_ids import check_client_id
from orders.messaging import MessageSender, OutgoingMessage
from orders.models import ClientOrder
from orders.models.messages import SubmitOrder

MAX_BATCH_MESSAGES = 100

MAX_BATCH_BYTES = 192 * 1024
"""Body bytes per batch: under the 256 KB Standard tier limit, with room for properties."""

MESSAGE_ID_HASH_HEX_DIGITS = 16

MAX_RESEND = 999_999

def submit_queue_for(client_id: str, *, queues_file: str | Path | None = None) -> str:
    """Return a client's submit queue (``orders-acme``, X10); ValueError for a bad ``client_id``."""
    from azurekit.queues import load_queue_catalog

    try:
        check_client_id(client_id)
    except ValueError as exc:
        raise ValueError(f"client_id: {exc} (a client with its own submit queue)") from None
    return load_queue_catalog(queues_file).submit_queue_name(client_id)


def reply_queue_for(client_id: str, *, queues_file: str | Path | None = None) -> str:
    """Return a client's reply queue (``replies-acme``); ValueError naming a bad ``client_id``."""
    from azurekit.queues import load_queue_catalog

    try:
        check_client_id(client_id)
    except ValueError as exc:
        raise ValueError(f"client_id: {exc}") from None
    return load_queue_catalog(queues_file).reply_queue_name(client_id)


def message_id_for(submission: SubmitOrder, resend: int = 0) -> str:
    """Return ``<OrderID>:<hash>[:r<resend>]`` (<= 89 characters), hashing the canonical JSON."""
    if not 0 <= resend <= MAX_RESEND:
        raise ValueError(f"resend: must be 0 (first send) to {MAX_RESEND}; got {resend}")
    canonical = json.dumps(submission.model_dump(mode="json"), sort_keys=True,
                           separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    digest = sha256(canonical.encode("utf-8")).hexdigest()[:MESSAGE_ID_HASH_HEX_DIGITS]
    counter = f":r{resend}" if resend else ""
    return f"{submission.client_order_id}:{digest}{counter}"


def submit_message(client_id: str, reply_to: str, order: ClientOrder,
                   resend: int = 0) -> OutgoingMessage:
    """Build one order's submit message; ValidationError for bad ids, ValueError for ``resend``."""
    body = SubmitOrder(client_id=client_id, reply_to=reply_to, order=order)
    return OutgoingMessage(
        body.model_dump(mode="json"),
        message_id=message_id_for(body, resend),
        correlation_id=order.order_id,
        application_properties={"orderId": order.order_id, "clientId": client_id},
    )


def submit_orders(
    sender: MessageSender,
    orders: Iterable[ClientOrder],
    *,
    client_id: str,
    reply_to: str,
    queue: str | None = None,
    on_sent: Callable[[int], None] | None = None,
    resend: int = 0,
) -> int:
    """Send one SubmitOrder per order, in batches; return how many were sent (duplicates too).

    Raises MessagingError if a batch fails (earlier ones stay sent, resending is safe),
    ValueError if ``client_id`` cannot have a submit queue.
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
