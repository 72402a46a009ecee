"""What the workflow emits to observe itself (X8): logs, metrics, traces and their export.

May import :mod:`orders.settings`, :mod:`orders.lifecycle.ids`, :mod:`sqlitekit` and
third-party libraries only: every role uses it.
"""

