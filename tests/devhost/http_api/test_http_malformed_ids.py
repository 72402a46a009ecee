"""Every Durable HTTP API route answers a malformed instance id with JSON and a reason (D2)."""

import json
import re

import pytest

from tests.devhost.http_api.helpers import WEBHOOK, queued_events

ROUTES = [
    ("GET", "/instances/{id}"),
    ("DELETE", "/instances/{id}"),
    ("POST", "/instances/{id}/raiseEvent/Approval"),
    ("POST", "/instances/{id}/terminate"),
    ("POST", "/instances/{id}/suspend"),
    ("POST", "/instances/{id}/resume"),
    ("POST", "/instances/{id}/rewind"),
    ("POST", "/instances/{id}/restart"),
    ("POST", "/orchestrators/Hello/{id}"),
]

MALFORMED = [  # (as sent in the URL, the rule named)
    ("a%2Fb", "must not contain '/'"),
    ("a%2fterminate", "must not contain '/'"),  # never read as "terminate instance a"
    ("a%5Cb", r"must not contain '\\\\'"),
    ("a%23b", "must not contain '#'"),
    ("a%3Fb", r"must not contain '\?'"),
    ("x" * 101, "must be 1 to 100 characters long, got 101"),
    ("a%01b", r"must not contain control characters \(U\+0001 at position 1\)"),
    ("a%7Fb", r"must not contain control characters \(U\+007F at position 1\)"),
    # An entity-like id with a slash: the start route names the '@' rule, the others '/'.
    ("%40a%2Fb", "must not (contain '/'|start with '@')"),
]


@pytest.fixture
def existing(server):
    """Instance "a", which a misrouted request could hit."""
    server.taskhub.create_instance("Hello", "a", json.dumps(1))
    return "a"


@pytest.mark.parametrize(("method", "route"), ROUTES)
@pytest.mark.parametrize(("raw_id", "rule"), MALFORMED)
def test_malformed_id_is_400_json_naming_the_rule_and_changes_nothing(
        server, http, existing, method, route, raw_id, rule):
    headers = {"Content-Type": "application/json"}
    response = http.request(method, server.api + route.replace("{id}", raw_id),
                            content=b"{}", headers=headers)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["Message"] == "One or more of the arguments submitted is incorrect"
    assert body["ExceptionMessage"].startswith("instanceId: ")
    assert re.search(rule, body["ExceptionMessage"]), body["ExceptionMessage"]
    [only] = server.taskhub.query()[0]
    assert only.instance_id == existing and only.runtime_status == "Pending"
    assert [e["EventType"] for e in queued_events(server.taskhub, existing)] == [0]


@pytest.mark.parametrize(("method", "route"), ROUTES[:-1])
def test_leading_at_is_an_entity_id_looked_up_then_404_as_the_extension(
        server, http, method, route):
    # No instance has that id: the extension's 404 (no body; a restart's unknown id is
    # its 400, "InstanceId does not match a valid orchestration instance.").
    response = http.request(method, server.api + route.replace("{id}", "@counter@k"),
                            content=b"{}", headers={"Content-Type": "application/json"})
    if route.endswith("/restart"):
        assert response.status_code == 400
        assert response.json()["ExceptionMessage"] == (
            "An orchestrastion with the instanceId @counter@k was not found.")
    else:
        assert (response.status_code, response.content) == (404, b"")


def test_starting_an_instance_with_a_leading_at_is_400(server, http):
    response = http.post(f"{server.api}/orchestrators/Hello/@x", json={})
    assert response.status_code == 400
    assert "must not start with '@'" in response.json()["ExceptionMessage"]


@pytest.mark.parametrize(("method", "path", "status", "reason"), [
    ("GET", "/instances/a/terminate", 405, "method: GET is not allowed"),
    ("POST", "/instances/a/raiseEvent/E%2Fx", 404, "no Durable HTTP API route POST"),
    ("GET", "/nothing/here", 404, "no Durable HTTP API route GET"),
])
def test_unknown_webhook_routes_answer_json_with_a_reason(server, http, method, path, status,
                                                          reason):
    response = http.request(method, server.api + path)
    assert response.status_code == status
    assert reason in response.json()["ExceptionMessage"]


def test_app_routes_outside_the_webhook_keep_the_plain_404(server, http):
    response = http.get(server.base_url + "/api/nothing")
    assert response.status_code == 404
    assert not WEBHOOK.startswith("/api")
    assert response.headers["content-type"].startswith("text/plain")
