import io
import json

import pytest

from orders.observability import telemetry
from orders.settings import Settings


@pytest.fixture
def fresh(monkeypatch):
    installed = []
    monkeypatch.setattr(telemetry, "_configured", None)
    monkeypatch.setattr(telemetry.metrics, "set_meter_provider", installed.append)
    return installed


def settings(tmp_path, **values):
    return Settings(DEVHOST_DATA_DIR=str(tmp_path), **values)


def test_without_connection_string_metrics_go_to_the_data_folder_once(tmp_path, fresh):
    s = settings(tmp_path, APPLICATIONINSIGHTS_CONNECTION_STRING="")
    assert telemetry.configure_telemetry(s) == "file"
    assert telemetry.configure_telemetry(s) == "file"
    assert len(fresh) == 1


def test_local_metrics_are_appended_to_the_data_folder_not_printed(tmp_path, fresh, capfd):
    s = settings(tmp_path, METRICS_EXPORT_INTERVAL_S=3600)
    telemetry.configure_telemetry(s)
    (provider,) = fresh
    provider.get_meter("orders").create_counter("orders.submissions").add(3)
    provider.force_flush()
    provider.get_meter("orders").create_counter("orders.submissions").add(1)
    provider.force_flush()
    provider.shutdown()
    lines = (tmp_path / telemetry.METRICS_FILE).read_text().splitlines()
    assert len(lines) >= 2
    last = json.loads(lines[-1])["resource_metrics"][0]["scope_metrics"][0]["metrics"][0]
    assert last["name"] == "orders.submissions"
    assert last["data"]["data_points"][0]["value"] == 4
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_without_a_data_folder_metrics_go_to_the_console(fresh):
    s = Settings(STORE_BACKEND="cosmos", COSMOS_ENDPOINT="https://a.documents.azure.com:443/",
                 MESSAGING_BACKEND="servicebus",
                 SERVICEBUS__fullyQualifiedNamespace="a.servicebus.windows.net",
                 DEVHOST_DATA_DIR=None, APPLICATIONINSIGHTS_CONNECTION_STRING=None)
    assert telemetry.configure_telemetry(s) == "console"


def test_with_connection_string_azure_monitor_is_configured(tmp_path, fresh, monkeypatch):
    import azure.monitor.opentelemetry as distro

    calls = []
    monkeypatch.setattr(distro, "configure_azure_monitor", lambda **kw: calls.append(kw))
    s = settings(tmp_path, APPLICATIONINSIGHTS_CONNECTION_STRING="InstrumentationKey=k",
                 APPLICATIONINSIGHTS_AUTHENTICATION_STRING="Authorization=AAD;ClientId=abc")
    assert telemetry.configure_telemetry(s) == "azuremonitor"
    (kwargs,) = calls
    assert kwargs["connection_string"] == "InstrumentationKey=k"
    assert kwargs["logger_name"] == "orders"
    assert type(kwargs["credential"]).__name__ == "ManagedIdentityCredential"
    assert fresh == []


def test_malformed_authentication_string_is_named(tmp_path):
    s = settings(tmp_path, APPLICATIONINSIGHTS_AUTHENTICATION_STRING="Bearer xyz")
    with pytest.raises(ValueError, match="APPLICATIONINSIGHTS_AUTHENTICATION_STRING"):
        telemetry.entra_credential(s)
    assert telemetry.entra_credential(settings(tmp_path)) == {}


def test_console_provider_prints_each_export_as_one_json_line():
    out = io.StringIO()
    provider = telemetry.console_meter_provider(3600, out=out)
    provider.get_meter("orders").create_counter("orders.submissions").add(2)
    provider.force_flush()
    provider.shutdown()
    lines = out.getvalue().splitlines()
    assert len(lines) >= 1
    first = json.loads(lines[0])
    (metric,) = first["resource_metrics"][0]["scope_metrics"][0]["metrics"]
    assert metric["name"] == "orders.submissions"
    assert metric["data"]["data_points"][0]["value"] == 2
