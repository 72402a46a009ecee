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


def instance_id_rule_broken(value: object) -> str | None:
    r"""Return the rule a user-chosen instance id breaks, or None if it breaks none.

    The rules are those of SPEC D2, which follow the Durable Functions extension's
    ``DurableClient.StartNewAsync`` (src/WebJobs.Extensions.DurableTask/
    ContextImplementations/DurableClient.cs): no leading ``@``, none of ``/ \ # ?``, and no
    control character by .NET's ``char.IsControl`` (U+0000-U+001F and U+007F-U+009F, which
    is Unicode category Cc); SPEC D2 caps the length at 100.

    Parameters
    ----------
    value : object
        The proposed instance id.

    Returns
    -------
    str or None
        The rule broken, phrased to follow a field name (``"must not start with '@' ..."``).
    """
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    if not 1 <= len(value) <= MAX_INSTANCE_ID_LENGTH:
        return f"must be 1 to {MAX_INSTANCE_ID_LENGTH} characters long, got {len(value)}"
    if value.startswith("@"):
        return "must not start with '@' (reserved for entity ids)"
    for ch in FORBIDDEN_CHARACTERS:
        if ch in value:
            return f"must not contain {ch!r}; forbidden characters are / \\ # ?"
    for pos, ch in enumerate(value):
        if unicodedata.category(ch) == "Cc":
            return f"must not contain control characters (U+{ord(ch):04X} at position {pos})"
    return None


def validate_instance_id(value: str) -> str:
    """Check a user-chosen orchestration instance id (see :func:`instance_id_rule_broken`).

    Returns
    -------
    str
        ``value`` unchanged, if it is valid.

    Raises
    ------
    ValueError
        Naming ``instanceId`` and the rule broken.
    """
    problem = instance_id_rule_broken(value)
    if problem is not None:
        raise ValueError(f"instanceId: {problem}")
    return value


def new_instance_id() -> str:
    """Return an auto-generated instance id: a random UUID as 32 hex digits (SPEC D2).

    Returns
    -------
    str
        ``uuid.uuid4().hex``, the format the Durable extension uses (``Guid.ToString("N")``).
    """
    return uuid.uuid4().hex
