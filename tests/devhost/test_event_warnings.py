"""L1: the SDK's external-event surprises are warned about, never changed (drain mode)."""

import json
import logging

from devhost.orchestration.event_warnings import ONE_SLOT_ISSUE
from tests.devhost.conftest import output, start


def event_warnings(caplog):
    return [r.getMessage() for r in caplog.records
            if r.name == "devhost.events" and r.levelno == logging.WARNING]


def test_second_event_before_any_wait_replaces_the_first_with_a_warning(host, caplog):
    iid = start(host, "two_approvals")
    assert host.worker.run_episodes(1)  # now busy with an activity, no wait open yet
    host.taskhub.raise_event(iid, "Approval", json.dumps("first"))
    host.taskhub.raise_event(iid, "Approval", json.dumps("second"))
    host.run_until_idle()
    # The SDK's behaviour, as on Azure: one slot per name; both waits get the later event.
    assert output(host, iid) == ("Completed", ["second", "second"])
    [warning] = event_warnings(caplog)
    assert f"instance '{iid}': event 'Approval' arrived while an earlier 'Approval'" in warning
    assert ONE_SLOT_ISSUE in warning


def test_the_slot_warning_also_covers_events_arriving_in_separate_episodes(host, caplog):
    iid = start(host, "two_approvals")
    assert host.worker.run_episodes(1)
    host.taskhub.raise_event(iid, "Approval", json.dumps(1))
    assert host.worker.run_episodes(1)  # the first event alone: kept, nothing lost yet
    assert event_warnings(caplog) == []
    host.taskhub.raise_event(iid, "Approval", json.dumps(2))
    host.run_until_idle()
    assert output(host, iid) == ("Completed", [2, 2])
    assert len(event_warnings(caplog)) == 1


def test_event_name_differing_only_in_case_is_warned_and_not_delivered(host, caplog):
    iid = start(host, "race", 3600)
    host.run_until_idle()
    host.taskhub.raise_event(iid, "approval", json.dumps({"ok": True}))
    host.run_until_idle()
    assert output(host, iid) == ("Running", None)  # the SDK matches names exactly
    [warning] = event_warnings(caplog)
    assert warning == (
        f"instance '{iid}': event 'approval' matches the open wait for 'Approval' only when "
        "case is ignored; the Python SDK matches event names exactly, on Azure too (the "
        ".NET SDK ignores case), so that wait is not completed")
    host.taskhub.raise_event(iid, "Approval", json.dumps({"ok": True}))
    host.run_until_idle()
    assert output(host, iid) == ("Completed", {"outcome": "approved", "value": {"ok": True}})
    assert len(event_warnings(caplog)) == 1  # an exact match says nothing
