"""Every change of an order's ProcessState, as one table and one function that applies it.

Callers write :func:`apply`'s result conditionally (ETag; orchestrations also LockedBy).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from orders.errors import OrderServiceError
from orders.models import FINAL_STATES, ProcessState, StateRecord

P = ProcessState


class Actor(StrEnum):
    """Who changes a record."""

    STARTER = "starter"
    ORDER_WORKFLOW = "order workflow"
    COMPENSATION_WORKFLOW = "compensation workflow"
    REPLY_HANDLER = "reply handler"
    SUPERVISOR = "supervisor"
    OPERATOR = "operator"


@dataclass(frozen=True)
class Transition:
    """One allowed change of ProcessState; ``target`` None keeps the record's state."""

    source: frozenset[ProcessState]
    target: ProcessState | None
    actors: frozenset[Actor]


def _t(source: set[ProcessState], target: ProcessState | None,
       actors: set[Actor]) -> Transition:
    return Transition(frozenset(source), target, frozenset(actors))


A = Actor
TRANSITIONS: dict[str, Transition] = {
    # The order's own attempts (S3-S7, V2).
    "claim_attempt": _t({P.PENDING}, P.PROCESSING, {A.STARTER}),
    "begin_attempt": _t({P.PROCESSING}, P.PROCESSING, {A.ORDER_WORKFLOW}),
    "complete": _t({P.PROCESSING}, P.PROCESSED, {A.ORDER_WORKFLOW}),
    "mark_circuit_refusal": _t({P.PROCESSING, P.COMPENSATING}, None, {A.REPLY_HANDLER}),
    "retry_attempt": _t({P.PROCESSING}, P.PENDING, {A.SUPERVISOR}),
    "hold_back_attempt": _t({P.PROCESSING}, P.PENDING, {A.SUPERVISOR}),
    # Giving up on an order (S7, S9, V2).
    "hand_over": _t({P.PROCESSING}, P.COMPENSATING, {A.ORDER_WORKFLOW, A.SUPERVISOR}),
    "fail_without_undo": _t({P.PROCESSING}, P.ERROR, {A.ORDER_WORKFLOW, A.SUPERVISOR}),
    "claim_compensation": _t({P.COMPENSATING}, P.COMPENSATING, {A.STARTER}),
    "begin_compensation": _t({P.COMPENSATING}, P.COMPENSATING, {A.COMPENSATION_WORKFLOW}),
    "compensated": _t({P.COMPENSATING}, P.COMPENSATED, {A.COMPENSATION_WORKFLOW}),
    "compensation_failed": _t({P.COMPENSATING}, P.COMPENSATION_FAILED,
                              {A.COMPENSATION_WORKFLOW}),
    "retry_compensation": _t({P.COMPENSATING}, P.COMPENSATING, {A.SUPERVISOR}),
    "give_up_compensation": _t({P.COMPENSATING}, P.COMPENSATION_FAILED, {A.SUPERVISOR}),
    # CompleteBy of a final state: when the status must have been sent (S8).
    "status_sent": _t(set(FINAL_STATES), None,
                      {A.ORDER_WORKFLOW, A.COMPENSATION_WORKFLOW, A.SUPERVISOR}),
    "status_unsent": _t(set(FINAL_STATES), None, {A.SUPERVISOR}),
    "resubmit": _t({P.ERROR}, P.PENDING, {A.OPERATOR}),
}


class IllegalTransitionError(OrderServiceError, ValueError):
    """A transition :data:`TRANSITIONS` does not allow (permanent)."""


def apply(name: str, record: StateRecord, actor: Actor, **changes: Any) -> StateRecord:
    """Apply transition ``name`` to ``record`` (unwritten); IllegalTransitionError if disallowed."""
    transition = TRANSITIONS[name]
    if "process_state" in changes:
        raise IllegalTransitionError(f"{name}: processState is set by the transition only")
    if record.process_state not in transition.source:
        raise IllegalTransitionError(
            f"order {record.order_key}: {name} needs ProcessState "
            f"{' or '.join(sorted(s.value for s in transition.source))}, "
            f"not {record.process_state.value}")
    if actor not in transition.actors:
        raise IllegalTransitionError(f"order {record.order_key}: {actor.value} may not {name}")
    target = transition.target or record.process_state
    return record.model_copy(update={"process_state": target, **changes})
