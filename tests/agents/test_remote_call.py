from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from agents.backoff import BackoffPolicy, parse_retry_after
from agents.remote_call import (
    OutcomeKind,
    RemoteRequest,
    StopReason,
    call_remote,
)
from clocks import ManualClock
from orders.circuit import CircuitBreaker, CircuitState
from orders.lifecycle.ids import idempotency_key

from .fake_remote import FakeRemote

BACKOFF = BackoffPolicy(initial=timedelta(seconds=1), maximum=timedelta(seconds=8),
                        exp_base=2, jitter=timedelta(0))
REQUEST = RemoteRequest(
    service="payment", method="POST", url="/payments",
    idempotency_key=idempotency_key("order-1", "charge"),
    json={"orderId": "order-1", "amount": "10.00", "currency": "EUR"}, order_key="order-1",
)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def sleeps(clock) -> list[float]:
    return []


@pytest.fixture
def breaker(clock) -> CircuitBreaker:
    return CircuitBreaker("payment", clock=clock, failure_threshold=50,
                          cool_down=timedelta(seconds=30))


def run(remote: FakeRemote, clock, sleeps, breaker, *, deadline=None, max_attempts=5,
        try_timeout=timedelta(seconds=10), request=REQUEST):
    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock.advance(timedelta(seconds=seconds))

    with remote.client() as client:
        return call_remote(
            client, request, deadline=deadline or clock.now() + timedelta(minutes=5),
            max_attempts=max_attempts, breaker=breaker, clock=clock, sleep=sleep,
            backoff=BACKOFF, try_timeout=try_timeout,
        )


def test_retries_503_with_backoff_then_succeeds(clock, sleeps, breaker):
    remote = FakeRemote(clock, [503, 503, (201, {}, {"paymentId": "pay_1"})])
    outcome = run(remote, clock, sleeps, breaker)
    assert outcome.kind is OutcomeKind.SUCCEEDED
    assert (outcome.tries, outcome.status_code, outcome.body) == (3, 201, {"paymentId": "pay_1"})
    assert sleeps == [1.0, 2.0]
    assert len(remote.seen) == 3


def test_every_try_sends_the_same_idempotency_key_and_body(clock, sleeps, breaker):
    remote = FakeRemote(clock, [503, 500, 502, 429, 201])
    outcome = run(remote, clock, sleeps, breaker)
    assert outcome.tries == 5
    assert {s.idempotency_key for s in remote.seen} == {"order-1:charge"}
    assert all(s.body == REQUEST.json for s in remote.seen)


@pytest.mark.parametrize("retry_after", ["7", "format-date"])
def test_429_retry_after_is_honoured_exactly(clock, sleeps, breaker, retry_after):
    if retry_after == "format-date":
        retry_after = format_datetime(clock.now() + timedelta(seconds=7), usegmt=True)
    remote = FakeRemote(clock, [(429, {"Retry-After": retry_after}), 201])
    outcome = run(remote, clock, sleeps, breaker)
    assert outcome.kind is OutcomeKind.SUCCEEDED
    assert sleeps == [7.0]
    assert remote.seen[1].at - remote.seen[0].at == timedelta(seconds=7)


def test_408_and_transport_errors_are_transient(clock, sleeps, breaker):
    def refuse(request):
        raise httpx.ConnectError("connection refused", request=request)

    def time_out(request):
        raise httpx.ReadTimeout("timed out", request=request)

    remote = FakeRemote(clock, [408, refuse, time_out, 200])
    outcome = run(remote, clock, sleeps, breaker)
    assert (outcome.kind, outcome.tries) == (OutcomeKind.SUCCEEDED, 4)


@pytest.mark.parametrize("status", [400, 402, 404, 409, 422])
def test_non_transient_4xx_is_permanent_after_exactly_one_call(clock, sleeps, breaker, status):
    remote = FakeRemote(clock, [(status, {}, {"error": "card_declined"}), 201])
    outcome = run(remote, clock, sleeps, breaker)
    assert outcome.kind is OutcomeKind.PERMANENT_FAILURE
    assert (outcome.tries, outcome.status_code) == (1, status)
    assert outcome.reason == f"HTTP {status}: card_declined"
    assert outcome.body == {"error": "card_declined"}
    assert len(remote.seen) == 1
    assert sleeps == []


