"""Reading the API's query parameters, headers and bodies; bad ones are a 400 naming them."""

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
    """Read a boolean as ``HttpApiHandler.cs`` ``TryGetBooleanQueryParameterValue`` does.

    .NET ``bool.TryParse`` (any case, white space ignored); anything else is the default.
    """
    value = query.get(name)
    if value is None:
        return default
    word = value.strip(_DOTNET_TRIM).lower()
    return word == "true" if word in ("true", "false") else default


def get_int(query: QueryParams, name: str, default: int, low: int, high: int) -> int:
    """Read an integer as ``HttpApiHandler.TryGetIntQueryParameterValue`` (else the default).

    Raises BadRequest if it parses but is outside ``low..high`` (the task hub's page limits).
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
    """Read seconds as ``HttpApiHandler.TryGetTimeSpanQueryParameterValue``; None if absent.

    A value ``double.TryParse`` rejects counts as absent; a negative one waits no time.
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
    """Read an ISO 8601 time as ``HttpApiHandler.TryGetDateTimeQueryParameterValue``.

    Absent or unparsable: None; a space is ``+`` (an unencoded offset), and a year under four
    digits is zero-padded (the SDK sends ``datetime.min`` as year ``1``).
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
    """Read ``runtimeStatus`` (commas, repeats) as ``TryGetIEnumerableQueryParameterValue``.

    ``Enum.TryParse`` (name or number) per value; unparsable ones dropped; none left: None.
    """
    values = [v.strip() for raw in query.getlist("runtimeStatus") for v in raw.split(",")]
    parsed = [STATUS_NUMBERS.get(v, v) for v in values]
    known = [v for v in parsed if v in KNOWN_STATUSES]
    return list(dict.fromkeys(known)) or None


def encode_token(token: str) -> str:
    """Make the task hub's continuation token safe for an HTTP header (base64url)."""
    return base64.urlsafe_b64encode(token.encode()).decode("ascii")


def decode_token(headers: Mapping[str, str]) -> str | None:
    """Read the continuation token header (None if absent); BadRequest if not one we handed out."""
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


TASK_HUB_PARAM = "taskhub"
"""The ``taskHub`` query parameter, lower case: its name compares ignoring case."""


def check_task_hub(query: QueryParams, task_hub_name: str) -> None:
    """Raise BadRequest if a ``taskHub`` parameter names another task hub.

    As the extension's ``HttpApiHandler.GetClient``: the first parameter whose name equals
    ``taskHub`` ignoring case and whose value is not blank counts; Azure Storage names a task
    hub's tables and queues ignoring case, so the value compares ignoring case too.
    """
    hub = next((v for k, v in query.multi_items()
                if k.lower() == TASK_HUB_PARAM and v.strip()), None)
    if hub is not None and hub.lower() != task_hub_name.lower():
        raise BadRequest(f"taskHub: this host serves only task hub '{task_hub_name}', "
                         f"got {hub!r}")


def check_known_params(query: QueryParams, allowed: frozenset[str]) -> None:
    """Raise BadRequest naming query parameters the route does not take.

    On start this catches an id with an unencoded ``?`` (the SDK sends it so): never truncated (D2).
    """
    # taskHub and connection compare ignoring case (HttpApiHandler.GetClient).
    loose = {a.lower() for a in allowed} & {"taskhub", "connection"}
    unknown = sorted({k for k in query.keys() if k not in allowed and k.lower() not in loose})
    if unknown:
        raise BadRequest(f"query: unexpected parameter(s) {unknown}; this route takes "
                         f"{sorted(allowed)} (an instanceId must not contain '?')")


def body_as_json_payload(body: bytes) -> str | None:
    """Return a start or event body's JSON re-serialised, as the extension stores it; else 400."""
    try:
        return request_input(body)
    except ValueError as exc:
        raise BadRequest(f"the request body is not valid JSON ({exc})",
                         summary="Invalid JSON content") from None


def body_as_input_json(body: bytes, field: str) -> str | None:
    r"""Return a body as the stored input JSON text (None if empty); BadRequest if not JSON.

    The SDK sends its JSON text as a JSON string (``"{\"a\": 1}"``), plain clients the value:
    a string holding valid JSON is taken as that text, any other value is serialised.
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
