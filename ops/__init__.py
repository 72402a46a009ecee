"""Operator tools (S7, X2, X3, X8): what the CLI stands on, the summary, the dashboard.

May import: anything deployed; never ``devhost`` or the rest of the workshop (not deployed).
"""
