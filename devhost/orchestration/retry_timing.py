"""How long ``call_*_with_retry`` waits after a failed attempt, as DTFx computes it.

Host behaviour mirrors durabletask ``src/DurableTask.Core/RetryInterceptor.cs``
(``Invoke`` and ``ComputeNextDelay``) with the options the extension builds from the SDK's
``retryOptions`` (azure-functions-durable-extension ``RetryOptionsConverter.cs``,
``RetryOptions.cs``):

* after a failed attempt that is not the last, the next one starts after
  ``firstRetryInterval * backoffCoefficient ** (attempt - 1)``, at most
  ``maxRetryInterval`` (the extension's default: 6 days; the backoff coefficient defaults
  to 1, and the Python SDK 1.x sends neither);
* after the *last* attempt DTFx still creates a timer, because earlier versions did and
  replay must find it, but one that fires at once (DTFx PR #661), so the error reaches the
  orchestrator without a further wait.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

DEFAULT_MAX_RETRY_INTERVAL = timedelta(days=6)
"""The extension's ``RetryOptions.DefaultMaxRetryinterval``."""


def next_retry_delay(attempt: int, max_attempts: int, first_interval_ms: int,
                     options: dict[str, Any] | None = None) -> timedelta:
    """Return the wait after failed attempt number ``attempt`` (1-based).

    Parameters
    ----------
    attempt : int
        The attempt that just failed.
    max_attempts : int
        ``maxNumberOfAttempts``.
    first_interval_ms : int
        ``firstRetryIntervalInMilliseconds``.
    options : dict, optional
        The action's ``retryOptions``, for ``backoffCoefficient`` and
        ``maxRetryIntervalInMilliseconds`` when an SDK sends them.

    Returns
    -------
    timedelta
        Zero after the last attempt.
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
