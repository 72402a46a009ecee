"""Field types shared by every contract, each with the rule it enforces.

Timestamps use one fixed-width UTC format, so text comparison (Cosmos DB SQL, SQLite) orders
them as time.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    PlainSerializer,
    PydanticUserError,
    ValidationInfo,
)
from pydantic._internal._config import ConfigWrapper
from pydantic.alias_generators import to_camel
from pydantic.config import ExtraValues
from pydantic_core import PydanticCustomError, SchemaValidator, core_schema

from azurekit.client_ids import check_client_id
from azurekit.instance_ids import instance_id_rule_broken
from azurekit.queues import is_queue_name

ORDER_ID_MAX_LENGTH = 64
"""Longest OrderID: ``f"{order_id}:{attempt}"`` must stay within D2's 100 characters."""

ORDER_KEY_SEPARATOR = "~"
"""Order key separator: in neither part, valid in instance ids, Cosmos ids, MessageIds, URLs."""

_ORDER_ID_RE = re.compile(rf"[A-Za-z0-9._-]{{1,{ORDER_ID_MAX_LENGTH}}}")
_SKU_RE = re.compile(r"[A-Za-z0-9._-]{1,64}")
_CURRENCY_RE = re.compile(r"[A-Z]{3}")


def format_utc(value: datetime) -> str:
    """Format an aware datetime as 27-character UTC, e.g. ``2030-01-01T00:00:00.000000Z``.

    Raises
    ------
    ValueError
        If ``value`` is naive, or outside years 1 to 9999 in UTC.
    """
    utc = _utc(value)
    if utc.year < 1000:  # strftime writes these years unpadded; keep its text
        return utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return utc.isoformat(timespec="microseconds")[:26] + "Z"  # the same text, faster


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("must be timezone-aware (UTC); got a naive datetime")
    try:
        return value.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+01:00 is before year 1 in UTC
        raise ValueError(f"must lie between years 1 and 9999 in UTC; got {value.isoformat()}"
                         ) from None


def _order_id(value: str) -> str:
    if not _ORDER_ID_RE.fullmatch(value):
        raise ValueError(
            f"must be 1 to {ORDER_ID_MAX_LENGTH} characters from A-Z a-z 0-9 . _ - "
            f"(it becomes part of the orchestration instance id, D2); got {value!r}"
        )
    if not value.strip("."):
        # RFC 3986 dot segments: a client or proxy may remove them from a path.
        raise ValueError(f"must not consist of dots only (a URL dot segment); got {value!r}")
    return value


def _order_key(value: str) -> str:
    client, separator, order_id = value.rpartition(ORDER_KEY_SEPARATOR)
    if separator:
        try:
            check_client_id(client)
        except ValueError as exc:
            raise ValueError(f"client part of the order key <clientId>~<OrderID>: {exc}"
                             ) from None
    _order_id(order_id)
    return value


def _sku(value: str) -> str:
    if not _SKU_RE.fullmatch(value):
        raise ValueError(f"must be 1 to 64 characters from A-Z a-z 0-9 . _ -; got {value!r}")
    return value


def _currency(value: str) -> str:
    if not _CURRENCY_RE.fullmatch(value):
        raise ValueError(f"must be an ISO 4217 code of three capital letters; got {value!r}")
    return value


def _customer_id(value: str) -> str:
    if not value.strip() or len(value) > 64 or any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise ValueError(
            f"must be 1 to 64 characters, not blank, without control characters; got {value!r}"
        )
    return value


def _queue_name(value: str) -> str:
    if not is_queue_name(value):
        raise ValueError(
            "must be a Service Bus queue name: 1 to 260 characters from A-Z a-z 0-9 . _ - /, "
            f"starting and ending with a letter or digit; got {value!r}"
        )
    return value


def check_instance_id(value: str) -> str:
    """Check an orchestration instance id (LockedBy) against D2; raise ValueError if broken."""
    problem = instance_id_rule_broken(value)
    if problem is not None:
        raise ValueError(f"{problem} (D2)")
    return value


OrderId = Annotated[str, AfterValidator(_order_id)]
OrderKey = Annotated[str, AfterValidator(_order_key)]
"""``<clientId>~<OrderID>``, or a plain legacy OrderID (X6); see :mod:`orders.lifecycle.ids`."""
ClientId = Annotated[str, AfterValidator(check_client_id)]
Sku = Annotated[str, AfterValidator(_sku)]
Currency = Annotated[str, AfterValidator(_currency)]
CustomerId = Annotated[str, AfterValidator(_customer_id)]
QueueName = Annotated[str, AfterValidator(_queue_name)]
InstanceId = Annotated[str, AfterValidator(check_instance_id)]
UtcDatetime = Annotated[
    datetime, AfterValidator(_utc), PlainSerializer(format_utc, return_type=str, when_used="json")
]


