"""Many rows in few statements: a multi-row ``VALUES`` list per chunk of rows.

``executemany`` runs its statement once per row (one trip each); a ``VALUES (...), (...)``
list writes a chunk of rows in one statement, row by row in the given order, so ``OR
REPLACE``, ``ON CONFLICT`` and ``AUTOINCREMENT`` act as they would have row by row.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

ROWS_PER_STATEMENT = 256
"""Rows one statement carries at most (fewer if SQLite allows fewer variables)."""


def execute_rows(conn: sqlite3.Connection, head: str, rows: Sequence[Sequence[Any]],
                 tail: str = "", tail_args: Sequence[Any] = ()) -> list[Any]:
    """Run ``head VALUES (?, ...), ... tail`` over ``rows``, one statement per chunk.

    Parameters
    ----------
    conn : sqlite3.Connection
        Runs the statements (in the caller's transaction, if any).
    head : str
        The statement up to ``VALUES``, e.g. ``INSERT INTO t (a, b)``.
    rows : sequence of sequences
        The rows' values, all of one length (the columns of ``head``).
    tail, tail_args : str, sequence
        What follows the values (``ON CONFLICT ...``, ``RETURNING ...``) and its parameters.

    Returns
    -------
    list
        The rows the statements returned (``RETURNING``), chunk after chunk.

    Raises
    ------
    ValueError
        If the rows are not all of one non-zero length.
    """
    if not rows:
        return []
    width = len(rows[0])
    if width == 0 or any(len(row) != width for row in rows):
        raise ValueError(f"rows: must all have one non-zero length, got {width} first")
    room = conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) - len(tail_args)
    per = max(1, min(ROWS_PER_STATEMENT, room // width))
    marks = "(" + ", ".join("?" * width) + ")"
    returned: list[Any] = []
    for start in range(0, len(rows), per):
        chunk = rows[start:start + per]
        returned += conn.execute(
            f"{head} VALUES {', '.join([marks] * len(chunk))}{tail}",
            [*(value for row in chunk for value in row), *tail_args]).fetchall()
    return returned
