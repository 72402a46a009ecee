"""Durable entities in the style of the Durable Functions Python samples (counter entity)."""

import azure.durable_functions as df
import azure.functions as func

myApp = df.DFApp(http_auth_level=func.AuthLevel.ANONYMOUS)

@myApp.entity_trigger(context_name="context", entity_name="Counter")
def counter(context: df.DurableEntityContext):
    current = context.get_state(lambda: 0)
    operation = context.operation_name
    if operation == "add":
        current += context.get_input()
    elif operation == "reset":
        current = 0
    elif operation == "get":
        pass
    elif operation == "delete":
        context.destruct_on_exit()
        return
    else:
        raise ValueError(f"Counter has no operation '{operation}'")
    context.set_state(current)
    context.set_result(current)


@myApp.entity_trigger(context_name="context")
def journal(context: df.DurableEntityContext):
    entries = context.get_state(list)
    entries.append(context.get_input())
    context.set_state(entries)
    context.set_result(len(entries))


@myApp.orchestration_trigger(context_name="context")
def add_one(context: df.DurableOrchestrationContext):
    key = context.get_input()
    return (yield context.call_entity(df.EntityId("Counter", key), "add", 1))


@myApp.orchestration_trigger(context_name="context")
def slow_add(context: df.DurableOrchestrationContext):
    """Add 1 after a short activity (the crash test kills the host among these)."""
    key = context.get_input()
    yield context.call_activity("pause", key)
    return (yield context.call_entity(df.EntityId("Counter", key), "add", 1))


@myApp.activity_trigger(input_name="key")
def pause(key: str) -> str:
    import time

    time.sleep(0.05)
    return key


@myApp.orchestration_trigger(context_name="context")
def bad_operation(context: df.DurableOrchestrationContext):
    try:
        yield context.call_entity(df.EntityId("Counter", "bad"), "multiply", 2)
    except Exception as exc:  # noqa: BLE001
        return {"caught": str(exc)}
    return {"caught": None}


@myApp.orchestration_trigger(context_name="context")
def bad_operation_uncaught(context: df.DurableOrchestrationContext):
    return (yield context.call_entity(df.EntityId("Counter", "bad"), "multiply", 2))


@myApp.orchestration_trigger(context_name="context")
def signal_then_get(context: df.DurableOrchestrationContext):
    entity = df.EntityId("Counter", context.get_input())
    context.signal_entity(entity, "add", 5)
    context.signal_entity(entity, "add", 7)
    return (yield context.call_entity(entity, "get"))


@myApp.orchestration_trigger(context_name="context")
def unknown_entity(context: df.DurableOrchestrationContext):
    return (yield context.call_entity(df.EntityId("Nobody", "k"), "get"))


@myApp.orchestration_trigger(context_name="context")
def signal_and_continue(context: df.DurableOrchestrationContext):
    n = context.get_input()
    context.signal_entity(df.EntityId("Counter", "eternal"), "add", n)
    if n < 3:
        context.continue_as_new(n + 1)
        return None
    return (yield context.call_entity(df.EntityId("Counter", "eternal"), "get"))


@myApp.orchestration_trigger(context_name="context")
def parallel_adds(context: df.DurableOrchestrationContext):
    entity = df.EntityId("Counter", context.get_input())
    results = yield context.task_all([context.call_entity(entity, "add", 1) for _ in range(5)])
    return sorted(results)


@myApp.route(route="counter/{key}", methods=["POST", "GET"])
@myApp.durable_client_input(client_name="client")
async def counter_http(req: func.HttpRequest, client) -> func.HttpResponse:
    import json

    entity = df.EntityId("Counter", req.route_params["key"])
    if req.method == "POST":
        await client.signal_entity(entity, "add", req.get_json())
        return func.HttpResponse(status_code=202)
    state = await client.read_entity_state(entity)
    return func.HttpResponse(json.dumps({"exists": state.entity_exists,
                                         "state": state.entity_state}),
                             mimetype="application/json")
