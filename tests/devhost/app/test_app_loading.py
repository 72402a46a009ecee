"""The app is found, checked and loaded as the Python worker and the Functions host do."""

import json
import logging
import os
import subprocess
import sys

import httpx
import pytest

from devhost.app.host_config import load_host_config
from devhost.app.loader import AppLoadError, load_app
from devhost.run.host import LocalHost
from tests.devhost.apps import MY_APP, write_app


def start_error(app_dir, *extra):
    """Run ``devhost start`` on a broken app: (exit code, stderr lines)."""
    proc = subprocess.run(
        [sys.executable, "-m", "devhost", "start", "--app-dir", str(app_dir), "--data-dir",
         str(app_dir / ".data"), "--port", "0", "--workers", "1", *extra],
        capture_output=True, text=True, timeout=60, env=os.environ.copy())
    return proc.returncode, proc.stderr.strip().splitlines()


def test_an_app_named_my_app_with_an_async_starter_runs_end_to_end(tmp_path, clock):
    app_dir = write_app(tmp_path / "app", {"function_app.py": MY_APP})
    host = LocalHost(app_dir, tmp_path / "data", clock=clock)
    host.start_http()
    try:
        answer = httpx.post(f"{host.base_url}/api/orchestrators/hello_orchestrator")
        assert answer.status_code == 202
        instance_id = answer.json()["id"]
        host.run_until_idle()
        record = host.taskhub.get_instance(instance_id)
        assert (record.runtime_status, json.loads(record.output)) == (
            "Completed", ["Hello Seattle", "Hello Tokyo"])
    finally:
        host.stop()


def test_blueprints_registered_on_an_app_of_any_name(tmp_path):
    app_dir = write_app(tmp_path / "app", {
        "greetings.py": '''
            import azure.durable_functions as df

            bp = df.Blueprint()

            @bp.orchestration_trigger(context_name="context")
            def greet(context):
                return (yield context.call_activity("say", "hi"))

            @bp.activity_trigger(input_name="word")
            def say(word: str) -> str:
                return word.upper()
            ''',
        "function_app.py": '''
            import azure.durable_functions as df
            from greetings import bp

            functions = df.DFApp()
            functions.register_functions(bp)
            ''',
    })
    _, index = load_app(app_dir)
    assert sorted(index.orchestrators) == ["greet"] and sorted(index.activities) == ["say"]


def test_two_function_apps_in_the_script_are_refused_naming_both(tmp_path):
    app_dir = write_app(tmp_path / "app", {"function_app.py": '''
        import azure.functions as func
        app = func.FunctionApp()
        other = func.FunctionApp()
        '''})
    with pytest.raises(AppLoadError, match=r"^function_app.py: More than one FunctionApp or "
                       r"other top level function app instances are defined: app, other$"):
        load_app(app_dir)


def test_a_script_without_a_function_app_is_refused(tmp_path):
    app_dir = write_app(tmp_path / "app", {"function_app.py": "import azure.functions\n"})
    with pytest.raises(AppLoadError, match="Could not find top level function app instances "
                                           "in function_app.py"):
        load_app(app_dir)


def test_python_script_file_name_setting_names_the_script(tmp_path):
    app_dir = write_app(tmp_path / "app", {"my_app.py": MY_APP},
                        settings={"PYTHON_SCRIPT_FILE_NAME": "my_app.py"})
    _, index = load_app(app_dir)
    assert sorted(index.orchestrators) == ["hello_orchestrator"]


def test_an_invalid_script_file_name_is_refused_as_the_worker_does(tmp_path):
    app_dir = write_app(tmp_path / "app", {"function_app.py": MY_APP},
                        settings={"PYTHON_SCRIPT_FILE_NAME": "my app.py"})
    with pytest.raises(AppLoadError, match="PYTHON_SCRIPT_FILE_NAME: Invalid file name: "
                                           "my app.py"):
        load_app(app_dir)


def test_an_exception_in_a_module_the_app_imports_points_at_that_line(tmp_path):
    app_dir = write_app(tmp_path / "app", {
        "helpers/settings.py": "LIMIT = 10\nRATE = LIMIT / 0\n",
        "helpers/__init__.py": "",
        "function_app.py": "import azure.functions as func\nimport helpers.settings\n"
                           "app = func.FunctionApp()\n",
    })
    with pytest.raises(AppLoadError) as caught:
        load_app(app_dir)
    assert str(caught.value) == ("helpers/settings.py:2:8: ZeroDivisionError: "
                                 "division by zero")


def test_a_syntax_error_stops_the_start_with_one_line(tmp_path):
    app_dir = write_app(tmp_path / "app", {"function_app.py": MY_APP.replace(
        "def hello(city: str):", "def hello(city: str)")})
    code, lines = start_error(app_dir)
    line = MY_APP.lstrip("\n").splitlines().index("def hello(city: str):") + 1
    assert code == 1
    assert lines == [f"devhost: function_app.py:{line}:21: SyntaxError: expected ':'"]
    code, lines = start_error(app_dir, "--log-level", "debug")
    assert "Traceback (most recent call last):" in lines


