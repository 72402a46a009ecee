"""The app's ``host.json``, read once at start-up as the Functions host and the extension do.

The rules are in docs/local-host.md: comments allowed (``JObject.Parse``), keys
case-insensitive, ``AzureFunctionsJobHost__a__b`` overrides, ``"version": "2.0"``, and a
whole ``%Setting%`` hub name resolved (the extension's ``ResolveAppSettingOptions``).
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devhost.app.load_errors import AppLoadError, describe_json_error

log = logging.getLogger("devhost")

HOST_JSON = "host.json"
DEFAULT_HUB_NAME = "TestHubName"
"""Task hub name when host.json sets none (the extension's default outside Azure)."""

ENV_PREFIX = "AzureFunctionsJobHost__"
"""App settings with this prefix override host.json values (``__`` separates keys)."""

MATCH_STRATEGIES = ("None", "Strict", "CurrentOrOlder")
"""``versionMatchStrategy`` values (DTFx ``VersioningSettings.VersionMatchStrategy``)."""

FAILURE_STRATEGIES = ("Reject", "Fail")
"""``versionFailureStrategy`` values (DTFx ``VersioningSettings.VersionFailureStrategy``)."""

OVERRIDABLE_STATES = ("AnyState", "NonRunningStates")
"""``overridableExistingInstanceStates`` values (the extension's ``OverridableStates``)."""

DEFAULT_ENTITY_BATCH = 50
"""Entity operations per batch when host.json sets none (the Consumption plan's default)."""

_WHOLE_REFERENCE = re.compile(r"^%([^%]+)%$")


@dataclass(frozen=True)
class DurableSettings:
    """The ``extensions.durableTask`` settings the local host honours.

    ``overridable_states``: ``NonRunningStates`` (default, ``Options/DurableTaskOptions.cs``)
    refuses a start with the id of an unended instance; ``AnyState`` replaces it.
    """

    hub_name: str = DEFAULT_HUB_NAME
    default_version: str | None = None
    version_match: str = "CurrentOrOlder"
    version_failure: str = "Reject"
    max_entity_batch: int = DEFAULT_ENTITY_BATCH
    overridable_states: str = "NonRunningStates"
    partition_count: int = 4
    """``storageProvider.partitionCount`` (``Options/AzureStorageOptions.cs``, default 4,
    1 to 16): how many partitions the instances are spread over (see
    :mod:`devhost.taskhub.partitions`)."""


@dataclass(frozen=True)
class HostConfig:
    """The parsed host.json, overrides applied, every key of ``values`` lower-cased."""

    values: dict[str, Any]
    durable: DurableSettings

    @property
    def route_prefix(self) -> str:
        """Return ``extensions.http.routePrefix`` without slashes (default ``api``; may be empty).

        The Functions host's ``HttpOptions.RoutePrefix`` (azure-functions-host
        ``src/WebJobs.Script/Config/HttpOptions``): an empty string puts the app's HTTP functions
        at the root.
        """
        prefix = self.get("extensions", "http", "routePrefix", default="api")
        return prefix.strip("/") if isinstance(prefix, str) else "api"

    def get(self, *path: str, default: Any = None) -> Any:
        """Return the value at ``path`` (keys case-insensitive), or ``default``."""
        node: Any = self.values
        for key in path:
            if not isinstance(node, dict) or key.lower() not in node:
                return default
            node = node[key.lower()]
        return node


def strip_comments(text: str) -> str:
    """Blank out ``//`` and ``/* */`` comments outside strings, so line and column still hold."""
    out = list(text)
    i, n, in_string = 0, len(text), False
    while i < n:
        ch = text[i]
        if in_string:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out[i:end] = [c if c == "\n" else " " for c in text[i:end]]
            i = end
            continue
        i += 1
    return "".join(out)


def _lower_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k).lower(): _lower_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lower_keys(v) for v in value]
    return value


def read_host_json(app_dir: Path) -> dict[str, Any]:
    """Parse host.json (``{}`` when missing) as the Functions host does.

    Raises AppLoadError ``host.json:LINE:COL: ...``, or the host's text for a bad ``version``.
    """
    path = app_dir / HOST_JSON
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        # Core Tools' `func start` refuses a folder without one ("Unable to find project
        # root"); the local host runs on the defaults, and says so (L1).
        log.warning("no %s in %s: Azure Functions Core Tools would not start this app; "
                    "running with the defaults", HOST_JSON, app_dir)
        return {}
    except (OSError, UnicodeError) as exc:
        raise AppLoadError(f"{HOST_JSON}: cannot be read ({exc})") from exc
    try:
        value = json.loads(strip_comments(text))
    except json.JSONDecodeError as exc:
        raise AppLoadError(describe_json_error(exc, HOST_JSON)) from exc
    if not isinstance(value, dict):
        raise AppLoadError(f"{HOST_JSON}:1:1: the file must hold one JSON object, "
                           f"not {type(value).__name__}")
    if value:
        version = _lower_keys(value).get("version")
        if version in (None, ""):
            raise AppLoadError(f"{HOST_JSON}: the file is missing the required 'version' "
                               "property; set \"version\": \"2.0\" "
                               "(https://aka.ms/functions-hostjson)")
        if version != "2.0":
            raise AppLoadError(f"{HOST_JSON}: '{version}' is an invalid value for the "
                               "'version' property; set it to '2.0' (the schema version of "
                               "host.json, not the Functions runtime version)")
    return value


