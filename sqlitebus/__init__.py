"""Local stand-in for Azure Service Bus queues on SQLite; its semantics: :mod:`sqlitebus.engine`."""

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
