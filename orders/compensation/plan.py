"""What undoes what: from log entries to undo steps and agent requests (S9).

Pure and deterministic, so orchestrators may call it; the rules are in docs/pipeline.md,
"Undo what may have happened" and (version-1 logs, X6) the section after it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from azurekit.services import catalogue
from orders.lifecycle.ids import idempotency_key
from orders.models import CompensationEntry, Step, UndoOutcome
from orders.models.compensation import (
    REQUEST_OF,
    REQUESTED,
    UNDO_STEP,
    UNDOES,
    details_model,
)
from orders.models.messages import AgentOutcome, AgentReply, AgentRequest, Operation, Service
from orders.names import WORKFLOW_REMOTE_STEPS
from orders.remote_steps import RemoteStep

NOTHING_TO_UNDO_CODES = frozenset({"nothing_to_undo", "already_undone"})
"""Error codes of an undo's answer that mean there is nothing to undo."""

REMOTE_UNDO: dict[Step, tuple[Service, Operation]] = {
    Step(undo): (name, undo) for name, spec in catalogue().services.items()
    for undo in spec.undo_operations}
"""Undo steps done by an agent (``infra/services.json``); release inventory is local."""

LOGS_REQUESTS_FROM = 2
"""First compensation schema version whose writers log requests before sending them."""


def _unlogged_requests(entries: list[CompensationEntry]) -> list[CompensationEntry]:
    """Stand-in *requested* entries for the remote steps a version-1 order may have sent."""
    legacy = [e for e in entries if e.schema_version < LOGS_REQUESTS_FROM]
    if not legacy:
        return []
    logged = {e.step for e in entries}
    first = legacy[0]
    last_seq = max((e.seq or 0 for e in entries), default=0)
    made = []
    for _, operation in WORKFLOW_REMOTE_STEPS.get(first.workflow_version, ()):
        if catalogue().undo_of(operation) is None:
            continue
        step = Step(operation)
        if step in logged or REQUESTED[step] in logged or UNDO_STEP[step] in logged:
            continue
        requested = REQUESTED[step].value
        details = details_model(requested).model_validate({
            "step": requested, "idempotencyKey": idempotency_key(first.order_key, step.value)})
        last_seq += 1
        made.append(first.model_copy(update={"details": details, "seq": last_seq}))
    return made


def pending_undos(entries: Iterable[CompensationEntry]) -> list[CompensationEntry]:
    """Return the steps requested or completed and not undone, newest first (S9).

    A step's completed entry (it names what the service created) wins over its *requested* one.
    """
    entries = sorted(entries, key=lambda e: (e.seq or 0, e.recorded_at))
    entries += _unlogged_requests(entries)
    undone = {UNDOES[e.step] for e in entries if e.step in UNDOES}
    first_seen: dict[Step, int] = {}
    latest: dict[Step, CompensationEntry] = {}
    for position, entry in enumerate(entries):
        forward = REQUEST_OF.get(entry.step, entry.step)
        if forward not in UNDO_STEP or forward in undone:
            continue
        first_seen.setdefault(forward, position)
        if entry.step is forward or forward not in latest:
            latest[forward] = entry
    return [latest[step] for step in sorted(first_seen, key=first_seen.__getitem__,
                                            reverse=True)]


def undo_step(entry: CompensationEntry) -> Step:
    """Return the step that undoes a logged forward step (completed or *requested*).

    Raises
    ------
    ValueError
        If the entry is itself an undo.
    """
    step = REQUEST_OF.get(entry.step, entry.step)
    if step not in UNDO_STEP:
        raise ValueError(f"details.step: {step.value} is an undo, not a step to undo")
    return UNDO_STEP[step]


def undo_request(instance_id: str, entry: CompensationEntry, deadline: datetime,
                 max_attempts: int) -> AgentRequest:
    """Build the agent request that undoes a remote step (:meth:`RemoteStep.undo_request`).

    Raises
    ------
    ValueError
        If the step is undone locally.
    """
    step = undo_step(entry)
    if step not in REMOTE_UNDO:
        raise ValueError(f"details.step: {step.value} is undone locally, not by an agent")
    service, _ = REMOTE_UNDO[step]
    return RemoteStep(service, UNDOES[step].value).undo_request(
        instance_id, entry, deadline, max_attempts)


def request_details(request: AgentRequest) -> dict[str, Any] | None:
    """Return the *requested* entry's details to log before sending; None for an undo.

    The entry keeps the idempotency key and each other field of its details from the payload.
    """
    if catalogue().undo_of(request.operation) is None:
        return None  # an undo, or a step nothing undoes: not logged before it is sent
    requested = REQUESTED[Step(request.operation)].value
    details: dict[str, Any] = {"step": requested, "idempotencyKey": request.idempotency_key}
    details.update({alias: request.payload.get(alias)
                    for alias in _kept_fields(requested) if alias not in details})
    return details


def _kept_fields(step: str) -> list[str]:
    """Wire names of the fields a step's details keep, besides ``step`` and ``outcome``."""
    return [info.alias or name for name, info in details_model(step).model_fields.items()
            if name not in ("step", "outcome")]


def nothing_to_undo(reply: AgentReply) -> bool:
    """Tell whether a reply to an undo means *nothing to undo*: by ``errorCode``, never status."""
    return (reply.outcome is AgentOutcome.PERMANENT_FAILURE
            and reply.error_code in NOTHING_TO_UNDO_CODES)


def outcome_label(reply: AgentReply) -> str:
    """Return the outcome name for logs and traces (``NothingToUndo`` for a refused no-op undo)."""
    return UndoOutcome.NOTHING_TO_UNDO.value if nothing_to_undo(reply) else reply.outcome.value


def step_details(step: Step, result: dict[str, Any] | None,
                 outcome: UndoOutcome | None = None) -> dict[str, Any]:
    """Turn a step's result into its log entry's details, only the fields the undo needs.

    Each field of the step's details class is taken from ``result`` by its wire name; an
    undo also gets its ``outcome``, and *nothing to undo* keeps nothing else.

    Raises
    ------
    KeyError
        If ``result`` lacks a field the step needs.
    """
    got = result or {}
    details: dict[str, Any] = {"step": step.value}
    if step is Step.RELEASE_INVENTORY:
        details.update(reservationId=got["reservationId"],
                       outcome=(outcome or UndoOutcome.UNDONE).value)
        if got.get("released") is not None:
            details["released"] = got["released"]
        return details
    if step in UNDOES:
        details["outcome"] = (outcome or UndoOutcome.UNDONE).value
        if outcome is UndoOutcome.NOTHING_TO_UNDO:
            return details
    details.update({alias: got[alias] for alias in _kept_fields(step.value)})
    return details
