"""Errors of the local Service Bus, named after the azure-servicebus exceptions.

Code catches these names in both worlds; ``retryable`` says whether retrying can help.
"""

from __future__ import annotations

from azurekit.errors import RetryFlagError


class ServiceBusError(RetryFlagError):
    """Root of every error raised by :mod:`sqlitebus`; each class here is permanent.

    A busy file surfaces as ``sqlite3.OperationalError``, told by :func:`sqlitekit.is_busy`.
    """


class MessagingEntityNotFoundError(ServiceBusError):
    """The queue does not exist (Azure: ``MessagingEntityNotFoundError``); ``detail`` helps."""

    def __init__(self, queue: str, detail: str) -> None:
        super().__init__(f"queue {queue!r} not found: {detail}")
        self.queue = queue


class MessageLockLostError(ServiceBusError):
    """The lock token is expired, superseded or already settled (Azure: ``MessageLockLostError``).

    The message is (or will be) redelivered under a new token, so handlers are idempotent (X7).
    """

    def __init__(self, lock_token: str, detail: str) -> None:
        super().__init__(f"lock token {lock_token!r}: {detail}")
        self.lock_token = lock_token
