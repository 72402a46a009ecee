"""Entry point: ``python -m simulator --port 7072 --ledger PATH [--config faults.json]``."""

from simulator.cli import main

main()
