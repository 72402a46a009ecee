"""Binds each declared activity (:mod:`orders.models.activities`) to its body, beside the body.

A body is a plain function of the activity's input (its JSON form, as the SDK passes it)
and the services; ``@implements(BEGIN_ATTEMPT)`` above it is what tells the blueprint to
register it under that declaration's name and binding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from orders.models.activities import DECLARED, Activity
from orders.runtime import Services

Body = Callable[[Any, Services], Any]
"""An activity's body: ``body(data, services)`` returns the result's JSON form."""

B = TypeVar("B", bound=Body)

_BODIES: dict[str, Body] = {}


def implements(activity: Activity[Any, Any]) -> Callable[[B], B]:
    """Bind the decorated function as ``activity``'s body; the function itself is unchanged.

    Raises
    ------
    ValueError
        If ``activity`` is not declared, or already has a body.
    """

    def bind(body: B) -> B:
        if activity not in DECLARED:
            raise ValueError(f"{body.__name__}: activity {activity.name} is not declared in "
                             "orders.models.activities")
        if activity.name in _BODIES:
            raise ValueError(f"{body.__name__}: activity {activity.name} already has a body, "
                             f"{_BODIES[activity.name].__name__}")
        _BODIES[activity.name] = body
        return body

    return bind


def body_of(activity: Activity[Any, Any]) -> Body:
    """Return the body bound to ``activity``.

    Raises
    ------
    LookupError
        If no module of ``activities`` bound one (``@implements`` is missing).
    """
    body = _BODIES.get(activity.name)
    if body is None:
        raise LookupError(f"activity {activity.name}: declared but no body is bound to it "
                          "(@implements in activities.steps or activities.compensation_steps)")
    return body
