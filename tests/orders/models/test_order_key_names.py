"""One word per concept: a key is ``order_key`` in Python and ``orderId`` on the wire (X6)."""

import ast
import importlib
import json
import pkgutil
import typing
from decimal import Decimal
from pathlib import Path

import pytest
from pydantic import ValidationError

import orders.models
from orders.models import StateRecord
from orders.models._types import WIRE, Contract, OrderId, OrderKey
from orders.models.messages import AgentRequest, OperatorAlert, SubmitOrder
from orders.models.order import Order
from orders.models.wire import InvalidMessage, validate
from orders.remote_steps import RemoteStep
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


# One word per concept in the code around the contracts too: the client's OrderID is read
# from its own field, an agent's HTTP call is a *try* (an *attempt* is an order's), and no
# two modules share a vague name such as ``remote``.
REPO = Path(__file__).resolve().parents[3]
DEPLOYED = ("clocks", "sqlitekit", "durable_http", "azurekit", "sqlitebus", "orders",
            "agents", "activities", "orchestrators", "scheduler", "supervisor", "ops")
WIRE_ATTEMPT_NAMES = {"max_attempts", "MAX_ATTEMPTS", "AGENT_MAX_ATTEMPTS", "stop_after_attempt"}
"""``attempt`` words the agents may use: the request's ``maxAttempts`` (its share of the
retry budget, X2), its setting and stop reason, and tenacity's own ``stop_after_attempt``."""


def names_in(path: Path) -> set[str]:
    """Every identifier ``path`` binds or reads: names, attributes, arguments, definitions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            found.add(node.name)
    return found


def test_an_http_try_in_the_agents_is_a_try_never_an_attempt():
    agents = sorted((REPO / "agents").rglob("*.py"))
    assert agents
    used = {(str(p.relative_to(REPO)), name) for p in agents for name in names_in(p)
            if "attempt" in name.lower() and name not in WIRE_ATTEMPT_NAMES}
    assert used == set()


def test_submission_reads_the_client_s_order_id_from_its_own_field():
    submit = SubmitOrder.model_validate({
        "clientId": "acme", "replyTo": "replies-acme", "order": json.loads(ORDER.replace(
            KEY, "ORD-1"))})
    assert submit.client_order_id == "ORD-1"
    # ``order.order_key`` of a submission holds the OrderID, of a stored order the key: the
    # scheduler reads the OrderID only from ``client_order_id``.
    misread = [str(p.relative_to(REPO)) for p in sorted((REPO / "scheduler").rglob("*.py"))
               for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
               if isinstance(node, ast.Attribute) and node.attr == "order_key"
               and isinstance(node.value, ast.Attribute) and node.value.attr == "order"]
    assert misread == []


def test_no_deployed_module_is_named_remote_and_compensation_builds_no_forward_request():
    vague = [str(p.relative_to(REPO)) for package in DEPLOYED
             for p in (REPO / package).rglob("*.py") if p.stem == "remote"]
    assert vague == []
    assert RemoteStep.request.__module__ == "orders.remote_steps"
    room = REPO / "orders" / "compensation"
    assert not any("def request(" in p.read_text(encoding="utf-8") for p in room.rglob("*.py"))
