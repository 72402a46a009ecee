"""Registers every declared activity, each body run inside its activity span (X8).

The activities that end an attempt (:data:`FREES_A_SLOT`) also take a durable client: once
their write is done, the slot they freed may start the next order (:mod:`orders.slots`).
"""

import inspect
from collections.abc import Callable
from typing import Any

from activities import compensation_steps, steps
from activities.declared import Body, body_of
from orders.durable_blueprint import DurableBlueprint
from orders.models.activities import DECLARED, FAIL_ORDER, FINISH_ATTEMPT, Activity
from orders.observability.tracing import activity_span
from orders.runtime import services
from orders.slots import slot_freed
from orders.threads import off_loop

# The bodies bind on import.
__all__ = ["FREES_A_SLOT", "FUNCTIONS", "bp", "compensation_steps", "steps"]

bp = DurableBlueprint()

FREES_A_SLOT = (FINISH_ATTEMPT, FAIL_ORDER)
"""Activities whose unfenced write takes the order out of Processing (S4, S7)."""
CLIENT = "client"
"""The durable client parameter of the :data:`FREES_A_SLOT` activities."""


def activity_function(activity: Activity[Any, Any], body: Body) -> Callable[..., Any]:
    """Return the host's function, named as the activity, ``activity.binding`` its one parameter."""

    def run(**binding: Any) -> Any:
        with activity_span(activity.name, binding[activity.binding]) as data:
            return body(data, services())

    returns = inspect.signature(body, eval_str=True).return_annotation
    run.__name__ = run.__qualname__ = activity.name
    run.__doc__ = (body.__doc__ or "").strip().partition("\n")[0]
    run.__annotations__ = {activity.binding: Any, "return": returns}
    run.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(activity.binding, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                           annotation=Any)], return_annotation=returns)
    return run


def slot_freeing_function(activity: Activity[Any, Any], body: Body) -> Callable[..., Any]:
    """Return :func:`activity_function`'s function, async with a durable client.

    The body runs off the event loop (:func:`orders.threads.off_loop`); unless its result
    says it was fenced (another attempt owns the record, so no slot was freed), the freed
    slot's handlers run (:func:`orders.slots.slot_freed`, which never raises).
    """
    sync = activity_function(activity, body)

    async def run(**binding: Any) -> Any:
        client = binding.pop(CLIENT)
        result = await off_loop(sync, **binding)
        if not (isinstance(result, dict) and result.get("fenced")):
            await slot_freed(client, services())
        return result

    run.__name__ = run.__qualname__ = activity.name
    run.__doc__ = sync.__doc__
    run.__annotations__ = {**sync.__annotations__, CLIENT: Any}
    run.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [*inspect.signature(sync).parameters.values(),
         inspect.Parameter(CLIENT, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Any)],
        return_annotation=inspect.signature(sync).return_annotation)
    return run


def _register(activity: Activity[Any, Any]) -> Any:
    trigger = bp.activity_trigger(input_name=activity.binding, activity=activity.name)
    if activity in FREES_A_SLOT:
        return trigger(bp.durable_client_input(client_name=CLIENT)(
            slot_freeing_function(activity, body_of(activity))))
    return trigger(activity_function(activity, body_of(activity)))


FUNCTIONS = {activity.name: _register(activity) for activity in DECLARED}
