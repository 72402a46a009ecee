"""The state record: the durable, per-order coordination record of SPEC S2.

Scheduler, supervisor and operators meet only here: the starter claims a Pending record,
the orchestration moves it on while LockedBy names its instance, the supervisor finds
records whose CompleteBy expired. Every change is a conditional write on the ETag, so the
record is also the arbiter between concurrent starters and supervisors (SPEC S3, S4, V4).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field, model_validator

from orders.models._types import (
    ORDER_KEY_SEPARATOR,
    ClientId,
    Contract,
    InstanceId,
    OrderId,
    OrderKey,
    QueueName,
    UtcDatetime,
)
from orders.models.messages import REPLY_QUEUE_PATTERN

STATE_SCHEMA_VERSION = 5
"""Version of the state record contract written by this code (SPEC X6).

Version 2 added ``compensationAttempt``, ``compensationFailures`` and ``failureReason``
(SPEC S9). A version 1 record is read with them at 0, 0 and null and is written back as
version 2 (see :meth:`StateRecord._upcast`); nothing else changed, so both read alike.
Version 3 added ``circuitRefusedBy`` and ``circuitHolds`` (SPEC A5, V2); older records are
read with null and 0, which is what they mean for a record no open circuit has refused.
Version 4 added ``clientId`` and ``clientOrderId`` (SPEC S8, X10): a record submitted on a
client's own queue is keyed ``<clientId>~<OrderID>``. Older records are read with both
null: they are legacy records of the shared-queue era, keyed on their plain OrderID, and
keep that key for good (their attempts' instance ids and idempotency keys are built from
it, so in-flight orders carry on unchanged).
Version 5 added ``traceParent`` and ``attemptTrace`` (SPEC X8); older records are read
with both null: the starter then opens a new trace for the order's next attempt."""


class ProcessState(StrEnum):
    """ProcessState of an order (SPEC S2), including the compensation states of SPEC S9.

    The compensation states are distinct values, never folded into ``Error``, so operators
    can find a stuck (Compensating) or failed (CompensationFailed) compensation.
    """

    PENDING = "Pending"
    PROCESSING = "Processing"
    PROCESSED = "Processed"
    ERROR = "Error"
    COMPENSATING = "Compensating"
    COMPENSATED = "Compensated"
    COMPENSATION_FAILED = "CompensationFailed"


SUPERVISED_STATES: tuple[ProcessState, ...] = (ProcessState.PROCESSING, ProcessState.COMPENSATING)
"""States owned by a running orchestration with a deadline; the supervisor scans these (V1)."""

FINAL_STATES: tuple[ProcessState, ...] = (ProcessState.PROCESSED, ProcessState.ERROR,
                                          ProcessState.COMPENSATED,
                                          ProcessState.COMPENSATION_FAILED)
"""States an order ends in. While its client has not been told, CompleteBy is set: the time
by which the final status must have been sent; the supervisor resends it after that (S8)."""

IN_FLIGHT_STATES: tuple[ProcessState, ...] = (ProcessState.PENDING, *SUPERVISED_STATES)
"""States that count against the admission-control backlog cap (SPEC X3)."""

_LOCKED_STATES = frozenset({ProcessState.PROCESSING})
FAILURE_REASON_MAX_LENGTH = 1000
"""Longest ``failureReason`` kept on a record (longer reasons are cut by the writer)."""


