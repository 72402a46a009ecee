"""Fixtures of the wire-level tests: one Service Bus stand-in per session, a fresh queue per
test. Skipped, with the reason, only where node is not installed (node 20 is on the
development machines and in CI); a missing npm package or a stand-in that does not start
fails the tests instead."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator

import pytest

from tests.wire.stand_in import ServiceBusStandIn, StandInUnavailable, node_missing_reason


@pytest.fixture(scope="session")
def stand_in() -> Iterator[ServiceBusStandIn]:
    if shutil.which("node") is None:
        pytest.skip(node_missing_reason() or "node is not installed")
    try:
        server = ServiceBusStandIn().start()
    except StandInUnavailable as exc:
        pytest.fail(f"the wire-level Service Bus stand-in did not start: {exc}", pytrace=False)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def queue(stand_in: ServiceBusStandIn) -> str:
    """A new, empty queue (duplicate detection on, 30 s locks, 10 deliveries)."""
    return stand_in.create_queue(f"q-{uuid.uuid4().hex[:12]}")