def test_host_json_with_two_objects_stops_the_start_with_one_line(tmp_path):
    app_dir = write_app(tmp_path / "app", {"function_app.py": MY_APP},
                        host_json='{"version": "2.0"}\n{"version": "2.0"}\n')
    code, lines = start_error(app_dir)
    assert code == 1
    assert lines == ["devhost: host.json:2:1: not valid JSON: Extra data"]


def test_host_json_comments_are_allowed_as_on_azure(tmp_path):
    app_dir = write_app(tmp_path / "app", {"function_app.py": MY_APP}, host_json='''{
        // the task hub of this app
        "version": "2.0", /* block "comment" */
        "extensions": {"durableTask": {"hubName": "Commented//Hub"}}
    }''')
    assert load_host_config(app_dir).durable.hub_name == "Commented//Hub"


@pytest.mark.parametrize(("text", "message"), [
    ('{"extensions": {}}', "host.json: the file is missing the required 'version' property"),
    ('{"version": "3.0"}', "host.json: '3.0' is an invalid value for the 'version' property"),
    ("[]", "host.json:1:1: the file must hold one JSON object, not list"),
])
def test_host_json_version_and_shape_are_checked(tmp_path, text, message):
    app_dir = write_app(tmp_path / "app", {"function_app.py": MY_APP}, host_json=text)
    with pytest.raises(AppLoadError, match="^" + message.replace("(", r"\(")):
        load_host_config(app_dir)


def test_a_parameter_no_binding_declares_is_refused_at_load(tmp_path):
    # The client decorator of a Blueprint, applied to a function of the app, binds the
    # client to the Blueprint's last function: the starter has no durableClient binding.
    app_dir = write_app(tmp_path / "app", {"function_app.py": '''
        import azure.durable_functions as df
        import azure.functions as func

        app = df.DFApp()
        shared = df.Blueprint()


        @shared.activity_trigger(input_name="name")
        def greet(name: str) -> str:
            return f"Hello {name}"


        @shared.durable_client_input(client_name="client")
        @app.route(route="start")
        async def starter(req: func.HttpRequest, client):
            return func.HttpResponse("unreachable")
        '''})
    with pytest.raises(AppLoadError) as caught:
        load_app(app_dir)
    assert str(caught.value).startswith(
        "function_app.py:13: cannot load the starter function: the following parameters are "
        "declared in Python but not in function.json: {'client'}")


def test_a_decorator_of_another_registry_without_a_pending_function_fails_the_import(
        tmp_path):
    # azure.functions itself fails here: the error names the decorator's line.
    app_dir = write_app(tmp_path / "app", {"function_app.py": '''
        import azure.durable_functions as df
        import azure.functions as func

        app = df.DFApp()
        shared = df.Blueprint()


        @app.route(route="start")
        @shared.durable_client_input(client_name="client")
        async def starter(req: func.HttpRequest, client):
            return func.HttpResponse("unreachable")
        '''})
    with pytest.raises(AppLoadError, match=r"^function_app.py:8:2: IndexError: pop from empty "
                                           r"list$"):
        load_app(app_dir)


def test_an_orchestrator_context_name_other_than_context_is_refused_as_on_azure(tmp_path):
    # The SDK's handler takes ``context`` (annotated OrchestrationContext): the worker
    # treats it as the invocation context and refuses its annotation.
    app_dir = write_app(tmp_path / "app", {"function_app.py": '''
        import azure.durable_functions as df

        app = df.DFApp()


        @app.orchestration_trigger(context_name="ctx")
        def orchestrator(ctx):
            return None
        '''})
    with pytest.raises(AppLoadError) as caught:
        load_app(app_dir)
    assert str(caught.value) == (
        "function_app.py:6: cannot load the orchestrator function: the \"context\" parameter "
        "is expected to be of type azure.functions.Context, got "
        "<class 'azure.functions._durable_functions.OrchestrationContext'>")


def test_an_unbound_context_parameter_receives_the_invocation_context(tmp_path, clock):
    app_dir = write_app(tmp_path / "app", {"function_app.py": '''
        import azure.functions as func

        app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)


        @app.route(route="whoami")
        def whoami(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
            return func.HttpResponse(f"{context.function_name} {len(context.invocation_id)}")
        '''})
    host = LocalHost(app_dir, tmp_path / "data", clock=clock)
    host.start_http()
    try:
        assert httpx.get(f"{host.base_url}/api/whoami").text == "whoami 36"
    finally:
        host.stop()


def test_an_app_without_host_json_runs_on_the_defaults_and_is_warned_about(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="devhost"):
        config = load_host_config(tmp_path, environ={})
    assert config.durable.hub_name == "TestHubName"
    assert f"no host.json in {tmp_path}: Azure Functions Core Tools would not start this " \
           "app; running with the defaults" in caplog.text
