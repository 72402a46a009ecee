"""A worker frozen while it holds a write lock stalls the others only up to the limit.

The real processes: ``devhost start --workers 2`` (this host process and one worker) and
the simulator. The worker is SIGSTOPped at a moment its hold record says it holds a SQLite
write lock (stopped, then the record read again: it cannot change while the process is
stopped). The host must kill it within ``--lock-hold-limit-s``, the other process must go
on finishing orders, a new worker must take its place, and every order must end terminal,
with the ledger and the stock balancing and no side effect twice.
"""

import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from client.submit import submit_orders
from demo import processes
from demo.audit import audit_data_dir
from demo.stage import DEMO_SETTINGS, REPO
from demo.summary import TERMINAL
from devhost.run.host import free_port
from orders.messaging import create_sender
from orders.stores import create_stores
from simulator.ledger import Ledger
from sqlitekit import read_hold
from tests.e2e.harness import key, make_order

pytestmark = [pytest.mark.slow(expected_s=15), pytest.mark.timeout(400),
              pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")]

LIMIT_S = 3.0
ORDERS = 60


def _terminal(data_dir: Path) -> int:
    with sqlite3.connect(f"file:{data_dir / 'state.sqlite'}?mode=ro", uri=True) as conn:
        names = ", ".join(f"'{s.value}'" for s in TERMINAL)
        return conn.execute("SELECT COUNT(*) FROM state_records WHERE process_state IN "
                            f"({names})").fetchone()[0]


def _state(pid: int) -> str | None:
    """The process's state letter (R, S, T, Z ...), None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _worker(host_pid: int) -> tuple[int, str] | None:
    """The host's worker process and its hold record's name (from its command line), if any."""
    for proc in Path("/proc").iterdir():
        try:
            stat = (proc / "stat").read_text()
            argv = (proc / "cmdline").read_bytes().decode().split("\0")
        except (OSError, ValueError):
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == host_pid and "worker" in argv:
            return int(proc.name), argv[argv.index("--hold-record") + 1]
    return None


def _freeze_while_holding(pid: int, record: str, timeout_s: float = 60.0) -> float:
    """SIGSTOP ``pid`` until it is stopped holding a write lock; return when (monotonic)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if read_hold(record)[0] is None:
            time.sleep(0.001)
            continue
        os.kill(pid, signal.SIGSTOP)
        while _state(pid) not in ("T", None):
            time.sleep(0.001)
        if read_hold(record)[0] is not None:
            return time.monotonic()
        os.kill(pid, signal.SIGCONT)
    raise AssertionError(f"worker {pid} was never caught holding a write lock")


def _wait(condition, timeout_s: float) -> float:
    """Poll ``condition`` until true; return the monotonic time it became true."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return time.monotonic()


def test_a_worker_frozen_holding_a_write_lock_is_ended_and_nothing_is_lost(tmp_path):
    orders = [make_order(n) for n in range(ORDERS)]
    keys = [key(o, "pair") for o in orders]
    stores = create_stores("sqlite", orders_path=tmp_path / "orders.sqlite",
                           state_path=tmp_path / "state.sqlite")
    stores.inventory.load({li.sku: li.quantity for o in orders for li in o.lines})
    stores.close()
    sim, url = processes.simulator(tmp_path, {"seed": 5, "all": {"transient_rate": 0.05}})
    port = free_port()
    host = processes.Process(
        "local host", ["devhost", "start", "--app-dir", str(REPO), "--data-dir", str(tmp_path),
                       "--port", str(port), "--workers", "2", "--lock-hold-limit-s",
                       str(LIMIT_S), "--orchestration-lease-s", "5", "--activity-lease-s", "10"],
        tmp_path / "host.log",
        {**DEMO_SETTINGS, "PAYMENT_API_URL": url, "SHIPPING_API_URL": url,
         "ORDER_CLIENTS": "pair", "MAX_IN_FLIGHT": "1000", "MAX_IN_FLIGHT_PER_CLIENT": "1000"},
        f"http://127.0.0.1:{port}/runtime/webhooks/durabletask/instances?top=1")
    sim.start()
    host.start()
    try:
        submit_orders(create_sender("local", data_dir=tmp_path), orders, client_id="pair",
                      reply_to="replies-pair")
        # Once every worker is ready: start-up is not supervised (the host waits for it).
        _wait(lambda: "devhost: listening on" in (tmp_path / "host.log").read_text(), 240)
        _wait(lambda: _terminal(tmp_path) >= 3, 240)
        worker = _worker(host.proc.pid)
        assert worker is not None, "the host has no worker process"
        pid, record = worker
        frozen_at = _freeze_while_holding(pid, record)
        done_at_freeze = _terminal(tmp_path)
        ended_at = _wait(lambda: _state(pid) in (None, "Z"), LIMIT_S + 30)
        assert ended_at - frozen_at <= LIMIT_S + 5
        if done_at_freeze < ORDERS:
            progress_at = _wait(lambda: _terminal(tmp_path) > done_at_freeze, 120)
            assert progress_at - frozen_at <= LIMIT_S + 15  # was 70 s: until SIGCONT
        _wait(lambda: _terminal(tmp_path) == ORDERS, 300)
        _wait(lambda: (_worker(host.proc.pid) or (pid,))[0] != pid, 60)  # replaced
    finally:
        host.stop()
        sim.stop()
    assert "has held a write lock for" in (tmp_path / "host.log").read_text()
    assert not (tmp_path / "holds").exists()  # run-time state, kept off the data disk
    assert read_hold(record) == (None, 0.0)  # the host removed the killed worker's block
    report = audit_data_dir(tmp_path, tmp_path / "ledger.sqlite", keys)
    assert len(report.verdicts) == ORDERS  # every order has a terminal state record
    assert report.unbalanced == [] and report.stock_unbalanced == ()
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        assert {k: n for k, n in ledger.effect_counts().items() if n > 1} == {}
