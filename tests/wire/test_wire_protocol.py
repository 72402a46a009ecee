"""What the wire-level Service Bus stand-in (tests/wire/broker.js) does, and what it cannot.

The adapters' wire tests are only as good as the stand-in, so its Service Bus behaviours that
they rely on are checked here through the SDK: abandon counts a delivery, the last allowed
delivery dead-letters with Service Bus' reason, a receive-and-delete receive removes the
message, and an operation it does not implement fails loudly instead of pretending.

What it cannot do, and why:

- TLS on the AMQP port and the real host name: the SDK is pointed at plain AMQP on
  127.0.0.1 with the emulator switch (``UseDevelopmentEmulator=true``, or ``use_tls=False``
  for a token credential). Certificate checks of ``*.servicebus.windows.net`` and port 5671
  are not exercised.
- Entra ID: bearer tokens are fixed strings with fixed rights; no token is issued,
  expires or is refreshed, and role assignments (scopes, propagation delays) are not
  modelled. A SAS token's signature is checked against the emulator's placeholder key.
- The $management node: renew-lock, peek, defer and receive-deferred, schedule and cancel
  by sequence number, session state; a settlement the SDK has to retry over $management
  fails. Link settlement (complete, abandon, dead-letter) is what the adapters use.
- Sessions, topics and subscriptions, transactions, partitioned entities, auto-forwarding.
- Message expiry (time-to-live and dead-lettering on expiry) and quotas; the namespace is
  in memory and unbounded.
- Duplicate detection and lock durations are kept per queue as the test creates them, not
  read from infra/queues.json; duplicate detection keeps ids for ten minutes.
- The administration API answers GET of one queue only (runtime properties with
  CountDetails), not create, update, delete or list, and sizes are reported as 0.
- Exact error texts and tracking ids are imitations: the conditions (amqp:not-found,
  amqp:unauthorized-access, com.microsoft:message-lock-lost, amqp:link:message-size-exceeded,
  HTTP 401) are Service Bus', the descriptions only resemble them.
"""

from __future__ import annotations

import pytest
from azure.servicebus import ServiceBusMessage, ServiceBusReceiveMode
from azure.servicebus.exceptions import ServiceBusError


def test_abandon_counts_a_delivery_and_the_last_one_dead_letters(stand_in):
    queue = stand_in.create_queue("protocol-max-delivery", max_delivery_count=2)
    with stand_in.token_client() as client:
        with client.get_queue_sender(queue) as sender:
            sender.send_messages(ServiceBusMessage(b"poison", message_id="p-1"))
        with client.get_queue_receiver(queue) as receiver:
            counts = []
            for _ in range(2):
                (message,) = receiver.receive_messages(max_message_count=1, max_wait_time=5)
                counts.append(message.delivery_count)
                receiver.abandon_message(message)
            assert counts == [0, 1]  # the AMQP header: earlier deliveries
            assert receiver.receive_messages(max_message_count=1, max_wait_time=1) == []
        with client.get_queue_receiver(queue, sub_queue="deadletter") as dead:
            (message,) = dead.receive_messages(max_message_count=1, max_wait_time=5)
            assert message.message_id == "p-1"
            assert message.dead_letter_reason == "MaxDeliveryCountExceeded"
            dead.complete_message(message)


def test_receive_and_delete_removes_the_message(stand_in):
    queue = stand_in.create_queue("protocol-receive-delete")
    with stand_in.token_client() as client:
        with client.get_queue_sender(queue) as sender:
            sender.send_messages(ServiceBusMessage(b"once"))
        with client.get_queue_receiver(
                queue, receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as receiver:
            (message,) = receiver.receive_messages(max_message_count=1, max_wait_time=5)
            assert b"".join(message.body) == b"once"
        with client.get_queue_receiver(queue) as receiver:
            assert receiver.receive_messages(max_message_count=1, max_wait_time=1) == []


def test_an_unimplemented_settlement_fails_instead_of_pretending(stand_in):
    queue = stand_in.create_queue("protocol-defer")
    with stand_in.token_client(retry_total=0) as client:
        with client.get_queue_sender(queue) as sender:
            sender.send_messages(ServiceBusMessage(b"later"))
        with client.get_queue_receiver(queue) as receiver:
            (message,) = receiver.receive_messages(max_message_count=1, max_wait_time=5)
            with pytest.raises(ServiceBusError):
                receiver.defer_message(message)
