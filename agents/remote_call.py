"""One resilient call to a remote service: the agent's retry and circuit-breaker logic.

Independent of queues and Functions, so the rules of SPEC A1-A5 are tested on their own:

- one idempotency key per order and step, sent unchanged on every retry and every
  orchestration attempt (A2), in the ``Idempotency-Key`` header;
- transient faults (timeouts, connection errors, 5xx, 408, 429) are retried with
  exponential backoff and jitter, or after exactly ``Retry-After`` when the service says
  so (A5, Retry pattern), at most ``max_attempts`` calls in all;
- no call starts at or after the deadline, no retry is scheduled to start after it, and
  each call's HTTP timeout ends by the deadline (A1, A3);
- a per-service :class:`~orders.circuit.CircuitBreaker` fails fast while the
  service is down (A5, Circuit Breaker pattern);
- any other 4xx is a non-transient error reply: returned at once, never retried.

The retry loop is tenacity's (``stop``/``wait``/``retry``/``sleep`` strategies); time comes
from an injected clock and ``sleep`` so tests move a ``ManualClock`` instead of waiting.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from enum import StrEnum
from typing import Any

import httpx
import tenacity

from clocks import Clock
from orders.circuit import CircuitBreaker
from orders.lifecycle.ids import MAX_KEY_LENGTH
from orders.models import wire

logger = logging.getLogger("orders.agents.remote_call")

IDEMPOTENCY_HEADER = "Idempotency-Key"
TRANSIENT_4XX = frozenset({408, 429})
"""4xx statuses that are transient: Request Timeout and Too Many Requests."""


@dataclass(frozen=True)
class RemoteRequest:
    """What the agent needs to call the service (the call part of an A1 request message).

    Attributes
    ----------
    service : str
        Service name; selects the circuit breaker (e.g. ``payment``).
    method : str
        HTTP method, e.g. ``POST``.
    url : str
        Absolute URL, or a path relative to the client's ``base_url``.
    idempotency_key : str
        Sent as ``Idempotency-Key`` on every try
        (:func:`orders.lifecycle.ids.idempotency_key`).
    json : Any, optional
        JSON body.
    order_id : str, optional
        For logs.
    """

    service: str
    method: str
    url: str
    idempotency_key: str
    json: Any = None
    order_id: str | None = None

    def __post_init__(self) -> None:
        if not self.service:
            raise ValueError("service: must not be empty")
        if not self.method or not self.method.isalpha():
            raise ValueError(f"method: not an HTTP method: {self.method!r}")
        if not self.url:
            raise ValueError("url: must not be empty")
        if not self.idempotency_key or len(self.idempotency_key) > MAX_KEY_LENGTH:
            raise ValueError(f"idempotency_key: must be 1 to {MAX_KEY_LENGTH} characters")


@dataclass(frozen=True)
class BackoffPolicy:
    """Exponential backoff with jitter between retries of transient faults.

    The wait before retry ``n`` (1-based) is
    ``min(initial * exp_base ** (n - 1) + uniform(0, jitter), maximum)``; a ``Retry-After``
    header replaces it.

    Attributes
    ----------
    initial : timedelta
        Wait before the first retry (without jitter); positive.
    maximum : timedelta
        Upper bound of any computed wait; at least ``initial``.
    exp_base : float
        Growth factor per retry; at least 1.
    jitter : timedelta
        Upper bound of the random extra wait; not negative. Zero gives exact waits.

    Raises
    ------
    ValueError
        If a value is out of range; the message names the field.
    """

    initial: timedelta = timedelta(milliseconds=500)
    maximum: timedelta = timedelta(seconds=30)
    exp_base: float = 2.0
    jitter: timedelta = timedelta(milliseconds=500)

    def __post_init__(self) -> None:
        if self.initial <= timedelta(0):
            raise ValueError("initial: must be a positive timedelta")
        if self.maximum < self.initial:
            raise ValueError("maximum: must not be shorter than initial")
        if self.exp_base < 1:
            raise ValueError("exp_base: must be at least 1")
        if self.jitter < timedelta(0):
            raise ValueError("jitter: must not be negative")

    def wait(self) -> tenacity.wait.wait_base:
        """Return the equivalent tenacity wait strategy (seconds)."""
        return tenacity.wait_exponential_jitter(
            multiplier=self.initial.total_seconds(),
            exp_base=self.exp_base,
            max=self.maximum.total_seconds(),
            jitter=self.jitter.total_seconds(),
        )


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

    Attributes
    ----------
    kind : OutcomeKind
        SUCCEEDED (2xx), PERMANENT_FAILURE (non-transient 4xx: do not retry, SPEC S7),
        TRANSIENT_EXHAUSTED (attempts or deadline used up), CIRCUIT_OPEN (failed fast).
    attempts : int
        HTTP calls actually started (0 if none was).
    status_code : int or None
        Status of the last answer, if any.
    body : Any
        Decoded JSON (or text) of the last answer, if any.
    reason : str or None
        For failures: the permanent reason, the last transient error, or why the
        circuit refused.
    stop_reason : StopReason or None
        For TRANSIENT_EXHAUSTED: which budget ran out.
    retry_at : datetime or None
        For CIRCUIT_OPEN: when the breaker will let a trial call through.
    """

    kind: OutcomeKind
    attempts: int
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
            "attempts": self.attempts,
            "statusCode": self.status_code,
            "body": self.body,
            "reason": self.reason,
            "stopReason": str(self.stop_reason) if self.stop_reason else None,
            "retryAt": self.retry_at.isoformat() if self.retry_at else None,
        }


