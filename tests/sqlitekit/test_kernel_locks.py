"""The kernel's lock table as :mod:`sqlitekit.kernel_locks` reads it."""

import os

import pytest

import sqlitekit
from sqlitekit.kernel_locks import exclusive_flocks, write_lock_paths

TABLE = """\
1: FLOCK  ADVISORY  WRITE 4101 fe:00:2146488 0 EOF
1: -> FLOCK  ADVISORY  WRITE 4102 fe:00:2146488 0 EOF
2: FLOCK  ADVISORY  READ 4103 fe:00:77 0 EOF
3: POSIX  ADVISORY  WRITE 4104 08:01:99 0 EOF
4: OFDLCK ADVISORY  WRITE -1 08:01:98 0 EOF
5: FLOCK  ADVISORY  WRITE 4101 00:2a:31337 0 EOF
6: FLOCK  ADVISORY  WRITE notapid fe:00:5 0 EOF
7: FLOCK  ADVISORY
"""


def test_only_granted_exclusive_flocks_count_per_process(tmp_path):
    table = tmp_path / "locks"
    table.write_text(TABLE)
    # The waiter (4102), a shared flock, POSIX and OFD locks and malformed lines: none.
    assert exclusive_flocks(table) == {4101: {2146488, 31337}}


def test_a_missing_table_reads_as_no_lock(tmp_path):
    assert exclusive_flocks(tmp_path / "no-such-table") == {}


@pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="the kernel's lock table: Linux")
def test_this_process_s_write_lock_is_found_and_an_app_lock_is_not(tmp_path):
    fcntl = pytest.importorskip("fcntl")
    db = tmp_path / "hub.sqlite"
    conn = sqlitekit.connect(db)
    app = os.open(tmp_path / "notes.txt.lock", os.O_RDWR | os.O_CREAT)
    (tmp_path / "notes.txt").write_text("not a database")
    try:
        fcntl.flock(app, fcntl.LOCK_EX)
        with conn.write_lock:
            held = exclusive_flocks()[os.getpid()]
            assert os.stat(f"{db}.lock").st_ino in held
            assert os.fstat(app).st_ino in held
            assert write_lock_paths(os.getpid(), held) == [f"{db}.lock"]
        assert os.stat(f"{db}.lock").st_ino not in exclusive_flocks().get(os.getpid(), set())
    finally:
        os.close(app)
        conn.close()
