"""One word per concept: a key is ``order_key`` in Python and ``orderId`` on the wire (X6)."""

import importlib
import json
import pkgutil
import typing
from decimal import Decimal

import pytest
from pydantic import ValidationError

import orders.models
from orders.models import StateRecord
from orders.models._types import WIRE, Contract, OrderId, OrderKey
from orders.models.messages import AgentRequest, OperatorAlert
from orders.models.order import Order
from orders.models.wire import InvalidMessage, validate
from orders.stores._sqlite_state_table import from_row, to_row

KEY = "acme~ORD-1"

# Written by the models before the Python fields were renamed: the bytes must not change.
STATE_RECORD = (
    '{"orderId":"acme~ORD-1","clientId":"acme","clientOrderId":"ORD-1","processState":"Pending",'
    '"lockedBy":null,"completeBy":null,"failureCount":0,"attempt":0,"notBefore":null,'
    '"compensationAttempt":0,"compensationFailures":0,"failureReason":null,'
    '"circuitRefusedBy":null,"circuitHolds":0,"traceParent":null,"attemptTrace":null,'
    '"replyTo":"replies-acme","workflowVersion":1,"work":1,"schemaVersion":5,"etag":null,'
    '"createdAt":"2030-01-02T03:04:05.678901Z","updatedAt":"2030-01-02T03:04:05.678901Z"}')
ORDER = (
    '{"orderId":"acme~ORD-1","customerId":"CUST-1","currency":"EUR","lines":[{"sku":"SKU-1",'
    '"quantity":2,"unitPrice":"10.00","discount":"0","tax":"0"}],"totalPrice":"20.00",'
    '"createdAt":"2030-01-02T03:04:05.678901Z","schemaVersion":1}')
AGENT_REQUEST = (
    '{"schemaVersion":1,"messageId":"acme~ORD-1:1:charge","orderId":"acme~ORD-1",'
    '"instanceId":"acme~ORD-1:1","service":"payment","operation":"charge",'
    '"idempotencyKey":"acme~ORD-1:charge","completeBy":"2030-01-02T03:04:05.678901Z",'
    '"maxAttempts":3,"eventName":"charge-reply","replyTo":"agent-replies",'
    '"payload":{"orderId":"acme~ORD-1","amount":"20.00"}}')
OPERATOR_ALERT = (
    '{"schemaVersion":1,"kind":"OrderError","reason":"r","at":"2030-01-02T03:04:05.678901Z",'
    '"orderId":"acme~ORD-1","instanceId":null,"clientId":null}')


def contracts() -> list[type[Contract]]:
    for module in pkgutil.walk_packages(orders.models.__path__, "orders.models."):
        importlib.import_module(module.name)
    found, todo = [], [Contract]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def _holds(annotation: object, wanted: object) -> bool:
    """Whether ``wanted`` is ``annotation`` or inside it (``X | None``, tuples...)."""
    return annotation == wanted or any(_holds(a, wanted) for a in typing.get_args(annotation))


def fields_typed(wanted: object) -> list[tuple[str, str]]:
    return [(cls.__name__, name) for cls in contracts()
            for name, hint in typing.get_type_hints(cls, include_extras=True).items()
            if name in cls.model_fields and _holds(hint, wanted)]


def test_the_walk_finds_the_contracts_that_hold_a_key_and_an_order_id():
    keyed = fields_typed(OrderKey)
    assert ("StateRecord", "order_key") in keyed and ("AgentRequest", "order_key") in keyed
    assert ("StatusMessage", "order_id") in fields_typed(OrderId)


def test_every_field_typed_order_key_is_named_order_key():
    assert [f for f in fields_typed(OrderKey) if not f[1].endswith("_key")] == []


def test_every_field_typed_order_id_is_named_order_id():
    assert [f for f in fields_typed(OrderId) if not f[1].endswith("order_id")] == []


def test_no_field_named_order_id_holds_anything_but_an_order_id():
    named = [(cls.__name__, name, hint) for cls in contracts()
             for name, hint in typing.get_type_hints(cls, include_extras=True).items()
             if name == "order_id" and name in cls.model_fields]
    assert named and [n for n in named if not _holds(n[2], OrderId)] == []


def test_every_order_key_field_keeps_the_wire_name_order_id():
    aliases = {(cls.__name__, cls.model_fields[name].alias)
               for cls in contracts() for name in cls.model_fields if name == "order_key"}
    assert aliases and {alias for _, alias in aliases} == {"orderId"}


@pytest.mark.parametrize(("model", "text"), [
    (StateRecord, STATE_RECORD), (Order, ORDER), (AgentRequest, AGENT_REQUEST),
    (OperatorAlert, OPERATOR_ALERT)])
def test_wire_json_with_order_id_loads_into_order_key_and_dumps_byte_identical(model, text):
    loaded = model.model_validate_json(text, context={WIRE: True})
    assert loaded.order_key == KEY
    assert loaded.model_dump_json() == text


@pytest.mark.parametrize("name", ["order_key", "order_id"])
def test_wire_input_refuses_the_python_names_of_the_key(name):
    with pytest.raises(ValidationError, match=f"unknown field.*'{name}'"):
        Order.model_validate_json(ORDER.replace('"orderId"', f'"{name}"'), context={WIRE: True})


def test_the_sqlite_row_keeps_the_key_in_its_order_id_column():
    record = StateRecord.model_validate_json(STATE_RECORD)
    row = to_row(record)
    assert (row["order_id"], "order_key" in row) == (KEY, False)
    assert from_row(row) == record


def test_a_contract_nested_in_a_tuple_refuses_python_names_on_the_wire_only():
    order = json.loads(ORDER)
    order["lines"] = [order["lines"][0], {**order["lines"][0], "unit_price": "10.00"}]
    order["totalPrice"] = "40.00"
    with pytest.raises(InvalidMessage, match=r"^SchemaViolation: lines\.1: unknown field\(s\) "
                                             r"'unit_price': the contract accepts only "):
        validate(order, Order)
    assert Order.model_validate(order).lines[1].unit_price == Decimal("10.00")
