"""Flex Consumption keeps a durable instance warm: orchestrations never wait for a cold start.

Flex Consumption scales per function group; the Durable Functions triggers (orchestration,
activity, entity) form the group ``durable``, and ``alwaysReady`` with that name keeps
instances provisioned for it (Learn: "Flex Consumption plan hosting", always ready
instances; "Create and manage function apps in the Flex Consumption plan"). A cold start
would otherwise be spent from an attempt's CompleteBy (V5).
"""

from tests.infra.checks import INFRA, scopes
from tests.infra.conftest import replace_once


def scale(infra=INFRA, **params):
    module = next(s for s in scopes(infra, params) if s.path.name == "function-app.bicep")
    (site,) = module.instances("Microsoft.Web/sites")
    return site.body["properties"]["functionAppConfig"]["scaleAndConcurrency"]


def test_one_durable_instance_is_always_ready_by_default():
    assert scale()["alwaysReady"] == [{"name": "durable", "instanceCount": 1}]


def test_the_count_follows_the_parameter_and_zero_turns_it_off():
    assert scale(durableAlwaysReadyCount=2)["alwaysReady"] == [
        {"name": "durable", "instanceCount": 2}]
    assert scale(durableAlwaysReadyCount=0)["alwaysReady"] == []


def test_always_ready_instances_fit_under_the_scale_out_limit():
    config = scale()
    assert sum(g["instanceCount"] for g in config["alwaysReady"]) <= \
        config["maximumInstanceCount"]


def test_the_check_sees_a_misnamed_group(infra_copy):
    replace_once(infra_copy / "app" / "function-app.bicep", "name: 'durable'",
                 "name: 'orchestration'")
    assert scale(infra_copy)["alwaysReady"] != scale()["alwaysReady"]
