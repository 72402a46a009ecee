"""Cases read from the Durable extension's and DTFx's sources, as a v2-model app.

Each orchestrator exercises one behaviour the local host must show as Azure shows it
(docs/fidelity.md); tests/devhost/test_fidelity.py runs them.
"""

from datetime import timedelta

import azure.durable_functions as df
import azure.functions as func

app = df.DFApp(http_auth_level=func.AuthLevel.ANONYMOUS)

FLAKY: dict[str, int] = {}
"""Calls of ``flaky`` per input: it fails the first time for each."""


@app.activity_trigger(input_name="name")
def hello(name: str) -> str:
    return f"Hello {name}"


@app.activity_trigger(input_name="what")
def explode(what: str) -> str:
    raise ValueError(f"card {what}")


@app.activity_trigger(input_name="key")
def flaky(key: str) -> str:
    FLAKY[key] = FLAKY.get(key, 0) + 1
    if FLAKY[key] == 1:
        raise RuntimeError(f"first call of {key} fails")
    return f"{key} ok"


@app.orchestration_trigger(context_name="context")
def catch_activity(context: df.DurableOrchestrationContext):
    try:
        yield context.call_activity("explode", "declined")
    except Exception as exc:  # noqa: BLE001 - the text is what the test reads
        return str(exc)


@app.orchestration_trigger(context_name="context")
def failing_child(context: df.DurableOrchestrationContext):
    yield context.call_activity("hello", "child")
    raise RuntimeError("child broke")


@app.orchestration_trigger(context_name="context")
def catch_child(context: df.DurableOrchestrationContext):
    try:
        yield context.call_sub_orchestrator("failing_child", "x")
    except Exception as exc:  # noqa: BLE001
        return str(exc)


@app.orchestration_trigger(context_name="context")
def echo_child(context: df.DurableOrchestrationContext):
    return (yield context.call_activity("hello", str(context.get_input())))


@app.orchestration_trigger(context_name="context")
def generations(context: df.DurableOrchestrationContext):
    n = context.get_input()
    result = yield context.call_sub_orchestrator("echo_child", n)
    if n < 2:
        context.continue_as_new(n + 1)
        return None
    return result


@app.orchestration_trigger(context_name="context")
def big_status(context: df.DurableOrchestrationContext):
    context.set_custom_status("x" * context.get_input())
    return (yield context.call_activity("hello", "status"))


@app.orchestration_trigger(context_name="context")
def retry_to_the_end(context: df.DurableOrchestrationContext):
    options = df.RetryOptions(first_retry_interval_in_milliseconds=60_000,
                              max_number_of_attempts=2)
    try:
        yield context.call_activity_with_retry("explode", options, "twice")
    except Exception:  # noqa: BLE001
        return context.current_utc_datetime.isoformat()


@app.orchestration_trigger(context_name="context")
def report_version(context: df.DurableOrchestrationContext):
    yield context.call_activity("hello", "version")
    return {"version": context.version}


@app.orchestration_trigger(context_name="context")
def mixed_case(context: df.DurableOrchestrationContext):
    return (yield context.call_activity("HELLO", "case"))


@app.orchestration_trigger(context_name="context")
def misspelt(context: df.DurableOrchestrationContext):
    return (yield context.call_activity("helo", "typo"))


@app.orchestration_trigger(context_name="context")
def own_id_child(context: df.DurableOrchestrationContext):
    return (yield context.call_sub_orchestrator("echo_child", 1, context.instance_id))


@app.orchestration_trigger(context_name="context")
def waiter(context: df.DurableOrchestrationContext):
    return (yield context.wait_for_external_event("go"))


@app.orchestration_trigger(context_name="context")
def flaky_chain(context: df.DurableOrchestrationContext):
    first = yield context.call_activity("hello", "before")
    second = yield context.call_activity("flaky", context.get_input())
    return [first, second]


@app.orchestration_trigger(context_name="context")
def flaky_parent(context: df.DurableOrchestrationContext):
    return (yield context.call_sub_orchestrator("flaky_chain", context.get_input()))


# ------------------------- when an instance ends (devhost/orchestration/shim.py)
def _slow_child(context: df.DurableOrchestrationContext):
    """A sub-orchestration that ends when its instance ``<parent>:slow`` gets event ``go``."""
    return context.call_sub_orchestrator("waiter", None, f"{context.instance_id}:slow")


@app.orchestration_trigger(context_name="context")
def any_of_two(context: df.DurableOrchestrationContext):
    winner = yield context.task_any([context.call_activity("hello", "fast"),
                                     _slow_child(context)])
    return winner.result


@app.orchestration_trigger(context_name="context")
def event_or_timer(context: df.DurableOrchestrationContext):
    timer = context.create_timer(context.current_utc_datetime + timedelta(hours=1))
    winner = yield context.task_any([context.wait_for_external_event("approve"), timer])
    if winner != timer and context.get_input() == "cancel":
        timer.cancel()
    return "timed out" if winner == timer else "approved"


@app.orchestration_trigger(context_name="context")
def all_fails_early(context: df.DurableOrchestrationContext):
    results = yield context.task_all([context.call_activity("explode", "early"),
                                      _slow_child(context)])
    return results


@app.orchestration_trigger(context_name="context")
def all_fails_early_caught(context: df.DurableOrchestrationContext):
    try:
        yield context.task_all([context.call_activity("explode", "early"), _slow_child(context)])
    except Exception:  # noqa: BLE001 - the except branch's next call is what is tested
        return (yield context.call_activity("hello", "after"))
    return "no failure"


# ------------------------------- the payload matrix (tests/devhost/test_payload_matrix.py)
@app.activity_trigger(input_name="value")
def echo_value(value):
    return value


@app.orchestration_trigger(context_name="context")
def payload_echo(context: df.DurableOrchestrationContext):
    return context.get_input()


@app.orchestration_trigger(context_name="context")
def payload_paths(context: df.DurableOrchestrationContext):
    value = context.get_input()
    activity = yield context.call_activity("echo_value", value)
    child = yield context.call_sub_orchestrator("payload_echo", value)
    entity = yield context.call_entity(df.EntityId("payload_box", context.instance_id), "set",
                                       value)
    context.set_custom_status(value)
    return {"input": value, "activity": activity, "child": child, "entity": entity}


@app.orchestration_trigger(context_name="context")
def payload_generations(context: df.DurableOrchestrationContext):
    got = context.get_input()
    if isinstance(got, dict) and set(got) == {"then"}:
        context.continue_as_new(got["then"])
        return None
    return got


@app.orchestration_trigger(context_name="context")
def payload_two_waits(context: df.DurableOrchestrationContext):
    yield context.wait_for_external_event("first")
    return (yield context.wait_for_external_event("value"))


@app.entity_trigger(context_name="context")
def payload_box(context: df.DurableEntityContext):
    if context.operation_name == "set":
        context.set_state(context.get_input())
    context.set_result(context.get_state())


@app.orchestration_trigger(context_name="context")
def one_timer_two_races(context: df.DurableOrchestrationContext):
    """One deadline timer raced twice: the SDK leaves it out of the second ``task_any``."""
    deadline = context.create_timer(context.current_utc_datetime + timedelta(hours=1))
    yield context.task_any([context.wait_for_external_event("a"), deadline])
    second = yield context.task_any([context.wait_for_external_event("b"), deadline])
    return "deadline" if second == deadline else "b"