class _TransientError(Exception):
    """One attempt met a transient fault; tenacity retries on this type only."""

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


def parse_retry_after(value: str | None, now: datetime) -> timedelta | None:
    """Parse a ``Retry-After`` header (RFC 9110: delay-seconds or an HTTP-date).

    Parameters
    ----------
    value : str or None
        The header value.
    now : datetime
        Current time, to turn an HTTP-date into a delay.

    Returns
    -------
    timedelta or None
        The delay (never negative), or None if absent or unparseable.
    """
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return timedelta(seconds=int(value))
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(when - now, timedelta(0))


def _decode(response: httpx.Response) -> Any:
    # Strict JSON, as for the app's own messages: an answer with NaN, 1e999 or an unpaired
    # surrogate would be kept as text rather than put into a reply no sender can encode
    # (which would fail the request on every redelivery, calling the service again).
    if not response.content:
        return None
    if "json" in response.headers.get("content-type", ""):
        try:
            return wire.loads(response.content)
        except wire.InvalidMessage:
            pass
    return response.text


def _permanent_reason(response: httpx.Response, body: Any) -> str:
    detail = None
    if isinstance(body, dict):
        detail = next((body[k] for k in ("reason", "error", "message", "detail") if k in body),
                      None)
    elif isinstance(body, str):
        detail = body[:200]
    return f"HTTP {response.status_code}: {detail}" if detail else f"HTTP {response.status_code}"


class _WaitRetryAfterOr(tenacity.wait.wait_base):
    """Wait exactly ``Retry-After`` when the failed attempt carried one, else ``fallback``."""

    def __init__(self, fallback: tenacity.wait.wait_base) -> None:
        self._fallback = fallback

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        assert retry_state.outcome is not None
        error = retry_state.outcome.exception()
        if isinstance(error, _TransientError) and error.retry_after is not None:
            return error.retry_after.total_seconds()
        return self._fallback(retry_state)


