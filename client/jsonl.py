"""Orders from a JSON-lines file, checked line by line against the shared contracts.

A line is a :class:`~orders.models.messages.SubmitOrder` or a bare
:class:`~orders.models.ClientOrder`; a bad line is reported (line, field, rule) and skipped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from client.rejects import InvalidOrder, Problem, problems_from
from orders.models import ClientOrder
from orders.models.messages import SubmitOrder
from orders.models.money import minor_unit_problem

_WHOLE_LINE = "(line)"


def load_jsonl(
    path: Path,
    limit: int | None = None,
    *,
    client_id: str | None = None,
    reply_to: str | None = None,
    on_invalid: Callable[[InvalidOrder], None] | None = None,
) -> Iterator[ClientOrder]:
    """Read orders from a JSON-lines file, skipping and reporting invalid lines.

    ``limit`` counts non-blank lines. With ``client_id``/``reply_to``, a SubmitOrder line
    naming others is invalid (S8); so is a repeated OrderID (S1). ``on_invalid`` gets
    ``where`` = ``"<file>:<line>"``. Raises ValueError for a negative ``limit``,
    FileNotFoundError.
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit: must be a non-negative integer or None, got {limit!r}")
    path = Path(path)
    seen: dict[str, int] = {}
    read = 0
    with open(path, encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            if limit is not None and read >= limit:
                break
            read += 1
            where = f"{path.name}:{number}"
            result = _parse_line(text, client_id, reply_to)
            if isinstance(result, ClientOrder):
                first = seen.setdefault(result.order_id, number)
                if first == number:
                    yield result
                    continue
                result = (result.order_id, (Problem(
                    "orderId", f"repeats the OrderID of line {first}; OrderIDs must be unique"),))
            order_id, problems = result
            if on_invalid is not None:
                on_invalid(InvalidOrder(where, order_id, problems))


def _parse_line(
    text: str, client_id: str | None, reply_to: str | None
) -> ClientOrder | tuple[str | None, tuple[Problem, ...]]:
    try:
        # Without its line break, an error at the line's end is placed there.
        data: Any = json.loads(text.rstrip("\r\n"))
    except json.JSONDecodeError as exc:
        return None, (Problem(_WHOLE_LINE, f"must be JSON: {exc.msg} at column {exc.colno}"),)
    if not isinstance(data, dict):
        return None, (Problem(_WHOLE_LINE, f"must be a JSON object, got {type(data).__name__}"),)
    if "order" in data:
        nested = data["order"]
        order_id = nested.get("orderId") if isinstance(nested, dict) else None
        try:
            message = SubmitOrder.model_validate(data)
        except ValidationError as exc:
            return _str_or_none(order_id), problems_from(exc)
        mismatch = [
            Problem(name, f"must be {expected!r} (the submitting client), got {actual!r}")
            for name, expected, actual in (("clientId", client_id, message.client_id),
                                           ("replyTo", reply_to, message.reply_to))
            if expected is not None and actual != expected
        ]
        return (message.client_order_id, tuple(mismatch)) if mismatch else message.order
    if "orderId" in data:
        try:
            order = ClientOrder.model_validate(data)
        except ValidationError as exc:
            return _str_or_none(data["orderId"]), problems_from(exc)
        problem = minor_unit_problem(order)  # SubmitOrder's rule, checked on submission
        if problem is not None:
            return order.order_id, (Problem(*problem),)
        return order
    return None, (Problem(_WHOLE_LINE, "must be a SubmitOrder object (with 'order') or an "
                                       "Order object (with 'orderId')"),)


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None
