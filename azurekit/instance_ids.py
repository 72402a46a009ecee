"""Orchestration instance ids (D2); the rules and their source are in docs/fidelity.md."""

from __future__ import annotations

import unicodedata
import uuid

MAX_INSTANCE_ID_LENGTH = 100

FORBIDDEN_CHARACTERS = ("/", "\\", "#", "?")


def instance_id_rule_broken(value: object) -> str | None:
    """Return the rule ``value`` breaks, phrased to follow a field name, or None."""
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    if not 1 <= len(value) <= MAX_INSTANCE_ID_LENGTH:
        return f"must be 1 to {MAX_INSTANCE_ID_LENGTH} characters long, got {len(value)}"
    if value.startswith("@"):
        return "must not start with '@' (reserved for entity ids)"
    for ch in FORBIDDEN_CHARACTERS:
        if ch in value:
            return f"must not contain {ch!r}; forbidden characters are / \\ # ?"
    if value.isascii() and value.isprintable():  # U+0020-U+007E: no control character
        return None
    for pos, ch in enumerate(value):
        if unicodedata.category(ch) == "Cc":
            return f"must not contain control characters (U+{ord(ch):04X} at position {pos})"
    return None


def validate_instance_id(value: str) -> str:
    """Return a user-chosen instance id unchanged if valid (see :func:`instance_id_rule_broken`).

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
    """Return an auto-generated instance id: ``uuid4().hex``, as the Durable extension's (D2)."""
    return uuid.uuid4().hex
