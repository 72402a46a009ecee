"""The app's settings: one typed object, read once at the edge (STYLE 10).

Every key is an app setting of the same name in ``local.settings.json``, in the Bicep app
settings and in the local host's environment. :func:`load_settings` reads them when the
first function runs (never at import time), validates every value and fails with the name
of the setting and the rule it broke.

One exception, ``ORDER_CLIENTS``: the Python v2 programming model registers functions when
``function_app.py`` is imported, and there is one submission trigger per client, so the
client list must be known then. :func:`order_clients` reads that one setting, with the same
rules as :attr:`Settings.ORDER_CLIENTS`, from the environment at import; changing it
restarts the app, which registers the new list (docs/deploy.md).
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
"""App setting listing the client applications, comma-separated (SPEC S8, X10)."""
DEFAULT_SERVICE_URL = "http://127.0.0.1:7072"
"""Base URL of a remote service whose URL setting is unset: the local simulator."""
SERVICE_URL_SETTINGS = tuple(spec.url_setting for spec in catalogue().services.values())
"""The app settings holding the remote services' base URLs (``infra/services.json``)."""


class SettingsError(OrderServiceError, ValueError):
    """An app setting is missing or invalid; the message names it (permanent)."""


class Settings(BaseSettings):
    """App settings (environment variables; names are case-sensitive, as app settings are).

    Durations end in ``_S`` and are seconds; the ``*_interval`` properties give them as
    ``timedelta``.
    """

    model_config = SettingsConfigDict(case_sensitive=True, extra="ignore", frozen=True)

    STORE_BACKEND: Literal["sqlite", "cosmos"] = "sqlite"
    """Where the order database and state store live: embedded SQLite or Cosmos DB."""
    COSMOS_ENDPOINT: str | None = None
    """Cosmos DB account endpoint (``https://<account>.documents.azure.com:443/``)."""
    COSMOS_DATABASE: str = "orders"
    """Cosmos DB database holding the ``orders`` and ``state`` containers."""
    MESSAGING_BACKEND: Literal["local", "servicebus"] = "local"
    """Queues: the local host's embedded Service Bus or Azure Service Bus."""
    SERVICEBUS__fullyQualifiedNamespace: str | None = None
    """Service Bus namespace host name; identity-based connection ``SERVICEBUS``."""
    DEVHOST_DATA_DIR: str | None = None
    """Data folder of the local host (set by the host; local only)."""

    ORDER_CLIENTS: str = ""
    """Client ids, comma-separated (``acme,globex``): each submits on its own queue
    ``orders-<clientId>``, one submission trigger each, and the queue names the client
    (SPEC S8, X10). Ids are 1-20 lower-case letters, digits or ``-``, alphanumeric at both
    ends; the Bicep ``clients`` parameter creates the queues and sets this. Read at import
    by :func:`order_clients`; empty: no client can submit."""

    service_urls: dict[str, str] = {}
    """Base URL of each remote service by name, from the app setting its ``urlSetting`` in
    ``infra/services.json`` names (``PAYMENT_API_URL``...; :data:`DEFAULT_SERVICE_URL`
    when unset). Not an app setting itself: filled by :meth:`_read_service_urls`."""

    ORDER_DEADLINE_S: float = Field(30.0, gt=0)
    """CompleteBy of one attempt: seconds from the orchestrator's start (SPEC S5, S6)."""
    START_GRACE_S: float = Field(60.0, gt=0)
    """CompleteBy the starter sets when it claims a record: if the orchestration never
    starts (a crash between claim and start), the supervisor finds it after this (S3)."""
    STARTER_BATCH: int = Field(50, ge=1, le=1000)
    """Pending records the starter claims per run."""
    MAX_PROCESSING: int = Field(200, ge=1)
    """Attempts in Processing at once: the starter claims no more (S3). Starting more than
    the agents can serve before CompleteBy would only make attempts expire in the queues."""
    SUPERVISOR_SCAN_WINDOW_S: float = Field(86_400.0, gt=0)
    """How far back an expired CompleteBy is still scanned (SPEC V1)."""
    SUPERVISOR_PAGE_SIZE: int = Field(100, ge=1, le=1000)
    """Records per page of a supervisor scan (continuation-token paging)."""
    SUPERVISOR_MAX_RECORDS: int = Field(1000, ge=1)
    """Records one supervisor run recovers at most (SPEC V1)."""
    MAX_FAILURES: int = Field(3, ge=1, le=100)
    """FailureCount at which the supervisor gives up: Error and an operator alert (V2)."""
    MAX_COMPENSATION_FAILURES: int = Field(3, ge=1, le=100)
    """Compensation attempts that may miss their CompleteBy before the supervisor gives up
    on the compensation: CompensationFailed and an operator alert (S9). Its own budget,
    apart from MAX_FAILURES."""
    COMPENSATION_DEADLINE_S: float = Field(30.0, gt=0)
    """CompleteBy of one compensation attempt: seconds from its start (S9, S6)."""
    WORKFLOW_VERSION: int = Field(3, ge=1)
    """Workflow version new orders start under (X6); an order keeps the version its first
    attempt started with. Register a version in every instance before selecting it here."""
    RETRY_HOLD_BASE_S: float = Field(2.0, ge=0)
    """Hold-back before attempt n+1: RETRY_HOLD_BASE_S * 2**(FailureCount-1) (V2)."""
    AGENT_MAX_ATTEMPTS: int = Field(4, ge=1, le=20)
    """Calls an agent makes for one request at most (SPEC A1, X2)."""
    AGENT_CALL_TIMEOUT_S: float = Field(5.0, gt=0)
    """Timeout of one HTTP call by an agent (never past the deadline)."""
    CIRCUIT_FAILURE_THRESHOLD: int = Field(5, ge=1)
    """Consecutive transient failures that open a service's circuit (SPEC A5)."""
    CIRCUIT_COOL_DOWN_S: float = Field(5.0, gt=0)
    """How long an open circuit fails fast before one trial call (SPEC A5)."""
    CIRCUIT_HOLD_MAX_S: float = Field(300.0, gt=0)
    """Longest hold-back of an attempt that ended on an open circuit without a call: the
    supervisor holds it back CIRCUIT_COOL_DOWN_S * 2**(circuitHolds-1), at most this long,
    instead of counting it against MAX_FAILURES (SPEC A5, V2)."""
    RETRY_BUDGET_CALLS_PER_SERVICE: int = Field(200, ge=1)
    """Most calls one order may cause at each remote service, over every retry layer (X2);
    start-up refuses settings whose worst case exceeds it (``orders.budget``)."""
    MAX_IN_FLIGHT: int = Field(1000, ge=1)
    """Admission control: submissions are rejected while Pending + Processing +
    Compensating orders reach this many (SPEC X3)."""
    MAX_IN_FLIGHT_PER_CLIENT: int | None = Field(None, ge=1, le=MAX_COUNT_LIMIT)
    """Admission control per client: a client's submissions are rejected while its own
    Pending + Processing + Compensating orders reach this many, so one client's backlog
    cannot get the others' orders rejected (SPEC X3, S8). At most an equal share of
    MAX_IN_FLIGHT among the ``ORDER_CLIENTS`` (a larger value is lowered to it; unset: that
    share, :attr:`in_flight_quota`). At most 10,000: the count reads at most this many
    index entries."""
    MAX_ORDER_AMOUNT: Decimal = Field(Decimal("1000000"), gt=0, allow_inf_nan=False)
    """Largest ``totalPrice`` and ``unitPrice`` a submission may carry, in the order's
    currency: a larger one is dead-lettered as SchemaViolation naming the field (SPEC S1;
    :func:`scheduler.submission.parse_submission`). Guards the payment service against a
    mistyped or hostile amount; TPC-H totals stay below 600,000."""
    RETENTION_PURGE_BATCH: int = Field(500, ge=1, le=1000)
    """Compensation log entries one retention pass deletes per round (at most 20 rounds a
    pass); entries past their ``retainUntil`` are deleted (SPEC S9, X10). The pass runs
    on ``RETENTION_SCHEDULE``."""
    RETENTION_DAYS: float = Field(30.0, gt=0, le=36500)
    """Days an ended orchestration instance (Completed, Failed, Terminated) and its history
    are kept once their order is finished; the retention pass purges older ones through the
    durable client, on Azure and locally (X10; ``ops/retention.py``). At most 36500 (a
    century): the cut-off ``now - RETENTION_DAYS`` must be a date, or every retention pass
    would fail."""
    METRICS_EXPORT_INTERVAL_S: float = Field(60.0, gt=0)
    """How often metrics are exported: to ``metrics.jsonl`` of the data folder locally, to
    Azure Monitor in Azure (X8)."""
    TRACE_SAMPLE_RATIO: float = Field(1.0, ge=0, le=1)
    """Share of orders traced, 0 to 1 (X8): each order's trace is kept or dropped whole,
    decided on its trace id (:mod:`orders.observability.tracing`). 1 (every order) locally;
    a ratio on Azure to bound Application Insights cost; 0 turns tracing off (the trace
    context still travels, nothing is recorded)."""
    APPLICATIONINSIGHTS_CONNECTION_STRING: str | None = None
    """Application Insights connection string; when set, metrics and the ``orders`` logs go
    to Azure Monitor, else metrics go to ``metrics.jsonl`` of the data folder (X8). Empty
    means unset."""
    APPLICATIONINSIGHTS_AUTHENTICATION_STRING: str | None = None
    """``Authorization=AAD;ClientId=<id>``: export telemetry with that managed identity
    (Entra ID) instead of the connection string's key (X8, X10). Empty means unset."""

    WEBSITE_AUTH_ENABLED: bool = False
    """Set by App Service (``True``) when its authentication (Easy Auth) fronts the app;
    only then is the ``X-MS-CLIENT-PRINCIPAL-NAME`` header the platform's and not the
    caller's (:func:`ops.dashboard.web.operator_of`). Not an app setting to choose."""

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
        """Each client's in-flight quota: ``MAX_IN_FLIGHT_PER_CLIENT``, at most an equal share.

        Never above ``MAX_IN_FLIGHT // len(ORDER_CLIENTS)``: the quotas together then never
        exceed ``MAX_IN_FLIGHT``, so however many orders one client sends, every other
        client can still have its own quota in flight (SPEC X3, S8). A larger setting is
        lowered to that share, not refused.
        """
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
        """Wait of a final status before the supervisor resends it (SPEC S8).

        :attr:`START_GRACE_S`, the grace a claimed attempt has to start: both bound one step
        that normally follows at once.
        """
        return self.start_grace

    @property
    def scan_window(self) -> timedelta:
        """:attr:`SUPERVISOR_SCAN_WINDOW_S` as a timedelta."""
        return timedelta(seconds=self.SUPERVISOR_SCAN_WINDOW_S)

    def retry_hold(self, failure_count: int) -> timedelta:
        """Hold-back before the next attempt after ``failure_count`` failures (SPEC V2).

        Parameters
        ----------
        failure_count : int
            FailureCount after the increment, at least 1.

        Returns
        -------
        timedelta
            ``RETRY_HOLD_BASE_S * 2**(failure_count-1)``: a record that keeps failing is
            held back longer.
        """
        return timedelta(seconds=self.RETRY_HOLD_BASE_S * 2 ** max(failure_count - 1, 0))

    def circuit_hold(self, holds: int) -> timedelta:
        """Hold-back of an attempt that an open circuit refused before any call (A5, V2).

        Parameters
        ----------
        holds : int
            ``circuitHolds`` after the increment, at least 1.

        Returns
        -------
        timedelta
            ``CIRCUIT_COOL_DOWN_S * 2**(holds-1)``, at most ``CIRCUIT_HOLD_MAX_S``: the
            circuit's own cool-down first, then longer while the service stays refused.
        """
        exponent = min(max(holds - 1, 0), 32)  # 2**32 cool-downs exceed any cap
        return timedelta(seconds=min(self.CIRCUIT_COOL_DOWN_S * 2 ** exponent,
                                     self.CIRCUIT_HOLD_MAX_S))


