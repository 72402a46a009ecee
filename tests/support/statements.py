"""The statements a SQLite connection runs, for tests that count an operation's trips."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def traced(conn: sqlite3.Connection) -> Iterator[list[str]]:
    """Collect the statements ``conn`` runs inside the block.

    SQLite's trace callback: one per statement run, BEGIN and COMMIT included.
    """
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        conn.set_trace_callback(None)
