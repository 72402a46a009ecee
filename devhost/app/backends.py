"""The Durable Functions storage backend an app's settings select, and its documented limits.

The extension picks its durability provider from ``extensions.durableTask.storageProvider.
type`` in host.json (after ``AzureFunctionsJobHost__`` app-setting overrides, which
:func:`devhost.app.host_config.load_host_config` applies): absent or ``AzureStorage`` is the
Azure Storage provider, ``azureManaged`` the Durable Task Scheduler (Learn: "Configure
Durable Task Scheduler" for Durable Functions). The local host always keeps the task hub in
SQLite; what it takes from the choice is the backend's rules an app can run into:

- task hub names: Azure Storage's ``ValidateHubName`` (:func:`~devhost.app.host_config.
  check_hub_name`), or the scheduler's ARM name rule for ``schedulers/taskHubs``
  (``^[a-zA-Z0-9-]{3,64}$``, bicep-types-az ``microsoft.durabletask/2025-11-01``);
- payloads: the scheduler refuses an input, output, external event or custom status over
  1 MB (Learn: "Durable Task Scheduler", limitations); Azure Storage moves large messages
  to blobs and has no such limit;
- start-up warnings where the providers behave differently (docs/fidelity.md, "Backends").
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass

from devhost.app.host_config import HOST_JSON, HostConfig, check_hub_name
from devhost.app.load_errors import AppLoadError

log = logging.getLogger("devhost")

AZURE_STORAGE = "AzureStorage"
"""The extension's default provider type."""

AZURE_MANAGED = "azureManaged"
"""The Durable Task Scheduler's provider type."""

SCHEDULER_MAX_PAYLOAD_BYTES = 1024 * 1024
"""1 MB: the Durable Task Scheduler's limit per input, output, event or custom status."""

_SCHEDULER_HUB_NAME = re.compile(r"^[A-Za-z0-9-]{3,64}$")

SCHEDULER_DIFFERENCES = (
    "payloads (activity and orchestration inputs and outputs, external events, custom "
    "status) over 1 MB fail; Azure Storage moves them to blobs",
    "work is pushed to workers: extensions.durableTask.storageProvider."
    "maxQueuePollingInterval and the other Azure Storage queue settings do not apply",
    "finished instances are purged after the scheduler's retention (30 days on the "
    "Consumption SKU); on Azure Storage they stay until purged",
    "instances do not move between backends: drain the old task hub before switching",
)
"""What the start-up warning lists when an app selects the Durable Task Scheduler."""


class PayloadTooLarge(Exception):
    """A payload over the selected backend's limit (the host refuses it as Azure would)."""


@dataclass(frozen=True)
class Backend:
    """The storage backend an app's host.json and app settings select.

    Attributes
    ----------
    provider_type : str
        ``AzureStorage`` or ``azureManaged`` (as the extension spells them).
    connection_setting : str or None
        The app setting naming the scheduler's connection (``connectionStringName``).
    max_payload_bytes : int or None
        Largest UTF-8 payload in bytes; None: no limit.
    """

    provider_type: str = AZURE_STORAGE
    connection_setting: str | None = None
    max_payload_bytes: int | None = None

    @property
    def is_scheduler(self) -> bool:
        """Whether this is the Durable Task Scheduler."""
        return self.provider_type == AZURE_MANAGED

    def check_hub_name(self, name: str) -> str:
        """Refuse a task hub name this backend refuses; return it.

        Raises
        ------
        AppLoadError
            For a name outside the backend's rule (see the module docstring).
        """
        if not self.is_scheduler:
            return check_hub_name(name)
        if not _SCHEDULER_HUB_NAME.match(name):
            raise AppLoadError(f"{HOST_JSON}: Task hub name '{name}' is not a valid Durable "
                               "Task Scheduler task hub name: use 3 to 64 letters, digits "
                               "or hyphens.")
        return name

    def payload_problem(self, what: str, text: str | None) -> str | None:
        """Return why this backend refuses ``text`` as ``what``, or None when it fits.

        ``what`` names the payload, e.g. ``"output of activity 'load'"``; the size is the
        UTF-8 length of the serialized JSON, as sent to the scheduler.
        """
        if self.max_payload_bytes is None or text is None:
            return None
        size = len(text.encode("utf-8", errors="surrogatepass"))
        if size <= self.max_payload_bytes:
            return None
        return (f"The {what} is {size:,} bytes, over the Durable Task Scheduler's limit of "
                f"{self.max_payload_bytes:,} bytes (1 MB) per input, output, event or "
                "custom status. Pass a reference to the data (a blob name) instead.")


def backend_of(config: HostConfig, environ: Mapping[str, str]) -> Backend:
    """Return the backend ``config`` selects, warning where it differs from Azure Storage.

    Parameters
    ----------
    config : HostConfig
        host.json with the ``AzureFunctionsJobHost__`` overrides applied.
    environ : mapping
        App settings (the connection setting's presence is checked).

    Another provider type (``mssql``, ``netherite``) is warned of and run under Azure
    Storage's rules.
    """
    provider = config.get("extensions", "durableTask", "storageProvider", default={})
    kind = provider.get("type") if isinstance(provider, dict) else None
    if kind in (None, "") or str(kind).lower() == AZURE_STORAGE.lower():
        return Backend()
    if str(kind).lower() != AZURE_MANAGED.lower():
        log.warning("storage provider %r: the local host knows the rules of %s and %s only; "
                    "running under %s's", kind, AZURE_STORAGE, AZURE_MANAGED, AZURE_STORAGE)
        return Backend()
    setting = provider.get("connectionstringname") or "DURABLE_TASK_SCHEDULER_CONNECTION_STRING"
    if setting not in environ:
        log.warning("storage provider %s: app setting '%s' (connectionStringName) is not set; "
                    "the Functions host would not start the Durable Task Scheduler provider "
                    "without it", AZURE_MANAGED, setting)
    log.warning("storage provider %s (Durable Task Scheduler): the local host keeps the task "
                "hub in SQLite and applies the scheduler's rules. Where it differs from "
                "Azure Storage: %s", AZURE_MANAGED, "; ".join(SCHEDULER_DIFFERENCES))
    return Backend(AZURE_MANAGED, setting, SCHEDULER_MAX_PAYLOAD_BYTES)
