"""The task hub is composed of parts over one file: one connection per thread, one clock."""

import threading
from datetime import timedelta

from clocks import ManualClock
from devhost.taskhub.events import EventType
from devhost.taskhub.store import TaskHub


def test_every_part_uses_the_hubs_one_connection_of_this_thread(tmp_path):
    hub = TaskHub(tmp_path / "taskhub.sqlite", ManualClock())
    parts = (hub, hub.instances, hub.activities, hub.entities, hub.timers, hub.failures)
    assert {id(part._conn()) for part in parts} == {id(hub._conn())}
    assert {id(part.clock) for part in parts} == {id(hub.clock)}
    other = []
    thread = threading.Thread(target=lambda: other.append(hub.activities._conn()))
    thread.start()
    thread.join()
    assert other[0] is not hub._conn()  # SQLite connections are per thread


def test_what_one_part_writes_the_others_read(tmp_path):
    hub = TaskHub(tmp_path / "taskhub.sqlite", ManualClock(), default_version="2.0")
    hub.instances.create_instance("chain", "order-1", '"x"')
    assert hub.get_instance("order-1").version == "2.0"
    claimed = hub.claim_orchestrations("worker-1", timedelta(seconds=30))
    assert [item.instance.instance_id for item in claimed] == ["order-1"]
    assert claimed[0].messages[0].event["EventType"] == EventType.ExecutionStarted
