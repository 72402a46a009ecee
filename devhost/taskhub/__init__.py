"""The local host's task hub: instances, append-only history and work-item queues in SQLite.

The durable state of one app's instances, in one file that several host processes share,
so a killed process loses nothing (D3).
"""

from devhost.taskhub.store import InstanceRecord, TaskHub, TaskHubError

__all__ = ["InstanceRecord", "TaskHub", "TaskHubError"]
