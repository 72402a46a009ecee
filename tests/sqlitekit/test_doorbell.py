"""The doorbell: another listener of the same file is woken at once, and only by others.

Every wait below is bounded by a timeout far longer than a ring takes (a missing ring fails
the test after it); nothing sleeps and hopes.
"""

import logging
import os
import queue
import shutil
import subprocess
import sys
import threading

import pytest

from sqlitekit import doorbell
from sqlitekit.doorbell import Doorbell
from tests.support.child_env import with_repo_on_path

pytestmark = pytest.mark.skipif(not doorbell.SUPPORTED, reason="Linux only (the module says)")

RING_S = 10.0
"""Bound on a ring's arrival; it takes well under a millisecond."""


def listener(path):
    heard = queue.Queue()
    bell = Doorbell(path, heard.put)
    bell.listen()
    return bell, heard


@pytest.fixture
def db(tmp_path):
    return tmp_path / "bus.sqlite"


@pytest.fixture
def ringer(db):
    """A doorbell of ``db`` that rings without listening."""
    bell = Doorbell(db, lambda _channel: None)
    yield bell
    bell.close()


def test_a_ring_reaches_every_other_listener_of_the_file_with_its_channel(db, ringer):
    (a, heard_a), (b, heard_b) = listener(db), listener(db)
    try:
        ringer.ring("orders-shop-a")
        assert heard_a.get(timeout=RING_S) == "orders-shop-a"
        assert heard_b.get(timeout=RING_S) == "orders-shop-a"
    finally:
        a.close()
        b.close()


def test_a_listener_is_not_rung_by_its_own_ring_nor_by_another_file(db, tmp_path):
    other = tmp_path / "other.sqlite"
    (a, heard_a), (b, heard_b) = listener(db), listener(other)
    try:
        a.ring("work")  # to the listeners of db but a: none
        b.ring("work")  # to the listeners of other but b: none
        probe, heard_probe = listener(db)
        probe.ring("done")  # rings arrive in order: a hears this one, nothing before it
        assert heard_a.get(timeout=RING_S) == "done"
        assert heard_probe.empty() and heard_b.empty()
        probe.close()
    finally:
        a.close()
        b.close()


def test_a_dead_listeners_entry_is_removed_by_the_next_ring(db, ringer):
    a, heard = listener(db)
    ghost = db.with_name("bus.sqlite.doorbell") / "999999999-0"  # no socket behind it
    ghost.touch()
    try:
        ringer.ring("work")
        assert heard.get(timeout=RING_S) == "work"
        assert not ghost.exists()
    finally:
        a.close()


def test_close_unregisters_and_a_closed_listener_hears_nothing(db, ringer):
    a, heard = listener(db)
    registry = db.with_name("bus.sqlite.doorbell")
    assert len(list(registry.iterdir())) == 1
    a.close()
    a.close()  # idempotent
    assert list(registry.iterdir()) == []
    ringer.ring("work")  # no one left to ring: no error
    assert heard.empty()


def test_a_channel_too_long_to_carry_is_not_rung_and_does_not_raise(db, ringer):
    a, heard = listener(db)
    try:
        ringer.ring("q" * (doorbell.MAX_CHANNEL_BYTES + 1))
        ringer.ring("short")
        assert heard.get(timeout=RING_S) == "short"
    finally:
        a.close()


def test_a_callback_that_raises_is_logged_and_the_doorbell_keeps_ringing(db, ringer, caplog):
    heard = queue.Queue()

    def fussy(channel):
        if channel == "bad":
            raise RuntimeError("waiter bug")
        heard.put(channel)

    a = Doorbell(db, fussy)
    a.listen()
    try:
        with caplog.at_level(logging.ERROR, logger="sqlitekit.doorbell"):
            ringer.ring("bad")
            ringer.ring("good")
            assert heard.get(timeout=RING_S) == "good"
        assert any("doorbell callback failed" in r.getMessage() for r in caplog.records)
    finally:
        a.close()


