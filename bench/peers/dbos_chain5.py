"""Chain-5 on DBOS Transact with its SQLite system database in WAL mode.

``python -m bench.peers.dbos_chain5 --n N`` runs N workflows of 5 ``@DBOS.step`` calls,
each started with ``DBOS.start_workflow`` as fast as the call returns, and prints one JSON
line (see :mod:`bench.peers.common`).

Configuration (DBOS's documented knobs; DBOS itself does not switch SQLite to WAL):

- ``system_database_url = sqlite:///<temp dir>/dbos.sqlite`` on the same disk as the local
  host's task hub;
- every connection gets ``journal_mode=WAL`` and ``synchronous=FULL`` (the host's
  durability; DBOS leaves SQLite's default, which is FULL, and the rollback journal);
- ``max_executor_threads`` (the pool workflows run on; DBOS's default is unbounded, one
  thread per started workflow) -- the value is chosen by ``--threads`` and reported.
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from dbos import DBOS, DBOSConfig

from bench.peers.common import STEPS, figures

DEFAULT_THREADS = 4
"""Executor threads: best of 2/4/6/8/16/32/unbounded (500 instances, 2 CPUs, 2 runs each).

Unbounded (DBOS's default) runs every started workflow at once, so hundreds of threads
contend for SQLite's single write lock; 4 kept the writer busy with the least contention.
"""


@sa.event.listens_for(sa.Engine, "connect")
def _wal(dbapi_conn: Any, _record: Any) -> None:
    # Applies to DBOS's own engine: WAL so readers (result polling) do not block the
    # writer, FULL so a commit is on disk when DBOS says a step is recorded.
    dbapi_conn.execute("PRAGMA journal_mode=WAL")
    dbapi_conn.execute("PRAGMA synchronous=FULL")


@DBOS.step()
def step(value: int) -> int:
    return value + 1


@DBOS.workflow()
def chain5(value: int) -> int:
    for _ in range(STEPS):
        value = step(value)
    return value


def run(n: int, threads: int | None = DEFAULT_THREADS) -> dict[str, Any]:
    """Start ``n`` chain-5 workflows, wait for all, return :func:`~bench.peers.common.figures`.

    Raises
    ------
    AssertionError
        If a workflow returns a wrong result.
    """
    with tempfile.TemporaryDirectory(prefix="dbos-chain5-") as tmp:
        config: DBOSConfig = {"name": "bench-chain5",
                              "system_database_url": f"sqlite:///{Path(tmp) / 'dbos.sqlite'}",
                              "log_level": "WARNING", "console_log_level": "WARNING"}
        if threads is not None:
            config["max_executor_threads"] = threads
        DBOS(config=config)
        DBOS.launch()
        try:
            start = time.perf_counter()
            handles = [DBOS.start_workflow(chain5, i) for i in range(n)]
            results = [h.get_result() for h in handles]
            elapsed = time.perf_counter() - start
        finally:
            DBOS.destroy()
    wrong = [i for i, r in enumerate(results) if r != i + STEPS]
    if wrong:
        raise AssertionError(f"{len(wrong)} workflows returned a wrong result")
    return figures(n, elapsed, peer="dbos", version=version("dbos"),
                   system_database="sqlite, journal_mode=WAL, synchronous=FULL",
                   max_executor_threads=threads or "unbounded (default)",
                   start="DBOS.start_workflow")


def main() -> None:
    """Entry point: ``--n`` instances, ``--threads`` executor threads (0 = DBOS default)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS)
    args = parser.parse_args()
    if args.n < 1:
        parser.error("--n: must be at least 1")
    logging.getLogger("dbos").setLevel(logging.WARNING)
    print(json.dumps(run(args.n, args.threads or None)), flush=True)


if __name__ == "__main__":
    main()
