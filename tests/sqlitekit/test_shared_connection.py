"""sqlitekit.SharedConnection: one connection a process's threads take turns on."""

import sqlite3

import pytest

from sqlitekit import SharedConnection


def test_leaving_the_with_block_closes_the_connection(tmp_path):
    with SharedConnection(tmp_path / "sub" / "x.sqlite") as shared:
        assert shared.path == tmp_path / "sub" / "x.sqlite"
        assert shared._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with pytest.raises(sqlite3.ProgrammingError):
        shared._conn.execute("SELECT 1")