def read_settings(**overrides: object) -> Settings:
    """Read and validate the settings from the environment, every time it is called.

    Parameters
    ----------
    **overrides
        Values that win over the environment (the operator CLI's ``--data-dir``).

    Returns
    -------
    Settings

    Raises
    ------
    SettingsError
        Naming each invalid or missing setting and its rule, on one line.
    """
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
    """Split an ``ORDER_CLIENTS`` value into client ids (SPEC S8, X10).

    Parameters
    ----------
    value : str
        Comma-separated client ids; blanks around commas and an empty value are allowed.

    Returns
    -------
    tuple of str
        The ids in the order given; empty for an empty value.

    Raises
    ------
    ValueError
        Naming ``ORDER_CLIENTS``, the id and its rule, or an id given twice.
    """
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
    """Read ``ORDER_CLIENTS`` from the environment at import (see the module docstring).

    Parameters
    ----------
    environ : mapping, optional
        Defaults to ``os.environ`` (the app settings).

    Returns
    -------
    tuple of str
        The configured client ids; empty if the setting is unset or empty.

    Raises
    ------
    SettingsError
        Naming the setting and the rule, so the app fails to load instead of silently
        serving fewer clients.
    """
    env = os.environ if environ is None else environ
    try:
        return parse_order_clients(env.get(ORDER_CLIENTS_SETTING, ""))
    except ValueError as exc:
        raise SettingsError(f"invalid app settings: {exc}") from None
