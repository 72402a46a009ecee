"""What the workflow emits to observe itself (SPEC X8): logs, metrics, telemetry export.

- :mod:`orders.observability.logs`: replay-safe logging with OrderID, instance id and
  attempt on every record;
- :mod:`orders.observability.metrics`: the OpenTelemetry instruments and what records them;
- :mod:`orders.observability.telemetry`: export to Azure Monitor or the console.

May import: :mod:`orders.settings` and third-party libraries only; every role uses it,
so it uses none of them.
"""

