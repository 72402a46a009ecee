"""Benchmark app: an orchestration calling 5 activities in sequence with small inputs."""

import azure.durable_functions as df

app = df.DFApp()


@app.orchestration_trigger(context_name="context")
def chain5(context: df.DurableOrchestrationContext):
    value = context.get_input()
    for _ in range(5):
        value = yield context.call_activity("step", value)
    return value


@app.activity_trigger(input_name="value")
def step(value: int) -> int:
    return value + 1


@app.orchestration_trigger(context_name="context")
def fan_out(context: df.DurableOrchestrationContext):
    n = context.get_input()
    results = yield context.task_all([context.call_activity("step", i) for i in range(n)])
    return sum(results)
