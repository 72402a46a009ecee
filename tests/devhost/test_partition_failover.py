"""A killed or frozen process of ``devhost start --workers 2`` loses its partitions at once.

The two processes split the four partitions two and two; after a SIGKILL or SIGSTOP of the
worker process, the other takes its partitions over once their lease expires (3 s here) and
finishes its instances, well before the instance lease (30 s, the default) would have freed
them.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

from clocks import SystemClock
from devhost.run.host import free_port
from devhost.taskhub.events import parse_time
from devhost.taskhub.store import TaskHub
from tests.devhost.conftest import SAMPLE_APP
from tests.devhost.test_crash_recovery import completed, wait_for

pytestmark = pytest.mark.slow

PARTITION_LEASE_S = 3.0
TAKEOVER_S = PARTITION_LEASE_S + 2 * PARTITION_LEASE_S / 3 + 3.0
"""The lease, two passes of the survivor (a third of the lease each), and start-up slack."""
FINISH_S = 20.0
"""From the kill until every instance completed: less than the 30 s instance lease."""
INSTANCES = 40


def live_owners(hub):
    """Return how many partitions each process holds an unexpired lease on."""
    now = SystemClock().now()
    rows = hub._conn().execute("SELECT owner, expires_at FROM partitions").fetchall()
    return Counter(owner for owner, expires in rows if owner and parse_time(expires) > now)


@pytest.mark.parametrize("sig", [pytest.param(signal.SIGKILL, id="SIGKILL"),
                                 pytest.param(signal.SIGSTOP, id="SIGSTOP")])
def test_a_killed_or_frozen_process_loses_its_partitions_and_the_other_finishes(tmp_path, sig):
    hub = TaskHub(tmp_path / "taskhub.sqlite", SystemClock())
    proc = subprocess.Popen(
        [sys.executable, "-m", "devhost", "start", "--app-dir", str(SAMPLE_APP),
         "--data-dir", str(tmp_path), "--port", str(free_port()), "--workers", "2",
         "--partition-lease-s", str(PARTITION_LEASE_S), "--activity-lease-s", "3",
         "--lock-hold-limit-s", "3"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    worker = None
    try:
        assert "2 processes" in proc.stdout.readline()
        worker = int(subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                    text=True).stdout.split()[0])
        assert wait_for(lambda: sorted(live_owners(hub).values()) == [2, 2], 20.0), \
            live_owners(hub)
        before = set(live_owners(hub))
        for i in range(INSTANCES):
            hub.create_instance("slow_chain", f"part-{i:02d}", json.dumps(i))
        assert wait_for(lambda: completed(hub) >= 1, 20.0), "the host made no progress"
        assert completed(hub) < INSTANCES, "the kill must happen mid-run"

        os.kill(worker, sig)
        killed_at = time.monotonic()
        # The frozen or dead owner's partitions go to another: its id leaves the table.
        assert wait_for(lambda: len(before & set(live_owners(hub))) == 1, TAKEOVER_S), \
            live_owners(hub)
        assert wait_for(lambda: completed(hub) == INSTANCES,
                        FINISH_S - (time.monotonic() - killed_at)), hub.count_by_status()
    finally:
        if worker is not None and sig == signal.SIGSTOP:
            with contextlib.suppress(ProcessLookupError):  # ended for holding the write lock
                os.kill(worker, signal.SIGCONT)
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    for i in range(INSTANCES):
        assert json.loads(hub.get_instance(f"part-{i:02d}").output) == 2 * (3 * i + 3)
