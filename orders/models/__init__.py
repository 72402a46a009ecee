"""Versioned data contracts of the order service: the order and its state record.

Pydantic v2 models with camelCase JSON names (messages, Cosmos DB documents) and
snake_case Python names. They import nothing from Azure, so workflow code can use them.

The contracts between workflow steps (activity inputs and results, orchestration inputs and
outputs) are one module per family on the base in :mod:`orders.models.step_io`:
:mod:`~orders.models.attempt_io` (order workflow), :mod:`~orders.models.compensation_io`
(compensation workflow and log), :mod:`~orders.models.notice_io` (status and alerts) and
:mod:`~orders.models.agent_io` (agent requests as the workflows send them). Each activity's
name and contracts are declared once in :mod:`~orders.models.activities`.
"""

from orders.models._types import ORDER_ID_MAX_LENGTH, check_instance_id, format_utc
from orders.models.classification import Classification
from orders.models.compensation import (
    COMPENSATION_SCHEMA_VERSION,
    CompensationEntry,
    Step,
    UndoOutcome,
)
from orders.models.order import (
    ORDER_SCHEMA_VERSION,
    TOTAL_TOLERANCE_PER_LINE,
    Order,
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
    "CompensationEntry",
    "Order",
    "OrderLine",
    "ProcessState",
    "StateRecord",
    "Step",
    "UndoOutcome",
    "check_instance_id",
    "format_utc",
]
