"""The retention pass's purge by time window, served by the local host as Azure serves it.

``ops.retention.purge_instances`` (the ``retention_purge`` timer) with the real SDK client
against the local host's Durable HTTP API: ended instances older than ``RETENTION_DAYS``
go with their histories, running and recent ones stay.
"""

from datetime import timedelta

from ops.retention import purge_instances
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
