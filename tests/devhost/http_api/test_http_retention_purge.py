"""The retention pass's listing and purges, served by the local host as Azure serves them.

``ops.retention.purge_instances`` (the ``retention_purge`` timer) with the real SDK client
against the local host's Durable HTTP API: ended instances older than ``RETENTION_DAYS``
go with their histories, running and recent ones stay, and the list is read to its last
page (continuation tokens), so instances kept for open orders hide none behind them.
"""

from datetime import timedelta
from types import SimpleNamespace

from ops.retention import purge_instances
from orders.models import ProcessState
from tests.devhost.http_api.helpers import finish, run


def test_only_ended_instances_created_before_the_retention_window_are_purged(server, clock):
    client = server.client()
    for instance_id in ("old-done", "old-failed", "old-running"):
        run(client.start_new("Hello", instance_id, None))
    finish(server.taskhub, clock, "old-done")
    finish(server.taskhub, clock, "old-failed", status="Failed")
    clock.advance(timedelta(days=2))
    run(client.start_new("Hello", "recent-done", None))
    finish(server.taskhub, clock, "recent-done")
    clock.advance(timedelta(days=29))  # old ones: 31 days; recent-done: 29 days

    assert run(purge_instances(client, clock.now(), retention_days=30)) == 2
    assert server.taskhub.get_instance("old-done") is None
    assert server.taskhub.get_history("old-done") == []
    assert server.taskhub.get_instance("old-failed") is None
    kept = {r.instance_id for r in server.taskhub.query()[0]}
    assert kept == {"old-running", "recent-done"}
    assert run(purge_instances(client, clock.now(), retention_days=30)) == 0
    clock.advance(timedelta(days=2))
    assert run(purge_instances(client, clock.now(), retention_days=30)) == 1
    assert {r.instance_id for r in server.taskhub.query()[0]} == {"old-running"}


def test_instances_kept_for_open_orders_do_not_hide_the_pages_behind_them(server, clock):
    client = server.client()
    # More than one page of the list (100); two attempts of each order kept.
    kept = [f"keep-{n // 2}:{n % 2 + 1}" for n in range(130)]
    done = [f"done-{n}:1" for n in range(3)]
    for instance_id in kept + done:
        run(client.start_new("Hello", instance_id, None))
        finish(server.taskhub, clock, instance_id, status="Failed")
        clock.advance(timedelta(seconds=1))
    clock.advance(timedelta(days=31))
    read = []

    def get(key):
        read.append(key)
        return SimpleNamespace(process_state=ProcessState.ERROR) if key.startswith("keep-") \
            else None

    assert run(purge_instances(client, clock.now(), 30, SimpleNamespace(get=get))) == 3
    assert sorted(read) == sorted({i.rsplit(":", 1)[0] for i in kept + done})  # once each
    left = {r.instance_id for r in server.taskhub.query(top=1000)[0]}
    assert left == set(kept)
