"""The app's Service Bus roles let scale-out read queue length, on the narrowest scope.

The Functions scale controller sizes a Service Bus-triggered app from the trigger queue's
length, read through the administration API (queue runtime properties), which needs the
Manage right; with Listen only, target-based scaling reverts to incremental scaling
("Target-based scaling", Service Bus section, Azure Functions docs; the extension's
ServiceBusMetricsProvider reads GetQueueRuntimePropertiesAsync and GetQueueAsync of the
trigger queue). Azure Service Bus Data Owner carries Manage; role assignments can be scoped
to one queue ("Use managed identities with Azure Service Bus": queue, topic or
subscription scope applies to that entity only). So the app gets Data Owner on each trigger
queue and nowhere else, unless appReadsDeadLetterDepth asks for every queue of queues.json.
"""

import re

from orders import names
from tests.infra.bicep_eval import Scope
from tests.infra.checks import INFRA, REPO, Grant, catalog, role_grants, scopes
from tests.infra.conftest import CLIENTS, replace_once

DATA_OWNER = "090c5cfd-751d-490a-894a-3ce6f1109419"
DATA_SENDER = "69a216fc-b8fb-44d8-bc22-1f3c2cd27a39"
DATA_RECEIVER = "4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0"
QUEUE = "Microsoft.ServiceBus/namespaces/queues"
NAMESPACE = "Microsoft.ServiceBus/namespaces"
APP = "app-identity"
DEPLOY_MD = REPO / "docs" / "deploy.md"


SUBMIT_QUEUES = {f"orders-{c['clientId'].lower()}" for c in CLIENTS}
"""The per-client submit queues of the checks' clients (the function metadata's too)."""


def trigger_queues(triggers):
    return {t["queueName"] for t in triggers.values() if t["type"] == "serviceBusTrigger"}


def app_grants(infra=INFRA, **params):
    """The app identity's Service Bus grants, with main.bicep's parameters flowing in
    (``clients``: the checks' clients unless given)."""
    params.setdefault("clients", CLIENTS)
    module = next(s for s in scopes(infra, params) if s.path.name == "servicebus.bicep")
    scope = Scope(module.path, {**module.params, "appPrincipalId": APP})
    return {g for g in role_grants(scope) if g.principal == APP}


def owned_queues(grants):
    return {g.scope_name for g in grants if g.role == DATA_OWNER and g.scope_type == QUEUE}


def test_the_app_triggers_on_its_queues_and_each_clients_submit_queue(triggers):
    # One request queue per service of infra/services.json, payment and shipping among them.
    requests = set(names.REQUEST_QUEUES.values())
    assert {"payment-requests", "shipping-requests"} <= requests
    assert trigger_queues(triggers) == {"orders", "agent-replies", *requests, *SUBMIT_QUEUES}


def test_the_app_owns_each_trigger_queue_and_nothing_else(triggers):
    grants = app_grants()
    assert owned_queues(grants) == trigger_queues(triggers)
    assert not any(g.role == DATA_OWNER and g.scope_type == NAMESPACE for g in grants)


def test_the_app_still_sends_and_receives_on_the_namespace():
    grants = app_grants()
    assert {(g.role, g.scope_type) for g in grants if g.role != DATA_OWNER} == {
        (DATA_SENDER, NAMESPACE), (DATA_RECEIVER, NAMESPACE)}


def test_reading_every_dead_letter_depth_owns_every_queue_never_the_namespace():
    grants = app_grants(appReadsDeadLetterDepth=True)
    assert owned_queues(grants) == set(catalog()["queues"]) | SUBMIT_QUEUES
    assert not any(g.role == DATA_OWNER and g.scope_type == NAMESPACE for g in grants)
    assert owned_queues(app_grants(appReadsDeadLetterDepth=True, clients=[])) == \
        set(catalog()["queues"])


def test_the_bicep_trigger_list_is_the_function_metadata(triggers):
    scope = Scope(INFRA / "app" / "servicebus.bicep")
    assert set(scope.var("triggerQueues")) == trigger_queues(triggers) - SUBMIT_QUEUES


