"""Circuit breaker per remote service, on an injected clock (A5), one per process.

Not a library: pybreaker, circuitbreaker and purgatory read the wall clock themselves, so a
test could only see the cool-down pass by sleeping. State changes log at WARNING (X8).
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta
from enum import StrEnum

from clocks import Clock

logger = logging.getLogger("orders.agents.circuit")

DEFAULT_FAILURE_THRESHOLD = 5
DEFAULT_COOL_DOWN = timedelta(seconds=30)


class CircuitState(StrEnum):
    """State of a circuit breaker."""

    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class CircuitBreaker:
    """Counts consecutive transient failures of one service and fails fast when it is down.

    Closed until ``failure_threshold`` failures, then open for ``cool_down``, then half-open:
    one trial call closes or re-opens it. Thread-safe; after :meth:`allow`, report
    :meth:`record_success`, :meth:`record_failure`, or :meth:`release` for no verdict.
    ValueError for an empty ``name``, a threshold < 1 or a non-positive ``cool_down``.
    """

    def __init__(
        self,
        name: str,
        *,
        clock: Clock,
        failure_threshold: int = DEFAULT_FAILURE_THRESHOLD,
        cool_down: timedelta = DEFAULT_COOL_DOWN,
    ) -> None:
        if not name:
            raise ValueError("name: must not be empty")
        if failure_threshold < 1:
            raise ValueError("failure_threshold: must be at least 1")
        if cool_down <= timedelta(0):
            raise ValueError("cool_down: must be a positive timedelta")
        self.name = name
        self.failure_threshold = failure_threshold
        self.cool_down = cool_down
        self._clock = clock
        self._lock = threading.Lock()
        self._state = CircuitState.CLOSED
        self._failures = 0
        self._opened_at: datetime | None = None
        self._trial_in_flight = False

    @property
    def state(self) -> CircuitState:
        """Current state; an open circuit whose cool-down has passed reports HALF_OPEN."""
        with self._lock:
            if self._state is CircuitState.OPEN and self._cooled_down():
                return CircuitState.HALF_OPEN
            return self._state

    @property
    def consecutive_failures(self) -> int:
        """Transient failures since the last success."""
        with self._lock:
            return self._failures

    @property
    def open_until(self) -> datetime | None:
        """End of the current cool-down, or None if the circuit is not open."""
        with self._lock:
            if self._state is CircuitState.OPEN and self._opened_at is not None:
                return self._opened_at + self.cool_down
            return None

    def allow(self) -> bool:
        """Ask whether a call may be made now: closed, or the one trial after the cool-down."""
        with self._lock:
            if self._state is CircuitState.CLOSED:
                return True
            if self._state is CircuitState.OPEN:
                if not self._cooled_down():
                    return False
                self._transition(CircuitState.HALF_OPEN)
            if self._trial_in_flight:
                return False
            self._trial_in_flight = True
            return True

    def record_success(self) -> None:
        """Report a call that reached a healthy service; a late success while OPEN is ignored."""
        with self._lock:
            if self._state is CircuitState.OPEN:
                return
            self._failures = 0
            self._trial_in_flight = False
            if self._state is CircuitState.HALF_OPEN:
                self._opened_at = None
                self._transition(CircuitState.CLOSED)

    def record_failure(self) -> None:
        """Report a transient failure (timeout, connection error, 5xx, 408, 429)."""
        with self._lock:
            self._failures += 1
            if self._state is CircuitState.HALF_OPEN:
                self._trial_in_flight = False
                self._open()
            elif self._state is CircuitState.CLOSED and self._failures >= self.failure_threshold:
                self._open()

    def release(self) -> None:
        """Forget an allowed call that produced no verdict, freeing the trial slot."""
        with self._lock:
            self._trial_in_flight = False

    def _cooled_down(self) -> bool:
        assert self._opened_at is not None
        return self._clock.now() >= self._opened_at + self.cool_down

    def _open(self) -> None:
        self._opened_at = self._clock.now()
        self._transition(CircuitState.OPEN)

    def _transition(self, new: CircuitState) -> None:
        logger.warning(
            "circuit %s: %s -> %s after %d consecutive failures",
            self.name, self._state, new, self._failures,
        )
        self._state = new


class BreakerRegistry:
    """One :class:`CircuitBreaker` per service name, created on first use; thread-safe."""

    def __init__(
        self,
        *,
        clock: Clock,
        failure_threshold: int = DEFAULT_FAILURE_THRESHOLD,
        cool_down: timedelta = DEFAULT_COOL_DOWN,
    ) -> None:
        self._clock = clock
        self._failure_threshold = failure_threshold
        self._cool_down = cool_down
        self._lock = threading.Lock()
        self._breakers: dict[str, CircuitBreaker] = {}

    def get(self, service: str) -> CircuitBreaker:
        """Return the breaker of ``service``, created if needed (ValueError if empty)."""
        with self._lock:
            breaker = self._breakers.get(service)
            if breaker is None:
                breaker = CircuitBreaker(
                    service, clock=self._clock, failure_threshold=self._failure_threshold,
                    cool_down=self._cool_down,
                )
                self._breakers[service] = breaker
            return breaker

    def states(self) -> dict[str, CircuitState]:
        """Return the state of every breaker created so far, by service name."""
        with self._lock:
            breakers = list(self._breakers.values())
        return {b.name: b.state for b in breakers}
