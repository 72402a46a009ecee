"""A three-day approval workflow with a timeout: the example of docs/testing.md."""

from datetime import timedelta

import azure.durable_functions as df
import azure.functions as func

app = df.DFApp(http_auth_level=func.AuthLevel.ANONYMOUS)


@app.route(route="approvals", methods=["POST"])
@app.durable_client_input(client_name="client")
async def request_approval(req: func.HttpRequest, client) -> func.HttpResponse:
    instance_id = await client.start_new("approval", None, req.get_json())
    return client.create_check_status_response(req, instance_id)


@app.orchestration_trigger(context_name="context")
def approval(context: df.DurableOrchestrationContext):
    request = context.get_input()
    yield context.call_activity("notify_approver", request)
    timeout = context.create_timer(context.current_utc_datetime + timedelta(days=3))
    answer = context.wait_for_external_event("approval")
    winner = yield context.task_any([answer, timeout])
    if winner == answer:
        timeout.cancel()
        return "approved" if answer.result else "rejected"
    yield context.call_activity("escalate", request)
    return "escalated"


@app.activity_trigger(input_name="request")
def notify_approver(request: dict) -> str:
    return f"asked {request['approver']} to approve {request['amount']}"


@app.activity_trigger(input_name="request")
def escalate(request: dict) -> str:
    return f"escalated {request['amount']} to {request['approver']}'s manager"
