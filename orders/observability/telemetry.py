"""Where metrics, logs and traces go: Azure Monitor, or files of the data folder (X8).

With ``APPLICATIONINSIGHTS_CONNECTION_STRING``, the Azure Monitor distro exports all three
(spans sampled per trace id, so a whole order is in or out); otherwise metrics go to
``metrics.jsonl`` (or the console) and spans to the local trace store. Once per process.
"""

from __future__ import annotations

import logging
import os
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

from opentelemetry import metrics, trace

log = logging.getLogger("orders.ops")

METRICS_FILE = "metrics.jsonl"

APP_LOGGER = "orders"
"""Logger Azure Monitor collects; not the root, whose records the Functions host collects."""

_lock = threading.Lock()
_configured: str | None = None


def configure_telemetry(settings: Any) -> str:
    """Install the metrics (in Azure, also log) exporters once; return which.

    Returns ``"azuremonitor"``, ``"file"`` or ``"console"``. Raises ImportError without the
    distro when a connection string is set, ValueError for a malformed authentication string.
    """
    global _configured
    with _lock:
        if _configured is not None:
            return _configured
        connection = (settings.APPLICATIONINSIGHTS_CONNECTION_STRING or "").strip()
        if connection:
            from azure.monitor.opentelemetry import configure_azure_monitor

            configure_azure_monitor(connection_string=connection, logger_name=APP_LOGGER,
                                    sampling_ratio=settings.TRACE_SAMPLE_RATIO,
                                    **entra_credential(settings))
            _configured = "azuremonitor"
        elif settings.DEVHOST_DATA_DIR:
            out = AppendOnlyLines(Path(settings.DEVHOST_DATA_DIR) / METRICS_FILE)
            metrics.set_meter_provider(
                console_meter_provider(settings.METRICS_EXPORT_INTERVAL_S, out=out))
            _configured = "file"
        else:
            metrics.set_meter_provider(console_meter_provider(settings.METRICS_EXPORT_INTERVAL_S))
            _configured = "console"
        log.info("telemetry: metrics exported to %s", _configured)
        return _configured


def entra_credential(settings: Any) -> dict[str, Any]:
    """Return ``{"credential": ...}`` for ``Authorization=AAD[;ClientId=<id>]``, else ``{}``."""
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


class AppendOnlyLines:
    """A text sink appending each write with one ``write(2)``, so processes' lines stay whole."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def write(self, text: str) -> int:
        """Append ``text``; returns the characters written."""
        os.write(self._fd, text.encode("utf-8"))
        return len(text)

    def flush(self) -> None:
        """Nothing to flush: every write went to the file."""


def console_meter_provider(interval_s: float, out: Any = None) -> Any:
    """Build a meter provider printing one JSON line per export to ``out`` every ``interval_s``.

    Not shut down at exit: a stopped local run loses at most one interval, no metrics dump.
    """
    import sys

    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import (
        ConsoleMetricExporter,
        PeriodicExportingMetricReader,
    )

    exporter = ConsoleMetricExporter(
        out=out or sys.stdout, formatter=lambda data: data.to_json(indent=None) + "\n")
    reader = PeriodicExportingMetricReader(exporter,
                                           export_interval_millis=interval_s * 1000)
    return MeterProvider(metric_readers=[reader], shutdown_on_exit=False)


_local_traces: Any = None


def order_sampler(ratio: float) -> Any:
    """Return the local sampler: parent-based, a root kept by trace id at ``ratio`` (X8)."""
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    return ParentBased(TraceIdRatioBased(ratio))


def configure_tracing(settings: Any) -> Path | None:
    """Send this process's spans to its data folder's local trace store (X8).

    Installs the global provider once (batch processor: a step never waits); a later call
    for another folder moves the exporter. Returns None when Azure Monitor exports the spans
    or there is no data folder.
    """
    global _local_traces
    if (settings.APPLICATIONINSIGHTS_CONNECTION_STRING or "").strip() \
            or not settings.DEVHOST_DATA_DIR:
        return None
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from orders.observability.trace_store import TRACE_FILE, SqliteSpanExporter

    path = Path(settings.DEVHOST_DATA_DIR) / TRACE_FILE
    with _lock:
        if _local_traces is None:
            exporter = SqliteSpanExporter(
                path, retention=timedelta(days=settings.RETENTION_DAYS))
            provider = trace.get_tracer_provider()
            if not hasattr(provider, "add_span_processor"):  # none installed yet
                provider = TracerProvider(sampler=order_sampler(settings.TRACE_SAMPLE_RATIO),
                                          resource=Resource({"service.name": APP_LOGGER}))
                trace.set_tracer_provider(provider)
            # A queue deep enough for a burst of orders; a full queue drops spans, never waits.
            provider.add_span_processor(BatchSpanProcessor(
                exporter, max_queue_size=16_384, max_export_batch_size=1024,
                schedule_delay_millis=500))
            _local_traces = (provider, exporter)
        elif _local_traces[1].path != path:
            _local_traces[0].force_flush()
            _local_traces[1].retarget(path)
    return path


def flush_traces(timeout_s: float = 10.0) -> bool:
    """Export every finished span now; False if not done within ``timeout_s``."""
    flush = getattr(trace.get_tracer_provider(), "force_flush", None)
    return bool(flush(int(timeout_s * 1000))) if flush is not None else True
