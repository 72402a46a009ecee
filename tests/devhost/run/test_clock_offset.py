"""Clock skew between host processes: DEVHOST_CLOCK_OFFSET_S and the workers' offsets."""

import os
import sys
from datetime import UTC, datetime, timedelta

import pytest

from clocks import ManualClock, OffsetClock
from devhost.app.load_errors import AppLoadError
from devhost.run.runtime import skewed_clock
from devhost.run.worker_processes import WorkerProcesses

# Writes its DEVHOST_CLOCK_OFFSET_S to the ready pipe ("--ready-fd N" is appended).
REPORT_OFFSET = ("import os, sys; os.write(int(sys.argv[-1]), "
                 "os.environ.get('DEVHOST_CLOCK_OFFSET_S', '-').encode().ljust(6)[:6])")


def test_an_offset_clock_is_its_base_moved_by_the_offset():
    base = ManualClock(datetime(2030, 1, 1, tzinfo=UTC))
    clock = OffsetClock(base, timedelta(seconds=-2.5))
    base.advance(timedelta(seconds=10))
    assert clock.now() == datetime(2030, 1, 1, 0, 0, 7, 500000, tzinfo=UTC)


def test_the_setting_skews_the_system_clock():
    clock = skewed_clock({"DEVHOST_CLOCK_OFFSET_S": " 3.25 "})
    assert isinstance(clock, OffsetClock)
    skew = clock.now() - datetime.now(UTC)
    assert timedelta(seconds=3.2) < skew < timedelta(seconds=3.3)
    assert skewed_clock({}) is None and skewed_clock({"DEVHOST_CLOCK_OFFSET_S": ""}) is None


@pytest.mark.parametrize("text", ["soon", "nan", "inf"])
def test_a_bad_offset_is_refused_naming_the_setting(text):
    with pytest.raises(AppLoadError, match="DEVHOST_CLOCK_OFFSET_S: must be"):
        skewed_clock({"DEVHOST_CLOCK_OFFSET_S": text})


@pytest.mark.skipif(os.name != "posix", reason="ready pipes need fd passing")
def test_each_worker_process_gets_its_own_offset_in_turn(monkeypatch):
    monkeypatch.setenv("DEVHOST_WORKER_CLOCK_OFFSETS_S", "1.5, -2")
    procs = WorkerProcesses([sys.executable, "-c", REPORT_OFFSET], 3)
    try:
        said = [os.read(fd, 6).decode().strip() for fd in procs._ready_fds.values()]
    finally:
        procs.stop(grace_s=5)
    assert said == ["1.5", "-2", "1.5"]
