"""Versioned data contracts: camelCase JSON, snake_case Python, nothing from Azure.

Step contracts are one module per family on :mod:`orders.models.step_io`; each activity's
name and contracts are declared once in :mod:`~orders.models.activities`.
"""

from orders.models import agent_io as agent_io  # declares the remote steps' log details
from orders.models._types import ORDER_ID_MAX_LENGTH, check_instance_id, format_utc
from orders.models.classification import Classification
from orders.models.compensation import (
    COMPENSATION_SCHEMA_VERSION,
    CompensationEntry,
    Step,
    UndoOutcome,
    check_log_details,
)
from orders.models.order import (
    ORDER_SCHEMA_VERSION,
    TOTAL_TOLERANCE_PER_LINE,
    ClientOrder,
    Order,
    OrderContent,
    OrderLine,
)
from orders.models.state import (
    FINAL_STATES,
    IN_FLIGHT_STATES,
    STATE_SCHEMA_VERSION,
    SUPERVISED_STATES,
    ProcessState,
    StateRecord,
)

check_log_details()

__all__ = [
    "COMPENSATION_SCHEMA_VERSION",
    "FINAL_STATES",
    "IN_FLIGHT_STATES",
    "ORDER_ID_MAX_LENGTH",
    "ORDER_SCHEMA_VERSION",
    "STATE_SCHEMA_VERSION",
    "SUPERVISED_STATES",
    "TOTAL_TOLERANCE_PER_LINE",
    "Classification",
    "ClientOrder",
    "CompensationEntry",
    "Order",
    "OrderContent",
    "OrderLine",
    "ProcessState",
    "StateRecord",
    "Step",
    "UndoOutcome",
    "check_instance_id",
    "format_utc",
]
