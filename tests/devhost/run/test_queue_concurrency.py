"""host.json's maxConcurrentCalls: taken up to the host's cap, and a value above it said (L1)."""

import logging

import pytest

from devhost.app.load_errors import AppLoadError
from devhost.run.runtime import MAX_QUEUE_THREADS, max_concurrent_calls
from tests.devhost.apps import write_app


def app_with(tmp_path, calls):
    extensions = {} if calls is None else {
        "extensions": {"serviceBus": {"maxConcurrentCalls": calls}}}
    return write_app(tmp_path / "app", {"function_app.py": ""},
                     host_json={"version": "2.0", **extensions})


@pytest.mark.parametrize("calls, slots, warned", [
    (1, 1, False), (MAX_QUEUE_THREADS, MAX_QUEUE_THREADS, False),
    (MAX_QUEUE_THREADS + 1, MAX_QUEUE_THREADS, True), (None, MAX_QUEUE_THREADS, True),
    ("2", 2, False)])
def test_slots_are_host_json_s_up_to_the_cap_and_a_cut_is_warned(tmp_path, caplog, calls,
                                                                 slots, warned):
    caplog.set_level(logging.WARNING, logger="devhost")
    assert max_concurrent_calls(app_with(tmp_path, calls)) == slots
    said = [r.getMessage() for r in caplog.records if "maxConcurrentCalls" in r.getMessage()]
    wanted = 16 if calls is None else int(calls)
    assert said == ([f"host.json: extensions.serviceBus.maxConcurrentCalls is {wanted}; the "
                     f"local host runs at most {MAX_QUEUE_THREADS} messages of each "
                     f"queue-triggered function at once, where Azure runs up to {wanted}"]
                    if warned else [])


def test_a_value_that_is_not_an_integer_stops_the_start_naming_the_setting(tmp_path):
    with pytest.raises(AppLoadError, match="maxConcurrentCalls must be an integer, got 'many'"):
        max_concurrent_calls(app_with(tmp_path, "many"))
