"""A full data disk: the host stops taking work with one line, and resumes when space returns."""

import logging
import sqlite3
import time
from contextlib import nullcontext

import pytest

from devhost.failures.disk_gate import MIN_FREE_BYTES, DiskGate
from devhost.run.host import LocalHost
from tests.devhost.conftest import SAMPLE_APP, output, start


def sqlite_full_error(tmp_path) -> sqlite3.OperationalError:
    """A real SQLITE_FULL, from a database that may not grow."""
    conn = sqlite3.connect(tmp_path / "capped.sqlite")
    conn.execute("CREATE TABLE t (v BLOB)")
    conn.execute(f"PRAGMA max_page_count={conn.execute('PRAGMA page_count').fetchone()[0]}")
    with pytest.raises(sqlite3.OperationalError) as info:
        conn.execute("INSERT INTO t VALUES (?)", (b"x" * 100_000,))
    return info.value


class Disk:
    """The data file system's free space, as the test sets it."""

    def __init__(self) -> None:
        self.free = 10 * MIN_FREE_BYTES

    def __call__(self, _path) -> int:
        return self.free


def lines(caplog, text):
    return [r for r in caplog.records if text in r.getMessage()]


def test_the_gate_closes_once_on_a_full_disk_and_opens_once_space_returns(tmp_path, caplog,
                                                                           monkeypatch):
    monkeypatch.setattr("devhost.failures.disk_gate.CHECK_EVERY_S", 0.0)
    disk = Disk()
    gate = DiskGate(tmp_path, free_bytes=disk)
    assert gate.saw(ValueError("a bug of the app")) is False and gate.is_open()
    disk.free = 0
    full = sqlite_full_error(tmp_path)
    assert gate.saw(full) is True and gate.saw(full) is True
    assert not gate.is_open() and not gate.is_open()
    disk.free = MIN_FREE_BYTES - 1
    assert not gate.is_open()
    disk.free = MIN_FREE_BYTES
    assert gate.is_open()
    assert len(lines(caplog, "the data disk is full (OperationalError: database or disk "
                             "is full)")) == 1
    assert len(lines(caplog, "space is back on the data disk")) == 1


def test_any_failure_while_no_space_is_left_closes_the_gate(tmp_path):
    disk = Disk()
    disk.free = MIN_FREE_BYTES // 2
    gate = DiskGate(tmp_path, free_bytes=disk)
    # A function that failed over HTTP carries no SQLite error, yet the disk is full.
    assert gate.saw(RuntimeError("HTTP 500 from the host API")) is True
    assert not gate.is_open()


@pytest.mark.slow
def test_the_host_takes_no_work_while_the_disk_is_full_and_finishes_it_after(
        tmp_path, caplog, monkeypatch):
    caplog.set_level(logging.INFO, logger="devhost")
    monkeypatch.setattr("devhost.failures.disk_gate.CHECK_EVERY_S", 0.05)
    host = LocalHost(SAMPLE_APP, tmp_path / "data", serve_http=False)
    disk = Disk()
    host.gate = DiskGate(host.data_dir, free_bytes=disk)
    full_error = sqlite_full_error(tmp_path)
    real_round, tries = host.worker.run_round, []

    def run_round(*args):
        if disk.free == 0:  # what SQLite answers every write on a full disk
            tries.append(args)
            raise full_error
        return real_round(*args)

    monkeypatch.setattr(host.worker, "run_round", run_round)
    disk.free = 0
    start(host, "chain", "Ann", "c1")
    host.start()
    try:
        wait_for(lambda: tries, "the first round on the full disk")
        time.sleep(0.5)  # ten looks at the free space: no round is tried meanwhile
        assert len(tries) == 1 and output(host, "c1")[0] == "Pending"
        disk.free = 10 * MIN_FREE_BYTES
        wait_for(lambda: output(host, "c1")[0] == "Completed", "c1 to complete")
    finally:
        host.stop()
    assert output(host, "c1")[1] == ["Hello Ann-Tokyo!", "Hello Ann-Seattle!",
                                     "Hello Ann-London!"]
    assert len(lines(caplog, "the data disk is full")) == 1
    assert len(lines(caplog, "space is back on the data disk")) == 1
    assert not lines(caplog, "work round failed")


def wait_for(condition, what, timeout_s=30.0):
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_start_up_on_a_full_disk_waits_for_space_with_one_line(tmp_path, caplog,
                                                                monkeypatch):
    from devhost.run import cli, runtime

    full_error = sqlite_full_error(tmp_path)
    attempts = []

    def build_host(**kwargs):
        attempts.append(kwargs)
        if len(attempts) < 4:  # the schema, the settings file: written on a full disk
            raise full_error if len(attempts) % 2 else OSError(28, "No space left on device")
        return "the host"

    monkeypatch.setattr(runtime, "build_host", build_host)
    monkeypatch.setattr(cli, "START_RETRY_S", 0.0)
    monkeypatch.setattr(cli, "long_lived_startup", nullcontext)  # not this worker's heap
    assert cli._build_or_exit(app_dir=tmp_path) == "the host"
    assert len(attempts) == 4
    assert len(lines(caplog, "the data disk is full")) == 1
    assert "starting once space returns" in lines(caplog, "the data disk is full")[0].getMessage()


def test_start_up_fails_at_once_on_other_errors(tmp_path, monkeypatch):
    from devhost.run import cli, runtime

    def build_host(**kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(runtime, "build_host", build_host)
    with pytest.raises(PermissionError):
        cli._build_or_exit(app_dir=tmp_path)
