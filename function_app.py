"""The Functions app: registration only, one Blueprint per concern (STYLE 2)."""

import azure.durable_functions as df
import azure.functions as func

from activities.blueprint import bp as activities
from agents.blueprint import bp as agents
from ops.blueprint import bp as ops
from orchestrators.blueprint import bp as orchestrators
from scheduler.blueprint import bp as scheduler
from supervisor.blueprint import bp as supervisor

app = df.DFApp(http_auth_level=func.AuthLevel.FUNCTION)
for blueprint in (scheduler, orchestrators, activities, agents, supervisor, ops):
    app.register_functions(blueprint)
