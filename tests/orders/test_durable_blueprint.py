"""DurableBlueprint registers exactly what df.Blueprint does; only its types differ."""

import azure.durable_functions as df

from orders.durable_blueprint import DurableBlueprint


def register(bp):
    @bp.orchestration_trigger(context_name="context", orchestration="flow")
    def flow(context):
        return (yield context.call_activity("step", 1))

    @bp.activity_trigger(input_name="data", activity="step")
    def step(data: dict) -> dict:
        return data

    @bp.timer_trigger(arg_name="timer", schedule="0 */5 * * * *")
    @bp.durable_client_input(client_name="client", task_hub="Hub")
    async def tick(timer, client) -> None:
        return None

    app = df.DFApp()
    app.register_functions(bp)
    return {f.get_function_name(): f.get_function_json() for f in app.get_functions()}


def test_the_same_functions_and_bindings_as_the_sdk_blueprint():
    typed = register(DurableBlueprint())
    assert set(typed) == {"flow", "step", "tick"}
    assert typed == register(df.Blueprint())


def test_an_orchestrator_input_type_reaches_the_sdk():
    bp = DurableBlueprint()

    @bp.orchestration_trigger(context_name="context", input_type=dict)
    def flow(context):
        yield None

    assert flow._function.get_user_function()._df_input_type is dict
