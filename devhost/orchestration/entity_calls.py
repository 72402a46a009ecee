"""An orchestrator's ``call_entity`` and ``signal_entity``: history and messages (D10).

Each CallEntity/SignalEntity action (``instanceId`` the scheduler id, ``operation``,
``input``) takes the next sequence number; the extension sends the entity a request and
records an ``EventSent`` with that number (shapes: :mod:`devhost.taskhub.entity_messages`).
An entity name no function implements fails the orchestration (``ThrowIfFunctionDoesNotExist``).
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from devhost.entities.batch import missing_function_error
from devhost.orchestration.actions import ActionType, UnsupportedActionError
from devhost.taskhub.entity_messages import (
    REQUEST_KIND,
    EntityIdError,
    parse_scheduler_id,
    request_event,
    request_message,
    sent_event,
    serialized_input,
)
from devhost.taskhub.records import InstanceRecord, NewMessage

ENTITY_ACTIONS = (ActionType.CallEntity, ActionType.SignalEntity)


class UnknownEntityError(UnsupportedActionError):
    """An orchestrator called or signalled an entity the app has no function for."""


class EntityCalls:
    """The app's entity functions as orchestrations address them (``names`` None: any)."""

    def __init__(self, names: Collection[str] | None = None) -> None:
        self.names = None if names is None else sorted(n.lower() for n in names)

    def send(self, seq: int, action: dict[str, Any], inst: InstanceRecord, now: datetime
             ) -> tuple[dict[str, Any], NewMessage]:
        """Turn a CallEntity or SignalEntity action (number ``seq``) into EventSent and request.

        Raises
        ------
        UnknownEntityError
            If the entity id is malformed or no entity function has its name.
        """
        target = action["instanceId"]
        try:
            name, _ = parse_scheduler_id(target)
        except EntityIdError as exc:
            raise UnknownEntityError(str(exc)) from None
        if self.names is not None and name not in self.names:
            raise UnknownEntityError(missing_function_error(name, self.names))
        signal = ActionType(action["actionType"]) == ActionType.SignalEntity
        message = request_message(action["operation"], serialized_input(action.get("input")),
                                  signal=signal, parent=inst.instance_id,
                                  parent_execution=inst.execution_id, now=now)
        return (sent_event(seq, target, message, now),
                NewMessage(target, None, REQUEST_KIND, request_event(message, now), now))


def keep_on_continue_as_new(messages: list[NewMessage]) -> list[NewMessage]:
    """Return an episode's entity requests: DTFx sends them even when it continues as new."""
    return [m for m in messages if m.kind == REQUEST_KIND]
