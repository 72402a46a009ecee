"""One resilient call to a remote service: the agent's retry and circuit-breaker logic.

Independent of queues and Functions, so the rules of A1-A5 (docs/pipeline.md, "Agents
(A1-A5)") are tested on their own; the retry loop is tenacity's, with an injected clock.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

import httpx
import tenacity
from opentelemetry.trace import SpanKind, StatusCode

from agents.backoff import BackoffPolicy, StopAtDeadline, WaitRetryAfterOr, parse_retry_after
from azurekit.services import UnknownServiceError, catalogue
from clocks import Clock
from orders.circuit import CircuitBreaker
from orders.lifecycle.ids import MAX_KEY_LENGTH
from orders.models import wire
from orders.observability.tracing import inject, order_span

logger = logging.getLogger("orders.agents.remote_call")

IDEMPOTENCY_HEADER = "Idempotency-Key"
TRANSIENT_4XX = frozenset({408, 429})
"""4xx statuses that are transient: Request Timeout and Too Many Requests."""


@dataclass(frozen=True)
class RemoteRequest:
    """The call part of an A1 request; ``service`` selects the circuit breaker.

    ``url`` is absolute or relative to the client's ``base_url``; ``idempotency_key`` is sent
    on every try; ``order_key`` is for logs.
    """

    service: str
    method: str
    url: str
    idempotency_key: str
    json: Any = None
    order_key: str | None = None

    def __post_init__(self) -> None:
        if not self.service:
            raise ValueError("service: must not be empty")
        if not self.method or not self.method.isalpha():
            raise ValueError(f"method: not an HTTP method: {self.method!r}")
        if not self.url:
            raise ValueError("url: must not be empty")
        if not self.idempotency_key or len(self.idempotency_key) > MAX_KEY_LENGTH:
            raise ValueError(f"idempotency_key: must be 1 to {MAX_KEY_LENGTH} characters")


class OutcomeKind(StrEnum):
    """How a remote call ended."""

    SUCCEEDED = "succeeded"
    PERMANENT_FAILURE = "permanent_failure"
    TRANSIENT_EXHAUSTED = "transient_exhausted"
    CIRCUIT_OPEN = "circuit_open"


class StopReason(StrEnum):
    """Why retrying a transient fault stopped."""

    MAX_ATTEMPTS = "max_attempts"
    DEADLINE = "deadline"


@dataclass(frozen=True)
class RemoteOutcome:
    """Result of :func:`call_remote`; never an exception for a remote failure.

    ``tries`` counts HTTP calls started (each a *try*; an *attempt* is an order's);
    ``status_code`` and ``body`` are the last answer's; ``stop_reason`` is set for
    TRANSIENT_EXHAUSTED and ``retry_at`` (the breaker's next trial) for CIRCUIT_OPEN.
    """

    kind: OutcomeKind
    tries: int
    status_code: int | None = None
    body: Any = None
    reason: str | None = None
    stop_reason: StopReason | None = None
    retry_at: datetime | None = None

    @property
    def succeeded(self) -> bool:
        """True for a 2xx answer."""
        return self.kind is OutcomeKind.SUCCEEDED

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable form, e.g. for the agent's reply message."""
        return {
            "kind": str(self.kind),
            "tries": self.tries,
            "statusCode": self.status_code,
            "body": self.body,
            "reason": self.reason,
            "stopReason": str(self.stop_reason) if self.stop_reason else None,
            "retryAt": self.retry_at.isoformat() if self.retry_at else None,
        }


class _TransientError(Exception):
    """One try met a transient fault; tenacity retries on this type only."""

    def __init__(
        self, message: str, response: httpx.Response | None = None,
        retry_after: timedelta | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.response = response
        self.retry_after = retry_after


class _NoCall(Exception):
    """No call was started: the deadline passed or the circuit refused."""

    def __init__(self, kind: OutcomeKind, message: str, retry_at: datetime | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retry_at = retry_at


def _decode(response: httpx.Response) -> Any:
    # Strict JSON: see docs/pipeline.md, "Agents (A1-A5)".
    if not response.content:
        return None
    if "json" in response.headers.get("content-type", ""):
        try:
            return wire.loads(response.content)
        except wire.InvalidMessage:
            pass
    return response.text


ERROR_CODE_FIELDS = ("reason", "error", "code")
"""Fields of an error answer that may hold an error code, first found first."""


def safe_error_code(service: str, body: Any) -> str | None:
    """Return the first code of :data:`ERROR_CODE_FIELDS` the service declares safe, or None."""
    try:
        safe = catalogue().service(service).safe_errors
    except UnknownServiceError:
        safe = frozenset()
    codes = [body.get(k) for k in ERROR_CODE_FIELDS] if isinstance(body, dict) else []
    return next((c for c in codes if isinstance(c, str) and c in safe), None)


def permanent_reason(service: str, status: int, body: Any) -> str:
    """Return the reason of a permanent failure: ``HTTP <status>``, with a safe error code.

    A code of :data:`ERROR_CODE_FIELDS` is kept only if the service's ``safeErrors`` in the
    catalogue (``infra/services.json``) declares it; any other text of the answer (free
    text, a message quoting the request) is withheld, since the reason is stored as the
    order's ``failureReason`` and sent in statuses and alerts (X10).
    """
    code = safe_error_code(service, body)
    if code is not None:
        return f"HTTP {status}: {code}"
    if body:
        return (f"HTTP {status} (the service's error text is withheld: no error code of "
                f"{service}'s safeErrors)")
    return f"HTTP {status}"


class _Try:
    """One HTTP try of a request, called by tenacity; counts tries, keeps the last fault."""

    def __init__(self, client: httpx.Client, request: RemoteRequest, deadline: datetime,
                 breaker: CircuitBreaker, clock: Clock, try_timeout: timedelta) -> None:
        self.client, self.request, self.deadline = client, request, deadline
        self.breaker, self.clock, self.try_timeout = breaker, clock, try_timeout
        self.count = 0
        self.last_error: _TransientError | None = None

    def transient(self, message: str, response: httpx.Response | None = None
                  ) -> _TransientError:
        """Record a transient fault (breaker, log) and return the error to raise."""
        r = self.request
        self.breaker.record_failure()
        logger.info("%s order %s key %s try %d: %s", r.service, r.order_key,
                    r.idempotency_key, self.count, message)
        retry_after = None
        if response is not None:
            retry_after = parse_retry_after(response.headers.get("Retry-After"),
                                            self.clock.now())
        self.last_error = _TransientError(message, response, retry_after)
        return self.last_error

    def __call__(self) -> httpx.Response:
        now = self.clock.now()
        if now >= self.deadline:
            raise _NoCall(OutcomeKind.TRANSIENT_EXHAUSTED, "deadline reached before the call")
        if not self.breaker.allow():
            raise _NoCall(OutcomeKind.CIRCUIT_OPEN, f"circuit of {self.request.service} is "
                          "open", self.breaker.open_until)
        self.count += 1
        timeout_s = min(self.try_timeout, self.deadline - now).total_seconds()
        r = self.request
        # Each try is its own span, and the service continues its trace (X8).
        with order_span(f"{r.method} {r.service} try {self.count}", kind=SpanKind.CLIENT,
                        order_key=r.order_key,
                        attributes={"http.request.method": r.method, "url.full": r.url,
                                    "orders.try": self.count}) as span:
            try:
                response = self.client.request(
                    r.method, r.url, json=r.json, timeout=timeout_s,
                    headers=inject({IDEMPOTENCY_HEADER: r.idempotency_key}))
            except httpx.TransportError as exc:
                span.set_status(StatusCode.ERROR, type(exc).__name__)
                raise self.transient(f"{type(exc).__name__}: {exc}") from exc
            except BaseException:
                self.breaker.release()
                raise
            status = response.status_code
            span.set_attribute("http.response.status_code", status)
            if status >= 500 or status in TRANSIENT_4XX:
                span.set_status(StatusCode.ERROR, f"HTTP {status}")
                raise self.transient(f"HTTP {status}", response)
        self.breaker.record_success()  # 2xx, or a deliberate refusal: the service is up
        return response


def call_remote(
    client: httpx.Client,
    request: RemoteRequest,
    *,
    deadline: datetime,
    max_attempts: int,
    breaker: CircuitBreaker,
    clock: Clock,
    sleep: Callable[[float], None] = time.sleep,
    backoff: BackoffPolicy | None = None,
    try_timeout: timedelta = timedelta(seconds=10),
) -> RemoteOutcome:
    """Call a remote service with retries inside a deadline and a circuit breaker (A1-A5).

    ``deadline`` is the step's timezone-aware CompleteBy; ``max_attempts`` counts every call
    (X2); ``sleep(seconds)`` runs between tries; ``try_timeout`` is cut to the time left.

    Raises
    ------
    ValueError
        If ``max_attempts < 1``, ``deadline`` is naive or ``try_timeout`` not positive.
    """
    _check_limits(max_attempts, deadline, try_timeout)
    backoff = backoff or BackoffPolicy()
    try_ = _Try(client, request, deadline, breaker, clock, try_timeout)
    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception_type(_TransientError),
        stop=tenacity.stop_after_attempt(max_attempts) | StopAtDeadline(deadline, clock),
        wait=WaitRetryAfterOr(backoff.wait()),
        sleep=sleep,
        reraise=True,
    )
    try:
        response = retrying(try_)
    except _TransientError as exc:
        stop: StopReason | None = (StopReason.MAX_ATTEMPTS if try_.count >= max_attempts
                                   else StopReason.DEADLINE)
        return _failed(OutcomeKind.TRANSIENT_EXHAUSTED, try_.count, exc, exc.message, stop)
    except _NoCall as exc:
        last = try_.last_error
        reason = f"{exc.message}; last error: {last}" if last else exc.message
        stop = StopReason.DEADLINE if exc.kind is OutcomeKind.TRANSIENT_EXHAUSTED else None
        return _failed(exc.kind, try_.count, last, reason, stop, exc.retry_at)
    body = _decode(response)
    if response.is_success:
        return RemoteOutcome(OutcomeKind.SUCCEEDED, try_.count, response.status_code, body)
    reason = permanent_reason(request.service, response.status_code, body)
    logger.warning("%s order %s key %s: permanent failure %s", request.service,
                   request.order_key, request.idempotency_key, reason)
    return RemoteOutcome(
        OutcomeKind.PERMANENT_FAILURE, try_.count, response.status_code, body, reason
    )


def _check_limits(max_attempts: int, deadline: datetime, try_timeout: timedelta) -> None:
    if max_attempts < 1:
        raise ValueError("max_attempts: must be at least 1")
    if deadline.tzinfo is None:
        raise ValueError("deadline: must be timezone-aware (UTC)")
    if try_timeout <= timedelta(0):
        raise ValueError("try_timeout: must be a positive timedelta")


def _failed(
    kind: OutcomeKind,
    tries: int,
    error: _TransientError | None,
    reason: str,
    stop: StopReason | None,
    retry_at: datetime | None = None,
) -> RemoteOutcome:
    response = error.response if error is not None else None
    return RemoteOutcome(
        kind,
        tries,
        status_code=response.status_code if response is not None else None,
        body=_decode(response) if response is not None else None,
        reason=reason,
        stop_reason=stop,
        retry_at=retry_at,
    )
