r"""Strict decoding of message bodies: a bad message is refused with its reason, never retried.

Decoding is pure, so a failure is an :class:`InvalidMessage` (field and rule) dead-lettered
on first delivery, not retried into ``MaxDeliveryCountExceeded`` (S1, L3). A body must be
I-JSON (RFC 7493) at most :data:`MAX_DEPTH` deep: UTF-8 (a BOM ignored), no ``NaN`` or
overflowing numbers, signed 64-bit integers, no duplicate names (parsers disagree on which
counts), no unpaired surrogate like ``"\ud800"`` (not storable as UTF-8).
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from functools import cache
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from orders.errors import OrderServiceError
from orders.models._types import WIRE

INVALID_JSON = "InvalidJson"

SCHEMA_VIOLATION = "SchemaViolation"

MAX_DEPTH = 32
"""Deepest nesting accepted; the contracts need at most five."""

INT_MIN, INT_MAX = -(2**63), 2**63 - 1

_INT_MAX_CHARS = 20  # "-9223372036854775808"; longer text is refused before conversion

M = TypeVar("M", bound=BaseModel)


class InvalidMessage(OrderServiceError, ValueError):
    """A body that can never be processed: dead-letter it with ``reason`` and ``description``."""

    def __init__(self, reason: str, description: str) -> None:
        super().__init__(f"{reason}: {description}")
        self.reason = reason
        self.description = description


class _Refused:
    """Stands in for a refused value, so the check can name its path."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem


def _constant(name: str) -> _Refused:
    return _Refused(f"{name} is not a JSON number (RFC 8259 section 6)")


def _integer(text: str) -> int | _Refused:
    if len(text) <= _INT_MAX_CHARS:
        value = int(text)
        if INT_MIN <= value <= INT_MAX:
            return value
    digits = len(text.lstrip("-"))
    return _Refused(f"integer of {digits} digits is outside the signed 64-bit range "
                    f"[{INT_MIN}, {INT_MAX}]")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any] | _Refused:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return _Refused(f"duplicate name {_show(key)} in one object (RFC 7493 section "
                            "2.3): parsers disagree on which value counts")
        seen.add(key)
    raise AssertionError("unreachable: a shorter dict has a duplicate key")


def _show(text: str, limit: int = 64) -> str:
    """Quote ``text`` ASCII-only, at most ``limit`` characters."""
    shown = ascii(text[:limit])
    return shown if len(text) <= limit else shown + "..."


def _path(path: tuple[str | int, ...]) -> str:
    if not path:
        return "body"
    return ".".join(str(p) if isinstance(p, int) or (p.isascii() and p.isprintable()
                                                      and 0 < len(p) <= 64)
                    else _show(p) for p in path)


def _unencodable(text: str) -> str | None:
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (f"contains an unpaired surrogate \\u{ord(text[exc.start]):04x} at index "
                f"{exc.start} (RFC 7493 section 2.1): not encodable as UTF-8")
    return None


