"""Durable entities on the local host (SPEC D10), as the Durable extension runs them.

* :mod:`.messages`: the wire shapes (request and response messages, the batch JSON the
  SDK's entity handler takes and returns);
* :mod:`.store`: requests, state and leases in the task hub's SQLite file;
* :mod:`.batch`: one batch through the SDK's own entity handler;
* :mod:`.worker`: the poller that claims entities and commits their batches;
* :mod:`.calls`: an orchestrator's ``call_entity`` and ``signal_entity``.

The HTTP API's entity routes are in :mod:`devhost.http_api.entity_routes`. What the Python
SDK 1.x itself lacks (critical sections: ``lock``, entity locking) is Azure's limit too; see
the README.
"""

# The task hub builds on .store (TaskHub is an EntityQueue); importing it first keeps
# ``import devhost.entities.<module>`` free of a circular import.
import devhost.taskhub  # noqa: E402, F401
