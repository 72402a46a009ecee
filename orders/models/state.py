"""The state record: the per-order coordination record (S2).

Starter, orchestration, supervisor and operators meet only here; every change is a
conditional write on the ETag, so it arbitrates between them (S3, S4, V4).
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

WORK_LINES = 10
"""Order lines one unit of admission work stands for (X3): an order of up to 10 lines
counts as one order against the quotas, one of 50 lines (``MAX_ORDER_LINES``) as five."""


def work_of(lines: int) -> int:
    """Return the admission weight of an order of ``lines`` lines (at least 1)."""
    return max(1, -(-lines // WORK_LINES))
"""Version of the state record contract written by this code (X6).

Each version added fields read from older records with their "nothing happened" value:
2 compensation fields (S9), 3 circuit fields (A5, V2), 4 ``clientId``/``clientOrderId``
(S8, X10; older records stay legacy, keyed on their plain OrderID), 5 trace fields (X8).
"""


class ProcessState(StrEnum):
    """ProcessState of an order (S2); compensation states (S9) are never folded into Error."""

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
"""States an order ends in; CompleteBy stays set until the client was told (S8)."""

IN_FLIGHT_STATES: tuple[ProcessState, ...] = (ProcessState.PENDING, *SUPERVISED_STATES)
"""States that count against the admission-control backlog cap (X3)."""

_LOCKED_STATES = frozenset({ProcessState.PROCESSING})
FAILURE_REASON_MAX_LENGTH = 1000


class StateRecord(Contract):
    """One order's state record (S2); immutable, change it with ``model_copy(update=...)``.

    Key and instance id formats: :mod:`orders.lifecycle.ids`; legal moves:
    :mod:`orders.lifecycle.transitions`. ``complete_by`` is the current step's deadline, or in
    a final state the deadline for telling the client (null once told, S8).
    ``circuit_refused_by`` counts only while it equals LockedBy; ``circuit_holds`` replaces
    FailureCount for attempts an open circuit refused (A5, V2). ``etag`` is set by the store.

    Raises
    ------
    pydantic.ValidationError
        On a broken field rule, or if ProcessState and LockedBy disagree (S2, S3, V2).
    """

    order_key: OrderKey = Field(alias="orderId")
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
    work: int = Field(default=1, ge=1, le=100)
    """Admission weight (X3): 1 per started :data:`WORK_LINES` lines of the order."""
    schema_version: int = Field(default=STATE_SCHEMA_VERSION, ge=1)
    etag: str | None = None
    created_at: UtcDatetime
    updated_at: UtcDatetime

    @model_validator(mode="before")
    @classmethod
    def _upcast(cls, data: Any) -> Any:
        """Read an older record version as the current one (X6)."""
        if isinstance(data, dict):
            for key in ("schemaVersion", "schema_version"):
                version = data.get(key)
                if isinstance(version, int) and version < STATE_SCHEMA_VERSION:
                    data = {**data, key: STATE_SCHEMA_VERSION}
        return data

    @model_validator(mode="after")
    def _key_matches_client(self) -> StateRecord:
        if self.client_id is None and self.client_order_id is None:
            if ORDER_KEY_SEPARATOR in self.order_key:
                raise ValueError(f"clientId: required with the order key {self.order_key!r} "
                                 "(a record without one is a legacy record, keyed on its "
                                 "plain OrderID)")
            return self
        expected = f"{self.client_id}{ORDER_KEY_SEPARATOR}{self.client_order_id}"
        if self.order_key != expected:
            raise ValueError(f"orderId: must be the order key '<clientId>~<clientOrderId>' = "
                             f"{expected!r}; got {self.order_key!r}")
        return self

    @property
    def status_queue(self) -> str:
        """Status queue ``replies-<clientId>`` (S8, X10), not stored text; legacy: ``reply_to``."""
        if self.client_id is None:
            return self.reply_to
        return REPLY_QUEUE_PATTERN.format(clientId=self.client_id)

    @property
    def submitted_order_id(self) -> str:
        """The OrderID the client knows the order by (S8)."""
        return self.client_order_id or self.order_key

    @model_validator(mode="after")
    def _lock_matches_state(self) -> StateRecord:
        if self.process_state is ProcessState.PENDING and self.locked_by is not None:
            raise ValueError(
                "lockedBy: must be null while processState is Pending (S2, V2); "
                f"got {self.locked_by!r}"
            )
        if self.process_state in _LOCKED_STATES and self.locked_by is None:
            raise ValueError(
                f"lockedBy: must name the owning orchestration instance while processState "
                f"is {self.process_state.value} (S3)"
            )
        return self

    @classmethod
    def new(
        cls, order_key: str, reply_to: str, now: datetime, *, workflow_version: int = 1
    ) -> StateRecord:
        """Build a record's first version: Pending, unlocked, no attempts, no ETag (S2)."""
        return cls(
            order_key=order_key,
            reply_to=reply_to,
            workflow_version=workflow_version,
            created_at=now,
            updated_at=now,
        )

    def same_submission(self, other: StateRecord) -> bool:
        """Tell whether ``other`` is the same submission: equal key and status queue (S1)."""
        return (self.order_key, self.status_queue) == (other.order_key, other.status_queue)
