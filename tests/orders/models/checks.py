"""Checks every step contract must pass: its wire form round-trips, a misspelt key is refused.

A contract is a model class or a ``TypeAdapter`` (the tagged unions and lists); a wire form
is a literal JSON value as an orchestration history records it.
"""

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError


def adapter(contract: Any) -> TypeAdapter:
    return contract if isinstance(contract, TypeAdapter) else TypeAdapter(contract)


def load(contract: Any, wire: Any) -> Any:
    return adapter(contract).validate_python(wire)


def dump(contract: Any, value: Any) -> Any:
    return adapter(contract).dump_python(value, mode="json")


def assert_round_trips(contract: Any, wire: Any) -> None:
    """``wire`` loads, dumps back to exactly ``wire`` and loads again to an equal value."""
    loaded = load(contract, wire)
    assert dump(contract, loaded) == wire
    assert load(contract, dump(contract, loaded)) == loaded


def misspelt(key: str) -> str:
    """A plausible slip: the key lower-cased, or upper-cased if it is already lower case."""
    return key.lower() if key.lower() != key else key.upper()


def assert_each_misspelt_key_is_refused(contract: Any, wire: dict[str, Any]) -> None:
    """Renaming any one key of ``wire`` makes it fail to load, naming the key."""
    for key, value in wire.items():
        wrong = misspelt(key)
        renamed = {(wrong if k == key else k): v for k, v in wire.items()}
        with pytest.raises(ValidationError) as refused:
            load(contract, renamed)
        assert wrong in str(refused.value) or key in str(refused.value), (key, value)


def wire_form_tests(forms: list[tuple[Any, Any]], union: str | None = None,
                    misspellable: int | None = None) -> tuple[Any, Any]:
    """The two tests a contract module runs over its ``(contract, wire)`` forms.

    ``union`` names the forms whose contract is a ``TypeAdapter`` in the test ids; only the
    first ``misspellable`` forms (all by default) are checked for misspelt keys. A module
    binds the returned functions to its own ``test_*`` names so pytest collects them there.
    """
    ids = (None if union is None else
           [f"{getattr(c, '__name__', union)}-{i}" for i, (c, _) in enumerate(forms)])

    @pytest.mark.parametrize(("contract", "wire"), forms, ids=ids)
    def test_each_contract_round_trips_its_wire_form(contract, wire):
        assert_round_trips(contract, wire)

    @pytest.mark.parametrize(("contract", "wire"), forms[:misspellable],
                             ids=None if ids is None else ids[:misspellable])
    def test_a_misspelt_key_is_refused(contract, wire):
        assert_each_misspelt_key_is_refused(contract, wire)

    return test_each_contract_round_trips_its_wire_form, test_a_misspelt_key_is_refused
