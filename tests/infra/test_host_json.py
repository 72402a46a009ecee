"""host.json: valid for the Functions host, documented, and consistent with the retry budget."""

import json
import re
from datetime import timedelta

from orders.budget import max_calls_per_service
from orders.queues import load_queue_limits
from orders.settings import Settings
from tests.infra.checks import QUEUES_JSON, REPO, bicep_app_settings

HOST_JSON = REPO / "host.json"
DEPLOY_DOC = REPO / "docs" / "deploy.md"


def host():
    return json.loads(HOST_JSON.read_text())


def leaves(data, prefix=""):
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from leaves(value, path + ".")
        else:
            yield path


def timespan(text):
    hours, minutes, seconds = text.split(":")
    return timedelta(hours=int(hours), minutes=int(minutes), seconds=float(seconds))


def deployed_settings():
    values = {k: v for k, v in bicep_app_settings().items()
              if k in Settings.model_fields and isinstance(v, str)}
    return Settings.model_validate({**values, "STORE_BACKEND": "sqlite",
                                    "MESSAGING_BACKEND": "local", "DEVHOST_DATA_DIR": "x"})


def test_version_and_extension_bundle():
    data = host()
    assert data["version"] == "2.0"
    assert data["extensionBundle"] == {"id": "Microsoft.Azure.Functions.ExtensionBundle",
                                       "version": "[4.32.0, 5.0.0)"}


def test_default_version_is_the_newest_workflow_version_the_code_registers():
    # A lower defaultVersion makes workers reject (versionFailureStrategy Reject) the
    # attempts of the newest version; a higher one lets them take versions they lack (X6).
    from orders.names import WORKFLOW_VERSIONS

    durable = host()["extensions"]["durableTask"]
    assert durable["defaultVersion"] == f"{max(WORKFLOW_VERSIONS)}.0"
    assert Settings.model_fields["WORKFLOW_VERSION"].default in WORKFLOW_VERSIONS


def test_task_hub_name_is_valid_for_the_azure_storage_provider():
    # Azure Storage provider: 3-45 alphanumeric characters, starting with a letter.
    hub = host()["extensions"]["durableTask"]["hubName"]
    assert re.fullmatch(r"[A-Za-z][A-Za-z0-9]{2,44}", hub)


def test_no_host_retry_policy_multiplies_the_budget():
    # X2: the Functions retry policy ("retry") would re-run failed triggers on top of
    # Service Bus redelivery; the budget in orders/budget.py assumes it is not used.
    assert "retry" not in host()
    assert "retry" not in json.dumps(host()["extensions"]["durableTask"]).lower()


def test_service_bus_trigger_settings():
    sb = host()["extensions"]["serviceBus"]
    assert sb["autoCompleteMessages"] is True
    assert sb["prefetchCount"] == 0
    assert sb["maxConcurrentCalls"] >= 1


def test_one_agent_invocation_fits_in_the_lock_renewal_and_the_timeout():
    # An agent starts no call after CompleteBy (A3), so one delivery lasts at most the
    # deadline plus one call timeout. Past maxAutoLockRenewalDuration the lock would lapse
    # and the request be delivered again while still running; past functionTimeout the host
    # would kill it. Either would spend a delivery of the budget for nothing.
    settings = deployed_settings()
    longest = timedelta(seconds=max(settings.ORDER_DEADLINE_S, settings.COMPENSATION_DEADLINE_S)
                        + settings.AGENT_CALL_TIMEOUT_S)
    data = host()
    renewal = timespan(data["extensions"]["serviceBus"]["maxAutoLockRenewalDuration"])
    assert longest < renewal
    assert longest < timespan(data["functionTimeout"])


def test_lock_renewal_outlasts_every_lock_duration():
    renewal = timespan(host()["extensions"]["serviceBus"]["maxAutoLockRenewalDuration"])
    assert all(q.lock_duration <= renewal for q in load_queue_limits(QUEUES_JSON).values())


def test_every_value_is_documented_in_the_deploy_guide():
    doc = DEPLOY_DOC.read_text()
    undocumented = [key for key in leaves(host()) if key != "//" and f"`{key}`" not in doc]
    assert undocumented == []
    assert "docs/deploy.md" in host()["//"]


def test_deploy_guide_states_the_computed_retry_budget():
    settings = deployed_settings()
    queues = load_queue_limits(QUEUES_JSON)
    calls = max_calls_per_service(settings, queues)
    deliveries = {queues[q].max_delivery_count for q in ("payment-requests", "shipping-requests")}
    # The guide states the budget of the services with an undo (payment, shipping).
    assert len(deliveries) == 1 and calls["payment"] == calls["shipping"]
    stated = (f"{settings.AGENT_MAX_ATTEMPTS} × {deliveries.pop()} × "
              f"({settings.MAX_FAILURES} + {settings.MAX_COMPENSATION_FAILURES}) = "
              f"{calls['payment']}")
    assert stated in DEPLOY_DOC.read_text()
    assert calls["payment"] <= settings.RETRY_BUDGET_CALLS_PER_SERVICE
