"""Many rows in few statements: each statement run counted, results as executemany's."""

import sqlite3

import pytest

from sqlitekit import batches, first_of_each, insert_rows, run_for_each


class Traced(sqlite3.Connection):
    """A connection that keeps the statements it ran."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen: list[str] = []
        self.set_trace_callback(self.seen.append)


@pytest.fixture
def conn():
    c = sqlite3.connect(":memory:", factory=Traced)
    c.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
    return c


@pytest.mark.parametrize("n", [0, 1, 3, batches.ROWS_PER_STATEMENT,
                               batches.ROWS_PER_STATEMENT + 1, 3 * batches.ROWS_PER_STATEMENT])
def test_rows_are_written_in_one_statement_per_chunk(conn, n):
    rows = [(k, f"v{k}") for k in range(n)]
    insert_rows(conn, "INSERT INTO t (k, v) VALUES", rows)
    assert conn.execute("SELECT k, v FROM t ORDER BY k").fetchall() == rows
    chunks = -(-n // batches.ROWS_PER_STATEMENT)
    assert sum(s.startswith("INSERT") for s in conn.seen) == chunks

    deleted, returned = run_for_each(conn, "DELETE FROM t WHERE v != ? AND k IN (?) RETURNING k",
                                     ("v0",), [k for k, _ in rows] + [10_000])  # one not there
    assert deleted == max(0, n - 1) and sorted(r[0] for r in returned) == list(range(1, n))
    assert conn.execute("SELECT k FROM t").fetchall() == ([(0,)] if n else [])
    assert sum(s.startswith("DELETE") for s in conn.seen) == -(-(n + 1)
                                                              // batches.ROWS_PER_STATEMENT)


def test_rows_of_different_lengths_and_a_statement_without_one_list_are_refused(conn):
    with pytest.raises(ValueError, match="every row must have 2 values"):
        insert_rows(conn, "INSERT INTO t (k, v) VALUES", [(1, "a"), (2,)])
    with pytest.raises(ValueError, match="exactly one 'IN \\(\\?\\)'"):
        run_for_each(conn, "DELETE FROM t WHERE k = ?", (), [1])
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone() == (0,)


@pytest.mark.parametrize("n", [1, 2, batches.ROWS_PER_STATEMENT, batches.ROWS_PER_STATEMENT + 1])
def test_an_upsert_tail_acts_row_by_row_and_returns_what_it_changed(conn, n):
    # The last row repeats the first key: as row by row, the later value wins; RETURNING
    # names the rows inserted or updated (not one the DO UPDATE's WHERE left alone).
    conn.execute("INSERT INTO t (k, v) VALUES (-1, 'kept')")
    conn.seen.clear()
    rows = [(k, f"v{k}") for k in range(n - 1)] + [(0, "last"), (-1, "refused")]
    returned = insert_rows(conn, "INSERT INTO t (k, v) VALUES", rows,
                           " ON CONFLICT (k) DO UPDATE SET v = excluded.v WHERE v != ?"
                           " RETURNING k", ("kept",))
    assert [k for (k,) in returned] == [k for k, _ in rows[:-1]]
    assert conn.execute("SELECT k, v FROM t ORDER BY k").fetchall() == \
        [(-1, "kept"), (0, "last")] + rows[1:-2]
    chunks = -(-(n + 1) // batches.ROWS_PER_STATEMENT)
    assert sum(s.startswith("INSERT INTO t (k, v) VALUES (") for s in conn.seen) == chunks


def test_a_value_found_counts_for_its_first_occurrence_only():
    assert first_of_each([3, 1, 3, 2, 1], {1, 3}) == [True, True, False, False, False]
    assert first_of_each([], {1}) == [] and first_of_each([1], set()) == [False]
