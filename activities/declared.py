"""Binds each declared activity to its body with ``@implements``, beside the body."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from orders.models.activities import DECLARED, Activity
from orders.runtime import Services

Body = Callable[[Any, Services], Any]

B = TypeVar("B", bound=Body)

_BODIES: dict[str, Body] = {}


def implements(activity: Activity[Any, Any]) -> Callable[[B], B]:
    """Bind the decorated function as ``activity``'s body; ValueError if undeclared or bound."""

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
    """Return the body bound to ``activity``; LookupError if ``@implements`` is missing."""
    body = _BODIES.get(activity.name)
    if body is None:
        raise LookupError(f"activity {activity.name}: declared but no body is bound to it "
                          "(@implements in activities.steps or activities.compensation_steps)")
    return body
