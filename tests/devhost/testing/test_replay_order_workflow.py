"""``devhost replay`` on histories recorded from this repository's order workflow.

Every registered version (read from the code, so a version added later is covered) runs
one order on the in-process host; its history is fetched as the Durable HTTP API shows it
and replayed by the CLI against today's code (clean, exit 0) and against a copy of the
code whose ``run_steps`` loads the order before it begins the attempt (the versions that
run ``run_steps`` diverge at their first task, exit 1).
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clocks import ManualClock
from orchestrators import order_workflow
from tests.e2e.harness import REPO, System, key, make_order

pytestmark = pytest.mark.slow(expected_s=40)

WORKSHOP = {"devhost", "tests", "bench", "demo", "simulator", "client", "opscli", "docs",
            "packaging", "node_modules"}
BEGIN = ("    begun = yield from call(context, BEGIN_ATTEMPT, BeginAttemptInput(\n"
         "        order_key=order_key, instance_id=iid, complete_by=deadline))\n"
         "    if begun.fenced:\n"
         "        return Superseded()\n"
         "    reply_to = str(begun.reply_to)\n")
LOAD = "    order = yield from call(context, LOAD_ORDER, order_key)\n"


def record_histories(tmp_path, monkeypatch) -> dict[int, dict]:
    """Run one order per registered version; return each attempt's history JSON."""
    histories = {}
    for version in sorted(order_workflow.WORKFLOWS):
        with monkeypatch.context() as patch:
            system = System(tmp_path / f"v{version}", ManualClock(), patch,
                            settings={"WORKFLOW_VERSION": str(version)})
            try:
                order = make_order(100 + version)
                system.submit(order)
                system.run(10)
                doc = system.durable.history(f"{key(order)}:1")
            finally:
                system.close()
        assert doc["runtimeStatus"] == "Completed", (version, doc["runtimeStatus"])
        histories[version] = doc
    return histories


def replay(app_dir: Path, histories: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "devhost", "replay", str(histories),
                           "--app-dir", str(app_dir)], capture_output=True, text=True,
                          timeout=120, cwd=histories.parent)


def reordered_copy(target: Path) -> Path:
    """Copy the deployed app, with ``load_order`` scheduled before ``begin_attempt``."""
    for item in REPO.iterdir():
        if item.is_dir() and (item / "__init__.py").is_file() and item.name not in WORKSHOP:
            shutil.copytree(item, target / item.name,
                            ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "infra", target / "infra")
    for name in ("function_app.py", "host.json", "local.settings.json"):
        shutil.copy(REPO / name, target / name)
    workflow = target / "orchestrators" / "frozen_workflows.py"
    code = workflow.read_text()
    assert BEGIN + LOAD in code
    workflow.write_text(code.replace(BEGIN + LOAD, LOAD + BEGIN))
    return target


def runs_steps(version: int) -> bool:
    return "run_steps" in order_workflow.WORKFLOWS[version].__code__.co_names


def test_every_version_replays_clean_and_a_reordered_call_diverges_at_its_event(
        tmp_path, monkeypatch):
    histories = record_histories(tmp_path, monkeypatch)
    folder = tmp_path / "histories"
    folder.mkdir()
    for version, doc in histories.items():
        (folder / f"v{version}.json").write_text(json.dumps(doc))

    today = replay(REPO, folder)
    assert today.returncode == 0, today.stdout + today.stderr
    assert today.stdout.count(": same decisions") == len(histories)

    diverging = {v for v in histories if runs_steps(v)}
    assert diverging, "no version runs run_steps: the reordered copy changes nothing"
    changed = replay(reordered_copy(tmp_path / "changed"), folder)
    assert changed.returncode == 1, changed.stdout + changed.stderr
    lines = {line.split(":")[0]: line for line in changed.stdout.splitlines()
             if line.startswith(str(folder))}
    for version, doc in histories.items():
        line = lines[str(folder / f"v{version}.json")]
        if version not in diverging:
            assert line.endswith(": same decisions"), line
            continue
        position = next(i for i, e in enumerate(doc["historyEvents"])
                        if e.get("FunctionName") == "begin_attempt")
        assert f"diverges at historyEvents[{position}] (TaskCompleted begin_attempt): " \
               "Non-Deterministic workflow detected: A previous execution of this " \
               "orchestration scheduled an activity task with sequence number 0 named " \
               "'begin_attempt', but the current orchestration replay instead scheduled an " \
               "activity task named 'load_order'" in line, line
