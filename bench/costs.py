"""What an order costs on Azure: counted after a run from its durable state, then priced.

What is counted, and why: docs/performance.md, "What an order costs on Azure". Prices:
:mod:`bench.prices`.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

from bench.prices import COSMOS_RU, DTS_ACTION, RU_PER_OPERATION, SERVICEBUS_OPERATION
from devhost.taskhub.events import EventType

STORE_OPS_DIR = "store-ops"
"""Folder of the data folder the host's processes write their store counts to."""

EVENTS = {"episodes": EventType.OrchestratorStarted, "starts": EventType.ExecutionStarted,
          "activities": EventType.TaskScheduled, "timers": EventType.TimerCreated,
          "timers_fired": EventType.TimerFired, "events_raised": EventType.EventRaised,
          "suborchestrations": EventType.SubOrchestrationInstanceCreated}
"""History events counted, by the name the report gives them."""

SERVICEBUS_BILLED = ("send_calls", "delivered", "completes", "abandons", "dead_letters",
                     "lock_renewals")
"""Service Bus operations billed, one call each; receives per delivery (``prefetchCount`` 0).

The local host receives up to a function's free slots per receive, so its ``receive_calls``
are fewer than Azure's; empty long-polls cost per listener, not per order (the local host's
empty receives are not counted: its polling is not Azure's).
"""


def _open(path: Path) -> sqlite3.Connection:
    if not path.exists():
        raise FileNotFoundError(f"{path}: not found (run the order pipeline first)")
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def taskhub_counts(path: Path) -> dict[str, dict[str, int]]:
    """Count the history events of :data:`EVENTS` per orchestrator name, and instances.

    Only the current execution's history is kept, so a purged instance is not counted.
    """
    conn = _open(path)
    try:
        rows = conn.execute(
            "SELECT i.name, json_extract(h.event, '$.EventType'), COUNT(*) FROM history h "
            "JOIN instances i USING (instance_id) GROUP BY 1, 2").fetchall()
        instances = conn.execute("SELECT name, COUNT(*) FROM instances GROUP BY 1").fetchall()
    finally:
        conn.close()
    names = {int(t): k for k, t in EVENTS.items()}
    out: dict[str, dict[str, int]] = {n: {"instances": c} for n, c in instances}
    for name, event_type, count in rows:
        if event_type in names:
            out[name][names[event_type]] = count
    for counts in out.values():
        for key in EVENTS:
            counts.setdefault(key, 0)
    return out


def attempt_profiles(path: Path) -> dict[str, dict[str, float]]:
    """Mean history counts of one instance per ``<orchestrator>:<outcome>`` (its output's).

    What one attempt of each kind costs, whatever the run's retries: a processed
    ``order_workflow`` attempt is the workflow version's cost of a fault-free order.
    """
    conn = _open(path)
    try:
        rows = conn.execute(
            "SELECT i.name || ':' || COALESCE(json_extract(i.output, '$.outcome'), "
            "i.runtime_status), json_extract(h.event, '$.EventType'), COUNT(*), "
            "COUNT(DISTINCT h.instance_id) FROM history h JOIN instances i USING "
            "(instance_id) GROUP BY 1, 2").fetchall()
        sizes = dict(conn.execute(
            "SELECT name || ':' || COALESCE(json_extract(output, '$.outcome'), "
            "runtime_status), COUNT(*) FROM instances GROUP BY 1").fetchall())
    finally:
        conn.close()
    names = {int(t): k for k, t in EVENTS.items()}
    out: dict[str, dict[str, float]] = {
        kind: {"instances": n, **dict.fromkeys(EVENTS, 0.0)} for kind, n in sizes.items()}
    for kind, event_type, count, _ in rows:
        if event_type in names:
            out[kind][names[event_type]] = count / sizes[kind]
    for profile in out.values():
        profile["dts_actions"] = dts_actions(profile)  # type: ignore[arg-type]
    return dict(sorted(out.items()))


def servicebus_counts(path: Path) -> dict[str, dict[str, int]]:
    """Return the local Service Bus's operation counts per queue."""
    conn = _open(path)
    try:
        rows = conn.execute("SELECT queue, operation, count FROM operation_counts").fetchall()
    finally:
        conn.close()
    out: dict[str, dict[str, int]] = {}
    for queue, operation, count in rows:
        out.setdefault(queue, {})[operation] = count
    return out


