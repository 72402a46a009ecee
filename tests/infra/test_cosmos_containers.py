"""The Cosmos DB containers match the stores: names, partition key, indexes for the queries."""

import inspect

import pytest

from orders.settings import Settings
from orders.stores import (
    _cosmos,
    cosmos_compensation,
    cosmos_inventory,
    cosmos_slots,
    cosmos_state,
)
from orders.stores.factory import create_stores
from tests.infra.checks import (
    COSMOS_CONTAINER,
    INFRA,
    bicep_app_settings,
    container_indexing,
    scopes,
    unindexed_query_fields,
)
from tests.infra.conftest import remove_line

QUERYING_MODULES = [(cosmos_state, "states"), (cosmos_slots, "states"),
                    (cosmos_compensation, "compensation"), (cosmos_inventory, "inventory")]
PARTITION_KEYS = {"inventory": cosmos_inventory.PARTITION_KEY_PATH}
"""Containers partitioned on another key than ``/orderId``: the adapter's own constant."""


def bicep_containers(infra=INFRA):
    return {c["properties"]["resource"]["id"]: c["properties"]["resource"]
            for scope in scopes(infra, None)
            for c in scope.resource_instances(COSMOS_CONTAINER)}


def test_containers_are_the_ones_the_factory_opens():
    defaults = {name: p.default for name, p in inspect.signature(create_stores).parameters.items()
                if name.endswith("_container")}
    assert set(bicep_containers()) == set(defaults.values())


def test_every_container_is_partitioned_as_its_adapter_reads_it():
    for name, container in bicep_containers().items():
        expected = PARTITION_KEYS.get(name, _cosmos.PARTITION_KEY_PATH)
        assert container["partitionKey"]["paths"] == [expected], name


def test_inventory_is_partitioned_on_sku_and_indexes_nothing():
    assert bicep_containers()["inventory"]["partitionKey"]["paths"] == ["/sku"]
    policy = container_indexing(INFRA, "inventory")
    assert policy["includedPaths"] == [] and policy["excludedPaths"] == [{"path": "/*"}]


def test_database_is_the_setting():
    assert bicep_app_settings()["COSMOS_DATABASE"] == Settings.model_fields[
        "COSMOS_DATABASE"].default


def test_compensation_log_has_time_to_live_on():
    assert bicep_containers()["compensation"]["defaultTtl"] == -1


@pytest.mark.parametrize(("module", "container"), QUERYING_MODULES,
                         ids=[c for _, c in QUERYING_MODULES])
def test_every_queried_field_is_indexed(module, container):
    assert unindexed_query_fields(module.__file__, INFRA, container) == set()


def test_supervisor_scan_and_newest_first_lists_have_their_composite_indexes():
    composite = container_indexing(INFRA, "states")["compositeIndexes"]
    assert [[(p["path"], p["order"]) for p in index] for index in composite] == [
        [("/processState", "ascending"), ("/completeBy", "ascending")],
        [("/processState", "ascending"), ("/updatedAt", "descending")]]


def test_order_documents_are_not_indexed():
    policy = container_indexing(INFRA, "orders")
    assert policy["includedPaths"] == [] and policy["excludedPaths"] == [{"path": "/*"}]


def test_index_check_reports_a_removed_path(infra_copy):
    remove_line(infra_copy / "app" / "cosmos.bicep", "path: '/notBefore/?'")
    # the now empty { } entry stays valid Bicep and indexes no path
    assert unindexed_query_fields(cosmos_state.__file__, infra_copy, "states") == {"notBefore"}
