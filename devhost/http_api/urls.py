"""URLs of the Durable HTTP API and the ``durableClient`` binding value that carries them.

The SDK's client reads ``rpcBaseUrl`` for every call and copies ``managementUrls`` into
check-status answers; the webhook prefix serves both, so the same URLs work for both.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote, urlsplit

WEBHOOK_PATH = "/runtime/webhooks/durabletask"
"""Path prefix of the Durable Functions HTTP API (Functions runtime 2.x and later)."""

INSTANCE_ID_PLACEHOLDER = "INSTANCEID"
"""Placeholder the SDK replaces with an instance id in ``managementUrls``."""

CONNECTION_NAME = "Storage"
"""``connection`` query value in management URLs; the local host has one task hub store."""

GRPC_HTTP_CLIENT_TIMEOUT = "00:01:40"
"""``grpcHttpClientTimeout`` of the binding value (100 s, the extension's default)."""


def check_base_url(base_url: str) -> str:
    """Return an absolute http(s) ``base_url`` without trailing ``/``; ValueError otherwise."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"base_url: must be an absolute http(s) URL such as "
                         f"http://127.0.0.1:7071, got {base_url!r}")
    if parts.query or parts.fragment:
        raise ValueError(f"base_url: must not have a query or fragment, got {base_url!r}")
    return base_url.rstrip("/")


def webhook_base(base_url: str) -> str:
    """Return the API's base URL, ``{base_url}/runtime/webhooks/durabletask`` (no slash)."""
    return check_base_url(base_url) + WEBHOOK_PATH


def rpc_base_url(base_url: str) -> str:
    """Return ``rpcBaseUrl`` for the SDK: the webhook base with a trailing slash."""
    return webhook_base(base_url) + "/"


def management_urls(base_url: str, task_hub_name: str, instance_id: str, *,
                    encode: bool = True) -> dict[str, str]:
    """Build one instance's management URLs (``encode`` False only for the placeholder)."""
    segment = quote(instance_id, safe="") if encode else instance_id
    prefix = f"{webhook_base(base_url)}/instances/{segment}"
    query = f"taskHub={quote(task_hub_name, safe='')}&connection={CONNECTION_NAME}"
    return {
        "id": instance_id,
        "statusQueryGetUri": f"{prefix}?{query}",
        "sendEventPostUri": f"{prefix}/raiseEvent/{{eventName}}?{query}",
        "terminatePostUri": f"{prefix}/terminate?reason={{text}}&{query}",
        "rewindPostUri": f"{prefix}/rewind?reason={{text}}&{query}",
        "purgeHistoryDeleteUri": f"{prefix}?{query}",
        "restartPostUri": f"{prefix}/restart?{query}",
        "suspendPostUri": f"{prefix}/suspend?reason={{text}}&{query}",
        "resumePostUri": f"{prefix}/resume?reason={{text}}&{query}",
    }


def check_status_payload(base_url: str, task_hub_name: str, instance_id: str
                         ) -> dict[str, str]:
    """Return the documented check-status (202) body: the URLs without ``rewindPostUri``."""
    urls = management_urls(base_url, task_hub_name, instance_id)
    del urls["rewindPostUri"]
    return urls


def client_binding_json(task_hub_name: str, base_url: str) -> str:
    """Return the ``durableClient`` binding JSON: the keys ``DurableOrchestrationClient`` reads.

    No system key is needed locally. Raises ValueError for a bad ``base_url`` or empty hub name.
    """
    if not task_hub_name:
        raise ValueError("task_hub_name: must not be empty")
    base = webhook_base(base_url)
    create = f"{base}/orchestrators/{{functionName}}[/{{instanceId}}]"
    value: dict[str, Any] = {
        "taskHubName": task_hub_name,
        "creationUrls": {
            "createNewInstancePostUri": create,
            "createAndWaitOnNewInstancePostUri":
                f"{create}?timeout={{timeoutInSeconds}}&pollingInterval={{intervalInSeconds}}",
        },
        "managementUrls": management_urls(base_url, task_hub_name, INSTANCE_ID_PLACEHOLDER,
                                          encode=False),
        "baseUrl": base,
        "requiredQueryStringParameters": "",
        "rpcBaseUrl": base + "/",
        "httpBaseUrl": base,
        "maxGrpcMessageSizeInBytes": 0,
        "grpcHttpClientTimeout": GRPC_HTTP_CLIENT_TIMEOUT,
    }
    return json.dumps(value)
