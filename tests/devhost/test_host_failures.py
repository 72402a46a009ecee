"""SPEC L3: work that fails because of the host itself never loops; it ends as on Azure."""

import json
import logging

import pytest

from devhost.orchestration.sdk_errors import OUT_OF_PROC_MARKER, split_failure_text
from tests.devhost.conftest import output, start

pytestmark = pytest.mark.timeout(60)  # the defect this guards against was an endless loop


# ---------------------------------------------------------------- the reported case

def test_child_failure_fails_parent_at_once_naming_the_error(host, caplog):
    iid = start(host, "order_parent", None, "p1")
    steps = host.run_until_idle(max_steps=100)
    child = host.taskhub.get_instance("p1:0002")
    assert child.runtime_status == "Failed"
    status, out = output(host, iid)
    assert status == "Failed"
    assert out.startswith("Orchestrator function 'order_parent' failed: Sub-orchestration "
                          "'p1:0002' failed: ValueError: bad sku")
    assert steps < 20  # 2 activities, 1 child with 1 activity: a handful of episodes
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING
                and r.name.startswith("devhost")]


def test_failures_nested_three_deep_fail_every_level(host):
    start(host, "order_grandparent", None, "g1")
    host.run_until_idle(max_steps=100)
    statuses = {i.instance_id: i.runtime_status for i in host.taskhub.query()[0]}
    assert statuses == {"g1": "Failed", "g1:0000": "Failed", "g1:0000:0002": "Failed"}
    assert "bad sku" in output(host, "g1")[1]


def test_failure_text_is_split_at_its_last_marker_whatever_it_nests():
    # The SDK's form, nested as a failed child's details reach its parent, 3 deep.
    text = "ValueError: bad sku"
    for depth in range(3):
        state = {"isDone": False, "actions": [[{"actionType": 0, "depth": depth}]],
                 "error": text}
        text = f"Sub-orchestration failed: {text}{OUT_OF_PROC_MARKER}{json.dumps(state)}"
    message, state = split_failure_text(text)
    assert state["actions"] == [[{"actionType": 0, "depth": 2}]]
    assert message.count(OUT_OF_PROC_MARKER) == 2 and "bad sku" in message
    assert split_failure_text("no marker") == ("no marker", None)
    assert split_failure_text(f"cut{OUT_OF_PROC_MARKER}{{\"isDone\": fa") == (
        f"cut{OUT_OF_PROC_MARKER}{{\"isDone\": fa", None)
