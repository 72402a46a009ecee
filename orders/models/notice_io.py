"""Contracts of the notifying activities both workflows call (SPEC S7, S8, S9).

- ``publish_status``: :class:`PublishStatusInput` -> nothing (JSON null).
- ``alert_operator``: :class:`AlertOperatorInput` -> nothing (JSON null).

Compatibility rules: :mod:`orders.models.step_io`.
"""

from __future__ import annotations

from pydantic import Field

from orders.models._types import InstanceId, OrderKey, QueueName
from orders.models.messages import AlertKind, StatusKind
from orders.models.step_io import StepContract


class PublishStatusInput(StepContract):
    """Input of ``publish_status``: one status message to the client's reply queue (S8).

    Attributes
    ----------
    order_id : str
        The order.
    instance_id : str or None
        The attempt telling; part of the MessageId, so a rerun is dropped as a duplicate
        while a resubmitted order that fails again is still told. Absent in inputs recorded
        before it was added (the MessageId then has no suffix).
    reply_to : str
        The client's private reply queue, from the state record.
    status : StatusKind
        OrderCompleted, OrderFailed, Compensated or CompensationFailed.
    reason : str or None
        Why the order failed; absent on success.
    """

    OMIT_IF_NONE = frozenset({"instance_id", "reason"})

    order_id: OrderKey
    instance_id: InstanceId | None = None
    reply_to: QueueName
    status: StatusKind
    reason: str | None = None


class AlertOperatorInput(StepContract):
    """Input of ``alert_operator``: something an operator must look at (SPEC S7, S9, X6).

    Attributes
    ----------
    kind : AlertKind
        OrderError, CompensationFailed or UnknownWorkflowVersion from the workflows.
    order_id, instance_id : str or None
        The order and the attempt; the alert's MessageId is ``<kind>:<instanceId>`` (or the
        OrderID), one alert per attempt and kind.
    reason : str
        What happened.
    """

    kind: AlertKind
    order_id: str | None = None
    instance_id: str | None = None
    reason: str = Field(min_length=1)
