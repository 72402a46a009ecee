"""Fakes of the project's own ports, for unit tests (never of an SDK)."""

from orders.messaging import OutgoingMessage


class RecordingSender:
    """A MessageSender that keeps what was sent, per queue (a fake of the messaging port)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, OutgoingMessage]] = []

    def send(self, queue: str, message: OutgoingMessage) -> None:
        self.sent.append((queue, message))

    def send_many(self, queue, messages) -> None:
        for message in messages:
            self.send(queue, message)

    def close(self) -> None:
        pass

    def bodies(self, queue: str) -> list[dict]:
        return [m.body for q, m in self.sent if q == queue]
