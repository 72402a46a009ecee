"""Every orchestration instance a query matches, page by page (continuation tokens).

The SDK's ``get_status_by`` returns the first page only; why that matters:
docs/operations.md, "Retention". May import: azure.durable_functions, httpx.
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
PAGE_SIZE = 100
"""Instances per page (``top``): the extension's default."""


async def instance_pages(client: Any, *, created_time_from: datetime,
                         created_time_to: datetime,
                         runtime_status: Sequence[OrchestrationRuntimeStatus],
                         page_size: int = PAGE_SIZE, timeout_s: float = 60.0,
                         ) -> AsyncIterator[list[str]]:
    """Yield the ids of the instances matching the query, one page at a time, until the last.

    The creation window is naive UTC, as the SDK sends it; the last page may be empty.

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
