"""What the app checks and installs once: settings, retry budget (X2), logs, telemetry (X8)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from orders.budget import BudgetError, check_budget
from orders.observability.logs import install_log_record_factory
from orders.observability.telemetry import configure_telemetry, configure_tracing
from orders.queues import QueueFileError, load_queue_limits
from orders.settings import SettingsError, read_settings

FUNCTIONS_HOST_SETTING = "FUNCTIONS_WORKER_RUNTIME"
"""Set by every Functions host (Azure, and the local host from ``local.settings.json``)."""


def check_retry_budget(settings: Any, queues_file: str | None = None) -> dict[str, int]:
    """Return the most calls per order to each service; SettingsError naming what to change (X2)."""
    try:
        return check_budget(settings, load_queue_limits(queues_file))
    except (BudgetError, QueueFileError) as exc:
        raise SettingsError(f"invalid app settings: {exc}") from exc


def refuse_invalid_settings(environ: Mapping[str, str] | None = None) -> None:
    """Validate every setting and the retry budget under a Functions host (X2); SettingsError.

    A host whose app raises at import runs none of its functions (the Python worker answers
    the functions-metadata request with the indexing failure,
    Azure/azure-functions-python-worker ``azure_functions_worker/dispatcher.py``).
    """
    env = os.environ if environ is None else environ
    if not env.get(FUNCTIONS_HOST_SETTING):
        return
    check_retry_budget(read_settings())


def on_start(settings: Any, queues_file: str | None = None) -> dict[str, int]:
    """Check the retry budget (:func:`check_retry_budget`), then set up log ids and telemetry."""
    calls = check_retry_budget(settings, queues_file)
    install_log_record_factory()
    configure_telemetry(settings)
    configure_tracing(settings)
    return calls
