"""A stand-in for the durable client where a starter only calls ``start_new``; a submission's
start as the submission trigger makes it."""

import asyncio

from scheduler.starter import StartReport, may_start_now, start_claimable


class StartRecorder:
    """Records ``start_new`` calls as the SDK's durable client would receive them.

    ``fail=True`` makes every start raise, as a task hub that cannot be reached does.
    """

    def __init__(self, fail=False):
        self.started = []
        self.fail = fail

    async def start_new(self, name, instance_id, client_input, version=None):
        if self.fail:
            raise RuntimeError("task hub unavailable")
        self.started.append((name, instance_id, client_input))
        return instance_id


async def start_submitted(client, services, record):
    """Start a submitted order as ``scheduler.blueprint``'s submission does: the checks off
    the event loop (:func:`may_start_now`), then the claim and start."""
    if not await asyncio.to_thread(may_start_now, services, record):
        return StartReport(0, 0, 0)
    return await start_claimable(client, services, record)
