"""Multi-row statements: chunked below SQLite's variable limit, rows kept in order."""

import sqlite3

import pytest

from sqlitekit.multirow import ROWS_PER_STATEMENT, execute_rows


@pytest.mark.parametrize(("variables", "rows", "statements"),
                         [(32766, 1, 1), (32766, ROWS_PER_STATEMENT, 1),
                          (32766, ROWS_PER_STATEMENT + 1, 2), (10, 7, 2), (5, 7, 4), (3, 2, 2)])
def test_rows_are_written_in_order_one_statement_per_chunk(variables, rows, statements):
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, variables)
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT UNIQUE, v INTEGER)")
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    # The last row repeats the first key: as row by row, the upsert keeps the later value.
    values = [(f"k{n}", n) for n in range(rows - 1)] + [("k0", -1)]
    returned = execute_rows(conn, "INSERT INTO t (k, v)", values,
                            " ON CONFLICT (k) DO UPDATE SET v = excluded.v WHERE v >= ?"
                            " RETURNING k", (0,))
    assert len(seen) == statements
    assert [k for (k,) in returned] == [k for k, _ in values]
    assert conn.execute("SELECT k, v FROM t ORDER BY id").fetchall() == \
        [("k0", -1)] + values[1:-1]


def test_rows_of_unequal_length_are_refused():
    conn = sqlite3.connect(":memory:")
    with pytest.raises(ValueError, match="rows: must all have one non-zero length"):
        execute_rows(conn, "INSERT INTO t (a, b)", [(1, 2), (3,)])
    assert execute_rows(conn, "INSERT INTO t (a)", []) == []
