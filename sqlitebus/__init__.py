"""Local stand-in for Azure Service Bus queues, on one SQLite file shared by host processes.

Why: the app must run on one machine with no cloud, Docker or .NET, yet its handlers must
meet the same delivery semantics they meet in Azure (SPEC S1, A4, X1, X7), so the rules
below are emulated, not simplified. Queue properties come from ``infra/queues.json``, the
file Bicep deploys (:mod:`azurekit.queues`). All time comes from an
injected :class:`~devhost.run.clock.Clock`, so tests move time instead of sleeping.

Emulated Azure behaviour
------------------------
- Peek-lock receive: each delivery increments ``delivery_count`` (1 on first receive),
  issues a new lock token and sets ``locked_until = now + lockDuration``. ``complete``
  removes the message; ``abandon`` releases it at once (count stays); ``renew_lock``
  extends the lock; ``dead_letter`` moves it to the dead-letter subqueue with
  ``DeadLetterReason`` / ``DeadLetterErrorDescription``. A token whose lock expired, was
  superseded by a redelivery or was settled raises ``MessageLockLostError``.
- Lock expiry: a receiver that dies loses nothing; after ``lockDuration`` the message is
  redelivered with ``delivery_count + 1``.
- ``maxDeliveryCount``: a message delivered that many times whose lock expires or that is
  abandoned goes to ``<queue>/$deadletterqueue`` with reason ``MaxDeliveryCountExceeded``.
- Duplicate detection (``requiresDuplicateDetection``): a MessageId already sent to the
  queue within ``duplicateDetectionHistoryTimeWindow`` of its first send is silently
  dropped, even if the first was completed; after the window it is accepted again.
- TTL: a message's TTL is capped at ``defaultMessageTimeToLive``; expired messages are
  dead-lettered with ``TTLExpiredException`` when ``deadLetteringOnMessageExpiration``,
  else discarded. Messages in the dead-letter subqueue do not expire.
- Scheduled messages (``scheduled_enqueue_time``) are invisible to receive until due.
- Order: oldest enqueued time first, then sequence number (FIFO for unscheduled sends).
- Unknown queues raise ``MessagingEntityNotFoundError``; entity names are
  case-insensitive; send batches are atomic; 256 KB message size limit.

Not emulated
------------
Sessions (``session_id`` is stored, never used for locking or ordering), topics and
subscriptions, receive-and-delete mode, deferral, auto-forwarding, transactions across
entities, partitioning, quotas and throttling, and Azure's wait-for-messages receive
(``receive`` returns at once; the host polls). Broker rules (TTL, max delivery) are
applied when a receive or :meth:`ServiceBusEngine.sweep` reaches a message, not by a
background timer. Application property values are limited to JSON scalars.

Public API: :func:`open_engine` / :class:`ServiceBusEngine` (in
:mod:`~sqlitebus.engine`), the value
types in :mod:`~sqlitebus.models`, the errors in
:mod:`~sqlitebus.errors` and :func:`load_queue_catalog`.
"""

from azurekit.queues import (
    QueueCatalog,
    QueueProperties,
    QueuePropertiesError,
    load_queue_catalog,
    parse_queue_catalog,
)
from sqlitebus.engine import FILE_NAME, ServiceBusEngine, open_engine
from sqlitebus.errors import (
    MessageLockLostError,
    MessagingEntityNotFoundError,
    ServiceBusError,
)
from sqlitebus.models import (
    DEAD_LETTER_SUFFIX,
    MessageSizeExceededError,
    NewMessage,
    QueueCounts,
    QueueInfo,
    ReceivedMessage,
)
from sqlitebus.rows import MAX_DELIVERY_COUNT_EXCEEDED, TTL_EXPIRED

__all__ = [
    "DEAD_LETTER_SUFFIX",
    "FILE_NAME",
    "MAX_DELIVERY_COUNT_EXCEEDED",
    "TTL_EXPIRED",
    "MessageLockLostError",
    "MessageSizeExceededError",
    "MessagingEntityNotFoundError",
    "NewMessage",
    "QueueCatalog",
    "QueueCounts",
    "QueueInfo",
    "QueueProperties",
    "QueuePropertiesError",
    "ReceivedMessage",
    "ServiceBusEngine",
    "ServiceBusError",
    "load_queue_catalog",
    "open_engine",
    "parse_queue_catalog",
]
