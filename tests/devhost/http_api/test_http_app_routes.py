from dataclasses import dataclass

import azure.functions as func
import pytest
from starlette.responses import JSONResponse

from devhost.http_api import create_http_app
from devhost.http_api.app_routes import translate_route


@dataclass
class FakeFunction:
    name: str
    trigger: dict


def http_function(name, route=None, methods=None):
    trigger = {"type": "httpTrigger", "name": "req", "route": route}
    if methods is not None:
        trigger["methods"] = methods
    return FakeFunction(name, trigger)


async def fake_invoke(fdef, request):
    return JSONResponse({"function": fdef.name, "method": request.method,
                         "params": request.path_params, "query": dict(request.query_params),
                         "body": (await request.body()).decode()}, status_code=201)


FUNCTIONS = [
    http_function("start", "start/{name}", [func.HttpMethod.POST]),
    http_function("status", "orders/{id:int}", ["GET"]),
    http_function("listing", "orders/list", ["GET"]),
    http_function("page", "pages/{n=1}", ["GET"]),
    http_function("files", "files/{*path}"),
    http_function("health"),
]


@pytest.fixture
def app_server(make_server):
    return make_server(http_functions=FUNCTIONS, invoke_http=fake_invoke)


def test_route_with_parameter_and_method(app_server, http):
    response = http.post(f"{app_server.base_url}/api/start/Hello?x=1", content=b"payload")
    assert response.status_code == 201
    assert response.json() == {"function": "start", "method": "POST",
                               "params": {"name": "Hello"}, "query": {"x": "1"},
                               "body": "payload"}
    # The Functions host routes a method the function does not take to 404
    # (azure-functions-host #10098).
    assert http.get(f"{app_server.base_url}/api/start/Hello").status_code == 404


def test_literal_segment_wins_and_constraints_are_checked(app_server, http):
    assert http.get(f"{app_server.base_url}/api/orders/list").json()["function"] == "listing"
    body = http.get(f"{app_server.base_url}/api/orders/0042").json()
    assert (body["function"], body["params"]) == ("status", {"id": "0042"})
    assert http.get(f"{app_server.base_url}/api/orders/abc").status_code == 404


def test_default_and_catch_all_parameters(app_server, http):
    assert http.get(f"{app_server.base_url}/api/pages").json()["params"] == {"n": "1"}
    assert http.get(f"{app_server.base_url}/api/pages/7").json()["params"] == {"n": "7"}
    body = http.delete(f"{app_server.base_url}/api/files/a/b/c.txt").json()
    assert (body["function"], body["params"]) == ("files", {"path": "a/b/c.txt"})


def test_route_defaults_to_the_function_name_and_all_methods(app_server, http):
    for method in ("GET", "PUT", "PATCH"):
        response = http.request(method, f"{app_server.base_url}/api/health")
        assert response.json()["function"] == "health"


def test_durable_api_still_served_next_to_app_routes(app_server, http):
    assert http.get(f"{app_server.api}/instances").json() == []


def test_translate_route_variants():
    variants = translate_route("items/{category:alpha}/{id?}")
    assert [v.path for v in variants] == ["/api/items/{category}/{id}", "/api/items/{category}"]
    assert variants[0].constraints["category"].pattern == "[A-Za-z]+"
    assert translate_route("/x/{*rest}", prefix="")[0].path == "/x/{rest:path}"


@pytest.mark.parametrize(("template", "message"), [
    ("a/{id?}/b", "must be in a trailing segment"),
    ("a/{x}-{y?}", "must be alone in its segment"),
    ("a/{1x}", "is not a valid name"),
])
def test_malformed_templates_are_refused(template, message):
    with pytest.raises(ValueError, match=message):
        translate_route(template)


def test_http_functions_need_invoke_http(taskhub):
    with pytest.raises(ValueError, match="invoke_http: required"):
        create_http_app(taskhub, base_url="http://127.0.0.1:7071", http_functions=FUNCTIONS)
