"""Fidelity forms that need a whole host: the entity list route, queues that exist, hub names.

Sources: azure-functions-durable-extension ``HttpApiHandler.cs`` (entity list),
``Options/AzureStorageOptions.cs`` (task hub names), and the Bicep of this repository
(``infra/main.bicep``: only the clients of ``clients`` get queues).
"""

import json
from pathlib import Path

import httpx
import pytest

from devhost.app.load_errors import AppLoadError
from devhost.run.host import LocalHost
from devhost.run.runtime import build_host, declared_clients
from sqlitebus import MessagingEntityNotFoundError, open_engine
from tests.devhost.apps import MY_APP, write_app

ENTITY_APP = Path(__file__).parent / "entity_app"
SAMPLE_APP = Path(__file__).parent / "sample_app"


def test_get_entities_by_name_lists_them_as_the_extension(tmp_path, clock):
    # HandleListEntitiesRequestAsync: an entity route without a key lists the entities of
    # that name (DurableEntityStatus: entityId, lastOperationTime, state with fetchState).
    host = LocalHost(ENTITY_APP, tmp_path / "data", clock=clock)
    host.start_http()
    api = host.base_url + "/runtime/webhooks/durabletask/entities"
    try:
        with httpx.Client() as http:
            for key in ("a", "b", "c"):
                assert http.post(f"{api}/Counter/{key}?op=add",
                                 json=json.dumps(2)).status_code == 202
            host.run_until_idle()
            listed = http.get(f"{api}/Counter")
            assert listed.status_code == 200
            assert [e["entityId"] for e in listed.json()] == [
                {"name": "counter", "key": k} for k in ("a", "b", "c")]
            assert {e["state"] for e in listed.json()} == {None}
            page = http.get(f"{api}/counter", params={"fetchState": "true", "top": "2"})
            assert [e["state"] for e in page.json()] == [2, 2]
            token = page.headers["x-ms-continuation-token"]
            rest = http.get(f"{api}/counter", params={"fetchState": "true", "top": "2"},
                            headers={"x-ms-continuation-token": token})
            assert [e["entityId"]["key"] for e in rest.json()] == ["c"]
            assert "x-ms-continuation-token" not in rest.headers
            assert http.get(f"{api}/nobody").json() == []
    finally:
        host.stop()


def test_only_the_configured_clients_have_queues_as_a_deployment_creates_them(
        tmp_path, clock, monkeypatch):
    # Bicep creates orders-<clientId> and replies-<clientId> for the clients of its
    # clients parameter (ORDER_CLIENTS): a send to any other client's queue fails with
    # entity not found instead of waiting in a queue nobody reads.
    monkeypatch.setenv("ORDER_CLIENTS", " Shop-A, shop-b ,")
    assert declared_clients() == ["shop-a", "shop-b"]
    host = build_host(SAMPLE_APP, tmp_path / "data", clock=clock, serve_http=False)
    try:
        assert host.engine.send("orders-shop-a", b"{}")
        assert host.engine.send("replies-shop-b", b"{}")
        with pytest.raises(MessagingEntityNotFoundError, match="declared clients"):
            host.engine.send("orders-stranger", b"{}")
        # Any other opener of the data folder sees the same queues (the client CLI, the
        # app's own senders).
        with open_engine(tmp_path / "data", clock=clock) as other:
            with pytest.raises(MessagingEntityNotFoundError):
                other.send("replies-stranger", b"{}")
            assert other.send("orders-shop-b", b"{}")
            assert other.send("operator-alerts", b"{}")  # declared in infra/queues.json
    finally:
        host.stop()


@pytest.mark.parametrize("name", ["ab", "1Hub", "My-Hub", "x" * 51])
def test_a_task_hub_name_azure_storage_refuses_stops_the_start(tmp_path, clock, name):
    app = write_app(tmp_path / "app", {"function_app.py": MY_APP}, host_json={
        "version": "2.0", "extensions": {"durableTask": {"hubName": name}}})
    with pytest.raises(AppLoadError, match=f"Task hub name '{name}' should contain only "
                                           "alphanumeric characters, start with a letter"):
        LocalHost(app, tmp_path / "data", clock=clock, serve_http=False)
