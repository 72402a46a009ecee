"""The dashboard's endpoints answer bad input with a 4xx and a reason (issue: dashboard).

Against the real app under the local host: unknown and malformed query parameters, unknown
orders, malformed order names, actions without an operator, bodies that are not JSON
objects, and a resubmit of an order not in Error each get their 4xx with ``error``; the
page and its assets carry a Content-Security-Policy that allows no inline script.
"""

from types import SimpleNamespace

import httpx
import pytest

from tests.e2e.harness import ProcessState, key, make_order


@pytest.fixture
def system(make_system):
    system = make_system()
    system.submit(make_order(1))
    system.run(10)
    assert system.state(make_order(1).order_id).process_state == ProcessState.PROCESSED
    return system


def get(system, path, **params):
    return httpx.get(f"{system.host.base_url}/api/ops/dashboard{path}", params=params,
                     timeout=30)


def post(system, body, headers=None, content=None):
    headers = {"x-ops-operator": "alice", **(headers or {})}
    return httpx.post(f"{system.host.base_url}/api/ops/dashboard/api/resubmit",
                      json=body if content is None else None, content=content,
                      headers=headers, timeout=30)


@pytest.mark.parametrize("params, says", [
    ({"limit": "abc"}, "'limit': must be an integer from 1 to 1000"),
    ({"limit": "0"}, "'limit': must be an integer from 1 to 1000"),
    ({"limit": "1001"}, "'limit': must be an integer from 1 to 1000"),
    ({"state": "Error"}, "unknown query parameter 'state'"),
])
def test_overview_refuses_malformed_parameters(system, params, says):
    answer = get(system, "/api/overview", **params)
    assert answer.status_code == 400 and says in answer.json()["error"]


def test_overview_takes_a_limit_and_refuses_a_key_in_the_url(system):
    answer = get(system, "/api/overview", limit="5")
    assert answer.status_code == 200
    assert answer.json()["summary"]["counts"]["Processed"] == 1
    keyed = get(system, "/api/overview", limit="5", code="any-key")
    assert keyed.status_code == 400 and "'code'" in keyed.json()["error"]


@pytest.mark.parametrize("params, status, says", [
    ({}, 400, "'orderId' is required"),
    ({"orderId": "ORD-00001", "client": "no such client!"}, 400, "client"),
    # One rule for every form of a bad client id: the client-id rule's own words, whatever
    # the length (the parameter had a 40-character limit of its own before the rule).
    ({"orderId": "ORD-00001", "client": ""}, 400, "'client': must be 1 to 20 lower-case"),
    ({"orderId": "ORD-00001", "client": "a" * 21}, 400, "'client': must be 1 to 20 lower-case"),
    ({"orderId": "ORD-00001", "client": "a" * 41}, 400, "'client': must be 1 to 20 lower-case"),
    ({"orderId": "ORD-00001", "client": "a~b"}, 400, "'client': must be 1 to 20 lower-case"),
    ({"orderId": "ORD-00001", "client": "Acme"}, 400, "'client': must be 1 to 20 lower-case"),
    ({"orderId": "<script>", "client": "acme"}, 400, "characters from A-Z"),
    ({"orderId": "ORD-00001", "client": "acme", "x": "1"}, 400, "unknown query parameter"),
    ({"orderId": "ORD-99999", "client": "acme"}, 404, "no order acme~ORD-99999"),
    ({"orderId": "ORD-00001", "client": "globex"}, 404, "no order globex~ORD-00001"),
])
def test_order_detail_refuses_bad_or_unknown_orders(system, params, status, says):
    answer = get(system, "/api/order", **params)
    assert answer.status_code == status and says in answer.json()["error"], answer.text


def test_order_detail_is_keyed_by_client_and_order_id(system):
    order = make_order(1)
    by_client = get(system, "/api/order", client="acme", orderId=order.order_id).json()
    by_key = get(system, "/api/order", orderId=key(order)).json()
    assert by_client["record"]["orderId"] == by_key["record"]["orderId"] == key(order)
    (attempt,) = by_client["attempts"]
    assert attempt["status"]["runtimeStatus"] == "Completed"
    names = [row["name"] for row in attempt["timeline"] if row["type"] == "TaskCompleted"]
    # Version 7: begin reserves and sends the charge, finish tells the client.
    assert names == ["begin_attempt", "send_agent_request", "finish_attempt"]
    assert [m["status"] for m in by_client["sentByAttempts"]] == ["OrderCompleted"]
    assert [m["body"]["status"] for m in by_client["queued"]] == ["RequestReceived",
                                                                  "OrderCompleted"]


