"""Function chaining, v1 style: ``main`` is the SDK's handler of the generator."""

import azure.durable_functions as df


def orchestrator_function(context: df.DurableOrchestrationContext):
    result1 = yield context.call_activity("Hello", "Tokyo")
    result2 = yield context.call_activity("Hello", "Seattle")
    result3 = yield context.call_activity("Goodbye", "London")
    return [result1, result2, result3]


main = df.Orchestrator.create(orchestrator_function)
