"""What the app checks and installs once, when its services are first built (SPEC X2, X8).

:func:`refuse_invalid_settings` runs when ``function_app.py`` is imported by a Functions
host: every setting and the retry budget are checked before any function runs.
:func:`on_start` is called by :func:`orders.runtime.build_services`: it refuses a
configuration whose retries can exceed the retry budget (before any message is taken),
makes every log record carry the order ids, and installs the metrics exporters and the
local trace store.
"""

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
    """Refuse settings whose retries can exceed the retry budget (SPEC X2).

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
        Naming the budget, the settings to change, or the queue property at fault.
    """
    try:
        return check_budget(settings, load_queue_limits(queues_file))
    except (BudgetError, QueueFileError) as exc:
        raise SettingsError(f"invalid app settings: {exc}") from exc


def refuse_invalid_settings(environ: Mapping[str, str] | None = None) -> None:
    """Validate every app setting and the retry budget as the app loads (SPEC X2).

    ``function_app.py`` calls this at import, so a bad value stops the app when the host
    loads it, with one line naming the setting and its rule, instead of the first use of
    the settings failing in every invocation (every timer tick). A Functions host whose
    app raises at import reports the error and runs none of its functions (the Python
    worker answers the host's functions-metadata request with the indexing failure,
    Azure/azure-functions-python-worker ``azure_functions_worker/dispatcher.py``; the local
    host prints it in one line, :mod:`devhost.app.load_errors`). Outside a Functions host
    (``FUNCTIONS_WORKER_RUNTIME`` unset: a script listing the functions) nothing is
    checked; the first invocation still is.

    Parameters
    ----------
    environ : mapping, optional
        Where ``FUNCTIONS_WORKER_RUNTIME`` is looked up; defaults to ``os.environ``. The
        settings themselves are read from ``os.environ``, as :func:`load_settings` does.

    Raises
    ------
    SettingsError
        Naming each invalid setting and its rule, or the retry budget exceeded.
    """
    env = os.environ if environ is None else environ
    if not env.get(FUNCTIONS_HOST_SETTING):
        return
    check_retry_budget(read_settings())


def on_start(settings: Any, queues_file: str | None = None) -> dict[str, int]:
    """Validate the retry budget, then set up logging ids and telemetry.

    Parameters, return value and errors are those of :func:`check_retry_budget`: it
    refuses settings whose retries can exceed ``RETRY_BUDGET_CALLS_PER_SERVICE``, or
    queue properties that cannot be read (SPEC X2), before anything is installed.
    """
    calls = check_retry_budget(settings, queues_file)
    install_log_record_factory()
    configure_telemetry(settings)
    configure_tracing(settings)
    return calls
