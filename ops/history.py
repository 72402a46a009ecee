"""Attempts' status and history over the Durable Functions HTTP API (D5), locally and in Azure.

Azure needs the ``durabletask_extension`` key, sent as ``x-functions-key``, never in a URL.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from orders.errors import OrderServiceError

STATUS_PATH = "/runtime/webhooks/durabletask/instances/{instance_id}"


class HistoryError(OrderServiceError, RuntimeError):
    """The status endpoint could not be reached (``status`` None) or answered an error.

    Retryable when the host did not answer or answered 408, 429 or 5xx.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message, retryable=status is None or status in (408, 429)
                         or status >= 500)
        self.status = status


def fetch_status(base_url: str, instance_id: str, *, code: str | None = None,
                 client: httpx.Client | None = None,
                 timeout_s: float = 10.0) -> dict[str, Any] | None:
    """Return an instance's documented status with ``historyEvents``, or None if unknown.

    ``base_url`` is the host root; ``code`` the system key (Azure).

    Raises
    ------
    HistoryError
        If the host cannot be reached (retryable) or answers other than 200/202/404
        (retryable for 408, 429 and 5xx, else permanent).
    """
    url = base_url.rstrip("/") + STATUS_PATH.format(instance_id=quote(instance_id, safe=""))
    params = {"showHistory": "true", "showHistoryOutput": "true", "showInput": "true"}
    headers = {"x-functions-key": code} if code else {}
    own = client is None
    http = client or httpx.Client(timeout=timeout_s)
    try:
        response = http.get(url, params=params, headers=headers)
    except httpx.HTTPError as exc:
        raise HistoryError(f"{base_url}: cannot read instance {instance_id}: {exc} "
                           "(is the host running? see --host-url)") from exc
    finally:
        if own:
            http.close()
    if response.status_code == 404:
        return None
    if response.status_code not in (200, 202):  # 202: still running, body is the status
        raise HistoryError(f"{base_url}: instance {instance_id}: HTTP "
                           f"{response.status_code}: {response.text[:200]}",
                           status=response.status_code)
    status: dict[str, Any] = response.json()
    return status
