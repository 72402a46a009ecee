"""The Functions app: registration only, one Blueprint per concern (STYLE 2)."""

import azure.durable_functions as df
import azure.functions as func

from orders.activities.blueprint import bp as activities
from orders.agents.blueprint import bp as agents
from orders.ops.blueprint import bp as ops
from orders.orchestrators.blueprint import bp as orchestrators
from orders.scheduler.blueprint import bp as scheduler
from orders.supervisor.blueprint import bp as supervisor

app = df.DFApp(http_auth_level=func.AuthLevel.FUNCTION)
for blueprint in (scheduler, orchestrators, activities, agents, supervisor, ops):
    app.register_functions(blueprint)
