"""What the app checks and installs once, when its services are first built (SPEC X2, X8).

:func:`on_start` is called by :func:`orders.runtime.build_services`: it refuses a
configuration whose retries can exceed the retry budget (before any message is taken),
makes every log record carry the order ids, and installs the metrics exporters and the
local trace store.
"""

from __future__ import annotations

from typing import Any

from orders.budget import BudgetError, check_budget
from orders.observability.logs import install_log_record_factory
from orders.observability.telemetry import configure_telemetry, configure_tracing
from orders.queues import QueueFileError, load_queue_limits
from orders.settings import SettingsError


def on_start(settings: Any, queues_file: str | None = None) -> dict[str, int]:
    """Validate the retry budget, then set up logging ids and telemetry.

    Parameters
    ----------
    settings : orders.settings.Settings
        The app settings.
    queues_file : str, optional
        Queue properties; defaults to ``infra/queues.json``.

    Returns
    -------
    dict of str to int
        The most calls per order to each remote service.

    Raises
    ------
    SettingsError
        If the configured retries can exceed ``RETRY_BUDGET_CALLS_PER_SERVICE`` or the queue
        properties cannot be read (the message names the setting or property; SPEC X2).
    """
    try:
        calls = check_budget(settings, load_queue_limits(queues_file))
    except (BudgetError, QueueFileError) as exc:
        raise SettingsError(f"invalid app settings: {exc}") from exc
    install_log_record_factory()
    configure_telemetry(settings)
    configure_tracing(settings)
    return calls
