"""Versioned message contracts on the queues (SPEC S1, S8, A1, A4, X6).

Every message carries ``schemaVersion``; a reader refuses a version it does not know with a
clear error instead of guessing. Queue by queue:

- ``orders-<clientId>``: :class:`SubmitOrder` from one client application; the queue,
  not the body, says which client sent it (SPEC X10). The shared ``orders`` queue of
  earlier versions accepts no orders any more.
- ``payment-requests`` / ``shipping-requests``: :class:`AgentRequest` from the scheduler.
- ``agent-replies``: :class:`AgentReply` from the agents.
- ``replies-<clientId>``: :class:`StatusMessage` to one client only (S8).
- ``operator-alerts``: :class:`OperatorAlert`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, Field, model_validator

from azurekit.services import catalogue
from orders.models._types import (
    ORDER_ID_MAX_LENGTH,
    ORDER_KEY_SEPARATOR,
    ClientId,
    Contract,
    InstanceId,
    OrderId,
    OrderKey,
    QueueName,
    UtcDatetime,
)
from orders.models.money import minor_unit_problem
from orders.models.order import Order

MESSAGE_SCHEMA_VERSION: Final = 1
"""Version of the message contracts this code writes and reads."""

REPLY_QUEUE_PATTERN = "replies-{clientId}"
"""Name of a client's private reply queue; ``infra/queues.json`` (clientReplyQueues) and the
Bicep use the same pattern (checked by tests)."""

SUBMIT_QUEUE_PATTERN = "orders-{clientId}"
"""Name of a client's own submit queue: the queue an order arrives on names its client
(SPEC X10); ``infra/queues.json`` (clientSubmitQueues) and the Bicep use the same pattern
(checked by tests)."""


def reply_queue(client_id: str) -> str:
    """Return the reply queue of ``client_id``: ``replies-<clientId>`` (SPEC S8)."""
    return REPLY_QUEUE_PATTERN.format(clientId=client_id)


def submit_queue(client_id: str) -> str:
    """Return the submit queue of ``client_id``: ``orders-<clientId>`` (SPEC X10)."""
    return SUBMIT_QUEUE_PATTERN.format(clientId=client_id)

def _known_service(value: str) -> str:
    catalogue().service(value)
    return value


def _known_operation(value: str) -> str:
    catalogue().service_of(value)
    return value


Service = Annotated[str, AfterValidator(_known_service)]
"""Remote services of ``infra/services.json``, one agent each (SPEC A1)."""

Operation = Annotated[str, AfterValidator(_known_operation)]
"""Operations of ``infra/services.json`` the agents perform (forward steps and undos)."""


class Versioned(Contract):
    """A message with a schema version this code can read."""

    schema_version: Literal[1] = MESSAGE_SCHEMA_VERSION


class SubmitOrder(Versioned):
    """An order submitted by a client application (queue ``orders-<clientId>``).

    Attributes
    ----------
    client_id : str
        The submitting application, a client id (1 to 20 characters, ``ClientId``).
        Submission checks it against the queue the message arrived on and refuses a
        message naming another client (``ClientMismatch``): the queue is the identity, the
        body only repeats it.
    reply_to : str
        The client's private reply queue, ``replies-<clientId>``; submission refuses a
        message naming another queue (``ClientMismatch``) and sends only to the queue of
        the client whose submit queue the message came on (SPEC S8, X10).
    order : Order
        The immutable order data; its ``orderId`` is the client's own OrderID, and its
        ``totalPrice`` a whole number of the currency's minor units (ISO 4217: JPY 0
        decimals, USD 2, BHD 3; :mod:`orders.models.money`). Submission also refuses
        amounts above ``MAX_ORDER_AMOUNT`` (:func:`scheduler.submission.parse_submission`).
    """

    client_id: ClientId
    reply_to: QueueName
    order: Order

    @model_validator(mode="after")
    def _order_id_is_the_clients_own(self) -> SubmitOrder:
        if ORDER_KEY_SEPARATOR in self.order.order_id:
            raise ValueError(f"order.orderId: must be 1 to {ORDER_ID_MAX_LENGTH} characters "
                             f"from A-Z a-z 0-9 . _ - (the client's own OrderID); got "
                             f"{self.order.order_id!r}")
        return self

    @model_validator(mode="after")
    def _total_in_minor_units(self) -> SubmitOrder:
        problem = minor_unit_problem(self.order)
        if problem is not None:
            raise ValueError(f"order.{problem[0]}: {problem[1]}")
        return self


class AgentRequest(Versioned):
    """What an agent needs to call its service once, within a deadline (SPEC A1-A3).

    Attributes
    ----------
    message_id : str
        Stable per instance and step, ``<instanceId>:<operation>``; the queue's duplicate
        detection drops a resend (SPEC A4).
    order_id, instance_id : str
        The order and the orchestration instance (attempt) waiting for the reply.
    service, operation : str
        Which agent and what it does.
    idempotency_key : str
        ``<orderId>:<operation>``, the same on every retry and every attempt, so the
        service performs the side effect once (SPEC A2).
    complete_by : datetime
        The scheduler's deadline; the agent starts no call after it (SPEC A3).
    max_attempts : int
        Calls the agent may make for this request (its share of the X2 budget).
    event_name : str
        External event the orchestrator waits on; the reply handler raises it.
    reply_to : str
        Queue for the reply (``agent-replies``).
    payload : dict
        Service-specific request body (amount and currency, shipment lines).
    """

    message_id: str = Field(min_length=1, max_length=128)
    order_id: OrderKey
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
    """The service refused (4xx): retrying cannot help; non-transient (SPEC S7)."""
    TRANSIENT_FAILURE = "TransientFailure"
    """Retries, deadline or open circuit exhausted this request; a later attempt may work."""


class AgentReply(Versioned):
    """An agent's answer, routed back to the waiting orchestration (SPEC A4).

    Attributes
    ----------
    message_id : str
        ``<request messageId>:reply``, stable, so a resent reply is a duplicate.
    order_id, instance_id, operation, event_name : str
        Copied from the request.
    outcome : AgentOutcome
        Succeeded, PermanentFailure or TransientFailure.
    attempts : int
        Calls made for this request.
    circuit_open : bool
        True when the service's circuit breaker refused the request before any call: the
        first call of its first delivery failed fast (SPEC A5), so the attempt made no
        call to the service. The outcome is then TransientFailure; the scheduler marks the
        state record so that the supervisor holds the attempt back instead of counting it
        against MAX_FAILURES (V2). False in replies written before the field existed (X6).
    retry_at : datetime or None
        With ``circuit_open``: when the breaker lets its next trial call through.
    status_code : int or None
        Last HTTP status, if a call was answered.
    error_code : str or None
        The service's machine-readable error code of a refusal (its body's ``error``),
        e.g. ``nothing_to_undo``; what a refusal means is read from it, never from the
        status alone. Absent in replies written before it existed.
    result : dict or None
        The service's answer on success.
    reason : str or None
        Why it failed.
    """

    message_id: str = Field(min_length=1, max_length=160)
    order_id: OrderKey
    instance_id: InstanceId
    operation: Operation
    event_name: str = Field(min_length=1, max_length=128)
    outcome: AgentOutcome
    attempts: int = Field(ge=0)
    circuit_open: bool = False
    retry_at: UtcDatetime | None = None
    status_code: int | None = None
    error_code: str | None = Field(default=None, max_length=128)
    result: dict[str, Any] | None = None
    reason: str | None = None


class StatusKind(StrEnum):
    """Status messages a client receives on its reply queue (SPEC S8, S9, X3)."""

    REQUEST_RECEIVED = "RequestReceived"
    ORDER_COMPLETED = "OrderCompleted"
    ORDER_FAILED = "OrderFailed"
    REJECTED = "Rejected"
    COMPENSATED = "Compensated"
    COMPENSATION_FAILED = "CompensationFailed"
    CHANGE_REFUSED = "ChangeRefused"
    """A resent order with other data under a stored OrderID was refused; the stored order
    stands and gets its own outcome, so this is not a final status of the order."""


TERMINAL_STATUS_KINDS = frozenset({StatusKind.ORDER_COMPLETED, StatusKind.ORDER_FAILED,
                                   StatusKind.REJECTED, StatusKind.COMPENSATED,
                                   StatusKind.COMPENSATION_FAILED})
"""Kinds after which the client hears nothing more about the order."""


class StatusMessage(Versioned):
    """A status update for one order, sent to its client's reply queue only (SPEC S8).

    ``orderId`` is the client's own OrderID, never the service's order key: a client hears
    of its orders by the ids it gave them (:func:`orders.lifecycle.ids.client_order_id`).
    """

    order_id: OrderId
    status: StatusKind
    at: UtcDatetime
    reason: str | None = None


AlertKind = Literal["ConflictingOrder", "OrderError", "RetriesExhausted", "CompensationFailed",
                    "UnknownWorkflowVersion", "OverdueOrder", "ClientMismatch",
                    "UseClientQueue"]
"""What an operator alert is about (:class:`OperatorAlert`)."""


class OperatorAlert(Versioned):
    """Something an operator must look at (SPEC S1 conflicts, S7 errors, V2 give-ups).

    ``OverdueOrder``: the supervisor found a record whose CompleteBy had passed longer ago
    than its scan window (it ran too seldom, or fell behind) and recovered it (V1, V2).
    ``ClientMismatch``: a message on a client's submit queue named another client
    (``clientId`` or ``replyTo``) and was dead-lettered, nothing stored (X10).
    ``UseClientQueue``: a message arrived on the shared ``orders`` queue, which accepts no
    orders any more, and was dead-lettered for the operator to move (X10).
    ``orderId`` is the order key (``<clientId>~<OrderID>``) where an order is known;
    ``clientId`` the client that caused an alert, from the queue it sent on, for the alerts
    a client can cause (collapsed per client, kind and window: :mod:`scheduler.identity`).
    """

    kind: AlertKind
    reason: str
    at: UtcDatetime
    order_id: str | None = None
    instance_id: str | None = None
    client_id: str | None = None
