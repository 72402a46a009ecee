"""Reading the Durable HTTP API's query parameters, headers and JSON bodies.

Every reader raises :class:`~devhost.http_api.errors.BadRequest` with the parameter's name
and the rule, so a malformed request is answered with HTTP 400 before anything is written.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TypeVar

from starlette.datastructures import QueryParams

from devhost.http_api.errors import BadRequest
from devhost.taskhub.events import parse_time
from devhost.taskhub.inputs import request_input
from devhost.taskhub.store import ALL_STATUSES

KNOWN_STATUSES = (*ALL_STATUSES, "Canceled")
"""Runtime status names a query may filter on (Canceled is documented but never used)."""

CONTINUATION_HEADER = "x-ms-continuation-token"
"""Request and response header carrying the paging continuation token."""

T = TypeVar("T")


def _given(query: QueryParams, name: str) -> str | None:
    """Return the parameter's value, or None when it is absent or empty."""
    value = query.get(name)
    return None if value is None or value == "" else value


def _converted(query: QueryParams, name: str, convert: Callable[[str], T],
               rule: str) -> T | None:
    """Return the parameter through ``convert`` (None if not given); BadRequest if it fails."""
    value = _given(query, name)
    if value is None:
        return None
    try:
        return convert(value)
    except ValueError:
        raise BadRequest(f"{name}: must be {rule}, got {value!r}") from None


_DOTNET_TRIM = " \t\n\r\x0b\x0c\x00"
"""Characters ``bool.TryParse`` ignores around the value (white space and NUL)."""


def get_bool(query: QueryParams, name: str, default: bool) -> bool:
    """Read a boolean query parameter as the extension does; anything else is the default.

    Host behaviour mirrors azure-functions-durable-extension ``HttpApiHandler.cs``
    (``TryGetBooleanQueryParameterValue``: .NET ``bool.TryParse``, ``true``/``false`` in
    any case, white space around ignored): a value that does not parse, or an empty one,
    leaves the parameter at its default, so ``showHistory=yes`` shows no history and
    ``restartWithNewInstanceId=0`` restarts with a new id.
    """
    value = query.get(name)
    if value is None:
        return default
    word = value.strip(_DOTNET_TRIM).lower()
    return word == "true" if word in ("true", "false") else default


def get_int(query: QueryParams, name: str, default: int, low: int, high: int) -> int:
    """Read an integer query parameter; one .NET ``int.TryParse`` rejects is the default.

    Host behaviour mirrors ``HttpApiHandler.TryGetIntQueryParameterValue`` (an unparsable
    ``top`` is the default page size).

    Raises
    ------
    BadRequest
        If the value parses but is outside ``low..high`` (the task hub's page limits).
    """
    value = query.get(name)
    text = value.strip(_DOTNET_TRIM) if value is not None else ""
    try:
        number = int(text)
    except ValueError:
        return default
    if not -2**31 <= number < 2**31:
        return default
    if not low <= number <= high:
        raise BadRequest(f"{name}: must be between {low} and {high}, got {number}")
    return number


def get_seconds(query: QueryParams, name: str) -> float | None:
    """Read a duration in seconds (``timeout``, ``pollingInterval``); None if absent.

    Host behaviour mirrors ``HttpApiHandler.TryGetTimeSpanQueryParameterValue``: a value
    .NET ``double.TryParse`` rejects counts as absent; a negative one waits no time.
    """
    value = query.get(name)
    if value is None:
        return None
    try:
        seconds = float(value.strip(_DOTNET_TRIM))
    except ValueError:
        return None
    if seconds != seconds or seconds in (float("inf"), float("-inf")):
        return None
    return max(seconds, 0.0)


def get_time(query: QueryParams, name: str) -> datetime | None:
    """Read an ISO 8601 time (``createdTimeFrom``/``createdTimeTo``); None if absent.

    Host behaviour mirrors ``HttpApiHandler.TryGetDateTimeQueryParameterValue`` (.NET
    ``DateTime.TryParse``): a value that does not parse counts as absent. A space is read
    as ``+`` (an unencoded ``+00:00`` offset arrives as a space), and a year written with
    fewer than four digits is zero-padded (Python's ``strftime`` writes year 1 as ``1`` on
    Linux; the SDK sends ``datetime.min`` that way).
    """
    value = _given(query, name)
    if value is None:
        return None
    try:
        return _query_time(value)
    except ValueError:
        return None


def _query_time(value: str) -> datetime:
    text = value.strip().replace(" ", "+")
    year, sep, rest = text.partition("-")
    if sep and year.isdigit() and len(year) < 4:
        text = year.zfill(4) + sep + rest
    return parse_time(text)