def apply_overrides(values: dict[str, Any], environ: dict[str, str]) -> dict[str, Any]:
    """Apply ``AzureFunctionsJobHost__a__b=v`` app settings to a lower-cased tree."""
    for name, setting in environ.items():
        if not name.lower().startswith(ENV_PREFIX.lower()):
            continue
        keys = [k.lower() for k in name[len(ENV_PREFIX):].split("__") if k]
        node = values
        for key in keys[:-1]:
            if not isinstance(node.get(key), dict):
                node[key] = {}
            node = node[key]
        if keys:
            node[keys[-1]] = setting
    return values


def _text(value: Any) -> str | None:
    """Return a configuration value as the .NET configuration binder reads a string."""
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else json.dumps(value)


def _choice(value: Any, allowed: tuple[str, ...], setting: str, default: str) -> str:
    text = _text(value)
    if text is None or text == "":
        return default
    for index, name in enumerate(allowed):  # Enum.Parse: name (any case) or number
        if text.lower() == name.lower() or text == str(index):
            return name
    raise AppLoadError(f"{HOST_JSON}: extensions.durableTask.{setting} {text!r} is not "
                       f"supported; use one of {', '.join(allowed)}")


def _hub_name(value: Any, environ: dict[str, str]) -> str:
    name = _text(value) or DEFAULT_HUB_NAME
    match = _WHOLE_REFERENCE.match(name)
    if match:
        setting = match.group(1)
        if setting not in environ:
            raise AppLoadError(f"{HOST_JSON}: extensions.durableTask.hubName {name!r}: app "
                               f"setting '{setting}' is not set")
        name = environ[setting]
    if "%" in name:
        raise AppLoadError(f"{HOST_JSON}: extensions.durableTask.hubName {name!r}: only a "
                           "whole-string %Setting% reference is resolved (as the extension "
                           "does); '%' is not allowed in a task hub name")
    return name


def _batch_size(value: Any) -> int:
    if value is None:
        return DEFAULT_ENTITY_BATCH
    try:
        size = int(_text(value) or "")
    except ValueError:
        size = 0
    if size <= 0:
        raise AppLoadError(f"{HOST_JSON}: extensions.durableTask.maxEntityOperationBatchSize "
                           f"must be a positive integer value, got {value!r}")
    return size


def _partition_count(value: Any) -> int:
    """Return ``storageProvider.partitionCount`` as the extension's ``Validate`` checks it."""
    if value is None:
        return 4
    text = _text(value) or ""
    try:
        count = int(text)
    except ValueError:
        count = 0
    if not 1 <= count <= 16:
        raise AppLoadError(f"{HOST_JSON}: extensions.durableTask.storageProvider.partitionCount "
                           f"{value!r}: PartitionCount must be an integer value between 1 and "
                           "16.")
    return count


_HUB_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]{2,49}$")


def check_hub_name(name: str) -> str:
    """Refuse a hub name as ``Options/AzureStorageOptions.cs`` ``ValidateHubName`` does.

    Run at start-up by ``AzureStorageDurabilityProviderFactory``: letters and digits from a
    letter, 3 to 50 long, though its message (our AppLoadError's) says 45.
    """
    if not _HUB_NAME.match(name):
        raise AppLoadError(f"{HOST_JSON}: Task hub name '{name}' should contain only "
                           "alphanumeric characters, start with a letter, and have length "
                           "between 3 and 45.")
    return name


def load_host_config(app_dir: str | Path, environ: dict[str, str] | None = None) -> HostConfig:
    """Read host.json with app-setting overrides (default ``os.environ``); check Durable settings.

    Raises AppLoadError for an unparsable file, an unknown strategy, an unset hub name
    reference, a batch size below 1 or a partition count outside 1 to 16.
    """
    env = dict(os.environ if environ is None else environ)
    values = apply_overrides(_lower_keys(read_host_json(Path(app_dir))), env)
    durable = values.get("extensions", {}).get("durabletask", {})
    if not isinstance(durable, dict):
        durable = {}
    provider = durable.get("storageprovider", {})
    default_version = _text(durable.get("defaultversion"))
    settings = DurableSettings(
        hub_name=_hub_name(durable.get("hubname"), env),
        default_version=default_version if default_version != "" else None,
        version_match=_choice(durable.get("versionmatchstrategy"), MATCH_STRATEGIES,
                              "versionMatchStrategy", "CurrentOrOlder"),
        version_failure=_choice(durable.get("versionfailurestrategy"), FAILURE_STRATEGIES,
                                "versionFailureStrategy", "Reject"),
        max_entity_batch=_batch_size(durable.get("maxentityoperationbatchsize")),
        overridable_states=_choice(durable.get("overridableexistinginstancestates"),
                                   OVERRIDABLE_STATES, "overridableExistingInstanceStates",
                                   "NonRunningStates"),
        partition_count=_partition_count(
            provider.get("partitioncount") if isinstance(provider, dict) else None),
    )
    return HostConfig(values, settings)
