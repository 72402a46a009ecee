"""A host or worker started while its data disk is full waits for space, then serves.

Their write-lock hold records are in memory, never in the data folder, so nothing fails
before the host's own full-disk wait (``_build_or_exit``). The data folder is a small
tmpfs filled to its last byte, which takes root; a folder made read-only with chmod is no
full disk (the host would stop at its first database, as it should), so without root the
tests are skipped.
"""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from demo.nemesis import mount_small_fs, unmount
from devhost.run.worker_processes import WorkerProcesses, worker_argv
from tests.devhost.apps import MY_APP, write_app

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.name != "posix", reason="ready pipes need fd passing")]

WAITING = "the data disk is full"


def _fill(filler: Path) -> None:
    """Write ``filler`` until its file system has no byte left."""
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for size in (1 << 20, 4096, 1):
            try:
                while os.write(fd, b"\0" * size):
                    pass
            except OSError:
                pass
    finally:
        os.close(fd)


@pytest.fixture
def full_data_dir(tmp_path):
    """A data folder with no free byte, and what frees it."""
    data = tmp_path / "data"
    data.mkdir()
    why_not = mount_small_fs(data, size_mb=16)
    if why_not is not None:
        pytest.skip(f"a full disk here is a small tmpfs, and mounting one failed: {why_not}")
    filler = data / "filler"
    try:
        _fill(filler)
        assert os.statvfs(data).f_bavail == 0
        yield data, filler.unlink
    finally:
        unmount(data)


def _wait_for(read, text: str, alive=lambda: True, timeout_s: float = 120.0) -> str:
    """Return what ``read()`` has returned, in all, once it includes ``text``."""
    seen = ""
    deadline = time.monotonic() + timeout_s
    while text not in seen:
        assert time.monotonic() < deadline and alive(), f"never said {text!r}; said: {seen}"
        seen += read()
        time.sleep(0.1)
    return seen


def test_a_worker_started_on_a_full_disk_waits_for_space_then_serves(full_data_dir, tmp_path,
                                                                     capfd):
    data, free = full_data_dir
    app_dir = write_app(tmp_path / "app", {"function_app.py": MY_APP})
    procs = WorkerProcesses(worker_argv(str(app_dir), str(data), "http://127.0.0.1:9", 1,
                                        30.0, 60.0), 1, hold_records=True)
    try:
        said = _wait_for(lambda: capfd.readouterr().err, WAITING,
                         alive=lambda: procs.procs[0].poll() is None)
        assert "Traceback" not in said and "hold record" not in said
        assert procs.replace_exited() == 0  # still running: no restart every 0.5 s
        [block] = procs.hold_blocks.values()
        assert block.read() == (None, 0.0)
        free()
        assert procs.wait_ready(threading.Event(), timeout_s=120)
        assert procs.replace_exited() == 0
    finally:
        procs.stop(grace_s=10)
    assert procs.hold_blocks == {}  # removed by their creator
    assert not (data / "holds").exists()


def test_start_on_a_full_disk_waits_for_space_and_keeps_no_holds_folder(full_data_dir,
                                                                        tmp_path):
    data, free = full_data_dir
    app_dir = write_app(tmp_path / "app", {"function_app.py": MY_APP})
    log = tmp_path / "host.log"
    with log.open("w") as errors:
        proc = subprocess.Popen(
            [sys.executable, "-m", "devhost", "start", "--app-dir", str(app_dir),
             "--data-dir", str(data), "--port", "0", "--workers", "2"],
            stdout=subprocess.PIPE, stderr=errors, text=True)
    try:
        _wait_for(log.read_text, WAITING, alive=lambda: proc.poll() is None)
        free()
        assert proc.stdout is not None
        for line in proc.stdout:  # ends at the ready line, or EOF if the host died
            if "Ctrl-C stops the host" in line:
                break
        assert proc.poll() is None, log.read_text()
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, log.read_text()
    assert "longest write-lock hold" in log.read_text()
    assert not (data / "holds").exists()
