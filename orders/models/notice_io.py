"""Contracts of ``publish_status`` and ``alert_operator`` (S7, S8, S9); both return null."""

from __future__ import annotations

from pydantic import Field

from orders.models._types import InstanceId, OrderKey, QueueName
from orders.models.messages import AlertKind, StatusKind
from orders.models.step_io import StepContract


class PublishStatusInput(StepContract):
    """Input of ``publish_status``: one status message to the client's reply queue (S8).

    ``instance_id`` is part of the MessageId, so a rerun is a duplicate while a resubmitted
    order's new failure is still told; absent in older recorded inputs.
    """

    OMIT_IF_NONE = frozenset({"instance_id", "reason"})

    order_key: OrderKey = Field(alias="orderId")
    instance_id: InstanceId | None = None
    reply_to: QueueName
    status: StatusKind
    reason: str | None = None


class AlertOperatorInput(StepContract):
    """Input of ``alert_operator``; MessageId ``<kind>:<instanceId>``, one per attempt and kind."""

    kind: AlertKind
    order_key: str | None = Field(default=None, alias="orderId")
    instance_id: str | None = None
    reason: str = Field(min_length=1)