@pytest.mark.parametrize("body, headers, content, status, says", [
    ({"client": "acme", "orderId": "ORD-00001"}, {"x-ops-operator": ""}, None, 403,
     "X-Ops-Operator"),
    ({"client": "acme", "orderId": "ORD-00001"}, {"x-ops-operator": "<b>eve</b>"}, None, 400,
     "operator name"),
    (None, {"content-type": "text/plain"}, b"orderId=ORD-00001", 415, "JSON"),
    (None, {"content-type": "application/json"}, b"{not json", 400, "not valid JSON"),
    (None, {"content-type": "application/json"}, b"[" * 8000 + b"]" * 8000, 400,
     "not valid JSON"),
    (None, {"content-type": "application/json"}, b'{"reason": "' + b"x" * 20_000 + b'"}',
     413, "longer than"),
    (["ORD-00001"], {}, None, 400, "JSON object"),
    ({"client": "acme", "orderId": "ORD-00001", "force": True}, {}, None, 400, "force"),
    ({"client": "acme", "orderId": 7}, {}, None, 400, "orderId must be text"),
    ({"client": "acme", "orderId": "ORD-00001", "reason": "ok\nINFO resubmitted by root"},
     {}, None, 400, "no control characters"),
    # Without App Service authentication the principal header is the caller's own text.
    ({"client": "acme", "orderId": "ORD-00001"},
     {"x-ops-operator": "", "x-ms-client-principal-name": "admin"}, None, 403,
     "X-Ops-Operator"),
    ({"client": "acme", "orderId": "ORD-99999"}, {}, None, 404, "no state record"),
    ({"client": "acme", "orderId": "ORD-00001"}, {}, None, 409, "Processed, not Error"),
])
def test_resubmit_refuses_bad_unauthorised_or_pointless_requests(system, body, headers,
                                                                  content, status, says):
    answer = post(system, body, headers, content)
    assert answer.status_code == status and says in answer.json()["error"], answer.text
    assert system.state(make_order(1).order_id).process_state == ProcessState.PROCESSED


def test_page_and_assets_forbid_inline_script_and_unknown_assets_are_404(system):
    page = get(system, "")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert get(system, "/assets/dashboard.js").headers["content-type"].startswith(
        "text/javascript")
    missing = get(system, "/assets/..%2Fblueprint.py")
    assert missing.status_code == 404
    # A method the route does not take: 404, as the Functions host answers (host #10098).
    assert httpx.post(f"{system.host.base_url}/api/ops/dashboard/api/overview",
                      timeout=30).status_code == 404


def test_a_resubmit_that_keeps_losing_the_etag_race_is_a_409_and_changes_nothing(
        system, monkeypatch):
    from orders.stores.errors import PreconditionFailedError

    def always_changed(*args, **kwargs):
        raise PreconditionFailedError("the record kept changing")

    monkeypatch.setattr("ops.dashboard.blueprint.resubmit", always_changed)
    answer = post(system, {"client": "acme", "orderId": "ORD-00001"})
    assert answer.status_code == 409 and "try again" in answer.json()["error"], answer.text
    assert system.state(make_order(1).order_id).process_state == ProcessState.PROCESSED


def test_the_signed_in_name_is_taken_only_behind_app_service_authentication():
    """The rules themselves are tests/ops/test_access.py; here, the dashboard's wrapper."""
    from ops.access import OPERATOR_ROLE
    from ops.dashboard import web
    from tests.ops.test_access import AZURE, LOCAL, signed_in

    request = SimpleNamespace(headers=signed_in(OPERATOR_ROLE, **{"x-ops-operator": "mallory"}))
    assert web.operator_of(request, LOCAL) == "mallory"
    assert web.operator_of(request, AZURE) == "alice@contoso.com"
    with pytest.raises(web.Problem) as refused:
        web.operator_of(SimpleNamespace(headers=signed_in()), AZURE)
    assert refused.value.status == 403


def history_text(detail) -> str:
    import json
    return json.dumps([a["timeline"] for a in detail["attempts"]])


def values_of(data, names, found=None):
    """Every value under one of ``names``, anywhere in ``data`` (JSON text decoded too)."""
    import json
    found = [] if found is None else found
    if isinstance(data, str) and data[:1] in "{[":
        try:
            data = json.loads(data)
        except ValueError:
            return found
    if isinstance(data, dict):
        for k, v in data.items():
            if k in names:
                found.append(v)
            values_of(v, names, found)
    elif isinstance(data, list):
        for v in data:
            values_of(v, names, found)
    return found


