"""HTTP, Service Bus and timer triggers of an app, with the SDK's real durable client."""

import json
import sys
from datetime import timedelta

import azure.durable_functions as df
import httpx
import pytest

from devhost.app import invoke
from devhost.run.runtime import build_host
from devhost.triggers.timer import TimerTriggerPoller
from sqlitebus import MAX_DELIVERY_COUNT_EXCEEDED
from tests.devhost.conftest import SAMPLE_APP


@pytest.fixture
def full_host(tmp_path, clock):
    host = build_host(SAMPLE_APP, tmp_path / "data", clock=clock)
    host.start_http()
    yield host
    host.stop()


def test_http_trigger_starts_orchestration_through_sdk_client(full_host):
    r = httpx.post(f"{full_host.base_url}/api/orchestrators/chain", json="Bo")
    assert r.status_code == 202
    payload = r.json()
    full_host.run_until_idle()
    client = df.DurableOrchestrationClient(full_host.client_binding())
    status = invoke.run(client.get_status(payload["id"]))
    assert status.runtime_status == df.OrchestrationRuntimeStatus.Completed
    assert status.output == ["Hello Bo-Tokyo!", "Hello Bo-Seattle!", "Hello Bo-London!"]
    polled = httpx.get(payload["statusQueryGetUri"]).json()
    assert polled["runtimeStatus"] == "Completed"


def test_raise_event_on_completed_instance_is_410_and_changes_nothing(full_host):
    r = httpx.post(f"{full_host.base_url}/api/orchestrators/chain", json="Cy")
    iid = r.json()["id"]
    full_host.run_until_idle()
    before = full_host.taskhub.get_history(iid)
    client = df.DurableOrchestrationClient(full_host.client_binding())
    with pytest.raises(Exception, match="gone|410|completed"):
        invoke.run(client.raise_event(iid, "Approval", {"ok": True}))
    full_host.run_until_idle()
    assert full_host.taskhub.get_history(iid) == before


def test_queue_trigger_completes_on_success_and_dead_letters_after_max_deliveries(full_host):
    engine = full_host.engine
    engine.send("orders", json.dumps({"id": "from-queue", "name": "Q"}), message_id="m1")
    engine.send("orders", json.dumps({"fail": True}), message_id="m2")
    full_host.run_until_idle()
    assert full_host.taskhub.get_instance("from-queue").runtime_status == "Completed"
    dead = engine.peek("orders", 10, dead_letter=True)
    assert [m.message_id for m in dead] == ["m2"]
    assert dead[0].dead_letter_reason == MAX_DELIVERY_COUNT_EXCEEDED
    max_count = engine.catalog.resolve("orders").max_delivery_count
    assert dead[0].delivery_count == max_count
    assert engine.counts("orders").active == 0


def test_timer_trigger_fires_each_occurrence_once_across_two_hosts(full_host, clock):
    appmod = sys.modules["function_app"]
    other = TimerTriggerPoller(full_host.index.timers, full_host.taskhub, "other-host",
                               full_host.client_binding)
    mine = [p for p in full_host.pollers if isinstance(p, TimerTriggerPoller)][0]
    for _ in range(3):
        clock.advance(timedelta(minutes=5))
        assert mine.poll_once() + other.poll_once() == 1
    assert appmod.TICKS == [False, False, False]
    clock.advance(timedelta(minutes=17))
    assert mine.poll_once() + other.poll_once() == 1
    assert appmod.TICKS[-1] is True, "a missed occurrence fires once, past due"


def test_unsupported_binding_is_a_startup_error_naming_it(tmp_path):
    app_dir = tmp_path / "app"
    app_dir.mkdir()
    (app_dir / "function_app.py").write_text(
        "import azure.functions as func\n"
        "app = func.FunctionApp()\n"
        "@app.blob_trigger(arg_name='b', path='c/{name}', connection='S')\n"
        "def on_blob(b): pass\n")
    from devhost.app.loader import AppLoadError, load_app

    with pytest.raises(AppLoadError, match="blobTrigger.*supported: orchestrationTrigger"):
        load_app(app_dir)


