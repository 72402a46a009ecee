"""How long ``call_*_with_retry`` waits after a failed attempt, as DTFx computes it.

Host behaviour mirrors durabletask ``src/DurableTask.Core/RetryInterceptor.cs``
(``Invoke``, ``ComputeNextDelay``) with the extension's options from the SDK's
``retryOptions`` (azure-functions-durable-extension ``RetryOptionsConverter.cs``,
``RetryOptions.cs``): ``firstRetryInterval * backoffCoefficient ** (attempt - 1)``, at most
``maxRetryInterval`` (defaults 6 days and 1; SDK 1.x sends neither). After the last
attempt DTFx still creates a timer, firing at once (DTFx PR #661), for replay to find.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

DEFAULT_MAX_RETRY_INTERVAL = timedelta(days=6)
"""The extension's ``RetryOptions.DefaultMaxRetryinterval``."""


def next_retry_delay(attempt: int, max_attempts: int, first_interval_ms: int,
                     options: dict[str, Any] | None = None) -> timedelta:
    """Return the wait after failed attempt ``attempt`` (1-based); zero after the last.

    ``options`` is the action's ``retryOptions`` (``backoffCoefficient``,
    ``maxRetryIntervalInMilliseconds``, when an SDK sends them).
    """
    if attempt >= max_attempts:
        return timedelta(0)
    opts = options or {}
    backoff = float(opts.get("backoffCoefficient", 1) or 1)
    ceiling = DEFAULT_MAX_RETRY_INTERVAL
    if opts.get("maxRetryIntervalInMilliseconds") is not None:
        ceiling = timedelta(milliseconds=int(opts["maxRetryIntervalInMilliseconds"]))
    delay = timedelta(milliseconds=first_interval_ms * backoff ** (attempt - 1))
    return min(delay, ceiling)
