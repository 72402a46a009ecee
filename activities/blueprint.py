"""Registers every declared activity, each body run inside its activity span (X8)."""

import inspect
from collections.abc import Callable
from typing import Any

from activities import compensation_steps, steps
from activities.declared import Body, body_of
from orders.durable_blueprint import DurableBlueprint
from orders.models.activities import DECLARED, Activity
from orders.observability.tracing import activity_span
from orders.runtime import services

__all__ = ["FUNCTIONS", "bp", "compensation_steps", "steps"]  # the bodies bind on import

bp = DurableBlueprint()


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


FUNCTIONS = {activity.name: bp.activity_trigger(input_name=activity.binding,
                                                activity=activity.name)(
                 activity_function(activity, body_of(activity)))
             for activity in DECLARED}
