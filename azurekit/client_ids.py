"""Client ids (S8, X10); why at most 20 characters: docs/fidelity.md, "Rules shared with Azure"."""

from __future__ import annotations

import re

CLIENT_ID_MAX_LENGTH = 20

CLIENT_ID_PATTERN = rf"^[a-z0-9](?:[a-z0-9-]{{0,{CLIENT_ID_MAX_LENGTH - 2}}}[a-z0-9])?$"

_CLIENT_ID_RE = re.compile(CLIENT_ID_PATTERN)


def check_client_id(value: str) -> str:
    """Return ``value`` unchanged if it matches :data:`CLIENT_ID_PATTERN`.

    Raises
    ------
    ValueError
        Unless it is 1 to 20 lower-case letters, digits or ``-``, alphanumeric at both
        ends; the message states the rule and the value.
    """
    if not isinstance(value, str) or not _CLIENT_ID_RE.fullmatch(value):
        raise ValueError(
            f"must be 1 to {CLIENT_ID_MAX_LENGTH} lower-case letters, digits or '-', "
            f"starting and ending with a letter or digit; got {value!r}"
        )
    return value


def is_client_id(value: str) -> bool:
    """Tell whether ``value`` passes :func:`check_client_id`."""
    return isinstance(value, str) and _CLIENT_ID_RE.fullmatch(value) is not None