def _check(value: Any) -> None:
    stack: list[tuple[Any, tuple[str | int, ...], int]] = [(value, (), 0)]
    while stack:
        item, path, depth = stack.pop()
        problem = None
        if isinstance(item, _Refused):
            problem = item.problem
        elif isinstance(item, str):
            problem = _unencodable(item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                problem = "number overflows a double (it would be infinity)"
        elif isinstance(item, dict | list):
            if depth + 1 > MAX_DEPTH:
                problem = f"nested deeper than {MAX_DEPTH} objects or arrays"
            elif isinstance(item, dict):
                for key in item:
                    if (bad := _unencodable(key)) is not None:
                        raise InvalidMessage(INVALID_JSON, f"{_path(path)}: a name {bad}")
                stack.extend((v, (*path, k), depth + 1) for k, v in reversed(item.items()))
            else:
                stack.extend((v, (*path, i), depth + 1)
                             for i, v in reversed(list(enumerate(item))))
        if problem is not None:
            raise InvalidMessage(INVALID_JSON, f"{_path(path)}: {problem}")


def loads(body: bytes | str) -> Any:
    """Decode a message body as strict JSON (see the module docstring).

    Raises
    ------
    InvalidMessage
        ``InvalidJson`` with the path and rule, for a syntax error or any decoder failure.
    """
    if isinstance(body, bytes | bytearray | memoryview):
        try:
            text = bytes(body).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidMessage(INVALID_JSON, f"body: not UTF-8: {exc.reason} (byte "
                                               f"0x{exc.object[exc.start]:02x} at offset "
                                               f"{exc.start})") from None
    else:
        text = body
    text = text.removeprefix("\ufeff")
    try:
        value = json.loads(text, object_pairs_hook=_object, parse_constant=_constant,
                           parse_int=_integer)
    except json.JSONDecodeError as exc:
        raise InvalidMessage(INVALID_JSON, f"body: not valid JSON: {exc.msg} at line "
                                           f"{exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise InvalidMessage(INVALID_JSON, f"body: nested deeper than {MAX_DEPTH} objects "
                                           "or arrays (beyond the decoder's stack)") from None
    except MemoryError:
        raise  # may pass: the memory may be taken by something else; let it be retried
    except Exception as exc:  # noqa: BLE001 - pure function of the body: never retry it
        raise InvalidMessage(INVALID_JSON, f"body: not valid JSON: "
                                           f"{type(exc).__name__}: {exc}") from None
    _check(value)
    return value


def parse(body: bytes | str, model: type[M], *, what: str = "") -> M:
    """Decode and validate a body against ``model``; ``what`` prefixes error descriptions.

    Raises
    ------
    InvalidMessage
        ``InvalidJson`` (:func:`loads`) or ``SchemaViolation`` naming each field and rule;
        an unexpected validator exception is a ``SchemaViolation`` too.
    """
    try:
        return validate(loads(body), model)
    except InvalidMessage as exc:
        if not what:
            raise
        raise InvalidMessage(exc.reason, f"{what}: {exc.description}") from None


def validate(data: Any, model: type[M]) -> M:
    """Validate an already decoded body against its contract, wire names only.

    Raises
    ------
    InvalidMessage
        ``SchemaViolation``, as :func:`parse` raises it.
    """
    try:
        return model.model_validate(data, by_name=False, context={WIRE: True})
    except ValidationError as exc:
        raise InvalidMessage(SCHEMA_VIOLATION, describe(exc)) from None
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - pure function of the body: never retry it
        # The exception's text may quote any value of the body: only its type is told (X10).
        raise InvalidMessage(SCHEMA_VIOLATION, f"body: the {model.__name__} contract cannot "
                                               f"be checked: {type(exc).__name__}") from None


def describe(exc: ValidationError) -> str:
    """Describe a validation error as ``field: rule`` pairs joined by ``; ``.

    A rule of a classified field (:func:`classified_on`) never quotes the value it refused:
    descriptions are stored with dead letters, logged and answered (X10).
    """
    return "; ".join(f"{_path(tuple(e['loc']))}: {_rule_of(e)}" for e in exc.errors())


def _rule_of(error: Any) -> str:
    """Return an error's message with its input withheld if the field is classified.

    The rule's own bounds (the error's ``ctx``: ``gt``, ``le``, ``max_length``, ...) are the
    contract's, not the sender's, and stay quoted even when the input reads the same
    (``quantity`` 0: "Input should be greater than 0").
    """
    message = str(error["msg"])
    level = classified_on(tuple(error["loc"]))
    value = error.get("input")
    if level is None or not isinstance(value, str | int | float) or isinstance(value, bool):
        return message
    bounds = sorted({str(v) for v in (error.get("ctx") or {}).values()
                     if isinstance(v, str | int | float | Decimal) and str(v)},
                    key=len, reverse=True)
    marks = [chr(0xE000 + n) for n in range(len(bounds))]  # private use: no input's text
    for bound, mark in zip(bounds, marks, strict=True):  # set aside while the input goes
        message = message.replace(bound, mark)
    text = str(value)
    for shown in sorted({repr(text), ascii(text), text}, key=len, reverse=True):
        if shown:
            message = message.replace(shown, f"<{level}>")
    for bound, mark in zip(bounds, marks, strict=True):
        message = message.replace(mark, bound)
    return message


@cache
def _classified() -> dict[str, Any]:
    # Imported here: the order contract imports this module's callers' package.
    from orders.models.classification import Classification, classified_fields
    from orders.models.order import Order, OrderLine

    return classified_fields([Order, OrderLine], Classification.CONFIDENTIAL)


def classified_on(path: tuple[Any, ...]) -> str | None:
    """Return the classification of the most sensitive classified field on ``path``, or None.

    From the types (:mod:`orders.models.classification`), Confidential and above.
    """
    fields = _classified()
    levels = [fields[p] for p in path if isinstance(p, str) and p in fields]
    return max(levels, key=lambda level: level.rank).value if levels else None
