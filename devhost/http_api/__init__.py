"""The host's HTTP surface: the Durable HTTP API (docs/fidelity.md) and the app's HTTP triggers."""

from azurekit.instance_ids import new_instance_id, validate_instance_id
from devhost.http_api.app import create_http_app
from devhost.http_api.history_view import history_events_json, history_table
from devhost.http_api.urls import client_binding_json, rpc_base_url

__all__ = [
    "client_binding_json",
    "create_http_app",
    "history_events_json",
    "history_table",
    "new_instance_id",
    "rpc_base_url",
    "validate_instance_id",
]
