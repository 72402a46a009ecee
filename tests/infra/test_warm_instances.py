"""Flex Consumption keeps warm every scale group an order's CompleteBy waits on.

Flex Consumption scales per function group: the Durable Functions triggers (orchestration,
activity, entity) form the group ``durable``, and every other non-HTTP trigger is a group of
its own, ``function:<name>``; ``alwaysReady`` with a group's name keeps instances
provisioned for it (Learn: "Flex Consumption plan hosting", always ready instances; "Create
and manage function apps in the Flex Consumption plan"). A cold start would otherwise be
spent from an attempt's CompleteBy (V5): the first replay waits on ``durable``, each agent
request on ``function:<service>_agent`` and each reply on ``function:route_agent_reply``.
"""

import pytest

from tests.infra.checks import INFRA, scopes
from tests.infra.conftest import replace_once

DEADLINE_GROUPS = ["function:payment_agent", "function:shipping_agent",
                   "function:route_agent_reply"]


def scale(infra=INFRA, **params):
    module = next(s for s in scopes(infra, params) if s.path.name == "function-app.bicep")
    (site,) = module.instances("Microsoft.Web/sites")
    return site.body["properties"]["functionAppConfig"]["scaleAndConcurrency"]


def ready(infra=INFRA, **params):
    return {g["name"]: g["instanceCount"] for g in scale(infra, **params)["alwaysReady"]}


def test_the_groups_are_the_triggers_the_deadline_waits_on(triggers):
    # Each group is named after a function the app registers, with a Service Bus trigger.
    for group in DEADLINE_GROUPS:
        name = group.removeprefix("function:")
        assert triggers[name]["type"] == "serviceBusTrigger", name


def test_one_instance_of_each_deadline_group_is_always_ready_by_default():
    assert ready() == {"durable": 1, **dict.fromkeys(DEADLINE_GROUPS, 1)}


@pytest.mark.parametrize(("durable", "deadline", "expected"), [
    (2, 1, {"durable": 2, **dict.fromkeys(DEADLINE_GROUPS, 1)}),
    (1, 3, {"durable": 1, **dict.fromkeys(DEADLINE_GROUPS, 3)}),
    (0, 1, dict.fromkeys(DEADLINE_GROUPS, 1)),
    (1, 0, {"durable": 1}),
    (0, 0, {}),
])
def test_the_counts_follow_the_parameters_and_zero_turns_them_off(durable, deadline, expected):
    assert ready(durableAlwaysReadyCount=durable, deadlineAlwaysReadyCount=deadline) == expected


def test_each_group_fits_under_the_per_group_scale_out_limit():
    config = scale()
    assert config["maximumInstanceCount"] >= 40  # the floor every Learn page accepts
    assert all(g["instanceCount"] <= config["maximumInstanceCount"]
               for g in config["alwaysReady"])


def test_a_new_service_gets_its_agent_group(infra_copy):
    import json

    path = infra_copy / "services.json"
    data = json.loads(path.read_text())
    data["services"]["tax"] = {**data["services"]["payment"], "requestQueue": "tax-requests",
                               "urlSetting": "TAX_API_URL"}
    path.write_text(json.dumps(data))
    assert "function:tax_agent" in ready(infra_copy)


def test_the_check_sees_a_misnamed_group(infra_copy):
    replace_once(infra_copy / "app" / "function-app.bicep", "name: 'durable'",
                 "name: 'orchestration'")
    assert ready(infra_copy) != ready()
