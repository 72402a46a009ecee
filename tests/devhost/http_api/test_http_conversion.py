"""An app's HTTP function, converted as the Functions host and the Python worker convert it.

Sources (devhost/app/http_convert.py cites the files): azure-functions-host
``GrpcMessageConversionExtensions.ToRpcHttp`` (repeated query keys and headers joined with
``,``, empty query values dropped), the worker's ``bindings/meta.py`` ``get_datum`` and
azure-functions ``HttpResponseConverter.encode`` (only ``HttpResponse`` and ``str`` encode;
the invocation of anything else fails: 500), ``HttpOptions.RoutePrefix``, the host's routing
(ASP.NET Core 8 ``Route``: paths ignore case and one trailing slash; a method the route does
not take, HEAD included, is 404, azure-functions-host #10098) and the extension's
``HttpApiHandler.GetClient`` (``taskHub``).
"""

import json
import logging
import re
import textwrap

import httpx
import pytest

from devhost.run.host import LocalHost

APP = textwrap.dedent('''
    import json

    import azure.functions as func

    app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)


    @app.route(route="echo", methods=["GET", "POST"])
    def echo(req: func.HttpRequest) -> func.HttpResponse:
        seen = {"params": dict(req.params),
                "multi": req.headers.get("x-multi"), "empty": req.headers.get("x-empty")}
        return func.HttpResponse(json.dumps(seen), mimetype="application/json")


    @app.route(route="value/{kind}", methods=["GET"])
    def value(req: func.HttpRequest):
        if req.route_params["kind"] == "raise":
            raise ValueError("the function failed")
        return {"str": "plain text", "none": None, "bytes": b"raw", "dict": {"a": 1},
                "int": 5, "list": [1]}[req.route_params["kind"]]


    @app.route(route="files/{*rest}", methods=["GET"])
    def files(req: func.HttpRequest) -> func.HttpResponse:
        return func.HttpResponse(repr(req.route_params.get("rest")))


    @app.route(route="cookies", methods=["GET"])
    def cookies(req: func.HttpRequest) -> func.HttpResponse:
        response = func.HttpResponse("two cookies")
        response.headers.add("Set-Cookie", "a=1; Path=/")
        response.headers.add("Set-Cookie", "b=2; Path=/")
        return response
''')


def make_app(folder, http_section=None):
    folder.mkdir()
    (folder / "function_app.py").write_text(APP)
    host_json = {"version": "2.0"}
    if http_section is not None:
        host_json["extensions"] = {"http": http_section}
    (folder / "host.json").write_text(json.dumps(host_json))
    return folder


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("conversion")
    host = LocalHost(make_app(root / "app"), root / "data")
    host.start_http()
    with httpx.Client(base_url=host.base_url, timeout=30) as client:
        yield client
    host.stop()


@pytest.mark.parametrize("kind,status,body,content_type", [
    ("str", 200, b"plain text", "text/plain; charset=utf-8"),
    ("none", 500, b"", None),
    ("bytes", 500, b"", None),
    ("dict", 500, b"", None),
    ("int", 500, b"", None),
    ("list", 500, b"", None),
    ("raise", 500, b"", None),
])
def test_return_values_encode_as_the_worker_encodes_them(served, kind, status, body,
                                                          content_type):
    response = served.get(f"/api/value/{kind}")
    assert (response.status_code, response.content) == (status, body)
    if content_type is not None:
        assert response.headers["content-type"] == content_type


def test_a_raising_http_function_logs_one_execution_line_as_core_tools_does(served, caplog):
    with caplog.at_level(logging.DEBUG, logger="devhost.functions"):
        assert served.get("/api/value/raise").status_code == 500
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(errors) == 1 and errors[0].name == "devhost.functions"
    assert re.fullmatch(r"Executed 'Functions\.value' \(Failed, Id=[0-9a-f-]{36}, "
                        r"Duration=\d+ms\): ValueError: the function failed",
                        errors[0].getMessage())
    assert "Traceback" not in errors[0].getMessage() and errors[0].exc_info is None


def test_http_response_mimetype_becomes_the_content_type(served):
    response = served.get("/api/echo")
    assert response.headers["content-type"] == "application/json"


def test_repeated_query_keys_and_headers_are_joined_and_empty_query_values_dropped(served):
    response = served.get("/api/echo?a=1&A=2&empty=&b=x",
                          headers=[("X-Multi", "one"), ("X-Multi", "two"), ("X-Empty", "")])
    assert response.json() == {"params": {"a": "1,2", "b": "x"}, "multi": "one,two",
                               "empty": ""}


def test_every_set_cookie_reaches_the_client(served):
    response = served.get("/api/cookies")
    assert response.headers.get_list("set-cookie") == ["a=1; Path=/", "b=2; Path=/"]
    assert response.text == "two cookies"


@pytest.mark.parametrize("method,path,status,body", [
    ("GET", "/api/echo", 200, None),
    ("GET", "/api/ECHO", 200, None),
    ("POST", "/API/Echo", 200, None),
    ("GET", "/api/value/str", 200, b"plain text"),
    ("GET", "/Api/VALUE/str", 200, b"plain text"),
    ("GET", "/api/echo/", 200, None),
    ("POST", "/api/ECHO/", 200, None),
    ("GET", "/api/value/str/", 200, b"plain text"),
    ("GET", "/api//echo", 404, None),
    ("GET", "/api/echo//", 404, None),
    ("GET", "/api/files/a/B", 200, b"'a/B'"),
    ("GET", "/API/Files/a/B/", 200, b"'a/B/'"),
    ("GET", "/api/files", 200, b"None"),
    ("GET", "/api/files/", 200, b"None"),
    ("HEAD", "/api/cookies", 404, b""),
    ("HEAD", "/api/echo/", 404, b""),
    ("DELETE", "/api/echo", 404, b""),
    ("POST", "/api/cookies", 404, b""),
    ("POST", "/api/COOKIES/", 404, b""),
])
def test_app_routes_match_as_the_functions_host_routes_them(served, method, path, status, body):
    response = served.request(method, path)
    assert response.status_code == status
    if body is not None:
        assert response.content == body


@pytest.mark.parametrize("section,path", [
    (None, "/api/echo"), ({"routePrefix": ""}, "/echo"), ({"routePrefix": "v1"}, "/v1/echo"),
    ({"routePrefix": "/edge/"}, "/edge/echo"),
])
def test_the_route_prefix_of_host_json_is_honoured(tmp_path, section, path):
    host = LocalHost(make_app(tmp_path / "app", section), tmp_path / "data")
    host.start_http()
    try:
        with httpx.Client(base_url=host.base_url, timeout=30) as client:
            assert client.get(path).status_code == 200
            if path != "/api/echo":
                assert client.get("/api/echo").status_code == 404
    finally:
        host.stop()


@pytest.mark.parametrize("query,status", [
    ("taskHub=TestHubName", 200), ("taskhub=testhubname", 200), ("TASKHUB=TESTHUBNAME", 200),
    ("taskHub=testhubname", 200), ("taskHub=%20", 200), ("taskHub=", 200),
    ("taskHub=%20&taskhub=TestHubName", 200), ("taskHub=OtherHub", 400),
    ("taskhub=OtherHub", 400),
])
def test_the_task_hub_parameter_compares_ignoring_case_and_a_blank_one_is_ignored(
        served, query, status):
    response = served.get(f"/runtime/webhooks/durabletask/instances?{query}")
    assert response.status_code == status