def _host_documents(folder: Path) -> list[dict[str, Any]]:
    """The store count files the host's processes wrote (the demo's own are left out)."""
    docs = [json.loads(file.read_text()) for file in sorted(folder.glob("store-ops-*.json"))]
    return [d for d in docs if Path((d.get("argv") or [""])[0]).parent.name == "devhost"]


def _summed(docs: list[dict[str, Any]], key: str) -> dict[str, dict[str, int]]:
    total: dict[str, Counter[str]] = {}
    for doc in docs:
        for group, kinds in doc.get(key, {}).items():
            total.setdefault(group, Counter()).update(kinds)
    return {group: dict(kinds) for group, kinds in sorted(total.items())}


def store_counts(folder: Path) -> dict[str, dict[str, int]]:
    """Sum the store operations of the host's processes per store and kind."""
    return _summed(_host_documents(folder), "counts")


def store_callers(folder: Path) -> dict[str, dict[str, int]]:
    """Sum the host's store operations per calling app function and ``store.kind``."""
    return _summed(_host_documents(folder), "callers")


def http_calls(ledger: Path) -> dict[str, int]:
    """Return the simulator's HTTP requests per ``service.operation``."""
    conn = _open(ledger)
    try:
        rows = conn.execute("SELECT service, operation, SUM(count) FROM requests "
                            "GROUP BY 1, 2").fetchall()
    finally:
        conn.close()
    return {f"{service}.{operation}": int(n) for service, operation, n in rows}


def collect(data_dir: Path) -> dict[str, Any]:
    """Every count of one run's data folder (the demo's ``<data dir>/demo``)."""
    return {"taskhub": taskhub_counts(data_dir / "taskhub.sqlite"),
            "attempts": attempt_profiles(data_dir / "taskhub.sqlite"),
            "servicebus": servicebus_counts(data_dir / "servicebus.sqlite"),
            "stores": store_counts(data_dir / STORE_OPS_DIR),
            "store_callers": store_callers(data_dir / STORE_OPS_DIR),
            "http": http_calls(data_dir / "ledger.sqlite")}


def _sum(groups: dict[str, dict[str, int]], keys: Any) -> dict[str, int]:
    return {k: sum(g.get(k, 0) for g in groups.values()) for k in keys}


def dts_actions(hub: dict[str, Any]) -> Any:
    """Durable Task Scheduler actions of these history counts (docs/performance.md).

    Every timer created counts: the Durable Task Framework cannot withdraw a timer
    message, so a cancelled timer still fires on Azure.
    """
    return (hub["starts"] + 2 * hub["activities"] + 2 * hub["suborchestrations"]
            + hub["events_raised"] + hub["timers"])


def per_order(counts: dict[str, Any], orders: int) -> dict[str, Any]:
    """Counts per order of :func:`collect`'s ``counts``, and ``usd_per_1000`` per service.

    Raises
    ------
    ValueError
        If ``orders`` is below 1.
    """
    if orders < 1:
        raise ValueError(f"orders: must be at least 1, got {orders}")
    hub = _sum(counts["taskhub"], EVENTS)
    hub["dts_actions"] = dts_actions(hub)
    ops = sorted({op for q in counts["servicebus"].values() for op in q} | {"sent", "delivered"}
                 | set(SERVICEBUS_BILLED))
    bus = _sum(counts["servicebus"], ops)
    bus["operations"] = sum(bus[k] for k in SERVICEBUS_BILLED)
    stores = _sum(counts["stores"], RU_PER_OPERATION)
    stores_ru = sum(RU_PER_OPERATION[k] * n for k, n in stores.items())
    http = {"remote": sum(counts["http"].values()),
            "durable_client": hub["starts"] + hub["events_raised"]}
    each = {"taskhub": {k: v / orders for k, v in hub.items()},
            "servicebus": {k: v / orders for k, v in bus.items()},
            "stores": {**{k: v / orders for k, v in stores.items()}, "ru": stores_ru / orders},
            "http": {k: v / orders for k, v in http.items()}}
    usd = {"dts": DTS_ACTION.cost(1000 * each["taskhub"]["dts_actions"]),
           "servicebus": SERVICEBUS_OPERATION.cost(1000 * each["servicebus"]["operations"]),
           "cosmos": COSMOS_RU.cost(1000 * each["stores"]["ru"])}
    usd["total"] = sum(usd.values())
    return {"orders": orders, **each, "usd_per_1000": usd}
