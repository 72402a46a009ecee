"""The Functions app: registration only, one Blueprint per concern; settings checked at import."""

import azure.durable_functions as df
import azure.functions as func

from activities.blueprint import bp as activities
from agents.blueprint import bp as agents
from ops.blueprint import bp as ops
from ops.dashboard.blueprint import bp as dashboard
from orchestrators.blueprint import bp as orchestrators
from orders.settings import order_clients
from orders.startup import refuse_invalid_settings
from scheduler.blueprint import bp as scheduler
from scheduler.blueprint import client_submissions
from supervisor.blueprint import bp as supervisor

refuse_invalid_settings()  # a bad setting stops the app here, in one line (X2)
app = df.DFApp(http_auth_level=func.AuthLevel.FUNCTION)
for blueprint in (scheduler, client_submissions(order_clients()), orchestrators, activities,
                  agents, supervisor, ops, dashboard):
    app.register_functions(blueprint)
