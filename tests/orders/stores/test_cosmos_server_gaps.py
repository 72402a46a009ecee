"""Pin the known gaps of the local Cosmos DB server (@vercel/cosmosdb-server 1.0.1).

The Cosmos adapter is written for real Cosmos DB and only avoids what this server cannot
do (see orders/stores/cosmos_state.py). If one of these tests starts failing after an
upgrade of the server, the gap is gone: drop its workaround and this test.
"""

import uuid

import pytest
from azure.cosmos.exceptions import CosmosHttpResponseError, CosmosResourceNotFoundError

from orders.stores._cosmos import container, open_client, open_database
from tests.support.cosmos_server import EMULATOR_KEY

pytestmark = pytest.mark.cosmos


@pytest.fixture
def items(cosmos_endpoint, cosmos_database):
    with open_client(cosmos_endpoint, EMULATOR_KEY, connection_verify=False) as client:
        db = open_database(client, cosmos_database)
        name = f"gaps-{uuid.uuid4().hex[:12]}"
        box = container(db, name, create_if_missing=True)
        for i, state in enumerate(["Pending", "Pending", "Processing"]):
            box.create_item({"id": f"O{i}", "orderId": f"O{i}", "processState": state})
        yield box
        db.delete_container(name)


def test_missing_item_reads_as_404_only_with_the_repository_patch(items):
    # Unpatched 1.0.1 answers 500 (TypeError on the missing document); npm ci applies
    # tests/orders/stores/patches/@vercel+cosmosdb-server+1.0.1.patch through patch-package.
    with pytest.raises(CosmosResourceNotFoundError):
        items.read_item("NOPE", partition_key="NOPE")


def test_query_ignores_the_partition_key_argument(items):
    rows = list(
        items.query_items(
            "SELECT * FROM c WHERE c.orderId != @pk",
            parameters=[{"name": "@pk", "value": "O0"}],
            partition_key="O0",
        )
    )
    # Real Cosmos DB would answer nothing: the query is scoped to partition O0.
    assert sorted(r["id"] for r in rows) == ["O1", "O2"]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT c.processState, COUNT(1) AS n FROM c GROUP BY c.processState",
        "SELECT * FROM c OFFSET 1 LIMIT 1",
        "SELECT DISTINCT c.processState FROM c",
    ],
)
def test_group_by_offset_limit_and_distinct_are_syntax_errors(items, sql):
    with pytest.raises(CosmosHttpResponseError) as info:
        list(items.query_items(sql, enable_cross_partition_query=True))
    assert info.value.status_code == 400


def test_count_per_state_works(items):
    counts = list(
        items.query_items(
            "SELECT VALUE COUNT(1) FROM c WHERE c.processState = @s",
            parameters=[{"name": "@s", "value": "Pending"}],
            enable_cross_partition_query=True,
        )
    )
    assert counts == [2]


def test_transactional_batch_is_refused_and_changes_nothing(items):
    with pytest.raises(CosmosHttpResponseError):
        items.execute_item_batch(
            [("upsert", ({"id": "O0", "orderId": "O0", "processState": "Error"},))],
            partition_key="O0",
        )
    assert items.read_item("O0", partition_key="O0")["processState"] == "Pending"


def test_request_charge_is_a_constant_1_per_request(items):
    charges = []
    items.read_item("O0", partition_key="O0", response_hook=lambda h, _: charges.append(h))
    list(
        items.query_items(
            "SELECT * FROM c",
            enable_cross_partition_query=True,
            response_hook=lambda h, _: charges.append(h),
        )
    )
    assert [h["x-ms-request-charge"] for h in charges] == ["1", "1"]