STATUS_NUMBERS = {"0": "Running", "1": "Completed", "2": "ContinuedAsNew", "3": "Failed",
                  "4": "Canceled", "5": "Terminated", "6": "Pending", "7": "Suspended"}
"""``OrchestrationRuntimeStatus`` values by number (``Enum.TryParse`` accepts them)."""


def get_statuses(query: QueryParams) -> list[str] | None:
    """Read ``runtimeStatus`` (comma-separated and/or repeated) as the extension does.

    Host behaviour mirrors ``HttpApiHandler.TryGetIEnumerableQueryParameterValue``: each
    value goes through .NET ``Enum.TryParse`` (the exact name, or the number), values that
    do not parse are left out, and when none parses there is no status filter (None).
    """
    values = [v.strip() for raw in query.getlist("runtimeStatus") for v in raw.split(",")]
    parsed = [STATUS_NUMBERS.get(v, v) for v in values]
    known = [v for v in parsed if v in KNOWN_STATUSES]
    return list(dict.fromkeys(known)) or None


def encode_token(token: str) -> str:
    """Make the task hub's continuation token safe for an HTTP header (base64url)."""
    return base64.urlsafe_b64encode(token.encode()).decode("ascii")


def decode_token(headers: Mapping[str, str]) -> str | None:
    """Read the ``x-ms-continuation-token`` request header; None if absent or empty.

    Raises
    ------
    BadRequest
        If the header is not a token this API handed out.
    """
    value = headers.get(CONTINUATION_HEADER)
    if not value or value == "null":
        return None
    try:
        token = base64.b64decode(value.encode("ascii"), altchars=b"-_", validate=True).decode()
    except (binascii.Error, UnicodeError, ValueError):
        token = ""
    if not token:
        raise BadRequest(f"{CONTINUATION_HEADER}: malformed continuation token")
    return token


def check_task_hub(query: QueryParams, task_hub_name: str) -> None:
    """Refuse a ``taskHub`` query parameter that names another task hub.

    Raises
    ------
    BadRequest
        If ``taskHub`` is given, not empty and differs from ``task_hub_name``.
    """
    hub = query.get("taskHub")
    if hub and hub != task_hub_name:
        raise BadRequest(f"taskHub: this host serves only task hub '{task_hub_name}', "
                         f"got {hub!r}")


def check_known_params(query: QueryParams, allowed: frozenset[str]) -> None:
    """Refuse query parameters the route does not take.

    On the start route this catches an instance id with ``?`` that a client put in the URL
    unencoded (the SDK does): the rest of the id arrives as a stray query parameter, and
    the instance must not be created under the truncated id (SPEC D2).

    Raises
    ------
    BadRequest
        Naming the unexpected parameters.
    """
    unknown = sorted({k for k in query.keys() if k not in allowed})
    if unknown:
        raise BadRequest(f"query: unexpected parameter(s) {unknown}; this route takes "
                         f"{sorted(allowed)} (an instanceId must not contain '?')")


def body_as_json_payload(body: bytes) -> str | None:
    """Return a start or raise-event body as the extension stores it: its JSON, re-serialised.

    Raises
    ------
    BadRequest
        ``400 Invalid JSON content`` if the body is not JSON (the extension's answer).
    """
    try:
        return request_input(body)
    except ValueError as exc:
        raise BadRequest(f"the request body is not valid JSON ({exc})",
                         summary="Invalid JSON content") from None


def body_as_input_json(body: bytes, field: str) -> str | None:
    r"""Turn a request body into the JSON text the task hub stores as input or event data.

    The Python SDK serialises a value to JSON text itself and then sends that text as a
    JSON string (so ``{"a": 1}`` arrives as ``"{\"a\": 1}"``); a plain HTTP client sends
    the value itself. A JSON string whose content is valid JSON is therefore taken as the
    SDK's JSON text; any other JSON value is serialised. The orchestrator sees the same
    value either way, as it does behind the Durable extension.

    Parameters
    ----------
    body : bytes
        The request body (empty means no input).
    field : str
        Name used in the error message (``input`` or ``eventData``).

    Returns
    -------
    str or None
        JSON text, or None for an empty body.

    Raises
    ------
    BadRequest
        If the body is not valid UTF-8 JSON.
    """
    if not body.strip():
        return None
    try:
        value = json.loads(body)
    except ValueError as exc:
        raise BadRequest(f"{field}: the request body is not valid JSON ({exc})") from None
    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError:
            return json.dumps(value)
        return value
    return json.dumps(value)
