"""The local host's task hub: instances, append-only history and work-item queues in SQLite.

A task hub (Durable Functions term) is the durable state of every orchestration instance of
one app. This one lives in a single SQLite file so that several host processes can share it
and a killed process loses nothing (SPEC D3, issue "Local host" items 3, 5 and 9).
"""

from devhost.taskhub.store import InstanceRecord, TaskHub, TaskHubError

__all__ = ["InstanceRecord", "TaskHub", "TaskHubError"]
