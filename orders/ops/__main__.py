"""Run the operator CLI: ``python -m orders.ops --help``."""

from orders.ops.cli import app

app()
