"""Run the operator CLI: ``python -m ops --help``."""

from ops.cli import app

app()
