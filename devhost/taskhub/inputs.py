r"""Orchestration inputs as the Durable extension stores them (D12, L1).

The SDK's ``start_new`` posts its JSON text as a JSON string (body ``"{\"x\": 1}"``); the
extension reads the body as a JSON value and DTFx serialises that value as the input
(azure-functions-durable-extension ``HttpApiHandler.HandleStartOrchestratorRequestAsync``,
DTFx ``TaskHubClient``). So the status returns that string: ``status.input_`` is
``'{"x": 1}'`` on Azure, not a dict (azure-functions-durable-python#195). The orchestrator
gets it as a JSON value (``GetInputAsJson``) that ``get_input`` parses to ``{"x": 1}``. A
plain client posting ``{"x": 1}`` stores, and gets back, that object.
"""

from __future__ import annotations

import json
from typing import Any


def json_value(text: Any) -> Any:
    """Parse a stored JSON text into its value; a non-JSON text is returned as it is."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def client_input(input_json: str | None) -> str | None:
    """Return the stored input (a JSON string holding ``input_json``) of a client start."""
    return None if input_json is None else json.dumps(input_json)


def request_input(body: bytes) -> str | None:
    """Return the stored input for a start request's body (any JSON value), compact.

    None for an empty body or JSON ``null``.

    Raises
    ------
    ValueError
        If the body is not JSON (the API answers ``400 Invalid JSON content``).
    """
    if not body.strip():
        return None
    value = json.loads(body)
    # Newtonsoft's Formatting.None: no spaces, non-ASCII characters as they are.
    return None if value is None else json.dumps(value, ensure_ascii=False,
                                                 separators=(",", ":"))


def activity_input(action: dict[str, Any]) -> str | None:
    """Return an activity's input as the activity trigger reads it: the SDK's JSON text."""
    value = action.get("input")
    if value is None:
        return None
    # The SDK serialises inputs to a JSON string already; keep it as the wire value.
    return value if isinstance(value, str) else json.dumps(value)


def orchestration_input(action: dict[str, Any]) -> str | None:
    """Return a sub-orchestration's input as DTFx stores it.

    DTFx serialises the SDK's JSON text once more (``CreateSubOrchestrationInstanceCore``),
    the same form a client's ``start_new`` gives.
    """
    value = action.get("input")
    return None if value is None else json.dumps(value)
