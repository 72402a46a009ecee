"""Command line of the simulator: ``python -m simulator --port 7072 --ledger PATH``."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from datetime import timedelta

import uvicorn
from starlette.applications import Starlette

from clocks import SystemClock
from simulator.app import create_app
from simulator.config import load_update
from simulator.guard import LOOPBACK_HOSTS
from simulator.server import SHUTDOWN_GRACE_S

DEFAULT_PORT = 7072
DEFAULT_RETENTION_DAYS = 30.0


MAX_RETENTION_DAYS = 36_500
"""A century: the longest ``--retention-days`` (as the app's ``RETENTION_DAYS``)."""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line (default ``sys.argv[1:]``); ``trace_store`` is None if not given."""
    parser = argparse.ArgumentParser(
        prog="python -m simulator",
        description="Simulated PAYMENT and SHIPPING APIs with fault knobs and a ledger.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface (default: loopback)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="TCP port (7072)")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="a host name the simulator answers to besides the loopback "
                             "names and --host (repeatable): any other Host header is "
                             "refused with 403 (DNS rebinding)")
    parser.add_argument("--ledger", required=True, help="SQLite ledger file (created if missing)")
    parser.add_argument("--config", help="JSON fault config, same shape as POST /_admin/faults")
    parser.add_argument("--trace-store", help="SQLite trace store to write the services' "
                                              "spans to (e.g. the host's traces.sqlite)")
    parser.add_argument("--retention-days", type=float, default=DEFAULT_RETENTION_DAYS,
                        help="forget idempotency keys, settled (undone) effects and "
                             "--trace-store spans older than this "
                             f"(default {DEFAULT_RETENTION_DAYS:g}; 0 keeps everything)")
    args = parser.parse_args(argv)
    if not 0 <= args.retention_days <= MAX_RETENTION_DAYS:  # also refuses nan and inf
        parser.error(f"--retention-days: must be 0 to {MAX_RETENTION_DAYS} (days), "
                     f"got {args.retention_days:g}")
    return args


def export_spans(path: str, retention: timedelta | None = None) -> None:
    """Send the services' server spans to the trace store at ``path`` (X8), kept ``retention``."""
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from orders.observability.trace_store import SqliteSpanExporter

    provider = TracerProvider(resource=Resource({"service.name": "simulator"}))
    provider.add_span_processor(BatchSpanProcessor(SqliteSpanExporter(path, retention),
                                                   schedule_delay_millis=500))
    trace.set_tracer_provider(provider)


def build_app(args: argparse.Namespace) -> Starlette:
    """Create the app described by parsed arguments, on the system clock.

    Raises
    ------
    ValueError
        If the ``--config`` file is not valid JSON or holds an invalid knob.
    """
    update = load_update(args.config) if args.config else None
    hosts = {*LOOPBACK_HOSTS, *args.allow_host}
    if args.host not in ("0.0.0.0", "::"):  # a wildcard names no host
        hosts.add(args.host)
    return create_app(update, SystemClock(), args.ledger, retention=_retention(args),
                      hosts=hosts)


def _retention(args: argparse.Namespace) -> timedelta | None:
    """``--retention-days`` as a timedelta; None (keep everything) for 0."""
    return timedelta(days=args.retention_days) if args.retention_days > 0 else None


def main(argv: Sequence[str] | None = None) -> None:
    """Run the simulator until interrupted."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if args.trace_store:
        export_spans(args.trace_store, _retention(args))
    uvicorn.run(
        build_app(args), host=args.host, port=args.port,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )
