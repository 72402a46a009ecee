"""Remote steps: one per forward operation of ``infra/services.json`` (A1, S9).

A forward request's payload is its contract's ``of_order`` (``agent_io.PAYLOADS``).
Only a step with an undo is logged. Its undo's payload (``agent_io.PAYLOADS``) is filled
from the step's log entry: the :data:`~orders.models.agent_io.ForwardKey` field gets the
forward request's key, every other field but the order's the completed step's field of
that name (None when only *requested* was logged). Pure; shapes as in-flight histories
recorded them (X6).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from azurekit.services import UnknownServiceError, catalogue
from orders.lifecycle.ids import idempotency_key, reply_event_name, request_message_id
from orders.models import CompensationEntry, Order, Step, agent_io
from orders.models.agent_io import AgentPayload, ForwardKeyField
from orders.models.compensation import details_model
from orders.models.messages import AgentRequest
from orders.names import WORKFLOW_REMOTE_STEPS


@dataclass(frozen=True)
class RemoteStep:
    """A forward operation of a service, as a workflow version runs it."""

    service: str
    operation: str

    def __post_init__(self) -> None:
        if self.operation not in catalogue().service(self.service).forward_operations:
            raise UnknownServiceError(f"{self.service}: {self.operation!r} is not a forward "
                                      "operation of services.json")
        payload = agent_io.PAYLOADS.get(self.operation)
        if payload is None or payload.of_order is AgentPayload.of_order:
            raise UnknownServiceError(f"operation: {self.operation!r} has no payload built "
                                      "from the order (of_order) in "
                                      "orders.models.agent_io.PAYLOADS")
        if self.undo is not None:
            _undo_fields(self.operation, self.undo)

    @property
    def undo(self) -> str | None:
        """The operation that undoes this one (``infra/services.json``), None if none."""
        return catalogue().undo_of(self.operation)

    @property
    def log_step(self) -> Step | None:
        """The compensation log step of this step when it completes; None: not logged."""
        return Step(self.operation) if self.undo is not None else None

    @property
    def reply_event(self) -> str:
        """The external event the agent's reply to this step is raised as (A4)."""
        return reply_event_name(self.operation)

    def request(self, instance_id: str, order: Order, deadline: datetime,
                max_attempts: int) -> AgentRequest:
        """Build the agent request (MessageId ``<instanceId>:<op>``, key ``<OrderID>:<op>``)."""
        op = self.operation
        return AgentRequest(
            message_id=request_message_id(instance_id, op), order_key=order.order_key,
            instance_id=instance_id, service=self.service, operation=op,
            idempotency_key=idempotency_key(order.order_key, op), complete_by=deadline,
            max_attempts=max_attempts, event_name=self.reply_event,
            payload=agent_io.PAYLOADS[op].of_order(order).to_payload())

    def undo_request(self, instance_id: str, entry: CompensationEntry, deadline: datetime,
                     max_attempts: int) -> AgentRequest:
        """Build the request undoing this step from its log entry (stable ids, A2, A4).

        The idempotency key ``<order key>:<undo>`` is the same in every compensation attempt,
        so the service undoes once; the payload names the forward request by its key.

        Raises
        ------
        UnknownServiceError
            If nothing undoes this step.
        """
        undo = self.undo
        if undo is None:
            raise UnknownServiceError(f"{self.service}: {self.operation!r} has no undo in "
                                      "services.json")
        order_key, details = entry.order_key, entry.details
        key = (getattr(details, "idempotency_key", None)
               or idempotency_key(order_key, self.operation))
        key_field, copied = _undo_fields(self.operation, undo)
        done = details if details.step == self.operation else None
        payload = agent_io.PAYLOADS[undo].model_validate({
            "order_key": order_key, key_field: key,
            **{name: getattr(done, name) if done is not None else None for name in copied}})
        return AgentRequest(
            message_id=request_message_id(instance_id, undo), order_key=order_key,
            instance_id=instance_id, service=self.service, operation=undo,
            idempotency_key=idempotency_key(order_key, undo), complete_by=deadline,
            max_attempts=max_attempts, event_name=reply_event_name(undo),
            payload=payload.to_payload())


def _undo_fields(operation: str, undo: str) -> tuple[str, list[str]]:
    """Return the undo payload's forward-key field and the fields copied from the log."""
    model = agent_io.PAYLOADS.get(undo)
    if model is None:
        raise UnknownServiceError(f"operation: undo {undo!r} of {operation!r} has no payload "
                                  "in orders.models.agent_io.PAYLOADS")
    keys = [name for name, info in model.model_fields.items()
            if any(isinstance(meta, ForwardKeyField) for meta in info.metadata)]
    if len(keys) != 1:
        raise UnknownServiceError(f"{model.__name__}: the payload of undo {undo!r} needs "
                                  f"exactly one ForwardKey field; it has {keys}")
    done = details_model(operation).model_fields
    copied = [name for name in model.model_fields if name not in ("order_key", keys[0])]
    missing = [name for name in copied if name not in done]
    if missing:
        raise UnknownServiceError(f"{model.__name__}: fields {missing} of undo {undo!r} are "
                                  f"not in the log details of {operation!r}")
    return keys[0], copied


def workflow_steps(version: int) -> tuple[RemoteStep, ...]:
    """Return the remote steps of a registered workflow version, in order."""
    return tuple(RemoteStep(s, op) for s, op in WORKFLOW_REMOTE_STEPS[version])


WORKFLOW_STEPS = {version: workflow_steps(version) for version in WORKFLOW_REMOTE_STEPS}
"""Every registered version's steps, built at import so a missing payload fails early."""