class StateRecord(Contract):
    """One order's state record (SPEC S2); immutable, change it with ``model_copy(update=...)``.

    Parameters
    ----------
    order_id : str
        The order key, also the partition key (JSON ``orderId``): ``<clientId>~<OrderID>``
        (:func:`orders.lifecycle.ids.order_key`), or the plain OrderID of a legacy record.
    client_id : str or None
        The client whose queue the order arrived on; None for a legacy record (SPEC X10).
    client_order_id : str or None
        The OrderID as the client gave it (status messages carry it); None for a legacy
        record, whose key is its OrderID (see :attr:`submitted_order_id`).
    reply_to : str
        The submitting client's private reply queue (SPEC S8), a Service Bus queue name.
    created_at, updated_at : datetime
        Timezone-aware; the stores set ``updated_at`` on every write.
    process_state : ProcessState
        Defaults to Pending.
    locked_by : str or None
        Orchestration instance id that owns the record (SPEC D2 rules), null when free.
    complete_by : datetime or None
        Deadline of the current step (CompleteBy); the supervisor recovers records whose
        CompleteBy has passed. In a final state (:data:`FINAL_STATES`) the deadline of the
        last step, telling the client: set with the final state, null once the final
        status was sent; the supervisor resends it once CompleteBy has passed (SPEC S8).
    failure_count : int
        FailureCount, >= 0, incremented by the supervisor (SPEC V2).
    attempt : int
        Number of the last attempt started, >= 0 (0 = none yet); the instance id of
        attempt ``n`` is ``f"{order_id}:{n}"``.
    not_before : datetime or None
        Held-back retry: the starter ignores the record until this time (SPEC V2).
    compensation_attempt : int
        Number of the last compensation attempt started, >= 0; its instance id is
        ``f"{order_id}:comp:{n}"`` (SPEC S9).
    compensation_failures : int
        Compensation attempts that missed their CompleteBy, counted by the supervisor
        against ``MAX_COMPENSATION_FAILURES`` (a budget separate from FailureCount).
    failure_reason : str or None
        Why the order could not complete, set when it fails (for operators and the client).
    circuit_refused_by : str or None
        Instance id of an attempt (or compensation attempt) whose agent reply said the
        service's open circuit refused it before any call (``AgentReply.circuit_open``).
        Written by the reply handler, fenced on LockedBy (S4); it means something only
        while it equals LockedBy, so a later attempt needs no reset.
    circuit_holds : int
        Attempts that ended on an open circuit without a call, counted by the supervisor
        instead of FailureCount (or ``compensationFailures``): the record is held back
        for a time that grows with this count (SPEC A5, V2).
    trace_parent : str or None
        The order's trace: the submission span's W3C ``traceparent``, which the starter,
        the supervisor and compensation continue (SPEC X8); null if not traced.
    attempt_trace : str or None
        ``traceparent`` of the last attempt's (or compensation attempt's) start, which the
        next attempt links to (SPEC X8).
    workflow_version, schema_version : int
        Versions of the workflow and of this record's contract, >= 1 (SPEC X6).
    etag : str or None
        ETag of the stored version, set by the store; None before the first write.

    Raises
    ------
    pydantic.ValidationError
        On a broken field rule, or if ProcessState and LockedBy disagree: Pending requires
        LockedBy null (S2, V2), Processing requires LockedBy set (S3). Compensating has
        LockedBy set while a compensation attempt owns the record and null while it waits
        for the starter to start the next one (see :mod:`orders.compensation`).
    """

    order_id: OrderKey
    client_id: ClientId | None = None
    client_order_id: OrderId | None = None
    process_state: ProcessState = ProcessState.PENDING
    locked_by: InstanceId | None = None
    complete_by: UtcDatetime | None = None
    failure_count: int = Field(default=0, ge=0)
    attempt: int = Field(default=0, ge=0)
    not_before: UtcDatetime | None = None
    compensation_attempt: int = Field(default=0, ge=0)
    compensation_failures: int = Field(default=0, ge=0)
    failure_reason: str | None = Field(default=None, max_length=FAILURE_REASON_MAX_LENGTH)
    circuit_refused_by: InstanceId | None = None
    circuit_holds: int = Field(default=0, ge=0)
    trace_parent: str | None = Field(default=None, max_length=55)
    attempt_trace: str | None = Field(default=None, max_length=55)
    reply_to: QueueName
    workflow_version: int = Field(default=1, ge=1)
    schema_version: int = Field(default=STATE_SCHEMA_VERSION, ge=1)
    etag: str | None = None
    created_at: UtcDatetime
    updated_at: UtcDatetime

    @model_validator(mode="before")
    @classmethod
    def _upcast(cls, data: Any) -> Any:
        """Read an older record version as the current one (SPEC X6)."""
        if isinstance(data, dict):
            for key in ("schemaVersion", "schema_version"):
                version = data.get(key)
                if isinstance(version, int) and version < STATE_SCHEMA_VERSION:
                    data = {**data, key: STATE_SCHEMA_VERSION}
        return data

    @model_validator(mode="after")
    def _key_matches_client(self) -> StateRecord:
        if self.client_id is None and self.client_order_id is None:
            if ORDER_KEY_SEPARATOR in self.order_id:
                raise ValueError(f"clientId: required with the order key {self.order_id!r} "
                                 "(a record without one is a legacy record, keyed on its "
                                 "plain OrderID)")
            return self
        expected = f"{self.client_id}{ORDER_KEY_SEPARATOR}{self.client_order_id}"
        if self.order_id != expected:
            raise ValueError(f"orderId: must be the order key '<clientId>~<clientOrderId>' = "
                             f"{expected!r}; got {self.order_id!r}")
        return self

    @property
    def status_queue(self) -> str:
        """The queue this order's status messages go to: its client's, never the stored text.

        ``replies-<clientId>`` for an order with a client (the queue it came on names
        the client, so its replies go to that client's queue only, SPEC S8, X10), whatever
        :attr:`reply_to` says (a record written before replyTo was taken from the queue
        may hold a body's choice); a legacy record's own :attr:`reply_to`.
        """
        if self.client_id is None:
            return self.reply_to
        return REPLY_QUEUE_PATTERN.format(clientId=self.client_id)

    @property
    def submitted_order_id(self) -> str:
        """The OrderID the client knows the order by (its status messages carry it, S8)."""
        return self.client_order_id or self.order_id

    @model_validator(mode="after")
    def _lock_matches_state(self) -> StateRecord:
        if self.process_state is ProcessState.PENDING and self.locked_by is not None:
            raise ValueError(
                "lockedBy: must be null while processState is Pending (SPEC S2, V2); "
                f"got {self.locked_by!r}"
            )
        if self.process_state in _LOCKED_STATES and self.locked_by is None:
            raise ValueError(
                f"lockedBy: must name the owning orchestration instance while processState "
                f"is {self.process_state.value} (SPEC S3)"
            )
        return self

    @classmethod
    def new(
        cls, order_id: str, reply_to: str, now: datetime, *, workflow_version: int = 1
    ) -> StateRecord:
        """Build the first version of a record, as SPEC S2 prescribes.

        Parameters
        ----------
        order_id : str
            OrderID of the submitted order.
        reply_to : str
            Reply queue of the submitting client.
        now : datetime
            Timezone-aware submission time (``created_at`` and ``updated_at``).
        workflow_version : int
            Workflow version the order will run under.

        Returns
        -------
        StateRecord
            Pending, LockedBy null, CompleteBy null, FailureCount 0, attempt 0, no ETag.
        """
        return cls(
            order_id=order_id,
            reply_to=reply_to,
            workflow_version=workflow_version,
            created_at=now,
            updated_at=now,
        )

    def same_submission(self, other: StateRecord) -> bool:
        """Tell whether ``other`` comes from the same submission (idempotent create, SPEC S1).

        Only OrderID and reply-to queue identify a submission. Everything else is either
        mutable (ProcessState, LockedBy, ... move on after the first write) or stamped
        at write time (timestamps, versions after an upgrade), so a redelivered message
        must not conflict because of them. ``other`` is typically the record already
        stored under the same OrderID; True if OrderID and reply-to queue
        (:attr:`status_queue`) are equal.
        """
        return (self.order_id, self.status_queue) == (other.order_id, other.status_queue)
