"""Run the operator CLI: ``python -m opscli --help``."""

from opscli.cli import app

app()
