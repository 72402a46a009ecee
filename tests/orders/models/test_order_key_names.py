"""One word per concept: a key is ``order_key`` in Python and ``orderId`` on the wire (X6).

The client's OrderID is ``order_id`` (a client's order, :class:`ClientOrder`, and the
status messages); the order key ``<clientId>~<OrderID>`` is ``order_key`` (the stored
:class:`Order`, records, requests). Both are ``orderId`` on the wire.
"""

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
import orders.models.order as order_models
from orders.models import StateRecord
from orders.models._types import WIRE, Contract, OrderId, OrderKey
from orders.models.messages import AgentRequest, OperatorAlert, SubmitOrder
from orders.models.order import Order
from orders.models.wire import InvalidMessage, validate
from orders.remote_steps import RemoteStep
from orders.stores._sqlite_state_table import from_row, to_row
from scheduler.submission import keyed

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
SUBMIT_ORDER = (
    '{"schemaVersion":1,"clientId":"acme","replyTo":"replies-acme","order":'
    + ORDER.replace(KEY, "ORD-1") + "}")
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
    assert (submit.client_order_id, submit.order.order_id) == ("ORD-1", "ORD-1")
    # The scheduler reads the OrderID from ``client_order_id``, never through
    # ``order.order_key``, the stored order's key.
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


def _fields_of(model: type[Contract]) -> dict[str, tuple[str | None, object]]:
    hints = typing.get_type_hints(model, include_extras=True)
    return {name: (info.alias, hints[name]) for name, info in model.model_fields.items()}


def test_a_client_s_order_holds_its_order_id_and_a_stored_order_its_key_never_both():
    submitted = SubmitOrder.model_fields["order"].annotation
    content = order_models.OrderContent  # what every order holds besides its name
    assert isinstance(submitted, type) and issubclass(submitted, content)
    client, stored = _fields_of(submitted), _fields_of(Order)
    assert client.pop("order_id") == ("orderId", OrderId)
    assert stored.pop("order_key") == ("orderId", OrderKey)
    # Everything else is the same content, under the same wire names, in the same order.
    assert list(client.items()) == list(stored.items())
    assert list(client) == list(content.model_fields)
    assert not issubclass(submitted, Order) and not issubclass(Order, submitted)


def test_a_submission_and_its_order_load_and_dump_the_same_bytes_as_before():
    loaded = SubmitOrder.model_validate_json(SUBMIT_ORDER, context={WIRE: True})
    assert (loaded.order.order_id, loaded.model_dump_json()) == ("ORD-1", SUBMIT_ORDER)
    assert loaded.order.model_dump_json() == ORDER.replace(KEY, "ORD-1")


def test_a_client_s_order_id_is_never_a_key():
    # Refused as before, naming the field and its rule.
    with pytest.raises(ValidationError, match=r"(?s)order\.orderId.*must be 1 to 64 characters"):
        SubmitOrder.model_validate_json(SUBMIT_ORDER.replace('"ORD-1"', f'"{KEY}"'))


def test_submission_stores_an_order_built_under_its_key_not_the_client_s_order_renamed():
    submit = SubmitOrder.model_validate_json(SUBMIT_ORDER, context={WIRE: True})
    order, record = keyed(submit, KEY, submit.order.created_at)
    assert type(order) is Order and not isinstance(submit.order, Order)
    assert (order.order_key, record.client_order_id) == (KEY, "ORD-1")
    assert order.model_dump_json() == ORDER
    assert "order_id" not in order.__dict__


CLIENT_NAMES = {"ClientOrder", "ClientBatch"}
"""What a module imports when it holds clients' orders (the demo's and benchmarks' clients)."""


def client_side_modules() -> list[Path]:
    """The client application (``client/``) and every tool module holding clients' orders."""
    tools = [p for package in ("demo", "bench") for p in sorted((REPO / package).rglob("*.py"))
             if any(isinstance(node, ast.ImportFrom) and CLIENT_NAMES & {a.name for a in node.names}
                    for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))))]
    return sorted((REPO / "client").rglob("*.py")) + tools


def test_no_client_side_module_reads_an_order_key_where_it_means_the_order_id():
    modules = client_side_modules()
    assert REPO / "client" / "submit.py" in modules and REPO / "demo" / "clients.py" in modules
    # A client knows its OrderIDs; it derives a key with ``order_key(client, OrderID)`` only.
    misnamed = [(str(p.relative_to(REPO)), node.lineno) for p in modules
                for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
                if isinstance(node, ast.Attribute) and node.attr == "order_key"
                or isinstance(node, ast.keyword) and node.arg == "order_key"
                and p.relative_to(REPO).parts[0] == "client"]
    assert misnamed == []


def test_no_code_gives_an_order_another_key_by_copying_it():
    # ``model_copy(update={"order_key": ...})`` skips validation: a copy that renames an
    # order makes one field mean two things (an OrderID, then a key). Build the order instead.
    roots = [*DEPLOYED, "client", "demo", "bench"]
    renamed = [(str(p.relative_to(REPO)), node.lineno) for package in roots
               for p in sorted((REPO / package).rglob("*.py"))
               for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
               if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr == "model_copy"
               and any(isinstance(kw.value, ast.Dict) and any(
                   isinstance(k, ast.Constant) and k.value in ("order_key", "order_id")
                   for k in kw.value.keys) for kw in node.keywords if kw.arg == "update")]
    assert renamed == []
