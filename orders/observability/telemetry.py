"""Where metrics and logs go: Azure Monitor in Azure, the console locally (SPEC X8).

With ``APPLICATIONINSIGHTS_CONNECTION_STRING`` set, the Azure Monitor OpenTelemetry distro
(``azure-monitor-opentelemetry``, imported only then) exports the ``orders`` metrics and
the ``orders.*`` loggers' records, whose OrderID / instance id / attempt attributes
(:mod:`orders.observability.logs`) become custom dimensions. Without it, an SDK meter
provider prints the metrics to the console every ``METRICS_EXPORT_INTERVAL_S``.
Configured once per process.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from opentelemetry import metrics

log = logging.getLogger("orders.ops")

APP_LOGGER = "orders"
"""Logger whose records (and its children's) Azure Monitor collects; the Functions host
already collects its own and the worker's logs, so the root logger is not taken."""

_lock = threading.Lock()
_configured: str | None = None


def configure_telemetry(settings: Any) -> str:
    """Install the metrics (and, in Azure, log) exporters once per process.

    Parameters
    ----------
    settings : orders.settings.Settings
        Uses ``APPLICATIONINSIGHTS_CONNECTION_STRING``,
        ``APPLICATIONINSIGHTS_AUTHENTICATION_STRING`` and ``METRICS_EXPORT_INTERVAL_S``.

    Returns
    -------
    str
        ``"azuremonitor"`` or ``"console"``: what this call or an earlier one installed.

    Raises
    ------
    ImportError
        If a connection string is set but ``azure-monitor-opentelemetry`` is not installed.
    ValueError
        If ``APPLICATIONINSIGHTS_AUTHENTICATION_STRING`` is set but malformed.
    """
    global _configured
    with _lock:
        if _configured is not None:
            return _configured
        connection = (settings.APPLICATIONINSIGHTS_CONNECTION_STRING or "").strip()
        if connection:
            from azure.monitor.opentelemetry import configure_azure_monitor

            configure_azure_monitor(connection_string=connection, logger_name=APP_LOGGER,
                                    **entra_credential(settings))
            _configured = "azuremonitor"
        else:
            metrics.set_meter_provider(console_meter_provider(settings.METRICS_EXPORT_INTERVAL_S))
            _configured = "console"
        log.info("telemetry: metrics exported to %s", _configured)
        return _configured


def entra_credential(settings: Any) -> dict[str, Any]:
    """Return ``{"credential": ...}`` for ``Authorization=AAD[;ClientId=<id>]``, else ``{}``.

    Application Insights with local authentication disabled accepts telemetry only with an
    Entra ID token; the Functions host reads the same setting for its own telemetry.
    """
    text = (settings.APPLICATIONINSIGHTS_AUTHENTICATION_STRING or "").strip()
    if not text:
        return {}
    parts = dict(p.split("=", 1) for p in text.split(";") if "=" in p)
    if parts.get("Authorization", "").upper() != "AAD":
        raise ValueError("APPLICATIONINSIGHTS_AUTHENTICATION_STRING: must be "
                         f"'Authorization=AAD;ClientId=<id>'; got {text!r}")
    from azure.identity import ManagedIdentityCredential

    client_id = parts.get("ClientId")
    return {"credential": ManagedIdentityCredential(client_id=client_id) if client_id
            else ManagedIdentityCredential()}


def console_meter_provider(interval_s: float, out: Any = None) -> Any:
    """Build a meter provider that prints metrics to ``out`` (stdout) every ``interval_s``.

    It is not shut down at exit (``shutdown_on_exit=False``): a local run that stops loses
    at most one interval, instead of every test run ending with a metrics dump.
    """
    import sys

    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import (
        ConsoleMetricExporter,
        PeriodicExportingMetricReader,
    )

    exporter = ConsoleMetricExporter(out=out or sys.stdout)
    reader = PeriodicExportingMetricReader(exporter,
                                           export_interval_millis=interval_s * 1000)
    return MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