WIRE = "wire"
"""Validation context key for input from outside: wire names only (see :class:`Contract`)."""


class Contract(BaseModel):
    """Base of the versioned contracts: immutable, camelCase on the wire, snake_case in Python.

    Under the :data:`WIRE` context, read through ``model_validate``/``model_validate_json``
    (as :func:`orders.models.wire.validate` does; a ``TypeAdapter`` does not check), a
    contract, and every one nested in it, accepts its wire names only and refuses any other
    key by name, so ``client_id`` beside ``clientId`` cannot be read differently by
    different readers (S8, X10). That check runs in a validator of its own
    (:func:`_wire_validator`): as a callback in every model's own schema it cost every
    validation, wire or not (a quarter of a seven-model result's).
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,
        frozen=True,
    )

    @classmethod
    def model_validate(cls, obj: Any, *, strict: bool | None = None,
                       extra: ExtraValues | None = None, from_attributes: bool | None = None,
                       context: Any | None = None, by_alias: bool | None = None,
                       by_name: bool | None = None) -> Self:
        """Validate ``obj``; under the :data:`WIRE` context by wire names only."""
        if not _is_wire(context):
            return super().model_validate(obj, strict=strict, extra=extra,
                                          from_attributes=from_attributes, context=context,
                                          by_alias=by_alias, by_name=by_name)
        _check_alias_or_name(by_alias, by_name)
        return _wire_validator(cls).validate_python(  # type: ignore[no-any-return]
            obj, strict=strict, extra=extra, from_attributes=from_attributes,
            context=context, by_alias=by_alias, by_name=by_name)

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, *,
                            strict: bool | None = None, extra: ExtraValues | None = None,
                            context: Any | None = None, by_alias: bool | None = None,
                            by_name: bool | None = None) -> Self:
        """Validate JSON text; under the :data:`WIRE` context by wire names only."""
        if not _is_wire(context):
            return super().model_validate_json(json_data, strict=strict, extra=extra,
                                               context=context, by_alias=by_alias,
                                               by_name=by_name)
        _check_alias_or_name(by_alias, by_name)
        return _wire_validator(cls).validate_json(  # type: ignore[no-any-return]
            json_data, strict=strict, extra=extra, context=context, by_alias=by_alias,
            by_name=by_name)


def _is_wire(context: Any) -> bool:
    return bool(context) and bool(context.get(WIRE))


def _check_alias_or_name(by_alias: bool | None, by_name: bool | None) -> None:
    if by_alias is False and by_name is not True:  # as BaseModel.model_validate refuses it
        raise PydanticUserError("At least one of `by_alias` or `by_name` must be set to True.",
                                code="validate-by-alias-and-name-false")


def _refuse_unknown(names: frozenset[str]) -> Callable[[Any, Any, ValidationInfo], Any]:
    """Return the wrap validator refusing any key of a dict but ``names``."""
    def wire_names_only(data: Any, handler: Any, info: ValidationInfo) -> Any:
        if isinstance(data, dict) and info.context and info.context.get(WIRE):
            unknown = [key for key in data if key not in names]
            if unknown:
                raise PydanticCustomError(
                    "unknown_field",
                    "unknown field(s) {fields}: the contract accepts only {allowed}",
                    {"fields": ", ".join(repr(str(k)[:64]) for k in unknown[:5]),
                     "allowed": ", ".join(sorted(names))})
        return handler(data)
    return wire_names_only


def _with_wire_checks(node: Any) -> Any:
    """Copy a core schema, wrapping every contract's model node in its wire-name check."""
    if isinstance(node, list):
        return [_with_wire_checks(item) for item in node]
    if not isinstance(node, dict):
        return node
    copied = {key: value if key in ("serialization", "metadata") else _with_wire_checks(value)
              for key, value in node.items()}
    cls = copied.get("cls")
    if copied.get("type") != "model" or not (isinstance(cls, type)
                                             and issubclass(cls, Contract)):
        return copied
    ref = copied.pop("ref", None)  # a definition-ref must reach the check, as pydantic does
    wrapped = core_schema.with_info_wrap_validator_function(
        _refuse_unknown(_wire_names(cls)), copied)
    if ref is not None:
        wrapped["ref"] = ref
    return wrapped


@functools.cache
def _wire_validator(cls: type[Contract]) -> SchemaValidator:
    """Return the validator of ``cls`` with the wire-name check around every contract in it."""
    config = ConfigWrapper(cls.model_config).core_config(title=cls.__name__)
    return SchemaValidator(_with_wire_checks(cls.__pydantic_core_schema__), config,
                           _use_prebuilt=False)


@functools.cache
def _wire_names(cls: type[BaseModel]) -> frozenset[str]:
    """Return the wire names of a contract's fields (computed once per class)."""
    return frozenset(f.alias or name for name, f in cls.model_fields.items())
