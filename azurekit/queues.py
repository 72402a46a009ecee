"""Queue properties from ``infra/queues.json``, the one source shared by Bicep and the local host.

Names are ARM's and durations ISO 8601: see docs/fidelity.md, "Rules shared with Azure".
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from azurekit.client_ids import check_client_id, is_client_id
from azurekit.durations import parse_duration
from azurekit.errors import RetryFlagError
from azurekit.files import default_file, read_json_file

APP_QUEUES_FILE = Path("infra") / "queues.json"
"""Where an app keeps its queue catalogue, under its folder (this one's Bicep reads it too)."""

DEFAULT_QUEUES_FILE = Path(__file__).resolve().parents[1] / APP_QUEUES_FILE

QUEUE_NAME_RULE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._/-]{0,258}[A-Za-z0-9])?")
"""Service Bus queue names: ``. _ - /`` and alphanumerics, alphanumeric at both ends, <= 260."""

CLIENT_ID_PLACEHOLDER = "{clientId}"


def is_queue_name(name: str) -> bool:
    """Tell whether ``name`` follows :data:`QUEUE_NAME_RULE` (the whole of it)."""
    return QUEUE_NAME_RULE.fullmatch(name) is not None


class QueuePropertiesError(RetryFlagError, ValueError):
    """The queue properties file is invalid; the message names the file, field and rule."""


_TOP_KEYS = {"$comment", "defaults", "queues", "clientReplyQueues", "clientSubmitQueues",
             "notes"}
_REPLY_KEYS = {"namePattern", "properties"}
# ARM property name -> (python field, kind, minimum, maximum); limits are Service Bus's.
_FIELDS: dict[str, tuple[str, str, Any, Any]] = {
    "lockDuration": ("lock_duration", "duration", timedelta(seconds=5), timedelta(minutes=5)),
    "maxDeliveryCount": ("max_delivery_count", "int", 1, None),
    "requiresDuplicateDetection": ("requires_duplicate_detection", "bool", None, None),
    "duplicateDetectionHistoryTimeWindow": (
        "duplicate_detection_history_time_window",
        "duration",
        timedelta(seconds=20),
        timedelta(days=7),
    ),
    "deadLetteringOnMessageExpiration": (
        "dead_lettering_on_message_expiration",
        "bool",
        None,
        None,
    ),
    "defaultMessageTimeToLive": (
        "default_message_time_to_live",
        "duration",
        timedelta(seconds=1),
        None,
    ),
}


@dataclass(frozen=True)
class QueueProperties:
    """Properties of one queue, typed; field names are ARM's in snake case, limits Service Bus's."""

    lock_duration: timedelta
    max_delivery_count: int
    requires_duplicate_detection: bool
    duplicate_detection_history_time_window: timedelta
    dead_lettering_on_message_expiration: bool
    default_message_time_to_live: timedelta


