"""Every kind of history event through every way of replaying it (devhost replay, plugin).

Each orchestrator of ``forms_app`` is recorded in flight on the in-process host, its history
fetched as the Durable HTTP API shows it, and replayed from a file, from a folder, from the
task hub (``--data-dir``) and through the plugin: always clean against the same code.
"""

import json
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from devhost.run.cli import app

APP = Path(__file__).parent / "forms_app"
FORMS = ["activities", "fan_out", "timers", "timeouts", "events", "sub_orchestrations", "entities",
         "http_calls", "retries"]
PATHS = ["file", "folder", "task hub", "plugin"]


def record(host, form):
    host.mock_http("https://service.invalid/", {"statusCode": 200, "content": "pong"})
    instance_id = host.start(form, instance_id=f"{form}-1")
    host.run_until_idle()
    if form == "events":
        host.raise_event(instance_id, "go", 7)
    host.advance(timedelta(hours=2))
    doc = host.history(instance_id)
    assert doc["runtimeStatus"] == "Running"  # waiting for "finish"
    return doc


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("form", FORMS)
def test_a_history_in_flight_replays_clean_on_its_own_code(durable_host_factory, tmp_path,
                                                           form, path):
    host = durable_host_factory(APP)
    doc = record(host, form)
    kinds = {e["EventType"] for e in doc["historyEvents"]}
    assert {"activities": "TaskCompleted", "fan_out": "TaskCompleted", "timers": "TimerFired",
            "timeouts": "TimerCreated",
            "events": "EventRaised", "sub_orchestrations": "SubOrchestrationInstanceCompleted",
            "entities": "EventSent", "http_calls": "TaskCompleted",
            "retries": "TaskFailed"}[form] in kinds
    if path == "plugin":
        result = host.replay(doc)
        assert result.clean, result.line()
        return
    file = tmp_path / "histories" / f"{form}.json"
    file.parent.mkdir()
    file.write_text(json.dumps(doc))
    args = {"file": [file], "folder": [file.parent],
            "task hub": ["--data-dir", host.host.data_dir]}[path]
    run = CliRunner().invoke(app, ["replay", *map(str, args), "--app-dir", str(APP)])
    assert run.exit_code == 0, run.stdout + run.stderr
    assert f"{form} '{form}-1': same decisions" in run.stdout
