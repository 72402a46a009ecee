"""Operations: what operators and monitoring need to run the order service (SPEC S7, X2, X3, X8).

- :mod:`orders.ops.cli` (``python -m orders.ops``): list orders by state, show one order with
  its attempts' histories (:mod:`~orders.ops.order_report`, :mod:`~orders.ops.history`),
  resubmit an order in Error (:mod:`~orders.ops.resubmit`), the summary.
- :mod:`orders.ops.budget` with :mod:`orders.ops.queues`: the end-to-end retry budget,
  checked at start-up by :mod:`orders.ops.startup` (X2).
- :mod:`orders.ops.summary` and :mod:`orders.ops.blueprint`: the ``api/ops/summary``
  endpoint and the periodic snapshot that feeds the backlog metrics (X3, X8).
- :mod:`orders.ops.metrics`, :mod:`orders.ops.telemetry`, :mod:`orders.ops.logs`:
  OpenTelemetry metrics and log records that carry OrderID, instance id and attempt (X8).

Nothing here imports the local host (``devhost``) at module level: it is not deployed.
"""
