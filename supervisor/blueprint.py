"""Registers the supervisor's timer trigger, every ``SUPERVISOR_SCHEDULE`` (V5)."""

import azure.functions as func

from orders.runtime import services
from supervisor.supervisor import supervise

bp = func.Blueprint()  # type: ignore[no-untyped-call]  # azure.functions: untyped __init__


@bp.timer_trigger(arg_name="timer", schedule="%SUPERVISOR_SCHEDULE%")
def supervisor(timer: func.TimerRequest) -> None:
    """Find expired attempts and request their recovery (V1-V4)."""
    supervise(services())
