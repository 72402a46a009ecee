"""Every change of an order's ProcessState, as one table and one function that applies it.

The state record (SPEC S2) moves through the states below only by the transitions in
:data:`TRANSITIONS`: each names the states it may start from, the state it leads to and
who may make it. :func:`apply` is the only way a caller
changes ``processState``: it refuses a transition from a state the table does not allow
or by an actor it does not name, so an illegal transition cannot be written by accident.
Callers write the result with a conditional update: the ETag they read (every write),
and for orchestrations also LockedBy (:func:`orders.lifecycle.fencing.fenced_update`).

``tests/orders/test_lifecycle.py`` walks every pair of states against this table.
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
    """The order and compensation starters (SPEC S3, S9)."""
    ORDER_WORKFLOW = "order workflow"
    """An attempt of the order workflow, through its activities (SPEC S4-S7)."""
    COMPENSATION_WORKFLOW = "compensation workflow"
    """An attempt of the compensation workflow, through its activities (SPEC S9)."""
    REPLY_HANDLER = "reply handler"
    """The scheduler's agent-reply handler (SPEC A4, A5)."""
    SUPERVISOR = "supervisor"
    """The supervisor (SPEC V2)."""
    OPERATOR = "operator"
    """An operator, through ``python -m opscli`` (SPEC S7)."""


@dataclass(frozen=True)
class Transition:
    """One allowed change of ProcessState.

    Attributes
    ----------
    source : frozenset of ProcessState
        States it may start from.
    target : ProcessState or None
        The state it leads to; None for a change within the record's state.
    actors : frozenset of Actor
        Who may make it.
    """

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
    # Compensation (S9).
    "claim_compensation": _t({P.COMPENSATING}, P.COMPENSATING, {A.STARTER}),
    "begin_compensation": _t({P.COMPENSATING}, P.COMPENSATING, {A.COMPENSATION_WORKFLOW}),
    "compensated": _t({P.COMPENSATING}, P.COMPENSATED, {A.COMPENSATION_WORKFLOW}),
    "compensation_failed": _t({P.COMPENSATING}, P.COMPENSATION_FAILED,
                              {A.COMPENSATION_WORKFLOW}),
    "retry_compensation": _t({P.COMPENSATING}, P.COMPENSATING, {A.SUPERVISOR}),
    "give_up_compensation": _t({P.COMPENSATING}, P.COMPENSATION_FAILED, {A.SUPERVISOR}),
    # Telling the client its final status (S8): CompleteBy of a final state is when the
    # status must have been sent; it is cleared once it was (orders/lifecycle/changes.py).
    "status_sent": _t(set(FINAL_STATES), None,
                      {A.ORDER_WORKFLOW, A.COMPENSATION_WORKFLOW, A.SUPERVISOR}),
    "status_unsent": _t(set(FINAL_STATES), None, {A.SUPERVISOR}),
    # Operators (S7).
    "resubmit": _t({P.ERROR}, P.PENDING, {A.OPERATOR}),
}
"""The allowed transitions by name. A target of None keeps the record's state."""


class IllegalTransitionError(OrderServiceError, ValueError):
    """A transition from a state, or by an actor, that :data:`TRANSITIONS` does not allow.

    Permanent: the same transition on the same record is refused again.
    """


def apply(name: str, record: StateRecord, actor: Actor, **changes: Any) -> StateRecord:
    """Apply transition ``name`` to ``record``: the changed record, not yet written.

    Parameters
    ----------
    name : str
        A key of :data:`TRANSITIONS`.
    record : StateRecord
        The record as read (its ETag is kept for the conditional write).
    actor : Actor
        Who makes the change.
    **changes
        Other fields to change (snake_case names), e.g. ``locked_by=None``.

    Returns
    -------
    StateRecord
        ``record`` with ``process_state`` set to the transition's target and ``changes``.

    Raises
    ------
    IllegalTransitionError
        If the record's state is not a source of the transition, the actor may not make
        it, or ``changes`` sets ``process_state`` itself.
    KeyError
        If there is no transition ``name``.
    """
    transition = TRANSITIONS[name]
    if "process_state" in changes:
        raise IllegalTransitionError(f"{name}: processState is set by the transition only")
    if record.process_state not in transition.source:
        raise IllegalTransitionError(
            f"order {record.order_id}: {name} needs ProcessState "
            f"{' or '.join(sorted(s.value for s in transition.source))}, "
            f"not {record.process_state.value}")
    if actor not in transition.actors:
        raise IllegalTransitionError(f"order {record.order_id}: {actor.value} may not {name}")
    target = transition.target or record.process_state
    return record.model_copy(update={"process_state": target, **changes})
