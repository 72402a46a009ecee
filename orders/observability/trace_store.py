"""The local trace store: spans in ``traces.sqlite`` of the data folder (X8).

Opened through :mod:`sqlitekit` by every host process and ``python -m opscli trace``; a
failed export is dropped with a warning (traces never stop the work).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import format_span_id, format_trace_id

from orders.observability.tracing import ORDER_KEY
from sqlitekit import connect, insert_rows, write

log = logging.getLogger("orders.observability")

TRACE_FILE = "traces.sqlite"

_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS spans (
        span_id    TEXT PRIMARY KEY,   -- 16 hex digits
        trace_id   TEXT NOT NULL,      -- 32 hex digits
        parent_id  TEXT,               -- NULL for a root span
        name       TEXT NOT NULL,
        kind       TEXT NOT NULL,
        start_ns   INTEGER NOT NULL,   -- Unix epoch, nanoseconds
        end_ns     INTEGER NOT NULL,
        status     TEXT NOT NULL,      -- UNSET, OK or ERROR
        order_key  TEXT,               -- orders.order_key attribute, if any
        attributes TEXT NOT NULL,      -- JSON object
        links      TEXT NOT NULL       -- JSON list of [trace_id, span_id]
    )
    """,
    "CREATE INDEX IF NOT EXISTS ix_spans_order ON spans (order_key)",
    "CREATE INDEX IF NOT EXISTS ix_spans_trace ON spans (trace_id, start_ns)",
    "CREATE INDEX IF NOT EXISTS ix_spans_start ON spans (start_ns)",
)
_INSERT = ("INSERT OR REPLACE INTO spans (span_id, trace_id, parent_id, name, kind, start_ns, "
           "end_ns, status, order_key, attributes, links) VALUES")


def _open(path: Path) -> sqlite3.Connection:
    # NORMAL: a power loss may cost the last spans, never the store.
    conn = connect(path, synchronous="NORMAL")
    with write(conn):
        for statement in _SCHEMA:
            conn.execute(statement)
    return conn


def _row(span: ReadableSpan) -> tuple[Any, ...]:
    ctx = span.get_span_context()
    assert ctx is not None, "a finished SDK span always has a context"
    attributes = {k: v if isinstance(v, str | int | float | bool) else list(v or ())
                  for k, v in (span.attributes or {}).items()}
    links = [[format_trace_id(link.context.trace_id), format_span_id(link.context.span_id)]
             for link in span.links]
    key = attributes.get(ORDER_KEY)
    return (format_span_id(ctx.span_id), format_trace_id(ctx.trace_id),
            format_span_id(span.parent.span_id) if span.parent else None, span.name,
            span.kind.name, span.start_time or 0, span.end_time or span.start_time or 0,
            span.status.status_code.name, key if isinstance(key, str) else None,
            json.dumps(attributes, separators=(",", ":")), json.dumps(links))


class SqliteSpanExporter(SpanExporter):
    """An OpenTelemetry span exporter writing to the local trace store.

    ``retention`` (``RETENTION_DAYS``, X10) deletes older spans at most once per
    ``purge_every`` (default a tenth of ``retention``, at most an hour), while exporting;
    None keeps all. ``now_ns``: Unix nanoseconds.
    """

    def __init__(self, path: str | Path, retention: timedelta | None = None,
                 purge_every: timedelta | None = None,
                 now_ns: Callable[[], int] = time.time_ns) -> None:
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self.path = Path(path)
        self._retention_ns = None if retention is None else int(retention.total_seconds() * 1e9)
        if purge_every is None:
            # A period much shorter than the retention keeps the file near its plateau.
            purge_every = min(timedelta(hours=1), (retention or timedelta(hours=10)) / 10)
        self._purge_every_ns = int(purge_every.total_seconds() * 1e9)
        self._now_ns = now_ns
        self._purged_at_ns: int | None = None

    def retarget(self, path: str | Path) -> None:
        """Write later batches to ``path`` (a process that serves another data folder)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
            self._conn, self.path = None, Path(path)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Write a batch in one transaction; FAILURE (logged, batch dropped) if SQLite refused.

        One multi-row INSERT per
        :data:`~sqlitekit.batches.ROWS_PER_STATEMENT` spans, not one per span.
        """
        rows = [_row(span) for span in spans]
        try:
            with self._lock:
                if self._conn is None:
                    self._conn = _open(self.path)
                with write(self._conn):
                    insert_rows(self._conn, _INSERT, rows)
                    self._purge_if_due(self._conn)
        except sqlite3.Error as exc:
            log.warning("trace store %s: %d span(s) dropped: %s", self.path, len(rows), exc)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def _purge_if_due(self, conn: sqlite3.Connection) -> None:
        now = self._now_ns()
        if self._retention_ns is None or (self._purged_at_ns is not None
                                          and now - self._purged_at_ns < self._purge_every_ns):
            return
        self._purged_at_ns = now
        conn.execute("DELETE FROM spans WHERE start_ns < ?", (now - self._retention_ns,))

    def shutdown(self) -> None:
        """Close the store."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Nothing is buffered here (the span processor batches); always True."""
        return True


@dataclass(frozen=True)
class StoredSpan:
    """One span as the trace store holds it."""

    span_id: str
    trace_id: str
    parent_id: str | None
    name: str
    kind: str
    start_ns: int
    end_ns: int
    status: str
    attributes: dict[str, Any] = field(default_factory=dict)
    links: list[tuple[str, str]] = field(default_factory=list)

    @property
    def duration_ms(self) -> float:
        """Duration in milliseconds."""
        return (self.end_ns - self.start_ns) / 1e6


class TraceStore:
    """Reads the local trace store; a missing file reads as empty."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def _query(self, sql: str, args: Sequence[Any]) -> list[sqlite3.Row]:
        if not self.path.exists():
            return []
        conn = _open(self.path)
        try:
            return list(conn.execute(sql, args))
        finally:
            conn.close()

    def order_keys(self, order_id: str) -> list[str]:
        """Return the order keys whose OrderID is ``order_id`` (any client, case-sensitive, X10)."""
        suffix = "~" + order_id
        rows = self._query("SELECT DISTINCT order_key FROM spans WHERE order_key = ? "
                           "OR substr(order_key, -?) = ? ORDER BY order_key",
                           (order_id, len(suffix), suffix))
        return [row["order_key"] for row in rows]

    def spans_of(self, order_key: str) -> list[StoredSpan]:
        """Return every span of the traces carrying ``order_key``, oldest first."""
        rows = self._query("SELECT * FROM spans WHERE trace_id IN (SELECT DISTINCT trace_id "
                           "FROM spans WHERE order_key = ?) ORDER BY start_ns, span_id",
                           (order_key,))
        return [StoredSpan(row["span_id"], row["trace_id"], row["parent_id"], row["name"],
                           row["kind"], row["start_ns"], row["end_ns"], row["status"],
                           json.loads(row["attributes"]),
                           [(t, s) for t, s in json.loads(row["links"])]) for row in rows]

