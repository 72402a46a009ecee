"""A host hands the app its clock and sleep through ``clocks``; the app never imports it."""

from datetime import timedelta

import pytest

import clocks
from clocks import ManualClock
from orders.messaging.local import LocalQueueBrowser
from orders.runtime import build_services
from orders.settings import Settings
from sqlitebus import open_engine


@pytest.fixture
def handed(monkeypatch):
    monkeypatch.setattr(clocks, "_handed_over", None)
    clock = ManualClock()
    waits: list[float] = []
    clocks.hand_over(clocks.HostTime(clock, waits.append))
    return clock, waits


def local_settings(tmp_path):
    return Settings(DEVHOST_DATA_DIR=str(tmp_path), STORE_BACKEND="sqlite",
                    MESSAGING_BACKEND="local")


def test_services_take_the_clock_and_sleep_the_host_handed_over(tmp_path, handed):
    clock, waits = handed
    services = build_services(local_settings(tmp_path))
    try:
        assert services.clock is clock
        services.sleep(2.5)
        assert waits == [2.5]
    finally:
        services.close()


def test_without_a_host_services_use_the_system_clock_and_time_sleep(tmp_path, monkeypatch):
    import time

    monkeypatch.setattr(clocks, "_handed_over", None)
    services = build_services(local_settings(tmp_path))
    try:
        assert isinstance(services.clock, clocks.SystemClock)
        assert services.sleep is time.sleep
    finally:
        services.close()


def test_the_local_queue_browser_counts_by_the_clock_it_is_given(tmp_path):
    # A message scheduled 30 s ahead of the host's (manual) clock is active once that
    # clock passes it, whatever the machine's time says.
    clock = ManualClock()
    engine = open_engine(tmp_path, clock=clock)
    engine.send("orders", b"{}", message_id="m-1",
                scheduled_enqueue_time=clock.now() + timedelta(seconds=30))
    engine.close()
    browser = LocalQueueBrowser(tmp_path, clock)
    try:
        assert browser.queue_counts(["orders"])["orders"].active == 0
        clock.advance(timedelta(minutes=1))
        assert browser.queue_counts(["orders"])["orders"].active == 1
    finally:
        browser.close()
        browser.close()
