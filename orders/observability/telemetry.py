"""Where metrics, logs and traces go: Azure Monitor, or files of the data folder (X8).

With ``APPLICATIONINSIGHTS_CONNECTION_STRING`` set, the Azure Monitor OpenTelemetry distro
(``azure-monitor-opentelemetry``, imported only then) exports the ``orders`` metrics, the
``orders.*`` loggers' records, whose OrderID / instance id / attempt attributes
(:mod:`orders.observability.logs`) become custom dimensions, and the spans, sampled at
``TRACE_SAMPLE_RATIO`` on the trace id (a whole order is in or out). Without it, an SDK
meter provider appends the metrics to ``metrics.jsonl`` of the local host's data folder
every ``METRICS_EXPORT_INTERVAL_S`` (the console stays for what a person reads; with no data
folder they go to the console, the Functions host's log), and :func:`configure_tracing`
sends the spans to the local trace store (:mod:`orders.observability.trace_store`).
Configured once per process.
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
"""File of the data folder the metrics are appended to without Azure Monitor: one JSON line
(OpenTelemetry's ``MetricsData`` form) per export and process."""

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
        ``APPLICATIONINSIGHTS_AUTHENTICATION_STRING``, ``METRICS_EXPORT_INTERVAL_S`` and
        ``TRACE_SAMPLE_RATIO``.

    Returns
    -------
    str
        ``"azuremonitor"``, ``"file"`` (:data:`METRICS_FILE` of ``DEVHOST_DATA_DIR``) or
        ``"console"``: what this call or an earlier one installed.

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


class AppendOnlyLines:
    """A text sink that appends each write to a file with one ``write(2)`` (``O_APPEND``).

    The host's processes share one data folder: one system call per exported line keeps
    their lines whole, where a buffered file would split a line longer than its buffer.

    Parameters
    ----------
    path : Path
        The file; created if missing, its folder too.
    """

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
    """Build a meter provider that prints metrics to ``out`` (stdout) every ``interval_s``.

    Each export is one JSON line (OpenTelemetry's ``MetricsData`` JSON form).

    It is not shut down at exit (``shutdown_on_exit=False``): a local run that stops loses
    at most one interval, instead of every test run ending with a metrics dump.
    """
    import sys

    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import (
        ConsoleMetricExporter,
        PeriodicExportingMetricReader,
    )

    # One JSON line per export, not the SDK's indented dump of hundreds of lines, so the
    # metrics do not bury the log lines around them in host.log.
    exporter = ConsoleMetricExporter(
        out=out or sys.stdout, formatter=lambda data: data.to_json(indent=None) + "\n")
    reader = PeriodicExportingMetricReader(exporter,
                                           export_interval_millis=interval_s * 1000)
    return MeterProvider(metric_readers=[reader], shutdown_on_exit=False)


_local_traces: Any = None
"""The local tracer provider and its exporter, once :func:`configure_tracing` set them."""


def order_sampler(ratio: float) -> Any:
    """Return the local sampler: a whole order in or out, at ``ratio`` (SPEC X8).

    Parent-based: a span with a parent follows its parent's decision, which travels in the
    ``traceparent`` flags; a root (the submission) is kept when its trace id falls within
    ``ratio`` (``TraceIdRatioBased``). Azure Monitor's sampler also decides on the trace id.
    """
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    return ParentBased(TraceIdRatioBased(ratio))


def configure_tracing(settings: Any) -> Path | None:
    """Send this process's spans to the local trace store of its data folder (SPEC X8).

    Called with every build of the services: the first call installs the global tracer
    provider (sampler :func:`order_sampler`, a batch span processor, so a step never waits
    for the store); a later one for another data folder flushes and moves the exporter
    there (a test process builds one host after another).

    Parameters
    ----------
    settings : orders.settings.Settings
        Uses ``APPLICATIONINSIGHTS_CONNECTION_STRING`` (set: the distro exports the spans,
        nothing to do here), ``DEVHOST_DATA_DIR``, ``TRACE_SAMPLE_RATIO`` and
        ``RETENTION_DAYS`` (spans older than that are deleted from the store).

    Returns
    -------
    Path or None
        The trace store written to, or None when spans go to Azure Monitor or there is no
        data folder.
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
    """Export every finished span now (tests, the operator CLI, a host stopping).

    Returns
    -------
    bool
        False if the provider did not finish within ``timeout_s``.
    """
    flush = getattr(trace.get_tracer_provider(), "force_flush", None)
    return bool(flush(int(timeout_s * 1000))) if flush is not None else True
