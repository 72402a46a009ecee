"""The end-to-end retry budget: how many calls one order can cause at each remote service (X2).

Retries happen at four layers: the agent retries a transient fault (``AGENT_MAX_ATTEMPTS``),
Service Bus redelivers an agent request whose handler failed or lost its lock
(``maxDeliveryCount`` of the request queue), the orchestrator could retry activities or
sub-orchestrations (no retry policy is used), and the supervisor starts new attempts
(``MAX_FAILURES``), plus the compensation workflow's attempts. Their effects multiply, so
the scheduler owns one budget per order and service (``RETRY_BUDGET_CALLS_PER_SERVICE``):
:func:`max_calls_per_service` computes the worst case from the configuration and
:func:`check_budget` refuses settings whose worst case exceeds the budget at start-up.

Status messages to clients, and the supervisor's resends of a final status whose first
send failed (:mod:`orders.notify`), are Service Bus sends to the client's reply queue, not
calls to a remote service: they are outside this budget (each resend has the first
send's MessageId, so a send that did reach the queue drops the resend as a duplicate).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from azurekit.services import catalogue
from orders.errors import OrderServiceError
from orders.models import ProcessState, StateRecord
from orders.names import REQUEST_QUEUES, WORKFLOW_REMOTE_STEPS
from orders.queues import QueueLimits

COMPENSATING_OPERATIONS: dict[str, tuple[str, ...]] = {
    name: spec.undo_operations for name, spec in catalogue().services.items()}
"""Operations that undo the forward ones (S9), by service (``infra/services.json``)."""

ORCHESTRATOR_RETRY_FACTOR = 1
"""Times an orchestrator may re-run a step that sends an agent request: no retry policy is
used (a resend inside one attempt reuses the request's MessageId and is dropped by duplicate
detection). Raise it if a ``call_activity_with_retry`` or sub-orchestration retry is added
around a remote step (``max_number_of_attempts`` of that policy)."""

COMPENSATION_ATTEMPTS_SETTING = "MAX_COMPENSATION_FAILURES"
"""Setting that bounds the compensation attempts (the supervisor gives up at this many
missed CompleteBys, as MAX_FAILURES does for the workflow), if the deployment has one."""


class BudgetError(OrderServiceError, ValueError):
    """The configured retries can exceed the retry budget, or a queue breaks an assumption.

    Permanent: the settings or ``infra/queues.json`` must change.
    """


VERSION_REMOTE_STEPS = tuple(WORKFLOW_REMOTE_STEPS.values())
"""The remote steps of every registered workflow version (``names.WORKFLOW_REMOTE_STEPS``)."""


def forward_operations(service: str) -> tuple[str, ...]:
    """Return the remote operations one workflow attempt sends to ``service``.

    The most of any registered version (:data:`VERSION_REMOTE_STEPS`), read from the
    workflow's own step lists, so a step added there is counted here.
    """
    per_version = [tuple(op for s, op in steps if s == service)
                   for steps in VERSION_REMOTE_STEPS]
    return max(per_version, key=len, default=())


def refusal_made_no_call(record: StateRecord, operation: str) -> bool:
    """Tell whether an attempt refused by an open circuit at ``operation`` called nothing (X2).

    Only then may the supervisor hold it back without counting a failure: a hold-back that
    is not counted is repeated for as long as the circuit refuses, so if the refused
    attempt had called a service, a long outage would multiply those calls past
    :func:`max_calls_per_service`.

    Parameters
    ----------
    record : StateRecord
        The order's record, owned by the refused attempt.
    operation : str
        The operation the open circuit refused (the agent reply's ``operation``).

    Returns
    -------
    bool
        For an order attempt, True if ``operation`` is the first remote step of the
        record's workflow version (only a local reservation came before it). For a
        compensation attempt, always True: each undo it completed is logged and never
        requested again, so the next attempt repeats no call (S9).
    """
    if record.process_state is ProcessState.COMPENSATING:
        return True
    steps = WORKFLOW_REMOTE_STEPS.get(record.workflow_version, ())
    return bool(steps) and steps[0][1] == operation


def _compensation_attempts(settings: Any) -> int:
    value = getattr(settings, COMPENSATION_ATTEMPTS_SETTING, None)
    return int(value) if value is not None else 0


def max_calls_per_service(settings: Any, queues: Mapping[str, QueueLimits]) -> dict[str, int]:
    """Return the most calls one order can make to each remote service.

    For a service ``s`` with request queue ``q(s)``::

        max_calls(s) = R_orch * A_agent * D(q(s))
                       * (MAX_FAILURES * F(s) + C_comp * K(s))

    where ``A_agent = AGENT_MAX_ATTEMPTS`` (HTTP calls per delivery of one request,
    A1), ``D = maxDeliveryCount`` of the request queue (each delivery may run the agent's
    retry loop again before Service Bus dead-letters the request), ``R_orch`` =
    :data:`ORCHESTRATOR_RETRY_FACTOR`, ``MAX_FAILURES`` = attempts the supervisor allows
    (attempt ``n`` fails -> FailureCount ``n``; at MAX_FAILURES the order goes to Error, so
    there are at most MAX_FAILURES attempts, V2), ``F(s)`` = forward operations on
    ``s`` per attempt (one request each, :func:`forward_operations`), ``C_comp`` =
    ``MAX_COMPENSATION_FAILURES`` (0 if the setting does not exist) and ``K(s)`` =
    compensating operations on ``s``.

    Attempts that an open circuit refused before any call are not in the formula: the
    agent's reply says ``circuitOpen`` only when the first delivery of the request made no
    call, the reply handler marks the attempt only if that request was its first remote
    call (:func:`refusal_made_no_call`), and the supervisor holds such an attempt back
    without counting it against MAX_FAILURES (or MAX_COMPENSATION_FAILURES), so however
    many there are, whatever the outage, they add no call to any service (A5, V2). An
    attempt refused at a later step (it charged, then the shipping circuit refused the
    shipment) did call, and a new attempt would call again, so it counts as usual. A
    redelivered request refused by the circuit is not marked (its earlier delivery may have
    called) and counts as usual. One assumption remains: the agent's
    reply and the completion of its request are not atomic, so a host crash between the
    two lets Service Bus redeliver a request already answered "refused"; those calls are
    outside the formula (at most ``A_agent * (D - 1)`` for each request so redelivered).

    The bound holds per submission: an operator's resubmission (S7) resets
    FailureCount and grants one more budget. It assumes duplicate detection on the request
    queues (checked by :func:`check_budget`), so re-running ``send_agent_request`` inside
    one attempt sends no second request.

    Parameters
    ----------
    settings : orders.settings.Settings
        Uses ``AGENT_MAX_ATTEMPTS``, ``MAX_FAILURES`` and, if present,
        ``MAX_COMPENSATION_FAILURES``.
    queues : mapping of str to QueueLimits
        From :func:`orders.queues.load_queue_limits`.

    Returns
    -------
    dict of str to int
        Calls by service, for every service of ``infra/services.json``.

    Raises
    ------
    BudgetError
        If a service's request queue is not declared in ``queues``.
    """
    result = {}
    for service, queue in REQUEST_QUEUES.items():
        if queue not in queues:
            raise BudgetError(f"queues.{queue}: the {service} agent's request queue is not "
                              "declared in infra/queues.json")
        per_request = (ORCHESTRATOR_RETRY_FACTOR * settings.AGENT_MAX_ATTEMPTS
                       * queues[queue].max_delivery_count)
        requests = (settings.MAX_FAILURES * len(forward_operations(service))
                    + _compensation_attempts(settings) * len(COMPENSATING_OPERATIONS[service]))
        result[service] = per_request * requests
    return result


def check_budget(settings: Any, queues: Mapping[str, QueueLimits]) -> dict[str, int]:
    """Refuse a configuration whose retries can exceed ``RETRY_BUDGET_CALLS_PER_SERVICE`` (X2).

    Parameters
    ----------
    settings : orders.settings.Settings
        The app settings.
    queues : mapping of str to QueueLimits
        The queue limits.

    Returns
    -------
    dict of str to int
        :func:`max_calls_per_service`, when within the budget.

    Raises
    ------
    BudgetError
        Naming the service, its computed maximum, the budget and the settings to lower; or
        naming a request queue without duplicate detection.
    """
    for queue in REQUEST_QUEUES.values():
        limits = queues.get(queue)
        if limits is not None and not limits.requires_duplicate_detection:
            raise BudgetError(f"queues.{queue}.requiresDuplicateDetection: must be true, or a "
                              "resent agent request is delivered twice and the retry budget "
                              "is unbounded (A4, X2)")
    calls = max_calls_per_service(settings, queues)
    budget = settings.RETRY_BUDGET_CALLS_PER_SERVICE
    over = {s: n for s, n in calls.items() if n > budget}
    if over:
        detail = ", ".join(f"{s}: {n}" for s, n in sorted(over.items()))
        raise BudgetError(
            f"RETRY_BUDGET_CALLS_PER_SERVICE: {budget} calls per order and service is exceeded "
            f"({detail}); lower AGENT_MAX_ATTEMPTS ({settings.AGENT_MAX_ATTEMPTS}), "
            f"MAX_FAILURES ({settings.MAX_FAILURES}), {COMPENSATION_ATTEMPTS_SETTING} "
            f"({_compensation_attempts(settings)}) or the request queues' maxDeliveryCount, "
            "or raise the budget (X2)")
    return calls
