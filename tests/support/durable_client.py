"""A stand-in for the durable client where a starter only calls ``start_new``."""


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
