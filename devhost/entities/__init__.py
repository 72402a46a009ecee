"""Durable entities on the local host (D10), as the Durable extension runs them.

Wire shapes: :mod:`devhost.taskhub.entity_messages`; storage and leases:
:mod:`devhost.taskhub.entity_queue`; :mod:`.batch` runs one batch through the SDK's
handler, :mod:`.worker` polls; orchestrator calls: :mod:`devhost.orchestration.entity_calls`;
HTTP routes: :mod:`devhost.http_api.entity_routes`. What SDK 1.x lacks (entity locking) is
Azure's limit too; see the README.
"""
