"""Every declared activity is registered once, under its name and binding (X6).

The names and bindings below are literal: in-flight histories schedule activities by these
names, and the Functions host binds each function's input by its parameter's name.
"""

import inspect
import json

import azure.durable_functions as df
import pytest

from activities import blueprint
from activities.declared import body_of, implements
from devhost.app.invoke import call
from devhost.app.loader import index_app
from orders.models.activities import DECLARED, PUBLISH_STATUS, Activity
from tests.support.records import record_in

ON_THE_WIRE = {
    "begin_attempt": "data", "load_order": "orderId", "reserve_inventory": "data",
    "send_agent_request": "data", "finish_attempt": "data", "publish_status": "data",
    "alert_operator": "data", "record_step": "data", "fail_order": "data",
    "begin_compensation": "data", "pending_undos": "orderId", "release_inventory": "data",
    "finish_compensation": "data"}


def app_functions():
    app = df.DFApp()
    app.register_functions(blueprint.bp)
    return {fn.get_function_name(): fn for fn in app.get_functions()}


def test_the_declared_names_and_bindings_are_those_histories_recorded():
    assert {activity.name: activity.binding for activity in DECLARED} == ON_THE_WIRE


FREES_A_SLOT = {"finish_attempt", "fail_order"}
"""The activities that take an order out of Processing: they also bind a durable client."""


def test_every_declared_activity_is_a_function_named_for_it_with_its_binding():
    functions = app_functions()
    assert list(functions) == list(ON_THE_WIRE)
    assert {a.name for a in blueprint.FREES_A_SLOT} == FREES_A_SLOT
    for name, binding in ON_THE_WIRE.items():
        client = [{"type": "durableClient", "direction": "IN", "name": "client"}] \
            if name in FREES_A_SLOT else []
        assert json.loads(functions[name].get_function_json())["bindings"] == [
            *client,
            {"type": "activityTrigger", "direction": "IN", "name": binding, "activity": name}]
        assert list(inspect.signature(functions[name].get_user_function()).parameters) == \
            [binding, *(c["name"] for c in client)]


def test_the_local_host_indexes_each_activity_by_its_name():
    app = df.DFApp()
    app.register_functions(blueprint.bp)
    index = index_app(app)
    assert {name: fdef.trigger_param for name, fdef in index.activities.items()} == ON_THE_WIRE


def test_the_host_calls_a_function_by_its_binding_and_the_body_answers(services, stores, clock,
                                                                        monkeypatch):
    record_in(stores.states, clock)
    monkeypatch.setattr(blueprint, "services", lambda: services)
    function = app_functions()["begin_attempt"].get_user_function()
    assert call(function, {"data": {"orderId": "ORD-1", "instanceId": "ORD-1:1",
                                    "completeBy": "2030-01-01T00:00:30.000000Z"}}) == {
        "fenced": False, "replyTo": "replies-acme"}
    assert stores.states.get("ORD-1").complete_by.isoformat() == "2030-01-01T00:00:30+00:00"


def test_a_second_body_for_an_activity_is_refused():
    def another(data, services):
        return None

    with pytest.raises(ValueError, match="activity publish_status already has a body, "
                                         "publish_status"):
        implements(PUBLISH_STATUS)(another)
    assert body_of(PUBLISH_STATUS).__module__ == "activities.steps"


def test_a_body_for_an_undeclared_activity_is_refused():
    stray = Activity("stray", str, PUBLISH_STATUS.result)
    with pytest.raises(ValueError, match="activity stray is not declared"):
        implements(stray)(lambda data, services: None)
    with pytest.raises(LookupError, match="activity stray: declared but no body"):
        body_of(stray)


@pytest.mark.parametrize("result, frees", [({"fenced": False}, True), ({"fenced": False,
                                            "state": "Error"}, True), ({"fenced": True}, False),
                                           ({"fenced": True, "state": None}, False)])
def test_only_an_unfenced_ending_frees_a_slot(monkeypatch, result, frees):
    freed = []

    async def slot_freed(client, services):
        freed.append(client)

    monkeypatch.setattr(blueprint, "slot_freed", slot_freed)
    monkeypatch.setattr(blueprint, "services", lambda: "services")
    function = blueprint.slot_freeing_function(blueprint.FREES_A_SLOT[0],
                                               lambda data, services: result)
    assert call(function, {"data": {}, "client": "the client"}) == result
    assert freed == (["the client"] if frees else [])
