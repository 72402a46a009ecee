"""Composition root: the ports the functions use, built from the settings once per process."""

from __future__ import annotations

import atexit
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx

import clocks
from clocks import Clock, SystemClock
from orders.circuit import BreakerRegistry
from orders.messaging import MessageSender, create_messaging
from orders.messaging.depths import DepthReader
from orders.messaging.settlement import MessageSettler
from orders.settings import Settings, load_settings
from orders.stores import Stores, create_stores, local_stores


@dataclass
class Services:
    """Everything the scheduler, agents and supervisor talk to."""

    settings: Settings
    clock: Clock
    stores: Stores
    sender: MessageSender
    breakers: BreakerRegistry
    http: httpx.Client
    settler: MessageSettler
    sleep: Callable[[float], None] = time.sleep
    depths: DepthReader | None = None
    """Dead-letter depth reader, also a QueueBrowser (dashboard); None in some tests."""
    credential: Any = None
    """The process's one Azure credential (None under the local host)."""

    def close(self) -> None:
        """Release connections: every client the process built, once (Azure parity)."""
        self.stores.close()
        self.sender.close()
        self.http.close()
        if self.depths is not None:
            self.depths.close()
        if self.credential is not None and hasattr(self.credential, "close"):
            self.credential.close()


_services: Services | None = None
_guard = threading.Lock()


def _host_time() -> clocks.HostTime | None:
    return clocks.handed_over()


def build_services(settings: Settings, clock: Clock | None = None) -> Services:
    """Build the services for ``settings``; ``clock`` defaults to the host's, else the system's."""
    from orders.startup import on_start
    on_start(settings)  # refuses settings over the retry budget (X2); logs and metrics (X8)
    host = _host_time()
    clock = clock or (host.clock if host is not None else None) or SystemClock()
    credential = _credential(settings)
    if settings.STORE_BACKEND == "sqlite":
        stores = local_stores(settings.DEVHOST_DATA_DIR or ".data", clock)
    else:
        stores = create_stores("cosmos", endpoint=settings.COSMOS_ENDPOINT,
                               database=settings.COSMOS_DATABASE, credential=credential,
                               clock=clock)
    messaging = create_messaging(
        settings.MESSAGING_BACKEND, data_dir=settings.DEVHOST_DATA_DIR, clock=clock,
        fully_qualified_namespace=settings.SERVICEBUS__fullyQualifiedNamespace,
        credential=credential)
    breakers = BreakerRegistry(clock=clock,
                               failure_threshold=settings.CIRCUIT_FAILURE_THRESHOLD,
                               cool_down=timedelta(seconds=settings.CIRCUIT_COOL_DOWN_S))
    http = httpx.Client(timeout=settings.AGENT_CALL_TIMEOUT_S)
    return Services(settings, clock, stores, messaging.sender, breakers, http,
                    messaging.settler, sleep=host.sleep if host is not None else time.sleep,
                    depths=messaging.depths,
                    credential=credential)


def _credential(settings: Settings) -> Any:
    """Build the one credential if a backend is Azure's; its clients share it (X10)."""
    if settings.STORE_BACKEND == "sqlite" and settings.MESSAGING_BACKEND == "local":
        return None
    from azure.identity import DefaultAzureCredential

    return DefaultAzureCredential()


def services() -> Services:
    """Return this process's services, building them on first use; closed at process exit."""
    global _services
    with _guard:
        if _services is None:
            _services = build_services(load_settings())
            atexit.register(_close_at_exit)
        return _services


def _close_at_exit() -> None:
    global _services
    with _guard:
        current, _services = _services, None
    if current is not None:
        current.close()


def use(new: Services | None) -> None:
    """Install ``new`` as this process's services (tests); None drops the current ones."""
    global _services
    with _guard:
        if _services is not None and _services is not new:
            _services.close()
        _services = new
