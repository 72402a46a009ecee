"""An orchestrator's ``call_entity`` and ``signal_entity``: history and messages (SPEC D10).

The SDK answers ``context.call_entity(id, op, input)`` with a CallEntity action and
``context.signal_entity(...)`` with a SignalEntity action (``instanceId`` the scheduler id,
``operation``, ``input`` the SDK's JSON text); each takes the next task sequence number. The
extension turns each into a request message sent to the entity and records an
``EventSent`` with that number; a call's answer arrives later as an ``EventRaised`` named
by the request id (:mod:`devhost.taskhub.entity_messages`). An entity name no entity function
implements fails the orchestration, as the extension's ``ThrowIfFunctionDoesNotExist``
does.
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
    """The app's entity functions, as orchestrations address them.

    Parameters
    ----------
    names : collection of str, optional
        Entity names (any case); None accepts every name.
    """

    def __init__(self, names: Collection[str] | None = None) -> None:
        self.names = None if names is None else sorted(n.lower() for n in names)

    def send(self, seq: int, action: dict[str, Any], inst: InstanceRecord, now: datetime
             ) -> tuple[dict[str, Any], NewMessage]:
        """Turn a CallEntity or SignalEntity action into its EventSent and request.

        Parameters
        ----------
        seq : int
            The action's task sequence number (``EventId`` of the EventSent).
        action : dict
            The SDK's action.
        inst : InstanceRecord
            The calling orchestration (parent and execution of the request).
        now : datetime
            The episode's time.

        Returns
        -------
        (dict, NewMessage)
            The EventSent history event and the inbox row for the entity.

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
    """Return the entity requests of an episode that continues as new.

    DTFx sends an episode's outgoing events even when it continues as new, so signals and
    calls made before ``continue_as_new`` reach their entities.
    """
    return [m for m in messages if m.kind == REQUEST_KIND]
