"""The host takes the queues of the app it runs from the app's folder, never its own install."""

import json
import shutil
from datetime import timedelta
from pathlib import Path

import pytest

from devhost.app.load_errors import AppLoadError
from devhost.triggers.queue_catalog import SERVICE_BUS_DEFAULTS, app_queue_catalog

REPO_QUEUES = Path(__file__).resolve().parents[2] / "infra" / "queues.json"


def test_an_app_laid_out_as_this_repository_brings_its_infra_queues_json(tmp_path):
    (tmp_path / "infra").mkdir()
    shutil.copy(REPO_QUEUES, tmp_path / "infra" / "queues.json")
    catalog, from_file = app_queue_catalog(tmp_path, ["ignored"], environ={})
    assert from_file
    assert catalog.resolve("payment-requests").lock_duration == timedelta(minutes=1)
    assert catalog.resolve("ignored") is None


def test_the_setting_names_another_file_relative_to_the_app(tmp_path):
    data = json.loads(REPO_QUEUES.read_text())
    data["queues"] = {"work": {"maxDeliveryCount": 3}}
    (tmp_path / "bus.json").write_text(json.dumps(data))
    catalog, from_file = app_queue_catalog(tmp_path, [], environ={"DEVHOST_QUEUES_FILE":
                                                                   "bus.json"})
    assert from_file and catalog.resolve("work").max_delivery_count == 3
    with pytest.raises(AppLoadError, match="DEVHOST_QUEUES_FILE: no file 'nope.json'"):
        app_queue_catalog(tmp_path, [], environ={"DEVHOST_QUEUES_FILE": "nope.json"})


def test_a_broken_catalogue_is_a_start_up_error_naming_the_field(tmp_path):
    (tmp_path / "infra").mkdir()
    data = json.loads(REPO_QUEUES.read_text())
    data["queues"]["orders"] = {"maxDeliveryCount": "five"}
    (tmp_path / "infra" / "queues.json").write_text(json.dumps(data))
    with pytest.raises(AppLoadError, match="queues.orders.maxDeliveryCount: must be an integer"):
        app_queue_catalog(tmp_path, [], environ={})


def test_without_a_catalogue_the_trigger_queues_exist_with_service_bus_defaults(tmp_path):
    catalog, from_file = app_queue_catalog(tmp_path, ["Work-Items"], environ={})
    assert not from_file
    assert catalog.resolve("work-items") == SERVICE_BUS_DEFAULTS
    assert SERVICE_BUS_DEFAULTS.lock_duration == timedelta(minutes=1)
    assert SERVICE_BUS_DEFAULTS.max_delivery_count == 10
    assert catalog.resolve("other") is None
    assert catalog.resolve("replies-shop-a") is None  # no per-client queues either
