"""Why an order was not submitted: field-and-rule problems a client can act on.

Problems come from the shared contracts' errors, so the client applies the service's
rules (S1) and never sends an order the service would dead-letter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import ValidationError
from pydantic_core import ErrorDetails

_VALUE_ERROR_PREFIX = "Value error, "
_FIELD_IN_MESSAGE = re.compile(r"^([A-Za-z][A-Za-z0-9_.\[\]]*): (.+)$", re.DOTALL)


@dataclass(frozen=True)
class Problem:
    """One broken rule; ``field`` is a JSON path like ``order.lines[0].quantity``."""

    field: str
    rule: str

    def __str__(self) -> str:
        return f"{self.field}: {self.rule}"


@dataclass(frozen=True)
class InvalidOrder:
    """An order dropped before sending, with its origin (``orders.jsonl:12``) and problems."""

    where: str
    order_id: str | None
    problems: tuple[Problem, ...]

    def __str__(self) -> str:
        ident = f" ({self.order_id})" if self.order_id else ""
        return f"{self.where}{ident}: " + "; ".join(str(p) for p in self.problems)


def problems_from(
    error: ValidationError, prefix: str = "", whole: str = "(order)"
) -> tuple[Problem, ...]:
    """Turn a validation error into problems, ``prefix`` before each path, ``whole`` for the input.

    A "too short" error of items failing their own rules is left out; a model-level
    ``"<field>: ..."`` message is attributed to that field.
    """
    found: list[Problem] = []
    items = error.errors(include_url=False)
    for item in items:
        if item["type"] == "too_short" and _has_item_errors(item["loc"], items):
            continue  # pydantic counts failed items as missing; their own errors say why
        message = str(item["msg"]).removeprefix(_VALUE_ERROR_PREFIX)
        path = _path(item["loc"])
        named = _FIELD_IN_MESSAGE.match(message)
        if item["type"] == "value_error" and isinstance(item.get("input"), dict) and named:
            # A model-level rule (input is the whole object) that names its field.
            path = f"{path}.{named.group(1)}" if path else named.group(1)
            message = named.group(2)
        found.append(Problem(prefix + path if path else whole, message))
    return tuple(found)


def _has_item_errors(loc: tuple[int | str, ...], items: list[ErrorDetails]) -> bool:
    depth = len(loc)
    return any(len(other["loc"]) > depth and tuple(other["loc"][:depth]) == tuple(loc)
               for other in items)


def _path(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
