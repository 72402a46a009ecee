"""Every Azure client is built once per process and closed once (Azure parity)."""

from types import SimpleNamespace

from ops.dead_letters import dead_letter_depths
from orders.messaging.depths import AzureDepthReader


class Admin:
    """An administration client that counts its use (a fake of our reader's dependency)."""

    def __init__(self):
        self.reads = 0
        self.closed = 0

    def get_queue_runtime_properties(self, queue):
        self.reads += 1
        return SimpleNamespace(dead_letter_message_count=len(queue))

    def close(self):
        self.closed += 1


def test_the_depth_reader_builds_its_client_once_and_reuses_it(monkeypatch):
    built = []

    def factory(namespace, credential):
        built.append((namespace, credential))
        return Admin()

    import azure.servicebus.management as management
    monkeypatch.setattr(management, "ServiceBusAdministrationClient", factory)
    reader = AzureDepthReader("ns.servicebus.windows.net", credential="the-credential")
    for _ in range(60):  # an hour of one-minute snapshots
        depths, note = dead_letter_depths(reader, ["orders", "agent-replies"])
        assert depths == {"orders": 6, "agent-replies": 13} and note is None
    assert built == [("ns.servicebus.windows.net", "the-credential")]
    reader.close()
    reader.close()


def test_closing_the_reader_closes_its_client_once():
    admin = Admin()
    reader = AzureDepthReader("ns.servicebus.windows.net", credential=None, client=admin)
    reader.dead_letter_depths(["orders"])
    reader.close()
    reader.close()
    assert (admin.reads, admin.closed) == (1, 1)


def test_an_unreadable_depth_is_reported_not_raised():
    class Refusing:
        def dead_letter_depths(self, queues):
            raise PermissionError("Manage right required")

    depths, note = dead_letter_depths(Refusing(), ["orders"])
    assert depths is None and "PermissionError: Manage right required" in note
