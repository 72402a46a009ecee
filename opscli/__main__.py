"""Run the operator CLI: ``python -m opscli --help``."""

import sys

from opscli.cli import app, hoist_data_dir

app(args=hoist_data_dir(sys.argv[1:]), prog_name="python -m opscli")