def test_max_attempts_is_respected_exactly(clock, sleeps, breaker):
    remote = FakeRemote(clock, [503])
    outcome = run(remote, clock, sleeps, breaker, max_attempts=4)
    assert outcome.kind is OutcomeKind.TRANSIENT_EXHAUSTED
    assert outcome.stop_reason is StopReason.MAX_ATTEMPTS
    assert (outcome.tries, len(remote.seen), outcome.status_code) == (4, 4, 503)
    assert outcome.reason == "HTTP 503"
    assert sleeps == [1.0, 2.0, 4.0]


def test_no_call_starts_at_or_after_the_deadline(clock, sleeps, breaker):
    deadline = clock.now() + timedelta(seconds=10)
    remote = FakeRemote(clock, [503], latency=timedelta(seconds=1))
    outcome = run(remote, clock, sleeps, breaker, deadline=deadline, max_attempts=100)
    # t=0 call (1 s) wait 1 -> t=2 call, wait 2 -> t=5 call, wait 4 would start at 10: stop.
    assert [s.at - (deadline - timedelta(seconds=10)) for s in remote.seen] == [
        timedelta(seconds=0), timedelta(seconds=2), timedelta(seconds=5),
    ]
    assert all(s.at < deadline for s in remote.seen)
    assert outcome.kind is OutcomeKind.TRANSIENT_EXHAUSTED
    assert outcome.stop_reason is StopReason.DEADLINE
    assert outcome.tries == 3
    assert clock.now() < deadline  # did not sleep into the deadline


def test_retry_after_beyond_the_deadline_stops_without_waiting(clock, sleeps, breaker):
    deadline = clock.now() + timedelta(seconds=5)
    remote = FakeRemote(clock, [(503, {"Retry-After": "60"}), 201])
    outcome = run(remote, clock, sleeps, breaker, deadline=deadline)
    assert (outcome.kind, outcome.stop_reason) == (OutcomeKind.TRANSIENT_EXHAUSTED,
                                                   StopReason.DEADLINE)
    assert (outcome.tries, sleeps) == (1, [])


def test_deadline_already_passed_makes_no_call(clock, sleeps, breaker):
    remote = FakeRemote(clock, [201])
    outcome = run(remote, clock, sleeps, breaker, deadline=clock.now())
    assert (outcome.kind, outcome.stop_reason) == (OutcomeKind.TRANSIENT_EXHAUSTED,
                                                   StopReason.DEADLINE)
    assert outcome.tries == 0
    assert remote.seen == []


def test_http_timeout_never_extends_past_the_deadline(clock, sleeps, breaker):
    deadline = clock.now() + timedelta(seconds=3)
    remote = FakeRemote(clock, [503, 201])
    outcome = run(remote, clock, sleeps, breaker, deadline=deadline)
    assert outcome.succeeded
    assert [s.timeout["read"] for s in remote.seen] == [3.0, 2.0]
    assert set(remote.seen[0].timeout.values()) == {3.0}
    roomy = FakeRemote(clock, [201])
    run(roomy, clock, sleeps, breaker, try_timeout=timedelta(seconds=4))
    assert roomy.seen[0].timeout["read"] == 4.0


def test_breaker_opens_fails_fast_half_opens_and_closes(clock, sleeps):
    breaker = CircuitBreaker("payment", clock=clock, failure_threshold=3,
                             cool_down=timedelta(minutes=1))
    down = FakeRemote(clock, [503])
    first = run(down, clock, sleeps, breaker, max_attempts=10)
    assert first.kind is OutcomeKind.CIRCUIT_OPEN
    assert (first.tries, len(down.seen)) == (3, 3)
    assert first.reason == "circuit of payment is open; last error: HTTP 503"
    assert first.retry_at == breaker.open_until
    assert breaker.state is CircuitState.OPEN

    second = run(down, clock, sleeps, breaker)
    assert (second.kind, second.tries, len(down.seen)) == (OutcomeKind.CIRCUIT_OPEN, 0, 3)

    clock.set(breaker.open_until)
    assert breaker.state is CircuitState.HALF_OPEN
    up = FakeRemote(clock, [201])
    third = run(up, clock, sleeps, breaker)
    assert (third.kind, third.tries) == (OutcomeKind.SUCCEEDED, 1)
    assert breaker.state is CircuitState.CLOSED