def test_order_detail_withholds_payment_and_shipment_data_unless_asked(system):
    order = make_order(1)
    charge, = system.effects(kind="charge", order_id=order.order_id)
    shipment, = system.effects(kind="ship", order_id=order.order_id)
    shown = get(system, "/api/order", client="acme", orderId=order.order_id).json()
    timelines = [a["timeline"] for a in shown["attempts"]]
    restricted = values_of(timelines, {"paymentId", "amount", "currency"})
    assert restricted and set(restricted) == {"<Restricted>"}
    assert set(values_of(timelines, {"shipmentId"})) == {"<Confidential>"}
    # The charged amount hides in no other field either: the order's own total and prices.
    assert set(values_of(timelines, {"totalPrice", "unitPrice"})) == {"<Restricted>"}
    assert (shown["order"]["totalPrice"], shown["order"]["customerId"],
            shown["order"]["lines"]) == ("<Restricted>", "<Confidential>", "<Confidential>")
    # The payment id and the shipment id appear nowhere in the histories.
    text = history_text(shown)
    assert charge.resource_id not in text and shipment.resource_id not in text
    asked = get(system, "/api/order", client="acme", orderId=order.order_id,
                details="true").json()
    amounts = values_of([a["timeline"] for a in asked["attempts"]], {"amount"})
    assert charge.amount in amounts
    assert asked["order"]["totalPrice"] == str(order.total_price)
    assert shipment.resource_id in history_text(asked)


def test_order_detail_details_flag_is_strict(system):
    bad = get(system, "/api/order", client="acme", orderId="ORD-00001", details="yes")
    assert bad.status_code == 400 and "must be true or false" in bad.json()["error"]


@pytest.mark.parametrize("roles, settings, allowed", [
    (None, "LOCAL", True),  # locally, asking is enough
    ((), "AZURE", False),  # in Azure, a signed-in principal with the role
    (("Orders.Operator",), "AZURE", False),
    (("Orders.Details",), "AZURE", True),
])
def test_details_need_the_details_role_behind_app_service_authentication(roles, settings,
                                                                         allowed):
    from ops.dashboard.web import Problem, check_details
    from tests.ops import test_access

    headers = {} if roles is None else test_access.signed_in(*roles)
    request = SimpleNamespace(headers=headers)
    where = getattr(test_access, settings)
    assert check_details(request, False, where) is False
    if allowed:
        assert check_details(request, True, where) is True
    else:
        with pytest.raises(Problem) as refused:
            check_details(request, True, where)
        assert refused.value.status == 403 and "Orders.Details" in refused.value.reason


def test_alerts_show_newest_first_and_collapsed_ones_with_their_dead_letter_count(
        make_system):
    import json

    system = make_system()
    for n in range(30):  # globex poses as acme: thirty ClientMismatch, one alert
        system.engine.send("orders-globex", json.dumps({
            "clientId": "acme", "replyTo": "replies-acme",
            "order": make_order(200 + n).model_dump(mode="json")}).encode(),
            message_id=f"pose-{n}")
    system.run(5)
    for n in range(600):  # and the alert queue already held 600 older alerts
        system.engine.send("operator-alerts", json.dumps({
            "schemaVersion": 1, "kind": "OrderError", "reason": f"old {n}",
            "at": "2029-01-01T00:00:00Z"}).encode(), message_id=f"old-{n}")
    order = make_order(1)
    system.submit(order)
    system.run(10)
    system.submit(make_order(1, lines=3), message_id="changed")  # a real alert, last
    system.run(5)
    alerts = get(system, "/api/overview").json()["messaging"]["alerts"]
    # Newest first, grouped per kind and client: the 600 older alerts are one row, whose
    # newest alert is shown; reading back past them finds globex's alert (X10).
    assert [(a["body"]["kind"], a["count"]) for a in alerts] == [
        ("ConflictingOrder", 1), ("OrderError", 600), ("ClientMismatch", 1)]
    assert alerts[0]["body"]["orderId"] == key(order)
    assert alerts[1]["body"]["reason"] == "old 599"
    mismatch = [m for m in system.alerts() if m["kind"] == "ClientMismatch"]
    assert len(mismatch) == 1 and mismatch[0]["clientId"] == "globex"
    assert system.engine.counts("orders-globex").dead_letter == 30


