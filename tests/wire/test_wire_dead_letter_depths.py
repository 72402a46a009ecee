"""The dead-letter depth reader (orders/messaging/depths.py) over the real administration API.

ServiceBusAdministrationClient reads each queue's runtime properties from the namespace's
ATOM feed over HTTPS with a bearer token; the stand-in serves that feed (TLS with its own
certificate, trusted through REQUESTS_CA_BUNDLE) and answers 401 to an identity without the
Manage right, as Service Bus does. No Entra ID is reachable, so the reader is given a
credential with a fixed token (the process's one credential in the app), and the test
checks the scope it asked for.
"""

from __future__ import annotations

import pytest
from azure.servicebus import ServiceBusMessage

from ops.dead_letters import dead_letter_depths
from orders.messaging.depths import AzureDepthReader
from tests.wire.stand_in import LISTEN_SEND_TOKEN, MANAGE_TOKEN, StaticTokenCredential


@pytest.fixture
def https_trust(stand_in, monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(stand_in.ca_file))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")


def reader(stand_in, credential):
    return AzureDepthReader(stand_in.https_namespace, credential)


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
    credential = StaticTokenCredential(MANAGE_TOKEN)
    depths_of = reader(stand_in, credential)
    depths, note = dead_letter_depths(depths_of, [poisoned, clean])
    assert (depths, note) == ({poisoned: 3, clean: 0}, None)
    # The same client serves the next read (built once per process).
    assert dead_letter_depths(depths_of, [poisoned]) == ({poisoned: 3}, None)
    depths_of.close()
    # The SDK asks Entra ID for Service Bus' audience (its constant has a double slash).
    assert credential.scopes and all(
        len(s) == 1 and s[0].startswith("https://servicebus.azure.net/")
        and s[0].endswith("/.default") for s in credential.scopes)


def test_without_the_manage_right_the_depth_is_unavailable_with_the_reason(
        stand_in, https_trust, monkeypatch):
    queue = stand_in.create_queue("dl-no-manage")
    # Data Sender + Data Receiver only.
    depths, note = dead_letter_depths(reader(stand_in, StaticTokenCredential(LISTEN_SEND_TOKEN)),
                                      [queue])
    assert depths is None
    assert "Manage,EntityRead claims required" in note
    assert "Azure Service Bus Data Owner" in note


def test_an_unknown_queue_makes_the_depths_unavailable(stand_in, https_trust, monkeypatch):
    depths, note = dead_letter_depths(reader(stand_in, StaticTokenCredential(MANAGE_TOKEN)),
                                      ["dl-missing"])
    assert depths is None
    assert "ResourceNotFoundError" in note and "dl-missing" in note
