"""The root of the order service's own errors, with the one flag that says whether to retry.

Callers decide "try again later" or "give up" by :attr:`OrderServiceError.retryable`
(and wait :attr:`OrderServiceError.retry_after` when the backend named a time), never by
an exception's type name or message text (STYLE 8, 15). Each package boundary maps the
errors of what it wraps once, by exception type or status code, into a subclass:
:mod:`orders.stores.errors` (SQLite, Cosmos DB), :mod:`orders.messaging.errors`
(Service Bus, local queues), ``scheduler.durable_client`` (the Durable Functions client).
The subclass says what happened; the flag says whether repeating the same call can help.

The local host has its own root with the same base (``devhost.failures.errors.LocalHostError``): it
is never deployed, so ``orders`` never imports it.
"""

from __future__ import annotations

from azurekit.errors import RetryFlagError


class OrderServiceError(RetryFlagError):
    """Root of the order service's errors.

    Takes and carries what :class:`azurekit.errors.RetryFlagError` does: ``retryable`` is
    True if the same call may succeed later without any change by the caller (the backend
    was busy, throttled or unreachable), False if repeating the call unchanged fails the
    same way; ``retry_after`` is how long the backend asked the caller to wait, if it said.
    The message names the operation and what to do about it.
    """
