"""The order pipeline on DBOS Transact: the demo's orders, simulator and faults, on a peer.

``python -m bench.peers.dbos_orders_client --orders N [--faults] [--rate R]`` does what
``python -m demo --metrics-out`` does for the local host and prints the same figures as one
JSON line: it generates the same TPC-H orders (the demo's two clients and keys), starts
the same simulator (:mod:`simulator`) with the same faults (:func:`demo.faults.default_faults`),
starts the DBOS application in its own process (``serve``), submits every order through
``DBOSClient.enqueue`` (all at once, or ``--rate`` per second) and waits until each has a
terminal status. It lives here, never in the product.

The workflow does what one order does on the host (:mod:`orchestrators.order_workflow`,
version 1), with DBOS's means:

- submission writes the order and its state row (``Pending``) in the application's SQLite
  database (WAL, ``synchronous=FULL``, as the host's stores);
- an attempt sets the state ``Processing`` with a CompleteBy ``ORDER_DEADLINE_S`` ahead,
  reserves the inventory and logs it, then charges and ships: each remote step is logged
  as requested, runs as a child workflow (the agent) that calls the simulator with the
  host's own retry and circuit-breaker code (:func:`agents.remote_call.call_remote`,
  the same ``Idempotency-Key`` ``<order key>:<operation>`` and bodies) and ``DBOS.send``s
  the outcome; the attempt waits with ``DBOS.recv`` until CompleteBy;
- a timeout or an exhausted transient failure is a new attempt after the supervisor's
  hold (``RETRY_HOLD_BASE_S * 2**(attempt-1)``), at most ``MAX_FAILURES`` attempts;
- a permanent failure (a declined charge) is compensated: the requested remote steps are
  undone in reverse (refund with ``chargeKey``, cancellation with ``shipmentKey``; the
  simulator answers ``nothing_to_undo`` for a declined charge) and the reservation
  released, then ``Compensated``;
- the final status goes to the client's reply table, stamped when written.

Orders are admitted from a DBOS queue with ``worker_concurrency = MAX_PROCESSING`` (the
host's bound on orders processing at once); queue and ``recv`` poll every 0.1 s
(:data:`POLL_S`); recovery after a crash is DBOS's own. The
latency of an order runs from its workflow's ``created_at`` (stamped by the enqueue) to
its final status row, and CPU and memory are sampled over the DBOS process as over the
host's processes (:mod:`demo.resources`).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa
from dbos import DBOS, DBOSConfig

from agents.handler import ENDPOINTS
from agents.remote_call import OutcomeKind, RemoteRequest, call_remote
from clocks import SystemClock
from orders.circuit import CircuitBreaker
from orders.lifecycle.ids import idempotency_key
from orders.models import ClientOrder
from orders.models.agent_io import ChargePayload, ShipPayload
from orders.models.compensation import ReservedLine

QUEUE = "orders"
TERMINAL = ("Processed", "Compensated", "Error")
SETTINGS: dict[str, float] = {}
"""The demo's settings (:data:`demo.stage.DEMO_SETTINGS`), read by ``serve``."""
_app: dict[str, Any] = {}


@sa.event.listens_for(sa.Engine, "connect")
def _wal(dbapi_conn: Any, _record: Any) -> None:
    # DBOS's system database: WAL and FULL, as the chain-5 peer (bench/peers/dbos_chain5.py).
    dbapi_conn.execute("PRAGMA journal_mode=WAL")
    dbapi_conn.execute("PRAGMA synchronous=FULL")


APP_SCHEMA = """
CREATE TABLE IF NOT EXISTS orders (key TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS states (key TEXT PRIMARY KEY, state TEXT NOT NULL,
    attempt INTEGER NOT NULL, complete_by REAL, reply_to TEXT, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS compensation_log (key TEXT NOT NULL, step TEXT NOT NULL,
    detail TEXT, PRIMARY KEY (key, step));
CREATE TABLE IF NOT EXISTS replies (key TEXT NOT NULL, status TEXT NOT NULL,
    at REAL NOT NULL, PRIMARY KEY (key, status));
"""


