"""Classified data withheld from operator views unless asked for (S9, X10).

Every value under a field the models classify Confidential or Restricted
(:func:`orders.models.classification.classified_fields`) is replaced by its
classification's name, wherever it sits, also inside a JSON string. A dead-lettered body,
written by anyone with send rights, is read by an allow-list instead (:func:`shown_body`):
only values of fields the message contracts declare and leave unclassified are shown.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from pydantic import BaseModel

from orders.models.agent_io import PAYLOADS
from orders.models.classification import Classification, classified_fields
from orders.models.compensation import log_details_models
from orders.models.messages import (
    AgentReply,
    AgentRequest,
    OperatorAlert,
    StatusMessage,
    SubmitOrder,
)
from orders.models.order import ClientOrder, Order, OrderLine

WITHHELD_UNKNOWN = "<withheld>"
"""What stands in for the value of a field no message contract declares unclassified."""


@cache
def _fields() -> dict[str, Classification]:
    return classified_fields([*log_details_models(), Order, OrderLine],
                             Classification.CONFIDENTIAL)


@cache
def _unclassified() -> frozenset[str]:
    """Wire names of the message contracts' fields that no contract classifies (X10)."""
    models: list[type[BaseModel]] = [
        SubmitOrder, ClientOrder, Order, OrderLine, AgentRequest, AgentReply, StatusMessage,
        OperatorAlert, *PAYLOADS.values(), *log_details_models()]
    declared = {info.alias or name for model in models
                for name, info in model.model_fields.items()}
    return frozenset(declared - classified_fields(models, Classification.CONFIDENTIAL).keys())


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


def allow_listed(value: Any, shown: bool = False) -> Any:
    """Return a copy of JSON ``value`` showing only values of known unclassified fields (X10).

    A value under a field some contract classifies reads as its classification
    (``<Restricted>``); under a field no contract declares (``customerID``, ``TotalPrice``,
    a key holding data) ``<withheld>``, as does a scalar outside any field (in a top-level
    array). Objects and arrays are walked, so a known field inside an unknown one is shown;
    a string holding JSON is read as JSON. ``shown``: whether ``value`` sits under a known
    unclassified field. Nulls stay null (they hold nothing).
    """
    if isinstance(value, dict):
        fields, unclassified = _fields(), _unclassified()
        return {k: withheld(fields[k]) if k in fields and v is not None
                else allow_listed(v, k in unclassified) for k, v in value.items()}
    if isinstance(value, list):
        return [allow_listed(v, shown) for v in value]
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.dumps(allow_listed(json.loads(value), shown))
        except ValueError:
            pass
    return value if shown or value is None else WITHHELD_UNKNOWN


def shown_body(body: Any, details: bool) -> Any:
    """Return a peeked message body as an operator view may show it (X10).

    With ``details`` (the caller holds the details role) the body as it is. Else a JSON
    object or array (also behind a byte order mark) with only the values of fields the
    message contracts leave unclassified shown (:func:`allow_listed`); any other body is
    withheld whole, since nothing in it can be told apart from data: not JSON (a trailing
    comma, not UTF-8, ...) ``<withheld: not JSON, N characters; details=true shows it>``, a
    bare JSON value (a number, a string) ``<withheld: a JSON number, not an object or
    array; details=true shows it>``.
    """
    if details:
        return body
    decoded = body
    if isinstance(body, str):
        try:
            decoded = json.loads(body.removeprefix("\ufeff"))
        except ValueError:
            return f"<withheld: not JSON, {len(body)} characters; details=true shows it>"
    if isinstance(decoded, dict | list):
        return allow_listed(decoded)
    kind = {bool: "boolean", int: "number", float: "number", str: "string"}.get(
        type(decoded), "null" if decoded is None else type(decoded).__name__)
    return f"<withheld: a JSON {kind}, not an object or array; details=true shows it>"
