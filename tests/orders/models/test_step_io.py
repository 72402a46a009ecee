"""The base of the step contracts (X6): unknown keys refused, absent keys left out."""

import pytest
from pydantic import ValidationError

import orders.models.agent_io
import orders.models.attempt_io
import orders.models.compensation_io
import orders.models.notice_io  # noqa: F401 - every family's contracts, for the census
from orders.models.compensation_io import ReleaseInventoryResult
from orders.models.notice_io import PublishStatusInput
from orders.models.step_io import _UNSET, StepContract, _omitted_if_none


def contracts(base=StepContract):
    for sub in base.__subclasses__():
        yield sub
        yield from contracts(sub)


def test_every_step_contract_refuses_unknown_keys():
    found = set(contracts())
    assert len(found) >= 25
    assert {c.__name__ for c in found if c.model_config.get("extra") != "forbid"} == set()


def test_every_omitted_key_is_an_optional_field_of_its_contract():
    for contract in contracts():
        for name in contract.OMIT_IF_NONE:
            field = contract.model_fields[name]
            assert not field.is_required() and field.default is None, (contract, name)


def test_absent_keys_stay_absent_in_both_spellings():
    status = PublishStatusInput(order_key="ORD-1", reply_to="replies-acme",
                                status="OrderCompleted")
    assert status.model_dump(mode="json") == {"orderId": "ORD-1", "replyTo": "replies-acme",
                                              "status": "OrderCompleted"}
    assert status.model_dump(by_alias=False) == {"order_key": "ORD-1",
                                                 "reply_to": "replies-acme",
                                                 "status": "OrderCompleted"}
    told = status.model_copy(update={"reason": "late"})
    assert told.model_dump(mode="json")["reason"] == "late"


def test_an_omitted_field_keeps_its_constraints():
    line = {"sku": "SKU-A", "quantity": 1}
    with pytest.raises(ValidationError, match="released\n  Tuple should have at most 1000"):
        ReleaseInventoryResult(reservation_id="RES-1", released=[line] * 1001)
    result = ReleaseInventoryResult(reservation_id="RES-1", released=None)
    assert result.model_dump_json() == '{"reservationId":"RES-1"}'


def test_an_omitted_field_must_be_declared_where_it_is_named_defaulting_to_none():
    # Through the class hook's helper: a refused class would stay in the census above.
    with pytest.raises(TypeError, match="Later.reason: an OMIT_IF_NONE field is declared"):
        _omitted_if_none(type("Later", (), {}), "reason", _UNSET)
    with pytest.raises(TypeError, match="Required.note: an OMIT_IF_NONE field"):
        _omitted_if_none(type("Required", (), {}), "note", "x")
    assert _omitted_if_none(StepContract, "note", None).exclude_if(None) is True
