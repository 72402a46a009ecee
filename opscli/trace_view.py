"""An order's trace as a tree with durations (``python -m opscli trace``, X8).

See docs/operations.md, "Traces".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from rich.markup import escape
from rich.tree import Tree

from orders.observability.trace_store import StoredSpan
from orders.observability.tracing import ATTEMPT, INSTANCE_ID, OPERATION

SHOWN = (INSTANCE_ID, OPERATION, "orders.outcome", "orders.calls",
         "http.response.status_code", "http.status_code")
"""Attributes shown after a span's name, when present."""


def children_of(spans: Sequence[StoredSpan]) -> dict[str | None, list[StoredSpan]]:
    """Group spans by parent, oldest first; spans whose parent is not stored are roots (None)."""
    ids = {s.span_id for s in spans}
    tree: dict[str | None, list[StoredSpan]] = defaultdict(list)
    for span in sorted(spans, key=lambda s: (s.start_ns, s.span_id)):
        tree[span.parent_id if span.parent_id in ids else None].append(span)
    return tree


def label(span: StoredSpan, names: dict[str, str]) -> str:
    """One line: name, duration, the :data:`SHOWN` attributes, status and links."""
    shown = " ".join(f"{k.rsplit('.', 1)[-1]}={span.attributes[k]}" for k in SHOWN
                     if k in span.attributes and not (k == INSTANCE_ID and ATTEMPT not in
                                                      span.attributes))
    text = f"[bold]{escape(span.name)}[/bold] [cyan]{span.duration_ms:.1f} ms[/cyan]"
    if shown:
        text += f" [dim]{escape(shown)}[/dim]"
    if span.status == "ERROR":
        text += " [red]ERROR[/red]"
    for _, linked in span.links:
        text += f" [magenta]-> follows {escape(names.get(linked, linked))}[/magenta]"
    return text


def trace_tree(title: str, spans: Sequence[StoredSpan]) -> Tree:
    """Build the rich tree of ``spans`` (from :meth:`TraceStore.spans_of`), oldest first."""
    tree = children_of(spans)
    names = {s.span_id: f"{s.name} ({s.attributes.get(INSTANCE_ID, s.span_id)})"
             for s in spans}
    root = Tree(escape(title))
    stack = [(root, span) for span in reversed(tree[None])]
    while stack:
        parent, span = stack.pop()
        node = parent.add(label(span, names))
        stack.extend((node, child) for child in reversed(tree.get(span.span_id, [])))
    return root
