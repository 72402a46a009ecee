r"""Orchestration instance ids: the one place their rules are checked (SPEC D2).

The Durable Functions documentation restricts user-chosen instance ids: 1 to 100
characters, not starting with ``@`` (reserved for entity ids), none of ``/ \ # ?`` (they
break the management URLs) and no control characters. The HTTP API refuses a bad id before
writing anything; the app's own code may call :func:`validate_instance_id` before
``start_new``, which matters because the Python SDK puts the id into the URL unencoded, so an
id with ``#`` or ``?`` is cut short by URL parsing before it reaches any server.
"""

from __future__ import annotations

import unicodedata
import uuid

MAX_INSTANCE_ID_LENGTH = 100
"""Longest instance id accepted, in characters (SPEC D2)."""

FORBIDDEN_CHARACTERS = ("/", "\\", "#", "?")
"""Characters an instance id must not contain (SPEC D2)."""


def validate_instance_id(value: str) -> str:
    r"""Check a user-chosen orchestration instance id against the rules of SPEC D2.

    Parameters
    ----------
    value : str
        The proposed instance id.

    Returns
    -------
    str
        ``value`` unchanged, if it is valid.

    Raises
    ------
    ValueError
        With a message naming ``instanceId`` and the rule broken: not a string, empty or
        longer than 100 characters, starting with ``@``, containing one of ``/ \ # ?``, or
        containing a control character (Unicode category Cc).
    """
    if not isinstance(value, str):
        raise ValueError(f"instanceId: must be a string, got {type(value).__name__}")
    if not 1 <= len(value) <= MAX_INSTANCE_ID_LENGTH:
        raise ValueError(f"instanceId: must be 1 to {MAX_INSTANCE_ID_LENGTH} characters long,"
                         f" got {len(value)}")
    if value.startswith("@"):
        raise ValueError("instanceId: must not start with '@' (reserved for entity ids)")
    for ch in FORBIDDEN_CHARACTERS:
        if ch in value:
            raise ValueError(f"instanceId: must not contain {ch!r}; forbidden characters are"
                             " / \\ # ?")
    for pos, ch in enumerate(value):
        if unicodedata.category(ch) == "Cc":
            raise ValueError(f"instanceId: must not contain control characters (U+{ord(ch):04X}"
                             f" at position {pos})")
    return value


def new_instance_id() -> str:
    """Return an auto-generated instance id: a random UUID as 32 hex digits (SPEC D2).

    Returns
    -------
    str
        ``uuid.uuid4().hex``, the format the Durable extension uses (``Guid.ToString("N")``).
    """
    return uuid.uuid4().hex
