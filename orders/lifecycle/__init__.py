"""An order's lifecycle, in one place: its states, who may change them, and its ids.

- :mod:`orders.lifecycle.transitions`: the table of allowed ProcessState transitions
  (from, to, who) and the one function that applies it;
- :mod:`orders.lifecycle.changes`: the named changes built on it (claim an attempt, hand
  over to compensation, recover, resubmit, ...);
- :mod:`orders.lifecycle.fencing`: the conditional write of an orchestration (SPEC S4);
- :mod:`orders.lifecycle.ids`: every id an order is known by.

May import: :mod:`orders.models` and :mod:`orders.stores` (ports) only.
"""
