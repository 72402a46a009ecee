"""One orchestrator per kind of history event, each left waiting for a 'finish' event.

The replay matrix (test_replay_forms.py) records each one in flight and replays it.
"""

import azure.durable_functions as df

app = df.DFApp()
COUNTER = df.EntityId("counter", "c")
failed_once: set[str] = set()


def finish(context):
    return (yield context.wait_for_external_event("finish"))


@app.orchestration_trigger(context_name="context")
def activities(context: df.DurableOrchestrationContext):
    first = yield context.call_activity("echo", "a")
    yield context.call_activity("echo", first + "b")
    yield from finish(context)


@app.orchestration_trigger(context_name="context")
def fan_out(context: df.DurableOrchestrationContext):
    yield context.task_all([context.call_activity("echo", str(n)) for n in range(3)])
    yield context.call_activity("echo", "after")
    yield from finish(context)


@app.orchestration_trigger(context_name="context")
def timers(context: df.DurableOrchestrationContext):
    from datetime import timedelta

    yield context.create_timer(context.current_utc_datetime + timedelta(hours=1))
    yield context.call_activity("echo", "woke")
    yield from finish(context)


@app.orchestration_trigger(context_name="context")
def timeouts(context: df.DurableOrchestrationContext):
    from datetime import timedelta

    work = context.call_activity("echo", "work")
    timeout = context.create_timer(context.current_utc_datetime + timedelta(hours=1))
    winner = yield context.task_any([work, timeout])
    if winner == work:
        timeout.cancel()
    yield context.call_activity("echo", "after")
    yield from finish(context)


@app.orchestration_trigger(context_name="context")
def events(context: df.DurableOrchestrationContext):
    value = yield context.wait_for_external_event("go")
    yield context.call_activity("echo", str(value))
    yield from finish(context)


@app.orchestration_trigger(context_name="context")
def sub_orchestrations(context: df.DurableOrchestrationContext):
    yield context.call_sub_orchestrator("child", "x")
    yield context.call_activity("echo", "after")
    yield from finish(context)


@app.orchestration_trigger(context_name="context")
def child(context: df.DurableOrchestrationContext):
    return (yield context.call_activity("echo", context.get_input()))


@app.orchestration_trigger(context_name="context")
def entities(context: df.DurableOrchestrationContext):
    context.signal_entity(COUNTER, "add", 2)
    total = yield context.call_entity(COUNTER, "get")
    yield context.call_activity("echo", str(total))
    yield from finish(context)


@app.orchestration_trigger(context_name="context")
def http_calls(context: df.DurableOrchestrationContext):
    yield context.call_http("GET", "https://service.invalid/ping")
    yield context.call_activity("echo", "after")
    yield from finish(context)


@app.orchestration_trigger(context_name="context")
def retries(context: df.DurableOrchestrationContext):
    options = df.RetryOptions(first_retry_interval_in_milliseconds=1000,
                              max_number_of_attempts=3)
    yield context.call_activity_with_retry("flaky", options, context.instance_id)
    yield context.call_activity("echo", "after")
    yield from finish(context)


@app.activity_trigger(input_name="value")
def echo(value: str) -> str:
    return value


@app.activity_trigger(input_name="key")
def flaky(key: str) -> str:
    if key not in failed_once:
        failed_once.add(key)
        raise RuntimeError("the first attempt fails")
    return "ok"


@app.entity_trigger(context_name="context")
def counter(context: df.DurableEntityContext):
    total = context.get_state(lambda: 0)
    if context.operation_name == "add":
        total += context.get_input()
    context.set_state(total)
    context.set_result(total)


@app.service_bus_queue_trigger(arg_name="msg", queue_name="jobs", connection="ServiceBus")
@app.durable_client_input(client_name="client")
async def job_received(msg, client) -> None:
    await client.start_new("activities", msg.message_id)


@app.orchestration_trigger(context_name="context")
def echo_input(context: df.DurableOrchestrationContext):
    return context.get_input()
