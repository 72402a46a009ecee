"""Service Bus queue triggers: receive in peek-lock, invoke, complete or abandon.

As the Functions host with ``autoCompleteMessages``: a function that returns completes its
message, one that raises abandons it (until ``MaxDeliveryCountExceeded``); one the function
settled itself is left as is; the lock is renewed meanwhile (``maxAutoLockRenewalDuration``).
A message the host cannot hand over is abandoned and, past ``DEVHOST_HOST_RETRIES``
deliveries, dead-lettered as ``LocalHostError`` (L3, :mod:`devhost.failures.host_failures`).
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import weakref
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import azure.functions as func
from azure.functions.servicebus import ServiceBusMessage

from devhost.app import invoke
from devhost.app.loader import AppLoadError, FunctionDef
from devhost.failures.disk_gate import DiskGate
from devhost.failures.host_failures import (
    HOST_ERROR_REASON,
    HostRetryPolicy,
    describe,
    host_error_text,
)
from devhost.workers.lease import renewing
from sqlitebus import MessageLockLostError, ServiceBusEngine
from sqlitebus.models import ReceivedMessage

log = logging.getLogger("devhost.servicebus")


def to_function_message(m: ReceivedMessage) -> func.ServiceBusMessage:
    """Build the ``azure.functions.ServiceBusMessage`` the Python worker would pass."""
    props = dict(m.application_properties)
    return ServiceBusMessage(
        body=m.body, application_properties=props, user_properties=props,
        content_type=m.content_type, correlation_id=m.correlation_id,
        delivery_count=m.delivery_count, enqueued_time_utc=m.enqueued_time,
        expires_at_utc=m.expires_at, locked_until=m.locked_until, lock_token=m.lock_token,
        message_id=m.message_id, sequence_number=m.sequence_number,
        scheduled_enqueue_time_utc=m.scheduled_enqueue_time, session_id=m.session_id,
        time_to_live=m.time_to_live, dead_letter_reason=m.dead_letter_reason,
        dead_letter_error_description=m.dead_letter_error_description,
        trigger_metadata={"MessageId": m.message_id, "DeliveryCount": m.delivery_count,
                          "LockToken": m.lock_token, "EntityPath": m.entity_path})


PEER_WAIT_S = 1.0
"""Longest idle wait of a queue's poller while another of this process polls for the queue."""


class _Scout:
    """Which idle poller of a queue in this process polls; the others wait to be woken."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._poller: object | None = None

    def claim(self, poller: object) -> bool:
        """Make ``poller`` the scout unless another is; True if it is the scout."""
        with self._lock:
            if self._poller is None:
                self._poller = poller
            return self._poller is poller

    def release(self, poller: object) -> None:
        """Stop ``poller`` being the scout (it got work), if it was."""
        with self._lock:
            if self._poller is poller:
                self._poller = None


_scouts: weakref.WeakKeyDictionary[ServiceBusEngine, dict[str, _Scout]] = \
    weakref.WeakKeyDictionary()
_scouts_guard = threading.Lock()


def _scout_of(engine: ServiceBusEngine, queue: str) -> _Scout:
    with _scouts_guard:
        return _scouts.setdefault(engine, {}).setdefault(queue.lower(), _Scout())


@dataclass(frozen=True)
class Running:
    """A message whose async function runs on the shared loop, started by ``start``."""

    message: ReceivedMessage
    holding: Any
    """The lock renewal's block, entered; :meth:`ServiceBusTriggerPoller.finish` leaves it."""
    future: concurrent.futures.Future[Any]


