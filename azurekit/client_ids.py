"""Client ids: the one rule for the name a client is known by in queues and order keys.

A client's id names its own queues (``orders-<clientId>``, ``replies-<clientId>``, SPEC
S8, X10) and prefixes the keys of its orders (``<clientId>~<OrderID>``), from which every
instance id of the order is built. So it must be a valid part of a Service Bus queue name
and short enough that ``<clientId>~<OrderID>:comp:<n>`` stays within the 100 characters of
an instance id (SPEC D2): 20 + 1 + 64 (the longest OrderID) = 85, plus ``:comp:<n>``. The
app's contracts, the settings, the client and the queue catalog all check it here.
"""

from __future__ import annotations

import re

CLIENT_ID_MAX_LENGTH = 20
"""Longest client id, in characters (see the module docstring for why 20)."""

CLIENT_ID_PATTERN = rf"^[a-z0-9](?:[a-z0-9-]{{0,{CLIENT_ID_MAX_LENGTH - 2}}}[a-z0-9])?$"
"""Client ids: 1 to 20 lower-case letters, digits or ``-``, alphanumeric at both ends."""

_CLIENT_ID_RE = re.compile(CLIENT_ID_PATTERN)


def check_client_id(value: str) -> str:
    """Check a client id against :data:`CLIENT_ID_PATTERN`.

    Parameters
    ----------
    value : str
        Candidate client id.

    Returns
    -------
    str
        ``value`` unchanged.

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
