"""What the workflow emits to observe itself (SPEC X8): logs, metrics, telemetry export.

- :mod:`orders.observability.logs`: replay-safe logging with OrderID, instance id and
  attempt on every record;
- :mod:`orders.observability.metrics`: the OpenTelemetry instruments and what records them;
- :mod:`orders.observability.tracing`: one trace per order, the spans of its steps and
  the W3C trace context they travel with;
- :mod:`orders.observability.trace_store`: the local trace store (a SQLite span exporter
  and its reader);
- :mod:`orders.observability.telemetry`: export to Azure Monitor, or the console and the
  local trace store.

May import: :mod:`orders.settings`, :mod:`orders.lifecycle.ids` (id formats),
:mod:`sqlitekit` and third-party libraries only;
every role uses it, so it uses none of them.
"""

