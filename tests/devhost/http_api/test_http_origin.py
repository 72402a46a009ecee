"""The local host answers only requests addressed to it, and changes only same-origin.

A web page in the developer's browser can reach a loopback server: a cross-site POST with
a ``text/plain`` body needs no CORS preflight, and a DNS-rebinding page talks to the port
under its own name. Against the real server: both are refused with 403 and the reason;
the SDK's own client, and the host's own pages, are not.
"""

from urllib.parse import urlsplit

import pytest

from devhost.http_api.origin_guard import own_authorities
from tests.devhost.http_api.helpers import queued_events, run


def start(server, instance_id):
    return run(server.client().start_new("Hello", instance_id, None))


def port_of(server) -> int:
    return urlsplit(server.base_url).port


def test_a_cross_site_terminate_is_refused_and_changes_nothing(server, http):
    start(server, "o-1")
    before = len(queued_events(server.taskhub, "o-1"))
    answer = http.post(f"{server.api}/instances/o-1/terminate?reason=x",
                       content=b"x", headers={"Origin": "https://evil.example",
                                              "Content-Type": "text/plain"})
    assert answer.status_code == 403
    assert "Origin: 'https://evil.example' is another site" in \
        answer.json()["ExceptionMessage"]
    assert len(queued_events(server.taskhub, "o-1")) == before


@pytest.mark.parametrize("origin", ["null", "http://127.0.0.1:1", "file://", "http://localhost"])
def test_every_foreign_origin_is_refused_for_a_change(server, http, origin):
    start(server, "o-5")
    before = len(queued_events(server.taskhub, "o-5"))
    answer = http.post(f"{server.api}/instances/o-5/raiseEvent/E", json=1,
                       headers={"Origin": origin})
    assert answer.status_code == 403
    assert len(queued_events(server.taskhub, "o-5")) == before


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1",
                                  "127.0.0.1:1", "localhost.evil.example:{port}", ""])
def test_a_request_under_another_name_is_refused_even_to_read(server, http, host):
    """DNS rebinding: the page's own name arrives in Host."""
    start(server, "o-2")
    answer = http.get(f"{server.api}/instances/o-2",
                      headers={"Host": host.format(port=port_of(server))})
    assert answer.status_code == 403
    assert "is not this host" in answer.json()["ExceptionMessage"]


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "LOCALHOST", "[::1]"])
def test_loopback_names_with_the_port_and_same_origin_changes_are_answered(server, http, name):
    start(server, "o-3")
    own = f"{name}:{port_of(server)}"
    read = http.get(f"{server.api}/instances/o-3", headers={"Host": own})
    assert read.status_code == 202 and read.json()["instanceId"] == "o-3"  # Pending
    change = http.post(f"{server.api}/instances/o-3/raiseEvent/E", json=1,
                       headers={"Host": own, "Origin": f"http://{own}"})
    assert change.status_code == 202


def test_the_sdks_client_sends_no_origin_and_is_answered(server):
    start(server, "o-4")
    run(server.client().raise_event("o-4", "E", 1))
    assert queued_events(server.taskhub, "o-4")[-1]["Name"] == "E"


def test_own_authorities_of_a_loopback_and_of_another_base_url():
    assert own_authorities("http://127.0.0.1:7071") == {
        "127.0.0.1:7071", "localhost:7071", "[::1]:7071"}
    assert own_authorities("http://devbox.internal:8080") == {"devbox.internal:8080"}
