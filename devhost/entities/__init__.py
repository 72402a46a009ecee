"""Durable entities on the local host (SPEC D10), as the Durable extension runs them.

* :mod:`devhost.taskhub.entity_messages`: the wire shapes (request and response messages,
  the batch JSON the SDK's entity handler takes and returns);
* :mod:`devhost.taskhub.entity_queue`: requests, state and leases in the task hub's SQLite
  file;
* :mod:`.batch`: one batch through the SDK's own entity handler;
* :mod:`.worker`: the poller that claims entities and commits their batches;
* :mod:`devhost.orchestration.entity_calls`: an orchestrator's ``call_entity`` and
  ``signal_entity``.

The HTTP API's entity routes are in :mod:`devhost.http_api.entity_routes`. What the Python
SDK 1.x itself lacks (critical sections: ``lock``, entity locking) is Azure's limit too; see
the README.
"""
