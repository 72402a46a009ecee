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
