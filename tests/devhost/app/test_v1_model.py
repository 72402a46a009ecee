"""v1-model apps (one folder per function, ``function.json``) run as the worker runs them.

Source: azure-functions-python-worker ``azure_functions_worker/loader.py``
(``load_function``: ``scriptFile``, ``entryPoint``, the ``__app__`` package); the app in
``v1_app/`` follows Azure/azure-functions-durable-python's v1 samples (function chaining
with an HTTP starter).
"""

import json
from pathlib import Path

import httpx
import pytest

from devhost.app.load_errors import AppLoadError
from devhost.run.host import LocalHost
from tests.devhost.app.test_app_loading import start_error
from tests.devhost.apps import write_app

V1_APP = Path(__file__).parent / "v1_app"

ORCHESTRATOR_JSON = {"bindings": [{"name": "context", "type": "orchestrationTrigger",
                                   "direction": "in"}]}


def test_a_v1_app_starts_over_http_and_runs_its_orchestration(tmp_path, clock):
    host = LocalHost(V1_APP, tmp_path / "data", clock=clock)
    assert sorted(f.name for f in host.index.all_functions()) == [
        "DurableFunctionsOrchestrator", "Goodbye", "Hello", "HttpStart", "StatusCheck"]
    host.start_http()
    try:
        with httpx.Client(timeout=30) as http:
            # The route's name in another case: function names compare ignoring case.
            started = http.post(f"{host.base_url}/api/orchestrators/"
                                "durablefunctionsorchestrator")
            assert started.status_code == 202
            instance_id = started.json()["id"]
            host.run_until_idle()
            status = http.get(f"{host.base_url}/api/status/{instance_id}")
            assert status.status_code == 200
            assert status.json() == {"runtimeStatus": "Completed", "output": [
                "Hello Tokyo!", "Hello Seattle!", "Goodbye London!"]}
    finally:
        host.stop()


def test_a_disabled_function_folder_is_not_loaded(tmp_path, clock):
    host = LocalHost(V1_APP, tmp_path / "data", clock=clock, serve_http=False)
    assert "Disabled" not in {f.name for f in host.index.all_functions()}


def v1_app(folder: Path, code: str, config: dict | str) -> Path:
    files = {"Orch/__init__.py": code}
    app = write_app(folder, files)
    text = config if isinstance(config, str) else json.dumps(config)
    (app / "Orch" / "function.json").write_text(text)
    return app


@pytest.mark.parametrize(("code", "config", "message"), [
    ("def run(context):\n    return None\n", ORCHESTRATOR_JSON,
     "Orch/__init__.py: cannot load function Orch: function main() is not present in "
     "Orch/__init__.py"),
    ("", dict(ORCHESTRATOR_JSON, scriptFile="orch.txt"),
     "Orch/function.json: cannot load function Orch: invalid Python filename orch.txt"),
    ("", dict(ORCHESTRATOR_JSON, scriptFile="gone.py"),
     "Orch/function.json: cannot load function Orch: the scriptFile Orch/gone.py does not "
     "exist"),
    ("", '{"bindings": [', "Orch/function.json:1:15: not valid JSON"),
    ("def main(context, extra):\n    return None\n", ORCHESTRATOR_JSON,
     "the following parameters are declared in Python but not in function.json: {'extra'}"),
    ("def main(q):\n    return None\n",
     {"bindings": [{"name": "q", "type": "queueTrigger", "direction": "in"}]},
     "function 'Orch': binding type 'queueTrigger' is not supported"),
])
def test_v1_load_errors_are_one_line_naming_the_file(tmp_path, clock, code, config, message):
    app = v1_app(tmp_path / "app", code, config)
    with pytest.raises(AppLoadError) as refused:
        LocalHost(app, tmp_path / "data", clock=clock, serve_http=False)
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)


def test_an_import_error_in_a_function_folder_is_one_start_up_line(tmp_path):
    app = v1_app(tmp_path / "app", "import nothing_of_that_name\n", ORCHESTRATOR_JSON)
    code, lines = start_error(app)
    assert code == 1
    assert lines == ["devhost: Orch/__init__.py:1:1: ModuleNotFoundError: No module named "
                     "'nothing_of_that_name'"]
