"""Scheduling a declared activity from orchestrator code, and reading its result back.

Orchestrator code starts no span (it is replayed); each call wraps the attempt's trace
context from the orchestration input (``traceParent``, written by the starter) around the
activity's input (:func:`orders.observability.tracing.wrap_input`), so each activity's span
is a child of the attempt's start (X8). An attempt started without one schedules its inputs
unwrapped. A wrapped input is a new wire form (X6): deploy workers that unwrap it before any
starter writes ``traceParent``.
"""

from __future__ import annotations

import weakref
from collections.abc import Generator
from typing import Any, TypeVar

import azure.durable_functions as df
from azure.durable_functions.models.Task import TaskBase

from orders.models.activities import Activity
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


def trace_parent(context: df.DurableOrchestrationContext) -> str | None:
    """Return the attempt's ``traceparent`` from the orchestration input, if it has one.

    Read once per replay: the input cannot change during one, and decoding it per call cost
    more than the call itself.
    """
    try:
        return _TRACE_PARENTS[context]
    except KeyError:
        pass
    started = context.get_input()
    value = started.get(TRACE_PARENT_KEY) if isinstance(started, dict) else None
    found = value if isinstance(value, str) else None
    _TRACE_PARENTS[context] = found
    return found


_TRACE_PARENTS: weakref.WeakKeyDictionary[Any, str | None] = weakref.WeakKeyDictionary()