def test_permanent_errors_do_not_count_towards_opening_the_circuit(clock, sleeps):
    breaker = CircuitBreaker("payment", clock=clock, failure_threshold=2,
                             cool_down=timedelta(minutes=1))
    for _ in range(5):
        run(FakeRemote(clock, [422]), clock, sleeps, breaker)
    assert breaker.state is CircuitState.CLOSED


def test_unexpected_error_frees_the_half_open_trial(clock, sleeps):
    breaker = CircuitBreaker("payment", clock=clock, failure_threshold=1,
                             cool_down=timedelta(minutes=1))
    breaker.allow()
    breaker.record_failure()
    clock.advance(timedelta(minutes=1))

    def bug(request):
        raise RuntimeError("bug in transport")

    with pytest.raises(RuntimeError):
        run(FakeRemote(clock, [bug]), clock, sleeps, breaker)
    assert breaker.allow() is True


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_attempts": 0}, "max_attempts:"),
        ({"deadline": datetime(2030, 1, 1)}, "deadline:"),
        ({"try_timeout": timedelta(0)}, "try_timeout:"),
    ],
)
def test_invalid_arguments_are_rejected(clock, sleeps, breaker, kwargs, message):
    with pytest.raises(ValueError, match=message):
        run(FakeRemote(clock, [201]), clock, sleeps, breaker, **kwargs)


def test_request_and_policy_validation():
    with pytest.raises(ValueError, match="idempotency_key:"):
        RemoteRequest(service="payment", method="POST", url="/p", idempotency_key="")
    with pytest.raises(ValueError, match="method:"):
        RemoteRequest(service="payment", method="PO ST", url="/p", idempotency_key="k")
    with pytest.raises(ValueError, match="maximum:"):
        BackoffPolicy(initial=timedelta(seconds=2), maximum=timedelta(seconds=1))
    with pytest.raises(ValueError, match="operation:"):
        idempotency_key("order-1", "")


def test_backoff_grows_to_its_maximum_and_jitter_stays_in_bounds(clock, sleeps, breaker):
    remote = FakeRemote(clock, [503])
    run(remote, clock, sleeps, breaker, max_attempts=7)
    assert sleeps == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    jittery = BackoffPolicy(initial=timedelta(seconds=1), maximum=timedelta(seconds=60),
                            jitter=timedelta(seconds=0.5))
    wait = jittery.wait()
    for _ in range(50):
        state = type("S", (), {"attempt_number": 2})()
        assert 2.0 <= wait(state) <= 2.5


def test_parse_retry_after():
    now = datetime(2030, 1, 1, tzinfo=UTC)
    assert parse_retry_after("120", now) == timedelta(seconds=120)
    assert parse_retry_after(format_datetime(now - timedelta(seconds=5), usegmt=True),
                             now) == timedelta(0)
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after(None, now) is None


def test_outcome_to_dict_is_json_ready(clock, sleeps, breaker):
    outcome = run(FakeRemote(clock, [503]), clock, sleeps, breaker, max_attempts=2)
    assert outcome.to_dict() == {
        "kind": "transient_exhausted", "tries": 2, "statusCode": 503,
        "body": {"status": 503}, "reason": "HTTP 503", "stopReason": "max_attempts",
        "retryAt": None,
    }


@pytest.mark.parametrize("body, reason", [
    ({"error": "card_declined"}, "HTTP 402: card_declined"),
    ({"error": "declined", "message": "card of customer CUST-77 declined"}, "HTTP 402: declined"),
    ({"reason": "insufficient_funds", "error": "x"}, "HTTP 402: insufficient_funds"),
    ({"code": "card_expired"}, "HTTP 402: card_expired"),
    ({"error": "customer CUST-77 has no credit"}, "HTTP 402 (the service's error text is "
     "withheld: no error code of payment's safeErrors)"),
    ({"detail": "4111 1111 1111 1111"}, "HTTP 402 (the service's error text is withheld: no "
     "error code of payment's safeErrors)"),
    ({}, "HTTP 402"),
])
def test_a_permanent_reason_keeps_only_an_error_code_the_catalogue_declares_safe(
        clock, sleeps, breaker, body, reason):
    """failureReason, statuses and alerts are built from it (X10)."""
    remote = FakeRemote(clock, [(402, {}, body)])
    outcome = run(remote, clock, sleeps, breaker)
    assert outcome.reason == reason
    assert outcome.body == body  # the answer itself is kept for the history
