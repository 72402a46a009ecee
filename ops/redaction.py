"""Classified data withheld from operator views unless asked for (S9, X10).

Every value under a field the models classify Confidential or Restricted
(:func:`orders.models.classification.classified_fields`) is replaced by its
classification's name, wherever it sits, also inside a JSON string.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from orders.models.classification import Classification, classified_fields
from orders.models.compensation import log_details_models
from orders.models.order import Order, OrderLine


@cache
def _fields() -> dict[str, Classification]:
    return classified_fields([*log_details_models(), Order, OrderLine],
                             Classification.CONFIDENTIAL)


def withheld(level: Classification) -> str:
    """Return what stands in for a withheld value: ``<Restricted>``, ``<Confidential>``."""
    return f"<{level.value}>"


def redact(value: Any) -> Any:
    """Return a copy of ``value`` (JSON, or text holding JSON) with classified values withheld."""
    if isinstance(value, dict):
        fields = _fields()
        return {k: withheld(fields[k]) if k in fields and v is not None else redact(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        return json.dumps(redact(decoded))
    return value


def shown_body(body: Any, details: bool) -> Any:
    """Return a peeked message body as an operator view may show it (X10).

    With ``details`` (the caller holds the details role) the body as it is; else a JSON body
    (also one behind a byte order mark) with classified values withheld (:func:`redact`),
    and a body that is not JSON (a trailing comma, not UTF-8, ...) withheld whole, since
    nothing in it can be told apart: ``<withheld: not JSON, N characters; details=true
    shows it>``.
    """
    if details:
        return body
    if not isinstance(body, str):
        return redact(body)
    try:
        decoded = json.loads(body.removeprefix("\ufeff"))
    except ValueError:
        return f"<withheld: not JSON, {len(body)} characters; details=true shows it>"
    return redact(decoded) if isinstance(decoded, dict | list) else body
