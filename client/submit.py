"""Sending orders: one SubmitOrder message per order to the ``orders`` queue (SPEC S1, S8).

Why a module of its own: the message a client sends is a contract with the submission
function, and two of its properties carry guarantees. The MessageId is the OrderID, so the
queue's duplicate detection drops a resubmission of the same order (within the queue's
``duplicateDetectionHistoryTimeWindow``), and the service's idempotent write on OrderID
covers resubmissions after the window (SPEC X5). ``replyTo`` names the client's own reply
queue, the only place its status messages go (SPEC S8, X10).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated

from pydantic import TypeAdapter, ValidationError

from orders.messaging import MessageSender, OutgoingMessage
from orders.models import Order
from orders.models.messages import SubmitOrder

ORDERS_QUEUE = "orders"
"""The submission queue declared in ``infra/queues.json``."""

MAX_BATCH_MESSAGES = 100
"""Messages per send call; one Service Bus batch."""

MAX_BATCH_BYTES = 192 * 1024
"""Body bytes per batch, under the 256 KB Standard tier batch limit with room for the
message properties the broker adds."""

_CLIENT_ID = TypeAdapter(Annotated[str, *SubmitOrder.model_fields["client_id"].metadata])


def reply_queue_for(client_id: str, *, queues_file: str | Path | None = None) -> str:
    """Return a client's reply queue name from the pattern in ``infra/queues.json``.

    Parameters
    ----------
    client_id : str
        Must satisfy both the ``clientId`` rule of
        :class:`~orders.models.messages.SubmitOrder` (1-40 lower-case letters, digits or
        ``-``) and the reply queue rule of the queue catalog (alphanumeric at both ends).
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
    from devhost.servicebus import load_queue_catalog  # the catalog reader lives there

    try:
        _CLIENT_ID.validate_python(client_id)
    except ValidationError:
        raise ValueError(
            f"client_id: {client_id!r} must be 1-40 lower-case letters, digits or '-', "
            "starting with a letter or digit (SubmitOrder.clientId)"
        ) from None
    return load_queue_catalog(queues_file).reply_queue_name(client_id)


def submit_message(client_id: str, reply_to: str, order: Order) -> OutgoingMessage:
    """Build the ``orders`` queue message for one order.

    Parameters
    ----------
    client_id : str
        The submitting client.
    reply_to : str
        Its reply queue (see :func:`reply_queue_for`).
    order : Order
        A validated order.

    Returns
    -------
    OutgoingMessage
        Body: the :class:`~orders.models.messages.SubmitOrder` JSON (amounts as strings).
        MessageId and CorrelationId: the OrderID. Application properties ``orderId`` and
        ``clientId`` for diagnostics.

    Raises
    ------
    pydantic.ValidationError
        If ``client_id`` or ``reply_to`` breaks the SubmitOrder rules.
    """
    body = SubmitOrder(client_id=client_id, reply_to=reply_to, order=order)
    return OutgoingMessage(
        body.model_dump(mode="json"),
        message_id=order.order_id,
        correlation_id=order.order_id,
        application_properties={"orderId": order.order_id, "clientId": client_id},
    )


def submit_orders(
    sender: MessageSender,
    orders: Iterable[Order],
    *,
    client_id: str,
    reply_to: str,
    queue: str = ORDERS_QUEUE,
    on_sent: Callable[[int], None] | None = None,
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
    queue : str
        Target queue, ``orders`` by default.
    on_sent : callable, optional
        Called with the running total after each batch.

    Returns
    -------
    int
        Messages handed to the broker. A resubmitted OrderID counts here but is dropped
        by duplicate detection; the port cannot tell (as in Azure).

    Raises
    ------
    orders.messaging.MessagingError
        If a batch cannot be sent; earlier batches stay sent (resending them is safe).
    """
    sent = 0
    batch: list[OutgoingMessage] = []
    size = 0

    def flush() -> None:
        nonlocal sent, size
        sender.send_many(queue, batch)
        sent += len(batch)
        batch.clear()
        size = 0
        if on_sent is not None:
            on_sent(sent)

    for order in orders:
        message = submit_message(client_id, reply_to, order)
        length = len(message.body_bytes())
        if batch and (len(batch) >= MAX_BATCH_MESSAGES or size + length > MAX_BATCH_BYTES):
            flush()
        batch.append(message)
        size += length
    if batch:
        flush()
    return sent
