r"""Strict decoding of message bodies: a bad message is refused with its reason, never retried.

Every queue the app consumes (``orders``, the agents' request queues, ``agent-replies``)
decodes its body here. Decoding and validating are pure functions of the body: whatever they
raise on the first delivery they raise on every redelivery, so an exception escaping them
would only be retried into ``MaxDeliveryCountExceeded`` (five stack traces, no reason).
Here every failure becomes :class:`InvalidMessage` with a dead-letter reason
(``InvalidJson`` or ``SchemaViolation``) and a description naming the field and the rule,
and the trigger dead-letters the message on its first delivery (SPEC S1, L3).

Beyond :func:`json.loads`, a body must be I-JSON (RFC 7493), the JSON that decodes the same
everywhere, and nest at most :data:`MAX_DEPTH` levels:

- UTF-8 only (RFC 8259 section 8.1); a leading byte order mark is ignored (it may be).
- no ``NaN``, ``Infinity`` or ``-Infinity`` literals, and no number that overflows a
  double (``1e999``): they are not JSON numbers (RFC 8259 section 6) and would reach the
  code as ``nan``/``inf``, which the app's own senders refuse to write.
- integers within the signed 64-bit range: no contract needs more, wider integers are not
  portable (RFC 7493 section 2.2 advises staying within 2**53), and past 4300 digits
  Python's int-string limit would surface as an exception.
- no duplicate names in an object (RFC 7493 section 2.3): ``{"totalPrice": "1",
  "totalPrice": "100"}`` means different orders to different parsers.
- no unpaired surrogate escapes such as ``"\ud800"`` (RFC 7493 section 2.1): such a
  string cannot be encoded as UTF-8, so storing or forwarding it would fail on every
  delivery.
- nesting deeper than :data:`MAX_DEPTH` objects or arrays is refused, including nesting
  so deep that the parser itself runs out of stack (``RecursionError``).
"""

from __future__ import annotations

import json
import math
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from orders.errors import OrderServiceError
from orders.models._types import WIRE

INVALID_JSON = "InvalidJson"
"""Dead-letter reason: the body is not strict JSON (see the module docstring)."""

SCHEMA_VIOLATION = "SchemaViolation"
"""Dead-letter reason: the body is JSON but breaks the message contract."""

MAX_DEPTH = 32
"""Deepest nesting of objects and arrays accepted; the contracts need at most five."""

INT_MIN, INT_MAX = -(2**63), 2**63 - 1
"""Range of JSON integers accepted: signed 64 bits."""

_INT_MAX_CHARS = 20  # "-9223372036854775808"; longer text is refused before conversion

M = TypeVar("M", bound=BaseModel)


class InvalidMessage(OrderServiceError, ValueError):
    """A message body that can never be processed; dead-letter it with this reason (permanent).

    Parameters
    ----------
    reason : str
        ``InvalidJson`` or ``SchemaViolation`` (the DeadLetterReason).
    description : str
        The field (a dotted path such as ``order.lines.0.quantity``, or ``body``) and the
        rule it breaks (the DeadLetterErrorDescription).
    """

    def __init__(self, reason: str, description: str) -> None:
        super().__init__(f"{reason}: {description}")
        self.reason = reason
        self.description = description


class _Refused:
    """Stands in for a value the decoder refuses, so the check can name its path."""

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
    """Quote ``text`` safely for a description: ASCII only, at most ``limit`` characters."""
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
    """Walk ``value`` (iteratively) and raise InvalidMessage at the first refused part."""
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
    """Decode a message body as strict JSON (I-JSON, RFC 7493, nested at most MAX_DEPTH).

    Parameters
    ----------
    body : bytes or str
        The message body; bytes must be UTF-8.

    Returns
    -------
    Any
        The decoded value: dict, list, str, int, float, bool or None.

    Raises
    ------
    InvalidMessage
        With reason ``InvalidJson`` and the path and rule, for anything the module
        docstring lists, a syntax error (with line and column), or any other failure of the
        decoder (it is a pure function of the body: redelivery would fail the same way).
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
    """Decode a message body strictly and validate it against its contract.

    Parameters
    ----------
    body : bytes or str
        The message body.
    model : type of pydantic.BaseModel
        The queue's contract, e.g. :class:`~orders.models.messages.SubmitOrder`.
    what : str, optional
        What the message is (``agent reply``), put before an error's description:
        ``agent reply: order.lines.0.quantity: ...``.

    Returns
    -------
    pydantic.BaseModel
        The validated message.

    Raises
    ------
    InvalidMessage
        ``InvalidJson`` (see :func:`loads`) or ``SchemaViolation`` naming each field and
        rule (``order.lines.0.quantity: Input should be greater than 0``); an unexpected
        exception from a validator also becomes ``SchemaViolation`` (validation is pure, so
        a redelivery would raise it again).
    """
    try:
        return validate(loads(body), model)
    except InvalidMessage as exc:
        if not what:
            raise
        raise InvalidMessage(exc.reason, f"{what}: {exc.description}") from None


def validate(data: Any, model: type[M]) -> M:
    """Validate an already decoded body (:func:`loads`) against its contract.

    For a reader that looks at the decoded body before validating it (submission checks
    which client a body names first, ``scheduler.identity``).

    Raises
    ------
    InvalidMessage
        ``SchemaViolation``, as :func:`parse` raises it.
    """
    try:
        # Wire names only, unknown fields refused (orders.models._types.Contract).
        return model.model_validate(data, by_name=False, context={WIRE: True})
    except ValidationError as exc:
        raise InvalidMessage(SCHEMA_VIOLATION, describe(exc)) from None
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - pure function of the body: never retry it
        raise InvalidMessage(SCHEMA_VIOLATION, f"body: the {model.__name__} contract cannot "
                                               f"be checked: {type(exc).__name__}: "
                                               f"{_show(str(exc), 200)}") from None


def describe(exc: ValidationError) -> str:
    """Describe a validation error as ``field: rule`` pairs joined by ``; ``.

    Parameters
    ----------
    exc : pydantic.ValidationError
        The error of a contract's ``model_validate``.

    Returns
    -------
    str
        E.g. ``order.lines.0.quantity: Input should be greater than 0`` (``body`` for a
        rule on the whole message).
    """
    return "; ".join(f"{_path(tuple(e['loc']))}: {e['msg']}" for e in exc.errors())
