"""Classified data withheld from operator views unless asked for (SPEC S9, X10).

An orchestration history carries the order's payment and shipment data through activity
inputs and results (a charge's payment id and amount, a shipment id). The compensation
log already withholds them unless an operator asks for details (``ops show --details``);
the same rule applies to the histories the CLI, the ops API and the dashboard show:
every value under a field name that the order or the compensation models classify
Confidential or Restricted (their ``Classified`` metadata,
:func:`orders.models.classification.classified_fields`) is replaced by the name of its
classification, wherever it sits in the JSON, also inside a JSON string: in the
histories, the order itself and the bodies of dead-lettered messages.
"""

from __future__ import annotations

import json
import typing
from functools import cache
from typing import Any

from orders.models.classification import Classification, classified_fields
from orders.models.compensation import StepDetails
from orders.models.order import Order, OrderLine


@cache
def _fields() -> dict[str, Classification]:
    details = typing.get_args(typing.get_args(StepDetails)[0])
    return classified_fields([*details, Order, OrderLine], Classification.CONFIDENTIAL)


def withheld(level: Classification) -> str:
    """Return what stands in for a withheld value: ``<Restricted>``, ``<Confidential>``."""
    return f"<{level.value}>"


def redact(value: Any) -> Any:
    """Return ``value`` with every classified field's value withheld (see module docstring).

    Parameters
    ----------
    value : Any
        Decoded JSON, or a string that may hold JSON (history inputs and results are
        often JSON text); other values are returned unchanged.

    Returns
    -------
    Any
        A copy of the same shape; a JSON string stays a JSON string.
    """
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
