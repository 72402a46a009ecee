"""The host's error root: a ``RetryFlagError``, as ``orders.errors.OrderServiceError`` is."""

from __future__ import annotations

from azurekit.errors import RetryFlagError


class LocalHostError(RetryFlagError):
    """Root of the errors the local host raises to code using it (queues, task hub)."""
