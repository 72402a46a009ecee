"""Scheduling a declared activity from orchestrator code, and reading its result back.

Orchestrator code starts no span (it is replayed); each call wraps the attempt's trace
context from the orchestration input (``traceParent``, written by the starter) around the
activity's input (:func:`orders.observability.tracing.wrap_input`), so each activity's span
is a child of the attempt's start (X8). An attempt started without one schedules its inputs
unwrapped. A wrapped input is a new wire form (X6): deploy workers that unwrap it before any
starter writes ``traceParent``.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Generator, Hashable
from typing import Any, TypeVar

import azure.durable_functions as df
from azure.durable_functions.models.Task import TaskBase

from orders.models.activities import Activity
from orders.models.memo import ParseMemo
from orders.observability.tracing import wrap_input

In = TypeVar("In")
Out = TypeVar("Out")

TRACE_PARENT_KEY = "traceParent"
"""Key of the attempt's ``traceparent`` in both workflows' inputs."""


def call(context: df.DurableOrchestrationContext, activity: Activity[In, Out], input_: In,
         *, retry: df.RetryOptions | None = None) -> Generator[TaskBase, Any, Out]:
    """Schedule ``activity`` with ``input_``; return its result, read with its contract.

    Raises
    ------
    orders.models.activities.ActivityResultError
        If the recorded result breaks the result contract (the instance fails).
    Exception
        What the SDK raises for a failed activity (the instance fails).
    """
    payload = wrap_input(activity.payload(input_), trace_parent(context), context.instance_id)
    task = (context.call_activity(activity.name, payload) if retry is None else
            context.call_activity_with_retry(activity.name, retry, payload))
    return activity.read_result((yield task))


def call_built(context: df.DurableOrchestrationContext, activity: Activity[In, Out],
               key: Hashable, build: Callable[[], In]) -> Generator[TaskBase, Any, Out]:
    """Schedule ``activity`` as :func:`call` does with ``build()``, built once per ``key``.

    Every replay builds the same inputs again (D4); ``build`` is pure, so its input is a
    function of ``key``, which must name everything ``build`` reads (compared by value; a
    ``bool`` and an ``int`` of one position would collide, so keep a position's type
    fixed). The wrapped payload's JSON text is kept (:data:`INPUTS`) and each call gets a
    fresh copy of it: the scheduled input is byte-identical to :func:`call`'s. An input
    ``build`` refuses raises every time, never kept.

    Raises
    ------
    orders.models.activities.ActivityResultError
        If the recorded result breaks the result contract (the instance fails).
    Exception
        What ``build`` raises for an invalid input, or the SDK for a failed activity.
    """
    parent, iid = trace_parent(context), context.instance_id
    text = INPUTS.get((activity, key, parent, iid),
                      lambda: json.dumps(wrap_input(activity.payload(build()), parent, iid)),
                      weight=len)
    task = context.call_activity(activity.name, json.loads(text))
    return activity.read_result((yield task))


INPUTS = ParseMemo()
"""Wrapped activity inputs as JSON texts by (activity, key, trace parent, instance id)."""


def trace_parent(context: df.DurableOrchestrationContext) -> str | None:
    """Return the attempt's ``traceparent`` from the orchestration input, if it has one.

    Read once per replay: the input cannot change during one, and decoding it per call cost
    more than the call itself. The last replay's context is checked first (one identity
    test; the weak dictionary's lookup builds a weak reference per call).
    """
    last = _LAST_TRACE_PARENT
    if last[0] is context:
        return last[1]
    try:
        found = _TRACE_PARENTS[context]
    except KeyError:
        started = context.get_input()
        value = started.get(TRACE_PARENT_KEY) if isinstance(started, dict) else None
        found = value if isinstance(value, str) else None
        _TRACE_PARENTS[context] = found
    _remember(context, found)
    return found


def _remember(context: Any, found: str | None) -> None:
    global _LAST_TRACE_PARENT
    # One tuple, replaced whole: a thread reads either the old pair or the new one.
    _LAST_TRACE_PARENT = (context, found)


_TRACE_PARENTS: weakref.WeakKeyDictionary[Any, str | None] = weakref.WeakKeyDictionary()
_LAST_TRACE_PARENT: tuple[Any, str | None] = (None, None)
