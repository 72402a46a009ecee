"""Versioned message contracts on the queues (S1, S8, A1, A4, X6).

A reader refuses a ``schemaVersion`` it does not know. ``orders-<clientId>``:
:class:`SubmitOrder` (the queue names the client, X10); ``payment-requests`` /
``shipping-requests``: :class:`AgentRequest`; ``agent-replies``: :class:`AgentReply`;
``replies-<clientId>``: :class:`StatusMessage`; ``operator-alerts``: :class:`OperatorAlert`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, Field, model_validator

from azurekit.services import catalogue
from orders.models._types import (
    ClientId,
    Contract,
    InstanceId,
    OrderId,
    OrderKey,
    QueueName,
    UtcDatetime,
)
from orders.models.money import minor_unit_problem
from orders.models.order import ClientOrder

MESSAGE_SCHEMA_VERSION: Final = 1

REPLY_QUEUE_PATTERN = "replies-{clientId}"
"""A client's reply queue; ``infra/queues.json`` and the Bicep match it (tested)."""

SUBMIT_QUEUE_PATTERN = "orders-{clientId}"
"""A client's submit queue (X10); ``infra/queues.json`` and the Bicep match it (tested)."""


def reply_queue(client_id: str) -> str:
    """Return ``replies-<clientId>`` (S8)."""
    return REPLY_QUEUE_PATTERN.format(clientId=client_id)


def submit_queue(client_id: str) -> str:
    """Return ``orders-<clientId>`` (X10)."""
    return SUBMIT_QUEUE_PATTERN.format(clientId=client_id)

def _known_service(value: str) -> str:
    catalogue().service(value)
    return value


def _known_operation(value: str) -> str:
    catalogue().service_of(value)
    return value


Service = Annotated[str, AfterValidator(_known_service)]
"""A service of ``infra/services.json`` (A1)."""

Operation = Annotated[str, AfterValidator(_known_operation)]
"""An operation of ``infra/services.json`` (forward step or undo)."""


class Versioned(Contract):
    """A message with a schema version this code can read."""

    schema_version: Literal[1] = MESSAGE_SCHEMA_VERSION


class SubmitOrder(Versioned):
    """An order submitted by a client application (queue ``orders-<clientId>``).

    Submission refuses a ``client_id`` or ``reply_to`` not of the queue's client
    (``ClientMismatch``, S8, X10); ``order.totalPrice`` must be whole minor units
    (:mod:`orders.models.money`).
    """

    client_id: ClientId
    reply_to: QueueName
    order: ClientOrder

    @property
    def client_order_id(self) -> OrderId:
        """The client's own OrderID: ``order.orderId`` of the message (S1, X10).

        Submission builds the order key from it (``<clientId>~<OrderID>``) and stores the
        order under that key (:meth:`orders.models.order.Order.of_client`).
        """
        return self.order.order_id

    @model_validator(mode="after")
    def _total_in_minor_units(self) -> SubmitOrder:
        problem = minor_unit_problem(self.order)
        if problem is not None:
            raise ValueError(f"order.{problem[0]}: {problem[1]}")
        return self


class AgentRequest(Versioned):
    """What an agent needs to call its service once, within ``complete_by`` (A1-A3).

    Id formats (``message_id``, ``idempotency_key``): :mod:`orders.lifecycle.ids`;
    ``max_attempts`` is the request's share of the X2 budget.
    """

    message_id: str = Field(min_length=1, max_length=128)
    order_key: OrderKey = Field(alias="orderId")
    instance_id: InstanceId
    service: Service
    operation: Operation
    idempotency_key: str = Field(min_length=1, max_length=255)
    complete_by: UtcDatetime
    max_attempts: int = Field(ge=1, le=100)
    event_name: str = Field(min_length=1, max_length=128)
    reply_to: QueueName = "agent-replies"
    payload: dict[str, Any] = Field(default_factory=dict)


class AgentOutcome(StrEnum):
    """How an agent's request ended."""

    SUCCEEDED = "Succeeded"
    PERMANENT_FAILURE = "PermanentFailure"
    """The service refused (4xx): non-transient (S7)."""
    TRANSIENT_FAILURE = "TransientFailure"
    """Retries, deadline or open circuit exhausted; a later attempt may work."""


class AgentReply(Versioned):
    """An agent's answer, routed back to the waiting orchestration (A4).

    ``circuit_open``: refused before any call (A5, V2); ``error_code``, not the status,
    tells what a refusal means.
    """

    message_id: str = Field(min_length=1, max_length=160)
    order_key: OrderKey = Field(alias="orderId")
    instance_id: InstanceId
    operation: Operation
    event_name: str = Field(min_length=1, max_length=128)
    outcome: AgentOutcome
    tries: int = Field(ge=0, alias="attempts")
    """HTTP calls the agent started for the request (each a *try*; an *attempt* is an
    order's); ``attempts`` on the wire, as recorded replies carry it (X6)."""
    circuit_open: bool = False
    retry_at: UtcDatetime | None = None
    status_code: int | None = None
    error_code: str | None = Field(default=None, max_length=128)
    result: dict[str, Any] | None = None
    reason: str | None = None
    request_id: str | None = Field(default=None, min_length=1, max_length=128)
    """The MessageId of the request answered (None from agents before it was echoed)."""
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=255)
    """The answered request's idempotency key (None from agents before it was echoed)."""


class StatusKind(StrEnum):
    """Status messages a client receives on its reply queue (S8, S9, X3)."""

    REQUEST_RECEIVED = "RequestReceived"
    ORDER_COMPLETED = "OrderCompleted"
    ORDER_FAILED = "OrderFailed"
    REJECTED = "Rejected"
    COMPENSATED = "Compensated"
    COMPENSATION_FAILED = "CompensationFailed"
    CHANGE_REFUSED = "ChangeRefused"
    """Other data under a stored OrderID was refused; not a final status."""


TERMINAL_STATUS_KINDS = frozenset({StatusKind.ORDER_COMPLETED, StatusKind.ORDER_FAILED,
                                   StatusKind.REJECTED, StatusKind.COMPENSATED,
                                   StatusKind.COMPENSATION_FAILED})


class StatusMessage(Versioned):
    """A status update for one order, to its client's reply queue, by the client's OrderID (S8).

    ``order_id`` is None only on a ``Rejected`` answer to a submission whose body did not
    hold a readable OrderID (not JSON, or no valid ``order.orderId``).
    """

    order_id: OrderId | None
    status: StatusKind
    at: UtcDatetime
    reason: str | None = None


AlertKind = Literal["ConflictingOrder", "OrderError", "RetriesExhausted", "CompensationFailed",
                    "UnknownWorkflowVersion", "OverdueOrder", "ClientMismatch",
                    "UseClientQueue"]


class OperatorAlert(Versioned):
    """Something an operator must look at (S1, S7, V1, V2, X10); kinds in docs/operations.md.

    ``client_id`` is set for alerts a client can cause, collapsed per client, kind and window
    (:mod:`scheduler.identity`).
    """

    kind: AlertKind
    reason: str
    at: UtcDatetime
    order_key: str | None = Field(default=None, alias="orderId")
    instance_id: str | None = None
    client_id: str | None = None
