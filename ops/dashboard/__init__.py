"""The operator dashboard, served by the app itself (S7, X8); see docs/operations.md, "Dashboard".

May import: what :mod:`ops` may (never ``devhost``).
"""
