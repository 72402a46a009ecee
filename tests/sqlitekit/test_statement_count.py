"""Statement counts for the benchmark: off by default, per file when asked, read back whole."""

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import sqlitekit
from sqlitekit import statement_count

REPO = Path(__file__).resolve().parents[2]


def test_nothing_is_counted_unless_the_setting_names_a_folder(monkeypatch, tmp_path):
    monkeypatch.delenv(statement_count.COUNT_SETTING, raising=False)
    assert statement_count.counter() is None
    conn = sqlitekit.connect(tmp_path / "a.sqlite")
    conn.execute("SELECT 1")
    assert list(tmp_path.glob("*.json")) == []


def test_a_process_writes_its_statements_by_file_and_its_switches_at_exit(tmp_path):
    counts = tmp_path / "counts"
    script = (
        "import sqlitekit\n"
        f"a = sqlitekit.connect({str(tmp_path / 'a.sqlite')!r})\n"
        f"b = sqlitekit.connect({str(tmp_path / 'b.sqlite')!r})\n"
        "a.execute('CREATE TABLE t (x)')\n"
        "with sqlitekit.write(a):\n"
        "    a.executemany('INSERT INTO t VALUES (?)', [(1,), (2,), (3,)])\n"
        "b.execute('SELECT 1')\n")
    subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True,
                          text=True, check=True,
                          env={**os.environ, statement_count.COUNT_SETTING: str(counts)})
    (written,) = counts.glob("*.json")
    statements, switches = statement_count.read_counts(counts)
    # CREATE; BEGIN IMMEDIATE, three inserts (one per row), COMMIT; one SELECT (the
    # pragmas of connect run before the count starts).
    assert statements == {"a.sqlite": 1 + 5, "b.sqlite": 1}
    assert set(switches) == {"voluntary", "involuntary"} and switches["voluntary"] >= 0
    assert json.loads(written.read_text())["statements"] == statements


def test_only_the_processes_asked_for_are_summed(tmp_path):
    for pid, n in ((11, 3), (12, 4), (13, 100)):
        (tmp_path / f"{pid}.json").write_text(json.dumps(
            {"statements": {"taskhub.sqlite": n}, "context_switches": {
                "voluntary": 10 * n, "involuntary": n}}))
    (tmp_path / "13.tmp").write_text("half a fi")
    assert statement_count.read_counts(tmp_path, lambda pid: pid != 13) == (
        {"taskhub.sqlite": 7}, {"voluntary": 70, "involuntary": 7})


def test_kinds_are_kept_only_when_asked_with_literals_replaced(tmp_path):
    counts = tmp_path / "counts"
    script = (
        "import sqlitekit, sys\n"
        "a = sqlitekit.connect(sys.argv[1])\n"
        "a.execute('CREATE TABLE t (x, y)')\n"
        "a.executemany('INSERT INTO t VALUES (?, ?)', [(1, 'it''s'), (22, 'b')])\n"
        "a.execute(\"SELECT x FROM t WHERE y = 'b' AND x > 3.5\")\n")
    env = {**os.environ, statement_count.COUNT_SETTING: str(counts)}
    for kinds in ("", "1"):
        subprocess.run([sys.executable, "-c", script, str(tmp_path / f"a{kinds}.sqlite")],
                       cwd=REPO, capture_output=True, text=True, check=True,
                       env={**env, statement_count.KINDS_SETTING: kinds})
        (written,) = counts.glob("*.json")
        document = json.loads(written.read_text())
        written.unlink()
        name = f"a{kinds}.sqlite"
        assert document["statements"] == {name: 4}
        assert document.get("kinds") == (None if not kinds else {
            f"{name}: CREATE TABLE t (x, y)": 1,
            f"{name}: INSERT INTO t VALUES (?, ?)": 2,
            f"{name}: SELECT x FROM t WHERE y = ? AND x > ?": 1})


def _fill(conn):
    conn.execute("CREATE TABLE t (x UNIQUE)")