class _StopAtDeadline(tenacity.stop.stop_base):
    """Stop when the next attempt would start at or after the deadline."""

    def __init__(self, deadline: datetime, clock: Clock) -> None:
        self._deadline = deadline
        self._clock = clock

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        next_start = self._clock.now() + timedelta(seconds=retry_state.upcoming_sleep)
        return next_start >= self._deadline


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
    attempt_timeout: timedelta = timedelta(seconds=10),
) -> RemoteOutcome:
    """Call a remote service with retries inside a deadline and a circuit breaker.

    Parameters
    ----------
    client : httpx.Client
        The HTTP client (its transport decides where calls go; tests use a mock).
    request : RemoteRequest
        What to send; its idempotency key goes in every try (SPEC A2).
    deadline : datetime
        Timezone-aware complete-by time of the step (SPEC A1): no call starts at or after
        it and no call's timeout runs past it (SPEC A3).
    max_attempts : int
        Most HTTP calls to make, first one included (the agent's share of the retry
        budget, SPEC X2); at least 1.
    breaker : CircuitBreaker
        The breaker of ``request.service`` (SPEC A5).
    clock : Clock
        Time source for the deadline and ``Retry-After`` dates.
    sleep : callable
        ``sleep(seconds)`` between attempts; tests pass ``ManualClock.advance``.
    backoff : BackoffPolicy, optional
        Waits between retries; defaults to ``BackoffPolicy()``.
    attempt_timeout : timedelta
        HTTP timeout of one call, shortened to the time left before the deadline.

    Returns
    -------
    RemoteOutcome
        Remote failures are outcomes, not exceptions.

    Raises
    ------
    ValueError
        If ``max_attempts < 1``, ``deadline`` is naive or ``attempt_timeout`` not positive.
    """
    if max_attempts < 1:
        raise ValueError("max_attempts: must be at least 1")
    if deadline.tzinfo is None:
        raise ValueError("deadline: must be timezone-aware (UTC)")
    if attempt_timeout <= timedelta(0):
        raise ValueError("attempt_timeout: must be a positive timedelta")
    backoff = backoff or BackoffPolicy()
    attempts = 0
    last_error: _TransientError | None = None
    log_ids = (request.service, request.order_id, request.idempotency_key)

    def transient(message: str, response: httpx.Response | None = None) -> _TransientError:
        nonlocal last_error
        breaker.record_failure()
        logger.info("%s order %s key %s attempt %d: %s", *log_ids, attempts, message)
        retry_after = None
        if response is not None:
            retry_after = parse_retry_after(response.headers.get("Retry-After"), clock.now())
        last_error = _TransientError(message, response, retry_after)
        return last_error

    def attempt() -> httpx.Response:
        nonlocal attempts
        now = clock.now()
        if now >= deadline:
            raise _NoCall(OutcomeKind.TRANSIENT_EXHAUSTED, "deadline reached before the call")
        if not breaker.allow():
            raise _NoCall(OutcomeKind.CIRCUIT_OPEN, f"circuit of {request.service} is open",
                          breaker.open_until)
        attempts += 1
        timeout_s = min(attempt_timeout, deadline - now).total_seconds()
        try:
            response = client.request(
                request.method, request.url, json=request.json, timeout=timeout_s,
                headers={IDEMPOTENCY_HEADER: request.idempotency_key},
            )
        except httpx.TransportError as exc:
            raise transient(f"{type(exc).__name__}: {exc}") from exc
        except BaseException:
            breaker.release()
            raise
        status = response.status_code
        if status >= 500 or status in TRANSIENT_4XX:
            raise transient(f"HTTP {status}", response)
        breaker.record_success()  # 2xx, or a deliberate refusal: the service is up
        return response

    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception_type(_TransientError),
        stop=tenacity.stop_after_attempt(max_attempts) | _StopAtDeadline(deadline, clock),
        wait=_WaitRetryAfterOr(backoff.wait()),
        sleep=sleep,
        reraise=True,
    )
    try:
        response = retrying(attempt)
    except _TransientError as exc:
        stop = StopReason.MAX_ATTEMPTS if attempts >= max_attempts else StopReason.DEADLINE
        return _failed(OutcomeKind.TRANSIENT_EXHAUSTED, attempts, exc, exc.message, stop)
    except _NoCall as exc:
        reason = f"{exc.message}; last error: {last_error}" if last_error else exc.message
        stop = StopReason.DEADLINE if exc.kind is OutcomeKind.TRANSIENT_EXHAUSTED else None
        return _failed(exc.kind, attempts, last_error, reason, stop, exc.retry_at)
    body = _decode(response)
    if response.is_success:
        return RemoteOutcome(OutcomeKind.SUCCEEDED, attempts, response.status_code, body)
    reason = _permanent_reason(response, body)
    logger.warning("%s order %s key %s: permanent failure %s", *log_ids, reason)
    return RemoteOutcome(
        OutcomeKind.PERMANENT_FAILURE, attempts, response.status_code, body, reason
    )


def _failed(
    kind: OutcomeKind,
    attempts: int,
    error: _TransientError | None,
    reason: str,
    stop: StopReason | None,
    retry_at: datetime | None = None,
) -> RemoteOutcome:
    response = error.response if error is not None else None
    return RemoteOutcome(
        kind,
        attempts,
        status_code=response.status_code if response is not None else None,
        body=_decode(response) if response is not None else None,
        reason=reason,
        stop_reason=stop,
        retry_at=retry_at,
    )
