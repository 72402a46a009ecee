import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clocks import ManualClock
from devhost.run.host import LocalHost

SAMPLE_APP = Path(__file__).parent / "sample_app"


@pytest.fixture
def clock():
    return ManualClock(datetime(2030, 1, 1, tzinfo=UTC))


@pytest.fixture
def host(tmp_path, clock):
    h = LocalHost(SAMPLE_APP, tmp_path / "data", clock=clock, serve_http=False)
    yield h
    h.stop()


def start(host, name, value=None, instance_id=None):
    instance_id = instance_id or f"{name}-1"
    host.taskhub.create_instance(name, instance_id, json.dumps(value))
    return instance_id


def output(host, instance_id):
    inst = host.taskhub.get_instance(instance_id)
    return inst.runtime_status, json.loads(inst.output) if inst.output else None
