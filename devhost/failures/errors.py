"""The root of the local host's errors, with the flag the order service's errors carry.

The local host is never deployed, so :mod:`orders` cannot import it and has its own root
(``orders.errors.OrderServiceError``); both derive from ``azurekit.errors.RetryFlagError``,
so an adapter over the local host (``orders.messaging.local``) carries the decision over
unchanged. Retry or not is the flag, never the type name or the message text (STYLE 15).
"""

from __future__ import annotations

from azurekit.errors import RetryFlagError


class LocalHostError(RetryFlagError):
    """Root of the errors the local host raises to code using it (queues, task hub).

    Takes and carries ``retryable`` and ``retry_after`` as
    :class:`azurekit.errors.RetryFlagError` does.
    """
