"""A freed slot's handlers: each runs once per slot, and a failing one fails nothing (S3)."""

import asyncio
import logging

from orders import slots


def test_a_failing_handler_is_logged_and_the_next_still_runs(monkeypatch, caplog):
    monkeypatch.setattr(slots, "_handlers", [])
    seen = []

    async def broken(client, services):
        raise ConnectionError("state store unreachable")

    async def starter(client, services):
        seen.append((client, services))

    slots.on_slot_freed(broken)
    slots.on_slot_freed(starter)
    slots.on_slot_freed(starter)  # registered once, as on a second import of the app
    with caplog.at_level(logging.ERROR, logger="orders.slots"):
        asyncio.run(slots.slot_freed("client", "services"))
    assert seen == [("client", "services")]
    (record,) = caplog.records
    assert "starter's timer claims it" in record.getMessage()
    assert isinstance(record.exc_info[1], ConnectionError)
