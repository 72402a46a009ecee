r"""Orchestration inputs as the Durable extension stores them (SPEC D12, L1).

The Python SDK's ``start_new`` serialises its input to JSON text and posts that text as a
JSON string (``json.dumps(value)`` sent with ``json=``), so the body of a start is
``"{\"x\": 1}"``. The extension reads the body as a JSON value (a string here) and DTFx
serialises that value as the instance's input (azure-functions-durable-extension
``HttpApiHandler.HandleStartOrchestratorRequestAsync``, DTFx ``TaskHubClient``). The stored
input is therefore a JSON string holding the SDK's text, and the status API returns it as
that string: ``status.input_`` is ``'{"x": 1}'`` on Azure, not a dict
(azure-functions-durable-python#195 shows such a status). The orchestrator is given the
input as a JSON value (the extension's ``GetInputAsJson``), a string the SDK's
``get_input`` parses, so it sees ``{"x": 1}``. A plain HTTP client that posts ``{"x": 1}``
stores that object, and the status returns it as an object.
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
    """Return the stored input of an instance a client starts with ``input_json``.

    Parameters
    ----------
    input_json : str or None
        The SDK's serialisation of the input (``json.dumps(value)``), as ``start_new`` posts
        it.

    Returns
    -------
    str or None
        A JSON string holding ``input_json``; None for no input.
    """
    return None if input_json is None else json.dumps(input_json)


def request_input(body: bytes) -> str | None:
    """Return the stored input for a start request's body, as the extension builds it.

    Parameters
    ----------
    body : bytes
        The request body: any JSON value (the SDK's is a JSON string holding its text).

    Returns
    -------
    str or None
        The body's value re-serialised compactly; None for an empty body or JSON ``null``.

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

    The SDK sends its input as JSON text, a JSON string in the action; DTFx serialises that
    value again (``CreateSubOrchestrationInstanceCore``), so the child's stored input is a
    JSON string holding the text, the form a client's ``start_new`` gives too.
    """
    value = action.get("input")
    return None if value is None else json.dumps(value)
