"""``df.Blueprint`` with the decorator return types the Durable Functions SDK leaves out."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, cast

import azure.durable_functions as df
from azure.functions.decorators.function_app import FunctionBuilder

Orchestrator = Callable[[df.DurableOrchestrationContext], Generator[Any, Any, Any]]
"""An orchestrator function: a generator over the orchestration's context."""

Register = Callable[[Callable[..., Any]], FunctionBuilder]
"""A decorator registering a function (or a FunctionBuilder another decorator made)."""


class DurableBlueprint(df.Blueprint):
    """A ``df.Blueprint`` whose durable decorators are typed."""

    def orchestration_trigger(self, context_name: str, orchestration: str | None = None,
                              input_type: type | None = None
                              ) -> Callable[[Orchestrator], FunctionBuilder]:
        """Register an orchestrator function (``df.Blueprint.orchestration_trigger``)."""
        # input_type is passed on only when given: older SDKs do not take it.
        register = (super().orchestration_trigger(context_name, orchestration)
                    if input_type is None else
                    super().orchestration_trigger(context_name, orchestration, input_type))
        return cast(Callable[[Orchestrator], FunctionBuilder], register)

    def activity_trigger(self, input_name: str, activity: str | None = None) -> Register:
        """Register an activity function (``df.Blueprint.activity_trigger``)."""
        return cast(Register, super().activity_trigger(input_name, activity))

    def durable_client_input(self, client_name: str, task_hub: str | None = None,
                             connection_name: str | None = None) -> Register:
        """Bind a durable client to a parameter (``df.Blueprint.durable_client_input``)."""
        return cast(Register,
                    super().durable_client_input(client_name, task_hub, connection_name))