@dataclass(frozen=True)
class QueueCatalog:
    """Declared queues (by lower-case name) plus the rules for per-client queues created on demand.

    ``client_ids`` are the clients whose queues exist, as a deployment creates them; None:
    any client's, made on first use.
    """

    queues: Mapping[str, QueueProperties]
    reply_queue_pattern: str
    reply_queue_properties: QueueProperties
    submit_queue_pattern: str | None = None
    submit_queue_properties: QueueProperties | None = None
    client_ids: frozenset[str] | None = None

    def for_clients(self, client_ids: frozenset[str] | None) -> QueueCatalog:
        """Return this catalog with per-client queues for ``client_ids`` only (None: any)."""
        ids = None if client_ids is None else frozenset(c.lower() for c in client_ids)
        return dataclasses.replace(self, client_ids=ids)

    def reply_queue_name(self, client_id: str) -> str:
        """Return a client's reply queue name, lower case (S8: one private queue per client).

        Raises
        ------
        ValueError
            If ``client_id`` (any case) breaks :func:`azurekit.client_ids.check_client_id`.
        """
        return _fill(self.reply_queue_pattern, client_id)

    def submit_queue_name(self, client_id: str) -> str:
        """Return the submit queue name of a client (X10: the queue names the client).

        Raises
        ------
        ValueError
            If ``client_id`` breaks its rule, or the catalog declares no ``clientSubmitQueues``.
        """
        if self.submit_queue_pattern is None:
            raise ValueError("clientSubmitQueues: not declared in the queue catalog")
        return _fill(self.submit_queue_pattern, client_id)

    def is_reply_queue(self, name: str) -> bool:
        """Tell whether ``name`` (any case) is the reply queue of a client that has one."""
        return self._has_client(_client_of(self.reply_queue_pattern, name))

    def is_submit_queue(self, name: str) -> bool:
        """Tell whether ``name`` (any case) is the submit queue of a client that has one."""
        return self.submit_queue_pattern is not None and \
            self._has_client(_client_of(self.submit_queue_pattern, name))

    def _has_client(self, client_id: str | None) -> bool:
        return client_id is not None and (self.client_ids is None
                                          or client_id in self.client_ids)

    def resolve(self, name: str) -> QueueProperties | None:
        """Return the properties of a declared or reply queue (any case), or None if neither."""
        declared = self.queues.get(name.lower())
        if declared is not None:
            return declared
        if self.is_submit_queue(name):
            return self.submit_queue_properties
        return self.reply_queue_properties if self.is_reply_queue(name) else None


def _fill(pattern: str, client_id: str) -> str:
    try:
        check_client_id(client_id.lower() if isinstance(client_id, str) else client_id)
    except ValueError as exc:
        raise ValueError(f"client_id: {exc}") from None
    return pattern.replace(CLIENT_ID_PLACEHOLDER, client_id.lower())


def _client_of(pattern: str, name: str) -> str | None:
    prefix, suffix = pattern.split(CLIENT_ID_PLACEHOLDER)
    name = name.lower()
    if not (name.startswith(prefix) and name.endswith(suffix)):
        return None
    client_id = name[len(prefix) : len(name) - len(suffix)]
    return client_id if is_client_id(client_id) else None


def load_queue_catalog(path: str | Path | None = None) -> QueueCatalog:
    """Load and validate a queue properties file (default :data:`DEFAULT_QUEUES_FILE`).

    Raises
    ------
    QueuePropertiesError
        If the file is missing, is not JSON, or breaks a rule; the message names the file
        and the field (for example ``queues.orders.lockDuration``).
    """
    path = (Path(path) if path is not None
            else default_file(DEFAULT_QUEUES_FILE, QueuePropertiesError, "queue properties"))
    data = read_json_file(path, QueuePropertiesError, "queue properties")
    return parse_queue_catalog(data, source=path.name)


