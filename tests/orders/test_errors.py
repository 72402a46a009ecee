"""The order service's error root: one ``retryable`` flag and an optional ``retry_after``."""

from datetime import timedelta

import pytest

from orders.budget import BudgetError
from orders.errors import OrderServiceError
from orders.lifecycle.fencing import FencedError
from orders.lifecycle.transitions import IllegalTransitionError
from orders.messaging import (
    MessageRejectedError,
    MessagingError,
    MessagingUnavailableError,
    QueueNotFoundError,
)
from orders.models.wire import InvalidMessage
from orders.queues import QueueFileError
from orders.settings import SettingsError
from orders.stores import (
    ConflictError,
    NotFoundError,
    PreconditionFailedError,
    StoreError,
    TransientStoreError,
)

RETRYABLE = (TransientStoreError("x"), MessagingUnavailableError("x"))
"""The errors worth retrying as they are: a throttled store, a broker out of reach."""
PERMANENT = (
    StoreError("x"), ConflictError("x"), PreconditionFailedError("x"), NotFoundError("x"),
    MessagingError("x"), QueueNotFoundError("orders", "x"), MessageRejectedError("x"),
    FencedError("x"), IllegalTransitionError("x"), SettingsError("x"), BudgetError("x"),
    QueueFileError("x"), InvalidMessage("InvalidJson", "body: not JSON"),
)
"""Every other error of the service: retrying it unchanged gives the same answer."""


@pytest.mark.parametrize(("error", "retryable"),
                         [(e, True) for e in RETRYABLE] + [(e, False) for e in PERMANENT],
                         ids=lambda v: type(v).__name__ if isinstance(v, Exception) else str(v))
def test_every_error_has_the_root_and_says_whether_to_retry(error, retryable):
    assert isinstance(error, OrderServiceError)
    assert error.retryable is retryable
    assert error.retry_after is None


@pytest.mark.parametrize("error", [
    SettingsError("x"), BudgetError("x"), QueueFileError("x"), IllegalTransitionError("x"),
    InvalidMessage("SchemaViolation", "orderId: required")])
def test_validation_errors_stay_value_errors(error):
    assert isinstance(error, ValueError)


def test_retry_after_is_kept_on_a_retryable_error():
    error = TransientStoreError("throttled", retry_after=timedelta(milliseconds=1500))
    assert error.retryable is True
    assert error.retry_after == timedelta(seconds=1.5)
    assert str(error) == "throttled"


def test_one_error_may_override_its_class_flag():
    error = MessagingError("engine busy", retryable=True, retry_after=timedelta(seconds=2))
    assert (error.retryable, error.retry_after) == (True, timedelta(seconds=2))
    assert MessagingError("x").retryable is False
    assert TransientStoreError("x", retryable=False).retryable is False


def test_retry_after_on_a_permanent_error_is_refused():
    with pytest.raises(ValueError, match="retry_after: only a retryable error"):
        ConflictError("x", retry_after=timedelta(seconds=1))


def test_negative_retry_after_is_refused():
    with pytest.raises(ValueError, match="retry_after: must not be negative"):
        TransientStoreError("x", retry_after=timedelta(seconds=-1))