def test_a_collapsed_alert_shows_how_many_messages_it_stands_for(make_system):
    import json

    system = make_system()
    for n in range(30):
        system.engine.send("orders-globex", json.dumps({
            "clientId": "acme", "replyTo": "replies-acme",
            "order": make_order(300 + n).model_dump(mode="json")}).encode(),
            message_id=f"pose-{n}")
    system.run(5)
    (alert,) = get(system, "/api/overview").json()["messaging"]["alerts"]
    assert (alert["body"]["kind"], alert["collapsedQueue"], alert["deadLettered"]) == (
        "ClientMismatch", "orders-globex", 30)


@pytest.mark.parametrize("params, status, says", [
    ({}, 400, "'sku' is required"),
    ({"sku": "P1-S1", "x": "1"}, 400, "unknown query parameter"),
    ({"sku": "P9-S9"}, 404, "no stock item for sku P9-S9"),
])
def test_stock_refuses_bad_or_unknown_skus(system, params, status, says):
    answer = get(system, "/api/stock", **params)
    assert answer.status_code == status and says in answer.json()["error"]


def test_stock_and_the_order_detail_show_the_reservation(make_system):
    system = make_system()
    order = make_order(7)
    system.services.stores.inventory.load({line.sku: 10 for line in order.lines})
    system.submit(order)
    system.run(10)
    assert system.state(order.order_id).process_state == ProcessState.PROCESSED
    first = order.lines[0]
    stock = get(system, "/api/stock", sku=first.sku, details="true").json()
    # Processed: the order's holds were settled out of the item (docs/inventory.md).
    assert (stock["available"], stock["held"], stock["consumed"], stock["balanced"]) == (
        10 - first.quantity, 0, first.quantity, True)
    assert stock["holds"] == []
    detail = get(system, "/api/order", orderId=key(order), details="true").json()
    assert [(r["sku"], r["held"]) for r in detail["reservation"]] == [
        (line.sku, line.quantity) for line in order.lines]
    # Without details an order's lines (Confidential) are withheld (X10); the stock view's
    # holds of an order in flight are withheld too (tests/opscli/test_cli_inventory.py).
    rows = get(system, "/api/order", orderId=key(order)).json()["reservation"]
    assert [(r["sku"], r["requested"], r["held"], r["available"], r["fullyHeld"])
            for r in rows] == [("<Confidential>",) * 4 + (True,)] * len(order.lines)


def test_dead_lettered_bodies_on_the_overview_withhold_the_orders_data(make_system):
    system = make_system()
    order = make_order(1)
    system.submit(order)
    system.run(10)
    system.submit(make_order(1, lines=3), message_id="changed")  # ConflictingOrder
    system.run(5)
    dead = get(system, "/api/overview").json()["messaging"]["deadLettered"]
    (row,) = [d for d in dead if d["messageId"] == "changed"]
    assert row["deadLetterReason"] == "ConflictingOrder"
    assert (row["body"]["order"]["totalPrice"], row["body"]["order"]["lines"]) == (
        "<Restricted>", "<Confidential>")
    assert row["body"]["order"]["orderId"] == order.order_id


def test_many_alerts_of_one_clients_orders_take_one_row_and_others_stay_in_view(make_system):
    import json

    system = make_system()
    system.engine.send("orders-globex", json.dumps({
        "clientId": "acme", "replyTo": "replies-acme",
        "order": make_order(400).model_dump(mode="json")}).encode(), message_id="pose")
    system.run(5)
    for n in range(30):  # thirty declined orders of acme, each an OrderError alert
        system.engine.send("operator-alerts", json.dumps({
            "schemaVersion": 1, "kind": "OrderError", "reason": f"declined {n}",
            "orderId": f"acme~ORD-{n:05d}", "at": "2030-01-01T00:00:00Z"}).encode(),
            message_id=f"OrderError:acme~ORD-{n:05d}:1")
    alerts = get(system, "/api/overview").json()["messaging"]["alerts"]
    assert [(a["body"]["kind"], a["count"]) for a in alerts] == [
        ("OrderError", 30), ("ClientMismatch", 1)]
    assert alerts[0]["body"]["reason"] == "declined 29"


def test_a_repeated_query_parameter_is_refused_through_the_host(system):
    answer = httpx.get(f"{system.host.base_url}/api/ops/dashboard/api/order",
                       params=[("client", "acme"), ("orderId", "ORD-00001"),
                               ("client", "globex")], timeout=30)
    assert answer.status_code == 400
    assert "'client' is given more than once" in answer.json()["error"]
