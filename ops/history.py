"""Orchestration status and history of an attempt, through the Durable Functions HTTP API (D5).

``GET {base}/runtime/webhooks/durabletask/instances/{instanceId}?showHistory=true`` is the
documented instance query of Durable Functions: the local host serves it on its own port
(default ``http://127.0.0.1:7071``) and a Function App in Azure on
``https://<app>.azurewebsites.net``, where it needs the ``durabletask_extension`` system
key, sent in the ``x-functions-key`` header (never in the URL, where proxies and logs keep
it). Reading it over HTTP, instead of opening the task hub, works the same against both.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from orders.errors import OrderServiceError

STATUS_PATH = "/runtime/webhooks/durabletask/instances/{instance_id}"
"""Instance status endpoint of the Durable Functions HTTP API."""


class HistoryError(OrderServiceError, RuntimeError):
    """The status endpoint could not be reached or answered an error.

    Retryable when the host did not answer or answered 408, 429 or 5xx; permanent for
    any other status (a wrong system key: 401/403).

    Attributes
    ----------
    status : int or None
        The HTTP status, or None if the host did not answer.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message, retryable=status is None or status in (408, 429)
                         or status >= 500)
        self.status = status


def fetch_status(base_url: str, instance_id: str, *, code: str | None = None,
                 client: httpx.Client | None = None,
                 timeout_s: float = 10.0) -> dict[str, Any] | None:
    """Return an instance's status with its history, or None if the task hub has no such id.

    Parameters
    ----------
    base_url : str
        Host root, e.g. ``http://127.0.0.1:7071`` or ``https://<app>.azurewebsites.net``.
    instance_id : str
        Orchestration instance id (``<OrderID>:<attempt>``); URL-encoded here.
    code : str, optional
        The ``durabletask_extension`` system key (Azure), sent as ``x-functions-key``.
    client : httpx.Client, optional
        Client to use (tests); a new one otherwise.
    timeout_s : float
        Request timeout in seconds.

    Returns
    -------
    dict or None
        The documented status object (``runtimeStatus``, ``createdTime``,
        ``lastUpdatedTime``, ``input``, ``output``, ``historyEvents``, ...).

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
