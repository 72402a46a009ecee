"""Wire shapes of durable entities, as the Durable extension exchanges them (D10).

Python entities are "legacy" out-of-process entities (extension 2.x ``TaskEntityShim``,
``EntityTriggerAttributeBindingProvider``):

* the scheduler id is ``@<name, lower-case>@<key>``;
* a request is an ``EventRaised`` named ``op`` whose ``Input`` is the message JSON: ``op``,
  ``signal`` (only when true), ``input`` (the SDK's JSON text serialised once more), ``id``
  (a GUID), ``parent``, ``parentExecution``, ``Timestamp``; the sender records an
  ``EventSent`` (``EventId`` its sequence number, ``InstanceId`` the entity, same ``Input``)
  from which the SDK reads the request ``id`` on replay;
* the entity function gets ``{"self": {"name", "key"}, "exists", "state", "batch": [{"name",
  "input", "isSignal"}]}`` and answers ``{"entityExists", "entityState", "results":
  [{"isError", "duration", "startTime", "result"}], "signals": [{"target": {"name", "key"},
  "name", "input"}]}``;
* a call (not a signal) is answered by an ``EventRaised`` named by the request ``id``, with
  ``Input`` ``{"result": <text>}`` plus ``"exceptionType": "Error"`` on failure, which the
  SDK raises as ``Exception(<result>)``.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from devhost.taskhub.events import EventType, event, format_time

REQUEST_EVENT = "op"
"""Event name of an operation request (the extension's ``RequestMessageEventName``)."""

REQUEST_KIND = "entity"
"""Inbox kind of an operation request waiting for its entity."""

RESPONSE_KIND = "entity-response"
"""Inbox kind of an operation's response waiting for the calling orchestration."""

ERROR_TYPE = "Error"
"""``exceptionType`` of a failed operation's response (the extension's value)."""

_FORBIDDEN_KEY_CHARS = set("/\\#?")


class EntityIdError(ValueError):
    """An entity id the extension refuses (empty name, key with a forbidden character)."""


def scheduler_id(name: str, key: str) -> str:
    """Return the scheduler id ``@name@key`` (the name lower-cased, as the extension)."""
    return f"@{name.lower()}@{key}"


def parse_scheduler_id(instance_id: str) -> tuple[str, str]:
    """Split ``@name@key`` into name and key (the key may hold further ``@``).

    Raises
    ------
    EntityIdError
        If ``instance_id`` is not a scheduler id.
    """
    pos = instance_id.find("@", 1)
    if not instance_id.startswith("@") or pos < 2:
        raise EntityIdError(f"entity id: {instance_id!r} is not of the form @name@key")
    return instance_id[1:pos], instance_id[pos + 1:]


def check_entity_key(key: str) -> None:
    """Refuse a key the extension's client refuses (slash, backslash, #, ? or control chars).

    Raises
    ------
    EntityIdError
        Naming the rule.
    """
    if any(c in _FORBIDDEN_KEY_CHARS or ord(c) < 32 or 127 <= ord(c) < 160 for c in key):
        raise EntityIdError("entityKey: Entity keys must not contain /, \\, #, ?, or control "
                            "characters.")


def serialized_input(sdk_json_text: str | None) -> str | None:
    """Return a request's ``input`` for an input the SDK serialised already (or None)."""
    return None if sdk_json_text is None else json.dumps(sdk_json_text, ensure_ascii=False)


def request_message(operation: str, input_text: str | None, *, signal: bool,
                    parent: str | None, parent_execution: str | None,
                    now: datetime, request_id: str | None = None) -> dict[str, Any]:
    """Build an operation request message (module docstring); ``json.dumps`` it for ``Input``.

    ``input_text`` is as from :func:`serialized_input` (None leaves it out); ``parent`` and
    ``parent_execution`` are None from a client; ``request_id`` defaults to a new GUID.
    """
    message: dict[str, Any] = {"op": operation}
    if signal:
        message["signal"] = True
    if input_text is not None:
        message["input"] = input_text
    message["id"] = request_id or str(uuid.uuid4())
    if parent is not None:
        message["parent"] = parent
    if parent_execution is not None:
        message["parentExecution"] = parent_execution
    message["Timestamp"] = format_time(now)
    return message


def request_event(message: dict[str, Any], now: datetime) -> dict[str, Any]:
    """Return the ``EventRaised`` ``op`` event that delivers a request to its entity."""
    return event(EventType.EventRaised, now, Name=REQUEST_EVENT, Input=json.dumps(message))


def sent_event(seq: int, target: str, message: dict[str, Any], now: datetime
               ) -> dict[str, Any]:
    """Return the ``EventSent`` the calling orchestration records for a request."""
    return event(EventType.EventSent, now, seq, InstanceId=target, Name=REQUEST_EVENT,
                 Input=json.dumps(message))


def response_event(request_id: str, result: str | None, is_error: bool, now: datetime
                   ) -> dict[str, Any]:
    """Return the ``EventRaised`` that answers a call, named by the request id."""
    body: dict[str, Any] = {"result": result}
    if is_error:
        body["exceptionType"] = ERROR_TYPE
    return event(EventType.EventRaised, now, Name=request_id, Input=json.dumps(body))


def batch_context(name: str, key: str, exists: bool, state: str | None,
                  requests: list[dict[str, Any]]) -> str:
    """Return the entity trigger's JSON for one batch (requests oldest first).

    Exactly the keys ``DurableEntityContext``'s constructor takes: ``self``, ``exists``,
    ``state``, ``batch``.
    """
    batch = [{"name": r.get("op"), "input": r.get("input"), "isSignal": bool(r.get("signal"))}
             for r in requests]
    return json.dumps({"self": {"name": name, "key": key}, "exists": exists, "state": state,
                       "batch": batch})
