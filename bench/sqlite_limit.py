"""The SQLite ceiling under the local host: commits/s on its disk, and commits per activity.

:func:`commit_rate` times one-row WAL transactions with ``synchronous=FULL`` (the host's,
an fsync per commit) and ``NORMAL``; :func:`host_commits` counts the transactions that
write in a traced chain-5 run (empty commits apart: they write no WAL frame).
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import sqlitekit as db
from bench.chain5 import APP, start_and_drain
from devhost.run.host import LocalHost

WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")


def commit_rate(synchronous: str, duration_s: float = 2.0,
                folder: Path | None = None) -> dict[str, Any]:
    """Commit one-row insert transactions for ``duration_s`` (at least 10); return commits/s.

    ``folder`` None uses a new temp folder, on the host benchmarks' disk.
    """
    with tempfile.TemporaryDirectory(prefix="sqlite-limit-", dir=folder) as tmp:
        conn = db.connect(Path(tmp) / "limit.sqlite", synchronous=synchronous)
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
        commits, start = 0, time.perf_counter()
        while commits < 10 or time.perf_counter() - start < duration_s:
            with db.write(conn):
                conn.execute("INSERT INTO t (v) VALUES (?)", ("x" * 32,))
            commits += 1
        elapsed = time.perf_counter() - start
        conn.close()
        device = os.stat(tmp).st_dev
    return {"synchronous": synchronous, "commits": commits, "seconds": elapsed,
            "commits_per_s": commits / elapsed, "st_dev": device}


class CommitCounter:
    """Count committing transactions on every connection opened while :meth:`active`."""

    def __init__(self) -> None:
        self.commits = 0
        self.empty_commits = 0
        self.autocommit_writes = 0
        self._lock = threading.Lock()

    @property
    def total(self) -> int:
        """Transactions that wrote: committed with changes, plus autocommit writes."""
        return self.commits + self.autocommit_writes

    def watch(self, conn: sqlite3.Connection) -> sqlite3.Connection:
        """Install the trace callback on ``conn`` and return it."""
        begun = [conn.total_changes]

        def trace(sql: str) -> None:
            word = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else ""
            with self._lock:
                if word == "BEGIN":
                    begun[0] = conn.total_changes
                elif word in ("COMMIT", "END"):
                    if conn.total_changes > begun[0]:
                        self.commits += 1
                    else:
                        self.empty_commits += 1
                elif word in WRITES and not conn.in_transaction:
                    self.autocommit_writes += 1

        conn.set_trace_callback(trace)
        return conn

    @contextmanager
    def active(self) -> Iterator[CommitCounter]:
        """Trace every ``sqlite3.connect`` made in this process until the block ends."""
        real = sqlite3.connect

        def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
            return self.watch(real(*args, **kwargs))

        with mock.patch.object(sqlite3, "connect", connect):
            yield self

    def snapshot(self) -> tuple[int, int, int]:
        """Return (commits, empty commits, autocommit writes) so far."""
        with self._lock:
            return self.commits, self.empty_commits, self.autocommit_writes


def host_commits(n: int, activity_workers: int = 4) -> dict[str, Any]:
    """Run chain-5 with ``n`` instances on the host, counting its SQLite commits (set-up excluded).

    The trace callback slows the host, so this run is not a timed one.
    """
    counter = CommitCounter()
    with counter.active(), tempfile.TemporaryDirectory(prefix="chain5-commits-") as tmp:
        host = LocalHost(APP, Path(tmp), activity_workers=activity_workers, serve_http=False)
        before = counter.snapshot()
        start_and_drain(host, n)
        after = counter.snapshot()
    commits, empty, auto = (a - b for a, b in zip(after, before, strict=True))
    written = commits + auto
    return {"n": n, "commits": commits, "empty_commits": empty, "autocommit_writes": auto,
            "commits_per_instance": written / n, "commits_per_activity": written / (5 * n)}


def run(host_instances_per_s: float, n: int = 200, duration_s: float = 2.0) -> dict[str, Any]:
    """Measure both commit rates and the host's commits, against ``host_instances_per_s``.

    ``host_instances_per_s`` is the host's median chain-5 rate of the same run;
    ``duration_s`` is per synchronous setting.
    """
    full = commit_rate("FULL", duration_s)
    normal = commit_rate("NORMAL", duration_s)
    counted = host_commits(n)
    work_items_per_s = host_instances_per_s * (5 + 6)
    return {"full": full, "normal": normal, "host_commits": counted,
            "host_work_items_per_s": work_items_per_s,
            "host_work_items_fraction_of_full": work_items_per_s / full["commits_per_s"],
            "host_commits_per_s_estimate":
                host_instances_per_s * counted["commits_per_instance"],
            "same_disk_as_host": full["st_dev"] == os.stat(tempfile.gettempdir()).st_dev}