def test_timer_catch_up_after_a_day_long_gap_is_one_step(full_host, clock):
    mine = [p for p in full_host.pollers if isinstance(p, TimerTriggerPoller)][0]
    clock.advance(timedelta(days=1))
    assert mine.poll_once() == 1
    assert mine.next_due() - clock.now() <= timedelta(minutes=5)
    assert mine.poll_once() == 0


def test_slow_handlers_never_lose_the_lock_of_messages_waiting_their_turn(full_host):
    # Each handler takes 20 s of a 30 s lock. Received in a batch, the later messages'
    # locks would expire before their turn and they would be handled twice.
    appmod = sys.modules["function_app"]
    for n in range(5):
        full_host.engine.send("orders", json.dumps({"slow_s": 20}), message_id=f"slow-{n}")
    full_host.run_until_idle()
    assert sorted(appmod.HANDLED) == [f"slow-{n}" for n in range(5)]
    counts = full_host.engine.counts("orders")
    assert counts.active == 0 and counts.dead_letter == 0


def _queue_pollers(host, queue):
    from devhost.triggers.servicebus import ServiceBusTriggerPoller

    return [p for p in host.pollers
            if isinstance(p, ServiceBusTriggerPoller) and p.queue == queue]


def test_one_idle_poller_of_a_queue_polls_and_the_others_wait_for_a_wake(full_host,
                                                                         monkeypatch):
    from devhost.triggers import servicebus

    scout, peer = _queue_pollers(full_host, "orders")[:2]
    waits = []
    monkeypatch.setattr(full_host.engine, "wait_for_send",
                        lambda queue, mark, timeout_s: waits.append(timeout_s))
    assert scout.poll_once() == peer.poll_once() == 0
    scout.idle_wait(0.004)
    peer.idle_wait(0.004)
    scout.idle_wait(0.008)
    assert waits == [0.004, servicebus.PEER_WAIT_S, 0.008]
    full_host.engine.send("orders", json.dumps({"id": "scouted", "name": "S"}),
                          message_id="s1")
    assert scout.poll_once() == 1  # busy: no longer the scout
    assert peer.poll_once() == 0
    peer.idle_wait(0.004)
    scout.idle_wait(0.004)
    assert waits[3:] == [0.004, servicebus.PEER_WAIT_S]


def test_a_poller_that_receives_wakes_a_waiting_peer(full_host, monkeypatch):
    import threading

    from devhost.triggers import servicebus

    monkeypatch.setattr(servicebus, "PEER_WAIT_S", 120.0)
    scout, peer = _queue_pollers(full_host, "orders")[:2]
    assert scout.poll_once() == peer.poll_once() == 0
    scout.idle_wait(0.0)
    full_host.engine.send("orders", json.dumps({"id": "woken", "name": "W"}),
                          message_id="w1")
    waiting = threading.Thread(target=peer.idle_wait, args=(0.0,))
    peer._mark = full_host.engine.send_mark("orders")  # as if it polled after the send
    waiting.start()
    assert scout.poll_once() == 1
    waiting.join(timeout=30)
    assert not waiting.is_alive(), "the receive woke the peer before its 120 s wait"


def test_a_worker_process_host_calls_its_own_task_hub_not_the_api(tmp_path, clock):
    # A worker process serves no HTTP and names the serving process's API: nothing listens
    # there in this test, so its durable client can only be answered by its own task hub.
    from devhost.run.host import LocalHost, free_port

    host = LocalHost(SAMPLE_APP, tmp_path / "data", clock=clock, serve_http=False,
                     api_base_url=f"http://127.0.0.1:{free_port()}")
    try:
        client = df.DurableOrchestrationClient(host.client_binding())
        iid = invoke.run(client.start_new("chain", None, "Di"))
        host.run_until_idle()
        status = invoke.run(client.get_status(iid))
        assert status.runtime_status == df.OrchestrationRuntimeStatus.Completed
        assert status.output == ["Hello Di-Tokyo!", "Hello Di-Seattle!", "Hello Di-London!"]
    finally:
        host.stop()