def app_db(path: Path) -> sqlite3.Connection:
    """Open the application database (one connection per thread)."""
    local = _app.setdefault("local", threading.local())
    conn: sqlite3.Connection | None = getattr(local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        local.conn = conn
    return conn


def _write(sql: str, *params: Any) -> None:
    conn = app_db(_app["path"])
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(sql, params)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


# -- steps ---------------------------------------------------------------------------

@DBOS.step()
def submit(key: str, order: dict[str, Any], reply_to: str) -> None:
    """Write the order and its Pending state row (idempotent)."""
    conn = app_db(_app["path"])
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT OR IGNORE INTO orders VALUES (?, ?)", (key, json.dumps(order)))
    conn.execute("INSERT OR IGNORE INTO states VALUES (?, 'Pending', 0, NULL, ?, ?)",
                 (key, reply_to, time.time()))
    conn.execute("COMMIT")


@DBOS.step()
def begin_attempt(key: str, attempt: int) -> float:
    """Set Processing with CompleteBy ``ORDER_DEADLINE_S`` ahead; return CompleteBy (epoch s)."""
    deadline = time.time() + SETTINGS["ORDER_DEADLINE_S"]
    _write("UPDATE states SET state = 'Processing', attempt = ?, complete_by = ?, "
           "updated_at = ? WHERE key = ?", attempt, deadline, time.time(), key)
    return deadline


@DBOS.step()
def record_step(key: str, step: str, detail: Any) -> None:
    """Write a compensation log entry (idempotent on order and step)."""
    _write("INSERT OR IGNORE INTO compensation_log VALUES (?, ?, ?)", key, step,
           json.dumps(detail))


@DBOS.step()
def finish(key: str, state: str, status: str) -> None:
    """Set the final state, then put the final status in the client's reply table."""
    _write("UPDATE states SET state = ?, updated_at = ? WHERE key = ?", state, time.time(), key)
    _write("INSERT OR IGNORE INTO replies VALUES (?, ?, ?)", key, status, time.time())


@DBOS.step()
def call_service(operation: str, key: str, body: dict[str, Any], deadline: float,
                 ) -> dict[str, Any]:
    """Call the simulator as the host's agent does (retries, breaker, deadline)."""
    service = "payment" if operation in ("charge", "refund") else "shipping"
    method, path = ENDPOINTS[operation]
    request = RemoteRequest(service=service, method=method, url=_app["sim_url"] + path,
                            idempotency_key=idempotency_key(key, operation), json=body,
                            order_key=key)
    outcome = call_remote(_app["http"], request,
                          deadline=datetime.fromtimestamp(deadline, UTC),
                          max_attempts=int(SETTINGS["AGENT_MAX_ATTEMPTS"]),
                          breaker=_app["breakers"][service], clock=_app["clock"],
                          try_timeout=timedelta(seconds=SETTINGS["AGENT_CALL_TIMEOUT_S"]))
    body_out = outcome.body if isinstance(outcome.body, dict) else None
    return {"kind": str(outcome.kind), "body": body_out}


# -- workflows -----------------------------------------------------------------------

@DBOS.workflow(name="agent_call")
def agent_call(parent: str, topic: str, operation: str, key: str, body: dict[str, Any],
               deadline: float) -> None:
    """The agent: call the service, send the outcome to the waiting order workflow."""
    DBOS.send(parent, call_service(operation, key, body, deadline), topic)


def remote(key: str, attempt: int, operation: str, body: dict[str, Any],
           deadline: float) -> dict[str, Any] | None:
    """Start the agent and wait for its reply until ``deadline`` (None: timed out)."""
    topic = f"{operation}:{attempt}"
    DBOS.start_workflow(agent_call, DBOS.workflow_id or "", topic, operation, key, body,
                        deadline)
    reply: dict[str, Any] | None = DBOS.recv(topic, timeout_seconds=max(0.0,
                                                                         deadline - time.time()))
    return reply


UNDO = {"charge": ("refund", "chargeKey"), "ship": ("cancel_shipment", "shipmentKey")}


def compensate(key: str, requested: list[str], attempts: int) -> str:
    """Undo the requested remote steps in reverse, release the reservation: Compensated."""
    for operation in reversed(requested):
        undo, field = UNDO[operation]
        body = {"orderId": key, field: idempotency_key(key, operation)}
        for attempt in range(1, int(SETTINGS["MAX_FAILURES"]) + 1):
            deadline = time.time() + SETTINGS["ORDER_DEADLINE_S"]
            reply = remote(key, attempts + attempt, undo, body, deadline)
            if reply is not None and reply["kind"] in (str(OutcomeKind.SUCCEEDED),
                                                       str(OutcomeKind.PERMANENT_FAILURE)):
                record_step(key, f"{undo}:done", reply["body"])
                break
    record_step(key, "releaseInventory", {"reservationId": f"RES-{key}"})
    finish(key, "Compensated", "Compensated")
    return "Compensated"


@DBOS.workflow(name="order_workflow")
def order_workflow(key: str, order_json: dict[str, Any], reply_to: str) -> str:
    """One order from submission to its final status (module docstring)."""
    submit(key, order_json, reply_to)
    order = ClientOrder.model_validate(order_json)
    bodies = {"charge": ChargePayload(order_key=key, amount=order.total_price,
                                      currency=order.currency).to_payload(),
              "ship": ShipPayload(order_key=key, lines=tuple(
                  ReservedLine(sku=li.sku, quantity=li.quantity) for li in order.lines)
              ).to_payload()}
    requested: list[str] = []
    max_failures = int(SETTINGS["MAX_FAILURES"])
    for attempt in range(1, max_failures + 1):
        deadline = begin_attempt(key, attempt)
        record_step(key, "reserveInventory", {"reservationId": f"RES-{key}"})
        for operation in ("charge", "ship"):
            if operation not in requested:
                record_step(key, f"{operation}:requested", idempotency_key(key, operation))
                requested.append(operation)
            reply = remote(key, attempt, operation, bodies[operation], deadline)
            if reply is None or reply["kind"] not in (str(OutcomeKind.SUCCEEDED),
                                                      str(OutcomeKind.PERMANENT_FAILURE)):
                break
            if reply["kind"] == str(OutcomeKind.PERMANENT_FAILURE):
                return compensate(key, requested, max_failures)
            record_step(key, operation, reply["body"])
        else:
            finish(key, "Processed", "OrderCompleted")
            return "Processed"
        if attempt < max_failures:
            DBOS.sleep(SETTINGS["RETRY_HOLD_BASE_S"] * 2 ** (attempt - 1))
    return compensate(key, requested, max_failures)


# -- the DBOS process ----------------------------------------------------------------

POLL_S = 0.1
"""DBOS on SQLite polls for notifications (``recv``) and for queued workflows, every 1 s
by default (Postgres has LISTEN/NOTIFY); a user waiting on replies would lower both, so the
peer polls every 0.1 s (its ``notification_listener_polling_interval_sec`` and the queue's
``polling_interval_sec``)."""


def dbos_config(data_dir: Path) -> DBOSConfig:
    """The DBOS configuration: SQLite system database in ``data_dir``, polling every 0.1 s."""
    return {"name": "bench-orders",
            "system_database_url": f"sqlite:///{data_dir / 'dbos.sqlite'}",
            "notification_listener_polling_interval_sec": POLL_S,
            "log_level": "WARNING", "console_log_level": "WARNING"}


def serve(data_dir: Path, sim_url: str, settings: dict[str, float]) -> None:
    """Run the DBOS application until standard input closes; print ``ready`` first."""
    SETTINGS.update(settings)
    clock = SystemClock()
    _app.update(path=data_dir / "app.sqlite", sim_url=sim_url.rstrip("/"), clock=clock,
                http=httpx.Client(),
                breakers={s: CircuitBreaker(
                    s, clock=clock, failure_threshold=int(settings["CIRCUIT_FAILURE_THRESHOLD"]),
                    cool_down=timedelta(seconds=settings["CIRCUIT_COOL_DOWN_S"]))
                    for s in ("payment", "shipping")})
    app_db(_app["path"]).executescript(APP_SCHEMA)
    DBOS(config=dbos_config(data_dir))
    DBOS.launch()
    DBOS.register_queue(QUEUE, worker_concurrency=int(settings["MAX_PROCESSING"]),
                        polling_interval_sec=POLL_S)
    print("ready", flush=True)
    sys.stdin.read()
    DBOS.destroy()


def start_server(data_dir: Path, sim_url: str, settings: dict[str, float],
                 ) -> subprocess.Popen[str]:
    """Start ``serve`` in its own process and wait for ``ready``.

    Raises
    ------
    RuntimeError
        If it exits first (its log is ``data_dir/dbos.log``).
    """
    log = (data_dir / "dbos.log").open("ab")
    proc = subprocess.Popen([sys.executable, "-m", "bench.peers.dbos_orders_client", "serve",
                             "--data-dir", str(data_dir), "--sim-url", sim_url,
                             "--settings", json.dumps(settings)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if line.strip() != "ready":
        proc.kill()
        raise RuntimeError(f"DBOS application did not start (see {data_dir / 'dbos.log'})")
    return proc
