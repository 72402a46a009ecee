"""Operator tools (SPEC S7, X2, X3, X8): the top floor, on everything else.

- what the operator CLI (``python -m opscli``, run on an operator's machine and not
  deployed) stands on: one order with its attempts' histories (:mod:`~ops.order_report`,
  :mod:`~ops.history`), resubmitting an order in Error (:mod:`~ops.resubmit`), the summary.
- :mod:`ops.summary` and :mod:`ops.blueprint`: the ``api/ops/summary`` endpoint and the
  periodic snapshot that feeds the backlog metrics (X3, X8).
- :mod:`ops.dashboard`: the operator dashboard page ``api/ops/dashboard`` over the same
  figures, with each order's histories and the resubmit action.

What the workflow uses to observe itself is below, in :mod:`orders.observability`; the
retry budget is :mod:`orders.budget`.

May import: anything deployed; never ``devhost`` or the rest of the workshop (not deployed).
"""
