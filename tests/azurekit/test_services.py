"""The service catalogue: what infra/services.json declares, and what it refuses."""

import copy
import importlib
import json

import pytest

from azurekit.queues import load_queue_catalog
from azurekit.services import (
    DEFAULT_SERVICES_FILE,
    ServiceCatalogueError,
    UnknownServiceError,
    catalogue,
    load_services,
    parse_services,
)

RAW = json.loads(DEFAULT_SERVICES_FILE.read_text(encoding="utf-8"))


def changed(edit):
    data = copy.deepcopy(RAW)
    edit(data)
    return data


def test_the_catalogue_declares_payment_and_shipping_with_their_undos():
    services = catalogue()
    assert services.service("payment").request_queue == "payment-requests"
    assert services.service("shipping").url_setting == "SHIPPING_API_URL"
    assert services.undo_of("charge") == "refund"
    assert services.undo_of("ship") == "cancel_shipment"
    assert services.undoes("cancel_shipment") == "ship"
    assert services.service("payment").forward_operations == ("charge",)
    assert services.service_of_queue("Shipping-Requests") == "shipping"


def test_every_request_queue_is_declared_in_queues_json():
    queues = load_queue_catalog().queues
    assert all(s.request_queue in queues for s in catalogue().services.values())


def test_unknown_service_and_operation_are_errors_naming_them():
    with pytest.raises(UnknownServiceError, match="service: 'telepathy' is not a service"):
        catalogue().service("telepathy")
    with pytest.raises(UnknownServiceError, match="payment: operation: 'ship' is not"):
        catalogue().operation("payment", "ship")
    with pytest.raises(UnknownServiceError, match="'guess' is not an operation of any"):
        catalogue().undo_of("guess")


def test_an_undo_naming_no_operation_of_the_service_is_refused():
    data = changed(lambda d: d["services"]["payment"]["operations"]["charge"].update(
        undo="cancel_shipment"))
    with pytest.raises(ServiceCatalogueError, match="charge.undo: 'cancel_shipment' is not"):
        parse_services(data)


def test_an_operation_declared_by_two_services_is_refused():
    data = changed(lambda d: d["services"]["shipping"]["operations"].update(
        charge={"path": "/x", "undo": None}))
    with pytest.raises(ServiceCatalogueError, match=r"\['charge'\] declared by more than one"):
        parse_services(data)


def test_a_shared_url_setting_or_unknown_key_is_refused():
    shared = changed(lambda d: d["services"]["shipping"].update(urlSetting="PAYMENT_API_URL"))
    with pytest.raises(ServiceCatalogueError, match="url_setting: \\['PAYMENT_API_URL'\\]"):
        parse_services(shared)
    typo = changed(lambda d: d["services"]["payment"].update(requestQeue="x"))
    with pytest.raises(ServiceCatalogueError, match="services.payment.requestQeue"):
        parse_services(typo)


def test_a_missing_file_names_it(tmp_path):
    with pytest.raises(ServiceCatalogueError, match="nope.json: cannot read"):
        load_services(tmp_path / "nope.json")


@pytest.mark.parametrize(("module", "constant", "load", "error"), [
    ("azurekit.services", "DEFAULT_SERVICES_FILE", "load_services", "ServiceCatalogueError"),
    ("azurekit.queues", "DEFAULT_QUEUES_FILE", "load_queue_catalog", "QueuePropertiesError")])
def test_an_install_without_the_catalogue_says_to_pass_the_apps_file(
        tmp_path, monkeypatch, module, constant, load, error):
    mod = importlib.import_module(module)
    name = getattr(mod, constant).name
    monkeypatch.setattr(mod, constant, tmp_path / "infra" / name)  # as in a wheel's install
    with pytest.raises(getattr(mod, error), match=f"pass the app's own infra/{name}"):
        getattr(mod, load)()
    own = tmp_path / name
    own.write_text("{}")
    with pytest.raises(getattr(mod, error)) as refused:  # an explicit path is still read
        getattr(mod, load)(own)
    assert "beside this installation" not in str(refused.value)
