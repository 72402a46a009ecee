"""Versioned data contracts of the order service: the order and its state record.

Pydantic v2 models with camelCase JSON names (messages, Cosmos DB documents) and
snake_case Python names. They import nothing from Azure, so workflow code can use them.
"""

from orders.models._types import ORDER_ID_MAX_LENGTH, check_instance_id, format_utc
from orders.models.order import (
    ORDER_SCHEMA_VERSION,
    TOTAL_TOLERANCE_PER_LINE,
    Order,
    OrderLine,
)
from orders.models.state import (
    IN_FLIGHT_STATES,
    STATE_SCHEMA_VERSION,
    SUPERVISED_STATES,
    ProcessState,
    StateRecord,
)

__all__ = [
    "IN_FLIGHT_STATES",
    "ORDER_ID_MAX_LENGTH",
    "ORDER_SCHEMA_VERSION",
    "STATE_SCHEMA_VERSION",
    "SUPERVISED_STATES",
    "TOTAL_TOLERANCE_PER_LINE",
    "Order",
    "OrderLine",
    "ProcessState",
    "StateRecord",
    "check_instance_id",
    "format_utc",
]
