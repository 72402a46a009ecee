"""Reads a status and answers through a named http output binding (func.Out)."""

import json

import azure.durable_functions as df
import azure.functions as func


async def main(req: func.HttpRequest, client: str, res: func.Out[func.HttpResponse]) -> None:
    status = await df.DurableOrchestrationClient(client).get_status(
        req.route_params["instanceId"])
    res.set(func.HttpResponse(json.dumps({"runtimeStatus": status.runtime_status.value,
                                          "output": status.output}),
                              mimetype="application/json"))
