"""Every orchestration instance a query matches, page by page (continuation tokens).

The SDK's ``DurableOrchestrationClient.get_status_by`` asks the Durable HTTP API's list
route once and drops its ``x-ms-continuation-token`` response header, so it returns the
first page only: 100 instances, the extension's default page size (the local host answers
the same, SPEC L1). The retention pass must see every ended instance of its window, or
the oldest ones it keeps (attempts of orders still open) would hide the rest for ever, so
this module follows the token itself: the same URL the SDK builds
(``RpcManagementOptions``), on the same ``rpcBaseUrl`` the client binding carries.

May import: azure.durable_functions, httpx.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Any

import httpx
from azure.durable_functions.models.OrchestrationRuntimeStatus import (
    OrchestrationRuntimeStatus,
)
from azure.durable_functions.models.RpcManagementOptions import RpcManagementOptions

CONTINUATION_HEADER = "x-ms-continuation-token"
"""Request and response header of the list route's paging (Durable Functions HTTP API)."""
PAGE_SIZE = 100
"""Instances per page (``top``): the extension's default."""


async def instance_pages(client: Any, *, created_time_from: datetime,
                         created_time_to: datetime,
                         runtime_status: Sequence[OrchestrationRuntimeStatus],
                         page_size: int = PAGE_SIZE, timeout_s: float = 60.0,
                         ) -> AsyncIterator[list[str]]:
    """Yield the instance ids matching the query, one page at a time, until the last.

    Parameters
    ----------
    client : DurableOrchestrationClient
        A durable client binding (its ``rpcBaseUrl`` is the host's Durable HTTP API).
    created_time_from, created_time_to : datetime
        Creation time window (naive UTC, as the SDK sends it).
    runtime_status : sequence of OrchestrationRuntimeStatus
        Statuses to list.
    page_size : int
        ``top`` of each request.
    timeout_s : float
        Seconds one request may take.

    Yields
    ------
    list of str
        Instance ids of one page (possibly empty on the last).

    Raises
    ------
    httpx.HTTPError
        If a request fails or answers other than 200; the caller's timer tries again.
    """
    base = client._orchestration_bindings.rpc_base_url  # the binding's, not configured
    url = RpcManagementOptions(created_time_from=created_time_from,
                               created_time_to=created_time_to,
                               runtime_status=list(runtime_status)).to_url(base)
    url += f"&top={page_size}&showInput=false"
    token: str | None = None
    async with httpx.AsyncClient(timeout=timeout_s) as http:
        while True:
            answer = await http.get(url, headers={CONTINUATION_HEADER: token} if token else {})
            answer.raise_for_status()
            yield [status["instanceId"] for status in answer.json()]
            token = answer.headers.get(CONTINUATION_HEADER) or None
            if token is None:
                return
