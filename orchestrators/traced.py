"""The orchestration context as activities see it: each call carries the attempt's trace.

Orchestrator code starts no span: it is replayed, so a span would be opened again on every
episode (SPEC D4). The attempt's trace context comes in the orchestration input
(``traceParent``, written by the starter); :class:`TracedContext` adds it to the input of
every activity the orchestrator schedules (:func:`orders.observability.tracing.wrap_input`),
so each activity's span is a child of the attempt's start. Deterministic: the same input
gives the same activity inputs on every replay.

An attempt started without a trace context (before traces, or by a starter without a
tracer) schedules its activities' inputs unwrapped, exactly as before. A wrapped input is
a new wire form (SPEC X6): deploy workers that unwrap it (every worker of this version)
before any starter writes ``traceParent``; an older worker refuses it and the attempt is
left for the supervisor.
"""

from __future__ import annotations

from typing import Any

from orders.observability.tracing import wrap_input


class TracedContext:
    """A ``DurableOrchestrationContext`` whose activity calls carry a trace context.

    Everything else is the wrapped context's.

    Parameters
    ----------
    context : DurableOrchestrationContext
        The orchestration's context.
    traceparent : str or None
        The attempt's ``traceparent`` from the orchestration input; None leaves every
        activity input as it is.
    """

    def __init__(self, context: Any, traceparent: str | None) -> None:
        self._context = context
        self._traceparent = traceparent

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)

    def call_activity(self, name: str, input_: Any = None) -> Any:
        """Schedule activity ``name`` with ``input_`` wrapped in the attempt's trace context."""
        return self._context.call_activity(
            name, wrap_input(input_, self._traceparent, self._context.instance_id))
