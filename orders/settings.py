"""The app's settings: one typed object, read once when the first function runs (not at import).

Errors name the setting and its rule; the why of some is in docs/deploy.md, "App settings".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import timedelta
from decimal import Decimal
from functools import lru_cache
from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from azurekit.client_ids import check_client_id
from azurekit.services import catalogue
from orders.errors import OrderServiceError
from orders.stores.ports import MAX_COUNT_LIMIT

ORDER_CLIENTS_SETTING = "ORDER_CLIENTS"
"""App setting listing the client applications, comma-separated (S8, X10)."""
DEFAULT_SERVICE_URL = "http://127.0.0.1:7072"
"""Base URL of a remote service whose URL setting is unset: the local simulator."""
SERVICE_URL_SETTINGS = tuple(spec.url_setting for spec in catalogue().services.values())
"""The app settings holding the remote services' base URLs (``infra/services.json``)."""


class SettingsError(OrderServiceError, ValueError):
    """An app setting is missing or invalid; the message names it (permanent)."""


class Settings(BaseSettings):
    """App settings (case-sensitive); durations end in ``_S`` and are seconds."""

    model_config = SettingsConfigDict(case_sensitive=True, extra="ignore", frozen=True)

    STORE_BACKEND: Literal["sqlite", "cosmos"] = "sqlite"
    """Where the stores live: embedded SQLite or Cosmos DB."""
    COSMOS_ENDPOINT: str | None = None
    """Cosmos DB account endpoint URL."""
    COSMOS_DATABASE: str = "orders"
    """Cosmos DB database holding the containers."""
    MESSAGING_BACKEND: Literal["local", "servicebus"] = "local"
    """Queues: the local host's embedded Service Bus or Azure Service Bus."""
    SERVICEBUS__fullyQualifiedNamespace: str | None = None
    """Service Bus namespace host name (identity-based connection ``SERVICEBUS``)."""
    DEVHOST_DATA_DIR: str | None = None
    """Data folder of the local host (set by the host)."""

    ORDER_CLIENTS: str = ""
    """Comma-separated client ids (1-20 of a-z0-9-), each with queue orders-<id> (S8, X10)."""

    service_urls: dict[str, str] = {}
    """Each service's base URL from its ``urlSetting`` (default: the simulator); not a setting."""

    ORDER_DEADLINE_S: float = Field(30.0, gt=0)
    """Seconds, > 0: CompleteBy of one attempt from the orchestrator's start (S5, S6)."""
    START_GRACE_S: float = Field(60.0, gt=0)
    """Seconds, > 0: CompleteBy of a claimed record until its orchestration starts (S3)."""
    STARTER_BATCH: int = Field(50, ge=1, le=1000)
    """1-1000: pending records the starter claims per run."""
    MAX_PROCESSING: int = Field(200, ge=1)
    """>= 1: attempts in Processing at once; the starter claims no more (S3)."""
    SUPERVISOR_SCAN_WINDOW_S: float = Field(86_400.0, gt=0)
    """Seconds, > 0: how far back an expired CompleteBy is scanned (V1)."""
    SUPERVISOR_PAGE_SIZE: int = Field(100, ge=1, le=1000)
    """1-1000: records per page of a supervisor scan."""
    SUPERVISOR_MAX_RECORDS: int = Field(1000, ge=1)
    """>= 1: records one supervisor run recovers at most (V1)."""
    MAX_FAILURES: int = Field(3, ge=1, le=100)
    """1-100: FailureCount at which the supervisor gives up (V2)."""
    MAX_COMPENSATION_FAILURES: int = Field(3, ge=1, le=100)
    """1-100: compensation attempts that may expire before CompensationFailed (S9)."""
    COMPENSATION_DEADLINE_S: float = Field(30.0, gt=0)
    """Seconds, > 0: CompleteBy of one compensation attempt (S9, S6)."""
    WORKFLOW_VERSION: int = Field(9, ge=1)
    """>= 1: version new orders start under; register it everywhere first (X6)."""
    RETRY_HOLD_BASE_S: float = Field(2.0, ge=0)
    """Seconds, >= 0: hold-back base, doubled per failure (V2)."""
    AGENT_MAX_ATTEMPTS: int = Field(4, ge=1, le=20)
    """1-20: calls an agent makes for one request at most (A1, X2)."""
    AGENT_CALL_TIMEOUT_S: float = Field(5.0, gt=0)
    """Seconds, > 0: timeout of one HTTP call by an agent."""
    CIRCUIT_FAILURE_THRESHOLD: int = Field(5, ge=1)
    """>= 1: consecutive transient failures that open a circuit (A5)."""
    CIRCUIT_COOL_DOWN_S: float = Field(5.0, gt=0)
    """Seconds, > 0: how long an open circuit fails fast before a trial call (A5)."""
    CIRCUIT_HOLD_MAX_S: float = Field(300.0, gt=0)
    """Seconds, > 0: longest hold-back of an attempt an open circuit refused (A5, V2)."""
    RETRY_BUDGET_CALLS_PER_SERVICE: int = Field(200, ge=1)
    """>= 1: most calls per order at each service, all retry layers (X2)."""
    MAX_IN_FLIGHT: int = Field(1000, ge=1)
    """>= 1: Pending + Processing + Compensating orders before submissions are rejected (X3)."""
    MAX_IN_FLIGHT_PER_CLIENT: int | None = Field(None, ge=1, le=MAX_COUNT_LIMIT)
    """1-10000: one client's in-flight quota, at most an equal share (X3, S8)."""
    MAX_ORDER_AMOUNT: Decimal = Field(Decimal("1000000"), gt=0, allow_inf_nan=False)
    """> 0, order currency: largest ``totalPrice``/``unitPrice`` accepted (S1)."""
    PRICE_FROM_CATALOGUE: bool = True
    """Whether every order line is priced by the catalogue (the inventory's ``unitPrice``,
    :mod:`orders.pricing`); an unpriced SKU is then refused (S1)."""
    RETENTION_PURGE_BATCH: int = Field(500, ge=1, le=1000)
    """1-1000: expired compensation log entries deleted per round (S9, X10)."""
    RETENTION_DAYS: float = Field(30.0, gt=0, le=36500)
    """Days, 0-36500: how long ended orchestration instances are kept (X10)."""
    METRICS_EXPORT_INTERVAL_S: float = Field(60.0, gt=0)
    """Seconds, > 0: how often metrics are exported (X8)."""
    TRACE_SAMPLE_RATIO: float = Field(1.0, ge=0, le=1)
    """0-1: share of orders traced, each whole or not at all (X8)."""
    APPLICATIONINSIGHTS_CONNECTION_STRING: str | None = None
    """When set, metrics and logs go to Azure Monitor, else ``metrics.jsonl`` (X8)."""
    APPLICATIONINSIGHTS_AUTHENTICATION_STRING: str | None = None
    """``Authorization=AAD;ClientId=<id>``: export telemetry as that identity (X8, X10)."""

    WEBSITE_AUTH_ENABLED: bool = False
    """Set by App Service when Easy Auth fronts the app; not a setting to choose."""

    @model_validator(mode="before")
    @classmethod
    def _read_service_urls(cls, data: object) -> object:
        if not isinstance(data, dict):
            return data
        urls = {name: str(data.get(spec.url_setting)
                          or os.environ.get(spec.url_setting) or DEFAULT_SERVICE_URL)
                for name, spec in catalogue().services.items()}
        return {**data, "service_urls": urls}

    def service_url(self, service: str) -> str:
        """Return the base URL of ``service``; ``UnknownServiceError`` if it is not one."""
        catalogue().service(service)
        return self.service_urls[service]

    @field_validator("ORDER_CLIENTS")
    @classmethod
    def _clients_are_valid(cls, value: str) -> str:
        parse_order_clients(value)
        return value

    @property
    def in_flight_quota(self) -> int:
        """The per-client quota: the setting, at most MAX_IN_FLIGHT // len(ORDER_CLIENTS)."""
        share = max(1, self.MAX_IN_FLIGHT // max(1, len(self.order_clients)))
        wanted = self.MAX_IN_FLIGHT_PER_CLIENT or MAX_COUNT_LIMIT
        return max(1, min(wanted, share, MAX_COUNT_LIMIT))

    @property
    def order_clients(self) -> tuple[str, ...]:
        """:attr:`ORDER_CLIENTS` as client ids, in the order given."""
        return parse_order_clients(self.ORDER_CLIENTS)

    @model_validator(mode="after")
    def _backends_configured(self) -> Settings:
        if self.STORE_BACKEND == "cosmos" and not self.COSMOS_ENDPOINT:
            raise ValueError("COSMOS_ENDPOINT: required when STORE_BACKEND is cosmos")
        if self.MESSAGING_BACKEND == "servicebus" and not self.SERVICEBUS__fullyQualifiedNamespace:
            raise ValueError("SERVICEBUS__fullyQualifiedNamespace: required when "
                             "MESSAGING_BACKEND is servicebus")
        if (self.STORE_BACKEND == "sqlite" or self.MESSAGING_BACKEND == "local") \
                and not self.DEVHOST_DATA_DIR:
            raise ValueError("DEVHOST_DATA_DIR: required by the embedded backends (the "
                             "local host sets it)")
        return self

    @property
    def start_grace(self) -> timedelta:
        """:attr:`START_GRACE_S` as a timedelta."""
        return timedelta(seconds=self.START_GRACE_S)

    @property
    def status_grace(self) -> timedelta:
        """Wait of a final status before the supervisor resends it: the start grace (S8)."""
        return self.start_grace

    @property
    def scan_window(self) -> timedelta:
        """:attr:`SUPERVISOR_SCAN_WINDOW_S` as a timedelta."""
        return timedelta(seconds=self.SUPERVISOR_SCAN_WINDOW_S)

    def retry_hold(self, failure_count: int) -> timedelta:
        """Hold-back after ``failure_count`` (>= 1) failures: base * 2**(n-1) (V2)."""
        return timedelta(seconds=self.RETRY_HOLD_BASE_S * 2 ** max(failure_count - 1, 0))

    def circuit_hold(self, holds: int) -> timedelta:
        """Hold-back after ``holds`` (>= 1) circuit refusals: cool-down * 2**(n-1), capped (A5)."""
        exponent = min(max(holds - 1, 0), 32)  # 2**32 cool-downs exceed any cap
        return timedelta(seconds=min(self.CIRCUIT_COOL_DOWN_S * 2 ** exponent,
                                     self.CIRCUIT_HOLD_MAX_S))


def read_settings(**overrides: object) -> Settings:
    """Read and validate the settings (``overrides`` win); SettingsError names every bad one."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'settings'}: {e['msg']}"
            for e in exc.errors())
        raise SettingsError(f"invalid app settings: {problems}") from exc


@lru_cache(maxsize=1)
def load_settings() -> Settings:
    """Read and validate the settings once: :func:`read_settings`, cached (same errors)."""
    return read_settings()


def parse_order_clients(value: str) -> tuple[str, ...]:
    """Split ``ORDER_CLIENTS`` into ids (S8, X10); ValueError naming a bad or doubled id."""
    ids = tuple(part.strip() for part in value.split(",") if part.strip())
    for client_id in ids:
        try:
            check_client_id(client_id)
        except ValueError as exc:
            raise ValueError(f"{ORDER_CLIENTS_SETTING}: client id {exc}") from None
    doubled = sorted({c for c in ids if ids.count(c) > 1})
    if doubled:
        raise ValueError(f"{ORDER_CLIENTS_SETTING}: client id {doubled[0]!r} is listed twice")
    return ids


def order_clients(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Read ``ORDER_CLIENTS`` at import; SettingsError naming the rule, so the app fails to load."""
    env = os.environ if environ is None else environ
    try:
        return parse_order_clients(env.get(ORDER_CLIENTS_SETTING, ""))
    except ValueError as exc:
        raise SettingsError(f"invalid app settings: {exc}") from None