def parse_queue_catalog(data: Any, *, source: str = "queues.json") -> QueueCatalog:
    """Validate decoded queue properties as :func:`load_queue_catalog`; errors name ``source``."""

    def fail(field: str, rule: str) -> QueuePropertiesError:
        return QueuePropertiesError(f"{source}: {field}: {rule}")

    _require_object(data, "(top level)", fail)
    _reject_unknown(data, _TOP_KEYS, "(top level)", fail)
    defaults_raw = data.get("defaults")
    _require_object(defaults_raw, "defaults", fail)
    missing = [key for key in _FIELDS if key not in defaults_raw]
    if missing:
        raise fail("defaults", f"missing required properties {missing}")
    _parse_properties(defaults_raw, {}, "defaults", fail)  # validate the defaults once

    queues_raw = data.get("queues")
    _require_object(queues_raw, "queues", fail)
    if not queues_raw:
        raise fail("queues", "must declare at least one queue")
    queues: dict[str, QueueProperties] = {}
    for name, overrides in queues_raw.items():
        field = f"queues.{name}"
        if not is_queue_name(name):
            raise fail(
                field,
                "queue names use letters, digits, '.', '_', '-', '/' only, start and end "
                "with a letter or digit, at most 260 characters",
            )
        if name.lower() in queues:
            raise fail(field, "declared twice (queue names are case-insensitive)")
        _require_object(overrides, field, fail)
        queues[name.lower()] = _parse_properties(defaults_raw, overrides, field, fail)

    pattern, reply_properties = _per_client(data, "clientReplyQueues", defaults_raw, fail)
    submit = (_per_client(data, "clientSubmitQueues", defaults_raw, fail)
              if "clientSubmitQueues" in data else (None, None))
    if submit[0] == pattern:
        raise fail("clientSubmitQueues.namePattern", "must differ from the reply queue pattern")
    catalog = QueueCatalog(queues, pattern, reply_properties, *submit)
    for name in queues:
        for kind, clashes, which in (("reply", catalog.is_reply_queue, pattern),
                                     ("submit", catalog.is_submit_queue, submit[0])):
            if clashes(name):
                raise fail(f"queues.{name}",
                           f"name collides with the {kind} queue pattern {which!r}")
    return catalog


def _per_client(data: Any, section: str, defaults_raw: Mapping[str, Any],
                fail: Any) -> tuple[str, QueueProperties]:
    """Parse a per-client queue section (``namePattern`` and ``properties``)."""
    raw = data.get(section)
    _require_object(raw, section, fail)
    _reject_unknown(raw, _REPLY_KEYS, section, fail)
    pattern = raw.get("namePattern")
    field = f"{section}.namePattern"
    if not isinstance(pattern, str) or pattern.count(CLIENT_ID_PLACEHOLDER) != 1:
        raise fail(field, f"must be a string containing {CLIENT_ID_PLACEHOLDER} exactly once")
    pattern = CLIENT_ID_PLACEHOLDER.join(
        part.lower() for part in pattern.split(CLIENT_ID_PLACEHOLDER)
    )
    if not is_queue_name(pattern.replace(CLIENT_ID_PLACEHOLDER, "x")):
        raise fail(field, "with a client id filled in it must be a valid queue name")
    overrides = raw.get("properties", {})
    _require_object(overrides, f"{section}.properties", fail)
    return pattern, _parse_properties(defaults_raw, overrides, f"{section}.properties", fail)


def _parse_properties(
    defaults: Mapping[str, Any], overrides: Mapping[str, Any], where: str, fail: Any
) -> QueueProperties:
    _reject_unknown(overrides, set(_FIELDS), where, fail)
    merged = {**defaults, **overrides}
    values: dict[str, Any] = {}
    for key, (attr, kind, low, high) in _FIELDS.items():
        raw = merged[key]
        field = f"{where}.{key}"
        if kind == "bool":
            if not isinstance(raw, bool):
                raise fail(field, f"must be true or false, got {raw!r}")
            value: Any = raw
        elif kind == "int":
            if isinstance(raw, bool) or not isinstance(raw, int):
                raise fail(field, f"must be an integer, got {raw!r}")
            value = raw
        else:
            try:
                value = parse_duration(raw)
            except ValueError as exc:
                raise fail(field, str(exc)) from exc
        if low is not None and value < low:
            raise fail(field, f"{raw!r} is below the Service Bus minimum of {low}")
        if high is not None and value > high:
            raise fail(field, f"{raw!r} exceeds the Service Bus maximum of {high}")
        values[attr] = value
    return QueueProperties(**values)


def _require_object(value: Any, field: str, fail: Any) -> None:
    if not isinstance(value, dict):
        raise fail(field, f"must be a JSON object, got {type(value).__name__}")


def _reject_unknown(value: Mapping[str, Any], allowed: set[str], field: str, fail: Any) -> None:
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise fail(field, f"unknown key(s) {unknown}; allowed: {sorted(allowed)}")
