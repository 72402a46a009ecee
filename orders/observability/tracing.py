"""One order, one trace: spans for every step and the context that joins them (X8).

The W3C context travels in messages, HTTP headers, the state record and activity inputs:
see docs/operations.md, "Traces". The tracer is the global provider's (Azure Monitor or the
local trace store); without one every span is a no-op.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanKind
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from orders.lifecycle.ids import split_instance_id

TRACER_NAME = "orders"
TRACEPARENT = "traceparent"
"""Application property and HTTP header carrying the W3C trace context."""
ORDER_KEY = "orders.order_key"
INSTANCE_ID = "orders.instance_id"
ATTEMPT = "orders.attempt"
"""Span attribute: the attempt number (a compensation attempt's own number)."""
OPERATION = "orders.operation"
ENVELOPE_KEYS = frozenset({"traceParent", "instanceId", "input"})

_propagator = TraceContextTextMapPropagator()


_tracers: dict[int, tuple[trace.TracerProvider, trace.Tracer]] = {}
"""Tracer by provider; the provider is kept so that its id is never reused."""


def tracer() -> trace.Tracer:
    """Return the service's tracer of the current global provider."""
    provider = trace.get_tracer_provider()
    found = _tracers.get(id(provider))
    if found is None:
        found = _tracers[id(provider)] = (provider, provider.get_tracer(TRACER_NAME))
    return found[1]


def context_of(traceparent: str | None) -> Context | None:
    """Return the context a ``traceparent`` names, or None if absent or malformed."""
    if not traceparent:
        return None
    context = _propagator.extract({TRACEPARENT: traceparent})
    if not trace.get_current_span(context).get_span_context().is_valid:
        return None
    return context


def current_traceparent() -> str | None:
    """Return the current span's context in ``traceparent`` form, or None without one."""
    carrier: dict[str, str] = {}
    _propagator.inject(carrier)
    return carrier.get(TRACEPARENT)


def inject(headers: dict[str, str]) -> dict[str, str]:
    """Add the current trace context to HTTP ``headers`` (in place) and return them."""
    _propagator.inject(headers)
    return headers


def message_properties(properties: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``properties`` plus the current ``traceparent``, one already there kept."""
    current = current_traceparent()
    return {TRACEPARENT: current, **properties} if current else dict(properties)


def traceparent_of(properties: Mapping[str, Any] | None) -> str | None:
    """Return the ``traceparent`` of a received message's application properties, if any."""
    value = (properties or {}).get(TRACEPARENT)
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    return value if isinstance(value, str) else None


def order_ids(order_key: str | None = None, instance_id: str | None = None
              ) -> tuple[str | None, int | None]:
    """Return the order key (given, else the instance id's) and the attempt number."""
    parsed = split_instance_id(instance_id) if instance_id else None
    if parsed is None:
        return order_key, None
    return order_key or parsed[0], parsed[1]


@contextmanager
def order_span(name: str, *, order_key: str | None = None, instance_id: str | None = None,
               attempt: int | None = None, operation: str | None = None,
               parent: str | None = None, links: Sequence[str | None] = (),
               kind: SpanKind = SpanKind.INTERNAL,
               attributes: Mapping[str, str | int | float | bool] | None = None,
               new_trace: bool = False) -> Iterator[Span]:
    """Open one step's span, current inside the block; an escaping exception marks it ERROR.

    ``parent`` is a ``traceparent`` to continue (malformed: the current context); ``links``
    skip None. ``new_trace`` ignores both so the sampler decides afresh (a submission links
    the client's context, never follows it).
    """
    attrs = {**(attributes or {}), **_order_attributes(order_key, instance_id, operation,
                                                         attempt)}
    span_links = [Link(trace.get_current_span(c).get_span_context())
                  for c in map(context_of, links) if c is not None]
    context = Context() if new_trace else context_of(parent)
    with tracer().start_as_current_span(name, context=context, kind=kind,
                                        attributes=attrs, links=span_links) as span:
        yield span


def tag_order(order_key: str | None = None, instance_id: str | None = None,
              operation: str | None = None) -> None:
    """Set the order's attributes on the current span, once a step has learnt them."""
    trace.get_current_span().set_attributes(
        _order_attributes(order_key, instance_id, operation))


def _order_attributes(order_key: str | None, instance_id: str | None,
                      operation: str | None, attempt: int | None = None
                      ) -> dict[str, str | int]:
    key, number = order_ids(order_key, instance_id)
    values = ((ORDER_KEY, key), (INSTANCE_ID, instance_id),
              (ATTEMPT, attempt if attempt is not None else number), (OPERATION, operation))
    return {attr: value for attr, value in values if value is not None}


def wrap_input(data: Any, traceparent: str | None, instance_id: str) -> Any:
    """Wrap an activity input as ``{"traceParent", "instanceId", "input"}``; deterministic (D4)."""
    if not traceparent:
        return data
    return {"traceParent": traceparent, "instanceId": instance_id, "input": data}


def unwrap_input(data: Any) -> tuple[Any, str | None, str | None]:
    """Return an activity's own input, trace context and instance id; unwrapped input as is."""
    if isinstance(data, dict) and data.keys() == ENVELOPE_KEYS:
        parent, instance = data["traceParent"], data["instanceId"]
        return (data["input"], parent if isinstance(parent, str) else None,
                instance if isinstance(instance, str) else None)
    return data, None, None


@contextmanager
def activity_span(activity: str, data: Any) -> Iterator[Any]:
    """Run an activity inside its span, a child of its attempt's; yields the unwrapped input."""
    inner, parent, instance = unwrap_input(data)
    key = inner if isinstance(inner, str) else None
    if isinstance(inner, dict):
        key, instance = inner.get("orderId"), instance or inner.get("instanceId")
    with order_span(f"activity {activity}", order_key=key if isinstance(key, str) else None,
                    instance_id=instance if isinstance(instance, str) else None,
                    operation=activity, parent=parent):
        yield inner
