"""What undoes what: from log entries to undo steps and agent requests (SPEC S9).

Pure functions of the contracts (log entries, agent requests and replies), so
orchestrators may call them (deterministic, no I/O), and of JSON-shaped service answers,
which activities turn into log details.

Undo what may have happened
---------------------------
A remote step is logged as *requested* (``charge_requested``, ``ship_requested``, with its
idempotency key) before its request goes out, and as completed when the reply confirms it.
A request that went out without an answer (black hole, timer first, late reply ignored)
may have been carried out, so :func:`pending_undos` returns every forward step that was
requested *or* completed and is not undone yet. The undo names the forward request by its
idempotency key, so the service undoes exactly what that key did, or nothing.

What the services answer to an undo of something they never did
----------------------------------------------------------------
The payment and shipping services answer an undo whose forward request they never carried
out (or that is undone already) with ``409`` and an error code they define for it:
``nothing_to_undo`` (never performed) or ``already_undone``
(:data:`NOTHING_TO_UNDO_CODES`). Answering ``nothing_to_undo`` voids the forward request's
key at the service, so a request still on its way (late in the network, queued in the
service) is never carried out afterwards: it answers ``409 voided``. Only then is "nothing
to undo" final. Compensation reads the *code*, never the status alone:
the undo step counts as done and is logged with outcome ``NothingToUndo``. Any other
permanent answer (a bare 404, 402, 422, ...) means the undo did not happen: the
compensation fails and an operator must act.

Orders whose log was written before requests were logged (SPEC X6)
------------------------------------------------------------------
An order that started before this rule (its log holds entries of compensation schema
version 1) may have sent a request without logging it. For such an order every remote
step of its workflow version (:data:`orders.names.WORKFLOW_REMOTE_STEPS`) that has no entry
is treated as requested, with the stable key ``<OrderID>:<operation>`` it was sent with,
and is undone like any other: the service answers ``nothing_to_undo`` where it never
happened. An undo request queued before the change (no ``chargeKey``/``shipmentKey``)
makes the service undo the order's most recent open effect, as it did then; a reply
without ``errorCode`` is never taken for *nothing to undo*, so at worst such a
compensation ends CompensationFailed with an operator alert instead of keeping money.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from azurekit.services import catalogue
from orders.lifecycle.ids import idempotency_key, reply_event_name, request_message_id
from orders.models import CompensationEntry, Step, UndoOutcome
from orders.models.agent_io import AgentPayload, CancelShipmentPayload, RefundPayload
from orders.models.compensation import (
    REQUEST_OF,
    REQUESTED,
    UNDO_STEP,
    UNDOES,
    ChargeRequestDetails,
    PaymentDetails,
    ShipmentDetails,
    ShipRequestDetails,
)
from orders.models.messages import AgentOutcome, AgentReply, AgentRequest, Operation, Service
from orders.names import WORKFLOW_REMOTE_STEPS

NOTHING_TO_UNDO_CODES = frozenset({"nothing_to_undo", "already_undone"})
"""Error codes of an undo's answer that mean there is nothing to undo (module docstring)."""

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
        key = idempotency_key(first.order_id, step.value)
        details = (ChargeRequestDetails(idempotency_key=key) if step is Step.CHARGE
                   else ShipRequestDetails(idempotency_key=key))
        last_seq += 1
        made.append(first.model_copy(update={"details": details, "seq": last_seq}))
    return made


def pending_undos(entries: Iterable[CompensationEntry]) -> list[CompensationEntry]:
    """Return the forward steps that may have happened and are not undone, newest first.

    A remote step counts once its request was logged, confirmed or not (module
    docstring); its completed entry is returned when there is one (it names what the
    service created), else its *requested* entry. Steps are ordered by when their first
    entry was written, newest first (SPEC S9: reverse order).

    Parameters
    ----------
    entries : iterable of CompensationEntry
        An order's log, in any order.

    Returns
    -------
    list of CompensationEntry
        The order in which to undo them.
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
    """Return the step that undoes a logged forward step.

    Parameters
    ----------
    entry : CompensationEntry
        A forward step's entry, completed or *requested*.

    Returns
    -------
    Step
        Its undo.

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
    """Build the agent request that undoes a remote step (stable ids, SPEC A2, A4).

    Parameters
    ----------
    instance_id : str
        The compensation attempt's instance id.
    entry : CompensationEntry
        The forward step's log entry.
    deadline : datetime
        CompleteBy of the compensation attempt.
    max_attempts : int
        Calls the agent may make.

    Returns
    -------
    AgentRequest
        MessageId ``<instanceId>:<operation>``; idempotency key ``<OrderID>:<operation>``,
        the same in every compensation attempt, so the service undoes once. The payload
        (:class:`~orders.models.agent_io.RefundPayload` or
        :class:`~orders.models.agent_io.CancelShipmentPayload`) names the forward request
        by its idempotency key and carries the ids the service returned, if it answered.

    Raises
    ------
    ValueError
        If the step is undone locally.
    """
    step = undo_step(entry)
    if step not in REMOTE_UNDO:
        raise ValueError(f"details.step: {step.value} is undone locally, not by an agent")
    service, operation = REMOTE_UNDO[step]
    order_id, details = entry.order_id, entry.details
    key = (getattr(details, "idempotency_key", None)
           or idempotency_key(order_id, UNDOES[step].value))
    payload: AgentPayload
    if step is Step.REFUND:
        paid = details if isinstance(details, PaymentDetails) else None
        payload = RefundPayload(
            order_id=order_id, charge_key=key, payment_id=paid.payment_id if paid else None,
            amount=paid.amount if paid else None, currency=paid.currency if paid else None)
    else:
        shipped = details if isinstance(details, ShipmentDetails) else None
        payload = CancelShipmentPayload(
            order_id=order_id, shipment_key=key,
            shipment_id=shipped.shipment_id if shipped else None)
    return AgentRequest(
        message_id=request_message_id(instance_id, operation), order_id=order_id,
        instance_id=instance_id,
        service=service, operation=operation, idempotency_key=idempotency_key(order_id, operation),
        complete_by=deadline, max_attempts=max_attempts, event_name=reply_event_name(operation),
        payload=payload.to_payload())


