"""A sample app exercising every durable action the local host supports."""

import sys
from datetime import timedelta

import azure.durable_functions as df
import azure.functions as func

from durable_http import call_http_polling

app = df.DFApp(http_auth_level=func.AuthLevel.ANONYMOUS)

ATTEMPTS: dict[str, int] = {}


@app.orchestration_trigger(context_name="context")
def chain(context: df.DurableOrchestrationContext):
    name = context.get_input()
    outputs = []
    for city in ("Tokyo", "Seattle", "London"):
        outputs.append((yield context.call_activity("hello", f"{name}-{city}")))
    return outputs


@app.activity_trigger(input_name="name")
def hello(name: str) -> str:
    return f"Hello {name}!"


@app.orchestration_trigger(context_name="context")
def race(context: df.DurableOrchestrationContext):
    deadline = context.current_utc_datetime + timedelta(seconds=context.get_input())
    reply = context.wait_for_external_event("Approval")
    timer = context.create_timer(deadline)
    winner = yield context.task_any([reply, timer])
    if winner == reply:
        timer.cancel()
        return {"outcome": "approved", "value": reply.result}
    return {"outcome": "timeout"}


@app.orchestration_trigger(context_name="context")
def retrying(context: df.DurableOrchestrationContext):
    key = context.get_input()
    try:
        value = yield context.call_activity_with_retry("flaky", df.RetryOptions(1000, 3), key)
        return {"value": value}
    except Exception as exc:  # noqa: BLE001
        after = yield context.call_activity("hello", "after-failure")
        return {"error": str(exc), "after": after}


@app.activity_trigger(input_name="key")
def flaky(key: str) -> str:
    ATTEMPTS[key] = ATTEMPTS.get(key, 0) + 1
    succeed_on = int(key.split(":")[1])
    if succeed_on and ATTEMPTS[key] >= succeed_on:
        return f"ok after {ATTEMPTS[key]}"
    raise RuntimeError(f"attempt {ATTEMPTS[key]} failed")


@app.orchestration_trigger(context_name="context")
def charge(context: df.DurableOrchestrationContext):
    catch = context.get_input()
    if not catch:
        return (yield context.call_activity("decline", None))
    try:
        yield context.call_activity("decline", None)
    except Exception as exc:  # noqa: BLE001
        return {"caught": str(exc)}


@app.activity_trigger(input_name="payload")
def decline(payload) -> None:
    raise ValueError("card declined")


@app.orchestration_trigger(context_name="context")
def parent(context: df.DurableOrchestrationContext):
    mode = context.get_input()
    if mode == "fail":
        try:
            yield context.call_sub_orchestrator("charge", False)
        except Exception as exc:  # noqa: BLE001
            return {"child_error": str(exc)}
    tasks = [context.call_sub_orchestrator("chain", f"c{i}") for i in range(3)]
    return (yield context.task_all(tasks))


@app.orchestration_trigger(context_name="context")
def deterministic(context: df.DurableOrchestrationContext):
    first = (str(context.current_utc_datetime), str(context.new_uuid()))
    yield context.call_activity("hello", "x")
    second = (str(context.current_utc_datetime), str(context.new_uuid()))
    yield context.call_activity("hello", "y")
    return {"first": first, "second": second}


@app.orchestration_trigger(context_name="context")
def counter(context: df.DurableOrchestrationContext):
    n = context.get_input()
    yield context.call_activity("hello", str(n))
    if n < 5:
        context.continue_as_new(n + 1)
        return None
    return n


@app.orchestration_trigger(context_name="context")
def fetch(context: df.DurableOrchestrationContext):
    response = yield context.call_http("GET", context.get_input())
    return response


@app.orchestration_trigger(context_name="context")
def fan(context: df.DurableOrchestrationContext):
    n = context.get_input()
    results = yield context.task_all([context.call_activity("square", i) for i in range(n)])
    return sum(results)


@app.activity_trigger(input_name="i")
def square(i: int) -> int:
    return i * i


@app.route(route="orchestrators/{name}", methods=["POST"])
@app.durable_client_input(client_name="client")
async def http_start(req: func.HttpRequest, client) -> func.HttpResponse:
    instance_id = await client.start_new(req.route_params["name"], None, req.get_json())
    return client.create_check_status_response(req, instance_id)


