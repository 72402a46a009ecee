r"""The SDK's failure text: an orchestrator's error message, then its state as JSON.

The SDK raises ``Exception(f"{error}\n\n$OutOfProcData$:{state_json}")``; ``error`` may
itself nest children's failure texts (``"<Reason> \n <Details>"``), to any depth. JSON
escapes newlines, so the marker cannot occur in the state: splitting at the last marker is
exact.
"""

from __future__ import annotations

import json
import traceback
from dataclasses import dataclass
from typing import Any

OUT_OF_PROC_MARKER = "\n\n$OutOfProcData$:"
"""Separator the SDK puts between an orchestrator's error message and its state JSON."""


@dataclass(frozen=True)
class SdkFailure:
    """An orchestrator failure as the SDK reported it.

    ``message``: the state's ``error``, else the text before the state (children's payloads
    left in); ``state`` has no actions if none could be read; ``details``: the orchestrator's
    own traceback, without the SDK's wrapper.
    """

    message: str
    state: dict[str, Any]
    details: str


def split_failure_text(text: str) -> tuple[str, dict[str, Any] | None]:
    """Split the SDK's failure text at its last marker: (text before, state).

    ``(text, None)`` when there is no marker or no JSON object after the last one.
    """
    pos = text.rfind(OUT_OF_PROC_MARKER)
    if pos < 0:
        return text, None
    try:
        state = json.loads(text[pos + len(OUT_OF_PROC_MARKER):])
    except ValueError:
        return text, None
    if not isinstance(state, dict):
        return text, None
    return text[:pos], state


def sdk_failure(exc: BaseException) -> SdkFailure:
    """Read what the SDK's handler raised; never raises."""
    text = str(exc)
    message, state = split_failure_text(text)
    if state is None:
        state = {"isDone": False, "actions": []}
    error = state.get("error")
    message = error if isinstance(error, str) and error else (message or type(exc).__name__)
    wrapped = OUT_OF_PROC_MARKER in text and exc.__cause__ is not None
    own = exc.__cause__ if wrapped else exc
    return SdkFailure(message, state, "".join(traceback.format_exception(own)))
