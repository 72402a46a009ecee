"""Entity state survives a SIGKILL of the host mid-run: no operation lost, none applied twice."""

import json

import pytest

from clocks import SystemClock
from devhost.taskhub.store import TaskHub
from tests.devhost.test_crash_recovery import kill_mid_run, restart_until_completed
from tests.devhost.test_entities import ENTITY_APP

pytestmark = pytest.mark.slow

N = 60


def counter(hub):
    exists, text = hub.read_entity("counter", "crash")
    return json.loads(text) if exists else 0


def test_sigkill_mid_run_then_restart_applies_every_add_exactly_once(tmp_path):
    hub = TaskHub(tmp_path / "taskhub.sqlite", SystemClock())
    for i in range(N):
        hub.create_instance("slow_add", f"crash-{i:02d}", json.dumps("crash"))
    kill_mid_run(ENTITY_APP, tmp_path, lambda: counter(hub), N)
    restart_until_completed(tmp_path, hub, N, ENTITY_APP)
    assert counter(hub) == N
    outputs = sorted(json.loads(hub.get_instance(f"crash-{i:02d}").output) for i in range(N))
    assert outputs == list(range(1, N + 1)), "every add answered once, with its own value"
