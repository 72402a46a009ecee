"""Errors of the local Service Bus stand-in, named after the azure-servicebus exceptions.

Code written against the port catches these names in both worlds: the local engine raises
the classes below, the Azure SDK raises its own classes of the same names. Each class says
whether retrying the same call can help with ``retryable`` (STYLE 8: errors say whether to
retry), from the shared root :class:`azurekit.errors.RetryFlagError`.
"""

from __future__ import annotations

from azurekit.errors import RetryFlagError


class ServiceBusError(RetryFlagError):
    """Root of every error raised by :mod:`sqlitebus`; permanent unless flagged.

    Every class below is permanent (``retryable`` False): a busy SQLite file surfaces as
    ``sqlite3.OperationalError`` with SQLITE_BUSY, which callers tell by its code
    (:func:`sqlitekit.is_busy`).
    """


class MessagingEntityNotFoundError(ServiceBusError):
    """The queue does not exist (Azure: ``MessagingEntityNotFoundError``).

    Declare the queue in ``infra/queues.json`` or use a name matching the client reply
    queue pattern. Permanent: retrying with the same name cannot succeed.

    Parameters
    ----------
    queue : str
        The entity name that was not found.
    detail : str
        What to do about it.
    """

    def __init__(self, queue: str, detail: str) -> None:
        super().__init__(f"queue {queue!r} not found: {detail}")
        self.queue = queue


class MessageLockLostError(ServiceBusError):
    """The lock token is expired, superseded or already settled (Azure: ``MessageLockLostError``).

    The message is not lost: it is (or will be) redelivered with a new lock token and a
    higher delivery count, so the handler must be idempotent (SPEC X7). Retrying the
    settlement with the same token cannot succeed.

    Parameters
    ----------
    lock_token : str
        The token the caller presented.
    detail : str
        Why the lock is no longer held.
    """

    def __init__(self, lock_token: str, detail: str) -> None:
        super().__init__(f"lock token {lock_token!r}: {detail}")
        self.lock_token = lock_token
