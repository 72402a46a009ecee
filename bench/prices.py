"""Published Azure unit prices the cost per order is priced with, each named and dated.

US list prices, pay-as-you-go, in US dollars, as read on the date given; a region or an
agreement changes them, so the report prints the counts they multiply too. ``confirmed``
is False for a price whose figure was not on the page as stored when it was read (the
page renders prices by script): check it there before quoting the dollars.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    """One unit price: ``usd`` per ``per`` units of ``unit``."""

    name: str
    usd: float
    per: int
    unit: str
    source: str
    as_of: str
    confirmed: bool

    def cost(self, units: float) -> float:
        """Return the dollars ``units`` units cost."""
        return self.usd * units / self.per


DTS_ACTION = Price(
    name="Durable Task Scheduler, Consumption SKU", usd=3.00, per=1_000_000, unit="action",
    source="https://learn.microsoft.com/azure/azure-functions/durable/durable-task-scheduler/"
           "durable-task-scheduler-billing",
    as_of="2026-12-01", confirmed=False)
"""An action is a message the scheduler dispatches: an orchestration start, an activity's
schedule and its result (two), a timer completing, an external event (the page's
definition). The Dedicated SKU is a fixed monthly price per capacity unit (2,000
actions/s) instead: no cost per order below that rate."""

SERVICEBUS_OPERATION = Price(
    name="Service Bus Standard, 13M-100M operations/month (first 13M in the base charge)",
    usd=0.80, per=1_000_000, unit="operation",
    source="https://azure.microsoft.com/pricing/details/service-bus/",
    as_of="2026-12-01", confirmed=False)
"""An operation is any API call to Service Bus (the pricing page): a send, a receive, a
complete, an abandon, a dead-letter, a lock renewal."""

COSMOS_RU = Price(
    name="Cosmos DB serverless, request units", usd=0.25, per=1_000_000, unit="RU",
    source="https://azure.microsoft.com/pricing/details/cosmos-db/serverless/",
    as_of="2026-12-01", confirmed=False)

RU_PER_OPERATION = {"point_read": 1.0, "write": 6.0, "query": 3.0}
"""Estimated request units per store operation on items of about 1 KB: a point read is 1
RU (https://learn.microsoft.com/azure/cosmos-db/request-units); a write about 5-10 with
the default indexing policy (6 taken); a small single-partition query about 3."""

PRICES = (DTS_ACTION, SERVICEBUS_OPERATION, COSMOS_RU)
