"""Every queue the code uses is declared in infra/queues.json and created by the Bicep."""

import json
import re

import pytest

from azurekit.queues import load_queue_catalog
from orders import names
from tests.infra.bicep_eval import Scope, Unsupported
from tests.infra.checks import (
    INFRA,
    QUEUES_JSON,
    bicep_queues,
    catalog,
    catalog_queues_missing_from_bicep,
    code_queues,
    merged_properties,
    queue_property_mismatches,
    queues_missing_from_catalog,
)
from tests.infra.conftest import CLIENTS, replace_once

CLIENT = CLIENTS[0]


def test_code_queues_are_found(triggers):
    queues = code_queues(names, triggers)
    assert {"orders", "payment-requests", "shipping-requests", "agent-replies",
            "operator-alerts"} <= queues


def test_every_code_queue_is_declared(triggers):
    assert queues_missing_from_catalog(code_queues(names, triggers)) == set()


def test_every_declared_queue_is_created_by_the_bicep():
    assert catalog_queues_missing_from_bicep() == set()


def test_bicep_creates_no_undeclared_queue():
    assert set(bicep_queues()) == set(catalog()["queues"])


def test_bicep_queue_properties_are_the_merged_catalog():
    assert queue_property_mismatches() == set()
    assert bicep_queues()["payment-requests"]["lockDuration"] == "PT1M"


def test_each_client_gets_its_reply_queue_named_like_the_local_host_does():
    expected = load_queue_catalog(QUEUES_JSON).reply_queue_name(CLIENT["clientId"])
    queues = bicep_queues(params={"clients": [CLIENT]})
    assert expected == "replies-acme-1"
    assert queues[expected] == merged_properties(QUEUES_JSON, None)
    assert queue_property_mismatches(params={"clients": [CLIENT]}) == set()


def test_each_client_gets_its_submit_queue_named_like_the_app_and_the_local_host_do(triggers):
    local = load_queue_catalog(QUEUES_JSON)
    queues = bicep_queues(params={"clients": CLIENTS})
    created = {q for q in queues if q.startswith("orders-")}
    assert created == {local.submit_queue_name(c["clientId"]) for c in CLIENTS} == \
        {"orders-acme-1", "orders-globex"}
    assert created == {t["queueName"] for name, t in triggers.items()
                       if name.startswith("submit_order_")}
    assert queues["orders-globex"] == merged_properties(QUEUES_JSON, None, "clientSubmitQueues")
    assert set(queues) - created - {f"replies-{c['clientId'].lower()}" for c in CLIENTS} == \
        set(catalog()["queues"])


def test_role_scoped_queue_names_are_the_code_names():
    scope = Scope(INFRA / "app" / "servicebus.bicep")
    assert scope.var("submissionQueue") == names.ORDERS_QUEUE
    assert scope.var("operatorAlertsQueue") == names.OPERATOR_ALERTS_QUEUE


def test_client_roles_are_scoped_to_queues_not_the_namespace():
    text = (INFRA / "app" / "servicebus.bicep").read_text()
    blocks = dict(re.findall(r"resource (client\w+) [^\n]*\n(.*?)\n}\]", text, flags=re.S))
    assert set(blocks) == {"clientReplyAccess", "clientSubmitAccess"}
    assert "scope: replyQueues[i]" in blocks["clientReplyAccess"]
    assert "scope: submitQueues[i]" in blocks["clientSubmitAccess"]


# ---------------------------------------------------------------- the checks can fail
def test_catalog_check_reports_a_removed_queue(triggers, tmp_path):
    data = catalog()
    del data["queues"]["agent-replies"]
    path = tmp_path / "queues.json"
    path.write_text(json.dumps(data))
    assert queues_missing_from_catalog(code_queues(names, triggers), path) == {"agent-replies"}


def test_bicep_check_reports_a_queue_the_bicep_does_not_create(infra_copy):
    # The Bicep reads a stale copy of the catalog that lacks one queue.
    stale = catalog(infra_copy / "queues.json")
    del stale["queues"]["operator-alerts"]
    (infra_copy / "queues-stale.json").write_text(json.dumps(stale))
    replace_once(infra_copy / "app" / "servicebus.bicep", "'../queues.json'",
                 "'../queues-stale.json'")
    assert catalog_queues_missing_from_bicep(infra_copy / "queues.json", infra_copy) == \
        {"operator-alerts"}


def test_property_check_reports_queues_that_lose_their_overrides(infra_copy):
    replace_once(infra_copy / "app" / "servicebus.bicep",
                 "properties: union(queueFile.defaults, queue.value)",
                 "properties: queueFile.defaults")
    declared = json.loads((infra_copy / "queues.json").read_text())["queues"]
    overridden = {name for name, overrides in declared.items() if overrides}
    assert {"payment-requests", "shipping-requests", "agent-replies"} <= overridden
    assert queue_property_mismatches(infra_copy / "queues.json", infra_copy) == overridden


def test_a_queue_loop_the_checks_cannot_evaluate_fails_loudly(infra_copy):
    replace_once(infra_copy / "app" / "servicebus.bicep", "items(queueFile.queues)",
                 "filter(items(queueFile.queues), q => q.key != 'operator-alerts')")
    with pytest.raises(Unsupported, match="filter"):
        catalog_queues_missing_from_bicep(infra_copy / "queues.json", infra_copy)
