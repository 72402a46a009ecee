"""The dead-letter depth reader (orders/ops/dead_letters.py) over the real administration API.

ServiceBusAdministrationClient reads each queue's runtime properties from the namespace's
ATOM feed over HTTPS with a bearer token; the stand-in serves that feed (TLS with its own
certificate, trusted through REQUESTS_CA_BUNDLE) and answers 401 to an identity without the
Manage right, as Service Bus does. Only DefaultAzureCredential is replaced (no Entra ID is
reachable): the reader gets a fixed token, and the test checks the scope it asked for.
"""

from __future__ import annotations

import azure.identity
import pytest
from azure.servicebus import ServiceBusMessage

from orders.ops.dead_letters import dead_letter_depths
from orders.settings import Settings
from tests.wire.stand_in import LISTEN_SEND_TOKEN, MANAGE_TOKEN, StaticTokenCredential


@pytest.fixture
def https_trust(stand_in, monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(stand_in.ca_file))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")


def identity(monkeypatch, token):
    credential = StaticTokenCredential(token)
    monkeypatch.setattr(azure.identity, "DefaultAzureCredential", lambda: credential)
    return credential


def settings(stand_in):
    return Settings(MESSAGING_BACKEND="servicebus", STORE_BACKEND="cosmos",
                    COSMOS_ENDPOINT="https://unused.documents.azure.com:443/",
                    SERVICEBUS__fullyQualifiedNamespace=stand_in.https_namespace)


def dead_letter(stand_in, queue, count):
    with stand_in.token_client() as client:
        with client.get_queue_sender(queue) as sender:
            sender.send_messages([ServiceBusMessage(f"m{i}", message_id=f"{queue}-{i}")
                                  for i in range(count)])
        with client.get_queue_receiver(queue) as receiver:
            done = 0
            while done < count:
                for message in receiver.receive_messages(max_message_count=count,
                                                         max_wait_time=5):
                    receiver.dead_letter_message(message, reason="Poison", error_description="x")
                    done += 1


def test_depths_are_read_per_queue(stand_in, https_trust, monkeypatch):
    poisoned, clean = stand_in.create_queue("dl-poisoned"), stand_in.create_queue("dl-clean")
    dead_letter(stand_in, poisoned, 3)
    credential = identity(monkeypatch, MANAGE_TOKEN)
    depths, note = dead_letter_depths(settings(stand_in), [poisoned, clean])
    assert (depths, note) == ({poisoned: 3, clean: 0}, None)
    # The SDK asks Entra ID for Service Bus' audience (its constant has a double slash).
    assert credential.scopes and all(
        len(s) == 1 and s[0].startswith("https://servicebus.azure.net/")
        and s[0].endswith("/.default") for s in credential.scopes)


def test_without_the_manage_right_the_depth_is_unavailable_with_the_reason(
        stand_in, https_trust, monkeypatch):
    queue = stand_in.create_queue("dl-no-manage")
    identity(monkeypatch, LISTEN_SEND_TOKEN)  # Data Sender + Data Receiver only
    depths, note = dead_letter_depths(settings(stand_in), [queue])
    assert depths is None
    assert "Manage,EntityRead claims required" in note
    assert "Azure Service Bus Data Owner" in note


def test_an_unknown_queue_makes_the_depths_unavailable(stand_in, https_trust, monkeypatch):
    identity(monkeypatch, MANAGE_TOKEN)
    depths, note = dead_letter_depths(settings(stand_in), ["dl-missing"])
    assert depths is None
    assert "ResourceNotFoundError" in note and "dl-missing" in note
