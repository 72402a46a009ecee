"""The remote services from ``infra/services.json``, the one source shared by code and Bicep.

See docs/services.md; an unknown service or operation is an :class:`UnknownServiceError`
naming it, never a default.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from azurekit.files import default_file, read_json_file

DEFAULT_SERVICES_FILE = Path(__file__).resolve().parents[1] / "infra" / "services.json"

_NAME = r"^[a-z][a-z0-9_]{0,39}$"


class ServiceCatalogueError(ValueError):
    """The services file is invalid; the message names the file, field and rule."""


class UnknownServiceError(KeyError, ValueError):
    """A service or operation the catalogue does not declare; the message names it."""

    def __str__(self) -> str:
        return str(self.args[0])


class OperationSpec(BaseModel):
    """One operation of a service: ``POST <base URL><path>``; ``undo`` names its undo."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(pattern=r"^/[A-Za-z0-9/_-]*$")
    undo: str | None = Field(None, pattern=_NAME)


class ServiceSpec(BaseModel):
    """One remote service: request queue, URL setting and operations (by name)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    request_queue: str = Field(alias="requestQueue", pattern=r"^[a-z0-9][a-z0-9._-]*$")
    url_setting: str = Field(alias="urlSetting", pattern=r"^[A-Z][A-Z0-9_]*$")
    safe_errors: frozenset[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")]] = Field(
        frozenset(), alias="safeErrors")
    """Error codes whose text may be copied into failure reasons, statuses and alerts."""
    operations: dict[str, OperationSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _check_undos(self) -> ServiceSpec:
        for name, op in self.operations.items():
            if not re.match(_NAME, name):
                raise ValueError(f"operations.{name}: names are lower-case letters, digits, _")
            if op.undo is None:
                continue
            undo = self.operations.get(op.undo)
            if undo is None:
                raise ValueError(f"operations.{name}.undo: {op.undo!r} is not an operation "
                                 f"of this service ({', '.join(self.operations)})")
            if undo.undo is not None:
                raise ValueError(f"operations.{op.undo}.undo: an undo has no undo")
        return self

    @property
    def undo_operations(self) -> tuple[str, ...]:
        """Operations that undo another of this service."""
        return tuple(op.undo for op in self.operations.values() if op.undo is not None)

    @property
    def forward_operations(self) -> tuple[str, ...]:
        """Operations that undo nothing (the workflow's steps)."""
        return tuple(n for n in self.operations if n not in self.undo_operations)

    def operation(self, name: str) -> OperationSpec:
        """Return operation ``name``; :class:`UnknownServiceError` if it is not one."""
        try:
            return self.operations[name]
        except KeyError:
            raise UnknownServiceError(
                f"operation: {name!r} is not an operation of this service "
                f"(known: {', '.join(self.operations)})") from None


class ServiceCatalogue(BaseModel):
    """Every remote service, by name."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    comment: str | None = Field(None, alias="$comment")
    services: dict[str, ServiceSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _check_unique(self) -> ServiceCatalogue:
        for name in self.services:
            if not re.match(_NAME, name):
                raise ValueError(f"services.{name}: names are lower-case letters, digits, _")
        for field in ("request_queue", "url_setting"):
            values = [getattr(s, field) for s in self.services.values()]
            twice = sorted({v for v in values if values.count(v) > 1})
            if twice:
                raise ValueError(f"{field}: {twice} named by more than one service")
        ops = [op for s in self.services.values() for op in s.operations]
        twice = sorted({op for op in ops if ops.count(op) > 1})
        if twice:
            raise ValueError(f"operations: {twice} declared by more than one service "
                             "(an operation names its reply event and idempotency key)")
        return self

    def service(self, name: str) -> ServiceSpec:
        """Return service ``name``; :class:`UnknownServiceError` if it is not declared."""
        try:
            return self.services[name]
        except KeyError:
            raise UnknownServiceError(f"service: {name!r} is not a service of services.json "
                                      f"(known: {', '.join(self.services)})") from None

    def operation(self, service: str, operation: str) -> OperationSpec:
        """Return ``operation`` of ``service``; :class:`UnknownServiceError` naming either."""
        try:
            return self.service(service).operation(operation)
        except UnknownServiceError as exc:
            raise UnknownServiceError(f"{service}: {exc}") from None

    def service_of(self, operation: str) -> str:
        """Return the service that performs ``operation``."""
        for name, spec in self.services.items():
            if operation in spec.operations:
                return name
        raise UnknownServiceError(f"operation: {operation!r} is not an operation of any "
                                  "service of services.json")

    def service_of_queue(self, queue: str) -> str:
        """Return the service whose agent serves ``queue``."""
        for name, spec in self.services.items():
            if spec.request_queue == queue.lower():
                return name
        raise UnknownServiceError(f"queue: {queue!r} is the request queue of no service")

    def undo_of(self, operation: str) -> str | None:
        """Return the operation that undoes ``operation`` (None: nothing undoes it)."""
        return self.service(self.service_of(operation)).operations[operation].undo

    def undoes(self, undo: str) -> str | None:
        """Return the forward operation that ``undo`` undoes, None if it undoes nothing."""
        spec = self.service(self.service_of(undo))
        return next((n for n, op in spec.operations.items() if op.undo == undo), None)


def parse_services(data: Any, *, source: str = "services.json") -> ServiceCatalogue:
    """Validate an already-parsed services document; errors name ``source`` and the field."""
    try:
        return ServiceCatalogue.model_validate(data)
    except ValidationError as exc:
        detail = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(top level)'}: "
                           f"{e['msg']}" for e in exc.errors())
        raise ServiceCatalogueError(f"{source}: {detail}") from None


def load_services(path: str | Path | None = None) -> ServiceCatalogue:
    """Load and validate a services file (default :data:`DEFAULT_SERVICES_FILE`).

    Raises
    ------
    ServiceCatalogueError
        If the file is missing, not JSON or breaks a rule; the message names the field.
    """
    path = (Path(path) if path is not None
            else default_file(DEFAULT_SERVICES_FILE, ServiceCatalogueError, "services"))
    data = read_json_file(path, ServiceCatalogueError, "services")
    return parse_services(data, source=path.name)


@cache
def catalogue() -> ServiceCatalogue:
    """Return the catalogue of this checkout's ``infra/services.json`` (read once)."""
    return load_services()