@app.service_bus_queue_trigger(arg_name="msg", queue_name="%SAMPLE_QUEUE%",
                               connection="SERVICEBUS")
@app.durable_client_input(client_name="client")
async def on_message(msg: func.ServiceBusMessage, client) -> None:
    import json

    body = json.loads(msg.get_body())
    if body.get("fail"):
        raise RuntimeError("boom")
    if body.get("slow_s"):  # a handler that takes a while (time moves on the host's clock)
        from devhost.run.runtime import current

        HANDLED.append(msg.message_id)
        current().clock.advance(timedelta(seconds=body["slow_s"]))
        return
    await client.start_new("chain", body["id"], body["name"])


TICKS: list[bool] = []
HANDLED: list[str] = []


@app.timer_trigger(arg_name="timer", schedule="0 */5 * * * *")
def every_five_minutes(timer: func.TimerRequest) -> None:
    TICKS.append(timer.past_due)


@app.orchestration_trigger(context_name="context")
def slow_chain(context: df.DurableOrchestrationContext):
    n = context.get_input()
    total = 0
    for step in range(3):
        total += yield context.call_activity("slow_double", n + step)
    return total


@app.activity_trigger(input_name="n")
def slow_double(n: int) -> int:
    import time

    time.sleep(0.03)
    return 2 * n


SWITCH = {"activity": "hello"}


@app.orchestration_trigger(context_name="context")
def switching(context: df.DurableOrchestrationContext):
    first = yield context.call_activity(SWITCH["activity"], "a")
    return first


@app.orchestration_trigger(context_name="context")
def bad_child_id(context: df.DurableOrchestrationContext):
    try:
        yield context.call_sub_orchestrator("chain", "x", "bad/id#?")
    except Exception as exc:  # noqa: BLE001
        return {"refused": str(exc)}


@app.orchestration_trigger(context_name="context")
def exits(context: df.DurableOrchestrationContext):
    sys.exit("orchestrator called sys.exit")
    yield context.call_activity("hello", "unreachable")


@app.orchestration_trigger(context_name="context")
def exits_in_activity(context: df.DurableOrchestrationContext):
    return (yield context.call_activity("quitter", "x"))


@app.activity_trigger(input_name="x")
def quitter(x: str) -> None:
    sys.exit("activity called sys.exit")


@app.orchestration_trigger(context_name="context")
def order_parent(context: df.DurableOrchestrationContext):
    yield context.call_activity("hello", "one")
    yield context.call_activity("hello", "two")
    return (yield context.call_sub_orchestrator("order_child", {"file": "x"}))


@app.orchestration_trigger(context_name="context")
def order_child(context: df.DurableOrchestrationContext):
    return (yield context.call_activity("check_sku", context.get_input()))


@app.activity_trigger(input_name="order")
def check_sku(order: dict) -> None:
    raise ValueError("bad sku")


@app.orchestration_trigger(context_name="context")
def order_grandparent(context: df.DurableOrchestrationContext):
    return (yield context.call_sub_orchestrator("order_parent", None))


@app.orchestration_trigger(context_name="context")
def catching_parent(context: df.DurableOrchestrationContext):
    try:
        return (yield context.call_sub_orchestrator("chain", "kid"))
    except Exception as exc:  # noqa: BLE001
        return {"child_failed": str(exc)}


@app.orchestration_trigger(context_name="context")
def fetch_status(context: df.DurableOrchestrationContext):
    first = yield context.call_http("GET", context.get_input())
    second = yield context.call_http("GET", context.get_input())
    return [first["statusCode"], second["statusCode"]]


@app.orchestration_trigger(context_name="context")
def fetch_polling(context: df.DurableOrchestrationContext):
    args = context.get_input()
    response = yield from call_http_polling(
        context, "POST", args["url"], {"order": 7}, {"X-Trace": "t1"},
        timeout=timedelta(seconds=args.get("timeout_s", 3600)))
    return response


@app.orchestration_trigger(context_name="context")
def two_approvals(context: df.DurableOrchestrationContext):
    yield context.call_activity("hello", "first")  # events raised meanwhile wait in history
    first = yield context.wait_for_external_event("Approval")
    second = yield context.wait_for_external_event("Approval")
    return [first, second]
