from dataclasses import replace
from datetime import UTC, datetime

import pytest

from orders.budget import (
    VERSION_REMOTE_STEPS,
    BudgetError,
    check_budget,
    forward_operations,
    max_calls_per_service,
    refusal_made_no_call,
)
from orders.models import ProcessState, StateRecord
from orders.names import REQUEST_QUEUES, WORKFLOW_REMOTE_STEPS, WORKFLOW_VERSIONS
from orders.queues import load_queue_limits
from orders.settings import Settings, SettingsError
from orders.startup import on_start


def settings(tmp_path, **values):
    base = {"DEVHOST_DATA_DIR": str(tmp_path), "AGENT_MAX_ATTEMPTS": 4, "MAX_FAILURES": 3,
            "MAX_COMPENSATION_FAILURES": 3, "RETRY_BUDGET_CALLS_PER_SERVICE": 200}
    return Settings(**{**base, **values})


def calls_of(calls, services=("payment", "shipping")):
    """The entries of payment and shipping (other services have their own tests)."""
    return {s: calls[s] for s in services}


def test_formula_multiplies_every_layer(tmp_path):
    queues = load_queue_limits()
    # 4 calls per delivery * 5 deliveries * (3 forward attempts + 3 compensation attempts)
    assert calls_of(max_calls_per_service(settings(tmp_path), queues)) == {"payment": 120,
                                                                          "shipping": 120}
    payment = queues["payment-requests"]
    queues["payment-requests"] = replace(payment, max_delivery_count=2)
    calls = max_calls_per_service(
        settings(tmp_path, AGENT_MAX_ATTEMPTS=3, MAX_FAILURES=5, MAX_COMPENSATION_FAILURES=1),
        queues)
    assert calls_of(calls) == {"payment": 3 * 2 * (5 + 1), "shipping": 3 * 5 * (5 + 1)}


def test_every_registered_workflow_version_is_counted(tmp_path):
    assert len(VERSION_REMOTE_STEPS) == len(WORKFLOW_VERSIONS)
    assert set(max_calls_per_service(settings(tmp_path), load_queue_limits())) == \
        set(REQUEST_QUEUES)
    assert forward_operations("payment") == ("charge",)
    assert forward_operations("shipping") == ("ship",)


def test_settings_over_budget_are_refused_naming_service_and_levers(tmp_path):
    over = settings(tmp_path, AGENT_MAX_ATTEMPTS=6, RETRY_BUDGET_CALLS_PER_SERVICE=150)
    with pytest.raises(BudgetError, match=r"RETRY_BUDGET_CALLS_PER_SERVICE: 150 .*"
                                          r"payment: 180, shipping: 180.*AGENT_MAX_ATTEMPTS"):
        check_budget(over, load_queue_limits())
    exact = settings(tmp_path, AGENT_MAX_ATTEMPTS=5, RETRY_BUDGET_CALLS_PER_SERVICE=150)
    assert calls_of(check_budget(exact, load_queue_limits())) == {"payment": 150,
                                                                  "shipping": 150}


def test_request_queue_without_duplicate_detection_is_refused(tmp_path):
    queues = load_queue_limits()
    queues["shipping-requests"] = replace(queues["shipping-requests"],
                                          requires_duplicate_detection=False)
    with pytest.raises(BudgetError, match="queues.shipping-requests.requiresDuplicateDetection"):
        check_budget(settings(tmp_path), queues)


def test_undeclared_request_queue_is_refused(tmp_path):
    queues = load_queue_limits()
    del queues["payment-requests"]
    with pytest.raises(BudgetError, match="queues.payment-requests: the payment agent"):
        max_calls_per_service(settings(tmp_path), queues)


def test_start_up_refuses_over_budget_settings_before_building_anything(tmp_path):
    from orders.runtime import build_services

    with pytest.raises(SettingsError, match="invalid app settings: RETRY_BUDGET_CALLS_PER_SERVICE"):
        build_services(settings(tmp_path, RETRY_BUDGET_CALLS_PER_SERVICE=100))
    assert not (tmp_path / "state.sqlite").exists()


def test_start_up_reports_an_unreadable_queue_file(tmp_path):
    with pytest.raises(SettingsError, match="nope.json: cannot read"):
        on_start(settings(tmp_path), queues_file=str(tmp_path / "nope.json"))


def test_the_app_refuses_invalid_settings_as_it_loads_under_a_functions_host(monkeypatch,
                                                                            tmp_path):
    from orders.startup import refuse_invalid_settings

    monkeypatch.setenv("DEVHOST_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("MAX_FAILURES", "50")
    refuse_invalid_settings({})  # imported by a script, not a host: the first use checks
    with pytest.raises(SettingsError, match=r"RETRY_BUDGET_CALLS_PER_SERVICE.*MAX_FAILURES \(50\)"):
        refuse_invalid_settings({"FUNCTIONS_WORKER_RUNTIME": "python"})
    monkeypatch.setenv("MAX_FAILURES", "3")
    refuse_invalid_settings({"FUNCTIONS_WORKER_RUNTIME": "python"})



@pytest.mark.parametrize(("version", "first"), [(1, "charge"), (2, "ship"), (3, "charge"),
                                                (4, "ship")])
def test_each_version_sends_one_request_per_service_first_the_right_one(tmp_path, version,
                                                                       first):
    # Versions 3 and 4 merge activities, not requests: per attempt still one charge and one
    # shipment, so the worst case stays 4 x 5 x (3 + 3) = 120 calls per service (X2).
    assert sorted(op for _, op in WORKFLOW_REMOTE_STEPS[version]) == ["charge", "ship"]
    assert calls_of(max_calls_per_service(settings(tmp_path), load_queue_limits())) == {
        "payment": 120, "shipping": 120}
    record = StateRecord.new("ORD-1", "replies-acme", datetime(2030, 1, 1, tzinfo=UTC))
    record = record.model_copy(update={"process_state": ProcessState.PROCESSING,
                                       "workflow_version": version})
    other = "ship" if first == "charge" else "charge"
    assert refusal_made_no_call(record, first) and not refusal_made_no_call(record, other)
