"""Small function apps written into a temporary folder, in the styles public samples use."""

import json
import textwrap
from pathlib import Path

HOST_JSON = {"version": "2.0"}

MY_APP = '''
import azure.durable_functions as df
import azure.functions as func

myApp = df.DFApp(http_auth_level=func.AuthLevel.ANONYMOUS)


@myApp.route(route="orchestrators/{functionName}")
@myApp.durable_client_input(client_name="client")
async def http_start(req: func.HttpRequest, client):
    function_name = req.route_params.get("functionName")
    instance_id = await client.start_new(function_name, None, req.params.get("name"))
    return client.create_check_status_response(req, instance_id)


@myApp.orchestration_trigger(context_name="context")
def hello_orchestrator(context):
    result1 = yield context.call_activity("hello", "Seattle")
    result2 = yield context.call_activity("hello", "Tokyo")
    return [result1, result2]


@myApp.activity_trigger(input_name="city")
def hello(city: str):
    return f"Hello {city}"
'''
"""The Durable Functions Python quickstart: an app named ``myApp`` and an async starter."""


def write_app(folder: Path, files: dict[str, str], *, host_json: object = HOST_JSON,
              settings: dict[str, str] | None = None) -> Path:
    """Write an app folder: the given files, host.json and local.settings.json.

    ``host_json`` may be a dict (written as JSON), a string (written as is) or None (no
    file). Returns the folder.
    """
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    if isinstance(host_json, str):
        (folder / "host.json").write_text(host_json)
    elif host_json is not None:
        (folder / "host.json").write_text(json.dumps(host_json, indent=2))
    values = {"FUNCTIONS_WORKER_RUNTIME": "python", **(settings or {})}
    (folder / "local.settings.json").write_text(json.dumps({"Values": values}))
    return folder
