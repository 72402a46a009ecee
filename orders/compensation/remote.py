"""Remote steps: one per forward operation of ``infra/services.json`` (A1, S9).

Only a step with an undo is logged. Pure; shapes as in-flight histories recorded them (X6).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from azurekit.services import UnknownServiceError, catalogue
from orders.lifecycle.ids import idempotency_key, reply_event_name, request_message_id
from orders.models import Order, Step
from orders.models.agent_io import AgentPayload, ChargePayload, ShipPayload
from orders.models.compensation import ReservedLine
from orders.models.messages import AgentRequest
from orders.models.money import fixed_point
from orders.names import WORKFLOW_REMOTE_STEPS


def _charge(order: Order) -> AgentPayload:
    return ChargePayload(order_key=order.order_key,
                         amount=fixed_point(order.total_price),
                         currency=order.currency)


def _ship(order: Order) -> AgentPayload:
    return ShipPayload(order_key=order.order_key, lines=tuple(
        ReservedLine(sku=li.sku, quantity=li.quantity) for li in order.lines))


PAYLOADS: dict[str, Callable[[Order], AgentPayload]] = {"charge": _charge, "ship": _ship}
"""The request payload of each forward operation, built from the order."""


@dataclass(frozen=True)
class RemoteStep:
    """A forward operation of a service, as a workflow version runs it."""

    service: str
    operation: str

    def __post_init__(self) -> None:
        if self.operation not in catalogue().service(self.service).forward_operations:
            raise UnknownServiceError(f"{self.service}: {self.operation!r} is not a forward "
                                      "operation of services.json")
        if self.operation not in PAYLOADS:
            raise UnknownServiceError(f"operation: {self.operation!r} has no payload in "
                                      "orders.compensation.remote.PAYLOADS")

    @property
    def undo(self) -> str | None:
        """The operation that undoes this one (``infra/services.json``), None if none."""
        return catalogue().undo_of(self.operation)

    @property
    def log_step(self) -> Step | None:
        """The compensation log step of this step when it completes; None: not logged."""
        return Step(self.operation) if self.undo is not None else None

    def request(self, instance_id: str, order: Order, deadline: datetime,
                max_attempts: int) -> AgentRequest:
        """Build the agent request (MessageId ``<instanceId>:<op>``, key ``<OrderID>:<op>``)."""
        op = self.operation
        return AgentRequest(
            message_id=request_message_id(instance_id, op), order_key=order.order_key,
            instance_id=instance_id, service=self.service, operation=op,
            idempotency_key=idempotency_key(order.order_key, op), complete_by=deadline,
            max_attempts=max_attempts, event_name=reply_event_name(op),
            payload=PAYLOADS[op](order).to_payload())


def workflow_steps(version: int) -> tuple[RemoteStep, ...]:
    """Return the remote steps of a registered workflow version, in order."""
    return tuple(RemoteStep(s, op) for s, op in WORKFLOW_REMOTE_STEPS[version])


WORKFLOW_STEPS = {version: workflow_steps(version) for version in WORKFLOW_REMOTE_STEPS}
"""Every registered version's steps, built at import so a missing payload fails early."""
