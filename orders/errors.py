"""The root of the order service's own errors, with the one flag that says whether to retry.

Callers decide by ``retryable`` (and ``retry_after``), never by type name or message text;
each package boundary maps what it wraps once, by exception type or status code.
"""

from __future__ import annotations

from azurekit.errors import RetryFlagError


class OrderServiceError(RetryFlagError):
    """Root of the service's errors: ``retryable`` if the same call may succeed later."""
