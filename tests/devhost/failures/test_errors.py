"""The local host's error root carries the same two attributes as the order service's."""

import ast
from datetime import timedelta
from pathlib import Path

import pytest

from azurekit.errors import RetryFlagError
from devhost.failures.errors import LocalHostError
from devhost.taskhub.records import (
    InstanceExistsError,
    InstanceGoneError,
    InstanceNotFoundError,
    TaskHubError,
)
from sqlitebus import (
    MessageLockLostError,
    MessageSizeExceededError,
    MessagingEntityNotFoundError,
    QueuePropertiesError,
    ServiceBusError,
)

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("error", [
    ServiceBusError("x"),
    MessagingEntityNotFoundError("orders", "declare it in infra/queues.json"),
    MessageLockLostError("token-1", "expired"),
    QueuePropertiesError("queues.json: x"),
    MessageSizeExceededError("too big"),
    TaskHubError("x"),
    InstanceNotFoundError("x"),
    InstanceGoneError("x"),
    InstanceExistsError("x"),
], ids=lambda e: type(e).__name__)
def test_local_host_errors_share_the_root_and_are_permanent(error):
    # The task hub's under the local host's root; the Service Bus engine's (a leaf package
    # the app's embedded adapter uses too) under the root both derive from.
    assert isinstance(error, LocalHostError if isinstance(error, TaskHubError)
                      else RetryFlagError)
    assert error.retryable is False
    assert error.retry_after is None


def test_a_local_host_error_may_be_flagged_retryable_with_a_wait():
    error = ServiceBusError("busy", retryable=True, retry_after=timedelta(seconds=1))
    assert (error.retryable, error.retry_after) == (True, timedelta(seconds=1))
    with pytest.raises(ValueError, match="only a retryable error"):
        ServiceBusError("gone", retry_after=timedelta(seconds=1))


def test_orders_never_imports_the_local_host_at_module_level():
    # devhost is not deployed: orders/ may import it only lazily, inside a function.
    offenders = []
    for path in sorted((ROOT / "orders").rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names
                          if n == "devhost" or n.startswith("devhost.")]
    assert offenders == []