FORMS = {
    "a select": lambda c: c.execute("SELECT 1").fetchall(),
    "a parametrised insert": lambda c: c.execute("INSERT INTO t VALUES (?)", (7,)),
    "rows from a list": lambda c: c.executemany("INSERT INTO t VALUES (?)", [(1,), (2,)]),
    "rows from a generator": lambda c: c.executemany(
        "INSERT INTO t VALUES (?)", ((n,) for n in range(3, 6))),
    "rows stopped by a violation": lambda c: c.executemany(
        "INSERT INTO t VALUES (?)", [(10,), (11,), (10,), (12,)]),
    "a violation": lambda c: c.execute("INSERT INTO t VALUES (1), (1)"),
    "a script with ';' in a literal and a comment": lambda c: c.executescript(
        "INSERT INTO t VALUES ('a;b'); INSERT INTO t VALUES (20);\n-- the end; really\n"),
    "a committed write": lambda c: _write(c, "INSERT INTO t VALUES (30)"),
    "a rolled-back write": lambda c: _write(c, "INSERT INTO t VALUES (31), (31)"),
    "rows of insert_rows": lambda c: sqlitekit.insert_rows(
        c, "INSERT INTO t (x) VALUES", [(n,) for n in range(40, 45)]),
}


def _write(conn, sql):
    with sqlitekit.write(conn):
        conn.execute(sql)


@pytest.mark.parametrize("through", ["connection", "cursor"])
@pytest.mark.parametrize("form", FORMS)
def test_python_counts_equal_sqlites_trace_callback(form, through, monkeypatch, tmp_path):
    """Each statement form, on a connection or its cursor, counts as SQLite's callback does."""
    monkeypatch.setenv(statement_count.COUNT_SETTING, str(tmp_path / "counts"))
    monkeypatch.delenv(statement_count.KINDS_SETTING, raising=False)
    counted = sqlitekit.connect(tmp_path / "counted.sqlite")
    assert isinstance(counted, statement_count.CountedConnection)
    traced = sqlite3.connect(tmp_path / "traced.sqlite", isolation_level=None,
                             factory=sqlitekit._Connection)
    traced.write_lock = sqlitekit.WriteLock(tmp_path / "traced.sqlite")
    calls = []
    _fill(counted), _fill(traced)
    traced.set_trace_callback(calls.append)
    by_file = statement_count.counter().by_file
    before = by_file["counted.sqlite"]
    for conn in (counted, traced):
        target = conn if through == "connection" else _CursorAsConnection(conn)
        with contextlib.suppress(sqlite3.IntegrityError):
            FORMS[form](target)
    assert by_file["counted.sqlite"] - before == len(calls) > 0


def test_a_statement_that_does_not_compile_is_counted_where_the_callback_sees_none(
        monkeypatch, tmp_path):
    monkeypatch.setenv(statement_count.COUNT_SETTING, str(tmp_path / "counts"))
    monkeypatch.delenv(statement_count.KINDS_SETTING, raising=False)
    conn = sqlitekit.connect(tmp_path / "a.sqlite")
    by_file = statement_count.counter().by_file
    with pytest.raises(sqlite3.OperationalError):
        conn.execute("SELECT nothing FROM nowhere")
    assert by_file["a.sqlite"] == 1


def test_a_counted_connection_s_rows_are_its_row_factory_s(monkeypatch, tmp_path):
    monkeypatch.setenv(statement_count.COUNT_SETTING, str(tmp_path / "counts"))
    monkeypatch.delenv(statement_count.KINDS_SETTING, raising=False)
    conn = sqlitekit.connect(tmp_path / "a.sqlite")
    assert isinstance(conn, statement_count.CountedConnection)
    assert conn.execute("SELECT 1 AS a").fetchone()["a"] == 1
    assert conn.cursor().execute("SELECT 2 AS b").fetchone()["b"] == 2


class _CursorAsConnection:
    """A connection's cursor standing in for it, so each form runs through a cursor too."""

    def __init__(self, conn):
        self._conn = conn
        self.write_lock = conn.write_lock

    def __getattr__(self, name):
        if name in ("execute", "executemany", "executescript"):
            return getattr(self._conn.cursor(), name)
        return getattr(self._conn, name)
