"""Entity state survives a SIGKILL of the host mid-run: no operation lost, none applied twice."""

import json
import signal

import pytest

from clocks import SystemClock
from devhost.taskhub.store import TaskHub
from tests.devhost.test_crash_recovery import spawn_app, wait_for
from tests.devhost.test_entities import ENTITY_APP

pytestmark = pytest.mark.slow

N = 60


def counter(hub):
    exists, text = hub.read_entity("counter", "crash")
    return json.loads(text) if exists else 0


def completed(hub):
    return hub.count_by_status().get("Completed", 0)


def test_sigkill_mid_run_then_restart_applies_every_add_exactly_once(tmp_path):
    hub = TaskHub(tmp_path / "taskhub.sqlite", SystemClock())
    for i in range(N):
        hub.create_instance("slow_add", f"crash-{i:02d}", json.dumps("crash"))
    first = spawn_app(ENTITY_APP, tmp_path)
    try:
        assert wait_for(lambda: counter(hub) >= 10), "host made no progress"
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    at_kill = counter(hub)
    assert at_kill < N, "the kill must happen mid-run"
    second = spawn_app(ENTITY_APP, tmp_path)
    try:
        assert wait_for(lambda: completed(hub) == N), hub.count_by_status()
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=30)
    assert counter(hub) == N
    outputs = sorted(json.loads(hub.get_instance(f"crash-{i:02d}").output) for i in range(N))
    assert outputs == list(range(1, N + 1)), "every add answered once, with its own value"