# ---------------------------------------------------------------- each client's rights
def client_grants(principal, infra=INFRA):
    """Every role assignment of the deployment (all modules) naming ``principal``."""
    found = set()
    for scope in scopes(infra, {"clients": CLIENTS}):
        found |= {g for g in role_grants(scope) if g.principal == principal}
    return found


def mentions(value, needle):
    if isinstance(value, dict):
        return any(mentions(v, needle) for v in value.values())
    if isinstance(value, list | tuple):
        return any(mentions(v, needle) for v in value)
    return value == needle


def test_each_client_sends_only_to_its_own_queue_and_reads_only_its_own_replies():
    for client in CLIENTS:
        name = client["clientId"].lower()
        assert client_grants(client["principalId"]) == {
            Grant(client["principalId"], DATA_SENDER, QUEUE, f"orders-{name}"),
            Grant(client["principalId"], DATA_RECEIVER, QUEUE, f"replies-{name}")}, name
        # Nothing else in the deployment names the client: no Cosmos DB role, no other role.
        resources = [i for scope in scopes(INFRA, {"clients": CLIENTS}) for i in scope.instances()
                     if mentions(i.body, client["principalId"])]
        assert len(resources) == 2, [r.symbol for r in resources]


def test_no_client_may_send_to_the_shared_orders_queue():
    senders = {g for c in CLIENTS for g in client_grants(c["principalId"])
               if g.role == DATA_SENDER}
    assert {g.scope_name for g in senders} == SUBMIT_QUEUES


# ---------------------------------------------------------------- the checks can fail
def test_the_check_sees_a_namespace_wide_owner(infra_copy):
    replace_once(infra_copy / "app" / "servicebus.bicep", "  scope: appOwnedQueueRefs[i]\n",
                 "  scope: namespace\n")
    grants = app_grants(infra_copy)
    assert any(g.role == DATA_OWNER and g.scope_type == NAMESPACE for g in grants)
    assert owned_queues(grants) == SUBMIT_QUEUES


def test_the_check_sees_a_missing_trigger_queue(infra_copy, triggers):
    replace_once(infra_copy / "app" / "servicebus.bicep", "  'agent-replies'\n", "")
    assert trigger_queues(triggers) - owned_queues(app_grants(infra_copy)) == {"agent-replies"}


def test_the_check_sees_a_client_sending_to_the_shared_queue(infra_copy):
    text = (infra_copy / "app" / "servicebus.bicep").read_text()
    block = text.split("resource clientSubmitAccess", 1)[1].split("\n}]", 1)[0]
    replace_once(infra_copy / "app" / "servicebus.bicep", block,
                 block.replace("scope: submitQueues[i]", "scope: namespace"))
    grants = client_grants(CLIENTS[0]["principalId"], infra_copy)
    assert {(g.role, g.scope_type) for g in grants} == {(DATA_SENDER, NAMESPACE),
                                                        (DATA_RECEIVER, QUEUE)}


# ---------------------------------------------------------------- the docs say the same
def doc_role_rows():
    """(role cell, scope cell) of the app identity's rows in deploy.md's role table."""
    rows = []
    for line in DEPLOY_MD.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] == "App identity":
            rows.append((cells[1], cells[2]))
    return rows


def test_deploy_md_names_the_owned_queues_as_the_bicep_does(triggers):
    owner_rows = [scope for role, scope in doc_role_rows() if "Service Bus Data Owner" in role]
    assert len(owner_rows) == 2, owner_rows
    always, optional = owner_rows
    assert set(re.findall(r"`([a-z-]+)`", always)) == trigger_queues(triggers) - SUBMIT_QUEUES
    assert "`orders-<clientId>`" in always
    assert always.startswith("queues ") and optional.startswith("also queue ")
    assert set(re.findall(r"`([a-z-]+)`", optional)) >= \
        set(catalog()["queues"]) - trigger_queues(triggers)
