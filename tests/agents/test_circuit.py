import threading
from datetime import timedelta

import pytest

from clocks import ManualClock
from orders.circuit import (
    BreakerRegistry,
    CircuitBreaker,
    CircuitState,
)

COOL_DOWN = timedelta(seconds=30)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def breaker(clock) -> CircuitBreaker:
    return CircuitBreaker("payment", clock=clock, failure_threshold=3, cool_down=COOL_DOWN)


def fail(breaker: CircuitBreaker, times: int) -> None:
    for _ in range(times):
        assert breaker.allow()
        breaker.record_failure()


def start_trial(breaker: CircuitBreaker, clock: ManualClock) -> None:
    """Open the breaker, wait out the cool-down and take the half-open trial slot."""
    fail(breaker, 3)
    clock.advance(COOL_DOWN)
    assert breaker.allow()


def test_opens_after_threshold_consecutive_failures_and_fails_fast(breaker, clock):
    fail(breaker, 2)
    assert breaker.state is CircuitState.CLOSED
    fail(breaker, 1)
    assert breaker.state is CircuitState.OPEN
    assert breaker.open_until == clock.now() + COOL_DOWN
    assert breaker.allow() is False


def test_success_resets_the_consecutive_count(breaker):
    fail(breaker, 2)
    assert breaker.allow()
    breaker.record_success()
    assert breaker.consecutive_failures == 0
    fail(breaker, 2)
    assert breaker.state is CircuitState.CLOSED


def test_half_opens_after_cool_down_and_lets_one_trial_through(breaker, clock):
    fail(breaker, 3)
    clock.advance(COOL_DOWN - timedelta(microseconds=1))
    assert breaker.allow() is False
    clock.advance(timedelta(microseconds=1))
    assert breaker.state is CircuitState.HALF_OPEN
    assert breaker.allow() is True
    assert breaker.allow() is False  # trial in flight
    breaker.record_success()
    assert breaker.state is CircuitState.CLOSED
    assert breaker.open_until is None
    assert breaker.allow() is True


def test_failed_trial_reopens_for_a_new_cool_down(breaker, clock):
    start_trial(breaker, clock)
    breaker.record_failure()
    assert breaker.state is CircuitState.OPEN
    assert breaker.open_until == clock.now() + COOL_DOWN
    clock.advance(COOL_DOWN / 2)
    assert breaker.allow() is False


def test_release_frees_the_trial_slot(breaker, clock):
    start_trial(breaker, clock)
    breaker.release()
    assert breaker.state is CircuitState.HALF_OPEN
    assert breaker.allow()


def test_late_success_while_open_does_not_close(breaker):
    fail(breaker, 3)
    breaker.record_success()
    assert breaker.state is CircuitState.OPEN


def test_exactly_one_trial_among_concurrent_callers(breaker, clock):
    fail(breaker, 3)
    clock.advance(COOL_DOWN)
    barrier = threading.Barrier(16)
    allowed: list[bool] = []

    def ask() -> None:
        barrier.wait()
        allowed.append(breaker.allow())

    threads = [threading.Thread(target=ask) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert allowed.count(True) == 1


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"failure_threshold": 0}, "failure_threshold"),
        ({"cool_down": timedelta(0)}, "cool_down"),
        ({"name": ""}, "name"),
    ],
)
def test_invalid_settings_are_rejected_naming_the_field(clock, kwargs, field):
    args = {"name": "payment", "clock": clock, **kwargs}
    with pytest.raises(ValueError, match=f"^{field}:"):
        CircuitBreaker(**args)


def test_registry_has_one_breaker_per_service(clock):
    registry = BreakerRegistry(clock=clock, failure_threshold=1, cool_down=COOL_DOWN)
    assert registry.get("payment") is registry.get("payment")
    assert registry.get("payment") is not registry.get("shipping")
    fail(registry.get("payment"), 1)
    assert registry.states() == {"payment": CircuitState.OPEN, "shipping": CircuitState.CLOSED}


