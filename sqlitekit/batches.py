"""Statements over many rows at once: one statement where ``executemany`` runs one per row.

Each statement run is a trip (the interpreter lock let go and taken back, the library's
step): a multi-row ``VALUES`` or an ``IN (...)`` list does the same work in one. Lists are
cut at :data:`ROWS_PER_STATEMENT` rows, well under SQLite's limit of bound variables
(32,766 since 3.32).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

ROWS_PER_STATEMENT = 200
"""Rows of one statement at most; more are written by as many statements as needed."""


def insert_rows(conn: sqlite3.Connection, insert: str, rows: Sequence[Sequence[Any]],
                tail: str = "", tail_args: Sequence[Any] = ()) -> list[Any]:
    """Run ``insert`` (``"INSERT ... (a, b) VALUES"``, no tuple) for all ``rows`` at once.

    Row by row in the given order within a statement, so ``OR REPLACE``, ``ON CONFLICT``
    and ``AUTOINCREMENT`` act as they would row by row.

    Parameters
    ----------
    insert
        The statement up to and including ``VALUES``; each row adds ``(?, ...)``.
    rows
        The rows, each as long as the first. Nothing runs for none.
    tail, tail_args
        What follows the rows in each statement (``ON CONFLICT ...``, ``RETURNING ...``)
        and its parameters.

    Returns
    -------
    list
        The rows the statements returned (``RETURNING``), statement after statement.

    Raises
    ------
    ValueError
        Rows of different lengths.
    """
    if not rows:
        return []
    width = len(rows[0])
    if any(len(row) != width for row in rows):
        raise ValueError(f"insert_rows: every row must have {width} values")
    one = "(" + ",".join("?" * width) + ")"
    returned: list[Any] = []
    for start in range(0, len(rows), ROWS_PER_STATEMENT):
        chunk = rows[start:start + ROWS_PER_STATEMENT]
        returned += conn.execute(f"{insert} {','.join([one] * len(chunk))}{tail}",
                                 [*(value for row in chunk for value in row),
                                  *tail_args]).fetchall()
    return returned


def first_of_each(values: Sequence[Any], found: set[Any]) -> list[bool]:
    """Tell, per value in order, whether it is in ``found`` and its first occurrence.

    For a batch statement's ``RETURNING`` (the rows it inserted, deleted or changed) read
    back against a batch that may name a row twice: the row counts once, for its first.
    """
    left = set(found)
    firsts = []
    for value in values:
        firsts.append(value in left)
        left.discard(value)
    return firsts


def run_for_each(conn: sqlite3.Connection, statement: str, fixed: Sequence[Any],
                 values: Sequence[Any]) -> tuple[int, list[Any]]:
    """Run ``statement`` with its ``IN (?)`` list holding ``values``, in one statement per chunk.

    Parameters
    ----------
    statement
        SQL with exactly one ``IN (?)``, which becomes ``IN (?, ?, ...)``; its other
        parameters are ``fixed``, which come before the list's.
    values
        The list's values. Nothing runs for none.

    Returns
    -------
    (int, list)
        Rows changed in all (``rowcount`` summed), and the rows the statement gave
        (``RETURNING``), of every chunk.

    Raises
    ------
    ValueError
        The statement has no ``IN (?)``, or more than one.
    """
    if statement.count("IN (?)") != 1:
        raise ValueError("run_for_each: the statement needs exactly one 'IN (?)'")
    changed, rows = 0, []
    for start in range(0, len(values), ROWS_PER_STATEMENT):
        chunk = list(values[start:start + ROWS_PER_STATEMENT])
        sql = statement.replace("IN (?)", "IN (" + ",".join("?" * len(chunk)) + ")")
        cursor = conn.execute(sql, [*fixed, *chunk])
        rows += cursor.fetchall()
        changed += cursor.rowcount
    return changed, rows