def test_where_unsupported_listen_and_ring_do_nothing(db, monkeypatch):
    monkeypatch.setattr(doorbell, "SUPPORTED", False)
    heard = threading.Event()
    bell = Doorbell(db, lambda _channel: heard.set())
    bell.listen()
    bell.ring("work")
    bell.close()
    assert not db.with_name("bus.sqlite.doorbell").exists()
    assert not heard.is_set()


def test_a_ring_never_raises_when_the_registry_cannot_be_read(db, ringer):
    # ring runs after the commit of a send: an error there would fail a send that was made
    # (and a retry would send it twice). Here the registry is a file, not a folder.
    a, heard = listener(db)
    registry = db.with_name("bus.sqlite.doorbell")
    a.close()
    registry.rmdir()
    registry.write_text("not a folder")
    ringer.ring("work")  # no error
    assert heard.empty()


def test_a_listener_whose_registry_was_replaced_by_a_file_closes_without_error(db):
    a, _heard = listener(db)
    registry = db.with_name("bus.sqlite.doorbell")
    for entry in registry.iterdir():
        entry.unlink()
    registry.rmdir()
    registry.write_text("not a folder")
    a.close()  # no error: the engine's close goes on to close its connection


def test_a_ring_never_raises_when_the_registry_name_is_too_long(tmp_path):
    # A file name SQLite takes (its "-journal" fits) whose ".doorbell" sibling is too long.
    db = tmp_path / ("b" * (255 - len(".doorbell") + 1))
    bell = Doorbell(db, lambda _channel: None)
    try:
        bell.listen()  # logged, not raised (as before)
        bell.ring("work")  # no error
    finally:
        bell.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_is_a_listener_of_its_own_not_its_parents_copy(db):
    # A child of fork (multiprocessing's default on Linux) holds a copy of its parent's
    # doorbell: its rings must reach the parent, its close must not unregister the parent,
    # and its listen must register the child.
    a, heard = listener(db)
    registry = db.with_name("bus.sqlite.doorbell")
    try:
        pid = os.fork()
        if pid == 0:  # the child: report through the exit code, never return into pytest
            code = 1
            try:
                a.ring("from-child")
                a.listen()
                code = 0 if len(list(registry.iterdir())) == 2 else 2
                a.close()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert heard.get(timeout=RING_S) == "from-child"
        assert len(list(registry.iterdir())) == 1  # the parent's entry stays
        assert heard.empty()
    finally:
        a.close()


def test_a_closed_doorbell_stays_closed_a_later_listen_registers_nothing(db):
    # An engine's close closes its doorbell; a receiver thread still in its loop waits once
    # more (wait_for_send listens first), which must not register the closed engine again:
    # its entry would be rung for ever and its thread keep the engine alive.
    a, _heard = listener(db)
    registry = db.with_name("bus.sqlite.doorbell")
    a.close()
    a.listen()
    assert list(registry.iterdir()) == []


RING_BY_ALIAS = r"""
import sys
from sqlitekit.doorbell import Doorbell
Doorbell(sys.argv[1], lambda _channel: None).ring("by-alias")
"""


def test_a_ringer_that_reaches_the_file_by_another_mount_of_its_folder_rings_the_listener(
        db, tmp_path):
    # The same folder mounted twice (a container's volume, a bind mount): each process
    # names the file by its own path. A listener must be found from its registry entry, or
    # the ringer hears "refused", takes the listener for dead and unregisters it.
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) to bind-mount in a mount namespace of its own")
    alias = tmp_path / "alias"
    alias.mkdir()
    a, heard = listener(db)
    registry = db.with_name("bus.sqlite.doorbell")
    env = with_repo_on_path()
    try:
        script = (f"mount --bind '{db.parent}' '{alias}' || exit 77; "
                  f"exec '{sys.executable}' -c \"$0\" '{alias / db.name}'")
        done = subprocess.run(["unshare", "--mount", "sh", "-c", script, RING_BY_ALIAS],
                              env=env, capture_output=True, text=True, timeout=60)
        if done.returncode == 77 or done.stderr.startswith("unshare:"):
            pytest.skip(f"no mount namespace here: {done.stderr.strip()[:200]}")
        assert done.returncode == 0, done.stderr
        assert heard.get(timeout=RING_S) == "by-alias"
        assert len(list(registry.iterdir())) == 1
    finally:
        a.close()
