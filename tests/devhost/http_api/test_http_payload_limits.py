"""The selected backend's payload limit on the HTTP API: starts and events, both backends.

Under the Durable Task Scheduler (``azureManaged``) an orchestration input or an external
event over 1 MB is refused (Learn, "Durable Task Scheduler", limitations); under Azure
Storage it is accepted (large messages go to blobs). The local host answers the refusal
with 400 naming the limit and writes nothing (docs/fidelity.md, "Backends").
"""

import json

import pytest

from devhost.app.backends import AZURE_MANAGED, SCHEDULER_MAX_PAYLOAD_BYTES, Backend

WEBHOOK = "/runtime/webhooks/durabletask"
SCHEDULER = Backend(AZURE_MANAGED, "DURABLE_TASK_SCHEDULER_CONNECTION_STRING",
                    SCHEDULER_MAX_PAYLOAD_BYTES)
BIG = json.dumps("x" * 1_100_000).encode()
"""A 1.1 MB JSON string body."""


def start(server, http, body):
    return http.post(f"{server.base_url}{WEBHOOK}/orchestrators/big/big-1", content=body,
                     headers={"Content-Type": "application/json"})


def raise_event(server, http, body):
    server.taskhub.create_instance("waiter", "wait-1", None)
    return http.post(f"{server.base_url}{WEBHOOK}/instances/wait-1/raiseEvent/Reply",
                     content=body, headers={"Content-Type": "application/json"})



@pytest.mark.parametrize("path", [start, raise_event], ids=["start", "raiseEvent"])
@pytest.mark.parametrize(("backend", "refused"), [(None, False), (SCHEDULER, True)],
                         ids=["AzureStorage", "DurableTaskScheduler"])
def test_a_1_1_mb_payload_follows_the_backend(make_server, http, path, backend, refused):
    server = make_server(backend=backend)
    answer = path(server, http, BIG)
    if not refused:
        assert answer.status_code == 202, answer.text
        return
    assert answer.status_code == 400, answer.text
    assert "over the Durable Task Scheduler's limit of 1,048,576 bytes" in answer.text
    if path is start:
        assert server.taskhub.get_instance("big-1") is None  # nothing written
    assert server.woken == []


def test_a_payload_at_the_limit_is_accepted_by_the_scheduler(make_server, http):
    server = make_server(backend=SCHEDULER)
    body = json.dumps("x" * (SCHEDULER_MAX_PAYLOAD_BYTES - 2)).encode()
    assert start(server, http, body).status_code == 202