class ServiceBusTriggerPoller:
    """Feeds one queue-triggered function from the local Service Bus engine.

    ``client_binding`` returns the durable client binding JSON; ``batch_size`` is the prefetch;
    ``host_retries`` (L3) defaults to :meth:`HostRetryPolicy.from_settings`.

    Raises
    ------
    AppLoadError
        For session-enabled, ``cardinality=many`` or topic triggers (not supported).
    """

    def __init__(self, fdef: FunctionDef, engine: ServiceBusEngine, owner: str,
                 client_binding: Any, batch_size: int = 16,
                 host_retries: HostRetryPolicy | None = None,
                 gate: DiskGate | None = None) -> None:
        trigger = fdef.trigger
        if trigger.get("isSessionsEnabled"):
            raise AppLoadError(f"function '{fdef.name}': Service Bus sessions are not "
                               "supported by the local host yet")
        if str(trigger.get("cardinality", "one")).lower() != "one":
            raise AppLoadError(f"function '{fdef.name}': cardinality 'many' is not "
                               "supported by the local host yet")
        if "queueName" not in trigger:
            raise AppLoadError(f"function '{fdef.name}': only queue triggers are supported "
                               "(topic subscriptions are not)")
        self.fdef = fdef
        self.queue = trigger["queueName"]
        self.engine = engine
        self.owner = owner
        self.client_binding = client_binding
        self.batch_size = batch_size
        self.host_retries = host_retries or HostRetryPolicy.from_settings()
        self.gate = gate
        props = engine.catalog.resolve(self.queue)
        self.lock_duration = props.lock_duration if props else timedelta(seconds=30)
        self.max_delivery_count = props.max_delivery_count if props else 10
        self._mark = 0
        self._scout = _scout_of(engine, self.queue)

    def idle_wait(self, timeout_s: float) -> None:
        """Wait for a send to the queue (of any process: the engine's doorbell) or ``timeout_s``.

        One idle poller of the queue (the scout) polls so; the others wait up to
        :data:`PEER_WAIT_S`, woken by a send or by a poller that received.
        """
        if not self._scout.claim(self):
            timeout_s = max(timeout_s, PEER_WAIT_S)
        self.engine.wait_for_send(self.queue, self._mark, timeout_s)

    def next_due(self) -> datetime | None:
        """Return when the queue's next message becomes receivable, or None."""
        return self.engine.next_visible(self.queue)

    def poll_once(self) -> int:
        """Receive a batch and run the function for each message; return how many ran."""
        self._mark = self.engine.send_mark(self.queue)
        messages = self.engine.receive(self.queue, self.batch_size, lock_owner=self.owner)
        if messages:  # busy now: an idle peer polls, for what else is queued
            self._scout.release(self)
            self.engine.wake_receiver(self.queue)
        for m in messages:
            self.handle(m)
        return len(messages)

    def handle(self, m: ReceivedMessage) -> None:
        """Run the function on a received message and settle it (the host's autoComplete).

        A failure to settle is logged, not raised: the message stays unsettled, its lock
        expires and it is delivered again, until the queue's MaxDeliveryCount dead-letters it.
        """
        try:
            self._handle(m)
        except Exception as exc:  # noqa: BLE001 - the next messages run
            self._settle_failed(m, exc)

    def start(self, m: ReceivedMessage) -> Running | None:
        """Start an ``async def`` function on a message on the shared loop, not waiting for it.

        As :meth:`handle` until the function runs (the lock renewed meanwhile); the caller
        passes the returned :class:`Running` to :meth:`finish` once its future is done.
        None if nothing runs: the host could not build the arguments (the message is
        abandoned or dead-lettered, L3) or starting failed (abandoned, as a raise).
        """
        try:
            kwargs = self._arguments_or_failure(m)
            if kwargs is None:
                return None
            holding = self._renewing(m)
            holding.__enter__()
            try:
                future = invoke.start(self.fdef.func, kwargs)
            except Exception as exc:  # noqa: BLE001 - as if the function raised
                holding.__exit__(None, None, None)
                self._ended(m, exc)
                return None
            return Running(m, holding, future)
        except Exception as exc:  # noqa: BLE001 - as handle()
            self._settle_failed(m, exc)
            return None

    def finish(self, running: Running) -> None:
        """Stop renewing a started message's lock and settle it by its function's outcome."""
        running.holding.__exit__(None, None, None)
        error: BaseException | None
        try:
            error = running.future.exception(timeout=0)
        except Exception as exc:  # noqa: BLE001 - cancelled: as a raise, abandoned
            error = exc
        if error is not None and not isinstance(error, Exception):  # as invoke.call raises
            error = invoke.FunctionExit(f"{self.fdef.name} raised {type(error).__name__}")
        try:
            self._ended(running.message, error)
        except Exception as exc:  # noqa: BLE001 - as handle()
            self._settle_failed(running.message, exc)

    def _settle_failed(self, m: ReceivedMessage, exc: Exception) -> None:
        if not self._disk_full(exc):
            log.error("message %s of queue %s could not be settled", m.message_id,
                      self.queue, exc_info=exc)

    def _arguments(self, m: ReceivedMessage) -> dict[str, Any]:
        kwargs: dict[str, Any] = {self.fdef.trigger_param: to_function_message(m)}
        if self.fdef.client_param:
            kwargs[self.fdef.client_param] = self.client_binding()
        return kwargs

    def _handle(self, m: ReceivedMessage) -> None:
        kwargs = self._arguments_or_failure(m)
        if kwargs is None:
            return
        try:
            with self._renewing(m):
                invoke.call(self.fdef.func, kwargs)
        except Exception as exc:  # noqa: BLE001 - an exception abandons it, as in Azure
            self._ended(m, exc)
        else:
            self._ended(m, None)

    def _arguments_or_failure(self, m: ReceivedMessage) -> dict[str, Any] | None:
        """Return the function's arguments; None if the host failed to make them (settled, L3)."""
        try:
            return self._arguments(m)
        except Exception as exc:  # noqa: BLE001 - the host failed, not the function (L3)
            self._failed_in_host(m, describe(exc))
            return None

    def _renewing(self, m: ReceivedMessage) -> Any:
        token = m.lock_token
        assert token is not None, "a peek-locked message has a lock token"
        return renewing(lambda: self.engine.renew_lock(self.queue, token), self.lock_duration)

    def _ended(self, m: ReceivedMessage, exc: Exception | None) -> None:
        """Settle a message whose function returned (``exc`` None: complete) or raised (abandon)."""
        if exc is None:
            self._settle(self.engine.complete, m)
            return
        if self._disk_full(exc):  # the gate stops receiving: few deliveries are spent
            log.warning("function %s failed on message %s (delivery %d) while the data "
                        "disk is full; abandoning", self.fdef.name, m.message_id,
                        m.delivery_count)
        else:
            log.error("function %s failed on message %s (delivery %d); abandoning",
                      self.fdef.name, m.message_id, m.delivery_count, exc_info=exc)
        self._settle(self.engine.abandon, m)

    def _disk_full(self, exc: Exception) -> bool:
        """Tell the host's disk gate of a failure; True if it says the disk is full."""
        return self.gate is not None and self.gate.saw(exc)

    def _failed_in_host(self, m: ReceivedMessage, error: str) -> None:
        policy = self.host_retries
        what = (f"function '{self.fdef.name}' on message '{m.message_id}' of queue "
                f"'{self.queue}'")
        # Dead-lettered with the host's reason at the last delivery the queue allows too,
        # so MaxDeliveryCountExceeded never hides that the host was at fault.
        if not (policy.gives_up(m.delivery_count)
                or m.delivery_count >= self.max_delivery_count):
            log.warning("the host could not run %s (delivery %d of at most %d); abandoning:"
                        " %s", what, m.delivery_count, policy.attempts, error)
            self._settle(self.engine.abandon, m)
            return
        text = host_error_text(what, m.delivery_count, error)
        log.error("message '%s' dead-lettered: %s", m.message_id, text)
        self._settle(lambda queue, token: self.engine.dead_letter(
            queue, token, reason=HOST_ERROR_REASON, description=text), m)

    def _settle(self, action: Any, m: ReceivedMessage) -> None:
        try:
            action(self.queue, m.lock_token)
        except MessageLockLostError:
            # Settled by the function itself (dead-lettered or completed), or the lock
            # expired: the broker's state stands, as with Azure's auto-complete.
            log.debug("message %s already settled or lock lost", m.message_id)
