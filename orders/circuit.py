"""Circuit breaker per remote service, on an injected clock (SPEC A5).

Why not a library: pybreaker (``datetime.now`` in its open state), circuitbreaker
(``time.monotonic``) and purgatory (``time.time``) all read the wall clock themselves and
take no clock argument, so a test could only see the cool-down pass by sleeping through it.
This breaker asks a :class:`clocks.Clock` instead, and is small enough to read whole.

States (Nygard, *Release It!*; Azure Architecture Center, Circuit Breaker pattern):

- CLOSED: calls go through; ``failure_threshold`` consecutive transient failures open it.
- OPEN: calls fail fast without reaching the service, for ``cool_down``.
- HALF_OPEN: after the cool-down one trial call is let through; its success closes the
  circuit, its failure opens it again for another cool-down. Other calls fail fast while
  the trial is in flight.

A breaker lives in one process: each Functions host instance (or local host worker) has
its own, which is what the pattern needs (stop piling calls onto a dependency that is down
from here). State changes are logged at WARNING so an open circuit can raise an alert
(SPEC X8).
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

    Parameters
    ----------
    name : str
        The service it guards (used in logs).
    clock : Clock
        Time source for the cool-down.
    failure_threshold : int
        Consecutive transient failures that open the circuit; at least 1.
    cool_down : timedelta
        How long the circuit stays open before a trial call; positive.

    Raises
    ------
    ValueError
        If ``name`` is empty, ``failure_threshold < 1`` or ``cool_down`` is not positive.

    Notes
    -----
    Thread-safe. The caller asks :meth:`allow` before each call and then reports the
    outcome with :meth:`record_success` or :meth:`record_failure`, or :meth:`release` if
    the call produced no verdict about the service (e.g. a bug raised before sending).
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
        """Ask whether a call may be made now.

        Returns
        -------
        bool
            True when closed, or for the single trial call once the cool-down has
            passed; False (fail fast) while open or while a trial is in flight.
        """
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
        """Report a call that reached a healthy service; closes a half-open circuit.

        A late success while OPEN (a call allowed before it opened) changes nothing.
        """
        with self._lock:
            if self._state is CircuitState.OPEN:
                return
            self._failures = 0
            self._trial_in_flight = False
            if self._state is CircuitState.HALF_OPEN:
                self._opened_at = None
                self._transition(CircuitState.CLOSED)

    def record_failure(self) -> None:
        """Report a transient failure (timeout, connection error, 5xx, 408, 429).

        Opens a closed circuit at the threshold and re-opens a half-open one at once.
        """
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
    """One :class:`CircuitBreaker` per service name, created on first use; thread-safe.

    Parameters
    ----------
    clock : Clock
        Shared by every breaker of the registry.
    failure_threshold : int
        See :class:`CircuitBreaker`.
    cool_down : timedelta
        See :class:`CircuitBreaker`.
    """

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
        """Return the breaker of ``service``, creating it if needed.

        Raises
        ------
        ValueError
            If ``service`` is empty.
        """
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
