"""The task hub's statements read through indexes, so their cost does not grow with the hub.

A task hub keeps every finished instance and its history until retention purges it (30
days by default: about 100,000 instances for a busy app). Every statement the host runs
for a workload (activities, a durable timer, an external event, sub-orchestrations, then
listing pages and the purge by time window as the durable HTTP API asks them) is captured
as SQLite runs it and its plan asked of SQLite (EXPLAIN QUERY PLAN). The plans of a small
hub are those of a large one: the task hub keeps no ``ANALYZE`` statistics, so SQLite plans
from the schema alone.
"""

import re
import sqlite3
from datetime import timedelta

import pytest

from devhost.taskhub.store import TaskHub
from tests.devhost.conftest import output, start

FULL_SCAN = re.compile(r"^SCAN (\w+)$")
"""A plan step reading a whole table (``SCAN t USING INDEX`` reads an index in order)."""

BOUNDED_BY_WORK_IN_FLIGHT = {"activities"}
"""Tables whose rows are deleted when their work is done, so a scan costs what is in flight."""


@pytest.fixture
def statements(host):
    """Every statement run on the task hub connection of this (the drain) thread."""
    seen: list[str] = []
    host.taskhub._conn().set_trace_callback(seen.append)
    yield seen
    host.taskhub._conn().set_trace_callback(None)


def plans(host, seen):
    """Map each captured data statement to its query plan's steps."""
    conn = host.taskhub._conn()
    data = {s for s in seen if re.match(r"\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b", s)}
    return {s: [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + s)] for s in data}


def run_workload(host, clock):
    for k in range(3):
        start(host, "chain", f"n{k}", f"chain-{k}")
    start(host, "parent", "ok", "parent-1")
    start(host, "race", 3600, "race-event")
    start(host, "race", 60, "race-timer")
    host.run_until_idle()
    host.taskhub.raise_event("race-event", "Approval", '{"ok": true}')
    host.run_until_idle(advance_clock=True)
    assert output(host, "race-timer") == ("Completed", {"outcome": "timeout"})
    assert output(host, "race-event")[1]["outcome"] == "approved"


def test_no_statement_of_an_orchestration_scans_a_growing_table(host, clock, statements):
    run_workload(host, clock)

    found = plans(host, statements)
    assert any("FROM history" in s for s in found) and any("inbox" in s for s in found)
    scans = {s: steps for s, steps in found.items()
             if any((m := FULL_SCAN.match(step)) and m[1] not in BOUNDED_BY_WORK_IN_FLIGHT
                    for step in steps)}
    assert scans == {}


def test_list_pages_and_purge_window_read_an_index_in_page_order(host, clock, statements):
    run_workload(host, clock)
    statements.clear()
    hub = host.taskhub

    first, token = hub.query(top=2)
    second, _ = hub.query(top=2, continuation=token)
    completed, _ = hub.query(statuses=["Completed"], top=2)
    ended, _ = hub.query(statuses=["Completed", "Failed", "Terminated"],
                         created_from=clock.now() - timedelta(days=1),
                         created_to=clock.now(), top=1000)
    found = {sql: steps for sql, steps in plans(host, statements).items()
             if "ORDER BY created_at" in sql}
    assert len(found) == 4
    created = {r.instance_id: r.created_at for r in ended}
    assert [r.instance_id for r in first + second] == sorted(
        created, key=lambda i: (created[i], i))[:4]
    assert len(completed) == 2 and len(ended) == 9  # 6 started, 3 sub-orchestrations
    for sql, steps in found.items():
        assert not any(FULL_SCAN.match(step) for step in steps), (sql, steps)
        assert any("USING INDEX ix_instances_" in step for step in steps), (sql, steps)
    # A page without a status filter, or with one status, comes out of the index in order:
    # it stops at its LIMIT instead of sorting every instance. (Several statuses, as the
    # purge asks, sort the instances of its time window only.)
    one_or_no_status = [steps for sql, steps in found.items() if " IN (" not in sql
                        or sql.count("runtime_status IN ('Completed')")]
    assert len(one_or_no_status) == 3
    assert all(not any("TEMP B-TREE" in step for step in steps) for steps in one_or_no_status)


def test_a_task_hub_file_of_the_previous_schema_gets_the_page_indexes_when_opened(tmp_path,
                                                                                  clock):
    path = tmp_path / "taskhub.sqlite"
    TaskHub(path, clock).create_instance("chain", "old-1", '"x"')
    with sqlite3.connect(path) as conn:  # the indexes of the previous schema
        conn.executescript(
            "DROP INDEX ix_instances_status_page; DROP INDEX ix_instances_page;"
            "CREATE INDEX ix_instances_status_created ON instances (runtime_status, created_at);"
            "CREATE INDEX ix_instances_created ON instances (created_at);")
    conn.close()

    hub = TaskHub(path, clock)
    indexes = {r[0]: r[1] for r in hub._conn().execute(
        "SELECT name, sql FROM sqlite_master WHERE tbl_name = 'instances' AND type = 'index' "
        "AND sql IS NOT NULL")}
    assert indexes == {
        "ix_instances_status_page":
            "CREATE INDEX ix_instances_status_page\n"
            "    ON instances (runtime_status, created_at, instance_id)",
        "ix_instances_page":
            "CREATE INDEX ix_instances_page ON instances (created_at, instance_id)"}
    assert [r.instance_id for r in hub.query(statuses=["Pending"])[0]] == ["old-1"]
