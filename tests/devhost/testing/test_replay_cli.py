"""``devhost replay``: exit codes, one line per bad input, task hub mode, replay from the plugin."""

import json
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from devhost.run.cli import app

APP = Path(__file__).parent / "approval_app"
REQUEST = {"approver": "ana", "amount": 1200}


def run(*args):
    return CliRunner().invoke(app, ["replay", *map(str, args)])


@pytest.fixture
def recorded(durable_host_factory, tmp_path):
    """An approval that escalated, its history saved as the Durable HTTP API shows it."""
    host = durable_host_factory(APP)
    instance_id = host.start("approval", REQUEST)
    host.advance(timedelta(days=3))
    path = tmp_path / "escalated.json"
    path.write_text(json.dumps(host.history(instance_id)))
    return path


def changed_app(tmp_path: Path, old: str, new: str) -> Path:
    folder = shutil.copytree(APP, tmp_path / "changed", ignore=shutil.ignore_patterns(
        "__pycache__", "test_*.py", "conftest.py"))
    code = (folder / "function_app.py").read_text()
    assert old in code
    (folder / "function_app.py").write_text(code.replace(old, new))
    return folder


NOTIFY = '    yield context.call_activity("notify_approver", request)\n'
PAUSE_FIRST = '    yield context.create_timer(context.current_utc_datetime)\n' + NOTIFY


def test_a_history_replays_clean_on_its_own_code_and_diverges_on_a_reordered_copy(
        recorded, tmp_path):
    clean = run(recorded, "--app-dir", APP)
    assert (clean.exit_code, clean.stdout.splitlines()) == (0, [
        f"{recorded}: approval '{json.loads(recorded.read_text())['instanceId']}': same "
        "decisions", "devhost: replayed 1 instance, 0 diverged"])
    # A timer yielded before the first call (a timer created but not yet yielded is no
    # decision: the SDK schedules a task when it is awaited, so that change replays clean).
    folder = changed_app(tmp_path, NOTIFY, PAUSE_FIRST)
    changed = run(recorded, "--app-dir", folder)
    assert changed.exit_code == 1
    assert "diverges at historyEvents[1] (TaskCompleted notify_approver): Non-Deterministic " \
           "workflow detected: A previous execution of this orchestration scheduled an " \
           "activity task with sequence number 0 named 'notify_approver', but the current " \
           "orchestration replay instead produced a CreateTimerOrchestratorAction action " \
           "with this sequence number." in changed.stdout


def test_the_plugin_replays_a_history_against_another_version_of_the_app(
        durable_host_factory, recorded, tmp_path):
    doc = json.loads(recorded.read_text())
    assert durable_host_factory(APP).replay(doc).clean
    folder = changed_app(tmp_path, '"escalate", request', '"notify_approver", request')
    result = durable_host_factory(folder).replay(doc)
    assert (result.clean, result.position, result.event) == (
        False, 4, "TaskCompleted escalate")
    assert "named 'escalate', but the current orchestration replay instead scheduled an " \
           "activity task named 'notify_approver'" in result.message


def test_every_in_flight_instance_of_a_task_hub_replays(durable_host_factory, tmp_path):
    host = durable_host_factory(APP)
    waiting = [host.start("approval", REQUEST, instance_id=f"approval-{n}") for n in range(2)]
    done = host.start("approval", REQUEST)
    host.run_until_idle()
    host.raise_event(done, "approval", True)
    host.run_until_idle()
    result = run("--data-dir", host.host.data_dir, "--app-dir", APP)
    assert result.exit_code == 0, result.stdout
    assert sorted(line.split("'")[1] for line in result.stdout.splitlines()[:-1]) == waiting


def test_a_task_hub_s_instance_diverges_at_its_row_of_devhost_history(
        durable_host_factory, tmp_path):
    host = durable_host_factory(APP)
    host.start("approval", REQUEST, instance_id="waiting")
    host.run_until_idle()
    folder = changed_app(tmp_path, NOTIFY, PAUSE_FIRST)
    result = run("--data-dir", host.host.data_dir, "--app-dir", folder)
    assert result.exit_code == 1, result.stdout
    assert "approval 'waiting': diverges at row 2 of devhost history (TaskScheduled " \
           "notify_approver): Non-Deterministic workflow detected: A previous execution of " \
           "this orchestration scheduled an activity task with sequence number 0 named " \
           "'notify_approver', but the current orchestration replay instead produced a " \
           "CreateTimerOrchestratorAction action" in result.stdout
    history = CliRunner().invoke(app, ["history", "waiting", "--data-dir",
                                       str(host.host.data_dir)])
    row = next(line for line in history.stdout.splitlines() if "│ 2 " in line)
    assert "│ TaskSchedul" in row and "│ notify_appr" in row  # the table cuts long cells


@pytest.mark.parametrize(("case", "expected"), [
    ("no app", "devhost: replay: {tmp}: no app here (no host.json); point --app-dir at the "
               "app's folder"),
    ("app fails to load", "devhost: replay: the app fails to load: function_app.py:3:22: "
                          "SyntaxError"),
    ("not JSON", "devhost: replay: {tmp}/h.json: not JSON (Expecting property name"),
    ("not a history", "devhost: replay: {tmp}/h.json: not an instance history: expected the "
                      "Durable HTTP API's status JSON with historyEvents"),
    ("not an event", "devhost: replay: {tmp}/h.json: historyEvents[0]: not a history event"),
    ("no such file", "devhost: replay: {tmp}/missing.json: no such file or folder"),
    ("nothing to replay", "devhost: replay: give one history file or folder, or --data-dir"),
    ("no task hub", "devhost: replay: {tmp}: no task hub (taskhub.sqlite) in this folder"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, case, expected):
    app_dir, history = APP, tmp_path / "h.json"
    history.write_text({"not JSON": "{", "not a history": '{"name": "x"}',
                        "not an event": '{"historyEvents": [{"EventType": "Nope"}]}'}.get(
        case, json.dumps({"historyEvents": [{"EventType": "ExecutionStarted"}]})))
    args = [history]
    if case == "no app":
        app_dir = tmp_path
    elif case == "app fails to load":
        app_dir = changed_app(tmp_path, "from datetime", "from datetime import (\nfrom x")
    elif case == "no such file":
        args = [tmp_path / "missing.json"]
    elif case == "nothing to replay":
        args = []
    elif case == "no task hub":
        args = ["--data-dir", tmp_path]
    result = run(*args, "--app-dir", app_dir)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected.format(tmp=tmp_path)), lines


def test_a_history_with_azure_s_timestamps_replays_as_the_host_s(recorded):
    # Azure writes seven fractional digits, and each event its own instant.
    doc = json.loads(recorded.read_text())
    for n, event in enumerate(doc["historyEvents"]):
        for field in ("Timestamp", "ScheduledTime"):
            if field in event:
                event[field] = event[field][:20] + f"{n:07d}Z"
    recorded.write_text(json.dumps(doc))
    result = run(recorded, "--app-dir", APP)
    assert result.exit_code == 0, result.stdout
