"""The triggers the infrastructure serves: queues, connections, schedules and routes."""

from azurekit.services import catalogue
from orders import names
from orders.models.activities import DECLARED
from tests.infra.checks import metadata_differences

DURABLE_TRIGGERS = {"orchestrationTrigger", "activityTrigger", "entityTrigger"}


def queue_trigger(queue):
    """A Service Bus trigger on ``queue`` over the shared identity-based connection."""
    return {"type": "serviceBusTrigger", "connection": "SERVICEBUS", "queueName": queue}


# Every trigger that needs something outside the task hub: a queue and its identity-based
# connection (Bicep creates the queue, the app setting SERVICEBUS__fullyQualifiedNamespace
# names the namespace), a schedule setting, or an HTTP route. Durable triggers only need the
# task hub and are checked against orders/names.py below.
EXPECTED = {
    "legacy_orders_queue": queue_trigger("orders"),
    # One submission per client of ORDER_CLIENTS (tests/infra/conftest.py: acme-1, globex).
    "submit_order_acme_1": queue_trigger("orders-acme-1"),
    "submit_order_globex": queue_trigger("orders-globex"),
    "route_agent_reply": queue_trigger("agent-replies"),
    # One agent per service of infra/services.json, on its request queue.
    **{f"{name}_agent": queue_trigger(spec.request_queue)
       for name, spec in catalogue().services.items()},
    "start_orders": {"type": "timerTrigger", "schedule": "%STARTER_SCHEDULE%"},
    "supervisor": {"type": "timerTrigger", "schedule": "%SUPERVISOR_SCHEDULE%"},
    "ops_snapshot": {"type": "timerTrigger", "schedule": "%OPS_SNAPSHOT_SCHEDULE%"},
    "retention_purge": {"type": "timerTrigger", "schedule": "%RETENTION_SCHEDULE%"},
    # The operations routes are anonymous to the Functions host: in Azure App Service
    # authentication (Entra ID sign-in, infra/app/function-app.bicep) fronts every request
    # and ops/access.py checks the principal; no function key travels in a URL.
    "ops_summary": {"type": "httpTrigger", "methods": ["GET"], "authLevel": "anonymous",
                    "route": "ops/summary"},
    "ops_dashboard": {"type": "httpTrigger", "methods": ["GET"], "authLevel": "anonymous",
                      "route": "ops/dashboard"},
    "ops_dashboard_asset": {"type": "httpTrigger", "methods": ["GET"],
                            "authLevel": "anonymous", "route": "ops/dashboard/assets/{name}"},
    "ops_dashboard_overview": {"type": "httpTrigger", "methods": ["GET"],
                               "authLevel": "anonymous", "route": "ops/dashboard/api/overview"},
    "ops_dashboard_order": {"type": "httpTrigger", "methods": ["GET"],
                            "authLevel": "anonymous", "route": "ops/dashboard/api/order"},
    "ops_dashboard_stock": {"type": "httpTrigger", "methods": ["GET"],
                            "authLevel": "anonymous", "route": "ops/dashboard/api/stock"},
    "ops_dashboard_resubmit": {"type": "httpTrigger", "methods": ["POST"],
                               "authLevel": "anonymous", "route": "ops/dashboard/api/resubmit"},
}


def infrastructure_triggers(triggers):
    return {name: t for name, t in triggers.items() if t["type"] not in DURABLE_TRIGGERS}


def test_infrastructure_triggers_match_the_table(triggers):
    assert metadata_differences(infrastructure_triggers(triggers), EXPECTED) == {}


def test_connections_are_the_shared_identity_based_prefix(triggers):
    connections = {t["connection"] for t in triggers.values() if "connection" in t}
    assert connections == {names.SERVICEBUS_CONNECTION}


def test_durable_triggers_use_the_names_module(triggers):
    constants = {v for k, v in vars(names).items() if k.isupper() and isinstance(v, str)} | {
        activity.name for activity in DECLARED}
    durable = [t for t in triggers.values() if t["type"] in DURABLE_TRIGGERS]
    assert durable
    for trigger in durable:
        assert (trigger.get("orchestration") or trigger.get("activity")) in constants, trigger


def test_the_table_check_reports_a_removed_function(triggers):
    actual = infrastructure_triggers(triggers)
    del actual["supervisor"]
    assert metadata_differences(actual, EXPECTED) == {"supervisor": "missing from the app"}


def test_the_table_check_reports_a_changed_queue(triggers):
    actual = infrastructure_triggers(triggers)
    actual["payment_agent"] = {**actual["payment_agent"], "queueName": "payments"}
    assert set(metadata_differences(actual, EXPECTED)) == {"payment_agent"}


def test_each_client_of_order_clients_gets_one_submission_on_its_own_queue(monkeypatch):
    from devhost.app.loader import import_app
    from tests.infra.checks import REPO, function_metadata

    monkeypatch.setenv("ORDER_CLIENTS", "shop-a, shop-b")
    submissions = {name: t["queueName"] for name, t in function_metadata(import_app(REPO)).items()
                   if name.startswith("submit_order")}
    assert submissions == {"submit_order_shop_a": "orders-shop-a",
                           "submit_order_shop_b": "orders-shop-b"}
    monkeypatch.setenv("ORDER_CLIENTS", "")
    assert not [n for n in function_metadata(import_app(REPO)) if n.startswith("submit_order")]


def test_an_invalid_order_clients_stops_the_app_from_loading_naming_the_setting(monkeypatch):
    import pytest

    from devhost.app.loader import AppLoadError, import_app
    from tests.infra.checks import REPO

    monkeypatch.setenv("ORDER_CLIENTS", "acme,Not_Valid")
    with pytest.raises(AppLoadError, match="ORDER_CLIENTS: client id must be 1 to 20"):
        import_app(REPO)
