"""One order, one trace: spans for every step and the context that joins them (SPEC X8).

Every step of an order opens a span with :func:`order_span`, tagged with the order key, the
instance id, the attempt and the operation (:data:`ORDER_KEY`, ...). The steps run in
different functions, processes and services, so the W3C trace context travels with the
work, in ``traceparent`` form:

- on every Service Bus message the app sends, as the application property
  :data:`TRACEPARENT` (:func:`message_properties`; the Azure SDKs and the Functions host
  read the same name);
- on every HTTP call to a remote service, as the ``traceparent`` header (:func:`inject`);
- in the state record (``traceParent``, the submission's span, so the starter and the
  supervisor, which run on timers, join the order's trace; ``attemptTrace``, the last
  attempt's span, which the next attempt links to);
- in the orchestration input (``traceParent``): orchestrator code starts no span (it is
  replayed, SPEC D4); it wraps each activity's input as
  ``{"traceParent", "instanceId", "input"}``
  (:func:`wrap_input`), and the activity's span (:func:`activity_span`) is a child of the
  attempt's span.

The tracer is the global provider's: the Azure Monitor distro's in Azure, the local
trace store's under the local host (:mod:`orders.observability.telemetry`); no code
differs. Without a provider every span is a no-op and nothing travels.

May import: :mod:`orders.lifecycle.ids` (the instance id format) and third-party
libraries only (see :mod:`orders.observability`).
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
"""Instrumentation scope of every span of the service."""
TRACEPARENT = "traceparent"
"""Application property and HTTP header carrying the W3C trace context."""
ORDER_KEY = "orders.order_key"
"""Span attribute: the order key ``<clientId>~<OrderID>``."""
INSTANCE_ID = "orders.instance_id"
"""Span attribute: the orchestration instance (attempt) the step belongs to."""
ATTEMPT = "orders.attempt"
"""Span attribute: the attempt number (a compensation attempt's own number)."""
OPERATION = "orders.operation"
"""Span attribute: what the step does (``charge``, ``begin_attempt``, ``retried``...)."""
ENVELOPE_KEYS = frozenset({"traceParent", "instanceId", "input"})
"""Keys of an activity input wrapped by :func:`wrap_input`."""

_propagator = TraceContextTextMapPropagator()


_tracers: dict[int, tuple[trace.TracerProvider, trace.Tracer]] = {}
"""Tracer by provider; the provider is kept so that its id is never reused."""


def tracer() -> trace.Tracer:
    """Return the service's tracer of the current global provider (one per provider)."""
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
    """Return Service Bus application ``properties`` plus the current ``traceparent``.

    A ``traceparent`` already in ``properties`` is kept; without a current span the
    properties are returned as they are.
    """
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
    """Return the order key and attempt, completed from an instance id.

    Parameters
    ----------
    order_key : str, optional
        The order key, if known.
    instance_id : str, optional
        ``<key>:<n>`` for an attempt, ``<key>:comp:<n>`` for a compensation attempt.

    Returns
    -------
    (str or None, int or None)
        The order key (given, else the instance id's) and the attempt number.
    """
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
    """Open one step's span, current inside the block (SPEC X8).

    An exception leaving the block is recorded on the span, which ends with status ERROR.

    Parameters
    ----------
    name : str
        What the step is, e.g. ``"starter start"``.
    order_key, instance_id : str, optional
        The order and the attempt; the key and attempt are derived from an instance id.
    attempt : int, optional
        Attempt number, if there is no instance id.
    operation : str, optional
        ``orders.operation``.
    parent : str, optional
        ``traceparent`` to continue; None or malformed: the current context (a new trace
        if there is none).
    links : sequence of str or None
        ``traceparent`` values to link to (e.g. the previous attempt); None ones skipped.
    kind : SpanKind
        INTERNAL by default; CONSUMER for a message handler, CLIENT for an HTTP try.
    attributes : mapping, optional
        More attributes.
    new_trace : bool
        Start a trace of its own, whatever ``parent`` and the current context say, so
        the sampler decides afresh (an order's submission: the client's context is
        linked, never followed, so one client span over many orders does not make them
        one trace, and its sampled flag does not turn the order's tracing on or off).

    Yields
    ------
    opentelemetry.trace.Span
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
    """Wrap an activity's input with the attempt's trace context (orchestrator side).

    Parameters
    ----------
    data : Any
        The activity's own input (JSON form).
    traceparent : str or None
        The attempt's context from the orchestration input; None leaves ``data`` as it is.
    instance_id : str
        The orchestration instance (the attempt), for the activity span's attributes.

    Returns
    -------
    Any
        ``{"traceParent", "instanceId", "input"}``, or ``data`` without a context.
        Deterministic, so orchestrator code may call it while replaying (SPEC D4).
    """
    if not traceparent:
        return data
    return {"traceParent": traceparent, "instanceId": instance_id, "input": data}


def unwrap_input(data: Any) -> tuple[Any, str | None, str | None]:
    """Return an activity's own input, its trace context and instance id (:func:`wrap_input`).

    An input that is not wrapped (no tracing, or scheduled before tracing existed) is
    returned as it is, with None and None.
    """
    if isinstance(data, dict) and data.keys() == ENVELOPE_KEYS:
        parent, instance = data["traceParent"], data["instanceId"]
        return (data["input"], parent if isinstance(parent, str) else None,
                instance if isinstance(instance, str) else None)
    return data, None, None


@contextmanager
def activity_span(activity: str, data: Any) -> Iterator[Any]:
    """Run an activity inside its span, a child of its attempt's span (SPEC X8).

    Parameters
    ----------
    activity : str
        The activity's name (``orders.operation``).
    data : Any
        The activity's input as received, wrapped or not.

    Yields
    ------
    Any
        The activity's own input, unwrapped.
    """
    inner, parent, instance = unwrap_input(data)
    key = inner if isinstance(inner, str) else None
    if isinstance(inner, dict):
        key, instance = inner.get("orderId"), instance or inner.get("instanceId")
    with order_span(f"activity {activity}", order_key=key if isinstance(key, str) else None,
                    instance_id=instance if isinstance(instance, str) else None,
                    operation=activity, parent=parent):
        yield inner
