r"""The SDK's failure text: an orchestrator's error message, then its state as JSON.

When an orchestrator raises, the Python SDK's handler raises
``Exception(f"{error}\n\n$OutOfProcData$:{state_json}")`` (the extension's out-of-process
error form). ``error`` is the orchestrator's exception text, and that text can itself carry
such payloads: a failed sub-orchestration or activity reaches the parent as
``"<Reason> \n <Details>"``, and the details may hold the child's own failure text, to any
depth. The state JSON is always the *last* part: JSON text escapes newlines, so the marker
(which starts with two raw newlines) cannot occur inside it. Splitting at the last marker is
therefore exact whatever the message holds.
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

    Attributes
    ----------
    message : str
        The orchestrator's error text (the state's ``error``, else the text before the
        state JSON); nested payloads of children are left in it as they came.
    state : dict
        The orchestrator state (``isDone``, ``actions``, ``customStatus``, ...); with no
        actions when the text carried none that could be read.
    details : str
        The traceback of the orchestrator's own exception (the SDK's wrapper left out, so
        the state JSON is not repeated in it).
    """

    message: str
    state: dict[str, Any]
    details: str


def split_failure_text(text: str) -> tuple[str, dict[str, Any] | None]:
    """Split the SDK's failure text at its last out-of-process marker.

    Parameters
    ----------
    text : str
        ``str()`` of the exception the SDK's orchestrator handler raised.

    Returns
    -------
    (str, dict or None)
        The text before the state JSON, and the state; ``(text, None)`` when the text
        has no marker or what follows the last one is not a JSON object.
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
    """Read the failure the SDK's orchestrator handler raised.

    Parameters
    ----------
    exc : BaseException
        What the handler raised: the SDK's wrapper (its ``__cause__`` is the orchestrator's
        own exception) or any other exception.

    Returns
    -------
    SdkFailure
        Never raises: text that cannot be read becomes the message, with no actions.
    """
    text = str(exc)
    message, state = split_failure_text(text)
    if state is None:
        state = {"isDone": False, "actions": []}
    error = state.get("error")
    message = error if isinstance(error, str) and error else (message or type(exc).__name__)
    wrapped = OUT_OF_PROC_MARKER in text and exc.__cause__ is not None
    own = exc.__cause__ if wrapped else exc
    return SdkFailure(message, state, "".join(traceback.format_exception(own)))
