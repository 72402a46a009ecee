"""The "cost per order" section of ``bench/RESULTS.md`` (:mod:`bench.costs` figures)."""

from __future__ import annotations

from typing import Any

from bench.prices import PRICES, RU_PER_OPERATION

ROWS: tuple[tuple[str, str, str], ...] = (
    ("taskhub", "episodes", "episodes (OrchestratorStarted)"),
    ("taskhub", "starts", "orchestration starts (ExecutionStarted)"),
    ("taskhub", "activities", "activities (TaskScheduled)"),
    ("taskhub", "timers", "timers created (TimerCreated)"),
    ("taskhub", "timers_fired", "timers fired (TimerFired)"),
    ("taskhub", "events_raised", "events raised (EventRaised)"),
    ("taskhub", "suborchestrations", "sub-orchestrations"),
    ("taskhub", "dts_actions", "**Durable Task Scheduler actions**"),
    ("servicebus", "sent", "Service Bus messages sent"),
    ("servicebus", "send_calls", "Service Bus send calls"),
    ("servicebus", "receive_calls", "Service Bus receive calls, local (non-empty)"),
    ("servicebus", "delivered", "Service Bus deliveries"),
    ("servicebus", "completes", "Service Bus completes"),
    ("servicebus", "abandons", "Service Bus abandons"),
    ("servicebus", "dead_letters", "Service Bus dead-letters"),
    ("servicebus", "lock_renewals", "Service Bus lock renewals"),
    ("servicebus", "operations", "**Service Bus operations billed**"),
    ("stores", "point_read", "store point reads"),
    ("stores", "write", "store writes"),
    ("stores", "query", "store queries"),
    ("stores", "ru", "**Cosmos DB RU (estimated)**"),
    ("http", "remote", "HTTP calls to payment/shipping"),
    ("http", "durable_client", "durable client HTTP calls (starts + events raised)"),
)
"""(group, key, label) of each per-order row, in report order."""


def _variant(run: dict[str, Any]) -> str:
    return f"{run['faults']} faults, {run['offered']}".replace("none faults", "no faults")


def _attempts(run: dict[str, Any]) -> list[str]:
    """One attempt of each orchestrator and outcome: its mean history counts."""
    profiles = run["host"]["cost"]["counts"].get("attempts") or {}
    if not profiles:
        return []
    lines = ["", f"One attempt by orchestrator and outcome ({_variant(run)}; mean per "
             "instance: what an attempt costs whatever the retries; more attempts than "
             "orders are the supervisor's retries of attempts that missed CompleteBy):", "",
             "| attempt | instances | episodes | activities | timers | events raised | "
             "DTS actions |", "|---|---:|---:|---:|---:|---:|---:|"]
    for kind, p in profiles.items():
        lines.append(f"| {kind} | {p['instances']:.0f} | {p['episodes']:.1f} | "
                     f"{p['activities']:.1f} | {p['timers']:.1f} | {p['events_raised']:.1f} | "
                     f"{p['dts_actions']:.1f} |")
    return lines


def cost_lines(runs: list[dict[str, Any]], measured: str = "") -> list[str]:
    """Render the section from runs of ``{"faults", "offered", "host"}`` with a ``cost``.

    ``measured`` says where the figures come from when not from the report's own run.
    """
    priced = [r for r in runs if "cost" in r["host"]]
    if not priced:
        return []
    heads = [_variant(r) for r in priced]
    each = [r["host"]["cost"]["per_order"] for r in priced]
    lines = ["## Cost per order on Azure", "", *([measured, ""] if measured else []),
             f"Counted after each host run ({each[0]['orders']} orders) from its durable "
             "state: the task hub's history, the local Service Bus's operation counts (the "
             "clients' sends and receives included), the stores' operation counts as the "
             "Cosmos DB adapter would make them, the simulator's request ledger "
             "(`bench/costs.py`). Per order, with the starter's and supervisor's timer "
             "queries (they poll every second whatever the load) spread over the orders.", "",
             "| per order | " + " | ".join(heads) + " |",
             "|---|" + "---:|" * len(heads)]
    for group, key, label in ROWS:
        lines.append(f"| {label} | " + " | ".join(f"{e[group].get(key, 0):.2f}" for e in each)
                     + " |")
    for key, label in (("dts", "Durable Task Scheduler"), ("servicebus", "Service Bus"),
                       ("cosmos", "Cosmos DB serverless"), ("total", "**total**")):
        lines.append(f"| $ per 1,000 orders: {label} | "
                     + " | ".join(f"{e['usd_per_1000'][key]:.4f}" for e in each) + " |")
    lines += ["", "Outcomes: " + "; ".join(
        f"{_variant(r)}: processed {r['host'].get('processed', 'n/a')}, error "
        f"{r['host'].get('error', 'n/a')}, recovered "
        f"{r['host'].get('recovered', 'n/a')}" for r in priced) + "."]
    lines += _attempts(priced[0])
    ru = ", ".join(f"{k.replace('_', ' ')} {v:g} RU" for k, v in RU_PER_OPERATION.items())
    lines += ["", f"Prices (`bench/prices.py`; RU per operation estimated: {ru}):", "",
              "| price | US$ | per | as of | source |", "|---|---:|---|---|---|"]
    for p in PRICES:
        mark = "" if p.confirmed else " (figure to confirm on the page)"
        lines.append(f"| {p.name}{mark} | {p.usd:.2f} | {p.per:,} {p.unit}s | {p.as_of} | "
                     f"{p.source} |")
    return [*lines, ""]
