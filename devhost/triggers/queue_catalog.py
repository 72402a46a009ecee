"""Which Service Bus queues exist for the app the host runs, and with what properties.

The queues are the app's, so their catalogue is found from the app's folder, never from
where the host is installed: the ``DEVHOST_QUEUES_FILE`` setting (a path relative to the app
folder), else the app's ``infra/queues.json`` (this repository's layout, which its Bicep reads
too), else the queues the app's triggers name, each with Service Bus's default properties.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from datetime import timedelta
from pathlib import Path

from azurekit.queues import (
    APP_QUEUES_FILE,
    QueueCatalog,
    QueueProperties,
    QueuePropertiesError,
    load_queue_catalog,
)
from devhost.app.load_errors import AppLoadError

QUEUES_FILE_SETTING = "DEVHOST_QUEUES_FILE"
"""App setting naming the app's queue catalogue (the format of ``infra/queues.json``)."""

SERVICE_BUS_DEFAULTS = QueueProperties(
    lock_duration=timedelta(minutes=1),
    max_delivery_count=10,
    requires_duplicate_detection=False,
    duplicate_detection_history_time_window=timedelta(minutes=10),
    dead_lettering_on_message_expiration=False,
    # Standard's default is unlimited; 14 days is the Basic tier's cap and the portal's default.
    default_message_time_to_live=timedelta(days=14),
)
"""A queue created with no properties (the ARM ``Microsoft.ServiceBus/namespaces/queues``
defaults)."""


def catalogue_file(app_dir: Path, environ: Mapping[str, str] | None = None) -> Path | None:
    """Return the app's queue catalogue file, or None when it has none.

    Raises
    ------
    AppLoadError
        If ``DEVHOST_QUEUES_FILE`` names a file that does not exist.
    """
    env = os.environ if environ is None else environ
    named = env.get(QUEUES_FILE_SETTING, "").strip()
    if named:
        path = Path(app_dir) / named
        if not path.is_file():
            raise AppLoadError(f"{QUEUES_FILE_SETTING}: no file {named!r} in the app "
                                    f"folder {app_dir}")
        return path
    default = Path(app_dir) / APP_QUEUES_FILE
    return default if default.is_file() else None


def app_queue_catalog(app_dir: Path, queue_names: Iterable[str],
                      environ: Mapping[str, str] | None = None) -> tuple[QueueCatalog, bool]:
    """Return the app's catalogue and whether it came from a file.

    ``queue_names``: the queues the app's triggers name, declared with
    :data:`SERVICE_BUS_DEFAULTS` when the app has no catalogue file (and no per-client queues).

    Raises
    ------
    AppLoadError
        If the catalogue file is missing or breaks a rule (the message names file and field).
    """
    path = catalogue_file(app_dir, environ)
    if path is not None:
        try:
            return load_queue_catalog(path), True
        except QueuePropertiesError as exc:
            raise AppLoadError(str(exc)) from None
    queues = {name.lower(): SERVICE_BUS_DEFAULTS for name in queue_names}
    return QueueCatalog(queues, "replies-{clientId}", SERVICE_BUS_DEFAULTS,
                        client_ids=frozenset()), False