def request_details(request: AgentRequest) -> dict[str, Any] | None:
    """Return the details of the *requested* entry logged before ``request`` is sent.

    Parameters
    ----------
    request : AgentRequest
        A request about to go to an agent.

    Returns
    -------
    dict or None
        ``{"step": "charge_requested" | "ship_requested", "idempotencyKey", ...}`` for a
        remote forward step (a charge also names its amount and currency); None for an
        undo, which is logged when it is confirmed.
    """
    if catalogue().undo_of(request.operation) is None:
        return None  # an undo, or a step nothing undoes: not logged before it is sent
    step = Step(request.operation)
    if step not in REQUESTED:
        return None
    details: dict[str, Any] = {"step": REQUESTED[step].value,
                               "idempotencyKey": request.idempotency_key}
    if step is Step.CHARGE:
        details.update(amount=request.payload.get("amount"),
                       currency=request.payload.get("currency"))
    return details


def nothing_to_undo(reply: AgentReply) -> bool:
    """Tell whether an agent's reply to an undo means *nothing to undo* (module docstring).

    Decided by the service's error code (``errorCode`` of the reply), never by the status;
    a reply written before ``errorCode`` existed never means *nothing to undo*.
    """
    return (reply.outcome is AgentOutcome.PERMANENT_FAILURE
            and reply.error_code in NOTHING_TO_UNDO_CODES)


def outcome_label(reply: AgentReply) -> str:
    """Return how logs and traces name an agent reply's outcome.

    The wire outcome of a refused undo is ``PermanentFailure``, but when the service
    answered *nothing to undo* (:func:`nothing_to_undo`) the undo counts as done, so an
    operator reads ``NothingToUndo`` (the compensation log's :attr:`UndoOutcome.NOTHING_TO_UNDO`)
    rather than a failure.
    """
    return UndoOutcome.NOTHING_TO_UNDO.value if nothing_to_undo(reply) else reply.outcome.value


def step_details(step: Step, result: dict[str, Any] | None,
                 outcome: UndoOutcome | None = None) -> dict[str, Any]:
    """Turn a step's result into the details of its log entry (JSON form).

    Only the fields the undo needs are taken (no card data ever reaches the log).

    Parameters
    ----------
    step : Step
        The completed step or undo.
    result : dict or None
        The local step's output or the service's answer (None for nothing to undo).
    outcome : UndoOutcome, optional
        For an undo: Undone or NothingToUndo.

    Returns
    -------
    dict
        Ready for :meth:`CompensationEntry.new`.

    Raises
    ------
    KeyError
        If ``result`` lacks a field the step needs.
    """
    got = result or {}
    details: dict[str, Any] = {"step": step.value}
    if step is Step.RESERVE_INVENTORY:
        details.update(reservationId=got["reservationId"], lines=got["lines"])
    elif step is Step.CHARGE:
        details.update(paymentId=got["paymentId"], amount=got["amount"],
                       currency=got["currency"])
    elif step is Step.SHIP:
        details.update(shipmentId=got["shipmentId"])
    elif step is Step.RELEASE_INVENTORY:
        details.update(reservationId=got["reservationId"],
                       outcome=(outcome or UndoOutcome.UNDONE).value)
        if got.get("released") is not None:
            details["released"] = got["released"]
    else:
        details["outcome"] = (outcome or UndoOutcome.UNDONE).value
        if outcome is not UndoOutcome.NOTHING_TO_UNDO:
            if step is Step.REFUND:
                details.update(refundId=got["refundId"], amount=got["amount"],
                               currency=got["currency"])
            else:
                details.update(shipmentId=got["shipmentId"])
    return details
