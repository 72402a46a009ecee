"""The starter (S3): claim Pending records with their ETag, then start their orchestrations.

Protocol and fair shares: docs/pipeline.md, step 2, and docs/operations.md, "Admission
control (X3) and fair shares between clients". A crash between claim and start leaves the
claim's CompleteBy (now + START_GRACE_S) to expire; the supervisor returns the record to
Pending (V2). The timer's :func:`run_starter` is the safety net for everything a
submission does not claim (:func:`may_start_now`, then :func:`start_claimable`).
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from orders.lifecycle.changes import claim_attempt
from orders.lifecycle.ids import orchestration_version
from orders.models import ProcessState, StateRecord
from orders.models.attempt_io import OrderWorkflowInput
from orders.models.messages import OperatorAlert
from orders.names import ORDER_WORKFLOW, WORKFLOW_VERSIONS
from orders.notify import send_alert
from orders.observability.tracing import current_traceparent, order_span, tag_order
from orders.runtime import Services
from orders.stores import StateStore
from orders.stores.errors import PreconditionFailedError
from orders.stores.ports import MAX_COUNT_LIMIT
from orders.threads import off_loop

log = logging.getLogger("orders.starter")


@dataclass(frozen=True)
class StartReport:
    """What one starter run did."""

    claimed: int
    started: int
    lost_races: int


def workflow_input(record: StateRecord, services: Services) -> dict[str, Any]:
    """Build the orchestrator input, its contract's JSON form (D4, X6, X8).

    Settings travel in it so a replay sees the same; the attempt's trace context too, if it
    has one.

    Raises
    ------
    pydantic.ValidationError
        If the record or the settings break :class:`OrderWorkflowInput` (nothing started).
    """
    s = services.settings
    return OrderWorkflowInput(
        order_key=record.order_key, attempt=record.attempt,
        workflow_version=record.workflow_version, deadline_s=s.ORDER_DEADLINE_S,
        agent_max_attempts=s.AGENT_MAX_ATTEMPTS, trace_parent=record.attempt_trace or None,
    ).model_dump(mode="json")


async def claim_and_start(client: Any, states: StateStore, records: Iterable[StateRecord],
                          claim: Callable[[StateRecord], StateRecord], workflow: str,
                          make_input: Callable[[StateRecord], dict[str, Any]],
                          what: str,
                          version: Callable[[StateRecord], str | None] = lambda r: None,
                          write: Callable[[StateRecord], StateRecord | None] | None = None,
                          ) -> StartReport:
    """Claim each record with its ETag, then start ``workflow`` under the claimed LockedBy (S3).

    ``write`` (default ``states.replace``) returning None means no room; the rest wait.
    """
    claimed = started = lost = 0
    store = write or states.replace
    for record in records:
        # Each start is a step of the order's trace, linked to the attempt before (X8).
        with order_span(f"{what}: claim and start", order_key=record.order_key, operation=workflow,
                        parent=record.trace_parent, links=[record.attempt_trace]) as span:
            outcome = await _claim_and_start_one(client, store, record, claim, workflow,
                                                 make_input, what, version)
            span.set_attribute("orders.outcome", outcome)
        if outcome == "full":
            break
        claimed += outcome != "lost_race"
        started += outcome == "started"
        lost += outcome == "lost_race"
    if claimed or lost:
        log.info("%s: claimed=%d started=%d lost_races=%d", what, claimed, started, lost)
    return StartReport(claimed, started, lost)


async def _claim_and_start_one(client: Any,
                               write: Callable[[StateRecord], StateRecord | None],
                               record: StateRecord,
                               claim: Callable[[StateRecord], StateRecord], workflow: str,
                               make_input: Callable[[StateRecord], dict[str, Any]], what: str,
                               version: Callable[[StateRecord], str | None]) -> str:
    """Claim and start one record: ``started``, ``lost_race``, ``full`` or ``claimed``."""
    here = current_traceparent()
    try:
        # The store client is synchronous: off the worker's event loop (Azure parity).
        mine = await off_loop(write, claim(record).model_copy(update={
            "trace_parent": record.trace_parent or here, "attempt_trace": here}))
    except PreconditionFailedError:
        return "lost_race"  # another starter claimed it first (S3, V4)
    if mine is None:
        return "full"  # MAX_PROCESSING attempts run: the record stays Pending
    tag_order(instance_id=mine.locked_by)
    try:
        await client.start_new(workflow, mine.locked_by, make_input(mine),
                               version=version(mine))
    except Exception:  # noqa: BLE001 - the supervisor recovers it after START_GRACE_S
        log.exception("%s: order %s claimed as %s but could not start it", what,
                      record.order_key, mine.locked_by)
        return "claimed"
    return "started"


async def run_starter(client: Any, services: Services, batch: int | None = None
                      ) -> StartReport:
    """Claim startable records and start them; an unknown ``WORKFLOW_VERSION`` holds new ones.

    At most ``batch`` (default ``STARTER_BATCH``) records, within ``MAX_PROCESSING``.
    """
    room = min(batch or services.settings.STARTER_BATCH, await _room(services))
    if room <= 0:
        return StartReport(0, 0, 0)
    records = await off_loop(fair_startable, services, room)
    if services.settings.WORKFLOW_VERSION not in WORKFLOW_VERSIONS:
        records = [r for r in records if r.attempt > 0]
        await off_loop(_alert_unknown_version, services)
    return await _claim_and_start_orders(client, services, records)


async def start_next(client: Any, services: Services) -> StartReport:
    """Start the next claimable order in the slot an ending attempt freed (S3, X3, S8).

    Registered with :func:`orders.slots.on_slot_freed`. One store read when nothing waits;
    otherwise :func:`run_starter` for one record, max-min fair between clients, so a backlog
    refills as attempts end and not only at the timer's next run.
    """
    waiting = await off_loop(services.stores.states.find_startable, services.clock.now(), 1)
    if not waiting:
        return StartReport(0, 0, 0)
    return await run_starter(client, services, batch=1)


def may_start_now(services: Services, record: StateRecord) -> bool:
    """Say whether a submission's order may be claimed now (S3, X3); reads the state store.

    Pending, unclaimed and not held back, with a registered ``WORKFLOW_VERSION``, room under
    ``MAX_PROCESSING`` and its client within its fair share; otherwise the timer's
    :func:`run_starter` claims it later. Synchronous, as the store client is: call it off
    the event loop.
    """
    now = services.clock.now()
    return not (record.process_state is not ProcessState.PENDING
                or record.locked_by is not None
                or (record.not_before is not None and record.not_before > now)
                or services.settings.WORKFLOW_VERSION not in WORKFLOW_VERSIONS
                or _room_now(services) <= 0
                or not _within_share(services, record.client_id))


async def start_claimable(client: Any, services: Services, record: StateRecord) -> StartReport:
    """Claim ``record`` (with its ETag, within ``MAX_PROCESSING``) and start its attempt (S3).

    For a record :func:`may_start_now` said may start; the claim itself still refuses a
    full window or a record another starter claimed first.
    """
    return await _claim_and_start_orders(client, services, [record])


def fair_share(services: Services) -> int:
    """Return each client's share of MAX_PROCESSING: an equal part, at least 1."""
    clients = max(1, len(services.settings.order_clients))
    return max(1, -(-services.settings.MAX_PROCESSING // clients))


def slot_cap(services: Services) -> int:
    """Return the most Processing attempts one client may hold: a slot stays per other (S8, X3)."""
    clients = max(1, len(services.settings.order_clients))
    return max(fair_share(services), services.settings.MAX_PROCESSING - (clients - 1))


def _within_share(services: Services, client_id: str | None) -> bool:
    """Say whether ``client_id`` holds fewer Processing attempts than its fair share."""
    if client_id is None:
        return True
    share = fair_share(services)
    held = services.stores.states.count_of_client(client_id, [ProcessState.PROCESSING],
                                                  min(share, MAX_COUNT_LIMIT))
    return held < share


def fair_startable(services: Services, room: int) -> list[StateRecord]:
    """Pick up to ``room`` (1 to 1000) startable records in claim order, max-min fair (S8, X3)."""
    states, now = services.stores.states, services.clock.now()
    cap = min(services.settings.MAX_PROCESSING, MAX_COUNT_LIMIT)
    queue: list[tuple[int, int, list[StateRecord]]] = []
    for n, client_id in enumerate((*services.settings.order_clients, None)):
        found = states.find_startable(now, room, client_id=client_id)
        if found:
            held = 0 if client_id is None else states.count_of_client(
                client_id, [ProcessState.PROCESSING], cap)
            heapq.heappush(queue, (held, n, found[::-1]))
    picked: list[StateRecord] = []
    most = slot_cap(services)
    while queue and len(picked) < room:
        held, n, found = heapq.heappop(queue)
        if held >= most:
            continue  # the rest of this client's orders wait: slots stay for the others
        picked.append(found.pop())
        if found:
            heapq.heappush(queue, (held + 1, n, found))
    return picked


async def _room(services: Services) -> int:
    """Return how many more attempts MAX_PROCESSING lets the starter claim now."""
    return await off_loop(_room_now, services)


def _room_now(services: Services) -> int:
    """:func:`_room`, synchronous (a store read)."""
    counts = services.stores.states.count_by_state([ProcessState.PROCESSING])
    return services.settings.MAX_PROCESSING - counts.get(ProcessState.PROCESSING, 0)


async def _claim_and_start_orders(client: Any, services: Services,
                                  records: list[StateRecord]) -> StartReport:
    s = services.settings
    grace_until = services.clock.now() + s.start_grace

    def claim(record: StateRecord) -> StateRecord:
        # The workflow version is fixed when the first attempt starts (X6).
        return claim_attempt(record, grace_until, s.WORKFLOW_VERSION)

    states = services.stores.states
    return await claim_and_start(client, states, records, claim,
                                 ORDER_WORKFLOW, lambda r: workflow_input(r, services),
                                 "starter", lambda r: orchestration_version(r.workflow_version),
                                 lambda r: states.claim_within(
                                     r, min(s.MAX_PROCESSING, MAX_COUNT_LIMIT)))


def _alert_unknown_version(services: Services) -> None:
    version = services.settings.WORKFLOW_VERSION
    reason = (f"WORKFLOW_VERSION={version} is not registered "
              f"(known: {list(WORKFLOW_VERSIONS)}); "
              "new orders stay Pending until it names a registered version")
    log.error("%s", reason)
    # One MessageId per version: the queue's duplicate detection keeps it to one alert per
    # window however often the starter runs.
    send_alert(services.sender, OperatorAlert(
        kind="UnknownWorkflowVersion", reason=reason, at=services.clock.now()),
        message_id=f"UnknownWorkflowVersion:{version}")
